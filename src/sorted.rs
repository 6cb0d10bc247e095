//! Operations on sorted slices of distinct values (signature keys, term hashes,
//! trigram keys), shared by the modules that compare two documents' key lists.
//!
//! Pure Rust, no pgrx.

use std::cmp::Ordering;

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
