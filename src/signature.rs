//! Candidate signatures: a few 32-bit keys per document, so that the full pair
//! classifier only runs on documents that share keys.
//!
//! Pure Rust, no pgrx. [`signature`] builds the keys of one document from its body
//! term weights (aligned with `Document::terms`, computed by the caller with
//! [`crate::weights`]); [`is_candidate`] decides on a pair; [`gin_consistent`] and
//! [`gin_tri_consistent`] rule pairs out inside a GIN index over the keys (the
//! index does not know a row's scheme, so what they keep is rechecked).
//!
//! A signature is a [`Scheme`] plus sorted, unique `u32` keys. Three schemes:
//!
//! - `imatch` (Andreev et al. §6.2, with lexicon randomisation after Kołcz et al.):
//!   keys are CRC32s of small sets of heavy terms; a pair is a candidate when it
//!   shares any key. See "imatch keys" below.
//! - `topwords` (Lande et al., "6 of 12 keywords"): one CRC32 per each of the
//!   `topwords` heaviest terms; candidates share at least `min_shared` keys. A
//!   document with fewer distinct terms than `pad_to` gets keys of its whole term
//!   set up to `pad_to` ones, so texts of the same few words stay candidates; with
//!   no padding (collections created by 0.1.0) such a short document is a
//!   candidate only when it has `min_shared` keys.
//! - `longest` (the 2009 Habr method for short texts): one CRC32 per each of the
//!   `longest` longest terms of at least `min_letters` characters; similarity is
//!   shared keys / the smaller key count, candidates reach `threshold` (0.8).
//!
//! Keys of different schemes are not comparable: [`is_candidate`] says `false` for a
//! mixed pair. A document with no terms gets an empty signature, which matches
//! nothing. 32-bit collisions between unrelated term sets are accepted: they only
//! add a candidate, which the classifier then rejects.
//!
//! # imatch keys
//!
//! With `k = signature_words` (default 2), the keys of one document are:
//!
//! 1. **base**: the `k` heaviest terms (ties by term bytes), the paper's signature;
//! 2. **variants** (`signature_variants`, default 6): variant `v` first drops every
//!    term whose seeded hash `h(seed, v, term)` (FNV-1a, then splitmix64, as a
//!    number in `[0, 1)`) is below `drop_fraction`, then takes the `k` heaviest of
//!    the rest. Both copies of a text drop the same terms, so a variant still agrees
//!    when the term that differs between them is dropped;
//! 3. **lead subsets** (`k + 1` keys): the `k + 1` top terms of the *lead*, ranked
//!    by `rarity · (1 + ln lead_tf)`, and every `k`-subset of them. The lead is the
//!    first paragraph, continued into the next ones while it has fewer than
//!    [`LEAD_MIN_TOKENS`] kept tokens, and cut at [`LEAD_MAX_TOKENS`]. `rarity =
//!    weight / (1 + ln tf)` damps the part of the weight that depends on the
//!    document's own tf (the caller's weights are BM25 or TF-RIDF; the idf itself
//!    is not passed in), and `lead_tf` counts occurrences inside the lead only.
//!
//! Every key is the CRC32 of its terms sorted by bytes and joined by the byte
//! `0x1F`, whichever family produced it, so a family of one copy can meet another
//! family of the other.
//!
//! 4. **head subsets** (`k + 1` keys), added after the measurements below: the same
//!    ranking over the first sentences only ([`HEAD_MIN_TOKENS`]..[`HEAD_MAX_TOKENS`]
//!    tokens). Telegram posts are often one paragraph, so the lead is the whole text
//!    and a cut copy's lead differs; the head survives the cut.
//! 5. **exact key**: the low 32 bits of the document fingerprint (added in
//!    [`signature`]), independent of weights, so exact copies always meet.
//!
//! At most `1 + variants + 2(k + 1) + 1` keys (14 by default); the
//! families often coincide, and the mean is 5 to 6.
//!
//! Why the lead: the paper's filter misses 20 % of duplicate pairs, mostly reprints
//! that drop paragraphs, because dropping paragraphs changes the tf, the length and
//! so the weights, and the top 2 moves. A reprint keeps the lead, and the lead's
//! own term counts do not change with what is cut later; `rarity` changes far less
//! than the weight with the tf; and the `k`-subsets of the top `k + 1` survive one
//! term trading places at rank `k + 1`. Measured on 600 synthetic news stories
//! (5–10 paragraphs of 25–60 tokens, Zipf background, topic words denser in the
//! first paragraph, 40 themes whose words recur across stories), the share of
//! (story, cut copy) pairs sharing a key, and of the 179,700 unrelated pairs
//! sharing one, with BM25 weights:
//!
//! | keys | first half | first paragraph | all but last | odd paragraphs | unrelated | mean keys |
//! |---|---|---|---|---|---|---|
//! | base only | 0.38 | 0.15 | 0.72 | 0.43 | 0 | 1.0 |
//! | base + variants | 0.78 | 0.39 | 0.98 | 0.80 | 0 | 3.4 |
//! | base + variants + lead subsets | 0.99 | 0.98 | 1.00 | 1.00 | 0 | 6.2 |
//!
//! With tf·idf weights the full set gives 1.00 / 0.92 / 1.00 / 0.99 (unrelated
//! 1.2e-3, against 6.8e-4 without the lead keys: theme words are heavy under plain
//! tf·idf) and with TF-RIDF 1.00 / 0.87 / 1.00 / 0.99 (unrelated 2e-5 either way).
//! Alternatives measured and dropped (BM25, first half / first paragraph): a fixed
//! 60- or 80-token lead instead of the first paragraph (1.00 / 0.83 and 1.00 /
//! 0.73: a short copy's window ends elsewhere); and, on an earlier sample without
//! themes and with the 60-token lead, lead top-`k` alone instead of the subsets
//! (0.97 / 0.61), the lead ranked by plain weight (0.95 / 0.64), and a whole-text
//! top-`k` by rarity instead of the lead (0.84 / 0.43: the rarest words of a whole
//! text are scattered hapaxes that a cut removes). The ignored test
//! `truncation_table` prints the table.
//!
//! Cost: one sort of the term indices by weight, a pass over that ranking per
//! variant that stops after `k` kept terms, a scan of at most [`LEAD_MAX_TOKENS`]
//! tokens and a sort of their distinct terms. For a 500-token document of 350
//! distinct terms in 5 paragraphs, in release: imatch 20 µs, topwords 10 µs,
//! longest 5 µs (the full sort by weight dominates the first two).

use crate::document::Document;
use crate::error::{DedupError, Result};

/// First byte of every stored signature.
pub const SIGNATURE_FORMAT_VERSION: u8 = 1;

/// Most keys a signature may hold, in its text or its binary form (those the
/// extension makes hold at most 256).
pub const MAX_TEXT_KEYS: usize = 4096;

/// The lead is continued past the first paragraph until it holds this many kept
/// tokens (a one-line first paragraph is a dateline or a subtitle, not a lead).
pub const LEAD_MIN_TOKENS: usize = 15;

/// The lead never holds more kept tokens than this.
pub const LEAD_MAX_TOKENS: usize = 60;

/// The head window (first sentences) is at least this many kept tokens long…
pub const HEAD_MIN_TOKENS: usize = 8;

/// …and at most this many.
pub const HEAD_MAX_TOKENS: usize = 20;

/// Valid `signature_words`.
pub const WORDS_RANGE: std::ops::RangeInclusive<usize> = 1..=8;
/// Valid `signature_variants`.
pub const VARIANTS_RANGE: std::ops::RangeInclusive<usize> = 0..=16;
/// Valid `signature_topwords` and `signature_longest`.
pub const LIST_RANGE: std::ops::RangeInclusive<usize> = 1..=256;
/// Valid `signature_min_letters`.
pub const MIN_LETTERS_RANGE: std::ops::RangeInclusive<usize> = 1..=64;

/// Separator between the terms hashed into one imatch key.
const SEP: u8 = 0x1F;

// ---------------------------------------------------------------------------
// Scheme
// ---------------------------------------------------------------------------

/// How a signature is built and compared (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scheme {
    /// CRC32 of sets of heavy terms; candidates share any key.
    Imatch,
    /// One key per heaviest term; candidates share `min_shared` keys.
    Topwords,
    /// One key per longest term; candidates reach a similarity threshold.
    Longest,
}

const SCHEMES: [Scheme; 3] = [Scheme::Imatch, Scheme::Topwords, Scheme::Longest];

impl Scheme {
    /// Parses `'imatch'`, `'topwords'` or `'longest'` (ASCII case-insensitive,
    /// surrounding blanks ignored).
    pub fn parse(s: &str) -> Result<Scheme> {
        let t = s.trim();
        SCHEMES
            .into_iter()
            .find(|sc| t.eq_ignore_ascii_case(sc.as_str()))
            .ok_or_else(|| DedupError::InvalidParameter {
                msg: format!(
                    "unrecognized signature scheme \"{}\"",
                    crate::error::excerpt(s)
                ),
                hint: Some("valid schemes are \"imatch\", \"topwords\" and \"longest\"".into()),
            })
    }

    /// The canonical SQL spelling, the inverse of [`Scheme::parse`].
    pub fn as_str(&self) -> &'static str {
        match self {
            Scheme::Imatch => "imatch",
            Scheme::Topwords => "topwords",
            Scheme::Longest => "longest",
        }
    }

    /// The byte that stands for the scheme in the binary form.
    pub fn tag(&self) -> u8 {
        match self {
            Scheme::Imatch => 1,
            Scheme::Topwords => 2,
            Scheme::Longest => 3,
        }
    }

    /// The inverse of [`Scheme::tag`]; `None` for an unknown byte.
    pub fn from_tag(tag: u8) -> Option<Scheme> {
        SCHEMES.into_iter().find(|sc| sc.tag() == tag)
    }
}

// ---------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------

/// Per-collection signature settings, from `create_collection`'s options jsonb.
#[derive(Clone, Debug, PartialEq)]
pub struct SignatureOptions {
    pub scheme: Scheme,
    /// imatch: terms per key (`k`), in [`WORDS_RANGE`]; default 2.
    pub signature_words: usize,
    /// imatch: randomised variants, in [`VARIANTS_RANGE`]; default 6.
    pub variants: usize,
    /// imatch: share of the vocabulary each variant drops, in `[0, 1)`; default 0.3.
    pub drop_fraction: f64,
    /// topwords: keys per document, in [`LIST_RANGE`]; default 12 (new collections
    /// are created with 16, see [`new_collection_options`]).
    pub topwords: usize,
    /// longest: keys per document, in [`LIST_RANGE`]; default 15.
    pub longest: usize,
    /// longest: shortest term taken, in characters, in [`MIN_LETTERS_RANGE`]; default 4.
    pub min_letters: usize,
    /// imatch: seed of the variants' term hash; default 0.
    pub seed: u64,
    /// topwords: a document with fewer distinct terms than this gets set keys up to
    /// this many, so that two short texts of the same words still share enough keys
    /// (`signature_pad`; default 0, new collections get their `min_shared_keys`).
    /// Fixed when the collection is created: it changes stored signatures, unlike
    /// `min_shared_keys`, which only changes the scan.
    pub pad_to: usize,
}

impl Default for SignatureOptions {
    fn default() -> Self {
        SignatureOptions {
            scheme: Scheme::Imatch,
            signature_words: 2,
            variants: 6,
            drop_fraction: 0.3,
            topwords: 12,
            longest: 15,
            min_letters: 4,
            seed: 0,
            pad_to: 0,
        }
    }
}

/// The collection options that set its signatures ([`SignatureOptions::from_json`]).
pub const KEYS: [&str; 9] = [
    "signature_scheme",
    "signature_words",
    "signature_variants",
    "signature_drop_fraction",
    "signature_topwords",
    "signature_longest",
    "signature_min_letters",
    "signature_pad",
    "signature_seed",
];

/// What a collection created today starts with, under the options its creator gave
/// (which win): `topwords` signatures of 16 words, candidates sharing 4 keys, short
/// texts padded to their `min_shared_keys`. The defaults of
/// [`SignatureOptions::default`] and [`crate::limits::Limits::default`] are those of
/// collections created before these were written out (0.1.0), so that a collection's
/// stored signatures never change meaning when the library is upgraded.
pub fn new_collection_options(
    given: &serde_json::Map<String, serde_json::Value>,
) -> serde_json::Map<String, serde_json::Value> {
    let mut o = given.clone();
    let unset = |o: &serde_json::Map<String, serde_json::Value>, k: &str| {
        o.get(k).is_none_or(|x| x.is_null())
    };
    for (k, v) in [
        ("signature_scheme", serde_json::Value::from("topwords")),
        ("signature_topwords", 16.into()),
        ("min_shared_keys", 4.into()),
    ] {
        if unset(&o, k) {
            o.insert(k.to_string(), v);
        }
    }
    if unset(&o, "signature_pad") {
        let pad = o["min_shared_keys"].clone();
        o.insert("signature_pad".to_string(), pad);
    }
    o
}

/// `v` as an integer in `range`: JSON integers, or numbers with no fraction (`2.0`).
fn json_count(
    key: &str,
    v: &serde_json::Value,
    range: std::ops::RangeInclusive<usize>,
) -> Result<usize> {
    let n = v
        .as_u64()
        .or_else(|| {
            v.as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < 1e18)
                .map(|f| f as u64)
        })
        .and_then(|n| usize::try_from(n).ok())
        .filter(|n| range.contains(n));
    n.ok_or_else(|| {
        DedupError::invalid_parameter(format!(
            "{key} must be an integer between {} and {}, got {}",
            range.start(),
            range.end(),
            crate::error::json_excerpt(v)
        ))
    })
}

impl SignatureOptions {
    /// Reads the `signature_*` keys of a collection's options object; absent keys
    /// (or `null` values) keep their defaults and other keys are ignored. `null`
    /// in place of the object means all defaults. Any bad value is an
    /// `InvalidParameter` naming the key and its valid range.
    pub fn from_json(v: &serde_json::Value) -> Result<SignatureOptions> {
        let mut o = SignatureOptions::default();
        let map = match v {
            serde_json::Value::Null => return Ok(o),
            serde_json::Value::Object(m) => m,
            _ => {
                return Err(DedupError::invalid_parameter(
                    "options must be a jsonb object",
                ))
            }
        };
        let get = |key: &str| map.get(key).filter(|x| !x.is_null());
        if let Some(x) = get("signature_scheme") {
            o.scheme = match x.as_str() {
                Some(s) => Scheme::parse(s)?,
                None => {
                    return Err(DedupError::InvalidParameter {
                        msg: format!(
                            "signature_scheme must be a string, got {}",
                            crate::error::json_excerpt(x)
                        ),
                        hint: Some(
                            "valid schemes are \"imatch\", \"topwords\" and \"longest\"".into(),
                        ),
                    })
                }
            };
        }
        if let Some(x) = get("signature_words") {
            o.signature_words = json_count("signature_words", x, WORDS_RANGE)?;
        }
        if let Some(x) = get("signature_variants") {
            o.variants = json_count("signature_variants", x, VARIANTS_RANGE)?;
        }
        if let Some(x) = get("signature_drop_fraction") {
            o.drop_fraction = x
                .as_f64()
                .filter(|f| (0.0..1.0).contains(f))
                .ok_or_else(|| {
                    DedupError::invalid_parameter(format!(
                        "signature_drop_fraction must be a number at least 0 and below 1, got {}",
                        crate::error::json_excerpt(x)
                    ))
                })?;
        }
        if let Some(x) = get("signature_topwords") {
            o.topwords = json_count("signature_topwords", x, LIST_RANGE)?;
        }
        if let Some(x) = get("signature_longest") {
            o.longest = json_count("signature_longest", x, LIST_RANGE)?;
        }
        if let Some(x) = get("signature_min_letters") {
            o.min_letters = json_count("signature_min_letters", x, MIN_LETTERS_RANGE)?;
        }
        if let Some(x) = get("signature_pad") {
            o.pad_to = json_count("signature_pad", x, 0..=256)?;
        }
        if let Some(x) = get("signature_seed") {
            o.seed = x.as_u64().ok_or_else(|| {
                DedupError::invalid_parameter(format!(
                    "signature_seed must be an integer between 0 and {}, got {}",
                    u64::MAX,
                    crate::error::json_excerpt(x)
                ))
            })?;
        }
        Ok(o)
    }
}

// ---------------------------------------------------------------------------
// Signature
// ---------------------------------------------------------------------------

/// A signature: scheme plus sorted, unique keys.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    pub scheme: Scheme,
    pub keys: Vec<u32>,
}

/// At most 100 characters of `s`, for error messages.
fn excerpt(s: &str) -> String {
    match s.char_indices().nth(100) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_owned(),
    }
}

impl Signature {
    /// The binary form: `u8` format version ([`SIGNATURE_FORMAT_VERSION`]), `u8`
    /// scheme tag, then each key as a little-endian `u32`.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(2 + 4 * self.keys.len());
        out.push(SIGNATURE_FORMAT_VERSION);
        out.push(self.scheme.tag());
        for k in &self.keys {
            out.extend_from_slice(&k.to_le_bytes());
        }
        out
    }

    /// Parses the binary form, checking the version, the tag, the length and that
    /// keys are strictly increasing, at most [`MAX_TEXT_KEYS`] of them. Never panics;
    /// allocates 4 bytes per 4 bytes of input. Every failure is [`DedupError::InvalidBinary`] (22P03).
    pub fn decode(b: &[u8]) -> Result<Signature> {
        let (&version, rest) = b
            .split_first()
            .ok_or_else(|| DedupError::invalid_binary("signature bytes are truncated"))?;
        if version != SIGNATURE_FORMAT_VERSION {
            return Err(DedupError::invalid_binary(format!(
                "unsupported signature format version {version} (this build reads {SIGNATURE_FORMAT_VERSION})"
            )));
        }
        let (&tag, body) = rest
            .split_first()
            .ok_or_else(|| DedupError::invalid_binary("signature bytes are truncated"))?;
        let scheme = Scheme::from_tag(tag).ok_or_else(|| {
            DedupError::invalid_binary(format!("unknown signature scheme tag {tag}"))
        })?;
        if body.len() % 4 != 0 {
            return Err(DedupError::invalid_binary(
                "signature length is not a whole number of keys",
            ));
        }
        if body.len() / 4 > MAX_TEXT_KEYS {
            return Err(DedupError::invalid_binary(format!(
                "signature holds more than {MAX_TEXT_KEYS} keys"
            )));
        }
        let keys: Vec<u32> = body
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        if keys.windows(2).any(|w| w[0] >= w[1]) {
            return Err(DedupError::invalid_binary(
                "signature keys are not sorted and unique",
            ));
        }
        Ok(Signature { scheme, keys })
    }

    /// The text form, `scheme:{key,key,...}` with decimal keys in ascending order,
    /// e.g. `imatch:{12345,67890}`; `imatch:{}` when empty.
    pub fn to_text(&self) -> String {
        let mut s = String::with_capacity(12 + 11 * self.keys.len());
        s.push_str(self.scheme.as_str());
        s.push_str(":{");
        for (i, k) in self.keys.iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            s.push_str(&k.to_string());
        }
        s.push('}');
        s
    }

    /// Parses the text form. Blanks are allowed around the parts, the scheme is
    /// case-insensitive, keys may come in any order and repeat (they are sorted and
    /// deduplicated). At most [`MAX_TEXT_KEYS`] keys. Anything else is
    /// `InvalidInput`.
    pub fn from_text(s: &str) -> Result<Signature> {
        let bad = |why: &str| {
            DedupError::invalid_input(format!(
                "malformed signature literal \"{}\": {why}",
                excerpt(s)
            ))
        };
        let (name, rest) = s
            .split_once(':')
            .ok_or_else(|| bad("expected \"scheme:{key,...}\""))?;
        let scheme = Scheme::parse(name)
            .map_err(|_| bad("the scheme must be \"imatch\", \"topwords\" or \"longest\""))?;
        let inner = rest
            .trim()
            .strip_prefix('{')
            .and_then(|r| r.strip_suffix('}'))
            .ok_or_else(|| bad("keys must be enclosed in { }"))?;
        let mut keys = Vec::new();
        if !inner.trim().is_empty() {
            for part in inner.split(',') {
                if keys.len() == MAX_TEXT_KEYS {
                    return Err(bad(&format!("more than {MAX_TEXT_KEYS} keys")));
                }
                let p = part.trim();
                if p.is_empty() || !p.bytes().all(|c| c.is_ascii_digit()) {
                    return Err(bad(&format!(
                        "key \"{}\" is not an unsigned integer",
                        excerpt(p)
                    )));
                }
                let k: u32 = p.parse().map_err(|_| {
                    bad(&format!(
                        "key {} is out of range for a 32-bit key",
                        excerpt(p)
                    ))
                })?;
                keys.push(k);
            }
        }
        keys.sort_unstable();
        keys.dedup();
        Ok(Signature { scheme, keys })
    }

    /// Number of keys in both signatures (a merge-join); 0 for two schemes, whose
    /// keys mean different things and which [`is_candidate`] never pairs.
    pub fn shared_keys(&self, other: &Signature) -> usize {
        if self.scheme != other.scheme {
            return 0;
        }
        crate::sorted::intersection_count(&self.keys, &other.keys)
    }

    /// Shared keys / the smaller key count, in `[0, 1]`; 0 when either is empty or
    /// the schemes differ.
    pub fn similarity(&self, other: &Signature) -> f64 {
        let m = self.keys.len().min(other.keys.len());
        if m == 0 || self.scheme != other.scheme {
            0.0
        } else {
            self.shared_keys(other) as f64 / m as f64
        }
    }
}

/// The candidate rule. `imatch`: at least one shared key. `topwords`: at least
/// `min_shared` shared keys (0 counts as 1). `longest`: at least one shared key and
/// [`Signature::similarity`] `>= threshold`. Different schemes: `false`.
pub fn is_candidate(a: &Signature, b: &Signature, min_shared: usize, threshold: f64) -> bool {
    if a.scheme != b.scheme {
        return false;
    }
    let shared = a.shared_keys(b);
    match a.scheme {
        Scheme::Imatch => shared >= 1,
        Scheme::Topwords => shared >= min_shared.max(1),
        Scheme::Longest => shared >= 1 && a.similarity(b) >= threshold,
    }
}

// ---------------------------------------------------------------------------
// Building
// ---------------------------------------------------------------------------

/// Sanitised weight of term `i`: missing, NaN, infinite or negative is 0.
fn weight_at(weights: &[f64], i: usize) -> f64 {
    match weights.get(i) {
        Some(&w) if w.is_finite() && w > 0.0 => w,
        _ => 0.0,
    }
}

/// Term indices ordered by `score` descending, ties by term bytes ascending.
/// `score` is aligned with `doc.terms`.
fn ranked(doc: &Document, score: &[f64]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..doc.terms.len().min(score.len())).collect();
    idx.sort_unstable_by(|&a, &b| {
        score[b].total_cmp(&score[a]).then_with(|| {
            doc.terms[a]
                .term
                .as_bytes()
                .cmp(doc.terms[b].term.as_bytes())
        })
    });
    idx
}

/// CRC32 of the terms `idx` sorted by bytes and joined by [`SEP`].
fn set_key(doc: &Document, idx: impl Iterator<Item = usize>) -> u32 {
    let mut t: Vec<&[u8]> = idx.map(|i| doc.terms[i].term.as_bytes()).collect();
    t.sort_unstable();
    let mut h = crc32fast::Hasher::new();
    for (n, b) in t.iter().enumerate() {
        if n > 0 {
            h.update(&[SEP]);
        }
        h.update(b);
    }
    h.finalize()
}

/// FNV-1a, 64-bit.
fn fnv1a64(b: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &x in b {
        h ^= x as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The splitmix64 finaliser.
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// `h(seed, v, term)`: the seeded hash of a term for variant `v`, in `[0, 1)`.
/// Integer arithmetic only, so the same on every platform.
fn variant_draw(seed: u64, v: usize, term: &[u8]) -> f64 {
    let salt = mix64(seed ^ (v as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let h = mix64(fnv1a64(term) ^ salt);
    (h >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// The lead: distinct terms of the first paragraph (continued while under
/// [`LEAD_MIN_TOKENS`] tokens, cut at [`LEAD_MAX_TOKENS`]), with their counts
/// there. Falls back to sentences when the document has no paragraphs.
fn lead_terms(doc: &Document) -> Vec<(usize, u32)> {
    let segs = if doc.paragraphs.is_empty() {
        &doc.sentences
    } else {
        &doc.paragraphs
    };
    window_terms(doc, segs, LEAD_MIN_TOKENS, LEAD_MAX_TOKENS)
}

/// The head: distinct terms of the first sentences, continued while under
/// [`HEAD_MIN_TOKENS`] tokens and cut at [`HEAD_MAX_TOKENS`]. It serves copies cut
/// inside a long first paragraph (single-paragraph posts), where the lead ends
/// elsewhere in the two copies.
fn head_terms(doc: &Document) -> Vec<(usize, u32)> {
    window_terms(doc, &doc.sentences, HEAD_MIN_TOKENS, HEAD_MAX_TOKENS)
}

/// Distinct terms, with counts, of the leading segments of `segs`: whole segments
/// while fewer than `min` tokens are taken, never more than `max` tokens.
fn window_terms(
    doc: &Document,
    segs: &[crate::document::Segment],
    min: usize,
    max: usize,
) -> Vec<(usize, u32)> {
    let mut out: Vec<(usize, u32)> = Vec::new();
    let mut n = 0;
    for s in segs {
        if n >= min {
            break;
        }
        for &i in &s.terms {
            let i = i as usize;
            if n >= max {
                return out;
            }
            if i >= doc.terms.len() {
                continue;
            }
            n += 1;
            match out.iter_mut().find(|e| e.0 == i) {
                Some(e) => e.1 += 1,
                None => out.push((i, 1)),
            }
        }
    }
    out
}

/// Pushes the key of `top` if it holds at most `k` terms, else the key of each
/// subset of `top` without one of its terms.
fn push_subsets(doc: &Document, top: &[usize], k: usize, keys: &mut Vec<u32>) {
    if top.len() <= k {
        if !top.is_empty() {
            keys.push(set_key(doc, top.iter().copied()));
        }
        return;
    }
    for skip in 0..top.len() {
        let sub = top
            .iter()
            .enumerate()
            .filter(move |&(j, _)| j != skip)
            .map(|(_, &i)| i);
        keys.push(set_key(doc, sub));
    }
}

/// The imatch keys, unsorted; `lead = false` leaves out the lead subsets (for the
/// measurements only).
fn imatch_keys(doc: &Document, weights: &[f64], opts: &SignatureOptions, lead: bool) -> Vec<u32> {
    let n = doc.terms.len();
    let mut keys = Vec::new();
    if n == 0 {
        return keys;
    }
    let k = opts
        .signature_words
        .clamp(*WORDS_RANGE.start(), *WORDS_RANGE.end());
    let w: Vec<f64> = (0..n).map(|i| weight_at(weights, i)).collect();
    let order = ranked(doc, &w);
    keys.push(set_key(doc, order.iter().copied().take(k)));
    for v in 0..opts.variants.min(*VARIANTS_RANGE.end()) {
        let pick: Vec<usize> = order
            .iter()
            .copied()
            .filter(|&i| {
                variant_draw(opts.seed, v, doc.terms[i].term.as_bytes()) >= opts.drop_fraction
            })
            .take(k)
            .collect();
        if !pick.is_empty() {
            keys.push(set_key(doc, pick.into_iter()));
        }
    }
    if lead {
        for window in [lead_terms(doc), head_terms(doc)] {
            push_window_keys(doc, &w, window, k, &mut keys);
        }
    }
    keys
}

/// The k-subsets of the `k + 1` top terms of a window, ranked by
/// `rarity · (1 + ln count in the window)`.
fn push_window_keys(
    doc: &Document,
    w: &[f64],
    window: Vec<(usize, u32)>,
    k: usize,
    keys: &mut Vec<u32>,
) {
    {
        let mut lt: Vec<(usize, f64)> = window
            .into_iter()
            .map(|(i, c)| {
                let rarity = w[i] / (1.0 + (doc.terms[i].tf.max(1) as f64).ln());
                (i, rarity * (1.0 + (c as f64).ln()))
            })
            .collect();
        if !lt.is_empty() {
            lt.sort_unstable_by(|a, b| {
                b.1.total_cmp(&a.1).then_with(|| {
                    doc.terms[a.0]
                        .term
                        .as_bytes()
                        .cmp(doc.terms[b.0].term.as_bytes())
                })
            });
            let top: Vec<usize> = lt.iter().take(k + 1).map(|e| e.0).collect();
            push_subsets(doc, &top, k, keys);
        }
    }
}

/// Builds the signature of `doc` under `opts.scheme`. `weights` are the body term
/// weights aligned with `doc.terms` (BM25 or TF-RIDF against the collection); a
/// missing, NaN, infinite or negative weight counts as 0. Options are used as given
/// except that `signature_words` is clamped to [`WORDS_RANGE`] and `variants`,
/// `topwords` and `longest` to at most the ends of their ranges (a NaN
/// `drop_fraction` drops every term, so the variants add nothing). Never panics.
pub fn signature(doc: &Document, weights: &[f64], opts: &SignatureOptions) -> Signature {
    build(doc, weights, opts).0
}

/// [`signature`], and under `topwords` its word keys with their weights.
fn build(doc: &Document, weights: &[f64], opts: &SignatureOptions) -> (Signature, Vec<(f64, u32)>) {
    let mut words: Vec<(f64, u32)> = Vec::new();
    let mut keys: Vec<u32> = match opts.scheme {
        Scheme::Imatch => {
            let mut k = imatch_keys(doc, weights, opts, true);
            // The exact-copy key: the low 32 bits of the document's fingerprint. It
            // does not depend on weights, so exact copies stay candidates however far
            // the collection statistics drift between their signatures.
            // A text of stop words alone has no terms but a fingerprint: its copies
            // meet through this key.
            if doc.fingerprint != 0 {
                k.push(doc.fingerprint as u32);
            }
            k
        }
        Scheme::Topwords => {
            let w: Vec<f64> = (0..doc.terms.len())
                .map(|i| weight_at(weights, i))
                .collect();
            words = ranked(doc, &w)
                .into_iter()
                .take(opts.topwords.min(*LIST_RANGE.end()))
                .map(|i| (w[i], crc32fast::hash(doc.terms[i].term.as_bytes())))
                .collect();
            let mut k: Vec<u32> = words.iter().map(|&(_, key)| key).collect();
            // A short text: keys of its whole term set make up the difference, so
            // two texts of the same few words share `pad_to` keys.
            if !doc.terms.is_empty() && k.len() < opts.pad_to {
                let mut h = xxhash_rust::xxh3::Xxh3::new();
                for t in &doc.terms {
                    h.update(t.term.as_bytes());
                    h.update(&[0]);
                }
                let set = h.digest();
                for i in 0..(opts.pad_to - k.len()) as u64 {
                    let mut b = [0u8; 17];
                    b[0] = 0xff; // not the first byte of any UTF-8 term
                    b[1..9].copy_from_slice(&set.to_le_bytes());
                    b[9..].copy_from_slice(&i.to_le_bytes());
                    k.push(crc32fast::hash(&b));
                }
            }
            // The exact-copy keys: `pad_to` keys of the fingerprint. They do not
            // depend on weights, so two exact copies share `pad_to` (the collection's
            // `min_shared_keys` when it was created) keys however the statistics
            // drift between their signatures: the heaviest words of a text whose
            // words weigh alike change order as the collection grows.
            // A text of stop words alone ("to be or not to be") has no terms, and
            // these keys alone.
            if doc.fingerprint != 0 {
                for i in 0..opts.pad_to as u64 {
                    let mut b = [0u8; 25];
                    b[0] = 0xfe; // neither a UTF-8 term's first byte nor a set key's 0xff
                    b[1..17].copy_from_slice(&doc.fingerprint.to_le_bytes());
                    b[17..].copy_from_slice(&i.to_le_bytes());
                    k.push(crc32fast::hash(&b));
                }
            }
            k
        }
        Scheme::Longest => {
            let mut long: Vec<(usize, &str)> = doc
                .terms
                .iter()
                .map(|t| (t.term.chars().count(), t.term.as_str()))
                .filter(|&(len, _)| len >= opts.min_letters)
                .collect();
            long.sort_unstable_by(|a, b| {
                b.0.cmp(&a.0)
                    .then_with(|| a.1.as_bytes().cmp(b.1.as_bytes()))
            });
            long.into_iter()
                .take(opts.longest.min(*LIST_RANGE.end()))
                .map(|(_, t)| crc32fast::hash(t.as_bytes()))
                .collect()
        }
    };
    keys.sort_unstable();
    keys.dedup();
    (
        Signature {
            scheme: opts.scheme,
            keys,
        },
        words,
    )
}

/// [`signature`], and the keys of it whose locks a writer takes so that two
/// near-identical texts are never judged at once (`pg::keylocks`). Under
/// `topwords` the `min_shared - 1` lightest word keys are left out: a word in
/// most of the collection's texts is light, and locked it made every insert that
/// carries it wait its turn. Two texts that are candidates share at least
/// `min_shared` keys; ordered by weight the same way (near-identical texts weigh
/// their words alike), the heaviest shared key is outside both texts' lightest
/// `min_shared - 1`, so they still share a locked key; the set and exact-copy
/// keys are always locked. Other schemes pair texts on one shared key: every key
/// is locked.
pub fn signature_and_lock_keys(
    doc: &Document,
    weights: &[f64],
    opts: &SignatureOptions,
    min_shared: usize,
) -> (Signature, Vec<u32>) {
    let (sig, mut words) = build(doc, weights, opts);
    let skip = min_shared.saturating_sub(1);
    if words.is_empty() || skip == 0 {
        let keys = sig.keys.clone();
        return (sig, keys);
    }
    // Lightest first, ties by key: the same order for the same weights.
    words.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let left_out: Vec<u32> = words.iter().take(skip).map(|&(_, k)| k).collect();
    let keys = sig
        .keys
        .iter()
        .copied()
        .filter(|k| !left_out.contains(k))
        .collect();
    (sig, keys)
}

// ---------------------------------------------------------------------------
// GIN support
// ---------------------------------------------------------------------------

/// A GIN ternary value (`GIN_FALSE`, `GIN_TRUE`, `GIN_MAYBE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tri {
    False,
    True,
    Maybe,
}

/// Whether an indexed item holding `shared` of the query's keys might be a
/// candidate for a query of scheme `s`: the part of [`is_candidate`] that the
/// shared count alone decides. `imatch` needs one shared key, `topwords`
/// `min_shared` (0 counts as 1). `longest` needs one, and a `threshold` of at most
/// 1: its similarity `shared / min(nquery, n_item)` is unknown here, but an item
/// made of exactly the shared keys (a short text) reaches 1.
fn gin_possible(s: Scheme, shared: usize, min_shared: usize, threshold: f64) -> bool {
    match s {
        Scheme::Imatch => shared >= 1,
        Scheme::Topwords => shared >= min_shared.max(1),
        Scheme::Longest => shared >= 1 && threshold <= 1.0,
    }
}

/// What GIN's `consistent` decides when `matched` of the query's keys are in an
/// indexed item, for a query signature of scheme `s`. Returns `(matches,
/// recheck)`.
///
/// The index keys are the bare `u32` keys: they do not record the scheme of the
/// row they come from, and [`is_candidate`] says `false` for a pair of different
/// schemes. So the index can only rule rows out: every `true` comes with
/// `recheck = true`, and the `%` operator then decides on the row (as a sequential
/// scan would). `false` is certain: it is returned only when no item with
/// `matched` shared keys can be a candidate, whatever its scheme and key count.
/// (Keys are unique within a signature, so `matched` is the shared count.)
pub fn gin_consistent(
    s: Scheme,
    matched: usize,
    min_shared: usize,
    threshold: f64,
) -> (bool, bool) {
    let possible = gin_possible(s, matched, min_shared, threshold);
    (possible, possible)
}

/// GIN's `triConsistent`: `matched` keys certainly present, `maybe` keys perhaps.
/// `False` when even `matched + maybe` shared keys cannot make a candidate,
/// `Maybe` otherwise, never `True`: as in [`gin_consistent`], the row's scheme is
/// not in the index, so a match is always rechecked (`Maybe` also stands for
/// "true, recheck", as in pg_trgm).
pub fn gin_tri_consistent(
    s: Scheme,
    matched: usize,
    maybe: usize,
    min_shared: usize,
    threshold: f64,
) -> Tri {
    if gin_possible(s, matched.saturating_add(maybe), min_shared, threshold) {
        Tri::Maybe
    } else {
        Tri::False
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The defaults before topwords became the default: imatch, 12 top words.
    fn paper_options() -> SignatureOptions {
        SignatureOptions {
            scheme: Scheme::Imatch,
            topwords: 12,
            ..SignatureOptions::default()
        }
    }
    use crate::document::{Segment, TermFreq};

    // ---- helpers ----------------------------------------------------------------

    /// A document from paragraphs of space-separated terms, one sentence each.
    fn doc_of(paras: &[&str]) -> Document {
        let mut names: Vec<&str> = paras.iter().flat_map(|p| p.split_whitespace()).collect();
        names.sort_unstable();
        names.dedup();
        let mut tf = vec![0u32; names.len()];
        let paragraphs: Vec<Segment> = paras
            .iter()
            .map(|p| {
                let terms: Vec<u32> = p
                    .split_whitespace()
                    .map(|w| names.binary_search(&w).unwrap() as u32)
                    .collect();
                for &i in &terms {
                    tf[i as usize] += 1;
                }
                Segment { hash: 0, terms }
            })
            .collect();
        Document {
            terms: names
                .iter()
                .zip(&tf)
                .map(|(t, &tf)| TermFreq {
                    term: (*t).into(),
                    tf,
                })
                .collect(),
            sentences: paragraphs.clone(),
            paragraphs,
            ..Document::default()
        }
    }

    /// tf · idf with a fixed idf per term.
    fn tfidf(d: &Document, idf: impl Fn(&str) -> f64) -> Vec<f64> {
        d.terms.iter().map(|t| t.tf as f64 * idf(&t.term)).collect()
    }

    fn sig(keys: &[u32], scheme: Scheme) -> Signature {
        Signature {
            scheme,
            keys: keys.to_vec(),
        }
    }

    fn crc_set(terms: &[&str]) -> u32 {
        let mut t = terms.to_vec();
        t.sort_unstable();
        crc32fast::hash(t.join("\u{1f}").as_bytes())
    }

    // ---- scheme and options -----------------------------------------------------

    #[test]
    fn scheme_names_and_tags() {
        for s in SCHEMES {
            assert_eq!(Scheme::parse(s.as_str()).unwrap(), s);
            assert_eq!(Scheme::from_tag(s.tag()), Some(s));
        }
        assert_eq!(Scheme::parse("  TopWords ").unwrap(), Scheme::Topwords);
        assert_eq!(
            [
                Scheme::Imatch.tag(),
                Scheme::Topwords.tag(),
                Scheme::Longest.tag()
            ],
            [1, 2, 3]
        );
        let e = Scheme::parse("minhash").unwrap_err();
        assert_eq!(e.sqlstate(), "22023");
        assert!(e.hint().unwrap().contains("imatch"));
        assert_eq!(Scheme::from_tag(0), None);
        assert_eq!(
            serde_json::to_string(&Scheme::Longest).unwrap(),
            "\"longest\""
        );
    }

    #[test]
    fn new_collection_options_fill_what_was_not_given() {
        let m = |v: serde_json::Value| v.as_object().unwrap().clone();
        let o = new_collection_options(&m(serde_json::json!({})));
        assert_eq!(
            serde_json::Value::Object(o.clone()),
            serde_json::json!({"signature_scheme": "topwords", "signature_topwords": 16,
                               "min_shared_keys": 4, "signature_pad": 4})
        );
        let s = SignatureOptions::from_json(&serde_json::Value::Object(o)).unwrap();
        assert_eq!((s.scheme, s.topwords, s.pad_to), (Scheme::Topwords, 16, 4));
        // What the creator gave wins; the padding follows the creator's min_shared_keys.
        let o = new_collection_options(&m(serde_json::json!({
            "signature_scheme": "imatch", "min_shared_keys": 6, "signature_topwords": null})));
        assert_eq!(o["signature_scheme"], "imatch");
        assert_eq!(o["signature_topwords"], 16);
        assert_eq!(o["signature_pad"], 6);
        let o = new_collection_options(&m(serde_json::json!({"signature_pad": 0})));
        assert_eq!(o["signature_pad"], 0);
    }

    #[test]
    fn topwords_pads_short_texts_with_term_set_keys() {
        let opts = SignatureOptions {
            scheme: Scheme::Topwords,
            topwords: 16,
            pad_to: 4,
            ..SignatureOptions::default()
        };
        let doc = |words: &str| doc_of(&[words]);
        let w = vec![1.0; 3];
        let a = signature(&doc("alpha beta gamma"), &w, &opts);
        let b = signature(&doc("alpha beta gamma"), &w, &opts);
        let c = signature(&doc("alpha beta delta"), &w, &opts);
        assert_eq!(a.keys.len(), 4);
        assert!(is_candidate(&a, &b, 4, 0.8));
        // Two shared words are not enough: the set keys differ.
        assert_eq!(a.shared_keys(&c), 2);
        assert!(!is_candidate(&a, &c, 4, 0.8));
        // Unpadded (a 0.1.0 collection): three keys never reach four shared.
        let plain = SignatureOptions { pad_to: 0, ..opts };
        let a0 = signature(&doc("alpha beta gamma"), &w, &plain);
        assert_eq!(a0.keys.len(), 3);
        assert!(!is_candidate(&a0, &a0, 4, 0.8));
        // A text with no terms gets no keys at all.
        assert!(signature(&Document::default(), &[], &opts).keys.is_empty());
    }

    #[test]
    fn topwords_exact_copies_share_the_fingerprint_keys_whatever_the_weights() {
        let opts = SignatureOptions {
            scheme: Scheme::Topwords,
            topwords: 4,
            pad_to: 4,
            ..SignatureOptions::default()
        };
        let words: Vec<String> = (0..12).map(|i| format!("word{i}")).collect();
        let text = words.join(" ");
        let mut a = doc_of(&[text.as_str()]);
        a.fingerprint = 0xfeed_beef;
        let n = a.terms.len();
        // The same text under statistics that ranked its words the other way round.
        let up: Vec<f64> = (0..n).map(|i| i as f64).collect();
        let down: Vec<f64> = (0..n).map(|i| (n - i) as f64).collect();
        let (s1, s2) = (signature(&a, &up, &opts), signature(&a, &down, &opts));
        assert_eq!(s1.keys.len(), 8);
        assert!(s1.shared_keys(&s2) >= 4);
        assert!(is_candidate(&s1, &s2, 4, 0.8));
        // Another text with the same heaviest words is no exact copy.
        let mut b = a.clone();
        b.fingerprint = 0xdead_beef;
        assert_eq!(signature(&b, &up, &opts).shared_keys(&s1), 4);
        assert_eq!(signature(&b, &down, &opts).shared_keys(&s1), 0);
        // Without padding (a 0.1.0 collection) there are no exact-copy keys.
        let plain = SignatureOptions { pad_to: 0, ..opts };
        assert_eq!(signature(&a, &up, &plain).keys.len(), 4);
    }

    #[test]
    fn options_from_json() {
        let d = SignatureOptions::default();
        assert_eq!(d.scheme, Scheme::Imatch);
        assert_eq!((d.topwords, d.pad_to), (12, 0));
        assert_eq!(
            (
                d.signature_words,
                d.variants,
                d.topwords,
                d.longest,
                d.min_letters
            ),
            (2, 6, 12, 15, 4)
        );
        assert_eq!(
            SignatureOptions::from_json(&serde_json::json!({})).unwrap(),
            d
        );
        assert_eq!(
            SignatureOptions::from_json(&serde_json::Value::Null).unwrap(),
            d
        );
        let o = SignatureOptions::from_json(&serde_json::json!({
            "signature_scheme": "longest", "signature_words": 3, "signature_variants": 0,
            "signature_drop_fraction": 0.5, "signature_topwords": 20, "signature_longest": 10.0,
            "signature_min_letters": 5, "signature_seed": 18446744073709551615u64,
            "shingle_size": "whatever", "signature_words_extra": -1
        }))
        .unwrap();
        assert_eq!(
            o,
            SignatureOptions {
                scheme: Scheme::Longest,
                signature_words: 3,
                variants: 0,
                drop_fraction: 0.5,
                topwords: 20,
                longest: 10,
                min_letters: 5,
                seed: u64::MAX,
                pad_to: 0,
            }
        );
        let o = SignatureOptions::from_json(&serde_json::json!({"signature_words": null})).unwrap();
        assert_eq!(o.signature_words, 2);
    }

    #[test]
    fn options_errors_name_key_and_range() {
        let cases = [
            (
                serde_json::json!({"signature_scheme": "simhash"}),
                "simhash",
            ),
            (
                serde_json::json!({"signature_scheme": 1}),
                "signature_scheme",
            ),
            (
                serde_json::json!({"signature_words": 0}),
                "signature_words must be an integer between 1 and 8, got 0",
            ),
            (
                serde_json::json!({"signature_words": 2.5}),
                "signature_words",
            ),
            (
                serde_json::json!({"signature_words": "2"}),
                "signature_words",
            ),
            (
                serde_json::json!({"signature_variants": 17}),
                "between 0 and 16",
            ),
            (
                serde_json::json!({"signature_variants": -1}),
                "signature_variants",
            ),
            (
                serde_json::json!({"signature_drop_fraction": 1.0}),
                "signature_drop_fraction",
            ),
            (
                serde_json::json!({"signature_drop_fraction": -0.1}),
                "signature_drop_fraction",
            ),
            (
                serde_json::json!({"signature_topwords": 0}),
                "signature_topwords must be an integer between 1 and 256",
            ),
            (
                serde_json::json!({"signature_longest": 1000}),
                "signature_longest",
            ),
            (
                serde_json::json!({"signature_min_letters": 0}),
                "signature_min_letters",
            ),
            (serde_json::json!({"signature_seed": -5}), "signature_seed"),
            (serde_json::json!({"signature_seed": 1.5}), "signature_seed"),
            (serde_json::json!([1, 2]), "options must be a jsonb object"),
        ];
        for (v, want) in cases {
            let e = SignatureOptions::from_json(&v).unwrap_err();
            assert_eq!(e.sqlstate(), "22023", "{v}");
            assert!(e.to_string().contains(want), "{v}: {e}");
        }
    }

    // ---- binary and text forms --------------------------------------------------

    #[test]
    fn encode_decode_round_trip() {
        for s in [
            sig(&[], Scheme::Imatch),
            sig(&[0, 7, 0xdead_beef, u32::MAX], Scheme::Longest),
            sig(&[42], Scheme::Topwords),
        ] {
            let b = s.encode();
            assert_eq!(b[0], SIGNATURE_FORMAT_VERSION);
            assert_eq!(b[1], s.scheme.tag());
            assert_eq!(b.len(), 2 + 4 * s.keys.len());
            assert_eq!(Signature::decode(&b).unwrap(), s);
        }
        assert_eq!(
            sig(&[1, 258], Scheme::Imatch).encode(),
            [1, 1, 1, 0, 0, 0, 2, 1, 0, 0]
        );
    }

    #[test]
    fn decode_rejects_bad_bytes() {
        let bad: [&[u8]; 7] = [
            &[],
            &[1],
            &[2, 1],
            &[1, 9],
            &[1, 1, 0, 0, 0],
            &[1, 1, 2, 0, 0, 0, 1, 0, 0, 0],
            &[1, 1, 2, 0, 0, 0, 2, 0, 0, 0],
        ];
        for b in bad {
            let e = Signature::decode(b).unwrap_err();
            assert_eq!(e.sqlstate(), "22P03", "{b:?}");
        }
        // Arbitrary bytes never panic.
        let mut x: u64 = 1;
        for len in 0..200 {
            let b: Vec<u8> = (0..len)
                .map(|_| {
                    x = mix64(x.wrapping_add(1));
                    (x % 4) as u8
                })
                .collect();
            let _ = Signature::decode(&b);
        }
    }

    #[test]
    fn text_round_trip() {
        let s = sig(&[12345, 67890], Scheme::Imatch);
        assert_eq!(s.to_text(), "imatch:{12345,67890}");
        assert_eq!(Signature::from_text(&s.to_text()).unwrap(), s);
        assert_eq!(sig(&[], Scheme::Longest).to_text(), "longest:{}");
        assert_eq!(
            Signature::from_text("longest:{}").unwrap(),
            sig(&[], Scheme::Longest)
        );
        assert_eq!(
            Signature::from_text(" TopWords : { 9 , 3,9, 4294967295 } ").unwrap(),
            sig(&[3, 9, u32::MAX], Scheme::Topwords)
        );
        assert_eq!(
            Signature::from_text("imatch:{ }").unwrap(),
            sig(&[], Scheme::Imatch)
        );
    }

    #[test]
    fn binary_holds_at_most_the_key_limit() {
        let make = |n: usize| {
            let mut b = vec![SIGNATURE_FORMAT_VERSION, Scheme::Topwords.tag()];
            for k in 0..n as u32 {
                b.extend_from_slice(&k.to_le_bytes());
            }
            b
        };
        assert_eq!(
            Signature::decode(&make(MAX_TEXT_KEYS)).unwrap().keys.len(),
            MAX_TEXT_KEYS
        );
        let e = Signature::decode(&make(MAX_TEXT_KEYS + 1)).unwrap_err();
        assert_eq!(e.sqlstate(), "22P03");
    }

    #[test]
    fn text_rejects_malformed() {
        let many = format!("imatch:{{{}}}", vec!["1"; MAX_TEXT_KEYS + 1].join(","));
        let ok = format!("imatch:{{{}}}", vec!["1"; MAX_TEXT_KEYS].join(","));
        assert_eq!(Signature::from_text(&ok).unwrap().keys, [1]);
        for s in [
            "",
            "imatch",
            "imatch{1}",
            "minhash:{1}",
            "imatch:1,2",
            "imatch:{1,2",
            "imatch:{1,,2}",
            "imatch:{1,}",
            "imatch:{-1}",
            "imatch:{+1}",
            "imatch:{4294967296}",
            "imatch:{1 2}",
            "imatch:{0x10}",
            "imatch:{1}x",
            many.as_str(),
        ] {
            let e = Signature::from_text(s).unwrap_err();
            assert_eq!(e.sqlstate(), "22P02", "{s:?}");
            assert!(
                e.to_string().starts_with("malformed signature literal"),
                "{e}"
            );
        }
        let long = format!("imatch:{{{}}}", "ж".repeat(500));
        let msg = Signature::from_text(&long).unwrap_err().to_string();
        assert!(msg.chars().count() < 300, "{msg}");
    }

    // ---- comparing --------------------------------------------------------------

    #[test]
    fn shared_and_similarity() {
        let a = sig(&[1, 3, 5, 7], Scheme::Longest);
        let b = sig(&[3, 4, 5], Scheme::Longest);
        assert_eq!(a.shared_keys(&b), 2);
        assert_eq!(b.shared_keys(&a), 2);
        assert!((a.similarity(&b) - 2.0 / 3.0).abs() < 1e-12);
        let e = sig(&[], Scheme::Longest);
        assert_eq!(a.similarity(&e), 0.0);
        assert_eq!(e.similarity(&e), 0.0);
        assert_eq!(a.similarity(&a), 1.0);
    }

    #[test]
    fn candidate_rules() {
        let a = sig(&[1, 2, 3, 4, 5, 6, 7, 8], Scheme::Topwords);
        let b = sig(&[1, 2, 3, 4, 5, 60, 70, 80], Scheme::Topwords);
        assert!(!is_candidate(&a, &b, 6, 0.8));
        assert!(is_candidate(&a, &b, 5, 0.8));
        assert!(is_candidate(&a, &b, 0, 0.8));
        let i1 = sig(&[10, 20], Scheme::Imatch);
        let i2 = sig(&[20, 30], Scheme::Imatch);
        assert!(is_candidate(&i1, &i2, 6, 0.8));
        assert!(!is_candidate(&i1, &sig(&[30], Scheme::Imatch), 6, 0.8));
        // Different schemes never match.
        assert!(!is_candidate(
            &i1,
            &sig(&[10, 20], Scheme::Topwords),
            1,
            0.0
        ));
        // longest: 4 of the shorter 5 = 0.8.
        let l1 = sig(&[1, 2, 3, 4, 5], Scheme::Longest);
        let l2 = sig(&[1, 2, 3, 4, 9, 10, 11], Scheme::Longest);
        assert!(is_candidate(&l1, &l2, 6, 0.8));
        assert!(!is_candidate(&l1, &l2, 6, 0.81));
        // Empty signatures match nothing, whatever the threshold.
        let e = sig(&[], Scheme::Longest);
        assert!(!is_candidate(&e, &e, 0, 0.0));
        assert!(!is_candidate(&l1, &sig(&[99], Scheme::Longest), 0, 0.0));
        assert!(!is_candidate(&l1, &l1, 6, f64::NAN));
    }

    // ---- building ---------------------------------------------------------------

    #[test]
    fn imatch_base_key_is_the_papers() {
        let d = doc_of(&["кремль санкции нефть газ", "нефть санкции нефть"]);
        // idf 1 for all: weights = tf. нефть 3, санкции 2, then газ/кремль at 1.
        let w = tfidf(&d, |_| 1.0);
        let opts = SignatureOptions {
            variants: 0,
            ..paper_options()
        };
        let s = signature(&d, &w, &opts);
        assert_eq!(s.scheme, Scheme::Imatch);
        assert!(s.keys.contains(&crc_set(&["нефть", "санкции"])));
        // Ties go by term bytes: with flat weights the base key is the two smallest.
        let s = signature(&d, &[1.0; 4], &opts);
        assert!(s.keys.contains(&crc_set(&["газ", "кремль"])));
        assert!(s.keys.windows(2).all(|w| w[0] < w[1]));
        assert!(s.keys.len() <= 1 + 3);
    }

    #[test]
    fn imatch_variants_are_seeded_and_deterministic() {
        let words: Vec<String> = (0..40).map(|i| format!("w{i:02}")).collect();
        let text = words.join(" ");
        let d = doc_of(&[&text]);
        let w: Vec<f64> = (0..d.terms.len()).map(|i| 1.0 + i as f64).collect();
        let o = paper_options();
        let a = signature(&d, &w, &o);
        assert_eq!(a, signature(&d, &w, &o));
        assert!(
            a.keys.len() > 4 && a.keys.len() <= 1 + 6 + 3,
            "{:?}",
            a.keys
        );
        let b = signature(
            &d,
            &w,
            &SignatureOptions {
                seed: 7,
                ..o.clone()
            },
        );
        assert_ne!(a, b);
        // Dropping nothing: every variant is the base key.
        let none = SignatureOptions {
            drop_fraction: 0.0,
            ..o.clone()
        };
        let no_var = SignatureOptions {
            variants: 0,
            ..o.clone()
        };
        assert_eq!(signature(&d, &w, &none), signature(&d, &w, &no_var));
        // The hash itself is fixed across platforms and releases.
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        let d0 = variant_draw(0, 0, "нефть".as_bytes());
        assert!((0.0..1.0).contains(&d0));
        assert_eq!(d0, variant_draw(0, 0, "нефть".as_bytes()));
        // Variants drop about `drop_fraction` of the vocabulary.
        let dropped = (0..10_000)
            .filter(|i| variant_draw(3, 1, format!("t{i}").as_bytes()) < 0.3)
            .count();
        assert!((2800..3200).contains(&dropped), "{dropped}");
    }

    /// The known weak point of the 2-word signature: a reprint that keeps the first
    /// half of the paragraphs. The original's heaviest words sit in the dropped
    /// half, so its top 2 changes; the lead subsets still agree.
    #[test]
    fn truncated_copy_shares_a_key() {
        let paras = [
            "правительство утвердило бюджет регион дотация правительство бюджет",
            "министр финансов заявил дотация регион получат весной",
            "губернатор поблагодарил министр бюджет регион",
            "экспорт нефть пошлина нефть пошлина экспорт нефть пошлина",
            "аналитики ожидают пошлина нефть экспорт рост пошлина нефть",
            "биржа отреагировала нефть пошлина котировки",
        ];
        let idf = |t: &str| match t {
            "пошлина" => 3.0,
            "нефть" => 2.0,
            "экспорт" => 2.0,
            "дотация" => 3.5,
            "губернатор" | "котировки" | "весной" => 3.0,
            "правительство" | "министр" | "бюджет" => 1.5,
            _ => 1.0,
        };
        let orig = doc_of(&paras);
        let copy = doc_of(&paras[..3]);
        let o = paper_options();
        let (wo, wc) = (tfidf(&orig, idf), tfidf(&copy, idf));
        // The base keys differ: {нефть, пошлина} against {бюджет, дотация}.
        let base = SignatureOptions {
            variants: 0,
            ..o.clone()
        };
        let bo = imatch_keys(&orig, &wo, &base, false);
        let bc = imatch_keys(&copy, &wc, &base, false);
        assert_eq!(bo, [crc_set(&["нефть", "пошлина"])]);
        assert_eq!(bc, [crc_set(&["бюджет", "дотация"])]);
        let (so, sc) = (signature(&orig, &wo, &o), signature(&copy, &wc, &o));
        assert!(so.shared_keys(&sc) >= 1, "{so:?} {sc:?}");
        assert!(is_candidate(&so, &sc, 6, 0.8));
        // The lead keys are what finds it: without them (base and variants of the
        // original against base and variants of the copy) nothing is shared. The
        // lead is paragraphs 1-2 (7 + 8 tokens) in both, ranked the same:
        // дотация 7.0, бюджет 3.6, then весной / правительство at 3.0.
        let vo = imatch_keys(&orig, &wo, &o, false);
        let vc = imatch_keys(&copy, &wc, &o, false);
        assert!(!vo.iter().any(|k| vc.contains(k)), "{vo:?} {vc:?}");
        let lead_key = crc_set(&["бюджет", "дотация"]);
        assert!(so.keys.contains(&lead_key) && sc.keys.contains(&lead_key));

        let other = doc_of(&[
            "футбол сборная победила чемпионат финал",
            "тренер похвалил вратарь сборная матч",
            "болельщики встретили сборная аэропорт",
        ]);
        let sx = signature(&other, &tfidf(&other, |_| 2.0), &o);
        assert!(!sx.keys.is_empty());
        assert_eq!(so.shared_keys(&sx), 0);
        assert_eq!(sc.shared_keys(&sx), 0);
    }

    #[test]
    fn topwords_keys() {
        let words: Vec<String> = (0..20).map(|i| format!("w{i:02}")).collect();
        let d = doc_of(&[&words.join(" ")]);
        let w: Vec<f64> = (0..20).map(|i| i as f64).collect();
        let o = SignatureOptions {
            scheme: Scheme::Topwords,
            ..paper_options()
        };
        let s = signature(&d, &w, &o);
        assert_eq!(s.scheme, Scheme::Topwords);
        let mut want: Vec<u32> = (8..20)
            .map(|i| crc32fast::hash(words[i].as_bytes()))
            .collect();
        want.sort_unstable();
        assert_eq!(s.keys, want);
        // 6 of 12: a copy whose weights keep 7 of the same top 12 is a candidate.
        let w2: Vec<f64> = (0..20)
            .map(|i| {
                if (8..13).contains(&i) {
                    0.0
                } else {
                    i as f64 + 20.0
                }
            })
            .collect();
        let s2 = signature(&d, &w2, &o);
        assert_eq!(s.shared_keys(&s2), 7);
        assert!(is_candidate(&s, &s2, 6, 0.8));
        assert!(!is_candidate(&s, &s2, 8, 0.8));
    }

    #[test]
    fn longest_keys() {
        let d = doc_of(&["кот абвгд электростанция пароход abcd abc энергетика xyzw"]);
        let o = SignatureOptions {
            scheme: Scheme::Longest,
            longest: 4,
            ..paper_options()
        };
        let s = signature(&d, &[], &o);
        // Length in characters, not bytes: "кот" (6 bytes) is 3 letters, too short.
        // Longest four: электростанция 14, энергетика 10, пароход 7, абвгд 5.
        let mut want: Vec<u32> = ["электростанция", "энергетика", "пароход", "абвгд"]
            .iter()
            .map(|t| crc32fast::hash(t.as_bytes()))
            .collect();
        want.sort_unstable();
        assert_eq!(s.keys, want);
        // Ties by bytes: among the 4-letter "abcd", "xyzw" the first wins.
        let s = signature(
            &d,
            &[],
            &SignatureOptions {
                longest: 5,
                ..o.clone()
            },
        );
        assert!(s.keys.contains(&crc32fast::hash(b"abcd")));
        assert!(!s.keys.contains(&crc32fast::hash(b"xyzw")));
        let s = signature(
            &d,
            &[],
            &SignatureOptions {
                longest: 50,
                ..o.clone()
            },
        );
        assert_eq!(s.keys.len(), 6);
        assert!(!s.keys.contains(&crc32fast::hash("кот".as_bytes())));
    }

    #[test]
    fn never_panics_on_odd_input() {
        let empty = Document::default();
        for scheme in SCHEMES {
            let o = SignatureOptions {
                scheme,
                ..paper_options()
            };
            assert!(signature(&empty, &[], &o).keys.is_empty());
            assert!(signature(&empty, &[1.0, 2.0], &o).keys.is_empty());
        }
        let mut d = doc_of(&["a b c d e f", "g h"]);
        d.paragraphs[0].terms.push(999); // out of range: skipped
        d.terms[0].tf = 0;
        let weird = [
            vec![],
            vec![f64::NAN; 8],
            vec![f64::INFINITY, -1.0, f64::NEG_INFINITY, 1.0],
            vec![1.0; 100],
        ];
        let opts = [
            paper_options(),
            SignatureOptions {
                signature_words: usize::MAX,
                variants: usize::MAX,
                drop_fraction: f64::NAN,
                topwords: usize::MAX,
                longest: usize::MAX,
                min_letters: usize::MAX,
                ..paper_options()
            },
            SignatureOptions {
                signature_words: 0,
                drop_fraction: 1.5,
                topwords: 0,
                longest: 0,
                min_letters: 0,
                ..paper_options()
            },
        ];
        for w in &weird {
            for o in &opts {
                for scheme in SCHEMES {
                    let o = SignatureOptions {
                        scheme,
                        ..o.clone()
                    };
                    let s = signature(&d, w, &o);
                    assert!(s.keys.windows(2).all(|p| p[0] < p[1]));
                    assert_eq!(Signature::decode(&s.encode()).unwrap(), s);
                }
            }
        }
        // NaN weights count as 0: same keys as all-zero weights.
        let o = paper_options();
        assert_eq!(
            signature(&d, &[f64::NAN; 8], &o),
            signature(&d, &[0.0; 8], &o)
        );
        assert_eq!(signature(&d, &[], &o), signature(&d, &[0.0; 8], &o));
    }

    // ---- GIN --------------------------------------------------------------------

    /// What a GIN scan returns for an item with `shared` of the query's keys: the
    /// consistent answer, and `%` on the row where it asks for a recheck.
    fn index_returns(q: &Signature, item: &Signature, m: usize, thr: f64) -> (bool, bool) {
        let shared = q.shared_keys(item);
        let (res, recheck) = gin_consistent(q.scheme, shared, m, thr);
        let by_consistent = res && (!recheck || is_candidate(item, q, m, thr));
        let by_tri = match gin_tri_consistent(q.scheme, shared, 0, m, thr) {
            Tri::False => false,
            Tri::True => true,
            Tri::Maybe => is_candidate(item, q, m, thr),
        };
        (by_consistent, by_tri)
    }

    /// For every query scheme, row scheme and small query/item pair, what the index
    /// returns (after the recheck it asks for) is exactly what `%` says on a
    /// sequential scan. A row of another scheme is never returned (issue #17:
    /// `topwords:{1,2,3}` rows were returned for `imatch:{1}`).
    #[test]
    fn gin_index_with_recheck_equals_is_candidate_for_every_scheme_pair() {
        for qs in SCHEMES {
            for rs in SCHEMES {
                for &thr in &[0.0, 0.5, 0.8, 0.81, 1.0, 1.01, f64::NAN] {
                    for m in 0..5 {
                        for nq in 1..7u32 {
                            for ni in 1..7u32 {
                                for shared in 0..=nq.min(ni) {
                                    let q = sig(&(0..nq).collect::<Vec<_>>(), qs);
                                    let it: Vec<u32> =
                                        (0..shared).chain(100..100 + ni - shared).collect();
                                    let it = sig(&it, rs);
                                    let truth = is_candidate(&it, &q, m, thr);
                                    assert_eq!(truth, is_candidate(&q, &it, m, thr));
                                    let what = format!(
                                        "{qs:?} query, {rs:?} row, thr {thr} m {m} nq {nq} ni {ni} shared {shared}"
                                    );
                                    assert_eq!(
                                        index_returns(&q, &it, m, thr),
                                        (truth, truth),
                                        "{what}"
                                    );
                                    // A match is never taken without the recheck.
                                    let (res, recheck) =
                                        gin_consistent(qs, shared as usize, m, thr);
                                    assert_eq!(res, recheck, "{what}");
                                    if truth {
                                        assert!(res, "{what}");
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        // The reproduction: topwords rows against an imatch query, and back.
        let rows = sig(&[1, 2, 3], Scheme::Topwords);
        let q = sig(&[1], Scheme::Imatch);
        assert_eq!(index_returns(&q, &rows, 2, 0.8), (false, false));
        assert_eq!(gin_consistent(Scheme::Imatch, 1, 2, 0.8), (true, true));
        let q = sig(&[1, 2, 3], Scheme::Topwords);
        assert_eq!(
            index_returns(&q, &sig(&[1, 2, 3], Scheme::Imatch), 2, 0.8),
            (false, false)
        );
        assert_eq!(index_returns(&q, &rows, 2, 0.8), (true, true));
        assert_eq!(
            index_returns(&q, &sig(&[1, 2, 3], Scheme::Longest), 2, 0.8),
            (false, false)
        );
        // The cases spelled out.
        assert_eq!(gin_consistent(Scheme::Imatch, 1, 6, 0.8), (true, true));
        assert_eq!(gin_consistent(Scheme::Imatch, 0, 6, 0.8), (false, false));
        assert_eq!(gin_consistent(Scheme::Topwords, 6, 6, 0.8), (true, true));
        assert_eq!(gin_consistent(Scheme::Topwords, 5, 6, 0.8), (false, false));
        assert_eq!(gin_consistent(Scheme::Topwords, 1, 0, 0.8), (true, true));
        assert_eq!(gin_consistent(Scheme::Longest, 12, 6, 0.8), (true, true));
        assert_eq!(gin_consistent(Scheme::Longest, 3, 6, 0.8), (true, true));
        assert_eq!(gin_consistent(Scheme::Longest, 3, 6, 1.01), (false, false));
        assert_eq!(
            gin_consistent(Scheme::Longest, 3, 6, f64::NAN),
            (false, false)
        );
        assert_eq!(gin_consistent(Scheme::Longest, 0, 6, 0.0), (false, false));
    }

    /// Resolving MAYBE entries either way never contradicts the ternary answer, and
    /// the answer is never a bare TRUE.
    #[test]
    fn gin_tri_consistent_bounds_every_resolution() {
        for scheme in SCHEMES {
            for &thr in &[0.0, 0.8, 1.0, 2.0, f64::NAN] {
                for m in 0..4 {
                    for nq in 0..6 {
                        for matched in 0..=nq {
                            for maybe in 0..=nq - matched {
                                let t = gin_tri_consistent(scheme, matched, maybe, m, thr);
                                assert_ne!(t, Tri::True);
                                let mut any = false;
                                for extra in 0..=maybe {
                                    let (res, _) = gin_consistent(scheme, matched + extra, m, thr);
                                    any |= res;
                                    if t == Tri::False {
                                        assert!(!res);
                                    }
                                }
                                // MAYBE only where some resolution may match.
                                assert_eq!(t == Tri::Maybe, any);
                            }
                        }
                    }
                }
            }
        }
        assert_eq!(gin_tri_consistent(Scheme::Imatch, 0, 1, 6, 0.8), Tri::Maybe);
        assert_eq!(gin_tri_consistent(Scheme::Imatch, 1, 0, 6, 0.8), Tri::Maybe);
        assert_eq!(gin_tri_consistent(Scheme::Imatch, 0, 0, 6, 0.8), Tri::False);
        assert_eq!(
            gin_tri_consistent(Scheme::Topwords, 4, 1, 6, 0.8),
            Tri::False
        );
        assert_eq!(
            gin_tri_consistent(Scheme::Topwords, 5, 1, 6, 0.8),
            Tri::Maybe
        );
        assert_eq!(
            gin_tri_consistent(Scheme::Longest, 0, 2, 6, 0.8),
            Tri::Maybe
        );
        assert_eq!(
            gin_tri_consistent(Scheme::Longest, 12, 3, 6, 0.8),
            Tri::Maybe
        );
    }

    // ---- truncation recall on synthetic news --------------------------------------

    /// A small deterministic generator of synthetic news stories.
    mod synth {
        use super::*;

        pub struct Rng(pub u64);
        impl Rng {
            fn next(&mut self) -> u64 {
                self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
                mix64(self.0)
            }
            fn unit(&mut self) -> f64 {
                (self.next() >> 11) as f64 / (1u64 << 53) as f64
            }
            pub fn range(&mut self, lo: usize, hi: usize) -> usize {
                lo + (self.next() % (hi - lo) as u64) as usize
            }
        }

        pub const V: usize = 30_000;

        /// Background words: Zipf over term ranks.
        fn zipf(r: &mut Rng) -> usize {
            let u = r.unit();
            let x = 10.0 * ((u * (1.0 + V as f64 / 10.0).ln()).exp() - 1.0);
            (x as usize).min(V - 1)
        }

        pub fn idf(rank: usize) -> f64 {
            ((rank as f64 + 10.0) / 10.0).ln() + 0.3
        }

        /// Paragraphs of term ranks. Stories of one theme share theme words:
        /// related but different news, the false candidates.
        pub fn story(r: &mut Rng, themes: &[Vec<usize>]) -> Vec<Vec<usize>> {
            let th = &themes[r.range(0, themes.len())];
            let mut topic: Vec<usize> = (0..3).map(|_| th[r.range(0, th.len())]).collect();
            topic.extend((0..3).map(|_| r.range(100, V)));
            let np = r.range(5, 11);
            (0..np)
                .map(|p| {
                    let mut sub: Vec<usize> = (0..2).map(|_| r.range(100, V)).collect();
                    sub.push(th[r.range(0, th.len())]);
                    let pt = if p == 0 { 0.22 } else { 0.10 };
                    (0..r.range(25, 60))
                        .map(|_| {
                            let u = r.unit();
                            if u < pt {
                                topic[r.range(0, topic.len())]
                            } else if u < pt + 0.12 {
                                sub[r.range(0, sub.len())]
                            } else if u < pt + 0.17 {
                                th[r.range(0, th.len())]
                            } else {
                                zipf(r)
                            }
                        })
                        .collect()
                })
                .collect()
        }

        pub fn themes(r: &mut Rng) -> Vec<Vec<usize>> {
            (0..40)
                .map(|_| (0..8).map(|_| r.range(30, 3000)).collect())
                .collect()
        }

        /// The document of some paragraphs (tf recomputed from them), and the rank
        /// of each of its terms.
        pub fn build(paras: &[Vec<usize>]) -> (Document, Vec<usize>) {
            let name = |x: usize| format!("w{x}");
            let mut ranks: Vec<usize> = paras.iter().flatten().copied().collect();
            ranks.sort_unstable_by_key(|&x| name(x));
            ranks.dedup();
            let mut pos = vec![0u32; V];
            for (j, &x) in ranks.iter().enumerate() {
                pos[x] = j as u32;
            }
            let mut tf = vec![0u32; ranks.len()];
            let paragraphs: Vec<Segment> = paras
                .iter()
                .map(|p| {
                    let terms: Vec<u32> = p.iter().map(|&x| pos[x]).collect();
                    for &i in &terms {
                        tf[i as usize] += 1;
                    }
                    Segment { hash: 0, terms }
                })
                .collect();
            let terms = ranks
                .iter()
                .zip(&tf)
                .map(|(&x, &tf)| TermFreq {
                    term: name(x).into(),
                    tf,
                })
                .collect();
            let d = Document {
                terms,
                paragraphs,
                ..Document::default()
            };
            (d, ranks)
        }

        #[derive(Clone, Copy, Debug)]
        pub enum W {
            TfIdf,
            Bm25,
            TfRidf,
        }

        /// Weights like `crate::weights` gives (avgdl 300 for BM25; idf stands in
        /// for RIDF).
        pub fn weigh(d: &Document, ranks: &[usize], s: W) -> Vec<f64> {
            let dl = d.length() as f64;
            let tf_max = d.terms.iter().map(|t| t.tf).max().unwrap_or(1) as f64;
            d.terms
                .iter()
                .zip(ranks)
                .map(|(t, &x)| {
                    let (tf, idf) = (t.tf as f64, idf(x));
                    match s {
                        W::TfIdf => tf * idf,
                        W::Bm25 => idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * dl / 300.0)),
                        W::TfRidf => (0.5 + 0.5 * tf / tf_max) * idf,
                    }
                })
                .collect()
        }

        /// The four kinds of cut copies of a story.
        pub fn cuts(st: &[Vec<usize>]) -> [Vec<Vec<usize>>; 4] {
            [
                st[..st.len().div_ceil(2)].to_vec(),
                st[..1].to_vec(),
                st[..st.len() - 1].to_vec(),
                st.iter().step_by(2).cloned().collect(),
            ]
        }

        /// Share of (story, cut) pairs sharing a key, per cut; share of unrelated
        /// story pairs sharing a key; mean keys per story.
        pub fn measure(
            stories: &[Vec<Vec<usize>>],
            s: W,
            keys: impl Fn(&Document, &[f64]) -> Vec<u32>,
        ) -> ([f64; 4], f64, f64) {
            let shares = |a: &[u32], b: &[u32]| a.iter().any(|x| b.contains(x));
            let mut hit = [0usize; 4];
            let mut all = Vec::new();
            for st in stories {
                let (d, rk) = build(st);
                let kd = keys(&d, &weigh(&d, &rk, s));
                for (c, cut) in cuts(st).iter().enumerate() {
                    let (t, rt) = build(cut);
                    if shares(&kd, &keys(&t, &weigh(&t, &rt, s))) {
                        hit[c] += 1;
                    }
                }
                let mut kd = kd;
                kd.sort_unstable();
                kd.dedup();
                all.push(kd);
            }
            let (mut fp, mut pairs) = (0usize, 0usize);
            for i in 0..all.len() {
                for j in i + 1..all.len() {
                    pairs += 1;
                    fp += shares(&all[i], &all[j]) as usize;
                }
            }
            let n = stories.len() as f64;
            let nkeys = all.iter().map(Vec::len).sum::<usize>() as f64 / n;
            (
                hit.map(|h| h as f64 / n),
                fp as f64 / pairs.max(1) as f64,
                nkeys,
            )
        }
    }

    fn keys_full(d: &Document, w: &[f64]) -> Vec<u32> {
        signature(d, w, &paper_options()).keys
    }

    fn keys_base(d: &Document, w: &[f64]) -> Vec<u32> {
        let o = SignatureOptions {
            variants: 0,
            ..paper_options()
        };
        imatch_keys(d, w, &o, false)
    }

    /// The full key set finds nearly every cut copy in a small synthetic sample,
    /// where the paper's base key alone finds well under half of the halved ones.
    #[test]
    fn truncation_recall() {
        use synth::*;
        let mut r = Rng(7);
        let th = themes(&mut r);
        let stories: Vec<_> = (0..150).map(|_| story(&mut r, &th)).collect();
        for s in [W::TfIdf, W::Bm25] {
            let (base, _, _) = measure(&stories, s, keys_base);
            let (full, unrelated, nkeys) = measure(&stories, s, keys_full);
            assert!(base[0] < 0.6, "{s:?} base {base:?}");
            assert!(full[0] >= 0.95, "{s:?} full {full:?}");
            assert!(full[1] >= 0.8, "{s:?} full {full:?}");
            assert!(full[2] >= 0.98, "{s:?} full {full:?}");
            assert!(unrelated < 0.005, "{s:?} unrelated {unrelated}");
            assert!(nkeys <= 10.0);
        }
    }

    /// Prints the module docs' table: `cargo test --release truncation_table -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn truncation_table() {
        use synth::*;
        let mut r = Rng(42);
        let th = themes(&mut r);
        let stories: Vec<_> = (0..600).map(|_| story(&mut r, &th)).collect();
        let o = paper_options();
        let keys_var = |d: &Document, w: &[f64]| imatch_keys(d, w, &o, false);
        for s in [W::Bm25, W::TfIdf, W::TfRidf] {
            println!("{s:?}: first half, first paragraph, all but last, odd paragraphs | unrelated | keys");
            for (name, f) in [
                ("base", &keys_base as &dyn Fn(&Document, &[f64]) -> Vec<u32>),
                ("base + variants", &keys_var),
                ("base + variants + lead", &keys_full),
            ] {
                let (hit, unrelated, nkeys) = measure(&stories, s, f);
                println!("  {name:24} {hit:.3?} | {unrelated:.6} | {nkeys:.1}");
            }
        }
    }
}

#[cfg(test)]
mod scheme_tests {
    use super::*;
    use crate::document::TermFreq;

    fn doc_of(words: &[&str]) -> Document {
        let mut names: Vec<&str> = words.to_vec();
        names.sort_unstable();
        names.dedup();
        Document {
            terms: names
                .iter()
                .map(|t| TermFreq {
                    term: (*t).into(),
                    tf: 1,
                })
                .collect(),
            fingerprint: 7,
            ..Document::default()
        }
    }

    fn topwords(pad: usize) -> SignatureOptions {
        SignatureOptions {
            scheme: Scheme::Topwords,
            topwords: 16,
            pad_to: pad,
            ..SignatureOptions::default()
        }
    }

    #[test]
    fn lock_keys_leave_out_the_lightest_words_only() {
        let d = doc_of(&["alpha", "bravo", "charlie", "delta", "echo", "footer"]);
        // footer lightest, then echo, delta; alpha heaviest.
        let w = [6.0, 5.0, 4.0, 3.0, 2.0, 0.5];
        let opts = topwords(4);
        let (sig, locked) = signature_and_lock_keys(&d, &w, &opts, 4);
        let key = |t: &str| crc32fast::hash(t.as_bytes());
        for t in ["footer", "echo", "delta"] {
            assert!(!locked.contains(&key(t)), "{t}");
        }
        for t in ["alpha", "bravo", "charlie"] {
            assert!(locked.contains(&key(t)), "{t}");
        }
        // Every other key (the exact-copy keys) is locked.
        assert_eq!(locked.len(), sig.keys.len() - 3);
        assert!(locked.iter().all(|k| sig.keys.contains(k)));
        // min_shared 1, and the other schemes: every key.
        assert_eq!(signature_and_lock_keys(&d, &w, &opts, 1).1, sig.keys);
        let im = SignatureOptions {
            scheme: Scheme::Imatch,
            ..SignatureOptions::default()
        };
        let (sim, locked_im) = signature_and_lock_keys(&d, &w, &im, 4);
        assert_eq!(locked_im, sim.keys);
        assert_eq!(signature(&d, &w, &opts), sig);
    }

    #[test]
    fn candidates_share_a_locked_key() {
        // Two texts weighed alike that share exactly min_shared word keys, and
        // whose other words are lighter or heavier: a shared key stays locked in both.
        let a = doc_of(&["s1", "s2", "s3", "s4", "a1", "a2", "a3"]);
        let b = doc_of(&["s1", "s2", "s3", "s4", "b1", "b2", "b3"]);
        let wa: Vec<f64> = a
            .terms
            .iter()
            .map(|t| if t.term.starts_with('s') { 1.0 } else { 0.1 })
            .collect();
        let wb: Vec<f64> = b
            .terms
            .iter()
            .map(|t| if t.term.starts_with('s') { 1.0 } else { 9.0 })
            .collect();
        let mut opts = topwords(0);
        opts.topwords = 16;
        let (la, lb) = (
            signature_and_lock_keys(&a, &wa, &opts, 4).1,
            signature_and_lock_keys(&b, &wb, &opts, 4).1,
        );
        assert!(la.iter().any(|k| lb.contains(k)));
    }

    #[test]
    fn two_schemes_share_nothing() {
        let a = Signature {
            scheme: Scheme::Imatch,
            keys: vec![1, 2],
        };
        let b = Signature {
            scheme: Scheme::Topwords,
            keys: vec![1, 2],
        };
        assert_eq!(a.shared_keys(&b), 0);
        assert_eq!(a.similarity(&b), 0.0);
        assert!(!is_candidate(&a, &b, 1, 0.0));
        assert_eq!(a.shared_keys(&a), 2);
        assert_eq!(a.similarity(&a), 1.0);
    }
}
