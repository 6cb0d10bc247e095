//! Operations on sorted slices of distinct values (signature keys, term hashes,
//! trigram keys), shared by the modules that compare two documents' key lists, and
//! the place of a new element in a bounded best-first list (the candidate scan's).
//!
//! Pure Rust, no pgrx.

use std::cmp::Ordering;

/// Where a new element goes in `best`, a list of at most `keep` elements sorted
/// best first, given `vs_new(e)`, how an element `e` of the list orders against
/// the new one (`Less`: `e` is better): after every element at least as good, or
/// None when the list is full and the new one is no better than its last. The
/// caller inserts it there and drops the last element past `keep`.
pub fn best_first_position<T>(
    best: &[T],
    keep: usize,
    vs_new: impl Fn(&T) -> Ordering,
) -> Option<usize> {
    if best.len() >= keep
        && best
            .last()
            .is_none_or(|worst| vs_new(worst) != Ordering::Greater)
    {
        return None;
    }
    Some(best.partition_point(|e| vs_new(e) != Ordering::Greater))
}

/// `|A ∩ B|` of two sorted, distinct lists: one merge, O(|A| + |B|).
pub fn intersection_count<T: Ord>(a: &[T], b: &[T]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            Ordering::Less => i += 1,
            Ordering::Greater => j += 1,
            Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bounded_best_first_list_admits_only_what_beats_its_last() {
        // Higher is better; ties go after the elements already there.
        let place =
            |best: &[i32], keep: usize, new: i32| best_first_position(best, keep, |e| new.cmp(e));
        assert_eq!(place(&[9, 7, 5], 4, 6), Some(2));
        assert_eq!(place(&[9, 7, 5], 4, 7), Some(2), "after an equal one");
        assert_eq!(place(&[9, 7, 5], 3, 5), None, "full: an equal last stays");
        assert_eq!(place(&[9, 7, 5], 3, 6), Some(2));
        assert_eq!(place(&[9, 7, 5], 3, 10), Some(0));
        assert_eq!(place(&[], 1, 1), Some(0));
        assert_eq!(place(&[], 0, 1), None, "keep 0 admits nothing");
        // Filling through it keeps the best `keep` in order.
        let mut best: Vec<i32> = Vec::new();
        for v in [3, 8, 1, 8, 5, 9, 2, 7] {
            if let Some(at) = place(&best, 3, v) {
                best.insert(at, v);
                best.truncate(3);
            }
        }
        assert_eq!(best, [9, 8, 8]);
    }

    #[test]
    fn counts_common_values() {
        assert_eq!(intersection_count::<u32>(&[], &[]), 0);
        assert_eq!(intersection_count(&[1u32, 2, 3], &[]), 0);
        assert_eq!(intersection_count(&[1u32, 3, 5, 7], &[2, 3, 4, 7, 9]), 2);
        assert_eq!(intersection_count(&[1u16, 2, 3], &[1, 2, 3]), 3);
        assert_eq!(intersection_count(&[10u64], &[1, 2, 10]), 1);
    }

    #[test]
    fn agrees_with_a_set_intersection() {
        // Every pair of subsets of {0, …, 7}, as sorted lists.
        let list = |mask: u32| {
            (0..8u32)
                .filter(|b| mask & (1 << b) != 0)
                .collect::<Vec<_>>()
        };
        for x in 0..256u32 {
            for y in 0..256u32 {
                let want = (x & y).count_ones() as usize;
                assert_eq!(intersection_count(&list(x), &list(y)), want);
            }
        }
    }
}
