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
//! - `own_weight(a, b) = ln(1 + Σ_{t ∈ a \ B} |w(t)|)`: how much a says that b does
//!   not, in absolute terms. The shares above are blind to size: one new sentence in
//!   a short post and one in a long report have different shares and the same
//!   news value.
//! - `unique_top(a, b)`: the sum of a's three heaviest terms that b lacks over the
//!   sum of a's three heaviest terms (1 when b has none of a's terms): whether
//!   what a says most is its own.
//! - `missing_prefixes(a, b)`: `missing`, with a term counted as shared when b has a
//!   term of the same first 4 characters (what the stemmer split, names in two
//!   inflections).
//!
//! All of them are 0 for identical documents and depend on `b` only through its
//! term (or prefix) set: exact in `features::bounds` when `a` is the weighed side.
//! The key-set measures at the end ([`share_absent`], [`own_count`],
//! [`numbers_conflict`]) read no weights at all.

/// One side's keys: terms sorted by hash with their squared and absolute weights,
/// the same for the distinct terms of its first sentence, and the squared weight
/// per 4-character prefix ([`crate::document::prefix_key`]).
#[derive(Debug, Clone, Default)]
pub struct Keys {
    /// (term hash, squared weight, |weight|), sorted by hash.
    pub terms: Vec<(u64, f64, f64)>,
    pub total: f64,
    pub peak: f64,
    /// The three largest |weight|s, largest first (0 where there are fewer terms).
    pub top: [f64; 3],
    /// (term hash, squared weight) of the lead sentence's distinct terms, sorted.
    pub lead: Vec<(u64, f64)>,
    pub lead_total: f64,
    /// (prefix key, sum of the squared weights of the terms with that prefix),
    /// sorted by prefix key, and the sum of those sums in that order.
    pub prefixed: Vec<(u64, f64)>,
    pub prefixed_total: f64,
}

/// A weight as the coverage features read it: finite or 0.
fn finite(w: f64) -> f64 {
    if w.is_finite() {
        w
    } else {
        0.0
    }
}

/// Puts `w` into `top` (largest first) when it is among the three largest.
fn push_top(top: &mut [f64; 3], w: f64) {
    if w > top[2] {
        top[2] = w;
        if top[2] > top[1] {
            top.swap(1, 2);
            if top[1] > top[0] {
                top.swap(0, 1);
            }
        }
    }
}

impl Keys {
    /// `terms`: (hash, weight, prefix key) in any order, hashes distinct; `lead`:
    /// hashes of the first sentence's terms (repeats allowed), each present in
    /// `terms`.
    pub fn new(terms: impl IntoIterator<Item = (u64, f64, u64)>, lead: &[u64]) -> Keys {
        let mut t: Vec<(u64, f64, f64)> = Vec::new();
        let mut prefixed: Vec<(u64, f64)> = Vec::new();
        for (h, w, p) in terms {
            let w = finite(w).abs();
            t.push((h, w * w, w));
            prefixed.push((p, w * w));
        }
        t.sort_unstable_by_key(|x| x.0);
        let total = t.iter().map(|x| x.1).sum();
        let peak = t.iter().map(|x| x.1).fold(0.0, f64::max);
        let mut top = [0.0; 3];
        for x in &t {
            push_top(&mut top, x.2);
        }
        prefixed.sort_unstable_by_key(|x| x.0);
        let mut merged: Vec<(u64, f64)> = Vec::with_capacity(prefixed.len());
        for (p, w2) in prefixed {
            match merged.last_mut() {
                Some(last) if last.0 == p => last.1 += w2,
                _ => merged.push((p, w2)),
            }
        }
        let prefixed_total = merged.iter().map(|x| x.1).sum();
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
            top,
            lead,
            lead_total,
            prefixed: merged,
            prefixed_total,
        }
    }

    pub fn heap_bytes(&self) -> usize {
        24 * self.terms.len() + 16 * (self.lead.len() + self.prefixed.len())
    }
}

/// What [`against`] measures of one side against the other's term set.
pub const N_AGAINST: usize = 5;

/// `[missing, unique_peak, lead_missing, own_weight, unique_top]` of `a` against
/// the other side's term hashes `hb`, sorted (a walk through them, not a search).
pub fn against(a: &Keys, hb: &[u64]) -> [f64; N_AGAINST] {
    against_by(a, || cursor(hb))
}

/// [`against`] with membership tests made by `member()`: each asks about hashes
/// in increasing order (the terms, then again the lead's).
fn against_by<M: FnMut(u64) -> bool>(a: &Keys, mut member: impl FnMut() -> M) -> [f64; N_AGAINST] {
    let (mut shared, mut peak_own, mut own_weight) = (0.0, 0.0f64, 0.0);
    let mut own_top = [0.0; 3];
    let mut any_shared = false;
    let mut hb = member();
    for &(h, w2, w) in &a.terms {
        if hb(h) {
            shared += w2;
            any_shared = true;
        } else {
            peak_own = peak_own.max(w2);
            own_weight += w;
            push_top(&mut own_top, w);
        }
    }
    let mut hb = member();
    let lead_shared: f64 = a.lead.iter().filter(|x| hb(x.0)).map(|x| x.1).sum();
    let top: f64 = a.top.iter().sum();
    [
        share_missing(shared, a.total),
        if a.peak > 0.0 && a.peak.is_finite() {
            (peak_own / a.peak).sqrt().clamp(0.0, 1.0)
        } else {
            0.0
        },
        share_missing(lead_shared, a.lead_total),
        own_weight.ln_1p(),
        if !(top > 0.0 && top.is_finite()) {
            0.0
        } else if !any_shared {
            // Every term is a's own: exactly 1, as the bounds claim.
            1.0
        } else {
            (own_top.iter().sum::<f64>() / top).clamp(0.0, 1.0)
        },
    ]
}

/// Both directions from two sides' keys.
pub fn both(a: &Keys, b: &Keys) -> ([f64; N_AGAINST], [f64; N_AGAINST]) {
    (
        against_by(a, || cursor(&b.terms)),
        against_by(b, || cursor(&a.terms)),
    )
}

/// Membership in a hash-sorted list for hashes asked in increasing order: a
/// pointer that only moves forward (a merge), not a binary search per term.
fn cursor<T: Keyed>(keys: &[T]) -> impl FnMut(u64) -> bool + '_ {
    let mut at = 0;
    move |h| {
        while at < keys.len() && keys[at].key() < h {
            at += 1;
        }
        at < keys.len() && keys[at].key() == h
    }
}

/// Something sorted by a 64-bit hash.
trait Keyed {
    fn key(&self) -> u64;
}

impl Keyed for u64 {
    fn key(&self) -> u64 {
        *self
    }
}

impl Keyed for (u64, f64, f64) {
    fn key(&self) -> u64 {
        self.0
    }
}

/// Whether the hash-sorted term keys hold `h`.
pub fn has_term(keys: &[(u64, f64, f64)], h: u64) -> bool {
    keys.binary_search_by(|x| x.0.cmp(&h)).is_ok()
}

/// `missing_prefixes(a, b)`: the share of a's squared weight on terms whose
/// 4-character prefix is none of b's (`pb`: b's prefix keys, sorted, unique). The
/// stemmer's misses ("восьмиэтажк" / "восьмиэтажн", a name in two inflections)
/// count as shared.
pub fn missing_prefixes(a: &Keys, pb: &[u64]) -> f64 {
    let (mut j, mut shared) = (0, 0.0);
    for &(p, w2) in &a.prefixed {
        while j < pb.len() && pb[j] < p {
            j += 1;
        }
        if j < pb.len() && pb[j] == p {
            shared += w2;
        }
    }
    if shared == a.prefixed_total {
        // Everything covered: exactly 0, as the bounds claim.
        return 0.0;
    }
    share_missing(shared, a.prefixed_total)
}

/// `1 − |A ∩ B| / |A|` of two sorted, distinct key lists; 0 when `a` is empty.
pub fn share_absent(a: &[u64], b: &[u64]) -> f64 {
    if a.is_empty() {
        return 0.0;
    }
    1.0 - common(a, b) as f64 / a.len() as f64
}

/// `ln(1 + |A \ B|)` of two sorted, distinct key lists.
pub fn own_count(a: &[u64], b: &[u64]) -> f64 {
    ((a.len() - common(a, b)) as f64).ln_1p()
}

/// `|A ∩ B|` of two sorted, distinct key lists: a merge, or binary searches of
/// the shorter in the longer when it is much shorter (a lead sentence's bigrams
/// against a whole text's).
fn common(a: &[u64], b: &[u64]) -> usize {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if short.len() * 16 < long.len() {
        return short
            .iter()
            .filter(|x| long.binary_search(x).is_ok())
            .count();
    }
    crate::sorted::intersection_count(a, b)
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
    1.0 - common(a, b) as f64 / a.len().min(b.len()) as f64
}

/// `ln((1 + na) / (1 + nb))` of the distinct-term counts: which side is longer, and
/// by how much. Antisymmetric.
pub fn length_ratio(na: usize, nb: usize) -> f64 {
    ((1.0 + na as f64) / (1.0 + nb as f64)).ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys of (hash, weight) terms; each term's prefix key is its hash / 10, so
    /// hashes 10..19 share a prefix.
    fn keys(t: &[(u64, f64)], lead: &[u64]) -> Keys {
        Keys::new(t.iter().map(|&(h, w)| (h, w, h / 10)), lead)
    }

    fn first3(x: [f64; N_AGAINST]) -> [f64; 3] {
        [x[0], x[1], x[2]]
    }

    #[test]
    fn identical_sides_miss_nothing() {
        let a = keys(&[(1, 1.0), (2, 2.0), (3, 0.5)], &[1, 2, 2]);
        let (ab, ba) = both(&a, &a);
        assert_eq!(ab, [0.0; N_AGAINST]);
        assert_eq!(ba, [0.0; N_AGAINST]);
        assert_eq!(missing_prefixes(&a, &[0]), 0.0);
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
        // own_weight: ln(1 + 2); unique_top: 2 of the top three 2 + 1 + 0.5.
        assert!((ab[3] - 3.0f64.ln()).abs() < 1e-12);
        assert!((ab[4] - 2.0 / 3.5).abs() < 1e-12);
        assert_eq!(ba, [0.0; N_AGAINST]); // b ⊆ a
    }

    #[test]
    fn a_side_sharing_nothing_is_all_its_own() {
        let a = keys(&[(1, 3.0), (2, 0.25), (3, 1.5), (4, 7.0)], &[1]);
        let b = keys(&[(9, 1.0)], &[9]);
        let (ab, _) = both(&a, &b);
        assert_eq!([ab[0], ab[1], ab[2], ab[4]], [1.0; 4]);
        assert!((ab[3] - 11.75f64.ln_1p()).abs() < 1e-12);
    }

    #[test]
    fn empty_and_weightless_sides_are_zero() {
        let e = keys(&[], &[]);
        let z = keys(&[(1, 0.0)], &[1]);
        let a = keys(&[(2, 1.0)], &[2]);
        assert_eq!(both(&e, &a).0, [0.0; N_AGAINST]);
        assert_eq!(both(&z, &a).0, [0.0; N_AGAINST]);
        assert_eq!(first3(both(&a, &e).0), [1.0, 1.0, 1.0]);
        assert_eq!(both(&a, &e).0[4], 1.0);
        let nan = keys(&[(1, f64::NAN), (2, f64::INFINITY)], &[1]);
        assert_eq!(both(&nan, &a).0, [0.0; N_AGAINST]);
        assert_eq!(missing_prefixes(&e, &[]), 0.0);
        assert_eq!(missing_prefixes(&a, &[]), 1.0);
    }

    #[test]
    fn missing_prefixes_forgives_what_the_stemmer_split() {
        // 11 and 12 share prefix 1; 25 has prefix 2.
        let a = keys(&[(11, 1.0), (25, 2.0)], &[11]);
        assert_eq!(missing_prefixes(&a, &[1, 2]), 0.0);
        assert!((missing_prefixes(&a, &[1]) - 4.0 / 5.0).abs() < 1e-12);
        assert!((missing_prefixes(&a, &[2, 7]) - 1.0 / 5.0).abs() < 1e-12);
        // Terms with one prefix are summed into one entry.
        let b = keys(&[(11, 1.0), (12, 1.0)], &[]);
        assert_eq!(b.prefixed, vec![(1, 2.0)]);
    }

    #[test]
    fn key_sets() {
        // Both ways of counting the common keys agree.
        let long: Vec<u64> = (0..100).map(|i| i * 3).collect();
        for short in [vec![0, 1, 3, 297, 298], vec![5], vec![]] {
            let merged = short.iter().filter(|x| long.contains(x)).count();
            assert_eq!(common(&short, &long), merged);
            assert_eq!(common(&long, &short), merged);
        }
        assert_eq!(common(&long, &long), 100);
        assert_eq!(share_absent(&[], &[1]), 0.0);
        assert_eq!(share_absent(&[1, 2, 3, 4], &[2, 4, 9]), 0.5);
        assert_eq!(own_count(&[1, 2, 3], &[2]), 2.0f64.ln_1p());
        assert_eq!(own_count(&[], &[2]), 0.0);
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
        use crate::numerals::digits_key as k;
        assert_eq!(k("3000"), k("3"));
        assert_eq!(k("4800"), k("4.8"));
        assert_eq!(k("-0.50"), k("5"));
        assert_ne!(k("2500"), k("3000"));
        assert_ne!(k("2023"), k("2024"));
        assert_eq!(k("0"), k("000"));
        assert_ne!(k("0"), k("1"));
    }
}
