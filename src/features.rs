//! The pair feature vector ρ(a, b) of Andreev et al. §5, the SVM's input.
//!
//! Pure Rust, no pgrx. [`compare`] takes two documents with their term weights
//! (computed by [`crate::weights`] against the collection) and returns
//! [`N_FEATURES`] numbers in the order of [`FEATURE_NAMES`]:
//!
//! | # | name | value |
//! |---|---|---|
//! | 0 | `text` | `1 − cos(body weights of a, of b)` (§5.1, formula 6) |
//! | 1 | `title` | `1 − cos(title weights of a, of b)` (§5.2) |
//! | 2 | `numbers_inclusion` | `1 − |Na ∩ Nb| / |Na|` over the sets of numbers (§5.4, formula 9) |
//! | 3 | `numbers_sequence` | Damerau–Levenshtein distance of the number sequences / the longer length (§5.4) |
//! | 4 | `sentences_inclusion` | `1 −` weighted inclusion of a's sentences in b's (§5.3, formula 8) |
//! | 5 | `paragraphs_inclusion` | the same over paragraphs |
//! | 6 | `images` | `a.images − b.images` (§5.5) |
//! | 7 | `links` | `a.links − b.links` (§5.5) |
//! | 8 | `time` | `a.published_at − b.published_at` in seconds (§5.6), [`UNKNOWN`] when either is unknown |
//! | 9 | `authority_a` | authority of a's source (§5.7) |
//! | 10 | `authority_b` | authority of b's source |
//! | 11 | `missing` | share of a's squared body weight on terms b lacks ([`crate::coverage`]) |
//! | 12 | `unique_peak` | a's heaviest term that b lacks, against a's heaviest term |
//! | 13 | `lead_missing` | `missing` over the terms of a's first sentence |
//! | 14 | `numbers_conflict` | `1 − |Na ∩ Nb| / min(|Na|, |Nb|)` over the numbers' significant digits ("3 000" and "3 тыс." agree) when both have numbers, else [`UNKNOWN`] |
//! | 15 | `length_ratio` | `ln((1 + distinct terms of a) / (1 + distinct terms of b))` |
//! | 16 | `time_gap` | `ln(1 + |a.published_at − b.published_at| / 60 s)`, [`UNKNOWN`] when either is unknown |
//! | 17 | `prefixes` | `1 −` Jaccard of the sets of the body terms' first 4 characters ([`crate::document::prefix_key`]) |
//! | 18 | `own_weight` | `ln(1 + Σ |w|)` over a's body terms b lacks: how much a says that b does not |
//! | 19 | `unique_top` | a's three heaviest terms that b lacks, against a's three heaviest terms (summed weights) |
//! | 20 | `missing_prefixes` | `missing`, a term counting as shared when b has one of the same first 4 characters |
//! | 21 | `lead_shingles` | share of a's lead-sentence stem bigrams ([`crate::document::bigram_key`]) that no sentence of b has |
//! | 22 | `numbers_own` | `ln(1 + n)`, n the distinct numbers of a (digits, and numbers written as words: [`crate::numerals`]) b lacks |
//! | 23 | `numbers_clash` | `numbers_conflict` over the same numbers, words included; [`UNKNOWN`] when a side has none |
//! | 24 | `trigrams` | `1 −` Jaccard of the character-trigram sets of the first 32 distinct words ([`crate::trigrams`]: pg_trgm's similarity); [`UNKNOWN`] when a side has no recorded trigrams or neither has any |
//! | 25 | `word_order` | `1 −` the longest common subsequence of the same words (surface words, stop words included) over the longer word count; [`UNKNOWN`] as for `trigrams` |
//!
//! ρ is asymmetric on purpose (inclusions, differences, the authority order), so that
//! the classifier run on ρ(a,b) and ρ(b,a) can tell which of the two is the copy
//! (§6.1). Features 11–23 were added to the paper's: they see what one side has that
//! the other lacks (see [`crate::coverage`]); 18–23 (0.2.0, issue 21) in absolute
//! amounts, word order and numbers written as words; 24–25 (0.2.0) compare the
//! surface words (their character trigrams, their order), which stop words, short
//! words and inflections the stemmer splits still share. Features 0–5 are distances in `[0, 1]` that are 0 for identical documents.
//! Every value is finite: NaN becomes 0 and magnitudes are clamped to
//! [`FEATURE_LIMIT`].
//!
//! Cost: one merge-join over each pair of sorted term lists, a sort of b's sentence
//! and paragraph hashes, and a DL over the numbers; no hash tables. Two synthetic
//! 500-word documents (330 and 350 distinct terms, 25 sentences, 5 paragraphs, 12
//! numbers each) compare in 3.9 µs in release (test `bench_compare`: text 2.4 µs,
//! sentences 0.44, paragraphs 0.40, numbers 0.6). Measured alternatives that lost:
//! a branch-free merge step (3.3 µs for text) and precomputed 8-byte term prefixes
//! (5.2 µs).
//!
//! With features 18–23 (same test, this machine): [`compare_prepared`], both
//! directions, 3.9 µs (6.9 µs with 18 features, when the coverage features looked
//! each term up by binary search instead of walking both sorted lists);
//! [`Prepared::new`] 21 µs a document (10.9 µs with 18 features: the stem bigrams,
//! 3.6 µs, and the prefix weights, 2 µs, are the new work). Looking numerals up by
//! their bytes cost 22 µs more there; by the term's hash ([`crate::numerals::key_of_hash`]) 3.

use crate::coverage;
use crate::document::{Document, Segment, Skim, TermFreq};

/// A feature value that does not apply to the pair (`time` and `time_gap` when a
/// side has no publication time): NaN. Models count it as the feature's training
/// mean (see `svm::Model::decision`), so it moves no decision either way.
pub const UNKNOWN: f64 = f64::NAN;

/// Names of the features, in the order [`compare`] returns them.
pub const FEATURE_NAMES: [&str; N_FEATURES] = [
    "text",
    "title",
    "numbers_inclusion",
    "numbers_sequence",
    "sentences_inclusion",
    "paragraphs_inclusion",
    "images",
    "links",
    "time",
    "authority_a",
    "authority_b",
    "missing",
    "unique_peak",
    "lead_missing",
    "numbers_conflict",
    "length_ratio",
    "time_gap",
    "prefixes",
    "own_weight",
    "unique_top",
    "missing_prefixes",
    "lead_shingles",
    "numbers_own",
    "numbers_clash",
    "trigrams",
    "word_order",
];

/// Length of ρ.
pub const N_FEATURES: usize = 26;

/// Largest magnitude a feature can take; anything beyond is clamped. Real values stay
/// far below it (a time difference spanning all of PostgreSQL's timestamptz range is
/// under 1e13 s), and squares of it are still finite in an RBF kernel.
pub const FEATURE_LIMIT: f64 = 1e15;

/// Sequences longer than this are cut to their first `DL_MAX_LEN` elements before the
/// Damerau–Levenshtein distance, so one pair costs at most 10⁶ cell updates (about a
/// millisecond) however many numbers a text holds.
pub const DL_MAX_LEN: usize = 1000;

const TEXT: usize = 0;
const TITLE: usize = 1;
const NUMBERS_INCLUSION: usize = 2;
const NUMBERS_SEQUENCE: usize = 3;
const SENTENCES_INCLUSION: usize = 4;
const PARAGRAPHS_INCLUSION: usize = 5;
const IMAGES: usize = 6;
const LINKS: usize = 7;
const TIME: usize = 8;
const AUTHORITY_A: usize = 9;
const AUTHORITY_B: usize = 10;
const MISSING: usize = 11;
const UNIQUE_PEAK: usize = 12;
const LEAD_MISSING: usize = 13;
const NUMBERS_CONFLICT: usize = 14;
const LENGTH_RATIO: usize = 15;
const TIME_GAP: usize = 16;
const PREFIXES: usize = 17;
const OWN_WEIGHT: usize = 18;
const UNIQUE_TOP: usize = 19;
const MISSING_PREFIXES: usize = 20;
const LEAD_SHINGLES: usize = 21;
const NUMBERS_OWN: usize = 22;
const NUMBERS_CLASH: usize = 23;
const TRIGRAMS: usize = 24;
const WORD_ORDER: usize = 25;

/// Everything needed to compare a pair, with weights already computed by the caller
/// ([`crate::weights`]) against the collection.
///
/// A weight slice shorter than its term list counts the missing weights as 0, and a
/// segment index past the weights counts as weight 0: nothing here panics on
/// inconsistent input.
#[derive(Clone, Copy, Debug)]
pub struct Side<'a> {
    pub doc: &'a Document,
    /// Aligned with `doc.terms`.
    pub weights: &'a [f64],
    /// Aligned with `doc.title_terms`.
    pub title_weights: &'a [f64],
    /// Authority of the document's source, normally in `[0, 1]`.
    pub authority: f64,
}

/// ρ(a, b), in the order of [`FEATURE_NAMES`]. See the module documentation for the
/// formulas; the edge cases are:
///
/// - `text`, `title`: a side whose weight vector is zero (no terms, or all weights 0)
///   is "empty". Both empty → 0, exactly one empty → 1. For titles this means two
///   documents without titles have equal (empty) titles, and a title on one side only
///   is the largest difference. Treating a missing title like any other title keeps
///   the feature a distance (`d(x, x) = 0`) with no special value the SVM would have
///   to learn; a feed that never has titles just contributes a constant 0 that the
///   bias absorbs.
/// - `numbers_inclusion`: 0 when a has no numbers (nothing of a's is missing in b).
/// - `numbers_sequence`: 0 when both have no numbers; otherwise in `[0, 1]`, on the
///   sequences cut to [`DL_MAX_LEN`].
/// - `sentences_inclusion`, `paragraphs_inclusion`: 0 when a has no such segments or
///   their total weight is 0.
/// - `time`: 0 when either publication time is unknown.
pub fn compare(a: &Side, b: &Side) -> [f64; N_FEATURES] {
    let (da, db) = (a.doc, b.doc);
    let mut r = [0.0; N_FEATURES];
    r[TEXT] = cosine_distance(&da.terms, a.weights, &db.terms, b.weights);
    r[TITLE] = cosine_distance(
        &da.title_terms,
        a.title_weights,
        &db.title_terms,
        b.title_weights,
    );
    (r[NUMBERS_INCLUSION], r[NUMBERS_SEQUENCE]) = numbers_features(&da.numbers, &db.numbers);
    r[SENTENCES_INCLUSION] = segment_inclusion(&da.sentences, a.weights, &db.sentences);
    r[PARAGRAPHS_INCLUSION] = segment_inclusion(&da.paragraphs, a.weights, &db.paragraphs);
    r[IMAGES] = da.images as f64 - db.images as f64;
    r[LINKS] = da.links as f64 - db.links as f64;
    r[TIME] = match (da.published_at, db.published_at) {
        (Some(ta), Some(tb)) => (ta as i128 - tb as i128) as f64 / 1e6,
        _ => 0.0, // unknown: see `Absent`
    };
    r[TIME_GAP] = match (da.published_at, db.published_at) {
        (Some(ta), Some(tb)) => ((ta as i128 - tb as i128).unsigned_abs() as f64 / 60e6).ln_1p(),
        _ => 0.0, // unknown: see `Absent`
    };
    r[AUTHORITY_A] = a.authority;
    r[AUTHORITY_B] = b.authority;
    let mut ba = [0.0; N_FEATURES];
    let (pa, pb) = (Prepared::new(a), Prepared::new(b));
    coverage_both(&pa, &pb, &mut r, &mut ba);
    for x in r.iter_mut() {
        *x = sanitize(*x);
    }
    absent(&pa, &pb).apply(&mut r);
    r
}

/// `(compare(a, b), compare(b, a))`, computing what the two share once: the cosines
/// and the number-sequence distance are symmetric, the number keys and the sorted
/// segment hashes of each side are built once. Equal, bit for bit, to two `compare`
/// calls (see `compare_both_equals_two_compares`); about 40 % cheaper.
pub fn compare_both(a: &Side, b: &Side) -> ([f64; N_FEATURES], [f64; N_FEATURES]) {
    let (da, db) = (a.doc, b.doc);
    let mut ab = [0.0; N_FEATURES];
    let mut ba = [0.0; N_FEATURES];
    let text = cosine_distance(&da.terms, a.weights, &db.terms, b.weights);
    let title = cosine_distance(
        &da.title_terms,
        a.title_weights,
        &db.title_terms,
        b.title_weights,
    );
    (ab[TEXT], ba[TEXT]) = (text, text);
    (ab[TITLE], ba[TITLE]) = (title, title);
    (
        ab[NUMBERS_INCLUSION],
        ba[NUMBERS_INCLUSION],
        ab[NUMBERS_SEQUENCE],
    ) = numbers_features_both(&da.numbers, &db.numbers);
    ba[NUMBERS_SEQUENCE] = ab[NUMBERS_SEQUENCE];
    let (sa, sb) = (sorted_hashes(&da.sentences), sorted_hashes(&db.sentences));
    ab[SENTENCES_INCLUSION] = inclusion_sorted(&da.sentences, a.weights, &sb);
    ba[SENTENCES_INCLUSION] = inclusion_sorted(&db.sentences, b.weights, &sa);
    let (pa, pb) = (sorted_hashes(&da.paragraphs), sorted_hashes(&db.paragraphs));
    ab[PARAGRAPHS_INCLUSION] = inclusion_sorted(&da.paragraphs, a.weights, &pb);
    ba[PARAGRAPHS_INCLUSION] = inclusion_sorted(&db.paragraphs, b.weights, &pa);
    let (pa, pb) = (Prepared::new(a), Prepared::new(b));
    coverage_both(&pa, &pb, &mut ab, &mut ba);
    finish_both(a, b, &mut ab, &mut ba);
    let gone = absent(&pa, &pb);
    gone.apply(&mut ab);
    gone.apply(&mut ba);
    (ab, ba)
}

// ---- prepared sides --------------------------------------------------------------

/// What comparing needs of one side that does not depend on the other side, built
/// once per weighed document and reused for every pair it is in: its terms keyed by
/// a 64-bit hash and sorted by it, its squared norms, its segments' hashes sorted
/// with their weights, and its numbers as hashes.
///
/// Terms and numbers are matched by 64-bit hash (xxh3), like sentences and
/// paragraphs always were: two different words collide with probability about
/// 2⁻⁶⁴ per pair of words. [`compare_prepared`] equals [`compare_both`] up to the
/// order of floating-point sums (checked to 1e-12 in
/// `compare_prepared_matches_compare_both`), and does no string comparison, no
/// sort and no allocation besides the DL rows.
#[derive(Debug, Clone, Default)]
pub struct Prepared {
    terms: Vec<(u64, u32)>,
    title_terms: Vec<(u64, u32)>,
    body_sq: f64,
    title_sq: f64,
    sentences: SegmentSet,
    paragraphs: SegmentSet,
    numbers: Vec<u64>,
    number_set: Vec<u64>,
    /// [`crate::numerals::digits_key`]s, sorted, unique: for `numbers_conflict`.
    digit_set: Vec<u64>,
    /// For the coverage features.
    cov: coverage::Keys,
    n_terms: usize,
    /// [`crate::document::prefix_keys`] of the body terms.
    prefixes: Vec<u64>,
    /// The numbers' digit keys and the numerals' ([`crate::numerals::key`]),
    /// sorted, unique: for `numbers_own` and `numbers_clash`.
    number_keys: Vec<u64>,
    /// [`crate::document::sentence_bigrams`] of the body: all sentences', the
    /// first sentence's.
    bigrams: Vec<u64>,
    lead_bigrams: Vec<u64>,
    /// Whether the side has a title, and numbers (for [`Absent`]).
    has_title: bool,
    has_numbers: bool,
    published_at: Option<i64>,
    /// [`Document::trigrams`], and their set.
    trigrams: Option<crate::trigrams::Trigrams>,
    trigram_set: Vec<u16>,
}

/// Features 11–15 and 17–25 of both directions from prepared sides.
fn coverage_both(
    pa: &Prepared,
    pb: &Prepared,
    ab: &mut [f64; N_FEATURES],
    ba: &mut [f64; N_FEATURES],
) {
    let (cab, cba) = coverage::both(&pa.cov, &pb.cov);
    put_against(ab, cab);
    put_against(ba, cba);
    let conflict = coverage::numbers_conflict(&pa.digit_set, &pb.digit_set);
    (ab[NUMBERS_CONFLICT], ba[NUMBERS_CONFLICT]) = (conflict, conflict);
    ab[LENGTH_RATIO] = coverage::length_ratio(pa.n_terms, pb.n_terms);
    ba[LENGTH_RATIO] = coverage::length_ratio(pb.n_terms, pa.n_terms);
    let prefixes = jaccard_distance(&pa.prefixes, &pb.prefixes);
    (ab[PREFIXES], ba[PREFIXES]) = (prefixes, prefixes);
    ab[MISSING_PREFIXES] = coverage::missing_prefixes(&pa.cov, &pb.prefixes);
    ba[MISSING_PREFIXES] = coverage::missing_prefixes(&pb.cov, &pa.prefixes);
    ab[LEAD_SHINGLES] = coverage::share_absent(&pa.lead_bigrams, &pb.bigrams);
    ba[LEAD_SHINGLES] = coverage::share_absent(&pb.lead_bigrams, &pa.bigrams);
    numbers_both(&pa.number_keys, &pb.number_keys, ab, ba);
    trigrams_both(
        trigram_side(&pa.trigrams, &pa.trigram_set),
        trigram_side(&pb.trigrams, &pb.trigram_set),
        ab,
        ba,
    );
}

/// A side's trigrams as [`crate::trigrams::features`] reads them.
fn trigram_side<'a>(
    t: &'a Option<crate::trigrams::Trigrams>,
    set: &'a [u16],
) -> Option<crate::trigrams::Side<'a>> {
    t.as_ref().map(|words| crate::trigrams::Side { words, set })
}

/// `trigrams` and `word_order` ([`crate::trigrams::features`], symmetric); 0 where
/// they are unknown, which [`Absent`] then marks.
fn trigrams_both(
    a: Option<crate::trigrams::Side>,
    b: Option<crate::trigrams::Side>,
    ab: &mut [f64; N_FEATURES],
    ba: &mut [f64; N_FEATURES],
) {
    if let Some(f) = crate::trigrams::features(a, b) {
        (ab[TRIGRAMS], ba[TRIGRAMS]) = (f.distance, f.distance);
        (ab[WORD_ORDER], ba[WORD_ORDER]) = (f.order, f.order);
    }
}

/// [`coverage::against`]'s values into their places in ρ.
fn put_against(f: &mut [f64; N_FEATURES], c: [f64; coverage::N_AGAINST]) {
    [
        f[MISSING],
        f[UNIQUE_PEAK],
        f[LEAD_MISSING],
        f[OWN_WEIGHT],
        f[UNIQUE_TOP],
    ] = c;
}

/// `numbers_own` both ways and `numbers_clash` from two sides' number keys.
fn numbers_both(ka: &[u64], kb: &[u64], ab: &mut [f64; N_FEATURES], ba: &mut [f64; N_FEATURES]) {
    ab[NUMBERS_OWN] = coverage::own_count(ka, kb);
    ba[NUMBERS_OWN] = coverage::own_count(kb, ka);
    let clash = coverage::numbers_conflict(ka, kb);
    (ab[NUMBERS_CLASH], ba[NUMBERS_CLASH]) = (clash, clash);
}

/// A document's number keys: its numbers' [`crate::numerals::digits_key`]s and
/// its numeral terms' ([`crate::numerals::key`]), sorted, unique.
fn number_keys_of(digits: impl Iterator<Item = u64>, words: impl Iterator<Item = u64>) -> Vec<u64> {
    sorted_set(digits.chain(words))
}

/// `1 − |a ∩ b| / |a ∪ b|` of two sorted, distinct key lists; 0 when both are empty.
fn jaccard_distance(a: &[u64], b: &[u64]) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 0.0;
    }
    let common = crate::sorted::intersection_count(a, b);
    1.0 - common as f64 / (a.len() + b.len() - common) as f64
}

/// A side's [`coverage::Keys`]: its weighted terms by hash, and its first sentence's.
/// `terms`: the side's weighted terms ([`hash_keys`]); `hashes` and `prefixes`: the
/// hash and the [`crate::document::prefix_key`] of every body term, by index.
fn coverage_keys(
    side: &Side,
    terms: &[(u64, u32)],
    hashes: &[u64],
    prefixes: &[u64],
) -> coverage::Keys {
    // Keys::new keeps only the lead terms among `terms` (the weighted ones).
    let lead: Vec<u64> = side
        .doc
        .sentences
        .first()
        .map(|s| {
            s.terms
                .iter()
                .filter_map(|&k| hashes.get(k as usize).copied())
                .collect()
        })
        .unwrap_or_default();
    coverage::Keys::new(
        terms.iter().map(|&(h, i)| {
            let prefix = prefixes.get(i as usize).copied().unwrap_or(0);
            (h, weight(side.weights, i as usize), prefix)
        }),
        &lead,
    )
}

#[derive(Debug, Clone, Default)]
struct SegmentSet {
    /// (hash, weight), sorted by hash.
    sorted: Vec<(u64, f64)>,
    total: f64,
}

/// [`term_keys`] from the terms' hashes.
fn hash_keys(hashes: &[u64], n_weights: usize) -> Vec<(u64, u32)> {
    let mut k: Vec<(u64, u32)> = hashes[..hashes.len().min(n_weights)]
        .iter()
        .enumerate()
        .map(|(i, &h)| (h, i as u32))
        .collect();
    k.sort_unstable();
    k
}

fn term_keys(terms: &[TermFreq], n_weights: usize) -> Vec<(u64, u32)> {
    // Terms past the end of their weights weigh 0 and add nothing to a dot product.
    let mut k: Vec<(u64, u32)> = terms[..terms.len().min(n_weights)]
        .iter()
        .enumerate()
        .map(|(i, t)| (xxhash_rust::xxh3::xxh3_64(t.term.as_bytes()), i as u32))
        .collect();
    k.sort_unstable();
    k
}

/// A document's numbers as hashes, in text order and as a sorted set.
fn number_keys(d: &Document) -> (Vec<u64>, Vec<u64>) {
    let numbers: Vec<u64> = d
        .numbers
        .iter()
        .map(|n| xxhash_rust::xxh3::xxh3_64(n.as_bytes()))
        .collect();
    let mut number_set = numbers.clone();
    number_set.sort_unstable();
    number_set.dedup();
    (numbers, number_set)
}

/// The number features of both directions from prepared keys:
/// `(inclusion(a, b), inclusion(b, a), sequence)`.
fn numbers_prepared(an: &[u64], aset: &[u64], bn: &[u64], bset: &[u64]) -> (f64, f64, f64) {
    let mut sequence = 0.0;
    if !(an.is_empty() && bn.is_empty()) {
        let longer = an.len().min(DL_MAX_LEN).max(bn.len().min(DL_MAX_LEN));
        sequence = damerau_levenshtein(an, bn) as f64 / longer as f64;
    }
    (
        number_inclusion_prepared(aset, bset),
        number_inclusion_prepared(bset, aset),
        sequence,
    )
}

fn segment_set(segs: &[Segment], w: &[f64]) -> SegmentSet {
    let mut total = 0.0;
    let mut sorted: Vec<(u64, f64)> = segs
        .iter()
        .map(|s| {
            let sw: f64 = s.terms.iter().map(|&k| weight(w, k as usize)).sum();
            total += sw;
            (s.hash, sw)
        })
        .collect();
    sorted.sort_unstable_by_key(|&(h, _)| h);
    SegmentSet { sorted, total }
}

impl Prepared {
    /// What this side has, for [`Absent`].
    fn present(&self) -> Present {
        Present {
            time: self.published_at.is_some(),
            title: self.has_title,
            numbers: self.has_numbers,
            number_keys: !self.number_keys.is_empty(),
        }
    }

    pub fn new(side: &Side) -> Prepared {
        let d = side.doc;
        let (numbers, number_set) = number_keys(d);
        // Each body term hashed once, and cut to its prefix once.
        let hashes: Vec<u64> = d
            .terms
            .iter()
            .map(|t| xxhash_rust::xxh3::xxh3_64(t.term.as_bytes()))
            .collect();
        let prefix_keys: Vec<u64> = d
            .terms
            .iter()
            .map(|t| crate::document::prefix_key(t.term.as_bytes()))
            .collect();
        let terms = hash_keys(&hashes, side.weights.len());
        let cov = coverage_keys(side, &terms, &hashes, &prefix_keys);
        let (bigrams, lead_bigrams) = crate::document::sentence_bigrams(&hashes, &d.sentences);
        let digit_set = sorted_set(d.numbers.iter().map(|n| crate::numerals::digits_key(n)));
        Prepared {
            number_keys: number_keys_of(
                digit_set.iter().copied(),
                hashes
                    .iter()
                    .filter_map(|&h| crate::numerals::key_of_hash(h)),
            ),
            bigrams,
            lead_bigrams,
            has_title: !d.title_terms.is_empty(),
            has_numbers: !d.numbers.is_empty(),
            published_at: d.published_at,
            trigram_set: d.trigrams.as_ref().map(|t| t.set()).unwrap_or_default(),
            trigrams: d.trigrams.clone(),
            terms,
            title_terms: term_keys(&d.title_terms, side.title_weights.len()),
            body_sq: sq_norm(d.terms.len(), side.weights),
            title_sq: sq_norm(d.title_terms.len(), side.title_weights),
            sentences: segment_set(&d.sentences, side.weights),
            paragraphs: segment_set(&d.paragraphs, side.weights),
            numbers,
            number_set,
            digit_set,
            cov,
            n_terms: d.terms.len(),
            prefixes: sorted_set(prefix_keys.into_iter()),
        }
    }

    /// Approximate heap bytes (for cache budgets).
    pub fn heap_bytes(&self) -> usize {
        self.cov.heap_bytes()
            + 12 * (self.terms.len() + self.title_terms.len())
            + 16 * (self.sentences.sorted.len() + self.paragraphs.sorted.len())
            + 8 * (self.numbers.len()
                + self.number_set.len()
                + self.digit_set.len()
                + self.prefixes.len()
                + self.number_keys.len()
                + self.bigrams.len()
                + self.lead_bigrams.len())
            + self.trigrams.as_ref().map_or(0, |t| t.heap_bytes())
            + 2 * self.trigram_set.len()
    }
}

/// An upper bound on [`Prepared::heap_bytes`] of `d` under any weights, from its
/// counts alone (no hashing, no sorting): what a cache charges for a document
/// whose prepared form is made only when it is first compared.
pub fn prepared_bytes_bound(d: &Document) -> usize {
    let n = d.terms.len();
    let nt = d.title_terms.len();
    let nn = d.numbers.len();
    let lead = d.sentences.first().map_or(0, |s| s.terms.len());
    let in_sentences: usize = d.sentences.iter().map(|s| s.terms.len()).sum();
    let trigrams = d.trigrams.as_ref().map_or(0, |t| t.heap_bytes());
    // coverage::Keys: 24 a term, 16 a lead term and a prefix.
    (24 + 16) * n + 16 * lead
        + 12 * (n + nt)
        + 16 * (d.sentences.len() + d.paragraphs.len())
        // numbers, number_set, digit_set; prefixes; number_keys (digits and
        // number words); bigrams; lead bigrams.
        + 8 * (3 * nn + n + (nn + n) + in_sentences + lead)
        // the trigrams and their set (at most as many keys).
        + 2 * trigrams
}

/// The distinct values of `it`, sorted.
fn sorted_set(it: impl Iterator<Item = u64>) -> Vec<u64> {
    let mut v: Vec<u64> = it.collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// `1 − cos` from two hash-sorted key lists and their squared norms.
fn cosine_prepared(
    ka: &[(u64, u32)],
    wa: &[f64],
    na: f64,
    kb: &[(u64, u32)],
    wb: &[f64],
    nb: f64,
) -> f64 {
    match (na > 0.0, nb > 0.0) {
        (false, false) => return 0.0,
        (true, false) | (false, true) => return 1.0,
        (true, true) => {}
    }
    let (mut i, mut j, mut dot) = (0, 0, 0.0);
    while i < ka.len() && j < kb.len() {
        let (ha, hb) = (ka[i].0, kb[j].0);
        if ha < hb {
            i += 1;
        } else if ha > hb {
            j += 1;
        } else {
            dot += weight(wa, ka[i].1 as usize) * weight(wb, kb[j].1 as usize);
            i += 1;
            j += 1;
        }
    }
    let cos = dot / (na.sqrt() * nb.sqrt());
    (1.0 - cos).clamp(0.0, 2.0)
}

/// [`inclusion_sorted`] on prepared sets: a merge instead of binary searches.
fn inclusion_prepared(a: &SegmentSet, b: &SegmentSet) -> f64 {
    if a.sorted.is_empty() {
        return 0.0;
    }
    let (mut j, mut common) = (0, 0.0);
    for &(h, w) in &a.sorted {
        while j < b.sorted.len() && b.sorted[j].0 < h {
            j += 1;
        }
        if j < b.sorted.len() && b.sorted[j].0 == h {
            common += w;
        }
    }
    if a.total.is_finite() && a.total > 0.0 {
        (1.0 - common / a.total).clamp(0.0, 1.0)
    } else {
        0.0
    }
}

/// Share of `a`'s distinct numbers missing from `b`'s (both sorted, distinct).
fn number_inclusion_prepared(a: &[u64], b: &[u64]) -> f64 {
    if a.is_empty() {
        return 0.0;
    }
    let (mut j, mut common) = (0, 0usize);
    for &x in a {
        while j < b.len() && b[j] < x {
            j += 1;
        }
        if j < b.len() && b[j] == x {
            common += 1;
        }
    }
    1.0 - common as f64 / a.len() as f64
}

/// `(compare(a, b), compare(b, a))` from prepared sides ([`Prepared::new`] of the
/// same sides). See [`Prepared`] for how it differs from [`compare_both`].
pub fn compare_prepared(
    a: &Side,
    pa: &Prepared,
    b: &Side,
    pb: &Prepared,
) -> ([f64; N_FEATURES], [f64; N_FEATURES]) {
    let mut ab = [0.0; N_FEATURES];
    let mut ba = [0.0; N_FEATURES];
    let text = cosine_prepared(
        &pa.terms, a.weights, pa.body_sq, &pb.terms, b.weights, pb.body_sq,
    );
    let title = cosine_prepared(
        &pa.title_terms,
        a.title_weights,
        pa.title_sq,
        &pb.title_terms,
        b.title_weights,
        pb.title_sq,
    );
    (ab[TEXT], ba[TEXT]) = (text, text);
    (ab[TITLE], ba[TITLE]) = (title, title);
    (
        ab[NUMBERS_INCLUSION],
        ba[NUMBERS_INCLUSION],
        ab[NUMBERS_SEQUENCE],
    ) = numbers_prepared(&pa.numbers, &pa.number_set, &pb.numbers, &pb.number_set);
    ba[NUMBERS_SEQUENCE] = ab[NUMBERS_SEQUENCE];
    ab[SENTENCES_INCLUSION] = inclusion_prepared(&pa.sentences, &pb.sentences);
    ba[SENTENCES_INCLUSION] = inclusion_prepared(&pb.sentences, &pa.sentences);
    ab[PARAGRAPHS_INCLUSION] = inclusion_prepared(&pa.paragraphs, &pb.paragraphs);
    ba[PARAGRAPHS_INCLUSION] = inclusion_prepared(&pb.paragraphs, &pa.paragraphs);
    coverage_both(pa, pb, &mut ab, &mut ba);
    finish_both(a, b, &mut ab, &mut ba);
    let gone = absent(pa, pb);
    gone.apply(&mut ab);
    gone.apply(&mut ba);
    (ab, ba)
}

/// [`Absent`] of two prepared sides.
fn absent(a: &Prepared, b: &Prepared) -> Absent {
    Absent::of(a.present(), b.present(), &a.trigrams, &b.trigrams)
}

// ---- bounds before weighing ---------------------------------------------------------

/// A closed interval a feature is known to lie in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Range {
    pub lo: f64,
    pub hi: f64,
}

impl Range {
    fn exact(x: f64) -> Range {
        Range { lo: x, hi: x }
    }

    /// Whether `x` lies in the range; an unknown value ([`UNKNOWN`], NaN) lies only
    /// in the unknown range.
    pub fn contains(&self, x: f64) -> bool {
        if x.is_nan() || self.lo.is_nan() || self.hi.is_nan() {
            return x.is_nan() && self.lo.is_nan() && self.hi.is_nan();
        }
        self.lo <= x && x <= self.hi
    }
}

/// Where `own_weight` of the unweighed side lies when it has terms the weighed side
/// lacks: at least 0, at most what [`sanitize`] lets through.
const OWN_RANGE: Range = Range {
    lo: 0.0,
    hi: FEATURE_LIMIT,
};

/// Slack added to the cosine bounds, far above the rounding of the sums they bound
/// (relative 1e-15) and far below any threshold a model could learn.
const COSINE_SLACK: f64 = 1e-9;

/// What [`bounds`] needs of the unweighed side, built once per document (and kept
/// with it: a document ruled out against one new document is often a candidate of
/// the next): term hashes sorted, segment hashes sorted, number keys, counts, time,
/// source. Built from a [`Skim`], which reads it off the stored bytes without
/// decoding the document.
#[derive(Debug, Clone, Default)]
pub struct Unweighed {
    /// The document's exact-copy key ([`crate::document::Document::fingerprint`]).
    pub fingerprint: u128,
    terms: Vec<u64>,
    title_terms: Vec<u64>,
    sentences: SegmentSet,
    paragraphs: SegmentSet,
    /// Whether some sentence (paragraph) holds a term with tf > 0: under positive
    /// weights their total is then > 0.
    sentences_weigh: bool,
    paragraphs_weigh: bool,
    numbers: Vec<u64>,
    number_set: Vec<u64>,
    digit_set: Vec<u64>,
    prefixes: Vec<u64>,
    /// As in [`Prepared`].
    number_keys: Vec<u64>,
    bigrams: Vec<u64>,
    lead_bigrams: Vec<u64>,
    images: u32,
    links: u32,
    published_at: Option<i64>,
    trigrams: Option<crate::trigrams::Trigrams>,
    trigram_set: Vec<u16>,
    /// The document's source (for its authority).
    pub source: Option<String>,
}

impl Unweighed {
    pub fn new(b: &Document) -> Unweighed {
        Unweighed::from_skim(Skim::of(b))
    }

    pub fn from_skim(s: Skim) -> Unweighed {
        let sorted = |mut h: Vec<u64>| {
            h.sort_unstable();
            h
        };
        // `a` in `b` reads only `b`'s hashes: unweighed sets give the same answer.
        let set = |segs: &[(u64, bool)]| {
            let mut sorted: Vec<(u64, f64)> = segs.iter().map(|&(h, _)| (h, 0.0)).collect();
            sorted.sort_unstable_by_key(|&(h, _)| h);
            SegmentSet { sorted, total: 0.0 }
        };
        let mut number_set = s.numbers.clone();
        number_set.sort_unstable();
        number_set.dedup();
        Unweighed {
            fingerprint: s.fingerprint,
            number_keys: number_keys_of(s.digits.iter().copied(), s.number_words.into_iter()),
            bigrams: s.bigrams,
            lead_bigrams: s.lead_bigrams,
            sentences: set(&s.sentences),
            paragraphs: set(&s.paragraphs),
            sentences_weigh: s.sentences.iter().any(|&(_, w)| w),
            paragraphs_weigh: s.paragraphs.iter().any(|&(_, w)| w),
            terms: sorted(s.terms),
            title_terms: sorted(s.title_terms),
            numbers: s.numbers,
            number_set,
            digit_set: sorted_set(s.digits.into_iter()),
            prefixes: s.prefixes,
            images: s.images,
            links: s.links,
            published_at: s.published_at,
            trigram_set: s.trigrams.as_ref().map(|t| t.set()).unwrap_or_default(),
            trigrams: s.trigrams,
            source: s.source,
        }
    }

    /// Approximate heap bytes (for cache budgets).
    pub fn heap_bytes(&self) -> usize {
        8 * (self.terms.len()
            + self.title_terms.len()
            + self.numbers.len()
            + self.number_set.len()
            + self.digit_set.len()
            + self.prefixes.len()
            + self.number_keys.len()
            + self.bigrams.len()
            + self.lead_bigrams.len())
            + 16 * (self.sentences.sorted.len() + self.paragraphs.sorted.len())
            + self.trigrams.as_ref().map_or(0, |t| t.heap_bytes())
            + 2 * self.trigram_set.len()
            + self.source.as_ref().map_or(0, |s| s.len())
    }
}

/// Where ρ(a, b) and ρ(b, a) can lie when only `a` is weighed and `b` is a decoded,
/// unweighed document (`ub` = `Unweighed::new(b)`): what [`compare_prepared`] would
/// return for `b` under any weights, given `a`'s (and, with `b_weights_positive`,
/// any weights that are > 0 for every term with tf > 0, as BM25's are; see
/// `weights::weights_positive`). A candidate whose bounds already rule out a
/// duplicate in both directions need not be weighed at all.
///
/// - Numbers, images, links, time, authorities, and the inclusion of `a`'s
///   sentences and paragraphs in `b`'s, do not depend on `b`'s weights: exact,
///   computed as `compare_prepared` computes them.
/// - Text and title: by Cauchy–Schwarz, |cos| ≤ √(Σ over a's terms that `b` also
///   has of w_a² / Σ w_a²), whatever `b`'s weights; the distance lies within that
///   of 1, plus [`COSINE_SLACK`].
/// - Inclusion of `b`'s segments in `a`'s: 0 when `b` has none; exactly 1 when
///   none of them occurs in `a` and `b`'s weights are positive (their total is then
///   > 0); otherwise anywhere in [0, 1].
pub fn bounds(
    a: &Side,
    pa: &Prepared,
    ub: &Unweighed,
    b_authority: f64,
    b_weights_positive: bool,
) -> ([Range; N_FEATURES], [Range; N_FEATURES]) {
    let mut ab = [Range::exact(0.0); N_FEATURES];
    let mut ba = [Range::exact(0.0); N_FEATURES];
    let text = cosine_range(&pa.terms, a.weights, pa.body_sq, &ub.terms);
    let title = cosine_range(
        &pa.title_terms,
        a.title_weights,
        pa.title_sq,
        &ub.title_terms,
    );
    (ab[TEXT], ba[TEXT]) = (text, text);
    (ab[TITLE], ba[TITLE]) = (title, title);

    let mut exact_ab = [0.0; N_FEATURES];
    let mut exact_ba = [0.0; N_FEATURES];
    (
        exact_ab[NUMBERS_INCLUSION],
        exact_ba[NUMBERS_INCLUSION],
        exact_ab[NUMBERS_SEQUENCE],
    ) = numbers_prepared(&pa.numbers, &pa.number_set, &ub.numbers, &ub.number_set);
    exact_ba[NUMBERS_SEQUENCE] = exact_ab[NUMBERS_SEQUENCE];
    exact_ab[SENTENCES_INCLUSION] = inclusion_prepared(&pa.sentences, &ub.sentences);
    exact_ab[PARAGRAPHS_INCLUSION] = inclusion_prepared(&pa.paragraphs, &ub.paragraphs);
    let b_meta = Meta {
        images: ub.images,
        links: ub.links,
        published_at: ub.published_at,
        authority: b_authority,
    };
    finish_meta(&Meta::of(a), &b_meta, &mut exact_ab, &mut exact_ba);
    for k in [
        NUMBERS_INCLUSION,
        NUMBERS_SEQUENCE,
        SENTENCES_INCLUSION,
        PARAGRAPHS_INCLUSION,
        IMAGES,
        LINKS,
        TIME,
        TIME_GAP,
        AUTHORITY_A,
        AUTHORITY_B,
    ] {
        ab[k] = Range::exact(exact_ab[k]);
    }
    for k in [
        NUMBERS_INCLUSION,
        NUMBERS_SEQUENCE,
        IMAGES,
        LINKS,
        TIME,
        TIME_GAP,
        AUTHORITY_A,
        AUTHORITY_B,
    ] {
        ba[k] = Range::exact(exact_ba[k]);
    }
    ba[SENTENCES_INCLUSION] = reverse_inclusion_range(
        &ub.sentences,
        &pa.sentences,
        b_weights_positive && ub.sentences_weigh,
    );
    ba[PARAGRAPHS_INCLUSION] = reverse_inclusion_range(
        &ub.paragraphs,
        &pa.paragraphs,
        b_weights_positive && ub.paragraphs_weigh,
    );
    // Coverage: a's side reads only b's term set, exact. b's side: 0 whatever b's
    // weights when every term of b is one of a's; 1 (missing, unique_peak) when
    // none is and b's weights are positive; otherwise anywhere in [0, 1].
    let mut exact_cov = [0.0; N_FEATURES];
    put_against(&mut exact_cov, coverage::against(&pa.cov, &ub.terms));
    exact_cov[MISSING_PREFIXES] = coverage::missing_prefixes(&pa.cov, &ub.prefixes);
    for k in [
        MISSING,
        UNIQUE_PEAK,
        LEAD_MISSING,
        OWN_WEIGHT,
        UNIQUE_TOP,
        MISSING_PREFIXES,
    ] {
        ab[k] = Range::exact(sanitize(exact_cov[k]));
    }
    let shared = ub
        .terms
        .iter()
        .filter(|&&h| coverage::has_term(&pa.cov.terms, h))
        .count();
    let unit = Range { lo: 0.0, hi: 1.0 };
    let (cov_ba, lead_ba, own_ba) = if shared == ub.terms.len() {
        (Range::exact(0.0), Range::exact(0.0), Range::exact(0.0))
    } else if shared == 0 && b_weights_positive {
        (Range::exact(1.0), unit, OWN_RANGE)
    } else {
        (unit, unit, OWN_RANGE)
    };
    ba[MISSING] = cov_ba;
    ba[UNIQUE_PEAK] = cov_ba;
    ba[UNIQUE_TOP] = cov_ba;
    ba[LEAD_MISSING] = lead_ba;
    ba[OWN_WEIGHT] = own_ba;
    // b's prefixes: all of them a's, none (with b's weights positive), or some.
    let shared_prefixes = ub
        .prefixes
        .iter()
        .filter(|&&p| pa.prefixes.binary_search(&p).is_ok())
        .count();
    ba[MISSING_PREFIXES] = if shared_prefixes == ub.prefixes.len() {
        Range::exact(0.0)
    } else if shared_prefixes == 0 && b_weights_positive {
        Range::exact(1.0)
    } else {
        unit
    };
    // Word order and numbers read no weights: exact both ways.
    ab[LEAD_SHINGLES] = Range::exact(coverage::share_absent(&pa.lead_bigrams, &ub.bigrams));
    ba[LEAD_SHINGLES] = Range::exact(coverage::share_absent(&ub.lead_bigrams, &pa.bigrams));
    let (mut nab, mut nba) = ([0.0; N_FEATURES], [0.0; N_FEATURES]);
    numbers_both(&pa.number_keys, &ub.number_keys, &mut nab, &mut nba);
    for k in [NUMBERS_OWN, NUMBERS_CLASH] {
        ab[k] = Range::exact(sanitize(nab[k]));
        ba[k] = Range::exact(sanitize(nba[k]));
    }
    let conflict = coverage::numbers_conflict(&pa.digit_set, &ub.digit_set);
    (ab[NUMBERS_CONFLICT], ba[NUMBERS_CONFLICT]) = (Range::exact(conflict), Range::exact(conflict));
    ab[LENGTH_RATIO] = Range::exact(sanitize(coverage::length_ratio(pa.n_terms, ub.terms.len())));
    ba[LENGTH_RATIO] = Range::exact(sanitize(coverage::length_ratio(ub.terms.len(), pa.n_terms)));
    let prefixes = Range::exact(jaccard_distance(&pa.prefixes, &ub.prefixes));
    (ab[PREFIXES], ba[PREFIXES]) = (prefixes, prefixes);
    // Character trigrams read no weights: exact both ways.
    let (mut tab, mut tba) = ([0.0; N_FEATURES], [0.0; N_FEATURES]);
    trigrams_both(
        trigram_side(&pa.trigrams, &pa.trigram_set),
        trigram_side(&ub.trigrams, &ub.trigram_set),
        &mut tab,
        &mut tba,
    );
    for k in [TRIGRAMS, WORD_ORDER] {
        ab[k] = Range::exact(sanitize(tab[k]));
        ba[k] = Range::exact(sanitize(tba[k]));
    }
    let ub_present = Present {
        time: ub.published_at.is_some(),
        title: !ub.title_terms.is_empty(),
        numbers: !ub.numbers.is_empty(),
        number_keys: !ub.number_keys.is_empty(),
    };
    let gone = Absent::of(pa.present(), ub_present, &pa.trigrams, &ub.trigrams);
    gone.apply_ranges(&mut ab);
    gone.apply_ranges(&mut ba);
    (ab, ba)
}

/// The range of `1 − cos(a, b)` over every weighting of `b`'s terms (`hb`: their
/// hashes, sorted).
fn cosine_range(ka: &[(u64, u32)], wa: &[f64], na: f64, hb: &[u64]) -> Range {
    if !(na > 0.0 && na.is_finite()) {
        // a empty: 0 when b is empty too, else 1.
        return Range { lo: 0.0, hi: 1.0 };
    }
    // Every a entry whose hash b has (a merge; equal hashes on either side are
    // all counted, which only loosens the bound).
    let (mut j, mut shared) = (0, 0.0);
    for &(h, i) in ka {
        while j < hb.len() && hb[j] < h {
            j += 1;
        }
        if j < hb.len() && hb[j] == h {
            let w = weight(wa, i as usize);
            shared += w * w;
        }
    }
    let cos = ((shared / na).min(1.0).sqrt() + COSINE_SLACK).min(1.0);
    Range {
        lo: (1.0 - cos).max(0.0),
        hi: (1.0 + cos).min(2.0),
    }
}

/// The range of the inclusion of `b`'s segments (weights unknown; `weighs`: their
/// total is known to be > 0) in `a`'s.
fn reverse_inclusion_range(b: &SegmentSet, a: &SegmentSet, weighs: bool) -> Range {
    if b.sorted.is_empty() {
        return Range::exact(0.0);
    }
    let (mut j, mut any_shared) = (0, false);
    for &(h, _) in &b.sorted {
        while j < a.sorted.len() && a.sorted[j].0 < h {
            j += 1;
        }
        if j < a.sorted.len() && a.sorted[j].0 == h {
            any_shared = true;
            break;
        }
    }
    if !any_shared && weighs {
        Range::exact(1.0)
    } else {
        Range { lo: 0.0, hi: 1.0 }
    }
}

/// The per-direction features that need no comparison (counts, time, authorities),
/// then [`sanitize`] over both vectors.
fn finish_both(a: &Side, b: &Side, ab: &mut [f64; N_FEATURES], ba: &mut [f64; N_FEATURES]) {
    finish_meta(&Meta::of(a), &Meta::of(b), ab, ba);
}

/// What the per-direction features that need no comparison read of a side.
struct Meta {
    images: u32,
    links: u32,
    published_at: Option<i64>,
    authority: f64,
}

impl Meta {
    fn of(s: &Side) -> Meta {
        Meta {
            images: s.doc.images,
            links: s.doc.links,
            published_at: s.doc.published_at,
            authority: s.authority,
        }
    }
}

/// [`finish_both`] on the sides' [`Meta`].
fn finish_meta(a: &Meta, b: &Meta, ab: &mut [f64; N_FEATURES], ba: &mut [f64; N_FEATURES]) {
    for (x, y, f) in [(a, b, ab), (b, a, ba)] {
        f[IMAGES] = x.images as f64 - y.images as f64;
        f[LINKS] = x.links as f64 - y.links as f64;
        f[TIME] = match (x.published_at, y.published_at) {
            (Some(tx), Some(ty)) => (tx as i128 - ty as i128) as f64 / 1e6,
            _ => 0.0, // unknown: see `Absent`
        };
        f[TIME_GAP] = match (x.published_at, y.published_at) {
            (Some(tx), Some(ty)) => {
                ((tx as i128 - ty as i128).unsigned_abs() as f64 / 60e6).ln_1p()
            }
            _ => 0.0, // unknown: see `Absent`
        };
        f[AUTHORITY_A] = x.authority;
        f[AUTHORITY_B] = y.authority;
        for v in f.iter_mut() {
            *v = sanitize(*v);
        }
    }
}

/// `(inclusion(a, b), inclusion(b, a), sequence)` as [`numbers_features`] computes
/// them, with each side's keys built once.
fn numbers_features_both(a: &[String], b: &[String]) -> (f64, f64, f64) {
    if a.is_empty() && b.is_empty() {
        return (0.0, 0.0, 0.0);
    }
    let ka: Vec<NumKey> = a.iter().map(|s| NumKey::new(s)).collect();
    let kb: Vec<NumKey> = b.iter().map(|s| NumKey::new(s)).collect();
    let (sa, sb) = (distinct(&ka), distinct(&kb));
    let incl = |x: &[NumKey], y: &[NumKey]| {
        if x.is_empty() {
            0.0
        } else {
            let common = x.iter().filter(|k| y.binary_search(k).is_ok()).count();
            1.0 - common as f64 / x.len() as f64
        }
    };
    let longer = ka.len().min(DL_MAX_LEN).max(kb.len().min(DL_MAX_LEN));
    let sequence = damerau_levenshtein(&ka, &kb) as f64 / longer as f64;
    (incl(&sa, &sb), incl(&sb, &sa), sequence)
}

fn sorted_hashes(segs: &[Segment]) -> Vec<u64> {
    let mut h: Vec<u64> = segs.iter().map(|s| s.hash).collect();
    h.sort_unstable();
    h
}

/// NaN → 0, everything else clamped to `±FEATURE_LIMIT` (so ±∞ too).
fn sanitize(x: f64) -> f64 {
    if x.is_nan() {
        0.0
    } else {
        x.clamp(-FEATURE_LIMIT, FEATURE_LIMIT)
    }
}

/// What a pair lacks on both sides (or, for the conflict and the times, on either)
/// makes the features about it [`UNKNOWN`] rather than "equal": two untitled texts
/// do not have equal titles, two texts without numbers do not agree on numbers, and
/// a text without a time was not published the same minute. (Read as equal, they
/// pushed every short untitled text towards "duplicate".) Applied once, after the
/// features are computed and sanitised, on every path (`compare`, `compare_both`,
/// `compare_prepared`, `bounds`).
#[derive(Clone, Copy)]
struct Absent {
    times: bool,
    titles: bool,
    numbers: bool,
    conflict: bool,
    /// A side without numbers in digits or words: `numbers_clash` is unknown.
    clash: bool,
    /// A side without recorded trigrams, or neither with any: the trigram
    /// features are unknown.
    trigrams: bool,
}

/// What one side has, as far as [`Absent`] asks.
#[derive(Clone, Copy)]
struct Present {
    time: bool,
    title: bool,
    /// Numbers in digits.
    numbers: bool,
    /// Numbers in digits or words.
    number_keys: bool,
}

impl Absent {
    /// What two sides lack between them (`ta`, `tb`: their recorded trigrams).
    fn of(
        a: Present,
        b: Present,
        ta: &Option<crate::trigrams::Trigrams>,
        tb: &Option<crate::trigrams::Trigrams>,
    ) -> Absent {
        Absent {
            times: !a.time || !b.time,
            titles: !a.title && !b.title,
            numbers: !a.numbers && !b.numbers,
            conflict: !a.numbers || !b.numbers,
            clash: !a.number_keys || !b.number_keys,
            trigrams: !crate::trigrams::known(ta.as_ref(), tb.as_ref()),
        }
    }

    /// The features this makes unknown.
    fn features(self) -> impl Iterator<Item = usize> {
        [
            (self.times, TIME),
            (self.times, TIME_GAP),
            (self.titles, TITLE),
            (self.numbers, NUMBERS_INCLUSION),
            (self.numbers, NUMBERS_SEQUENCE),
            (self.conflict, NUMBERS_CONFLICT),
            (self.clash, NUMBERS_CLASH),
            (self.trigrams, TRIGRAMS),
            (self.trigrams, WORD_ORDER),
        ]
        .into_iter()
        .filter_map(|(absent, k)| absent.then_some(k))
    }

    fn apply(self, f: &mut [f64; N_FEATURES]) {
        for k in self.features() {
            f[k] = UNKNOWN;
        }
    }

    fn apply_ranges(self, f: &mut [Range; N_FEATURES]) {
        for k in self.features() {
            f[k] = Range::exact(UNKNOWN);
        }
    }
}

fn weight(w: &[f64], i: usize) -> f64 {
    w.get(i).copied().unwrap_or(0.0)
}

fn sq_norm(n_terms: usize, w: &[f64]) -> f64 {
    w[..n_terms.min(w.len())].iter().map(|x| x * x).sum()
}

/// `1 − cosine` of two sparse vectors given as sorted term lists with aligned
/// weights, by merge-join. Both zero vectors → 0, one zero vector → 1.
fn cosine_distance(ta: &[TermFreq], wa: &[f64], tb: &[TermFreq], wb: &[f64]) -> f64 {
    let na = sq_norm(ta.len(), wa);
    let nb = sq_norm(tb.len(), wb);
    match (na > 0.0, nb > 0.0) {
        (false, false) => return 0.0,
        (true, false) | (false, true) => return 1.0,
        (true, true) => {}
    }
    // Terms past the end of their weights weigh 0 and add nothing to the dot product.
    let (ta, tb) = (&ta[..ta.len().min(wa.len())], &tb[..tb.len().min(wb.len())]);
    let (mut i, mut j, mut dot) = (0, 0, 0.0);
    while i < ta.len() && j < tb.len() {
        match ta[i].term.as_bytes().cmp(tb[j].term.as_bytes()) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                dot += wa[i] * wb[j];
                i += 1;
                j += 1;
            }
        }
    }
    let cos = dot / (na.sqrt() * nb.sqrt());
    (1.0 - cos).clamp(0.0, 2.0)
}

/// `(numbers_inclusion, numbers_sequence)`.
///
/// Inclusion is `1 − |A ∩ B| / |A|` over the sets of distinct numbers, 0 when `a` has
/// none. Sequence is the Damerau–Levenshtein distance of the number sequences (cut to
/// [`DL_MAX_LEN`]) over the longer cut length, 0 when both are empty. Both run on
/// [`NumKey`]s, which compare as integers in the usual case.
fn numbers_features(a: &[String], b: &[String]) -> (f64, f64) {
    if a.is_empty() && b.is_empty() {
        return (0.0, 0.0);
    }
    let ka: Vec<NumKey> = a.iter().map(|s| NumKey::new(s)).collect();
    let kb: Vec<NumKey> = b.iter().map(|s| NumKey::new(s)).collect();

    let inclusion = if ka.is_empty() {
        0.0
    } else {
        let (sa, sb) = (distinct(&ka), distinct(&kb));
        let common = sa.iter().filter(|k| sb.binary_search(k).is_ok()).count();
        1.0 - common as f64 / sa.len() as f64
    };

    let longer = ka.len().min(DL_MAX_LEN).max(kb.len().min(DL_MAX_LEN));
    let sequence = damerau_levenshtein(&ka, &kb) as f64 / longer as f64;
    (inclusion, sequence)
}

fn distinct<'a>(k: &[NumKey<'a>]) -> Vec<NumKey<'a>> {
    let mut v = k.to_vec();
    v.sort_unstable();
    v.dedup();
    v
}

/// A number string with its first 16 bytes packed big-endian into an integer, so
/// comparisons are integer comparisons and the bytes are read only to break a tie
/// between two numbers longer than 16 bytes. Orders exactly like the strings' bytes.
/// With 12 numbers a side this took `numbers_features` from 1.6 µs (comparing
/// `String`s) to 1.15 µs; trimming the common prefix and suffix in the DL then
/// brought it to about 0.6 µs.
#[derive(Clone, Copy, Debug)]
struct NumKey<'a> {
    prefix: u128,
    s: &'a str,
}

impl<'a> NumKey<'a> {
    fn new(s: &'a str) -> Self {
        let mut b = [0u8; 16];
        let n = s.len().min(16);
        b[..n].copy_from_slice(&s.as_bytes()[..n]);
        NumKey {
            prefix: u128::from_be_bytes(b),
            s,
        }
    }
}

impl PartialEq for NumKey<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.prefix == other.prefix
            && self.s.len() == other.s.len()
            && (self.s.len() <= 16 || self.s == other.s)
    }
}

impl Eq for NumKey<'_> {}

impl Ord for NumKey<'_> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        // Zero padding sorts a proper prefix first, as byte order does; equal
        // prefixes (same first 16 bytes, or a NUL in the text) fall back to the bytes.
        self.prefix
            .cmp(&other.prefix)
            .then_with(|| self.s.as_bytes().cmp(other.s.as_bytes()))
    }
}

impl PartialOrd for NumKey<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// `1 −` (weight of a's segments whose hash occurs among b's) / (weight of all of a's),
/// a segment's weight being the sum of a's term weights at its indices. 0 when `a`
/// has no segments or they weigh nothing.
fn segment_inclusion(a: &[Segment], wa: &[f64], b: &[Segment]) -> f64 {
    if a.is_empty() {
        return 0.0;
    }
    inclusion_sorted(a, wa, &sorted_hashes(b))
}

/// [`segment_inclusion`] with b's hashes given sorted.
fn inclusion_sorted(a: &[Segment], wa: &[f64], hb: &[u64]) -> f64 {
    if a.is_empty() {
        return 0.0;
    }
    let (mut total, mut common) = (0.0, 0.0);
    for s in a {
        let w: f64 = s.terms.iter().map(|&k| weight(wa, k as usize)).sum();
        total += w;
        if hb.binary_search(&s.hash).is_ok() {
            common += w;
        }
    }
    // Also false for NaN.
    if total.is_finite() && total > 0.0 {
        (1.0 - common / total).clamp(0.0, 1.0)
    } else {
        0.0
    }
}

/// Damerau–Levenshtein distance in its optimal-string-alignment form (OSA, the
/// "restricted" edit distance): the fewest insertions, deletions, substitutions and
/// transpositions of two adjacent elements turning `a` into `b`, where no element is
/// edited twice. It differs from the unrestricted distance only on cases like
/// `CA → ABC` (3 here, 2 unrestricted), which do not matter for reordered numbers and
/// need only `PartialEq`, not hashing.
///
/// Only the first [`DL_MAX_LEN`] elements of each input are used. After trimming the
/// common prefix and suffix, time O(n·m) and memory O(m) (three rows) over what is
/// left.
pub fn damerau_levenshtein<T: PartialEq>(a: &[T], b: &[T]) -> usize {
    let a = &a[..a.len().min(DL_MAX_LEN)];
    let b = &b[..b.len().min(DL_MAX_LEN)];
    // A common prefix or suffix never takes part in an optimal alignment's edits
    // (checked against the untrimmed table in `dl_trimming_matches_full_table`), and
    // near-duplicates mostly share theirs.
    let pre = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let (a, b) = (&a[pre..], &b[pre..]);
    let suf = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (a, b) = (&a[..a.len() - suf], &b[..b.len() - suf]);
    let (n, m) = (a.len(), b.len());
    if n == 0 || m == 0 {
        return n.max(m);
    }
    // Rows i−2, i−1 and i of the (n+1)×(m+1) table, in one buffer.
    let w = m + 1;
    let mut buf = vec![0usize; 3 * w];
    let (mut r2, mut r1, mut r0) = (0, w, 2 * w);
    for (j, cell) in buf[r1..r1 + w].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=n {
        buf[r0] = i;
        for j in 1..=m {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (buf[r1 + j] + 1)
                .min(buf[r0 + j - 1] + 1)
                .min(buf[r1 + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(buf[r2 + j - 2] + 1);
            }
            buf[r0 + j] = d;
        }
        (r2, r1, r0) = (r1, r0, r2);
    }
    buf[r1 + m]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tf(term: &str, tf: u32) -> TermFreq {
        TermFreq {
            term: term.into(),
            tf,
        }
    }

    /// A document from sentences of words: sentence hash = hash of its words, one
    /// paragraph per `para` sentences, all weights 1 per occurrence (via tf).
    fn doc_from(sentences: &[&[&str]], para: usize) -> Document {
        let mut vocab: Vec<&str> = sentences.iter().flat_map(|s| s.iter().copied()).collect();
        vocab.sort_unstable();
        vocab.dedup();
        let mut terms: Vec<TermFreq> = vocab.iter().map(|w| tf(w, 0)).collect();
        let mut segs = Vec::new();
        for s in sentences {
            let mut idx = Vec::new();
            for w in s.iter() {
                let k = vocab.binary_search(w).unwrap();
                terms[k].tf += 1;
                idx.push(k as u32);
            }
            segs.push(Segment {
                hash: fnv(s),
                terms: idx,
            });
        }
        let paragraphs = segs
            .chunks(para.max(1))
            .map(|c| Segment {
                hash: c
                    .iter()
                    .fold(7u64, |h, s| h.wrapping_mul(31).wrapping_add(s.hash)),
                terms: c.iter().flat_map(|s| s.terms.iter().copied()).collect(),
            })
            .collect();
        Document {
            terms,
            sentences: segs,
            paragraphs,
            ..Document::default()
        }
    }

    fn fnv(words: &[&str]) -> u64 {
        let mut h = 0xcbf29ce484222325u64;
        for w in words {
            for &c in w.as_bytes().iter().chain(b" ") {
                h = (h ^ c as u64).wrapping_mul(0x100000001b3);
            }
        }
        h
    }

    fn ones(d: &Document) -> Vec<f64> {
        d.terms.iter().map(|t| t.tf as f64).collect()
    }

    fn side<'a>(d: &'a Document, w: &'a [f64], tw: &'a [f64], auth: f64) -> Side<'a> {
        Side {
            doc: d,
            weights: w,
            title_weights: tw,
            authority: auth,
        }
    }

    fn nums(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    /// 40 varied documents from a seeded LCG: shared and private words, numbers,
    /// titles, counts, times, empty sides.
    fn random_docs(seed: u64) -> Vec<Document> {
        let mut seed = seed;
        let mut next = move |n: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % n.max(1)
        };
        // Shared prefixes (alpha, alphabet), and numerals that match the numbers.
        let words = [
            "alpha", "beta", "gamma", "delta", "alphabet", "zeta", "eta", "theta", "deltoid",
            "kappa", "три", "two", "пят",
        ];
        let mut docs = Vec::new();
        for _ in 0..40 {
            let ns = next(6) as usize;
            let sents: Vec<Vec<&str>> = (0..ns)
                .map(|_| {
                    (0..1 + next(5))
                        .map(|_| words[next(words.len() as u64) as usize])
                        .collect()
                })
                .collect();
            let refs: Vec<&[&str]> = sents.iter().map(|v| v.as_slice()).collect();
            let mut d = doc_from(&refs, 1 + next(3) as usize);
            d.numbers = (0..next(6)).map(|_| next(7).to_string()).collect();
            if next(2) == 0 {
                d.title_terms = vec![tf(words[next(10) as usize], 1)];
            }
            d.images = next(3) as u32;
            d.links = next(4) as u32;
            d.published_at = (next(3) != 0).then(|| next(1000) as i64 * 1_000_000);
            // Trigrams of some of its words; none recorded (a document from before
            // them) for every fifth, an empty set for some.
            d.trigrams = match next(5) {
                0 => None,
                1 => Some(Default::default()),
                _ => Some(crate::trigrams::of_words(
                    sents.iter().flatten().copied().take(next(6) as usize + 1),
                )),
            };
            docs.push(d);
        }
        docs
    }

    #[test]
    fn prefixes_is_the_jaccard_distance_of_four_character_prefixes() {
        let a = doc_from(&[&["alpha", "beta", "eta"]], 1);
        let b = doc_from(&[&["alphabet", "gamma", "eta"]], 1);
        let (wa, wb) = (ones(&a), ones(&b));
        let (sa, sb) = (side(&a, &wa, &[], 0.5), side(&b, &wb, &[], 0.5));
        // {alph, beta, eta} against {alph, gamm, eta}: 2 shared of 4.
        let (ab, ba) = compare_both(&sa, &sb);
        assert!((ab[PREFIXES] - 0.5).abs() < 1e-12);
        assert_eq!(ab[PREFIXES], ba[PREFIXES]);
        let e = Document::default();
        let we: Vec<f64> = Vec::new();
        let se = side(&e, &we, &[], 0.5);
        assert_eq!(compare(&se, &se)[PREFIXES], 0.0);
        assert_eq!(compare(&sa, &se)[PREFIXES], 1.0);
        assert_eq!(compare(&sa, &sa)[PREFIXES], 0.0);
    }

    #[test]
    fn own_weight_unique_top_and_missing_prefixes_by_hand() {
        // a: alpha 1, beta 2, gamma 4 (weights by term order); b has alphabet and beta.
        let a = doc_from(&[&["alpha", "beta", "gamma"]], 1);
        let b = doc_from(&[&["alphabet", "beta"]], 1);
        let wa = [1.0, 2.0, 4.0];
        let wb = [3.0, 5.0];
        let (ab, ba) = compare_both(&side(&a, &wa, &[], 0.5), &side(&b, &wb, &[], 0.5));
        // a's own terms: alpha and gamma.
        assert!((ab[OWN_WEIGHT] - 5.0f64.ln_1p()).abs() < 1e-12);
        assert!((ab[UNIQUE_TOP] - 5.0 / 7.0).abs() < 1e-12);
        // alpha shares "alph" with alphabet: only gamma (16 of 21) is missing.
        assert!((ab[MISSING_PREFIXES] - 16.0 / 21.0).abs() < 1e-12);
        assert!((ab[MISSING] - 17.0 / 21.0).abs() < 1e-12);
        // b's own term is alphabet (weight 3), whose prefix a has.
        assert!((ba[OWN_WEIGHT] - 3.0f64.ln_1p()).abs() < 1e-12);
        assert!((ba[UNIQUE_TOP] - 3.0 / 8.0).abs() < 1e-12);
        assert_eq!(ba[MISSING_PREFIXES], 0.0);
        let (aa, _) = compare_both(&side(&a, &wa, &[], 0.5), &side(&a, &wa, &[], 0.5));
        for k in [
            OWN_WEIGHT,
            UNIQUE_TOP,
            MISSING_PREFIXES,
            LEAD_SHINGLES,
            NUMBERS_OWN,
        ] {
            assert_eq!(aa[k], 0.0, "{}", FEATURE_NAMES[k]);
        }
    }

    #[test]
    fn lead_shingles_see_word_order() {
        let a = doc_from(&[&["alpha", "beta", "gamma"], &["delta"]], 1);
        let same = doc_from(&[&["zeta"], &["alpha", "beta", "gamma"]], 1);
        let turned = doc_from(&[&["gamma", "beta", "alpha"]], 1);
        let half = doc_from(&[&["beta", "gamma", "alpha"]], 1);
        let f = |x: &Document, y: &Document| {
            let (wx, wy) = (ones(x), ones(y));
            compare(&side(x, &wx, &[], 0.5), &side(y, &wy, &[], 0.5))[LEAD_SHINGLES]
        };
        // a's lead bigrams (alpha beta, beta gamma) in any sentence of the other.
        assert_eq!(f(&a, &same), 0.0);
        assert_eq!(f(&a, &turned), 1.0);
        assert_eq!(f(&a, &half), 0.5);
        // The same terms: text, missing and prefixes cannot tell them apart.
        let (wa, wt) = (ones(&turned), ones(&half));
        let r = compare(&side(&turned, &wa, &[], 0.5), &side(&half, &wt, &[], 0.5));
        assert!(r[TEXT].abs() < 1e-12 && r[MISSING] == 0.0);
        // A lead of one term has no bigram: nothing of it is missing.
        let one = doc_from(&[&["alpha"]], 1);
        assert_eq!(f(&one, &turned), 0.0);
    }

    #[test]
    fn numbers_written_as_words_count() {
        let mk = |sents: &[&[&str]], numbers: &[&str]| {
            let mut d = doc_from(sents, 1);
            d.numbers = nums(numbers);
            d
        };
        let f = |x: &Document, y: &Document| {
            let (wx, wy) = (ones(x), ones(y));
            compare_both(&side(x, &wx, &[], 0.5), &side(y, &wy, &[], 0.5))
        };
        // "три беспилотника" against "3 беспилотника" and "пять беспилотников".
        let words = mk(&[&["три", "беспилотник"]], &[]);
        let digits = mk(&[&["беспилотник"]], &["3"]);
        let other = mk(&[&["пят", "беспилотник"]], &[]);
        let (ab, ba) = f(&words, &digits);
        assert_eq!(
            (ab[NUMBERS_CLASH], ab[NUMBERS_OWN], ba[NUMBERS_OWN]),
            (0.0, 0.0, 0.0)
        );
        // The digits-only features do not see the word.
        assert!(ab[NUMBERS_CONFLICT].is_nan());
        let (ab, ba) = f(&words, &other);
        assert_eq!(ab[NUMBERS_CLASH], 1.0);
        assert_eq!(ba[NUMBERS_CLASH], 1.0);
        assert_eq!(ab[NUMBERS_OWN], 1.0f64.ln_1p());
        // No numbers on one side: the clash is unknown, the own count is not.
        let none = mk(&[&["беспилотник"]], &[]);
        let (ab, ba) = f(&words, &none);
        assert!(ab[NUMBERS_CLASH].is_nan() && ba[NUMBERS_CLASH].is_nan());
        assert_eq!((ab[NUMBERS_OWN], ba[NUMBERS_OWN]), (1.0f64.ln_1p(), 0.0));
    }

    #[test]
    fn trigram_features_and_their_unknowns() {
        let mut a = doc_from(&[&["word"]], 1);
        let mut b = doc_from(&[&["words"]], 1);
        a.trigrams = Some(crate::trigrams::of_words(["word"]));
        b.trigrams = Some(crate::trigrams::of_words(["words"]));
        let (wa, wb) = (ones(&a), ones(&b));
        let (sa, sb) = (side(&a, &wa, &[], 0.0), side(&b, &wb, &[], 0.0));
        let (ab, ba) = compare_both(&sa, &sb);
        // pg_trgm's similarity('word', 'words') is 4/7.
        assert!((ab[TRIGRAMS] - 3.0 / 7.0).abs() < 1e-12);
        assert_eq!(ab[TRIGRAMS], ba[TRIGRAMS]);
        assert_eq!((ab[WORD_ORDER], ba[WORD_ORDER]), (1.0, 1.0));
        // A document stored before trigrams were recorded: unknown, both ways, on
        // every path (and in the bounds).
        let old = Document {
            trigrams: None,
            ..b.clone()
        };
        let so = side(&old, &wb, &[], 0.0);
        let (ab, ba) = compare_both(&sa, &so);
        let one = compare(&sa, &so);
        let pa = Prepared::new(&sa);
        let (rab, rba) = bounds(&sa, &pa, &Unweighed::new(&old), 0.0, true);
        for k in [TRIGRAMS, WORD_ORDER] {
            assert!(ab[k].is_nan() && ba[k].is_nan() && one[k].is_nan());
            assert!(rab[k].contains(UNKNOWN) && rba[k].contains(UNKNOWN));
        }
        // Every other feature is what it was.
        let (xab, _) = compare_both(&sa, &sb);
        for k in 0..TRIGRAMS {
            assert!(
                ab[k] == xab[k] || (ab[k].is_nan() && xab[k].is_nan()),
                "{}",
                FEATURE_NAMES[k]
            );
        }
    }

    #[test]
    fn compare_both_equals_two_compares() {
        let docs = random_docs(0x9e3779b97f4a7c15);
        for a in &docs {
            for b in &docs {
                let (wa, wb) = (ones(a), ones(b));
                let twa: Vec<f64> = a.title_terms.iter().map(|_| 0.5).collect();
                let twb: Vec<f64> = b.title_terms.iter().map(|_| 0.7).collect();
                let (sa, sb) = (side(a, &wa, &twa, 0.3), side(b, &wb, &twb, 0.8));
                let (ab, ba) = compare_both(&sa, &sb);
                let (xab, xba) = (compare(&sa, &sb), compare(&sb, &sa));
                for k in 0..N_FEATURES {
                    assert_eq!(ab[k].to_bits(), xab[k].to_bits(), "ab {}", FEATURE_NAMES[k]);
                    assert_eq!(ba[k].to_bits(), xba[k].to_bits(), "ba {}", FEATURE_NAMES[k]);
                }
            }
        }
    }

    #[test]
    fn bounds_hold_whatever_the_candidate_weighs() {
        let docs = random_docs(0x0b0d_5eed_1234_9876);
        let mut checked = 0;
        for (i, a) in docs.iter().enumerate() {
            let wa: Vec<f64> = (0..a.terms.len())
                .map(|t| 0.25 + ((t * 7 + i) % 5) as f64)
                .collect();
            let twa: Vec<f64> = a.title_terms.iter().map(|_| 0.5).collect();
            let sa = side(a, &wa, &twa, 0.3);
            let pa = Prepared::new(&sa);
            for (j, b) in docs.iter().enumerate() {
                // Positive weights in several shapes, then some zero ones (for which
                // only the weaker claim holds).
                for shape in 0..4 {
                    let wb: Vec<f64> = (0..b.terms.len())
                        .map(|t| match shape {
                            0 => 1.0,
                            1 => 0.01 + ((t * 13 + j) % 7) as f64,
                            2 => 1e-6 + (t % 2) as f64 * 50.0,
                            _ => ((t + j) % 3) as f64,
                        })
                        .collect();
                    let twb: Vec<f64> = b.title_terms.iter().map(|_| 0.1 + shape as f64).collect();
                    let sb = side(b, &wb, &twb, 0.8);
                    let positive = shape < 3 && b.terms.iter().all(|t| t.tf > 0);
                    let (rab, rba) = bounds(&sa, &pa, &Unweighed::new(b), 0.8, positive);
                    let (ab, ba) = compare_prepared(&sa, &pa, &sb, &Prepared::new(&sb));
                    for k in 0..N_FEATURES {
                        assert!(
                            rab[k].contains(ab[k]),
                            "ab {} {} {:?} ({i},{j},{shape})",
                            FEATURE_NAMES[k],
                            ab[k],
                            rab[k]
                        );
                        assert!(
                            rba[k].contains(ba[k]),
                            "ba {} {} {:?} ({i},{j},{shape})",
                            FEATURE_NAMES[k],
                            ba[k],
                            rba[k]
                        );
                    }
                    checked += 1;
                }
            }
        }
        assert!(checked > 100);
        // The bounds are tight where they claim to be: a document against itself has
        // text distance 0 in range, a document sharing no term has distance ≥ 1.
        let a = &docs[1];
        let wa: Vec<f64> = a.terms.iter().map(|_| 1.0).collect();
        let sa = side(a, &wa, &[], 0.0);
        let pa = Prepared::new(&sa);
        let (r, _) = bounds(&sa, &pa, &Unweighed::new(a), 0.0, true);
        assert!(r[TEXT].lo == 0.0 && r[TEXT].hi >= 1.0);
        let none = Document::default();
        let (r, rb) = bounds(&sa, &pa, &Unweighed::new(&none), 0.0, true);
        assert!(r[TEXT].lo >= 1.0 - 2.0 * COSINE_SLACK);
        assert_eq!(rb[SENTENCES_INCLUSION], Range::exact(0.0));
    }

    #[test]
    fn compare_prepared_matches_compare_both() {
        let docs = random_docs(0x51_7cc1_b727_220a);
        for (i, a) in docs.iter().enumerate() {
            for (j, b) in docs.iter().enumerate() {
                // Uneven weights; every third document has fewer weights than terms.
                let wts = |d: &Document, k: usize| -> Vec<f64> {
                    let n = if k.is_multiple_of(3) {
                        d.terms.len() / 2
                    } else {
                        d.terms.len()
                    };
                    (0..n).map(|t| 0.25 + ((t * 7 + k) % 5) as f64).collect()
                };
                let (wa, wb) = (wts(a, i), wts(b, j));
                let twa: Vec<f64> = a.title_terms.iter().map(|_| 0.5).collect();
                let twb: Vec<f64> = b.title_terms.iter().map(|_| 0.7).collect();
                let (sa, sb) = (side(a, &wa, &twa, 0.3), side(b, &wb, &twb, 0.8));
                let (ab, ba) = compare_both(&sa, &sb);
                let (pa, pb) = (Prepared::new(&sa), Prepared::new(&sb));
                let (xab, xba) = compare_prepared(&sa, &pa, &sb, &pb);
                for k in 0..N_FEATURES {
                    assert!(
                        (ab[k] - xab[k]).abs() <= 1e-12 || (ab[k].is_nan() && xab[k].is_nan()),
                        "ab {} {} {}",
                        FEATURE_NAMES[k],
                        ab[k],
                        xab[k]
                    );
                    assert!(
                        (ba[k] - xba[k]).abs() <= 1e-12 || (ba[k].is_nan() && xba[k].is_nan()),
                        "ba {} {} {}",
                        FEATURE_NAMES[k],
                        ba[k],
                        xba[k]
                    );
                }
            }
        }
    }

    #[test]
    fn names_match_length() {
        assert_eq!(FEATURE_NAMES.len(), N_FEATURES);
        assert_eq!(FEATURE_NAMES[AUTHORITY_B], "authority_b");
        assert_eq!(FEATURE_NAMES[TIME], "time");
    }

    #[test]
    fn identical_documents_have_zero_distances() {
        let mut d = doc_from(
            &[&["alpha", "beta", "gamma"], &["delta", "alpha"], &["eps"]],
            2,
        );
        d.title_terms = vec![tf("head", 1), tf("line", 1)];
        d.numbers = nums(&["1", "2.5", "1"]);
        d.images = 2;
        d.links = 3;
        d.published_at = Some(1_000_000);
        let w = ones(&d);
        let tw = [0.7, 0.3];
        let r = compare(&side(&d, &w, &tw, 0.9), &side(&d, &w, &tw, 0.2));
        for (k, v) in r.iter().enumerate().take(AUTHORITY_A) {
            assert!(v.abs() < 1e-12, "{} = {v}", FEATURE_NAMES[k]);
        }
        assert_eq!((r[AUTHORITY_A], r[AUTHORITY_B]), (0.9, 0.2));
    }

    #[test]
    fn truncated_copy_is_asymmetric() {
        let s: [&[&str]; 4] = [
            &["market", "fell", "today"],
            &["shares", "lost", "value"],
            &["analysts", "expect", "recovery"],
            &["oil", "price", "rose"],
        ];
        let a = doc_from(&s, 2);
        let b = doc_from(&s[..2], 2); // b keeps a's first paragraph only
        let (wa, wb) = (ones(&a), ones(&b));
        let ab = compare(&side(&a, &wa, &[], 0.5), &side(&b, &wb, &[], 0.5));
        let ba = compare(&side(&b, &wb, &[], 0.5), &side(&a, &wa, &[], 0.5));
        assert_eq!(ba[SENTENCES_INCLUSION], 0.0);
        assert_eq!(ba[PARAGRAPHS_INCLUSION], 0.0);
        assert!((ab[SENTENCES_INCLUSION] - 0.5).abs() < 1e-12);
        assert!((ab[PARAGRAPHS_INCLUSION] - 0.5).abs() < 1e-12);
        // Cosine is symmetric: 6 shared unit terms of 12 and 6 -> cos = 6/sqrt(72).
        let expect = 1.0 - 6.0 / (12.0f64 * 6.0).sqrt();
        assert!((ab[TEXT] - expect).abs() < 1e-12 && (ba[TEXT] - expect).abs() < 1e-12);
    }

    #[test]
    fn sentence_inclusion_is_weighted() {
        let a = doc_from(&[&["big", "news"], &["small"]], 1);
        let b = doc_from(&[&["small"]], 1);
        // weights: big 3, news 1, small 1 (terms sorted: big, news, small)
        let wa = [3.0, 1.0, 1.0];
        let wb = [1.0];
        let r = compare(&side(&a, &wa, &[], 0.0), &side(&b, &wb, &[], 0.0));
        assert!((r[SENTENCES_INCLUSION] - (1.0 - 1.0 / 5.0)).abs() < 1e-12);
        // Zero total weight -> 0; no sentences -> 0.
        let r = compare(&side(&a, &[], &[], 0.0), &side(&b, &wb, &[], 0.0));
        assert_eq!(r[SENTENCES_INCLUSION], 0.0);
        let empty = Document::default();
        let r = compare(&side(&empty, &[], &[], 0.0), &side(&a, &wa, &[], 0.0));
        assert_eq!(r[SENTENCES_INCLUSION], 0.0);
    }

    #[test]
    fn empty_text_and_title_rules() {
        let empty = Document::default();
        let mut t = doc_from(&[&["word"]], 1);
        t.title_terms = vec![tf("title", 1)];
        let w = ones(&t);
        let r = compare(&side(&empty, &[], &[], 0.0), &side(&empty, &[], &[], 0.0));
        assert_eq!(r[TEXT], 0.0);
        // Neither has a title: not "equal titles" but unknown.
        assert!(r[TITLE].is_nan());
        let r = compare(&side(&empty, &[], &[], 0.0), &side(&t, &w, &[1.0], 0.0));
        assert_eq!((r[TEXT], r[TITLE]), (1.0, 1.0));
        let r = compare(&side(&t, &w, &[1.0], 0.0), &side(&empty, &[], &[], 0.0));
        assert_eq!((r[TEXT], r[TITLE]), (1.0, 1.0));
        // Disjoint titles -> 1; partial overlap by hand.
        let mut u = t.clone();
        u.title_terms = vec![tf("other", 1), tf("title", 1)];
        let r = compare(&side(&t, &w, &[1.0], 0.0), &side(&u, &w, &[2.0, 1.0], 0.0));
        assert!((r[TITLE] - (1.0 - 1.0 / 5.0f64.sqrt())).abs() < 1e-12);
    }

    #[test]
    fn numbers_cases() {
        let mk = |v: &[&str]| Document {
            numbers: nums(v),
            ..Document::default()
        };
        let f =
            |a: &Document, b: &Document| compare(&side(a, &[], &[], 0.0), &side(b, &[], &[], 0.0));
        let (a, b) = (mk(&["6", "4", "6", "4"]), mk(&["4", "6", "4", "6"]));
        let r = f(&a, &b);
        assert_eq!(r[NUMBERS_INCLUSION], 0.0); // same set {4, 6}
        assert_eq!(r[NUMBERS_SEQUENCE], 2.0 / 4.0); // two transpositions
        let (a, b) = (mk(&["1", "2", "3", "3"]), mk(&["3", "9"]));
        assert!((f(&a, &b)[NUMBERS_INCLUSION] - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(f(&b, &a)[NUMBERS_INCLUSION], 0.5);
        assert_eq!(f(&a, &b)[NUMBERS_SEQUENCE], 3.0 / 4.0);
        let none = mk(&[]);
        assert_eq!(f(&none, &a)[NUMBERS_INCLUSION], 0.0);
        assert_eq!(f(&a, &none)[NUMBERS_INCLUSION], 1.0);
        assert_eq!(f(&none, &a)[NUMBERS_SEQUENCE], 1.0);
        // No numbers on either side: unknown, not "the same numbers"; the conflict
        // needs numbers on both.
        let r = f(&none, &none);
        assert!(r[NUMBERS_INCLUSION].is_nan() && r[NUMBERS_SEQUENCE].is_nan());
        assert!(f(&none, &a)[NUMBERS_CONFLICT].is_nan());
        assert_eq!(f(&a, &b)[NUMBERS_CONFLICT], 0.5);
    }

    #[test]
    fn dl_examples() {
        let dl = |a: &str, b: &str| {
            damerau_levenshtein(
                &a.chars().collect::<Vec<_>>(),
                &b.chars().collect::<Vec<_>>(),
            )
        };
        assert_eq!(dl("", ""), 0);
        assert_eq!(dl("abc", ""), 3);
        assert_eq!(dl("", "ab"), 2);
        assert_eq!(dl("ab", "ba"), 1); // transposition counts 1
        assert_eq!(dl("abcd", "acbd"), 1);
        assert_eq!(dl("kitten", "sitting"), 3);
        assert_eq!(dl("ca", "abc"), 3); // OSA, not unrestricted DL (2)
        assert_eq!(dl("abcdef", "abcdef"), 0);
        assert_eq!(dl("a", "b"), 1);
        // Symmetric.
        assert_eq!(dl("sunday", "saturday"), dl("saturday", "sunday"));
        assert_eq!(dl("sunday", "saturday"), 3);
    }

    /// Textbook OSA over the full (n+1)×(m+1) table, no trimming.
    fn osa_reference(a: &[u8], b: &[u8]) -> usize {
        let (n, m) = (a.len(), b.len());
        let mut d = vec![vec![0usize; m + 1]; n + 1];
        for (i, row) in d.iter_mut().enumerate() {
            row[0] = i;
        }
        for (j, cell) in d[0].iter_mut().enumerate() {
            *cell = j;
        }
        for i in 1..=n {
            for j in 1..=m {
                let cost = usize::from(a[i - 1] != b[j - 1]);
                d[i][j] = (d[i - 1][j] + 1)
                    .min(d[i][j - 1] + 1)
                    .min(d[i - 1][j - 1] + cost);
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
                }
            }
        }
        d[n][m]
    }

    #[test]
    fn dl_trimming_matches_full_table() {
        // Every pair of strings over {a, b, c} up to length 5, plus random longer ones.
        let mut all: Vec<Vec<u8>> = vec![vec![]];
        let mut frontier = vec![vec![]];
        for _ in 0..5 {
            let mut next = Vec::new();
            for s in &frontier {
                for c in [b'a', b'b', b'c'] {
                    let mut t: Vec<u8> = s.clone();
                    t.push(c);
                    next.push(t);
                }
            }
            all.extend(next.iter().cloned());
            frontier = next;
        }
        for x in &all {
            for y in all.iter().step_by(3) {
                assert_eq!(
                    damerau_levenshtein(x, y),
                    osa_reference(x, y),
                    "{x:?} {y:?}"
                );
            }
        }
        let mut g = 0x9E37_79B9_7F4A_7C15u64;
        let mut rnd = |len: usize| -> Vec<u8> {
            (0..len)
                .map(|_| {
                    g ^= g << 13;
                    g ^= g >> 7;
                    g ^= g << 17;
                    b'a' + (g % 4) as u8
                })
                .collect()
        };
        for k in 0..300 {
            let (x, y) = (rnd(5 + k % 20), rnd(3 + k % 17));
            assert_eq!(damerau_levenshtein(&x, &y), osa_reference(&x, &y));
        }
    }

    #[test]
    fn dl_caps_long_inputs() {
        let a: Vec<u32> = (0..5000).collect();
        let mut b = a.clone();
        b[10] = 99_999; // inside the cap: counts
        b[4000] = 99_999; // past the cap: ignored
        assert_eq!(damerau_levenshtein(&a, &b), 1);
        let short: Vec<u32> = (0..10).collect();
        assert_eq!(damerau_levenshtein(&a, &short), DL_MAX_LEN - 10);
        let d = Document {
            numbers: (0..3000).map(|i| i.to_string()).collect(),
            ..Document::default()
        };
        let e = Document {
            numbers: (0..5).map(|i| i.to_string()).collect(),
            ..Document::default()
        };
        let r = compare(&side(&d, &[], &[], 0.0), &side(&e, &[], &[], 0.0));
        assert_eq!(
            r[NUMBERS_SEQUENCE],
            (DL_MAX_LEN - 5) as f64 / DL_MAX_LEN as f64
        );
    }

    #[test]
    fn counts_time_and_authority() {
        let mut a = Document {
            images: 1,
            links: 10,
            published_at: Some(90_000_000),
            ..Document::default()
        };
        let b = Document {
            images: 4,
            links: 2,
            published_at: Some(30_500_000),
            ..Document::default()
        };
        let r = compare(&side(&a, &[], &[], 0.25), &side(&b, &[], &[], 0.75));
        assert_eq!(r[IMAGES], -3.0);
        assert_eq!(r[LINKS], 8.0);
        assert_eq!(r[TIME], 59.5);
        assert_eq!((r[AUTHORITY_A], r[AUTHORITY_B]), (0.25, 0.75));
        a.published_at = None;
        assert!(compare(&side(&a, &[], &[], 0.0), &side(&b, &[], &[], 0.0))[TIME].is_nan());
        // Extreme timestamps do not overflow.
        a.published_at = Some(i64::MAX);
        let c = Document {
            published_at: Some(i64::MIN),
            ..Document::default()
        };
        let r = compare(&side(&a, &[], &[], 0.0), &side(&c, &[], &[], 0.0));
        assert!(r[TIME].is_finite() && r[TIME] > 1e13);
    }

    #[test]
    fn outputs_are_always_finite() {
        let d = doc_from(&[&["x", "y"], &["z"]], 1);
        let e = doc_from(&[&["x"], &["w"]], 1);
        let mut td = d.clone();
        td.title_terms = vec![tf("t", 1)];
        let bad = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY];
        for &x in &bad {
            for &y in &bad {
                let wd = [x, 1.0, y];
                let we = [y, x];
                let r = compare(&side(&td, &wd, &[x], x), &side(&e, &we, &[y], y));
                for (k, v) in r.iter().enumerate() {
                    if [
                        TIME,
                        TIME_GAP,
                        NUMBERS_INCLUSION,
                        NUMBERS_SEQUENCE,
                        NUMBERS_CONFLICT,
                        NUMBERS_CLASH,
                        TRIGRAMS,
                        WORD_ORDER,
                    ]
                    .contains(&k)
                    {
                        assert!(
                            v.is_nan(),
                            "absent on both sides: {} is unknown",
                            FEATURE_NAMES[k]
                        );
                        continue;
                    }
                    assert!(v.is_finite(), "{} = {v}", FEATURE_NAMES[k]);
                    assert!(v.abs() <= FEATURE_LIMIT);
                }
            }
        }
        assert_eq!(sanitize(f64::NAN), 0.0);
        assert_eq!(sanitize(f64::INFINITY), FEATURE_LIMIT);
        assert_eq!(sanitize(f64::NEG_INFINITY), -FEATURE_LIMIT);
        // Weight slices shorter than the term lists and stray segment indices: no panic.
        let mut broken = d.clone();
        broken.sentences.push(Segment {
            hash: 1,
            terms: vec![1000],
        });
        let r = compare(&side(&broken, &[1.0], &[], 0.0), &side(&e, &[], &[], 0.0));
        assert!(r.iter().enumerate().all(|(k, v)| v.is_finite()
            || [
                TIME,
                TIME_GAP,
                TITLE,
                NUMBERS_INCLUSION,
                NUMBERS_SEQUENCE,
                NUMBERS_CONFLICT,
                NUMBERS_CLASH,
                TRIGRAMS,
                WORD_ORDER
            ]
            .contains(&k)));
    }

    /// A 500-word news-like document: 25 sentences of 20 words from a Zipf-ish
    /// vocabulary, 5 paragraphs, 12 numbers.
    fn synthetic(seed: u64, shift: usize) -> (Document, Vec<f64>) {
        // Stems of 3-9 random Cyrillic letters (2 UTF-8 bytes each, like real ones).
        let letters: Vec<char> = "абвгдежзиклмнопрстуфхцчшыэюя".chars().collect();
        let mut g = 0x2545F4914F6CDD1Du64;
        let vocab: Vec<String> = (0..2000)
            .map(|_| {
                g ^= g << 13;
                g ^= g >> 7;
                g ^= g << 17;
                let len = 3 + (g % 7) as usize;
                (0..len)
                    .map(|k| letters[((g >> (8 + 5 * k)) % letters.len() as u64) as usize])
                    .collect()
            })
            .collect();
        let mut x = seed;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let sentences: Vec<Vec<&str>> = (0..25)
            .map(|s| {
                (0..20)
                    .map(|_| {
                        let r = (next() % 1_000_000) as f64 / 1e6;
                        let k = ((r * r * r * 1500.0) as usize + if s >= 20 { shift } else { 0 })
                            % vocab.len();
                        vocab[k].as_str()
                    })
                    .collect()
            })
            .collect();
        let refs: Vec<&[&str]> = sentences.iter().map(|s| s.as_slice()).collect();
        let mut d = doc_from(&refs, 5);
        // 12 numbers; the copy changes the last four.
        d.numbers = (0..12)
            .map(|i| {
                format!(
                    "{}.{}",
                    1000 + i * 7,
                    if shift > 0 && i >= 8 { 9 } else { 5 }
                )
            })
            .collect();
        d.title_terms = vec![tf("заголовок", 1), tf("новость", 1), tf("рынок", 1)];
        d.published_at = Some(seed as i64 * 1_000_000);
        let w = d
            .terms
            .iter()
            .enumerate()
            .map(|(i, t)| t.tf as f64 * (1.0 + (i % 7) as f64))
            .collect();
        (d, w)
    }

    /// `cargo test --release -- --ignored --nocapture bench_compare`
    #[test]
    #[ignore]
    fn bench_compare() {
        let (a, wa) = synthetic(0x9E3779B97F4A7C15, 0);
        let (b, wb) = synthetic(0x9E3779B97F4A7C15, 300); // last 5 sentences differ
        let tw = [1.0, 1.0, 1.0];
        println!(
            "terms {} / {}, sentences {}, paragraphs {}, numbers {}",
            a.terms.len(),
            b.terms.len(),
            a.sentences.len(),
            a.paragraphs.len(),
            a.numbers.len()
        );
        let (sa, sb) = (side(&a, &wa, &tw, 0.5), side(&b, &wb, &tw, 0.5));
        // Best of 2000 short batches: the minimum is the least disturbed by other processes.
        let best_us = |f: &dyn Fn() -> f64| {
            let mut best = f64::INFINITY;
            for _ in 0..2000 {
                let t = std::time::Instant::now();
                let mut acc = 0.0;
                for _ in 0..200 {
                    acc += f();
                }
                std::hint::black_box(acc);
                best = best.min(t.elapsed().as_secs_f64() * 1e6 / 200.0);
            }
            best
        };
        let us = best_us(&|| compare(std::hint::black_box(&sa), std::hint::black_box(&sb))[0]);
        println!("compare: {us:.3} µs/pair");
        let (pa, pb) = (Prepared::new(&sa), Prepared::new(&sb));
        let us = best_us(&|| {
            compare_prepared(
                std::hint::black_box(&sa),
                &pa,
                std::hint::black_box(&sb),
                &pb,
            )
            .0[0]
        });
        println!("compare_prepared (both directions): {us:.3} µs/pair");
        let us = best_us(&|| Prepared::new(std::hint::black_box(&sa)).heap_bytes() as f64);
        println!("Prepared::new: {us:.3} µs/document");
        let hashes: Vec<u64> = a
            .terms
            .iter()
            .map(|t| xxhash_rust::xxh3::xxh3_64(t.term.as_bytes()))
            .collect();
        let us = best_us(&|| {
            crate::document::sentence_bigrams(std::hint::black_box(&hashes), &a.sentences)
                .0
                .len() as f64
        });
        println!("  sentence_bigrams: {us:.3} µs");
        let us = best_us(&|| {
            std::hint::black_box(&a)
                .terms
                .iter()
                .filter_map(|t| crate::numerals::key(t.term.as_bytes()))
                .count() as f64
        });
        println!("  numerals (hash and look up): {us:.3} µs");
        let us = best_us(&|| {
            std::hint::black_box(&a)
                .terms
                .iter()
                .map(|t| crate::document::prefix_key(t.term.as_bytes()))
                .sum::<u64>() as f64
        });
        println!("  prefix keys: {us:.3} µs");
        let terms = hash_keys(&hashes, wa.len());
        let pk: Vec<u64> = a
            .terms
            .iter()
            .map(|t| crate::document::prefix_key(t.term.as_bytes()))
            .collect();
        let us = best_us(&|| coverage_keys(std::hint::black_box(&sa), &terms, &hashes, &pk).total);
        println!("  coverage keys: {us:.3} µs");
        // An unrelated pair (another seed: shared vocabulary, different text).
        let (c, wc) = synthetic(0x1234_5678_9abc_def1, 0);
        let sc = side(&c, &wc, &tw, 0.5);
        let pc = Prepared::new(&sc);
        let us = best_us(&|| {
            compare_prepared(
                std::hint::black_box(&sa),
                &pa,
                std::hint::black_box(&sc),
                &pc,
            )
            .0[0]
        });
        println!("compare_prepared, unrelated pair: {us:.3} µs/pair");
        println!("rho = {:?}", compare(&sa, &sb));
        let parts: [(&str, &dyn Fn() -> f64); 4] = [
            ("text", &|| {
                cosine_distance(std::hint::black_box(&a.terms), &wa, &b.terms, &wb)
            }),
            ("sentences", &|| {
                segment_inclusion(std::hint::black_box(&a.sentences), &wa, &b.sentences)
            }),
            ("paragraphs", &|| {
                segment_inclusion(std::hint::black_box(&a.paragraphs), &wa, &b.paragraphs)
            }),
            ("numbers", &|| {
                let (x, y) = numbers_features(std::hint::black_box(&a.numbers), &b.numbers);
                x + y
            }),
        ];
        for (name, f) in parts {
            println!("  {name}: {:.3} µs", best_us(f));
        }
    }
}
