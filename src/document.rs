//! The document model: what pg_dedup keeps of one text.
//!
//! Pure Rust, no pgrx. `Document` is built by [`crate::text::analyze`], stored in
//! PostgreSQL as the `dedup.document` varlena (binary form from [`Document::encode`]),
//! and shown to people as JSON (text form from [`Document::to_text`]).
//!
//! Invariants (checked by `decode`/`from_text`, relied on everywhere else):
//! - `terms` and `title_terms` are sorted by `term` (byte order) and unique; every `tf >= 1`.
//! - every term is 1 to [`MAX_TERM_BYTES`] bytes long (the analyser drops longer words).
//! - every index in a `Segment::terms` is `< terms.len()`.
//! - `numbers` are normalised decimal strings (see `text::numbers`), in text order.
//! - `trigrams`, when present, hold at most [`crate::trigrams::MAX_WORDS`] words,
//!   each of 1 to [`crate::trigrams::MAX_WORD_KEYS`] sorted, distinct keys.
//!
//! # What decoding may cost
//!
//! The binary form is input too (binary COPY, receive functions), so [`Document::decode`]
//! and [`Document::skim`] never allocate more than the bytes they are given could
//! hold: every count is checked against the bytes left at the smallest size one item
//! can take, and a front-coded term can never grow past [`MAX_TERM_BYTES`]. The
//! decoded document's [`Document::heap_bytes`] is at most
//! [`MAX_DECODE_EXPANSION`] times the input length (see there), and a skim holds at
//! most 16 bytes of keys per input byte (a term entry of at least 3 bytes gives at
//! most three keys and a flag, a sentence's term index of at least one byte at most
//! two bigram keys). Every rejection is
//! [`DedupError::InvalidBinary`] (22P03).

/// The longest term a document may hold, in bytes of UTF-8 (64 Cyrillic or 128
/// Latin letters: longer than any natural word, and stems are shorter still).
///
/// The analyser drops a word whose stem is longer (as a stop word is dropped: it
/// counts in `words` but gives no term), the text form rejects a longer term
/// (22P02) and the binary form rejects one (22P03). With front coding, one entry of
/// at least 4 bytes may repeat up to this many bytes of the previous term, so this
/// bound is what keeps a decoded document linear in the size of its bytes (without
/// it, terms sharing ever longer prefixes decode into quadratically many bytes).
pub const MAX_TERM_BYTES: usize = 128;
/// The largest count of one term a document holds: `dedup.terms` returns counts
/// as `integer`. No analysed text comes near it; the text form refuses a count
/// above it, and the binary form reads one (a document stored before the limit)
/// as this.
pub const MAX_TF: u32 = i32::MAX as u32;

/// [`Document::decode`] returns a document whose [`Document::heap_bytes`] is at
/// most this many times the length of the bytes decoded.
///
/// Each kind of item has a smallest encoding, and what it can decode to: a term
/// entry takes at least 4 bytes (prefix length, suffix length, a suffix byte, tf)
/// for at most `size_of::<TermFreq>() + MAX_TERM_BYTES` = 160 bytes (40 per input
/// byte); a number at least 2 bytes for `size_of::<String>() + 1` (12.5 per byte);
/// a segment at least 9 bytes for 32, and each of its term indices at least 1 byte
/// for 4; the source at most 1 per byte; a trigram key at least 1 byte for 2 (and
/// a word's count 1 byte for 1). Vectors are reserved at the smallest item
/// size, so their capacity stays within the same bound.
pub const MAX_DECODE_EXPANSION: usize = 40;

/// A term's text. Stems are short: up to 24 bytes (12 Cyrillic letters) live
/// inline, so decoding a document allocates nothing per term.
pub type Term = compact_str::CompactString;

/// One stemmed term with its frequency.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TermFreq {
    pub term: Term,
    pub tf: u32,
}

/// A sentence or a paragraph: a hash of its normalised stem sequence, plus the
/// indices (into `Document::terms`) of every kept token it holds, repeats included,
/// so its weight (the sum of its word weights) can be recomputed when collection
/// statistics change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    pub hash: u64,
    pub terms: Vec<u32>,
}

/// The version of what `crate::text` makes of a text: its words, stems, stop words,
/// numbers and segments. Bump it whenever one text would analyse differently, so
/// that documents stored by an older analyser are told apart from new ones
/// (`Document::analyzer`) rather than silently compared term by term. Version 1 is
/// 0.1.0's analyser, which documents without a recorded version come from; version
/// 2 (0.2.0) folds invisible characters, compatibility letters and combining
/// marks (`text::fold`) and writes a word that mixes Cyrillic and Latin look-alikes
/// in one script (`text::lookalike`).
pub const ANALYZER_VERSION: u16 = 2;

#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// Body terms, sorted, unique.
    pub terms: Vec<TermFreq>,
    /// Title terms, sorted, unique.
    pub title_terms: Vec<TermFreq>,
    /// Numbers in text order, normalised ("3,5" -> "3.5", "1 000 000" -> "1000000").
    pub numbers: Vec<String>,
    pub sentences: Vec<Segment>,
    pub paragraphs: Vec<Segment>,
    pub images: u32,
    pub links: u32,
    /// Microseconds since 2000-01-01 00:00:00 UTC (PostgreSQL's timestamptz epoch).
    pub published_at: Option<i64>,
    pub source: Option<String>,
    /// Word tokens in the body before stop-word and length filtering.
    pub words: u32,
    /// 128-bit hash of the normalised word sequence (the exact-duplicate key).
    pub fingerprint: u128,
    /// The analyser version that made it ([`ANALYZER_VERSION`]).
    pub analyzer: u16,
    /// The character-trigram keys of the body's first distinct words
    /// ([`crate::trigrams`]). None for a document stored before they were recorded
    /// (or read from a text form without them): its trigram features are unknown.
    pub trigrams: Option<crate::trigrams::Trigrams>,
}

impl Default for Document {
    fn default() -> Self {
        Document {
            terms: Vec::new(),
            title_terms: Vec::new(),
            numbers: Vec::new(),
            sentences: Vec::new(),
            paragraphs: Vec::new(),
            images: 0,
            links: 0,
            published_at: None,
            source: None,
            words: 0,
            fingerprint: 0,
            analyzer: ANALYZER_VERSION,
            trigrams: None,
        }
    }
}

impl Document {
    /// Document length for BM25: the number of kept body tokens.
    pub fn length(&self) -> u64 {
        self.terms.iter().map(|t| t.tf as u64).sum()
    }

    /// Approximate heap bytes held by this document (for cache budgets).
    pub fn heap_bytes(&self) -> usize {
        let terms = |t: &[TermFreq]| -> usize {
            t.iter()
                .map(|x| std::mem::size_of::<TermFreq>() + x.term.len())
                .sum()
        };
        let segs = |s: &[Segment]| -> usize {
            s.iter()
                .map(|x| std::mem::size_of::<Segment>() + 4 * x.terms.len())
                .sum()
        };
        terms(&self.terms)
            + terms(&self.title_terms)
            + self
                .numbers
                .iter()
                .map(|n| std::mem::size_of::<String>() + n.len())
                .sum::<usize>()
            + segs(&self.sentences)
            + segs(&self.paragraphs)
            + self.source.as_ref().map_or(0, String::len)
            + self.trigrams.as_ref().map_or(0, |t| t.heap_bytes())
    }
}

// ---------------------------------------------------------------------------
// Binary form (the varlena payload). Hand-laid, because it sits on the insert
// path: every candidate comparison decodes two documents.
//
//   u8   format version (FORMAT_VERSION)
//   16B  xxh3-128 of every byte after these 17 (little-endian)   [version 2 only]
//   u8   flags: bit 0 = published_at present, bit 1 = source present,
//        bit 2 = analyser version present (else version 1), bit 3 = trigrams
//        present (documents from before 0.2.0's trigrams lack them)
//   var  analyser version                 if flag bit 2
//   var  images, links, words
//   16B  fingerprint (little-endian u128)
//   8B   published_at (i64 LE)            if flag bit 0
//   var  len + bytes source (UTF-8)       if flag bit 1
//   terms, title_terms: var count, then per term: var shared-prefix length with
//        the previous term, var suffix length, suffix bytes, var tf
//   numbers: var count, then var len + bytes each
//   sentences, paragraphs: var count, then per segment: 8B hash, var n, n × var index
//   trigrams (if flag bit 3): var word count, then per word: var key count, the
//        first key and each gap to the next (≥ 1), var each: a word's keys
//        sorted, distinct, below 2^16
//
// "var" is an unsigned LEB128 varint. Prefix compression of the sorted terms
// saves about a third of the term bytes on Russian news text.
//
// The hash in version 2 names the content: the backend cache of weighed documents
// finds a stored document by reading these 17 bytes (a slice of the datum), without
// decompressing or decoding the rest. `decode` checks it, so a document that got in
// through input or receive functions cannot carry a wrong one. Version 1 (no hash)
// is still read; its key is the hash of all its bytes.
// ---------------------------------------------------------------------------

use crate::error::{DedupError, Result};

/// First byte of every `dedup.document` this build writes.
pub const FORMAT_VERSION: u8 = 2;

/// The first format, without the content hash; still read.
pub const FORMAT_VERSION_1: u8 = 1;

/// Bytes before the body of a version-2 document: the version and the content hash.
pub const HEADER_LEN: usize = 17;

/// The content hash of a stored document: read from a version-2 header (`buf` may
/// be just its first [`HEADER_LEN`] bytes), None for anything else.
pub fn stored_key(buf: &[u8]) -> Option<u128> {
    if buf.len() < HEADER_LEN || buf[0] != FORMAT_VERSION {
        return None;
    }
    let mut h = [0u8; 16];
    h.copy_from_slice(&buf[1..HEADER_LEN]);
    Some(u128::from_le_bytes(h))
}

/// The analyser version recorded in a stored document's header (1 when it records
/// none, or when the bytes are too short to say).
pub fn analyzer_of(buf: &[u8]) -> u16 {
    let at = match buf.first() {
        Some(&FORMAT_VERSION) => HEADER_LEN,
        _ => 1,
    };
    match buf.get(at) {
        Some(&flags) if flags & FLAG_ANALYZER != 0 => {
            let mut v: u64 = 0;
            for (i, &b) in buf.iter().skip(at + 1).take(3).enumerate() {
                v |= u64::from(b & 0x7f) << (7 * i);
                if b & 0x80 == 0 {
                    return u16::try_from(v).unwrap_or(u16::MAX);
                }
            }
            u16::MAX
        }
        _ => 1,
    }
}

/// The key the document cache uses for stored bytes of any version: the version-2
/// header's hash, or the hash of all bytes.
pub fn content_key(buf: &[u8]) -> u128 {
    stored_key(buf).unwrap_or_else(|| xxhash_rust::xxh3::xxh3_128(buf))
}

const FLAG_TIME: u8 = 1;
const FLAG_SOURCE: u8 = 2;
/// The analyser version follows the flags (a varint); without it, version 1.
const FLAG_ANALYZER: u8 = 4;
/// The trigram keys follow the paragraphs ([`Document::trigrams`]).
const FLAG_TRIGRAMS: u8 = 8;

fn put_var(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_var(out, b.len() as u64);
    out.extend_from_slice(b);
}

fn put_terms(out: &mut Vec<u8>, terms: &[TermFreq]) {
    put_var(out, terms.len() as u64);
    let mut prev: &[u8] = &[];
    for t in terms {
        let cur = t.term.as_bytes();
        let shared = prev.iter().zip(cur).take_while(|(x, y)| x == y).count();
        put_var(out, shared as u64);
        put_bytes(out, &cur[shared..]);
        put_var(out, t.tf as u64);
        prev = cur;
    }
}

fn put_segments(out: &mut Vec<u8>, segs: &[Segment]) {
    put_var(out, segs.len() as u64);
    for s in segs {
        out.extend_from_slice(&s.hash.to_le_bytes());
        put_var(out, s.terms.len() as u64);
        for &i in &s.terms {
            put_var(out, i as u64);
        }
    }
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

fn truncated() -> DedupError {
    DedupError::invalid_binary("document bytes are truncated")
}

/// Smallest encodings, in bytes, of the items counted in the binary form.
const MIN_TERM_ENTRY: usize = 3;
const MIN_NUMBER: usize = 2;
const MIN_SEGMENT: usize = 9;
const MIN_INDEX: usize = 1;

impl<'a> Reader<'a> {
    fn byte(&mut self) -> Result<u8> {
        let b = *self.buf.get(self.pos).ok_or_else(truncated)?;
        self.pos += 1;
        Ok(b)
    }
    fn var(&mut self) -> Result<u64> {
        let mut v: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= ((b & 0x7f) as u64) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(DedupError::invalid_binary("document varint is too long"))
    }
    fn u32v(&mut self) -> Result<u32> {
        u32::try_from(self.var()?)
            .map_err(|_| DedupError::invalid_binary("document count out of range"))
    }
    /// A count of items that each take at least `min` bytes: never more than what
    /// is left could hold, so a vector reserved for them is bounded by the input.
    fn count(&mut self, min: usize) -> Result<usize> {
        let n = self.var()?;
        let left = (self.buf.len() - self.pos) / min.max(1);
        if n > left as u64 {
            return Err(truncated());
        }
        Ok(n as usize)
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).ok_or_else(truncated)?;
        let s = self.buf.get(self.pos..end).ok_or_else(truncated)?;
        self.pos = end;
        Ok(s)
    }
    fn string(&mut self) -> Result<String> {
        let n = self.count(1)?;
        let b = self.take(n)?;
        if b.contains(&0) {
            return Err(DedupError::invalid_binary(
                "document string holds a NUL byte",
            ));
        }
        String::from_utf8(b.to_vec())
            .map_err(|_| DedupError::invalid_binary("document string is not UTF-8"))
    }
    /// A number: a normalised decimal, as the text form requires.
    fn number(&mut self) -> Result<&'a str> {
        let n = self.count(1)?;
        let b = self.take(n)?;
        match std::str::from_utf8(b) {
            Ok(s) if is_number(s) => Ok(s),
            _ => Err(DedupError::invalid_binary(
                "document number is not a decimal number",
            )),
        }
    }
    fn fixed<const N: usize>(&mut self) -> Result<[u8; N]> {
        let s = self.take(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }
    /// The version byte, the content hash (checked), and the fields before the
    /// term lists.
    fn head(&mut self) -> Result<Head> {
        let version = self.byte()?;
        match version {
            FORMAT_VERSION_1 => {}
            FORMAT_VERSION => {
                let h = u128::from_le_bytes(self.fixed::<16>()?);
                if h != xxhash_rust::xxh3::xxh3_128(&self.buf[HEADER_LEN..]) {
                    return Err(DedupError::invalid_binary(
                        "document content hash does not match its bytes",
                    ));
                }
            }
            _ => {
                return Err(DedupError::invalid_binary(format!(
                    "unsupported document format version {version} (this build reads 1 and {FORMAT_VERSION})"
                )))
            }
        }
        let flags = self.byte()?;
        if flags & !(FLAG_TIME | FLAG_SOURCE | FLAG_ANALYZER | FLAG_TRIGRAMS) != 0 {
            return Err(DedupError::invalid_binary(format!(
                "document has unknown flags {flags:#04x}"
            )));
        }
        let analyzer = if flags & FLAG_ANALYZER != 0 {
            match u16::try_from(self.var()?) {
                Ok(v) if v != 1 => v,
                _ => {
                    return Err(DedupError::invalid_binary(
                        "document analyser version out of range",
                    ))
                }
            }
        } else {
            1
        };
        let images = self.u32v()?;
        let links = self.u32v()?;
        let words = self.u32v()?;
        let fingerprint = u128::from_le_bytes(self.fixed::<16>()?);
        let published_at = if flags & FLAG_TIME != 0 {
            Some(i64::from_le_bytes(self.fixed::<8>()?))
        } else {
            None
        };
        let source = if flags & FLAG_SOURCE != 0 {
            Some(self.string()?)
        } else {
            None
        };
        Ok(Head {
            trigrams: flags & FLAG_TRIGRAMS != 0,
            analyzer,
            images,
            links,
            words,
            fingerprint,
            published_at,
            source,
        })
    }
    /// The next entry of a front-coded term list: turns `prev` (the previous term's
    /// bytes) into this term's, and returns its tf. The term is 1 to
    /// [`MAX_TERM_BYTES`] bytes long and its tf is at least 1.
    fn next_term(&mut self, prev: &mut Vec<u8>) -> Result<u32> {
        let shared = self.var()?;
        if shared > prev.len() as u64 {
            return Err(DedupError::invalid_binary(
                "document term prefix out of range",
            ));
        }
        let shared = shared as usize;
        let len = self.var()?;
        if (shared as u64).saturating_add(len) > MAX_TERM_BYTES as u64 {
            return Err(DedupError::invalid_binary(format!(
                "document term is longer than {MAX_TERM_BYTES} bytes"
            )));
        }
        if shared as u64 + len == 0 {
            return Err(DedupError::invalid_binary("document term is empty"));
        }
        let suffix = self.take(len as usize)?;
        if suffix.contains(&0) {
            return Err(DedupError::invalid_binary("document term holds a NUL byte"));
        }
        prev.truncate(shared);
        prev.extend_from_slice(suffix);
        match self.u32v()? {
            0 => Err(DedupError::invalid_binary(
                "document term count must be positive",
            )),
            // Read capped, not refused: a document stored before the limit (0.1.0
            // took any 32-bit count in the text form) must still decode, or its
            // table would not dump.
            tf => Ok(tf.min(MAX_TF)),
        }
    }
    /// A term list as the xxh3-64 hashes of its terms, in order; for the body
    /// (`body`), also whether each tf is > 0, its [`prefix_key`] (unsorted) and
    /// the key of each cardinal numeral among them ([`crate::numerals::key`], in
    /// term order).
    fn term_hashes(&mut self, mut body: Option<&mut BodyKeys>) -> Result<Vec<u64>> {
        let n = self.count(MIN_TERM_ENTRY)?;
        let mut out = Vec::with_capacity(n);
        let mut prev: Vec<u8> = Vec::new();
        for _ in 0..n {
            let tf = self.next_term(&mut prev)?;
            let h = xxhash_rust::xxh3::xxh3_64(&prev);
            out.push(h);
            if let Some(b) = body.as_mut() {
                b.positive.push(tf > 0);
                b.prefixes.push(prefix_key(&prev));
                b.number_words.extend(crate::numerals::key_of_hash(h));
            }
        }
        Ok(out)
    }
    /// Segments as (hash, whether one of its terms has tf > 0). For sentences
    /// (`bigrams`: the body's term hashes and where to put the keys), also the
    /// [`bigram_key`] of every two successive terms of a sentence, and of the
    /// first sentence's apart (both unsorted).
    fn segment_hashes(
        &mut self,
        positive: &[bool],
        mut bigrams: Option<(&[u64], &mut Vec<u64>, &mut Vec<u64>)>,
    ) -> Result<Vec<(u64, bool)>> {
        let n = self.count(MIN_SEGMENT)?;
        let mut out = Vec::with_capacity(n);
        for s in 0..n {
            let hash = u64::from_le_bytes(self.fixed::<8>()?);
            let k = self.count(MIN_INDEX)?;
            let mut weighs = false;
            let mut last: Option<u64> = None;
            for _ in 0..k {
                let i = self.u32v()? as usize;
                match positive.get(i) {
                    Some(&p) => weighs |= p,
                    None => {
                        return Err(DedupError::invalid_binary(
                            "document segment term index out of range",
                        ))
                    }
                }
                if let Some((hashes, all, lead)) = bigrams.as_mut() {
                    let h = hashes.get(i).copied().unwrap_or(0);
                    if let Some(p) = last {
                        all.push(bigram_key(p, h));
                        if s == 0 {
                            lead.push(bigram_key(p, h));
                        }
                    }
                    last = Some(h);
                }
            }
            out.push((hash, weighs));
        }
        Ok(out)
    }
    /// The trigram keys (flag bit 3): at most [`crate::trigrams::MAX_WORDS`]
    /// words, each of 1 to [`crate::trigrams::MAX_WORD_KEYS`] keys, each key
    /// greater than the one before and below 2^16.
    fn trigrams(&mut self) -> Result<crate::trigrams::Trigrams> {
        use crate::trigrams::{Trigrams, MAX_WORDS, MAX_WORD_KEYS};
        let bad = |why: &str| DedupError::invalid_binary(format!("document trigrams: {why}"));
        let words = self.count(2)?;
        if words > MAX_WORDS {
            return Err(bad(&format!("more than {MAX_WORDS} words")));
        }
        let mut out = Trigrams {
            keys: Vec::new(),
            lens: Vec::with_capacity(words),
        };
        for _ in 0..words {
            let n = self.count(1)?;
            if n == 0 || n > MAX_WORD_KEYS {
                return Err(bad(&format!("a word has {n} keys (1 to {MAX_WORD_KEYS})")));
            }
            out.keys.reserve(n);
            let mut next: u64 = 0;
            for i in 0..n {
                let gap = self.var()?;
                if i > 0 && gap == 0 {
                    return Err(bad("a word's keys are not sorted"));
                }
                next = next.saturating_add(gap);
                out.keys
                    .push(u16::try_from(next).map_err(|_| bad("a key is out of range"))?);
            }
            out.lens.push(n as u8);
        }
        Ok(out)
    }
    fn terms(&mut self) -> Result<Vec<TermFreq>> {
        let n = self.count(MIN_TERM_ENTRY)?;
        let mut out: Vec<TermFreq> = Vec::with_capacity(n);
        let mut prev: Vec<u8> = Vec::new();
        for _ in 0..n {
            let tf = self.next_term(&mut prev)?;
            let term = Term::from_utf8(&prev)
                .map_err(|_| DedupError::invalid_binary("document term is not UTF-8"))?;
            if let Some(last) = out.last() {
                if last.term.as_bytes() >= term.as_bytes() {
                    return Err(DedupError::invalid_binary("document terms are not sorted"));
                }
            }
            out.push(TermFreq { term, tf });
        }
        Ok(out)
    }
    fn segments(&mut self, n_terms: usize) -> Result<Vec<Segment>> {
        let n = self.count(MIN_SEGMENT)?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let hash = u64::from_le_bytes(self.fixed::<8>()?);
            let k = self.count(MIN_INDEX)?;
            let mut terms = Vec::with_capacity(k);
            for _ in 0..k {
                let i = self.u32v()?;
                if i as usize >= n_terms {
                    return Err(DedupError::invalid_binary(
                        "document segment term index out of range",
                    ));
                }
                terms.push(i);
            }
            out.push(Segment { hash, terms });
        }
        Ok(out)
    }
}

/// The fields of the binary form before the term lists.
struct Head {
    /// Whether trigram keys follow the paragraphs.
    trigrams: bool,
    analyzer: u16,
    images: u32,
    links: u32,
    words: u32,
    fingerprint: u128,
    published_at: Option<i64>,
    source: Option<String>,
}

/// What ruling a stored document out as a candidate needs (`features::Unweighed`),
/// read from its binary form without building the [`Document`]: no term strings,
/// no per-segment vectors. Terms and numbers are hashed as `features` hashes them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Skim {
    /// [`Document::fingerprint`].
    pub fingerprint: u128,
    pub images: u32,
    pub links: u32,
    pub published_at: Option<i64>,
    pub source: Option<String>,
    /// xxh3-64 of each body term, in term order.
    pub terms: Vec<u64>,
    pub title_terms: Vec<u64>,
    /// xxh3-64 of each number, in text order.
    pub numbers: Vec<u64>,
    /// [`crate::numerals::digits_key`] of each number, in text order.
    pub digits: Vec<u64>,
    /// Each sentence's hash, and whether it holds a term with tf > 0.
    pub sentences: Vec<(u64, bool)>,
    pub paragraphs: Vec<(u64, bool)>,
    /// [`prefix_key`] of each body term, sorted, unique.
    pub prefixes: Vec<u64>,
    /// [`crate::numerals::key`] of each body term that is a cardinal numeral, in
    /// term order.
    pub number_words: Vec<u64>,
    /// [`bigram_key`]s of the sentences' successive terms, sorted, unique.
    pub bigrams: Vec<u64>,
    /// The same of the first sentence only.
    pub lead_bigrams: Vec<u64>,
    /// [`Document::trigrams`].
    pub trigrams: Option<crate::trigrams::Trigrams>,
}

/// What [`Reader::term_hashes`] collects of the body terms besides their hashes.
#[derive(Default)]
struct BodyKeys {
    positive: Vec<bool>,
    prefixes: Vec<u64>,
    number_words: Vec<u64>,
}

/// Two successive stems of a sentence (by their xxh3-64 hashes) as one key: the
/// word order the bags of stems do not see. Order matters: `(a, b)` and `(b, a)`
/// have different keys.
pub fn bigram_key(first: u64, second: u64) -> u64 {
    (first.rotate_left(29) ^ second.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .wrapping_mul(0xBF58_476D_1CE4_E5B9)
}

/// The [`bigram_key`]s of every sentence's successive terms (`terms`: the body
/// terms' hashes; a stray index counts as hash 0) and of the first sentence's,
/// each sorted, unique.
pub fn sentence_bigrams(terms: &[u64], sentences: &[Segment]) -> (Vec<u64>, Vec<u64>) {
    let mut all = Vec::new();
    let mut lead = Vec::new();
    for (s, seg) in sentences.iter().enumerate() {
        for w in seg.terms.windows(2) {
            let h = |i: u32| terms.get(i as usize).copied().unwrap_or(0);
            let k = bigram_key(h(w[0]), h(w[1]));
            all.push(k);
            if s == 0 {
                lead.push(k);
            }
        }
    }
    (sorted_unique(all), sorted_unique(lead))
}

fn sorted_unique(mut v: Vec<u64>) -> Vec<u64> {
    v.sort_unstable();
    v.dedup();
    v
}

/// A normalised decimal: optional '-', digits, optional '.' and digits.
pub fn is_number(s: &str) -> bool {
    let s = s.strip_prefix('-').unwrap_or(s);
    let (int, frac) = match s.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (s, None),
    };
    !int.is_empty()
        && int.bytes().all(|c| c.is_ascii_digit())
        && frac.is_none_or(|f| !f.is_empty() && f.bytes().all(|c| c.is_ascii_digit()))
}

/// How many characters of a term [`prefix_key`] keeps.
pub const PREFIX_CHARS: usize = 4;

/// A term's first [`PREFIX_CHARS`] characters, hashed: terms that share them
/// ("восьмиэтажк" and "восьмиэтажн", which the stemmer split; a name in two
/// inflections; a typo after the fourth letter) have one key. Reads UTF-8 lead
/// bytes only, so a byte string that is not UTF-8 still gets a key, the same one
/// wherever it is read.
pub fn prefix_key(term: &[u8]) -> u64 {
    let mut chars = 0;
    let mut end = term.len();
    for (i, &b) in term.iter().enumerate() {
        if b & 0xC0 != 0x80 {
            if chars == PREFIX_CHARS {
                end = i;
                break;
            }
            chars += 1;
        }
    }
    xxhash_rust::xxh3::xxh3_64_with_seed(&term[..end], 2)
}

/// The [`prefix_key`]s of some terms, sorted, unique.
pub fn prefix_keys<'a>(terms: impl Iterator<Item = &'a [u8]>) -> Vec<u64> {
    let mut v: Vec<u64> = terms.map(prefix_key).collect();
    v.sort_unstable();
    v.dedup();
    v
}

impl Skim {
    /// What [`Document::skim`] reads from `d`'s encoding.
    pub fn of(d: &Document) -> Skim {
        let h = |t: &[TermFreq]| -> Vec<u64> {
            t.iter()
                .map(|t| xxhash_rust::xxh3::xxh3_64(t.term.as_bytes()))
                .collect()
        };
        let seg = |s: &[Segment]| -> Vec<(u64, bool)> {
            s.iter()
                .map(|s| {
                    let weighs = s
                        .terms
                        .iter()
                        .any(|&k| d.terms.get(k as usize).is_some_and(|t| t.tf > 0));
                    (s.hash, weighs)
                })
                .collect()
        };
        let terms = h(&d.terms);
        let (bigrams, lead_bigrams) = sentence_bigrams(&terms, &d.sentences);
        Skim {
            fingerprint: d.fingerprint,
            images: d.images,
            links: d.links,
            published_at: d.published_at,
            source: d.source.clone(),
            number_words: terms
                .iter()
                .filter_map(|&h| crate::numerals::key_of_hash(h))
                .collect(),
            bigrams,
            lead_bigrams,
            terms,
            title_terms: h(&d.title_terms),
            numbers: d
                .numbers
                .iter()
                .map(|n| xxhash_rust::xxh3::xxh3_64(n.as_bytes()))
                .collect(),
            digits: d
                .numbers
                .iter()
                .map(|n| crate::numerals::digits_key(n))
                .collect(),
            sentences: seg(&d.sentences),
            paragraphs: seg(&d.paragraphs),
            prefixes: prefix_keys(d.terms.iter().map(|t| t.term.as_bytes())),
            trigrams: d.trigrams.clone(),
        }
    }
}

impl Document {
    /// Reads the [`Skim`] of a binary form: the checks of [`Document::decode`] on
    /// the header (version, content hash) and on every length and index, but not
    /// the UTF-8 and order of the terms.
    pub fn skim(buf: &[u8]) -> Result<Skim> {
        let mut r = Reader { buf, pos: 0 };
        let head = r.head()?;
        let mut body = BodyKeys::default();
        let terms = r.term_hashes(Some(&mut body))?;
        let BodyKeys {
            positive,
            prefixes,
            number_words,
        } = body;
        let prefixes = sorted_unique(prefixes);
        let title_terms = r.term_hashes(None)?;
        let n = r.count(MIN_NUMBER)?;
        let mut numbers = Vec::with_capacity(n);
        let mut digits = Vec::with_capacity(n);
        for _ in 0..n {
            let number = r.number()?;
            numbers.push(xxhash_rust::xxh3::xxh3_64(number.as_bytes()));
            digits.push(crate::numerals::digits_key(number));
        }
        let (mut bigrams, mut lead_bigrams) = (Vec::new(), Vec::new());
        let sentences =
            r.segment_hashes(&positive, Some((&terms, &mut bigrams, &mut lead_bigrams)))?;
        let paragraphs = r.segment_hashes(&positive, None)?;
        let trigrams = if head.trigrams {
            Some(r.trigrams()?)
        } else {
            None
        };
        if r.pos != buf.len() {
            return Err(DedupError::invalid_binary("document has trailing bytes"));
        }
        Ok(Skim {
            fingerprint: head.fingerprint,
            number_words,
            bigrams: sorted_unique(bigrams),
            lead_bigrams: sorted_unique(lead_bigrams),
            images: head.images,
            links: head.links,
            published_at: head.published_at,
            source: head.source,
            terms,
            title_terms,
            numbers,
            digits,
            sentences,
            paragraphs,
            prefixes,
            trigrams,
        })
    }

    /// The binary form stored in the varlena.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + self.terms.len() * 8);
        out.push(FORMAT_VERSION);
        out.extend_from_slice(&[0u8; 16]);
        let mut flags = 0;
        if self.published_at.is_some() {
            flags |= FLAG_TIME;
        }
        if self.source.is_some() {
            flags |= FLAG_SOURCE;
        }
        if self.analyzer != 1 {
            flags |= FLAG_ANALYZER;
        }
        if self.trigrams.is_some() {
            flags |= FLAG_TRIGRAMS;
        }
        out.push(flags);
        if self.analyzer != 1 {
            put_var(&mut out, self.analyzer as u64);
        }
        put_var(&mut out, self.images as u64);
        put_var(&mut out, self.links as u64);
        put_var(&mut out, self.words as u64);
        out.extend_from_slice(&self.fingerprint.to_le_bytes());
        if let Some(t) = self.published_at {
            out.extend_from_slice(&t.to_le_bytes());
        }
        if let Some(s) = &self.source {
            put_bytes(&mut out, s.as_bytes());
        }
        put_terms(&mut out, &self.terms);
        put_terms(&mut out, &self.title_terms);
        put_var(&mut out, self.numbers.len() as u64);
        for n in &self.numbers {
            put_bytes(&mut out, n.as_bytes());
        }
        put_segments(&mut out, &self.sentences);
        put_segments(&mut out, &self.paragraphs);
        if let Some(t) = &self.trigrams {
            put_var(&mut out, t.lens.len() as u64);
            for w in t.words() {
                put_var(&mut out, w.len() as u64);
                let mut prev = 0u16;
                for &k in w {
                    put_var(&mut out, u64::from(k.wrapping_sub(prev)));
                    prev = k;
                }
            }
        }
        let h = xxhash_rust::xxh3::xxh3_128(&out[HEADER_LEN..]);
        out[1..HEADER_LEN].copy_from_slice(&h.to_le_bytes());
        out
    }

    /// Parses the binary form, checking every invariant. Never panics; allocates at
    /// most [`MAX_DECODE_EXPANSION`] times `buf.len()`; every failure is
    /// [`DedupError::InvalidBinary`].
    pub fn decode(buf: &[u8]) -> Result<Document> {
        let mut r = Reader { buf, pos: 0 };
        let Head {
            trigrams: has_trigrams,
            analyzer,
            images,
            links,
            words,
            fingerprint,
            published_at,
            source,
        } = r.head()?;
        let terms = r.terms()?;
        let title_terms = r.terms()?;
        let n = r.count(MIN_NUMBER)?;
        let mut numbers = Vec::with_capacity(n);
        for _ in 0..n {
            numbers.push(r.number()?.to_owned());
        }
        let sentences = r.segments(terms.len())?;
        let paragraphs = r.segments(terms.len())?;
        let trigrams = if has_trigrams {
            Some(r.trigrams()?)
        } else {
            None
        };
        if r.pos != buf.len() {
            return Err(DedupError::invalid_binary("document has trailing bytes"));
        }
        Ok(Document {
            terms,
            title_terms,
            numbers,
            sentences,
            paragraphs,
            images,
            links,
            published_at,
            source,
            words,
            fingerprint,
            analyzer,
            trigrams,
        })
    }
}

#[cfg(test)]
pub(crate) mod codec_tests;
