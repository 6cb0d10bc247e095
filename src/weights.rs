//! Term weighting against collection statistics: Okapi BM25 and TF-RIDF.
//!
//! Pure Rust, no pgrx. The caller looks up the collection statistics of a
//! document's terms (`df`, `cf`, `N`, total length) and gets back one weight per
//! term, aligned with `Document::terms` (or `title_terms`). Those weights feed the
//! cosine and inclusion measures in [`crate::features`].
//!
//! Every weight returned here is finite and `>= 0`, whatever the statistics: the
//! statistics may lag behind the documents (a document weighted against stats that
//! do not include it yet sees `df = 0` for its new words), and a NaN here would
//! poison every comparison downstream.
//!
//! [`StatsAccumulator`] is the state of the `term_stats_agg` aggregate: it counts
//! `N`, the total length, and `df`/`cf` per term in one pass, and two states merge
//! (parallel aggregation) or shrink (moving aggregates).

use std::collections::HashMap;

use crate::document::{Document, TermFreq};
use crate::error::{DedupError, Result};

/// The term-weighting scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Weighting {
    /// Okapi BM25 with Lucene's always-positive IDF (Andreev et al. §5.1).
    Bm25,
    /// TF-RIDF: augmented TF times residual IDF (Romanov 2019 §3.2).
    TfRidf,
}

impl Weighting {
    /// Parses `'bm25'` or `'tf_ridf'` (ASCII case-insensitive, surrounding blanks ignored).
    pub fn parse(s: &str) -> Result<Weighting> {
        let t = s.trim();
        if t.eq_ignore_ascii_case("bm25") {
            Ok(Weighting::Bm25)
        } else if t.eq_ignore_ascii_case("tf_ridf") {
            Ok(Weighting::TfRidf)
        } else {
            Err(DedupError::InvalidParameter {
                msg: format!(
                    "unrecognized weighting scheme \"{}\"",
                    crate::error::excerpt(s)
                ),
                hint: Some("valid schemes are \"bm25\" and \"tf_ridf\"".into()),
            })
        }
    }

    /// The canonical SQL spelling, the inverse of [`Weighting::parse`].
    pub fn as_str(&self) -> &'static str {
        match self {
            Weighting::Bm25 => "bm25",
            Weighting::TfRidf => "tf_ridf",
        }
    }
}

/// Weighting parameters. `k1` and `b` are used by BM25 only.
#[derive(Clone, Copy, Debug)]
pub struct Params {
    pub weighting: Weighting,
    /// BM25 term-frequency saturation, in `[0, 10]` (0 = binary tf).
    pub k1: f64,
    /// BM25 length normalisation, in `[0, 1]` (0 = none).
    pub b: f64,
}

impl Params {
    /// Validated constructor: `k1` finite in `[0, 10]`, `b` finite in `[0, 1]`.
    pub fn new(weighting: Weighting, k1: f64, b: f64) -> Result<Params> {
        if !(k1.is_finite() && (0.0..=10.0).contains(&k1)) {
            return Err(DedupError::InvalidParameter {
                msg: format!(
                    "k1 must be between 0 and 10, got {}",
                    crate::error::number(k1)
                ),
                hint: Some("2.0 is the default, 1.2 the usual BM25 value".into()),
            });
        }
        if !(b.is_finite() && (0.0..=1.0).contains(&b)) {
            return Err(DedupError::InvalidParameter {
                msg: format!("b must be between 0 and 1, got {}", crate::error::number(b)),
                hint: Some("0.75 is the usual value".into()),
            });
        }
        Ok(Params { weighting, k1, b })
    }
}

/// Collection-wide counts: the number of documents `N` and the sum of their lengths.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CollectionStats {
    pub n_docs: i64,
    pub total_len: i64,
}

/// Per-term counts: `df` documents contain the term, `cf` occurrences in all.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TermStat {
    pub df: i64,
    pub cf: i64,
}

/// The smallest RIDF a term gets. RIDF is negative for words spread more evenly
/// than Poisson predicts (and slightly negative for every hapax: with `df = cf = 1`,
/// `RIDF = ln(N·(1 − e^(−1/N))) ≈ −1/(2N)`). Clamping at a small positive floor keeps
/// weights `>= 0`, so cosine stays in `[0, 1]`, and keeps such words from vanishing
/// entirely, so a document made only of them still has a non-zero vector.
pub const RIDF_FLOOR: f64 = 0.01;

/// Weight of each term of `terms`, aligned with `terms`.
///
/// `stats[i]` is the collection statistic of `terms[i]`; `df = cf = 0` (or a missing
/// entry when `stats` is shorter) means the term is unseen. `doc_len` is the BM25
/// document length ([`Document::length`] for bodies). The result is always finite
/// and `>= 0`.
///
/// - BM25: `w = idf · tf·(k1+1) / (tf + k1·(1 − b + b·dl/avgdl))`, `idf` from
///   [`bm25_idf`], `avgdl = total_len / n_docs`; `dl/avgdl = 1` when the collection
///   is empty or has zero total length.
/// - TF-RIDF: `w = (0.5 + 0.5·tf/tf_max) · ridf`, `tf_max` over `terms`. An unseen
///   term (`df <= 0`) is weighted as if this document were its only occurrence:
///   `df = 1`, `cf = max(cf, tf)`, so a word repeated in a new document still gets
///   the burstiness credit RIDF is about. See [`ridf`] for the other edge cases.
pub fn term_weights(
    terms: &[TermFreq],
    doc_len: i64,
    coll: &CollectionStats,
    stats: &[TermStat],
    p: &Params,
) -> Vec<f64> {
    let stat = |i: usize| stats.get(i).copied().unwrap_or_default();
    let out: Vec<f64> = match p.weighting {
        Weighting::Bm25 => {
            let rel_len = if coll.n_docs > 0 && coll.total_len > 0 {
                doc_len.max(0) as f64 * coll.n_docs as f64 / coll.total_len as f64
            } else {
                1.0
            };
            let norm = p.k1 * (1.0 - p.b + p.b * rel_len);
            terms
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    let tf = t.tf as f64;
                    let denom = tf + norm;
                    if denom > 0.0 {
                        bm25_idf(coll.n_docs, stat(i).df) * tf * (p.k1 + 1.0) / denom
                    } else {
                        0.0
                    }
                })
                .collect()
        }
        Weighting::TfRidf => {
            let tf_max = terms.iter().map(|t| t.tf).max().unwrap_or(0).max(1) as f64;
            terms
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    let s = stat(i);
                    let r = if s.df <= 0 {
                        ridf(coll.n_docs, 1, s.cf.max(t.tf as i64))
                    } else {
                        ridf(coll.n_docs, s.df, s.cf)
                    };
                    (0.5 + 0.5 * t.tf as f64 / tf_max) * r
                })
                .collect()
        }
    };
    out.into_iter()
        .map(|w| if w.is_finite() && w > 0.0 { w } else { 0.0 })
        .collect()
}

/// The k heaviest body terms of `doc` with their weights `w` (aligned with its
/// terms), heaviest first, ties by term.
pub fn top_terms(doc: &Document, w: &[f64], k: usize) -> Vec<(String, f64)> {
    let mut v: Vec<(String, f64)> = doc
        .terms
        .iter()
        .zip(w)
        .map(|(t, &w)| (t.term.to_string(), w))
        .collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v.truncate(k);
    v
}

/// Whether [`term_weights`] gives every term with tf > 0 a weight > 0 under these
/// statistics, whatever its df and cf: true for BM25 (Lucene's IDF is > 0, the tf
/// part is > 0) while N is small enough that `1 + 0.5/(N + 0.5)` still differs from
/// 1 in f64. TF-RIDF can weigh a term 0. `features::bounds` relies on it.
pub fn weights_positive(coll: &CollectionStats, p: &Params) -> bool {
    p.weighting == Weighting::Bm25 && coll.n_docs < 1_000_000_000_000_000
}

/// BM25 inverse document frequency, Lucene's form: `ln(1 + (N − df + 0.5)/(df + 0.5))`.
///
/// Unlike the classic Robertson–Spärck Jones `ln((N − df + 0.5)/(df + 0.5))` it never
/// goes negative for words in more than half the documents, so weights stay `>= 0`.
/// Inconsistent inputs are clamped (`N >= 0`, `0 <= df <= N`), which keeps the
/// result finite and `> 0`; an unseen term (`df = 0`) gets the largest IDF.
pub fn bm25_idf(n: i64, df: i64) -> f64 {
    let n = n.max(0) as f64;
    let df = (df.max(0) as f64).min(n);
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// Residual IDF (Church & Gale; Romanov 2019 §3.2): `IDF − IDF_Poisson` with
/// `IDF = −ln(df/N)` and `IDF_Poisson = −ln(1 − exp(−cf/N))`, floored at
/// [`RIDF_FLOOR`].
///
/// Edge cases, so that the result is always finite and `>= RIDF_FLOOR`:
/// `N` is taken as `max(N, 1)`, `df` is clamped to `[1, N]` (a term is at least in
/// the document being weighted), and `cf` to `>= df` (each containing document holds
/// it at least once). Then `0 < cf/N` and both logarithms are finite.
pub fn ridf(n: i64, df: i64, cf: i64) -> f64 {
    let n = n.max(1);
    let df = df.clamp(1, n);
    let cf = cf.max(df);
    let (n, df, cf) = (n as f64, df as f64, cf as f64);
    let idf = (n / df).ln();
    // 1 − e^(−x) computed as −expm1(−x): exact for the tiny cf/N of rare words.
    let idf_poisson = -(-(-cf / n).exp_m1()).ln();
    let r = idf - idf_poisson;
    if r.is_finite() {
        r.max(RIDF_FLOOR)
    } else {
        RIDF_FLOOR
    }
}

/// The largest result `term_stats_agg` builds: a jsonb object holds at most
/// 256 MB of keys and values (0x0FFFFFFF bytes), and past about 8 million keys
/// `jsonb_in` asks for more than the 1 GB PostgreSQL allocates at once (an audit:
/// XX000 at 9 million terms, after 7 GB and half a minute).
pub const MAX_RESULT_BYTES: usize = 256 * 1024 * 1024;

/// A term's bytes in `term_stats_agg`'s result besides its text: two counts and
/// the syntax around them (jsonb's entries, or the serialised state's).
const RESULT_BYTES_PER_TERM: usize = 48;

/// State of the `term_stats_agg` aggregate: `N`, total length, and per-term `df`/`cf`.
///
/// `add` then `remove` of the same document restores the state exactly (terms whose
/// `df` drops to 0 are dropped), and `merge` of two states equals accumulating both
/// document sets in one, so the aggregate is parallel-safe and usable as a moving
/// aggregate.
#[derive(Default, Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StatsAccumulator {
    pub n_docs: i64,
    pub total_len: i64,
    pub terms: HashMap<String, TermStat>,
}

impl StatsAccumulator {
    /// Counts one document: `N += 1`, `total_len += length`, `df += 1` and
    /// `cf += tf` for each of its body terms.
    pub fn add(&mut self, doc: &Document) {
        self.n_docs += 1;
        self.total_len = self.total_len.saturating_add(len_i64(doc));
        for t in &doc.terms {
            if let Some(s) = self.terms.get_mut(t.term.as_str()) {
                s.df += 1;
                s.cf += t.tf as i64;
            } else {
                self.terms.insert(
                    t.term.to_string(),
                    TermStat {
                        df: 1,
                        cf: t.tf as i64,
                    },
                );
            }
        }
    }

    /// Uncounts a document previously added. Counts never go below zero (removing a
    /// document that was never added is a caller bug; it cannot produce `N < 0`), and a
    /// term whose `df` reaches zero is dropped.
    pub fn remove(&mut self, doc: &Document) {
        self.n_docs = (self.n_docs - 1).max(0);
        self.total_len = (self.total_len - len_i64(doc)).max(0);
        for t in &doc.terms {
            if let Some(s) = self.terms.get_mut(t.term.as_str()) {
                s.df -= 1;
                s.cf = (s.cf - t.tf as i64).max(0);
                if s.df <= 0 {
                    self.terms.remove(t.term.as_str());
                }
            }
        }
    }

    /// An upper estimate of the bytes its result takes (the aggregate's jsonb, or
    /// its serialised state): each term's text and two counts with their syntax.
    /// PostgreSQL holds neither past 1 GB, so the aggregate refuses a state whose
    /// estimate passes [`MAX_RESULT_BYTES`] before it builds the result.
    pub fn result_bytes(&self) -> usize {
        self.terms
            .keys()
            .map(|t| t.len() + RESULT_BYTES_PER_TERM)
            .fold(64, usize::saturating_add)
    }

    /// Whether the result surely passes [`MAX_RESULT_BYTES`], by the count of
    /// terms alone (each takes more than [`RESULT_BYTES_PER_TERM`]): what the
    /// aggregate checks after each row, to refuse a state before it grows further.
    pub fn surely_too_large(&self) -> bool {
        self.terms.len() > MAX_RESULT_BYTES / RESULT_BYTES_PER_TERM
    }

    /// Adds another state into this one (the aggregate's combine function).
    pub fn merge(&mut self, mut other: StatsAccumulator) {
        // Fold the smaller map into the larger.
        if other.terms.len() > self.terms.len() {
            std::mem::swap(&mut self.terms, &mut other.terms);
        }
        self.n_docs += other.n_docs;
        self.total_len = self.total_len.saturating_add(other.total_len);
        for (term, s) in other.terms {
            let e = self.terms.entry(term).or_default();
            e.df += s.df;
            e.cf += s.cf;
        }
    }

    /// The collection-wide part of the state.
    pub fn collection(&self) -> CollectionStats {
        CollectionStats {
            n_docs: self.n_docs,
            total_len: self.total_len,
        }
    }

    /// Terms with their statistics, sorted by term (byte order, as in `Document`).
    pub fn sorted_terms(&self) -> Vec<(&str, TermStat)> {
        let mut v: Vec<(&str, TermStat)> =
            self.terms.iter().map(|(k, s)| (k.as_str(), *s)).collect();
        v.sort_unstable_by(|a, b| a.0.cmp(b.0));
        v
    }
}

fn len_i64(doc: &Document) -> i64 {
    i64::try_from(doc.length()).unwrap_or(i64::MAX)
}

/// Serial form of a [`StatsAccumulator`] (the aggregate's SERIALFUNC): three i64
/// headers, then per term a u32 length, the UTF-8 bytes, df and cf, all little-endian.
impl StatsAccumulator {
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(24 + self.terms.len() * 28);
        out.extend_from_slice(&self.n_docs.to_le_bytes());
        out.extend_from_slice(&self.total_len.to_le_bytes());
        out.extend_from_slice(&(self.terms.len() as i64).to_le_bytes());
        for (t, s) in &self.terms {
            out.extend_from_slice(&(t.len() as u32).to_le_bytes());
            out.extend_from_slice(t.as_bytes());
            out.extend_from_slice(&s.df.to_le_bytes());
            out.extend_from_slice(&s.cf.to_le_bytes());
        }
        out
    }

    /// Inverse of [`StatsAccumulator::to_bytes`]; malformed bytes are `Corrupted`.
    pub fn from_bytes(b: &[u8]) -> Result<StatsAccumulator> {
        let bad = || DedupError::corrupted("term statistics state bytes are malformed");
        let mut pos = 0usize;
        let mut take = |n: usize| -> Result<&[u8]> {
            let end = pos.checked_add(n).ok_or_else(bad)?;
            let s = b.get(pos..end).ok_or_else(bad)?;
            pos = end;
            Ok(s)
        };
        let i64_at = |s: &[u8]| -> i64 {
            let mut a = [0u8; 8];
            a.copy_from_slice(s);
            i64::from_le_bytes(a)
        };
        let n_docs = i64_at(take(8)?);
        let total_len = i64_at(take(8)?);
        let n = i64_at(take(8)?);
        // Each term takes at least 20 bytes (length, df, cf): the map is never
        // reserved for more than the rest of the bytes could hold.
        if n < 0 || n as u64 > (b.len() / 20) as u64 {
            return Err(bad());
        }
        let mut terms = HashMap::with_capacity(n as usize);
        for _ in 0..n {
            let mut l = [0u8; 4];
            l.copy_from_slice(take(4)?);
            let t = std::str::from_utf8(take(u32::from_le_bytes(l) as usize)?)
                .map_err(|_| bad())?
                .to_owned();
            let df = i64_at(take(8)?);
            let cf = i64_at(take(8)?);
            terms.insert(t, TermStat { df, cf });
        }
        if pos != b.len() {
            return Err(bad());
        }
        Ok(StatsAccumulator {
            n_docs,
            total_len,
            terms,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_terms_are_the_heaviest_first_ties_by_term() {
        let d = doc(&[("alpha", 1), ("beta", 1), ("gamma", 1), ("delta", 1)]);
        // Terms sorted: alpha, beta, delta, gamma.
        let top = top_terms(&d, &[1.0, 3.0, 3.0, 2.0], 3);
        let names: Vec<&str> = top.iter().map(|t| t.0.as_str()).collect();
        assert_eq!(names, ["beta", "delta", "gamma"]);
        assert_eq!(top_terms(&d, &[1.0; 4], 10).len(), 4, "k past the terms");
        assert!(top_terms(&d, &[1.0; 4], 0).is_empty());
    }

    fn doc(terms: &[(&str, u32)]) -> Document {
        let mut t: Vec<TermFreq> = terms
            .iter()
            .map(|&(term, tf)| TermFreq {
                term: term.into(),
                tf,
            })
            .collect();
        t.sort_by(|a, b| a.term.cmp(&b.term));
        Document {
            terms: t,
            ..Document::default()
        }
    }

    /// d1 = {a:2, b:1}, d2 = {a:1, c:3}, d3 = {b:1, c:1, d:1}, d4 = {e:5, f:1}.
    /// N = 4, total_len = 3 + 4 + 3 + 6 = 16, avgdl = 4.
    /// df/cf: a 2/3, b 2/2, c 2/4, d 1/1, e 1/5, f 1/1.
    fn corpus() -> Vec<Document> {
        vec![
            doc(&[("a", 2), ("b", 1)]),
            doc(&[("a", 1), ("c", 3)]),
            doc(&[("b", 1), ("c", 1), ("d", 1)]),
            doc(&[("e", 5), ("f", 1)]),
        ]
    }

    fn accumulate(docs: &[Document]) -> StatsAccumulator {
        let mut acc = StatsAccumulator::default();
        for d in docs {
            acc.add(d);
        }
        acc
    }

    fn weights_of(d: &Document, acc: &StatsAccumulator, p: &Params) -> Vec<f64> {
        let stats: Vec<TermStat> = d
            .terms
            .iter()
            .map(|t| acc.terms.get(t.term.as_str()).copied().unwrap_or_default())
            .collect();
        term_weights(&d.terms, d.length() as i64, &acc.collection(), &stats, p)
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn corpus_stats() {
        let acc = accumulate(&corpus());
        assert_eq!(acc.n_docs, 4);
        assert_eq!(acc.total_len, 16);
        let s = acc.sorted_terms();
        let names: Vec<&str> = s.iter().map(|x| x.0).collect();
        assert_eq!(names, ["a", "b", "c", "d", "e", "f"]);
        assert_eq!(s[0].1, TermStat { df: 2, cf: 3 });
        assert_eq!(s[2].1, TermStat { df: 2, cf: 4 });
        assert_eq!(s[4].1, TermStat { df: 1, cf: 5 });
    }

    #[test]
    fn bm25_weights_by_hand() {
        let docs = corpus();
        let acc = accumulate(&docs);
        let p = Params::new(Weighting::Bm25, 1.2, 0.75).unwrap();
        // d1: dl = 3, avgdl = 4; a: tf 2, df 2; b: tf 1, df 2.
        let w = weights_of(&docs[0], &acc, &p);
        let idf_df2 = (1.0f64 + (4.0 - 2.0 + 0.5) / (2.0 + 0.5)).ln(); // ln 2
        let norm = 1.2 * (1.0 - 0.75 + 0.75 * 3.0 / 4.0);
        assert!(close(w[0], idf_df2 * 2.0 * 2.2 / (2.0 + norm)));
        assert!(close(w[1], idf_df2 * 1.0 * 2.2 / (1.0 + norm)));
        assert!(close(idf_df2, std::f64::consts::LN_2));
        // d4: dl = 6; e: tf 5, df 1; f: tf 1, df 1.
        let w = weights_of(&docs[3], &acc, &p);
        let idf_df1 = (1.0f64 + 3.5 / 1.5).ln();
        let norm = 1.2 * (1.0 - 0.75 + 0.75 * 6.0 / 4.0);
        assert!(close(w[0], idf_df1 * 5.0 * 2.2 / (5.0 + norm)));
        assert!(close(w[1], idf_df1 * 2.2 / (1.0 + norm)));
        // b = 0: no length normalisation; k1 = 0: w = idf.
        let p0 = Params::new(Weighting::Bm25, 0.0, 0.0).unwrap();
        let w = weights_of(&docs[3], &acc, &p0);
        assert!(close(w[0], idf_df1) && close(w[1], idf_df1));
    }

    #[test]
    fn tf_ridf_weights_by_hand() {
        let docs = corpus();
        let acc = accumulate(&docs);
        let p = Params::new(Weighting::TfRidf, 1.2, 0.75).unwrap();
        // d2 = {a:1, c:3}: tf_max = 3.
        // a: df 2, cf 3 -> ln 2 + ln(1 - e^-0.75) = 0.6931 - 0.6394 = 0.0537.
        // c: df 2, cf 4 -> ln 2 + ln(1 - e^-1) = 0.6931 - 0.4587 = 0.2345.
        let w = weights_of(&docs[1], &acc, &p);
        let e = std::f64::consts::E;
        let ridf_a = 2.0f64.ln() + (1.0 - (-0.75f64).exp()).ln();
        assert!(ridf_a > 0.05 && ridf_a < 0.055);
        assert!(close(w[0], (0.5 + 0.5 * 1.0 / 3.0) * ridf_a));
        let ridf_c = (4.0f64 / 2.0).ln() + (1.0 - 1.0 / e).ln();
        assert!(ridf_c > 0.2 && ridf_c < 0.25);
        assert!(close(w[1], 1.0 * ridf_c));
        // d4 = {e:5, f:1}: tf_max 5. e: df 1, cf 5 -> ln 4 + ln(1 - e^-1.25) = 1.0485.
        // f: df 1, cf 1 -> ln 4 + ln(1 - e^-0.25) = 1.3863 - 1.5087 < 0 -> floor.
        let w = weights_of(&docs[3], &acc, &p);
        let ridf_e = 4.0f64.ln() + (1.0 - (-1.25f64).exp()).ln();
        assert!(ridf_e > 1.04 && ridf_e < 1.05);
        assert!(close(w[0], 1.0 * ridf_e));
        assert!(close(w[1], (0.5 + 0.5 / 5.0) * RIDF_FLOOR));
        assert!(close(ridf(4, 1, 5), ridf_e));
        // d1 = {a:2, b:1}: tf_max 2. b: df 2, cf 2 -> ln 2 + ln(1 - e^-0.5) = -0.2396 -> floor.
        let w = weights_of(&docs[0], &acc, &p);
        assert!(close(w[0], 1.0 * ridf_a));
        assert!(close(w[1], (0.5 + 0.5 / 2.0) * RIDF_FLOOR));
    }

    #[test]
    fn unseen_terms_and_empty_collections() {
        let p = Params::new(Weighting::TfRidf, 1.2, 0.75).unwrap();
        let d = doc(&[("new", 3), ("old", 1)]);
        // Stats that do not include d: "new" unseen, "old" in 10 of 100 docs.
        let coll = CollectionStats {
            n_docs: 100,
            total_len: 5000,
        };
        let stats = [TermStat::default(), TermStat { df: 10, cf: 40 }];
        let w = term_weights(&d.terms, 4, &coll, &stats, &p);
        // "new" is treated as df = 1, cf = 3: ln 100 + ln(1 - e^-0.03).
        let expect_new = 100.0f64.ln() + (1.0 - (-0.03f64).exp()).ln();
        assert!(close(w[0], 1.0 * expect_new));
        // Missing stats entries count as unseen, never panic.
        let w2 = term_weights(&d.terms, 4, &coll, &stats[..1], &p);
        assert!(close(w2[1], (0.5 + 0.5 / 3.0) * ridf(100, 1, 1)));
        // Empty collection, both schemes: finite, >= 0.
        let empty = CollectionStats::default();
        for scheme in [Weighting::Bm25, Weighting::TfRidf] {
            let p = Params::new(scheme, 1.2, 0.75).unwrap();
            for w in term_weights(&d.terms, 4, &empty, &[], &p) {
                assert!(w.is_finite() && w > 0.0, "{scheme:?} {w}");
            }
        }
        // BM25 on an empty collection: idf = ln 2, dl/avgdl = 1.
        let pb = Params::new(Weighting::Bm25, 1.2, 0.75).unwrap();
        let w = term_weights(&d.terms, 4, &empty, &[], &pb);
        assert!(close(w[0], 2.0f64.ln() * 3.0 * 2.2 / (3.0 + 1.2)));
        assert!(term_weights(&[], 0, &coll, &[], &p).is_empty());
    }

    #[test]
    fn bm25_weights_are_positive_when_weights_positive_says_so() {
        let terms: Vec<TermFreq> = (1..40)
            .map(|i| TermFreq {
                term: format!("t{i}").as_str().into(),
                tf: (i % 7 + 1) as u32,
            })
            .collect();
        for &(n, total) in &[
            (0i64, 0i64),
            (1, 1),
            (10, 10_000),
            (1_000_000, 5),
            (999_999_999_999_999, i64::MAX),
        ] {
            for &(k1, b) in &[(0.0, 0.0), (1.2, 0.75), (10.0, 1.0)] {
                let coll = CollectionStats {
                    n_docs: n,
                    total_len: total,
                };
                let p = Params::new(Weighting::Bm25, k1, b).unwrap();
                assert!(weights_positive(&coll, &p));
                let stats: Vec<TermStat> = (0..terms.len() as i64)
                    .map(|i| TermStat {
                        df: [0, 1, n, n + 5, -3][i as usize % 5],
                        cf: i,
                    })
                    .collect();
                for len in [0i64, 1, 100, i64::MAX / 2] {
                    let w = term_weights(&terms, len, &coll, &stats, &p);
                    assert!(
                        w.iter().all(|&x| x > 0.0),
                        "{n} {total} {k1} {b} {len}: {w:?}"
                    );
                }
            }
        }
        let p = Params::new(Weighting::TfRidf, 1.2, 0.75).unwrap();
        assert!(!weights_positive(&CollectionStats::default(), &p));
    }

    #[test]
    fn idf_edge_cases_stay_finite_and_positive() {
        for (n, df) in [
            (0, 0),
            (0, 5),
            (1, 1),
            (10, 10),
            (10, 20),
            (-3, -1),
            (i64::MAX, 1),
        ] {
            let v = bm25_idf(n, df);
            assert!(v.is_finite() && v > 0.0, "bm25_idf({n},{df}) = {v}");
        }
        assert!(close(bm25_idf(10, 0), (1.0f64 + 10.5 / 0.5).ln()));
        for (n, df, cf) in [
            (0, 0, 0),
            (1, 1, 1),
            (10, 10, 10),
            (10, 20, 5),
            (-1, -1, -1),
            (i64::MAX, 1, 1),
            (i64::MAX, i64::MAX, i64::MAX),
            (3, 1, i64::MAX),
        ] {
            let v = ridf(n, df, cf);
            assert!(
                v.is_finite() && v >= RIDF_FLOOR,
                "ridf({n},{df},{cf}) = {v}"
            );
        }
        // A word in every document is worthless: floor.
        assert_eq!(ridf(50, 50, 80), RIDF_FLOOR);
    }

    #[test]
    fn parse_and_params() {
        assert_eq!(Weighting::parse("bm25").unwrap(), Weighting::Bm25);
        assert_eq!(Weighting::parse(" TF_RIDF ").unwrap(), Weighting::TfRidf);
        for w in [Weighting::Bm25, Weighting::TfRidf] {
            assert_eq!(Weighting::parse(w.as_str()).unwrap(), w);
            let json = serde_json::to_string(&w).unwrap();
            assert_eq!(json, format!("\"{}\"", w.as_str()));
        }
        let e = Weighting::parse("tfidf").unwrap_err();
        assert_eq!(e.sqlstate(), "22023");
        assert!(e.hint().unwrap().contains("tf_ridf"));
        assert!(Params::new(Weighting::Bm25, 0.0, 0.0).is_ok());
        assert!(Params::new(Weighting::Bm25, 10.0, 1.0).is_ok());
        for (k1, b) in [
            (-0.1, 0.5),
            (10.1, 0.5),
            (f64::NAN, 0.5),
            (f64::INFINITY, 0.5),
            (1.2, -0.01),
            (1.2, 1.01),
            (1.2, f64::NAN),
        ] {
            let e = Params::new(Weighting::Bm25, k1, b).unwrap_err();
            assert_eq!(e.sqlstate(), "22023");
            assert!(e.hint().is_some());
        }
    }

    #[test]
    fn accumulator_add_remove_merge() {
        let docs = corpus();
        let full = accumulate(&docs);
        // remove undoes add exactly.
        let mut acc = full.clone();
        acc.remove(&docs[3]);
        acc.remove(&docs[1]);
        assert_eq!(acc, accumulate(&[docs[0].clone(), docs[2].clone()]));
        assert!(!acc.terms.contains_key("e"));
        // merge equals a fresh accumulate, in both directions and with empty states.
        let mut left = accumulate(&docs[..1]);
        left.merge(accumulate(&docs[1..]));
        assert_eq!(left, full);
        let mut right = accumulate(&docs[2..]);
        right.merge(accumulate(&docs[..2]));
        assert_eq!(right, full);
        let mut e = StatsAccumulator::default();
        e.merge(full.clone());
        e.merge(StatsAccumulator::default());
        assert_eq!(e, full);
        // Removing from an empty state cannot go negative.
        let mut z = StatsAccumulator::default();
        z.remove(&docs[0]);
        assert_eq!(z, StatsAccumulator::default());
        // State round-trips through JSON (for aggregate serialisation).
        let json = serde_json::to_string(&full).unwrap();
        assert_eq!(
            serde_json::from_str::<StatsAccumulator>(&json).unwrap(),
            full
        );
    }

    #[test]
    fn result_bytes_bounds_the_serialised_state_and_grows_with_the_terms() {
        let mut acc = StatsAccumulator::default();
        let small = acc.result_bytes();
        for i in 0..1000 {
            acc.terms
                .insert(format!("term{i}"), TermStat { df: 1, cf: 3 });
        }
        assert!(acc.result_bytes() >= acc.to_bytes().len());
        assert!(acc.result_bytes() > small + 1000 * 48);
        // About five million terms of eight bytes pass the limit, and their
        // count alone says so before the estimate does.
        const { assert!(5_000_000 * (8 + 48) > MAX_RESULT_BYTES) };
        const { assert!(4_000_000 * (8 + 48) < MAX_RESULT_BYTES) };
        assert!(!acc.surely_too_large());
        for i in 0..MAX_RESULT_BYTES / RESULT_BYTES_PER_TERM + 1 {
            acc.terms.insert(format!("t{i}"), TermStat { df: 1, cf: 1 });
        }
        assert!(acc.surely_too_large() && acc.result_bytes() > MAX_RESULT_BYTES);
    }

    #[test]
    fn accumulator_bytes_round_trip() {
        let mut acc = StatsAccumulator {
            n_docs: 3,
            total_len: 17,
            ..StatsAccumulator::default()
        };
        acc.terms.insert("книг".into(), TermStat { df: 2, cf: 5 });
        acc.terms.insert("run".into(), TermStat { df: 1, cf: 1 });
        let b = acc.to_bytes();
        assert_eq!(StatsAccumulator::from_bytes(&b).unwrap(), acc);
        for n in 0..b.len() {
            assert!(StatsAccumulator::from_bytes(&b[..n]).is_err());
        }
        assert_eq!(
            StatsAccumulator::from_bytes(&StatsAccumulator::default().to_bytes()).unwrap(),
            StatsAccumulator::default()
        );
    }
}
