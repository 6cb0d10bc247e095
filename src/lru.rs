//! A map bounded by the total cost (approximate bytes) of its values, evicting the
//! least recently used entries when it grows past its budget.
//!
//! Pure Rust, no pgrx. The backend cache of weighed documents
//! (`pg::collections`) keeps its entries here: decoding and weighing a stored
//! document costs far more than comparing two already weighed ones, and the same
//! documents come back again and again (an original compared with each of its
//! reprints, every pair of a candidate group).
//!
//! Eviction is amortised: when the total passes the budget, the oldest entries go
//! until a quarter of the budget is free, so a sort over the entries happens once
//! per many inserts rather than on every one.

use std::collections::HashMap;
use std::hash::Hash;

struct Slot<V> {
    value: V,
    cost: usize,
    used: u64,
}

pub struct CostLru<K, V> {
    map: HashMap<K, Slot<V>, foldhash::fast::RandomState>,
    total: usize,
    budget: usize,
    tick: u64,
}

impl<K: Hash + Eq + Clone, V> CostLru<K, V> {
    pub fn new(budget: usize) -> Self {
        CostLru {
            map: HashMap::default(),
            total: 0,
            budget,
            tick: 0,
        }
    }

    /// Changes the budget, evicting at once if the map is now over it.
    pub fn set_budget(&mut self, budget: usize) {
        self.budget = budget;
        if self.total > budget {
            self.shrink();
        }
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The summed cost of the entries.
    pub fn total(&self) -> usize {
        self.total
    }

    pub fn clear(&mut self) {
        self.map.clear();
        self.total = 0;
    }

    /// The value of `k`, marked as just used.
    pub fn get(&mut self, k: &K) -> Option<&V> {
        self.tick += 1;
        let tick = self.tick;
        self.map.get_mut(k).map(|s| {
            s.used = tick;
            &s.value
        })
    }

    pub fn remove(&mut self, k: &K) -> Option<V> {
        let s = self.map.remove(k)?;
        self.total -= s.cost;
        Some(s.value)
    }

    /// Inserts (or replaces) `k`. A value costing more than the whole budget is
    /// not kept.
    pub fn insert(&mut self, k: K, value: V, cost: usize) {
        self.remove(&k);
        if cost > self.budget {
            return;
        }
        self.tick += 1;
        self.total += cost;
        self.map.insert(
            k,
            Slot {
                value,
                cost,
                used: self.tick,
            },
        );
        if self.total > self.budget {
            self.shrink();
        }
    }

    /// Drops the least recently used entries until at most 3/4 of the budget is used.
    fn shrink(&mut self) {
        let target = self.budget - self.budget / 4;
        let mut by_age: Vec<(u64, K)> = self.map.iter().map(|(k, s)| (s.used, k.clone())).collect();
        by_age.sort_unstable_by_key(|(used, _)| *used);
        for (_, k) in by_age {
            if self.total <= target {
                break;
            }
            self.remove(&k);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_within_budget_and_evicts_least_recent() {
        let mut c: CostLru<u32, u32> = CostLru::new(100);
        for k in 0..10 {
            c.insert(k, k * 10, 10);
        }
        assert_eq!(c.total(), 100);
        assert_eq!(c.len(), 10);
        // Touch 0 and 1: they become the most recent.
        assert_eq!(c.get(&0), Some(&0));
        assert_eq!(c.get(&1), Some(&10));
        c.insert(10, 100, 10);
        assert!(
            c.total() <= 75,
            "shrinks to 3/4 of the budget, got {}",
            c.total()
        );
        assert_eq!(c.get(&0), Some(&0));
        assert_eq!(c.get(&1), Some(&10));
        assert_eq!(c.get(&10), Some(&100));
        assert_eq!(c.get(&2), None, "the oldest untouched entry goes first");
    }

    #[test]
    fn replacing_and_removing_keep_the_total_right() {
        let mut c: CostLru<&str, u8> = CostLru::new(1000);
        c.insert("a", 1, 300);
        c.insert("a", 2, 200);
        assert_eq!(c.total(), 200);
        assert_eq!(c.remove(&"a"), Some(2));
        assert_eq!(c.total(), 0);
        assert!(c.is_empty());
    }

    #[test]
    fn oversized_values_and_zero_budget_keep_nothing() {
        let mut c: CostLru<u8, u8> = CostLru::new(50);
        c.insert(1, 1, 51);
        assert!(c.is_empty());
        c.insert(2, 2, 50);
        assert_eq!(c.len(), 1);
        c.set_budget(0);
        assert!(c.is_empty());
        assert_eq!(c.total(), 0);
        c.insert(3, 3, 1);
        assert!(c.is_empty());
    }
}
