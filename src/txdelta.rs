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

    /// Adds (`sign` = 1) or removes (`sign` = -1) a whole document: its body terms
    /// and its length ([`crate::document::Document::length`]).
    pub fn add_document(&mut self, doc: &crate::document::Document, sign: i64) {
        self.add_doc(
            doc.terms.iter().map(|t| (t.term.as_str(), i64::from(t.tf))),
            doc.length() as i64,
            sign,
        );
    }

    /// Adds `other`'s changes. The smaller term map goes into the larger: a commit
    /// with thousands of savepoints still open releases them one by one, each into
    /// its parent, and moving the growing sum up every time made that commit
    /// quadratic (10,000 levels: 17 s).
    pub fn merge(&mut self, mut other: CollDelta) {
        self.n_docs += other.n_docs;
        self.total_len += other.total_len;
        self.changes += other.changes;
        if other.terms.len() > self.terms.len() {
            std::mem::swap(&mut self.terms, &mut other.terms);
        }
        for (t, (df, cf)) in other.terms {
            let e = self.terms.entry(t).or_insert((0, 0));
            e.0 += df;
            e.1 += cf;
        }
    }

    /// The changes that undo these.
    pub fn negated(&self) -> CollDelta {
        CollDelta {
            n_docs: -self.n_docs,
            total_len: -self.total_len,
            changes: -self.changes,
            terms: self
                .terms
                .iter()
                .map(|(t, &(df, cf))| (t.clone(), (-df, -cf)))
                .collect(),
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

/// One INSERT or UPDATE statement on an enabled table, followed from its start to
/// its end so that rows its BEFORE trigger counted but the table never received
/// (`INSERT … ON CONFLICT`, a later BEFORE trigger that returns NULL) do not stay in
/// the statistics. The BEFORE row trigger counts the rows it hands back to the
/// executor; an AFTER row trigger records the tuple ids of those that were stored.
/// When the two agree, which is the common case, nothing more is done; when they
/// do not, the statement's changes are rebuilt from the stored rows
/// ([`Statement::repair`]).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Statement {
    /// The table (its oid; for a partitioned table, the enabled one).
    pub tbl: u32,
    /// Statements on the table open in this one's level: one, or more when a
    /// statement on the same table starts before this one ends. A query with a
    /// data-modifying CTE runs its statements' BEFORE triggers as each starts,
    /// and their AFTER row and statement triggers together at the query's end,
    /// so one statement's rows are stored inside another's: they are followed as
    /// one statement, ended when the last of them ends.
    pub depth: u32,
    /// Rows the BEFORE trigger handed back to the executor.
    pub returned: u64,
    /// Rows among them taken as given (a restore's documents), not counted.
    pub taken_as_given: u64,
    /// Where the inserted rows that were stored are (relation, tuple id: a
    /// partitioned table's rows are in its partitions).
    pub inserted: Vec<RowAt>,
    /// Where the updated rows that were stored are: the relation, the old
    /// version's tuple id and the new one's.
    pub updated: Vec<(u32, u64, u64)>,
    /// The statement's level also holds changes that are not its own rows' (a
    /// nested statement, a subtransaction, a direct `add_document`).
    pub mixed: bool,
    /// Those other changes, per collection, as well: a statement whose rows are
    /// rebuilt keeps them as they are (a nested statement's were already repaired
    /// at its own end).
    pub other: HashMap<i32, CollDelta>,
    /// A collection was recomputed from its tables while the statement was open
    /// (a nested statement's repair, a TRUNCATE, `dedup.recompute` in a trigger):
    /// the rows it stored before are counted by that, so its rows cannot be
    /// rebuilt, and a statement whose rows were not all stored recomputes again.
    pub recounted: bool,
    /// Rows of a partitioned table this statement updated, by their new key: where
    /// each was, and its old document (an identity of its bytes). PostgreSQL
    /// carries out an update that moves a row to another partition as a delete
    /// from the old one and an insert into the new one, whose row triggers fire
    /// too: these tell the two halves of a move from a real delete and insert.
    /// The flag says whether the update counted the row (it changed a column the
    /// document is made of).
    pub updating: HashMap<String, (RowAt, Option<u64>, bool)>,
    /// The old documents of moved rows, until their delete comes.
    pub moved_docs: Vec<u64>,
    /// Where the moved rows were (their old versions leave the statistics when the
    /// statement's changes are rebuilt).
    pub moved_from: Vec<RowAt>,
}

/// A stored row version: its relation's oid and its tuple id.
pub type RowAt = (u32, u64);

/// What a statement's end does with its changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repair {
    /// Every counted row was stored: the changes stand.
    Keep,
    /// Some rows were not stored: the changes are those of the stored rows, read
    /// back from the table by their tuple ids.
    Rebuild,
    /// Some rows were not stored and the level cannot be rebuilt from the rows
    /// alone: the collection is recomputed from its tables.
    Recompute,
}

impl Statement {
    pub fn new(tbl: u32) -> Statement {
        Statement {
            tbl,
            depth: 1,
            ..Statement::default()
        }
    }

    /// Rows the AFTER trigger saw stored.
    pub fn stored(&self) -> u64 {
        (self.inserted.len() + self.updated.len()) as u64
    }

    /// The BEFORE trigger updates a row of a partitioned table, now keyed `key`,
    /// stored at `at`, whose old document is `old_doc`; `counted` when it checked
    /// and counted the row (the update changed its text), and so returned it.
    pub fn note_update(&mut self, key: String, at: RowAt, old_doc: Option<u64>, counted: bool) {
        self.updating.insert(key, (at, old_doc, counted));
    }

    /// Whether an insert of a row keyed `key` is the second half of a move of a row
    /// this statement updated: Some(whether the update counted it). The insert is
    /// not counted again (the row's document stays the one counted before or by
    /// the update), and the delete of its old version is expected.
    pub fn take_move(&mut self, key: &str) -> Option<bool> {
        let (at, old_doc, counted) = self.updating.remove(key)?;
        self.moved_from.push(at);
        self.moved_docs.extend(old_doc);
        Some(counted)
    }

    /// Whether a delete of a row whose document is `doc` is the first half of a
    /// move (the update already removed that document: the delete does not again).
    pub fn take_move_delete(&mut self, doc: u64) -> bool {
        match self.moved_docs.iter().position(|&d| d == doc) {
            Some(i) => {
                self.moved_docs.swap_remove(i);
                true
            }
            None => false,
        }
    }

    pub fn repair(&self) -> Repair {
        if self.stored() == self.returned {
            Repair::Keep
        } else if self.taken_as_given > 0 || self.recounted {
            Repair::Recompute
        } else {
            Repair::Rebuild
        }
    }
}

/// A subtransaction's changes, or a statement's (innermost last).
#[derive(Debug)]
struct Level {
    sub: u32,
    stmt: Option<Statement>,
    colls: HashMap<i32, CollDelta>,
}

impl Level {
    fn new(sub: u32, stmt: Option<Statement>) -> Level {
        Level {
            sub,
            stmt,
            colls: HashMap::new(),
        }
    }
}

/// The changes of one transaction, per subtransaction level and open statement
/// (innermost last).
#[derive(Default, Debug)]
pub struct TxDelta {
    levels: Vec<Level>,
    /// The lower levels' changes summed, for lookups through many levels.
    below: std::cell::RefCell<Below>,
}

/// The summed changes of `levels[..upto]`. A lookup walks every level, and an
/// insert looks up each term of the documents it weighs: with thousands of
/// savepoints left open (a driver's automatic savepoints, never released), one
/// level each, every insert walked all of them (10,000 levels: 264 s against
/// 2.8 s). Past [`WALKED_LEVELS`] levels a lookup reads this sum and walks only
/// the two innermost levels, the ones a statement changes; the sum grows by the
/// levels added below them, and starts over, at the next lookup, when a level it
/// holds changes or goes (a savepoint released or rolled back, a recompute).
#[derive(Default, Debug)]
struct Below {
    upto: usize,
    sums: HashMap<i32, CollDelta>,
}

/// Lookups through at most this many levels walk them all.
const WALKED_LEVELS: usize = 4;

impl TxDelta {
    /// Records a change to collection `coll` made in subtransaction `subxact`
    /// (PostgreSQL's SubTransactionId: 1 is the top level, inner ones are larger);
    /// `row_of` is the table whose row trigger made it, if one did.
    pub fn add(
        &mut self,
        subxact: u32,
        coll: i32,
        row_of: Option<u32>,
        f: impl FnOnce(&mut CollDelta),
    ) {
        if self.levels.last().is_none_or(|l| l.sub != subxact) {
            self.levels.push(Level::new(subxact, None));
        }
        // A row's change goes to its own statement's level, wherever that is among
        // the open statements of this subtransaction: statements of one query
        // interleave (an INSERT that reads a data-modifying CTE runs the CTE's
        // rows between its own).
        if let Some(i) = row_of.and_then(|t| self.statement_index(t)) {
            self.changed(i);
            f(self.levels[i].colls.entry(coll).or_default());
            return;
        }
        self.changed(self.levels.len().saturating_sub(1));
        if let Some(l) = self.levels.last_mut() {
            let delta = l.colls.entry(coll).or_default();
            match &mut l.stmt {
                Some(s) if row_of != Some(s.tbl) => {
                    s.mixed = true;
                    let mut change = CollDelta::default();
                    f(&mut change);
                    s.other.entry(coll).or_default().merge(change.clone());
                    delta.merge(change);
                }
                _ => f(delta),
            }
        }
    }

    /// A statement on table `tbl` starts (in subtransaction `subxact`): a level of
    /// its own, or the open statement's on the same table (see [`Statement::depth`]).
    pub fn open_statement(&mut self, subxact: u32, tbl: u32) {
        if self.levels.last().is_some_and(|l| l.sub == subxact) {
            if let Some(s) = self.statement(tbl) {
                s.depth += 1;
                return;
            }
        }
        self.levels
            .push(Level::new(subxact, Some(Statement::new(tbl))));
    }

    /// The level of the innermost open statement on `tbl` among the levels of the
    /// innermost subtransaction.
    fn statement_index(&self, tbl: u32) -> Option<usize> {
        let sub = self.levels.last()?.sub;
        self.levels
            .iter()
            .enumerate()
            .rev()
            .take_while(|(_, l)| l.sub == sub)
            .find(|(_, l)| l.stmt.as_ref().is_some_and(|s| s.tbl == tbl))
            .map(|(i, _)| i)
    }

    /// The innermost open statement on `tbl` (in the innermost subtransaction).
    pub fn statement(&mut self, tbl: u32) -> Option<&mut Statement> {
        let i = self.statement_index(tbl)?;
        self.levels[i].stmt.as_mut()
    }

    /// Ends the innermost open statement, when it is one on `tbl`: its level comes
    /// off, with its changes, for the caller to pass to [`TxDelta::merge_down`]
    /// (as they are or repaired).
    pub fn close_statement(
        &mut self,
        tbl: u32,
    ) -> Option<(u32, Statement, HashMap<i32, CollDelta>)> {
        let i = self.statement_index(tbl)?;
        if let Some(s) = self.levels[i].stmt.as_mut() {
            if s.depth > 1 {
                s.depth -= 1;
                return None;
            }
        }
        self.changed(i);
        let l = self.levels.remove(i);
        l.stmt.map(|s| (l.sub, s, l.colls))
    }

    /// Level `i` changes or goes: the sum of the levels below starts over if it
    /// holds it.
    fn changed(&mut self, i: usize) {
        let b = self.below.get_mut();
        if i < b.upto {
            b.upto = 0;
            b.sums.clear();
        }
    }

    /// Calls `visit` with the changes recorded for `coll`: one [`CollDelta`] per
    /// level that has some, or the sum of the lower levels and those of the
    /// innermost two (see [`Below`]).
    fn visit(&self, coll: i32, mut visit: impl FnMut(&CollDelta)) {
        let n = self.levels.len();
        let mut from = 0;
        if n > WALKED_LEVELS {
            let mut b = self.below.borrow_mut();
            let want = n - 2;
            for l in &self.levels[b.upto.min(want)..want] {
                for (c, d) in &l.colls {
                    b.sums.entry(*c).or_default().merge(d.clone());
                }
            }
            b.upto = b.upto.max(want);
            if let Some(d) = b.sums.get(&coll) {
                visit(d);
            }
            from = b.upto;
        }
        for d in self.levels[from..]
            .iter()
            .filter_map(|l| l.colls.get(&coll))
        {
            visit(d);
        }
    }

    /// Changes made in subtransaction `sub` (a level that just ended) become those of
    /// the level below, which is `sub`'s, or a new one.
    pub fn merge_down(&mut self, sub: u32, colls: HashMap<i32, CollDelta>) {
        if colls.is_empty() {
            return;
        }
        self.changed(self.levels.len().saturating_sub(1));
        match self.levels.last_mut() {
            Some(l) if l.sub == sub => {
                if let Some(s) = &mut l.stmt {
                    s.mixed = true;
                    for (c, d) in &colls {
                        s.other.entry(*c).or_default().merge(d.clone());
                    }
                }
                for (c, d) in colls {
                    l.colls.entry(c).or_default().merge(d);
                }
            }
            _ => self.levels.push(Level {
                sub,
                stmt: None,
                colls,
            }),
        }
    }

    /// Subtransaction `sub` committed into `parent`: its changes become the
    /// parent's.
    pub fn commit_sub(&mut self, sub: u32, parent: u32) {
        let Some(top) = self.levels.pop_if(|l| l.sub == sub && l.stmt.is_none()) else {
            return;
        };
        self.changed(self.levels.len());
        self.merge_down(parent, top.colls);
    }

    /// Subtransaction `sub` rolled back: its changes (and its statements) go with it.
    pub fn abort_sub(&mut self, sub: u32) {
        while self.levels.last().is_some_and(|l| l.sub >= sub) {
            self.levels.pop();
        }
        self.changed(self.levels.len());
    }

    /// The changes to N and the total length of `coll`.
    pub fn n_len(&self, coll: i32) -> (i64, i64) {
        let (n, len, _) = self.n_len_changes(coll);
        (n, len)
    }

    /// The changes to N and the total length of `coll`, and how many documents
    /// were added or removed ([`CollDelta::changes`]).
    pub fn n_len_changes(&self, coll: i32) -> (i64, i64, i64) {
        let mut out = (0, 0, 0);
        self.visit(coll, |d| {
            out.0 += d.n_docs;
            out.1 += d.total_len;
            out.2 += d.changes;
        });
        out
    }

    /// Whether anything is recorded for `coll`.
    pub fn touches(&self, coll: i32) -> bool {
        let mut any = false;
        self.visit(coll, |_| any = true);
        any
    }

    /// The df and cf changes of one term of `coll`.
    pub fn term(&self, coll: i32, term: &str) -> (i64, i64) {
        let mut out = (0, 0);
        self.visit(coll, |d| {
            if let Some(&(df, cf)) = d.terms.get(term) {
                out.0 += df;
                out.1 += cf;
            }
        });
        out
    }

    /// Calls `f(term, df, cf)` for each change recorded for `coll`: once per term and
    /// level, so a term changed in several savepoint levels comes once per level
    /// (the changes add up).
    pub fn each_term(&self, coll: i32, mut f: impl FnMut(&str, i64, i64)) {
        for d in self.levels.iter().filter_map(|l| l.colls.get(&coll)) {
            for (t, &(df, cf)) in &d.terms {
                f(t, df, cf);
            }
        }
    }

    /// How many term changes are recorded for `coll` (over all levels).
    pub fn term_changes(&self, coll: i32) -> usize {
        self.levels
            .iter()
            .filter_map(|l| l.colls.get(&coll))
            .map(|d| d.terms.len())
            .sum()
    }

    /// Drops what is recorded for `coll`: its statistics were rebuilt from the
    /// tables, which already hold this transaction's rows, in subtransaction `sub`
    /// (the innermost). What `sub`'s own levels recorded goes; what outer levels
    /// recorded is cancelled in `sub` instead, by its negation: if `sub` rolls back,
    /// the rebuild goes with it and those changes count again (a `TRUNCATE` rolled
    /// back to a savepoint leaves the rows inserted before it counted). Open
    /// statements are marked [`Statement::recounted`].
    pub fn forget(&mut self, sub: u32, coll: i32) {
        self.changed(0);
        for l in &mut self.levels {
            if let Some(s) = &mut l.stmt {
                if l.sub >= sub {
                    s.other.remove(&coll);
                }
                s.recounted = true;
            }
        }
        self.detach(sub, coll);
    }

    /// Takes every change, summed over the levels, by collection id.
    pub fn take(&mut self) -> Vec<(i32, CollDelta)> {
        self.changed(0);
        let mut all: HashMap<i32, CollDelta> = HashMap::new();
        for l in std::mem::take(&mut self.levels) {
            for (c, d) in l.colls {
                all.entry(c).or_default().merge(d);
            }
        }
        let mut v: Vec<(i32, CollDelta)> = all.into_iter().filter(|(_, d)| !d.is_empty()).collect();
        v.sort_unstable_by_key(|(c, _)| *c);
        v
    }

    /// Takes the changes to one collection, summed over the levels, to be written
    /// now in subtransaction `sub` (the innermost). As in [`TxDelta::forget`], what
    /// outer levels recorded is cancelled in `sub` rather than dropped: if `sub`
    /// rolls back, so does the write, and those changes count again.
    pub fn take_one(&mut self, sub: u32, coll: i32) -> Option<CollDelta> {
        self.detach(sub, coll).filter(|d| !d.is_empty())
    }

    /// The changes to `coll`, summed over the levels, taken out of the count as
    /// of subtransaction `sub` (the innermost): `sub`'s own levels drop theirs, and
    /// what outer levels recorded is cancelled by its negation in `sub`, so that a
    /// rollback of `sub` counts them again and a release cancels them out.
    fn detach(&mut self, sub: u32, coll: i32) -> Option<CollDelta> {
        self.changed(0);
        let mut out: Option<CollDelta> = None;
        let mut cancel = CollDelta::default();
        for l in &mut self.levels {
            let d = if l.sub < sub {
                let d = l.colls.get(&coll).cloned();
                if let Some(d) = &d {
                    cancel.merge(d.negated());
                }
                d
            } else {
                l.colls.remove(&coll)
            };
            if let Some(d) = d {
                out.get_or_insert_with(CollDelta::default).merge(d);
            }
        }
        if cancel.changes != 0 || cancel.n_docs != 0 || !cancel.terms.is_empty() {
            self.add(sub, coll, None, |d| d.merge(cancel));
        }
        out
    }

    /// Forgets everything (the transaction aborted).
    pub fn clear(&mut self) {
        self.changed(0);
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
        t.add(1, 7, None, |d| doc(d, &[("a", 2), ("b", 1)], 1));
        t.add(1, 7, None, |d| doc(d, &[("a", 1)], 1));
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
        t.add(1, 1, None, |d| doc(d, &[("a", 2)], 1));
        t.add(1, 1, None, |d| doc(d, &[("a", 2)], -1));
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
        t.add(1, 1, None, |d| doc(d, &[("a", 1)], 1));
        t.add(2, 1, None, |d| doc(d, &[("b", 1)], 1));
        t.add(3, 1, None, |d| doc(d, &[("c", 1)], 1));
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
        t.add(7, 2, None, |d| doc(d, &[("x", 3)], 1));
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
    fn a_rebuild_in_a_savepoint_that_rolls_back_leaves_earlier_changes_counted() {
        // INSERT; SAVEPOINT a; TRUNCATE (the collection recomputed); ROLLBACK TO a.
        let mut t = TxDelta::default();
        t.add(1, 1, None, |d| doc(d, &[("a", 1), ("b", 2)], 1));
        t.add(1, 1, None, |d| doc(d, &[("a", 1)], 1));
        t.add(2, 1, None, |d| doc(d, &[("c", 1)], 1));
        t.forget(2, 1);
        assert_eq!(t.n_len(1), (0, 0));
        assert_eq!(t.term(1, "a"), (0, 0));
        t.abort_sub(2);
        assert_eq!(t.n_len(1), (2, 4));
        assert_eq!(t.term(1, "a"), (2, 2));
        let one = t.take_one(1, 1).unwrap_or_default();
        assert_eq!((one.n_docs, one.changes), (2, 2));
        // Released instead: the rebuild stands, and nothing is left to write.
        let mut t = TxDelta::default();
        t.add(1, 1, None, |d| doc(d, &[("a", 1)], 1));
        t.add(2, 1, None, |d| doc(d, &[("c", 1)], 1));
        t.forget(2, 1);
        t.commit_sub(2, 1);
        assert_eq!(t.n_len(1), (0, 0));
        assert!(t.take_one(1, 1).is_none());
        assert!(t.take().is_empty());
    }

    #[test]
    fn forget_drops_one_collection() {
        let mut t = TxDelta::default();
        t.add(1, 1, None, |d| doc(d, &[("a", 1)], 1));
        t.add(2, 2, None, |d| doc(d, &[("a", 1)], 1));
        t.forget(2, 1);
        assert_eq!(t.n_len(1), (0, 0));
        assert!(t.take_one(2, 1).is_none());
        t.add(3, 2, None, |d| doc(d, &[("b", 2)], 1));
        let two = t.take_one(3, 2).unwrap_or_default();
        assert_eq!((two.n_docs, two.total_len, two.changes), (2, 3, 2));
        assert_eq!(t.n_len(2), (0, 0));
        // Released all the way up, the write stands and nothing is left to write.
        t.commit_sub(3, 2);
        t.commit_sub(2, 1);
        assert_eq!(t.n_len(2), (0, 0));
        assert!(t.take_one(1, 2).is_none());
        let mut t = TxDelta::default();
        t.add(1, 2, None, |d| doc(d, &[("a", 1)], 1));
        assert_eq!(t.n_len(2), (1, 1));
        let mut seen = Vec::new();
        t.each_term(2, |term, df, cf| seen.push((term.to_string(), df, cf)));
        assert_eq!(seen, vec![("a".to_string(), 1, 1)]);
        assert_eq!(t.term_changes(2), 1);
    }

    #[test]
    fn a_write_in_a_savepoint_that_rolls_back_leaves_earlier_changes_counted() {
        // INSERT; SAVEPOINT a; SELECT dedup.flush_stats(…); ROLLBACK TO a.
        let mut t = TxDelta::default();
        t.add(1, 1, None, |d| doc(d, &[("a", 1)], 1));
        t.add(2, 1, None, |d| doc(d, &[("b", 1)], 1));
        let written = t.take_one(2, 1).unwrap_or_default();
        assert_eq!((written.n_docs, written.changes), (2, 2));
        assert_eq!(t.n_len(1), (0, 0));
        t.abort_sub(2);
        assert_eq!(t.n_len(1), (1, 1));
        assert_eq!(t.term(1, "a"), (1, 1));
        assert_eq!(t.term(1, "b"), (0, 0));
    }

    #[test]
    fn a_statement_whose_rows_were_all_stored_keeps_its_changes() {
        let mut t = TxDelta::default();
        t.add(1, 1, None, |d| doc(d, &[("a", 1)], 1));
        t.open_statement(1, 10);
        t.add(1, 1, Some(10), |d| doc(d, &[("b", 1)], 1));
        let s = t.statement(10).map(|s| {
            s.returned += 1;
            s.inserted.push((10, 7));
        });
        assert!(s.is_some());
        assert!(
            t.statement(11).is_none(),
            "another table's rows are not this statement's"
        );
        // Lookups inside the statement see its rows.
        assert_eq!(t.n_len(1), (2, 2));
        let (sub, st, colls) = t.close_statement(10).expect("open");
        assert_eq!((sub, st.repair()), (1, Repair::Keep));
        t.merge_down(sub, colls);
        assert_eq!(t.term(1, "b"), (1, 1));
        assert_eq!(t.levels.len(), 1, "merged into the transaction's level");
    }

    #[test]
    fn a_row_never_stored_asks_for_a_rebuild() {
        let mut t = TxDelta::default();
        t.open_statement(1, 10);
        for _ in 0..2 {
            t.add(1, 1, Some(10), |d| doc(d, &[("b", 1)], 1));
            if let Some(s) = t.statement(10) {
                s.returned += 1;
            }
        }
        if let Some(s) = t.statement(10) {
            s.inserted.push((10, 1));
        }
        let (_, st, _) = t.close_statement(10).expect("open");
        assert_eq!(st.repair(), Repair::Rebuild);
        // Restored rows were not counted: the rows cannot tell which were.
        let mut r = st.clone();
        r.taken_as_given = 1;
        assert_eq!(r.repair(), Repair::Recompute);
        r.taken_as_given = 0;
        r.mixed = true;
        assert_eq!(
            r.repair(),
            Repair::Rebuild,
            "other changes inside it are kept aside, not a reason to recompute"
        );
    }

    #[test]
    fn statements_on_one_table_that_overlap_are_followed_as_one() {
        // WITH ins AS (INSERT INTO t ...) UPDATE t ...: both statements start, then
        // both end (their AFTER triggers fire together at the query's end).
        let mut t = TxDelta::default();
        t.open_statement(1, 10);
        t.add(1, 1, Some(10), |d| doc(d, &[("u", 1)], 1));
        if let Some(s) = t.statement(10) {
            s.returned += 1;
        }
        t.open_statement(1, 10);
        for _ in 0..2 {
            t.add(1, 1, Some(10), |d| doc(d, &[("i", 1)], 1));
            if let Some(s) = t.statement(10) {
                s.returned += 1;
            }
        }
        if let Some(s) = t.statement(10) {
            s.updated.push((10, 1, 2));
            s.inserted.push((10, 3));
        }
        assert!(
            t.close_statement(10).is_none(),
            "the first end ends neither"
        );
        let (_, st, colls) = t.close_statement(10).expect("the second ends both");
        assert_eq!((st.returned, st.stored()), (3, 2));
        assert_eq!(st.repair(), Repair::Rebuild);
        assert!(st.other.is_empty() && !st.mixed);
        assert_eq!(colls[&1].terms.get("i"), Some(&(2, 2)));
        // Another table's statement inside is a level of its own.
        let mut t = TxDelta::default();
        t.open_statement(1, 10);
        t.open_statement(1, 20);
        assert!(t.close_statement(20).is_some());
        assert!(t.close_statement(10).is_some());
    }

    #[test]
    fn a_table_written_twice_around_another_is_one_statement() {
        // WITH x AS (INSERT INTO t10 ...), b AS (INSERT INTO t20 ...),
        //      y AS (INSERT INTO t10 ...) SELECT 1: both t10 statements share a level.
        let mut t = TxDelta::default();
        t.open_statement(1, 10);
        t.open_statement(1, 20);
        t.open_statement(1, 10);
        assert_eq!(t.levels.len(), 2);
        assert_eq!(t.statement(10).map(|s| s.depth), Some(2));
        assert!(t.close_statement(10).is_none());
        assert!(t.close_statement(20).is_some());
        assert!(t.close_statement(10).is_some());
        assert!(t.levels.is_empty());
    }

    #[test]
    fn a_recompute_inside_a_statement_makes_its_repair_a_recompute() {
        let mut t = TxDelta::default();
        t.open_statement(1, 10);
        t.add(1, 1, Some(10), |d| doc(d, &[("a", 1)], 1));
        t.add(1, 1, None, |d| doc(d, &[("x", 1)], 1));
        if let Some(s) = t.statement(10) {
            s.returned = 2;
            s.inserted.push((10, 1));
        }
        t.forget(1, 1);
        let (_, st, colls) = t.close_statement(10).expect("open");
        assert!(st.other.is_empty() && !colls.contains_key(&1));
        assert_eq!(st.repair(), Repair::Recompute);
    }

    #[test]
    fn interleaved_statements_keep_their_own_rows() {
        // WITH a AS (INSERT INTO t10 ... RETURNING) INSERT INTO t20 SELECT FROM a:
        // t20's statement starts, t10's starts while t20 reads it, their rows
        // alternate, and both end at the query's end, t20's first.
        let mut t = TxDelta::default();
        t.open_statement(1, 20);
        t.open_statement(1, 10);
        for _ in 0..2 {
            t.add(1, 1, Some(10), |d| doc(d, &[("a", 1)], 1));
            t.statement(10).unwrap().returned += 1;
            t.add(1, 1, Some(20), |d| doc(d, &[("b", 1)], 1));
            t.statement(20).unwrap().returned += 1;
        }
        t.statement(10).unwrap().inserted.push((10, 1));
        t.statement(20).unwrap().inserted.extend([(20, 1), (20, 2)]);
        let (sub, st20, colls20) = t.close_statement(20).expect("t20, below t10");
        assert_eq!((st20.returned, st20.stored(), st20.mixed), (2, 2, false));
        assert_eq!(colls20[&1].terms.get("b"), Some(&(2, 2)));
        assert_eq!(colls20[&1].terms.get("a"), None);
        t.merge_down(sub, colls20);
        let (_, st10, _) = t.close_statement(10).expect("t10");
        assert_eq!((st10.returned, st10.stored()), (2, 1));
        assert_eq!(st10.repair(), Repair::Rebuild);
        assert_eq!(
            st10.other[&1].terms.get("b"),
            Some(&(2, 2)),
            "t20's rows stand"
        );
    }

    #[test]
    fn other_changes_inside_a_statement_are_kept_aside() {
        let mut t = TxDelta::default();
        t.open_statement(1, 10);
        t.add(1, 1, Some(10), |d| doc(d, &[("a", 1)], 1));
        // A nested statement on another table of the collection, and a direct add.
        t.open_statement(1, 20);
        t.add(1, 1, Some(20), |d| doc(d, &[("n", 1)], 1));
        let (sub, st, colls) = t.close_statement(20).expect("nested");
        t.merge_down(sub, colls);
        t.add(1, 2, None, |d| doc(d, &[("x", 2)], 1));
        let (_, st10, colls10) = t.close_statement(10).expect("open");
        assert!(st.other.is_empty());
        assert_eq!(st10.other.len(), 2);
        assert_eq!(st10.other[&1].terms.get("n"), Some(&(1, 1)));
        assert_eq!(
            st10.other[&1].terms.get("a"),
            None,
            "its own row is not other"
        );
        assert_eq!(st10.other[&2].terms.get("x"), Some(&(1, 2)));
        // The level holds both.
        assert_eq!(colls10[&1].terms.get("a"), Some(&(1, 1)));
        assert_eq!(colls10[&1].terms.get("n"), Some(&(1, 1)));
    }

    #[test]
    fn a_row_moved_between_partitions_is_counted_once() {
        let mut s = Statement::new(10);
        s.note_update("(1,2024-01-05)".into(), (11, 5), Some(99), true);
        s.note_update("(2,2024-01-06)".into(), (11, 6), Some(98), false);
        assert_eq!(
            s.take_move("(3,2024-01-07)"),
            None,
            "an insert of another key is an insert"
        );
        assert_eq!(s.take_move("(1,2024-01-05)"), Some(true));
        assert_eq!(s.take_move("(1,2024-01-05)"), None, "one insert per move");
        assert_eq!(s.moved_from, vec![(11, 5)]);
        assert!(
            !s.take_move_delete(98),
            "row 2 did not move: its delete is a delete"
        );
        assert!(s.take_move_delete(99));
        assert!(!s.take_move_delete(99));
    }

    #[test]
    fn other_changes_inside_a_statement_make_it_mixed() {
        let mut t = TxDelta::default();
        t.open_statement(1, 10);
        t.add(1, 1, Some(10), |d| doc(d, &[("a", 1)], 1));
        assert!(!t.statement(10).is_some_and(|s| s.mixed));
        // A nested statement on another table, ended and merged down.
        t.open_statement(1, 20);
        t.add(1, 1, Some(20), |d| doc(d, &[("n", 1)], 1));
        let (sub, st, colls) = t.close_statement(20).expect("nested");
        assert_eq!(st.repair(), Repair::Keep, "nothing counted, nothing stored");
        t.merge_down(sub, colls);
        assert!(t.statement(10).is_some_and(|s| s.mixed));
        assert_eq!(t.term(1, "n"), (1, 1));

        let mut t = TxDelta::default();
        t.open_statement(1, 10);
        t.add(1, 1, None, |d| doc(d, &[("a", 1)], 1));
        assert!(t.statement(10).is_some_and(|s| s.mixed), "a direct add");

        let mut t = TxDelta::default();
        t.open_statement(1, 10);
        t.add(2, 1, Some(10), |d| doc(d, &[("a", 1)], 1));
        assert!(
            t.statement(10).is_none(),
            "a subtransaction's level is on top"
        );
        t.commit_sub(2, 1);
        assert!(
            t.statement(10).is_some_and(|s| s.mixed),
            "released into the statement"
        );
    }

    #[test]
    fn a_rolled_back_savepoint_takes_its_statements() {
        let mut t = TxDelta::default();
        t.add(1, 1, None, |d| doc(d, &[("a", 1)], 1));
        t.open_statement(2, 10);
        t.add(2, 1, Some(10), |d| doc(d, &[("b", 1)], 1));
        t.abort_sub(2);
        assert!(t.close_statement(10).is_none());
        assert_eq!(t.n_len(1), (1, 1));
        // A statement with nothing to merge leaves no level behind.
        t.open_statement(1, 10);
        let (sub, _, colls) = t.close_statement(10).expect("open");
        t.merge_down(sub, colls);
        assert_eq!(t.levels.len(), 1);
    }

    /// What the lookups must answer: every level walked.
    fn walked(t: &TxDelta, coll: i32, term: &str) -> ((i64, i64), (i64, i64), bool) {
        let mut n = (0, 0);
        let mut tf = (0, 0);
        let mut any = false;
        for d in t.levels.iter().filter_map(|l| l.colls.get(&coll)) {
            any = true;
            n = (n.0 + d.n_docs, n.1 + d.total_len);
            if let Some(&(df, cf)) = d.terms.get(term) {
                tf = (tf.0 + df, tf.1 + cf);
            }
        }
        (n, tf, any)
    }

    #[test]
    fn lookups_through_many_levels_equal_walking_them() {
        // Savepoints opened (and sometimes released or rolled back), statements
        // on two tables, recomputes, in a seeded random order: after every step
        // the lookups agree with a walk over every level.
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m
        };
        let terms = ["a", "b", "c", "d"];
        let mut t = TxDelta::default();
        let mut subs: Vec<u32> = vec![1];
        let mut last_sub = 1;
        let mut open: Vec<(u32, u32)> = Vec::new();
        let mut deepest = 0;
        for step in 0..3_000 {
            let sub = *subs.last().expect("top level");
            match next(100) {
                0..=29 => {
                    last_sub += 1;
                    subs.push(last_sub);
                }
                30..=34 if subs.len() > 1 && open.last().is_none_or(|o| o.0 != sub) => {
                    // A subtransaction ends once its statements have.
                    let s = subs.pop().expect("open");
                    t.commit_sub(s, *subs.last().expect("parent"));
                }
                35..=37 if subs.len() > 1 => {
                    let s = subs.pop().expect("open");
                    t.abort_sub(s);
                    open.retain(|o| o.0 != s);
                }
                38..=49 => {
                    let tbl = 10 + next(2) as u32;
                    t.open_statement(sub, tbl);
                    open.push((sub, tbl));
                }
                50..=59 => {
                    if let Some(&(s, tbl)) = open.last().filter(|o| o.0 == sub) {
                        open.pop();
                        if let Some((s2, _, colls)) = t.close_statement(tbl) {
                            assert_eq!(s, s2);
                            t.merge_down(s2, colls);
                        }
                    }
                }
                60 => t.forget(sub, 1 + next(2) as i32),
                61 => {
                    t.take_one(sub, 1 + next(2) as i32);
                }
                _ => {
                    let coll = 1 + next(2) as i32;
                    let row_of = open.last().filter(|o| o.0 == sub).map(|o| o.1);
                    let a = terms[next(4) as usize];
                    let b = terms[next(4) as usize];
                    let sign = if next(4) == 0 { -1 } else { 1 };
                    t.add(sub, coll, row_of, |d| doc(d, &[(a, 1), (b, 2)], sign));
                }
            }
            deepest = deepest.max(t.levels.len());
            for coll in [1, 2] {
                for term in terms {
                    let (n, tf, any) = walked(&t, coll, term);
                    assert_eq!(t.n_len(coll), n, "step {step}");
                    assert_eq!(t.term(coll, term), tf, "step {step}");
                    assert_eq!(t.touches(coll), any, "step {step}");
                }
            }
        }
        assert!(deepest > 100, "the levels went deep: {deepest}");
    }
}
