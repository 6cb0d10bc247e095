//! A transaction's changes to collection statistics, kept in memory until it
//! commits.
//!
//! Every inserted, updated or deleted document changes its collection's N, total
//! length and the df/cf of its terms. Writing those rows at once made every writer
//! hold the collection row and the rows of its terms until commit: concurrent
//! multi-row transactions queued on them, and deadlocked with each other. Instead
//! the changes of a transaction are summed here, read back by its own lookups (so a
//! row sees the statistics of the rows before it in the same transaction, exactly
//! as if each had committed), and written in one statement per collection just
//! before the transaction commits, in term order, holding those rows only for the
//! commit itself.
//!
//! Subtransactions: changes are kept per subtransaction level, so a rolled-back
//! savepoint (or a PL/pgSQL block that caught an error) takes its documents' changes
//! with it, and a released one passes them to its parent.

use std::collections::HashMap;

/// Term → (df, cf) changes. foldhash: the map takes every term of every document a
/// transaction writes, and SipHash was a tenth of a bulk insert's time.
pub type TermDeltas = HashMap<String, (i64, i64), foldhash::fast::RandomState>;

/// The changes to one collection.
#[derive(Default, Clone, Debug, PartialEq, Eq)]
pub struct CollDelta {
    pub n_docs: i64,
    pub total_len: i64,
    /// Documents added or removed (each counts one, whatever its sign).
    pub changes: i64,
    /// df and cf changes per term.
    pub terms: TermDeltas,
}

impl CollDelta {
    /// Adds (`sign` = 1) or removes (`sign` = -1) one document: its terms with their
    /// frequencies, and its length.
    pub fn add_doc<'a>(
        &mut self,
        terms: impl IntoIterator<Item = (&'a str, i64)>,
        len: i64,
        sign: i64,
    ) {
        self.n_docs += sign;
        self.total_len += sign * len;
        self.changes += 1;
        for (t, tf) in terms {
            let e = self.terms.entry(t.to_owned()).or_insert((0, 0));
            e.0 += sign;
            e.1 += sign * tf;
        }
    }

    fn merge(&mut self, other: CollDelta) {
        self.n_docs += other.n_docs;
        self.total_len += other.total_len;
        self.changes += other.changes;
        for (t, (df, cf)) in other.terms {
            let e = self.terms.entry(t).or_insert((0, 0));
            e.0 += df;
            e.1 += cf;
        }
    }

    /// Whether there is nothing to write.
    pub fn is_empty(&self) -> bool {
        self.changes == 0
    }

    /// The term changes to write, in byte order (the order every writer of the term
    /// rows locks them in), without those that cancel out.
    pub fn sorted_terms(&self) -> (Vec<String>, Vec<i64>, Vec<i64>) {
        let mut v: Vec<(&String, &(i64, i64))> = self
            .terms
            .iter()
            .filter(|(_, &(df, cf))| df != 0 || cf != 0)
            .collect();
        v.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        let mut terms = Vec::with_capacity(v.len());
        let mut dfs = Vec::with_capacity(v.len());
        let mut cfs = Vec::with_capacity(v.len());
        for (t, &(df, cf)) in v {
            terms.push(t.clone());
            dfs.push(df);
            cfs.push(cf);
        }
        (terms, dfs, cfs)
    }
}

/// The changes of one transaction, per subtransaction level (innermost last).
#[derive(Default, Debug)]
pub struct TxDelta {
    levels: Vec<(u32, HashMap<i32, CollDelta>)>,
}

impl TxDelta {
    /// Records a change to collection `coll` made in subtransaction `subxact`
    /// (PostgreSQL's SubTransactionId: 1 is the top level, inner ones are larger).
    pub fn add(&mut self, subxact: u32, coll: i32, f: impl FnOnce(&mut CollDelta)) {
        if self.levels.last().is_none_or(|(s, _)| *s != subxact) {
            self.levels.push((subxact, HashMap::new()));
        }
        if let Some((_, m)) = self.levels.last_mut() {
            f(m.entry(coll).or_default());
        }
    }

    /// Subtransaction `sub` committed into `parent`: its changes become the
    /// parent's.
    pub fn commit_sub(&mut self, sub: u32, parent: u32) {
        if self.levels.last().is_none_or(|(s, _)| *s != sub) {
            return;
        }
        let Some((_, top)) = self.levels.pop() else {
            return;
        };
        match self.levels.last_mut() {
            Some((s, m)) if *s == parent => {
                for (c, d) in top {
                    m.entry(c).or_default().merge(d);
                }
            }
            _ => self.levels.push((parent, top)),
        }
    }

    /// Subtransaction `sub` rolled back: its changes go with it.
    pub fn abort_sub(&mut self, sub: u32) {
        while self.levels.last().is_some_and(|(s, _)| *s >= sub) {
            self.levels.pop();
        }
    }

    /// The changes to N and the total length of `coll`.
    pub fn n_len(&self, coll: i32) -> (i64, i64) {
        self.levels
            .iter()
            .filter_map(|(_, m)| m.get(&coll))
            .fold((0, 0), |(n, l), d| (n + d.n_docs, l + d.total_len))
    }

    /// Whether anything is recorded for `coll`.
    pub fn touches(&self, coll: i32) -> bool {
        self.levels.iter().any(|(_, m)| m.contains_key(&coll))
    }

    /// The df and cf changes of one term of `coll`.
    pub fn term(&self, coll: i32, term: &str) -> (i64, i64) {
        self.levels
            .iter()
            .filter_map(|(_, m)| m.get(&coll)?.terms.get(term))
            .fold((0, 0), |(a, b), &(df, cf)| (a + df, b + cf))
    }

    /// Calls `f(term, df, cf)` for each change recorded for `coll`: once per term and
    /// level, so a term changed in several savepoint levels comes once per level
    /// (the changes add up).
    pub fn each_term(&self, coll: i32, mut f: impl FnMut(&str, i64, i64)) {
        for d in self.levels.iter().filter_map(|(_, m)| m.get(&coll)) {
            for (t, &(df, cf)) in &d.terms {
                f(t, df, cf);
            }
        }
    }

    /// How many term changes are recorded for `coll` (over all levels).
    pub fn term_changes(&self, coll: i32) -> usize {
        self.levels
            .iter()
            .filter_map(|(_, m)| m.get(&coll))
            .map(|d| d.terms.len())
            .sum()
    }

    /// Drops what is recorded for `coll` (its statistics were rebuilt from the
    /// tables, which already hold this transaction's rows).
    pub fn forget(&mut self, coll: i32) {
        for (_, m) in &mut self.levels {
            m.remove(&coll);
        }
    }

    /// Takes every change, summed over the levels, by collection id.
    pub fn take(&mut self) -> Vec<(i32, CollDelta)> {
        let mut all: HashMap<i32, CollDelta> = HashMap::new();
        for (_, m) in std::mem::take(&mut self.levels) {
            for (c, d) in m {
                all.entry(c).or_default().merge(d);
            }
        }
        let mut v: Vec<(i32, CollDelta)> = all.into_iter().filter(|(_, d)| !d.is_empty()).collect();
        v.sort_unstable_by_key(|(c, _)| *c);
        v
    }

    /// Takes the changes to one collection, summed over the levels.
    pub fn take_one(&mut self, coll: i32) -> Option<CollDelta> {
        let mut out: Option<CollDelta> = None;
        for (_, m) in &mut self.levels {
            if let Some(d) = m.remove(&coll) {
                out.get_or_insert_with(CollDelta::default).merge(d);
            }
        }
        out.filter(|d| !d.is_empty())
    }

    /// Forgets everything (the transaction aborted).
    pub fn clear(&mut self) {
        self.levels.clear();
    }

    pub fn is_empty(&self) -> bool {
        self.levels.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(d: &mut CollDelta, terms: &[(&str, i64)], sign: i64) {
        let len = terms.iter().map(|t| t.1).sum();
        d.add_doc(terms.iter().copied(), len, sign);
    }

    #[test]
    fn sums_documents() {
        let mut t = TxDelta::default();
        t.add(1, 7, |d| doc(d, &[("a", 2), ("b", 1)], 1));
        t.add(1, 7, |d| doc(d, &[("a", 1)], 1));
        assert_eq!(t.n_len(7), (2, 4));
        assert_eq!(t.term(7, "a"), (2, 3));
        assert_eq!(t.term(7, "b"), (1, 1));
        assert_eq!(t.term(7, "c"), (0, 0));
        assert_eq!(t.n_len(8), (0, 0));
        assert!(t.touches(7) && !t.touches(8));
    }

    #[test]
    fn removal_cancels_and_is_not_written() {
        let mut t = TxDelta::default();
        t.add(1, 1, |d| doc(d, &[("a", 2)], 1));
        t.add(1, 1, |d| doc(d, &[("a", 2)], -1));
        let taken = t.take();
        assert_eq!(taken.len(), 1);
        let (terms, dfs, cfs) = taken[0].1.sorted_terms();
        assert!(terms.is_empty() && dfs.is_empty() && cfs.is_empty());
        assert_eq!(taken[0].1.changes, 2);
        assert_eq!(taken[0].1.n_docs, 0);
        assert!(t.is_empty());
    }

    #[test]
    fn subtransactions_commit_and_abort() {
        let mut t = TxDelta::default();
        t.add(1, 1, |d| doc(d, &[("a", 1)], 1));
        t.add(2, 1, |d| doc(d, &[("b", 1)], 1));
        t.add(3, 1, |d| doc(d, &[("c", 1)], 1));
        t.abort_sub(3);
        assert_eq!(t.term(1, "c"), (0, 0));
        t.commit_sub(2, 1);
        assert_eq!(t.term(1, "b"), (1, 1));
        assert_eq!(t.n_len(1), (2, 2));
        // A savepoint with nothing recorded, released or rolled back, changes nothing.
        t.commit_sub(4, 1);
        t.abort_sub(5);
        assert_eq!(t.n_len(1), (2, 2));
        // Commit into a parent that recorded nothing itself keeps the changes.
        t.add(7, 2, |d| doc(d, &[("x", 3)], 1));
        t.commit_sub(7, 6);
        t.commit_sub(6, 1);
        assert_eq!(t.term(2, "x"), (1, 3));
        t.abort_sub(6);
        assert_eq!(t.term(2, "x"), (1, 3), "6 was already released into 1");
        let all = t.take();
        assert_eq!(all.iter().map(|(c, _)| *c).collect::<Vec<_>>(), vec![1, 2]);
    }

    #[test]
    fn terms_are_written_in_byte_order() {
        let mut d = CollDelta::default();
        doc(&mut d, &[("я", 1), ("b", 1), ("a", 1), ("B", 1)], 1);
        let (terms, _, _) = d.sorted_terms();
        assert_eq!(terms, vec!["B", "a", "b", "я"]);
    }

    #[test]
    fn forget_drops_one_collection() {
        let mut t = TxDelta::default();
        t.add(1, 1, |d| doc(d, &[("a", 1)], 1));
        t.add(2, 2, |d| doc(d, &[("a", 1)], 1));
        t.forget(1);
        assert_eq!(t.n_len(1), (0, 0));
        assert!(t.take_one(1).is_none());
        t.add(3, 2, |d| doc(d, &[("b", 2)], 1));
        let two = t.take_one(2).unwrap_or_default();
        assert_eq!((two.n_docs, two.total_len, two.changes), (2, 3, 2));
        assert_eq!(t.n_len(2), (0, 0));
        t.add(1, 2, |d| doc(d, &[("a", 1)], 1));
        assert_eq!(t.n_len(2), (1, 1));
        let mut seen = Vec::new();
        t.each_term(2, |term, df, cf| seen.push((term.to_string(), df, cf)));
        assert_eq!(seen, vec![("a".to_string(), 1, 1)]);
        assert_eq!(t.term_changes(2), 1);
    }
}
