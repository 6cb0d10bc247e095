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
        // A small deterministic generator: no rand dependency in the pure modules.
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        for _ in 0..200 {
            let mut a: Vec<u64> = (0..(next() % 40)).map(|_| next() % 64).collect();
            let mut b: Vec<u64> = (0..(next() % 40)).map(|_| next() % 64).collect();
            a.sort_unstable();
            a.dedup();
            b.sort_unstable();
            b.dedup();
            let want = a.iter().filter(|x| b.contains(x)).count();
            assert_eq!(intersection_count(&a, &b), want);
        }
    }
}
