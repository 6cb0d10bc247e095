//! The coverage features of ρ: how much of one side's content the other side has.
//!
//! Pure Rust, no pgrx; [`crate::features`] calls it. Cosines and segment inclusions
//! see how alike two texts are; these see what one side has that the other lacks,
//! which is what separates a rewrite of the same facts (duplicate) from the same
//! story with other facts ("voted for" / "voted against", "village A" / "village B",
//! related). Terms are matched by 64-bit hash, as everywhere in
//! [`crate::features::Prepared`].
//!
//! For a side `a` with body weights `w` and a side `b` with term set `B`:
//!
//! - `missing(a, b) = 1 − Σ_{t ∈ a ∩ B} w(t)² / Σ_{t ∈ a} w(t)²`: the share of a's
//!   squared weight on terms b lacks (0 when a weighs nothing). The same share bounds
//!   the cosine in `features::bounds`.
//! - `unique_peak(a, b) = max_{t ∈ a \ B} |w(t)| / max_{t ∈ a} |w(t)|`: how heavy
//!   a's heaviest term of its own is, against a's heaviest term (0 when a has no term
//!   b lacks, or weighs nothing). A name, a place, an outcome.
//! - `lead_missing(a, b)`: `missing` over the terms of a's first sentence only; news
//!   puts its facts in the lead.
//!
//! All three are in `[0, 1]`, 0 for identical documents, and depend on `b` only
//! through its term set: exact in `features::bounds` when `a` is the weighed side.

/// One side's keys: terms sorted by hash with their squared weights, and the same
/// for the distinct terms of its first sentence.
#[derive(Debug, Clone, Default)]
pub struct Keys {
    /// (term hash, squared weight), sorted by hash.
    pub terms: Vec<(u64, f64)>,
    pub total: f64,
    pub peak: f64,
    /// (term hash, squared weight) of the lead sentence's distinct terms, sorted.
    pub lead: Vec<(u64, f64)>,
    pub lead_total: f64,
}

impl Keys {
    /// `terms`: (hash, weight) in any order, hashes distinct; `lead`: hashes of the
    /// first sentence's terms (repeats allowed), each present in `terms`.
    pub fn new(terms: impl IntoIterator<Item = (u64, f64)>, lead: &[u64]) -> Keys {
        let mut t: Vec<(u64, f64)> = terms
            .into_iter()
            .map(|(h, w)| (h, if w.is_finite() { w * w } else { 0.0 }))
            .collect();
        t.sort_unstable_by_key(|x| x.0);
        let total = t.iter().map(|x| x.1).sum();
        let peak = t.iter().map(|x| x.1).fold(0.0, f64::max);
        let mut l: Vec<u64> = lead.to_vec();
        l.sort_unstable();
        l.dedup();
        let lead: Vec<(u64, f64)> = l
            .into_iter()
            .filter_map(|h| {
                t.binary_search_by(|x| x.0.cmp(&h))
                    .ok()
                    .map(|i| (h, t[i].1))
            })
            .collect();
        let lead_total = lead.iter().map(|x| x.1).sum();
        Keys {
            terms: t,
            total,
            peak,
            lead,
            lead_total,
        }
    }

    pub fn heap_bytes(&self) -> usize {
        16 * (self.terms.len() + self.lead.len())
    }
}

/// `(missing, unique_peak, lead_missing)` of `a` against the sorted term hashes `hb`.
pub fn against(a: &Keys, hb: impl Fn(u64) -> bool) -> [f64; 3] {
    let (mut shared, mut peak_own) = (0.0, 0.0f64);
    for &(h, w) in &a.terms {
        if hb(h) {
            shared += w;
        } else {
            peak_own = peak_own.max(w);
        }
    }
    let lead_shared: f64 = a.lead.iter().filter(|x| hb(x.0)).map(|x| x.1).sum();
    [
        share_missing(shared, a.total),
        if a.peak > 0.0 && a.peak.is_finite() {
            (peak_own / a.peak).sqrt().clamp(0.0, 1.0)
        } else {
            0.0
        },
        share_missing(lead_shared, a.lead_total),
    ]
}

/// Both directions from two sides' keys.
pub fn both(a: &Keys, b: &Keys) -> ([f64; 3], [f64; 3]) {
    (
        against(a, |h| has(&b.terms, h)),
        against(b, |h| has(&a.terms, h)),
    )
}

/// Whether the hash-sorted `keys` hold `h`.
pub fn has(keys: &[(u64, f64)], h: u64) -> bool {
    keys.binary_search_by(|x| x.0.cmp(&h)).is_ok()
}

fn share_missing(shared: f64, total: f64) -> f64 {
    if total > 0.0 && total.is_finite() {
        (1.0 - shared / total).clamp(0.0, 1.0)
    } else {
        0.0
    }
}

/// `1 − |A ∩ B| / min(|A|, |B|)` over two sorted, distinct number-hash sets when both
/// are non-empty, else 0: numbers that disagree (a price, a toll, a score) rather
/// than numbers one side leaves out. Symmetric.
pub fn numbers_conflict(a: &[u64], b: &[u64]) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    1.0 - common as f64 / a.len().min(b.len()) as f64
}

/// `ln((1 + na) / (1 + nb))` of the distinct-term counts: which side is longer, and
/// by how much. Antisymmetric.
pub fn length_ratio(na: usize, nb: usize) -> f64 {
    ((1.0 + na as f64) / (1.0 + nb as f64)).ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(t: &[(u64, f64)], lead: &[u64]) -> Keys {
        Keys::new(t.iter().copied(), lead)
    }

    #[test]
    fn identical_sides_miss_nothing() {
        let a = keys(&[(1, 1.0), (2, 2.0), (3, 0.5)], &[1, 2, 2]);
        let (ab, ba) = both(&a, &a);
        assert_eq!(ab, [0.0, 0.0, 0.0]);
        assert_eq!(ba, [0.0, 0.0, 0.0]);
    }

    #[test]
    fn missing_and_peak_read_the_other_side_s_terms() {
        let a = keys(&[(1, 1.0), (2, 2.0), (3, 0.5)], &[2, 3]);
        let b = keys(&[(1, 1.0), (3, 1.0)], &[1]);
        let (ab, ba) = both(&a, &b);
        // a lacks in b: term 2 (weight² 4 of 5.25).
        assert!((ab[0] - 4.0 / 5.25).abs() < 1e-12);
        assert!((ab[1] - 1.0).abs() < 1e-12); // a's heaviest term is its own
        assert!((ab[2] - 4.0 / 4.25).abs() < 1e-12);
        assert_eq!(ba, [0.0, 0.0, 0.0]); // b ⊆ a
    }

    #[test]
    fn empty_and_weightless_sides_are_zero() {
        let e = keys(&[], &[]);
        let z = keys(&[(1, 0.0)], &[1]);
        let a = keys(&[(2, 1.0)], &[2]);
        assert_eq!(both(&e, &a).0, [0.0, 0.0, 0.0]);
        assert_eq!(both(&z, &a).0, [0.0, 0.0, 0.0]);
        assert_eq!(both(&a, &e).0, [1.0, 1.0, 1.0]);
        let nan = keys(&[(1, f64::NAN), (2, f64::INFINITY)], &[1]);
        assert_eq!(both(&nan, &a).0, [0.0, 0.0, 0.0]);
    }

    #[test]
    fn numbers_conflict_and_length_ratio() {
        assert_eq!(numbers_conflict(&[], &[1]), 0.0);
        assert_eq!(numbers_conflict(&[1, 2], &[1, 2, 3]), 0.0);
        assert_eq!(numbers_conflict(&[1, 2], &[2, 5]), 0.5);
        assert_eq!(numbers_conflict(&[1], &[5]), 1.0);
        assert_eq!(length_ratio(3, 3), 0.0);
        assert!((length_ratio(1, 3) + length_ratio(3, 1)).abs() < 1e-15);
    }

    #[test]
    fn digits_keys_ignore_scale() {
        use crate::document::digits_key as k;
        assert_eq!(k("3000"), k("3"));
        assert_eq!(k("4800"), k("4.8"));
        assert_eq!(k("-0.50"), k("5"));
        assert_ne!(k("2500"), k("3000"));
        assert_ne!(k("2023"), k("2024"));
        assert_eq!(k("0"), k("000"));
        assert_ne!(k("0"), k("1"));
    }
}
