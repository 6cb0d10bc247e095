//! Quality metrics: classification (precision, recall, F1, ROC AUC), the candidate
//! filter of Andreev et al. (Table 1), and the symmetry and transitivity
//! coefficients of a similarity relation (Lande et al.).
//!
//! Pure Rust, no pgrx. Every ratio with a zero denominator is defined (documented per
//! function) so that no NaN ever reaches SQL.

/// Counts of a binary classifier's outcomes.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Confusion {
    pub tp: i64,
    pub fp: i64,
    pub fn_: i64,
    pub tn: i64,
}

impl Confusion {
    /// Counts one decision.
    pub fn add(&mut self, predicted: bool, actual: bool) {
        match (predicted, actual) {
            (true, true) => self.tp += 1,
            (true, false) => self.fp += 1,
            (false, true) => self.fn_ += 1,
            (false, false) => self.tn += 1,
        }
    }

    /// `tp / (tp + fp)`; 0 when nothing was predicted positive.
    pub fn precision(&self) -> f64 {
        ratio(self.tp, self.tp + self.fp)
    }

    /// `tp / (tp + fn)`; 0 when there are no actual positives.
    pub fn recall(&self) -> f64 {
        ratio(self.tp, self.tp + self.fn_)
    }

    /// Harmonic mean of precision and recall, `2tp / (2tp + fp + fn)`; 0 when both are 0.
    pub fn f1(&self) -> f64 {
        ratio(2 * self.tp, 2 * self.tp + self.fp + self.fn_)
    }

    /// `(tp + tn) / total`; 0 when empty.
    pub fn accuracy(&self) -> f64 {
        ratio(self.tp + self.tn, self.tp + self.fp + self.fn_ + self.tn)
    }
}

fn ratio(num: i64, den: i64) -> f64 {
    if den > 0 {
        num as f64 / den as f64
    } else {
        0.0
    }
}

/// Area under the ROC curve of `(score, is_positive)` pairs, higher scores meaning
/// "more positive": the Mann–Whitney statistic from ranks, tied scores getting their
/// average rank (so a tie between a positive and a negative counts one half).
///
/// Pairs with a NaN score are ignored. `None` when the remaining pairs lack either
/// class. O(n log n).
pub fn roc_auc(scores_labels: &[(f64, bool)]) -> Option<f64> {
    let mut v: Vec<(f64, bool)> = scores_labels
        .iter()
        .copied()
        .filter(|(s, _)| !s.is_nan())
        .collect();
    let n_pos = v.iter().filter(|p| p.1).count();
    let n_neg = v.len() - n_pos;
    if n_pos == 0 || n_neg == 0 {
        return None;
    }
    v.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    // Sum of the (1-based, tie-averaged) ranks of the positives.
    let mut rank_sum = 0.0;
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j < v.len() && v[j].0 == v[i].0 {
            j += 1;
        }
        // Ranks i+1 ..= j share their mean.
        let mean_rank = (i + 1 + j) as f64 / 2.0;
        let pos = v[i..j].iter().filter(|p| p.1).count();
        rank_sum += mean_rank * pos as f64;
        i = j;
    }
    let (p, n) = (n_pos as f64, n_neg as f64);
    Some((rank_sum - p * (p + 1.0) / 2.0) / (p * n))
}

/// Symmetry and transitivity of a 0/1 similarity relation (Lande et al. 2009).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MatrixQuality {
    /// Number of distinct directed edges `(i, j)`, `i != j`.
    pub pairs: i64,
    /// `S = Σ a_ij·a_ji / Σ a_ij`: the share of edges whose reverse is also present.
    pub symmetry: f64,
    /// `T = Σ a_ij·a_jk·a_ik / Σ a_ij·a_jk` over distinct `i, j, k`: the share of
    /// two-step paths `i → j → k` closed by a direct edge `i → k`.
    pub transitivity: f64,
}

/// Lande et al. coefficients of a 0/1 similarity relation given as directed edges
/// `(i, j)`. Self-loops are dropped and duplicates counted once.
///
/// A zero denominator gives 1.0: a relation with no edges (for `S`) or no two-step
/// paths (for `T`) satisfies the symmetry or transitivity condition vacuously, and an
/// equivalence relation (what duplication should be) has `S = T = 1`.
///
/// Cost: a sort of the edges, then per edge `(i, j)` one binary search for `(j, i)`
/// and an intersection of the out-lists of `i` and `j` (the smaller one searched in
/// the larger), i.e. `Σ min(out(i), out(j))·log` over the edges; no hash tables.
/// That is cubic in the size of a dense cluster (a 10,000-document clique is
/// 10¹² lookups): [`matrix_quality_checked`] can be stopped.
pub fn matrix_quality(edges: &[(i64, i64)]) -> MatrixQuality {
    use crate::interrupt::{finished, unstoppable};
    finished(matrix_quality_checked(edges, &mut unstoppable()))
}

/// Edges' worth of out-list lookups [`matrix_quality_checked`] does between two
/// calls of its check (about a millisecond).
const LOOKUPS_PER_CHECK: u64 = 1 << 16;

/// [`matrix_quality`], calling `check` after the sort and then about every
/// [`LOOKUPS_PER_CHECK`] lookups; an `Err` from `check` is returned at once.
pub fn matrix_quality_checked<E>(
    edges: &[(i64, i64)],
    check: &mut crate::interrupt::Check<'_, E>,
) -> Result<MatrixQuality, E> {
    let mut e: Vec<(i64, i64)> = edges.iter().copied().filter(|(i, j)| i != j).collect();
    e.sort_unstable();
    e.dedup();
    check()?;
    let mut budget = LOOKUPS_PER_CHECK;
    // `e` is sorted by (from, to): the out-list of a node is a contiguous run.
    let out = |node: i64| -> &[(i64, i64)] {
        let lo = e.partition_point(|&(f, _)| f < node);
        let hi = lo + e[lo..].partition_point(|&(f, _)| f == node);
        &e[lo..hi]
    };
    let contains = |list: &[(i64, i64)], to: i64| list.binary_search_by(|p| p.1.cmp(&to)).is_ok();

    let (mut reciprocal, mut paths, mut closed) = (0u64, 0u64, 0u64);
    let mut k = 0;
    while k < e.len() {
        // All edges leaving node `i` are e[k..end].
        let i = e[k].0;
        let out_i = out(i);
        let end = k + out_i.len();
        for &(_, j) in out_i {
            let out_j = out(j);
            let back = contains(out_j, i);
            reciprocal += u64::from(back);
            // Paths i → j → k' with k' != i (k' != j since there are no self-loops).
            paths += out_j.len() as u64 - u64::from(back);
            // Closed paths: k' in out(i) ∩ out(j); k' is neither i nor j.
            let (small, large) = if out_i.len() <= out_j.len() {
                (out_i, out_j)
            } else {
                (out_j, out_i)
            };
            closed += small.iter().filter(|p| contains(large, p.1)).count() as u64;
            let work = small.len() as u64 + 1;
            if work >= budget {
                budget = LOOKUPS_PER_CHECK;
                check()?;
            } else {
                budget -= work;
            }
        }
        k = end;
    }
    let share = |num: u64, den: u64| {
        if den == 0 {
            1.0
        } else {
            num as f64 / den as f64
        }
    };
    Ok(MatrixQuality {
        pairs: e.len() as i64,
        symmetry: share(reciprocal, e.len() as u64),
        transitivity: share(closed, paths),
    })
}

/// Candidate-filter quality, Andreev et al. Table 1: how many pairs the filter keeps
/// and how many true duplicates it loses.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FilterQuality {
    /// All pairs considered (`N_p`, "всего").
    pub total_pairs: i64,
    /// Pairs the filter passes on to the classifier.
    pub passing: i64,
    /// Pairs that are duplicates (`N_dup`).
    pub duplicates: i64,
    /// Duplicates the filter passes.
    pub duplicates_kept: i64,
    /// Duplicates the filter discards.
    pub duplicates_lost: i64,
    /// `duplicates_kept / duplicates` (0.80 in the paper); 0 when there are no duplicates.
    pub recall: f64,
    /// Discarded pairs over all pairs, `(total − passing) / total` (0.99998 in the
    /// paper); 0 when there are no pairs.
    pub efficiency: f64,
}

impl FilterQuality {
    /// Counts one pair; `recall` and `efficiency` are kept up to date.
    pub fn add(&mut self, passes: bool, is_duplicate: bool) {
        self.total_pairs += 1;
        self.passing += i64::from(passes);
        if is_duplicate {
            self.duplicates += 1;
            if passes {
                self.duplicates_kept += 1;
            } else {
                self.duplicates_lost += 1;
            }
        }
        self.refresh();
    }

    /// Adds another tally into this one.
    pub fn merge(&mut self, other: &FilterQuality) {
        self.total_pairs += other.total_pairs;
        self.passing += other.passing;
        self.duplicates += other.duplicates;
        self.duplicates_kept += other.duplicates_kept;
        self.duplicates_lost += other.duplicates_lost;
        self.refresh();
    }

    /// Non-duplicate pairs (`N_or`).
    pub fn originals(&self) -> i64 {
        self.total_pairs - self.duplicates
    }

    /// Share of passing pairs that are duplicates (0.58 in the paper); 0 when none pass.
    pub fn precision(&self) -> f64 {
        ratio(self.duplicates_kept, self.passing)
    }

    fn refresh(&mut self) {
        self.recall = ratio(self.duplicates_kept, self.duplicates);
        self.efficiency = ratio(self.total_pairs - self.passing, self.total_pairs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn confusion_counts_and_ratios() {
        let mut c = Confusion::default();
        assert_eq!(
            (c.precision(), c.recall(), c.f1(), c.accuracy()),
            (0.0, 0.0, 0.0, 0.0)
        );
        for (p, a) in [
            (true, true),
            (true, true),
            (true, false),
            (false, true),
            (false, false),
        ] {
            c.add(p, a);
        }
        assert_eq!(
            c,
            Confusion {
                tp: 2,
                fp: 1,
                fn_: 1,
                tn: 1
            }
        );
        assert!(close(c.precision(), 2.0 / 3.0));
        assert!(close(c.recall(), 2.0 / 3.0));
        assert!(close(c.f1(), 2.0 / 3.0));
        assert!(close(c.accuracy(), 3.0 / 5.0));
        // Only negatives predicted: precision 0, not NaN.
        let mut d = Confusion::default();
        d.add(false, true);
        assert_eq!((d.precision(), d.recall(), d.f1()), (0.0, 0.0, 0.0));
    }

    #[test]
    fn auc_cases() {
        assert_eq!(roc_auc(&[]), None);
        assert_eq!(roc_auc(&[(0.1, true), (0.9, true)]), None);
        assert_eq!(roc_auc(&[(0.3, false)]), None);
        assert_eq!(roc_auc(&[(0.9, true), (0.1, false)]), Some(1.0));
        assert_eq!(roc_auc(&[(0.1, true), (0.9, false)]), Some(0.0));
        assert_eq!(roc_auc(&[(0.5, true), (0.5, false)]), Some(0.5));
        // pos {0.8, 0.4}, neg {0.6, 0.2}: pairs won 3 of 4.
        let v = [(0.8, true), (0.6, false), (0.4, true), (0.2, false)];
        assert_eq!(roc_auc(&v), Some(0.75));
        // Tie across classes counts half: pos {0.7, 0.5}, neg {0.5, 0.1} -> (2 + 1.5)/4.
        let v = [(0.7, true), (0.5, true), (0.5, false), (0.1, false)];
        assert_eq!(roc_auc(&v), Some(0.875));
        // NaN scores are ignored.
        let v = [(f64::NAN, false), (0.9, true), (0.1, false)];
        assert_eq!(roc_auc(&v), Some(1.0));
    }

    #[test]
    fn matrix_quality_tiny() {
        // Empty: vacuous 1.0.
        let q = matrix_quality(&[]);
        assert_eq!((q.pairs, q.symmetry, q.transitivity), (0, 1.0, 1.0));
        // Self-loops and duplicates ignored.
        let q = matrix_quality(&[(1, 1), (1, 2), (1, 2)]);
        assert_eq!((q.pairs, q.symmetry, q.transitivity), (1, 0.0, 1.0));
        // A symmetric pair: S = 1; paths 1→2→1 have i = k and do not count: T = 1.
        let q = matrix_quality(&[(1, 2), (2, 1)]);
        assert_eq!((q.pairs, q.symmetry, q.transitivity), (2, 1.0, 1.0));
        // Chain 1→2→3 without 1→3: one open path.
        let q = matrix_quality(&[(1, 2), (2, 3)]);
        assert_eq!((q.symmetry, q.transitivity), (0.0, 0.0));
        let q = matrix_quality(&[(1, 2), (2, 3), (1, 3)]);
        assert_eq!((q.symmetry, q.transitivity), (0.0, 1.0));
        // A full clique on 3 nodes (an equivalence class): S = T = 1.
        let clique: Vec<(i64, i64)> = (0..3).flat_map(|i| (0..3).map(move |j| (i, j))).collect();
        let q = matrix_quality(&clique);
        assert_eq!((q.pairs, q.symmetry, q.transitivity), (6, 1.0, 1.0));
        // 1↔2, 2→3. Edges 3, reciprocal 2: S = 2/3.
        // Paths (distinct i,j,k): 1→2→3 only (2→1→? none, 1→2→1 excluded) -> open: T = 0.
        let q = matrix_quality(&[(1, 2), (2, 1), (2, 3)]);
        assert!(close(q.symmetry, 2.0 / 3.0));
        assert_eq!(q.transitivity, 0.0);
        // Add 1→3: paths 1→2→3 (closed by 1→3), 2→1→3 (closed by 2→3): T = 1.
        let q = matrix_quality(&[(1, 2), (2, 1), (2, 3), (1, 3)]);
        assert!(close(q.symmetry, 2.0 / 4.0));
        assert_eq!(q.transitivity, 1.0);
        // Negative and huge ids work like any others.
        let q = matrix_quality(&[(i64::MIN, i64::MAX), (i64::MAX, i64::MIN)]);
        assert_eq!((q.pairs, q.symmetry), (2, 1.0));
    }

    /// Brute-force reference over an adjacency matrix.
    fn brute(n: usize, edges: &[(i64, i64)]) -> (f64, f64) {
        let mut a = vec![vec![false; n]; n];
        for &(i, j) in edges {
            if i != j {
                a[i as usize][j as usize] = true;
            }
        }
        let (mut s_num, mut s_den, mut t_num, mut t_den) = (0, 0, 0, 0);
        for i in 0..n {
            for j in 0..n {
                if a[i][j] {
                    s_den += 1;
                    s_num += usize::from(a[j][i]);
                }
                for k in 0..n {
                    if i != j && j != k && i != k && a[i][j] && a[j][k] {
                        t_den += 1;
                        t_num += usize::from(a[i][k]);
                    }
                }
            }
        }
        let f = |x: usize, y: usize| if y == 0 { 1.0 } else { x as f64 / y as f64 };
        (f(s_num, s_den), f(t_num, t_den))
    }

    #[test]
    fn matrix_quality_matches_brute_force() {
        let mut x = 0x1234_5678_9abc_def0u64;
        for round in 0..50 {
            let n = 3 + round % 9;
            let m = round * 2;
            let edges: Vec<(i64, i64)> = (0..m)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    ((x % n as u64) as i64, ((x >> 20) % n as u64) as i64)
                })
                .collect();
            let q = matrix_quality(&edges);
            let (s, t) = brute(n, &edges);
            assert!(
                close(q.symmetry, s) && close(q.transitivity, t),
                "round {round}"
            );
        }
    }

    #[test]
    fn matrix_quality_100k_edges_is_fast() {
        // 10k clusters of 4 nodes: 12 directed edges each (120k edges), all symmetric
        // and transitive, plus a hub with 2000 out-edges.
        let mut edges = Vec::new();
        for c in 0..10_000i64 {
            for i in 0..4 {
                for j in 0..4 {
                    edges.push((c * 4 + i, c * 4 + j));
                }
            }
        }
        let clusters = edges.len() as i64;
        for t in 0..2000 {
            edges.push((-1, t * 20));
        }
        let start = std::time::Instant::now();
        let q = matrix_quality(&edges);
        let elapsed = start.elapsed();
        assert_eq!(q.pairs, 120_000 + 2000);
        assert!(clusters > 0 && q.symmetry < 1.0 && q.transitivity < 1.0);
        assert!(elapsed.as_secs_f64() < 2.0, "{elapsed:?}");
    }

    /// A dense cluster is cubic work: the check is called along the way, its error
    /// stops the count, and the answer does not depend on it.
    #[test]
    fn matrix_quality_checked_calls_and_obeys_its_check() {
        let n = 120i64;
        let clique: Vec<(i64, i64)> = (0..n).flat_map(|i| (0..n).map(move |j| (i, j))).collect();
        let mut calls = 0u64;
        let mut count = || {
            calls += 1;
            Ok::<(), crate::error::DedupError>(())
        };
        let q = matrix_quality_checked(&clique, &mut count).unwrap();
        assert_eq!(q, matrix_quality(&clique));
        assert_eq!((q.symmetry, q.transitivity), (1.0, 1.0));
        // n(n-1) edges, each searching an out-list of n-1: one call after the sort,
        // then one per LOOKUPS_PER_CHECK.
        let work = (n * (n - 1) * n) as u64;
        assert!(calls >= work / LOOKUPS_PER_CHECK, "{calls} calls");
        let mut left = 3;
        let mut stop = || {
            left -= 1;
            if left == 0 {
                Err("stopped")
            } else {
                Ok(())
            }
        };
        assert_eq!(matrix_quality_checked(&clique, &mut stop), Err("stopped"));
        assert_eq!(left, 0);
    }

    #[test]
    fn filter_quality_table_1() {
        // Andreev et al. Table 1 scaled down: 10 pairs, 4 pass, 3 duplicates of which 2 pass.
        let mut f = FilterQuality::default();
        for (passes, dup) in [(true, true), (true, true), (true, false), (true, false)] {
            f.add(passes, dup);
        }
        f.add(false, true);
        for _ in 0..5 {
            f.add(false, false);
        }
        assert_eq!(
            (
                f.total_pairs,
                f.passing,
                f.duplicates,
                f.duplicates_kept,
                f.duplicates_lost
            ),
            (10, 4, 3, 2, 1)
        );
        assert!(close(f.recall, 2.0 / 3.0));
        assert!(close(f.efficiency, 6.0 / 10.0));
        assert_eq!(f.originals(), 7);
        assert!(close(f.precision(), 0.5));
        // The paper's own numbers.
        let p = FilterQuality {
            total_pairs: 16_586_310,
            passing: 259,
            duplicates: 189,
            duplicates_kept: 151,
            duplicates_lost: 38,
            ..FilterQuality::default()
        };
        let mut q = FilterQuality::default();
        q.merge(&p);
        assert!((q.recall - 0.799).abs() < 1e-3);
        assert!((q.efficiency - 0.99998).abs() < 1e-5);
        // Empty: zeros, not NaN.
        let e = FilterQuality::default();
        assert_eq!((e.recall, e.efficiency, e.precision()), (0.0, 0.0, 0.0));
    }
}
