//! Incremental collection statistics: a document added or removed is recorded in
//! the transaction's changes (`crate::txdelta`), read back by its own lookups, and
//! written just before it commits (`flush`), at once or as a pending batch that a
//! fold (here, or in `pg::worker`) moves into `term_stats`. Also the SQL functions
//! `add_document`, `remove_document` and `flush_stats`.

use crate::document::Document;
use crate::pg::cache::{self};
use crate::pg::collections::load;
use crate::pg::spi_err;
use crate::pg::stored;
use crate::pg::types::DocumentDatum;
use crate::weights::TermStat;
use pgrx::datum::DatumWithOid;
use pgrx::prelude::*;
use std::cell::RefCell;

/// Adds one document to a collection's statistics; see [`apply`].
pub fn add(coll_id: i32, doc: &Document, row_of: Option<pg_sys::Oid>) {
    apply(coll_id, doc, 1, row_of);
}

/// Removes one document from a collection's statistics (the inverse of [`add`]).
pub fn remove(coll_id: i32, doc: &Document, row_of: Option<pg_sys::Oid>) {
    apply(coll_id, doc, -1, row_of);
}

/// Adds (`sign = 1`) or removes (`sign = -1`) one document: recorded in this
/// transaction's statistics changes (see [`crate::txdelta`]), which its own lookups
/// read back at once and [`flush`] writes just before it commits. `row_of` is the
/// table whose row trigger makes the change, if one does (see
/// [`crate::pg::statement`]).
fn apply(coll_id: i32, doc: &Document, sign: i64, row_of: Option<pg_sys::Oid>) {
    // SAFETY: reads the backend's transaction state.
    let sub = unsafe { pg_sys::GetCurrentSubTransactionId() };
    DELTA.with(|d| {
        d.borrow_mut()
            .add(sub, coll_id, row_of.map(|o| o.to_u32()), |c| {
                c.add_document(doc, sign)
            })
    });
}

/// Term changes a transaction wrote straight into `term_stats` (see
/// [`take_written`]).
pub struct Written {
    pub coll_id: i32,
    pub terms: Vec<String>,
    pub dfs: Vec<i64>,
    pub cfs: Vec<i64>,
}

thread_local! {
    /// What the pre-commit flush wrote straight into `term_stats`, for the
    /// backend's term cache once the commit is through (`pg::xact`).
    static WRITTEN: RefCell<Vec<Written>> = const { RefCell::new(Vec::new()) };
    /// Collections whose batch filled in the current transaction, each with the
    /// role that wrote the pending rows (the extension owner, for the trigger's
    /// writes): `pg::worker` starts a fold for each, as that role, once it commits.
    static WANTED: RefCell<Vec<FoldWish>> = const { RefCell::new(Vec::new()) };
    /// This transaction's changes to collection statistics, not yet written.
    static DELTA: RefCell<crate::txdelta::TxDelta> = RefCell::new(crate::txdelta::TxDelta::default());
}

thread_local! {
    /// Whether this transaction has written statistics rows (see
    /// [`note_stats_written`]).
    static STATS_WRITTEN: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// When this backend last found no worker slot for a fold (see
    /// [`note_no_worker`]).
    static NO_WORKER_AT: std::cell::Cell<Option<std::time::Instant>> = const { std::cell::Cell::new(None) };
}

/// How long after a fold worker could not be registered this backend folds full
/// batches itself rather than ask for a worker again.
const NO_WORKER_FOR: std::time::Duration = std::time::Duration::from_secs(10);

/// Notes that a fold worker could not be registered (every `max_worker_processes`
/// slot taken): for a while this backend's commits fold a full batch themselves.
/// Returns whether that is news (none was noted within [`NO_WORKER_FOR`]).
pub fn note_no_worker() -> bool {
    let now = std::time::Instant::now();
    NO_WORKER_AT.with(|t| {
        let news = t
            .get()
            .is_none_or(|at| now.duration_since(at) > NO_WORKER_FOR);
        t.set(Some(now));
        news
    })
}

/// Whether a fold worker could not be registered lately (see [`note_no_worker`]).
fn no_worker_lately() -> bool {
    NO_WORKER_AT.with(|t| t.get().is_some_and(|at| at.elapsed() <= NO_WORKER_FOR))
}

/// This transaction writes statistics rows (`term_stats`, `collection_stats`, a
/// pending row, a recompute, a dropped collection): a read after it may see them
/// and cache them, so a rollback must empty the backend's term cache
/// (`pg::weigher::after_abort`).
pub fn note_stats_written() {
    STATS_WRITTEN.with(|w| w.set(true));
}

/// Whether this transaction wrote statistics rows, forgetting it (it ended).
pub fn take_stats_written() -> bool {
    STATS_WRITTEN.with(|w| w.replace(false))
}

/// Runs `f` on this transaction's statistics changes (for [`crate::pg::statement`]).
pub fn with_own_changes<R>(f: impl FnOnce(&mut crate::txdelta::TxDelta) -> R) -> R {
    DELTA.with(|d| f(&mut d.borrow_mut()))
}

/// This transaction's own changes to N and the total length of a collection, and
/// how many documents it added or removed.
pub(crate) fn own_counts(coll_id: i32) -> (i64, i64, i64) {
    DELTA.with(|d| d.borrow().n_len_changes(coll_id))
}

/// Adds this transaction's own changes to statistics read from the tables.
pub(crate) fn with_own_terms<'t>(
    coll_id: i32,
    terms: impl IntoIterator<Item = &'t str>,
    stats: &mut [TermStat],
) {
    DELTA.with(|d| {
        let d = d.borrow();
        if !d.touches(coll_id) {
            return;
        }
        for (t, s) in terms.into_iter().zip(stats.iter_mut()) {
            let (df, cf) = d.term(coll_id, t);
            s.df += df;
            s.cf += cf;
        }
    });
}

/// Forgets this transaction's unwritten changes to a collection whose statistics
/// were just rebuilt from its tables (or which is gone).
pub fn forget_own_changes(coll_id: i32) {
    // SAFETY: reads the backend's transaction state.
    let sub = unsafe { pg_sys::GetCurrentSubTransactionId() };
    DELTA.with(|d| d.borrow_mut().forget(sub, coll_id));
}

/// The transaction aborted: its changes go with it.
pub fn discard_own_changes() {
    DELTA.with(|d| d.borrow_mut().clear());
    WRITTEN.with(|w| w.borrow_mut().clear());
}

/// The term changes the committed transaction's pre-commit flush wrote straight
/// into `term_stats` (with a batch of 1; a larger batch goes to the pending rows
/// instead, which lookups do not read).
pub fn take_written() -> Vec<Written> {
    WRITTEN.with(|w| std::mem::take(&mut *w.borrow_mut()))
}

/// A subtransaction committed into its parent, or rolled back.
pub fn subtransaction_ended(sub: u32, parent: u32, committed: bool) {
    DELTA.with(|d| {
        let mut d = d.borrow_mut();
        if committed {
            d.commit_sub(sub, parent);
        } else {
            d.abort_sub(sub);
        }
    });
}

/// Writes this transaction's statistics changes, one collection at a time in id
/// order, each in term order and its collection row last, so committing writers
/// lock rows in one order and never deadlock; called just before the commit. With
/// a batch of 1 (a collection under 2,000 documents, by default) the term rows
/// change at once and terms whose df reaches 0 are deleted, as a recompute would
/// not list them. With a larger batch the changes go to
/// `dedup.term_stats_pending` as one row, and once a batch is pending one session
/// (or a background worker) folds them with a single upsert that touches each term
/// once (see [`write_changes`]).
///
/// `preparing`: the transaction is being prepared (`PREPARE TRANSACTION`). Its
/// changes are then written as under READ COMMITTED, whatever its isolation
/// level: a fold asked for now would be forgotten at the PREPARE, and no session
/// is there to ask for one at `COMMIT PREPARED`.
pub fn flush(preparing: bool) {
    let all = DELTA.with(|d| d.borrow_mut().take());
    if !all.is_empty() {
        // Whoever commits, the statistics are written with the owner's rights.
        // On a Citus worker the statistics are reference tables (see `pg::citus`).
        with_snapshot(|| {
            crate::pg::privilege::as_owner(|| {
                crate::pg::citus::nested(|| write_changes(all, true, preparing))
            })
        });
    }
}

/// Whether this transaction has statistics changes not yet written.
pub fn has_own_changes() -> bool {
    DELTA.with(|d| !d.borrow().is_empty())
}

/// Writes this transaction's changes to one collection now (see [`flush`]); the
/// explicit `add_document`, `remove_document` and `flush_stats` do.
pub fn flush_collection(coll_id: i32) {
    // SAFETY: reads the backend's transaction state.
    let sub = unsafe { pg_sys::GetCurrentSubTransactionId() };
    if let Some(d) = DELTA.with(|d| d.borrow_mut().take_one(sub, coll_id)) {
        write_changes(vec![(coll_id, d)], false, false);
    }
}

/// How many terms one statement of [`write_changes`] writes at most.
const TERM_CHUNK: usize = 10_000;

/// Writes `all`; `remember` keeps what goes straight into `term_stats` for
/// [`take_written`] (the pre-commit flush: nothing reads the tables after it in
/// this transaction, so the backend's cache can take the changes in at commit).
///
/// With a batch of 1 (see [`crate::cache_policy::batch`]: a collection of fewer
/// than 2,000 documents, or `dedup.stats_batch = 1`) the term rows and the
/// collection row change at once. With a larger batch the transaction only adds
/// one row to `dedup.term_stats_pending` (its term changes, N, the total length and
/// the change count): committing writers then share no row and never queue on
/// each other, and once a batch is pending a fold moves it all into `term_stats`
/// and `collection_stats` (a background worker, or the insert that finds twice the
/// batch pending).
///
/// Under REPEATABLE READ or SERIALIZABLE every transaction takes the pending row,
/// whatever the batch, and leaves the fold to the background worker (see
/// [`appends_only`]).
///
/// With a batch of 1 a transaction's terms go 10,000 ([`TERM_CHUNK`]) to a
/// statement, so a text of a million distinct words needs no statement of all of
/// them; a pending row holds all of a transaction's terms.
fn write_changes(all: Vec<(i32, crate::txdelta::CollDelta)>, remember: bool, preparing: bool) {
    if all.is_empty() {
        return;
    }
    note_stats_written();
    let setting = crate::gucs::stats_batch();
    let snapshot_only = !preparing && appends_only();
    Spi::connect_mut(|c| {
        for (coll_id, d) in all {
            // Before any statistics row, also a pending row's append (whose
            // commit during a recompute could otherwise fall between its read of
            // the tables and its delete of the pending rows): see
            // `pg::stats_lock`. Not at a PREPARE, which would keep it until
            // COMMIT PREPARED: its pending row commits then. A recompute reads
            // the tables and deletes the pending rows under one snapshot, so a
            // COMMIT PREPARED that lands meanwhile is in neither and its row is
            // folded later (see `pg::recompute`).
            if !preparing {
                crate::pg::stats_lock::write(coll_id);
            }
            let batch = crate::cache_policy::batch(setting, known_n(coll_id));
            let (terms, dfs, cfs) = d.sorted_terms();
            // A PREPARE appends a pending row whatever the batch: statistics rows
            // it upserted would stay locked until COMMIT PREPARED, and every writer
            // of those terms (a logical replication worker applying two-phase
            // transactions: itself) would wait for it.
            // A small collection's commit writes its terms at once. When others'
            // rows are pending (a REPEATABLE READ writer's, a prepared
            // transaction's) it appends its own instead and folds them all, in
            // one ordered pass: a fold after its own term rows would lock term
            // rows from the start of term order a second time, and two such
            // commits deadlocked (an audit: READ COMMITTED and REPEATABLE READ
            // writers of one small collection, 40P01 at COMMIT), while leaving
            // them to the worker left a SERIALIZABLE writer's rows pending for
            // good when no worker slot was free (another audit).
            let fold_here =
                batch == 1 && !snapshot_only && !preparing && pending_exists(c, coll_id);
            if batch > 1 || snapshot_only || preparing || fold_here {
                // One row for the whole transaction, whatever its size; a batch is
                // counted in the documents the rows changed (see `pending`).
                let args: [DatumWithOid; 7] = [
                    coll_id.into(),
                    d.n_docs.into(),
                    d.total_len.into(),
                    d.changes.into(),
                    terms.into(),
                    cfs.into(),
                    dfs.into(),
                ];
                cache::update(
                    c,
                    "INSERT INTO dedup.term_stats_pending \
                     (collection_id, terms, tfs, sign, dfs, n_docs, total_len, changes) \
                     VALUES ($1, $5, $6, 1, $7, $2, $3, $4)",
                    None,
                    &args,
                );
                // SAFETY: PostgreSQL's backend-local generator, seeded per backend.
                let draw = unsafe { pg_sys::pg_prng_double(&raw mut pg_sys::pg_global_prng_state) };
                // A transaction that changed a batch of documents by itself
                // always counts (and so starts its fold).
                if d.changes < batch
                    && draw >= crate::cache_policy::fold_check_share(setting, batch, d.changes)
                {
                    continue;
                }
                if snapshot_only {
                    // Counting would read the pending rows other writers append
                    // (under SERIALIZABLE, a read/write dependency between any two
                    // of them): the worker, in READ COMMITTED, counts. In a small
                    // collection (a batch of 1) it folds every row and drains; in
                    // a larger one it folds once a batch is pending, as here.
                    if batch > 1 {
                        want_fold(coll_id, false, batch);
                    } else {
                        want_fold(coll_id, true, 0);
                    }
                    continue;
                }
                // Not at a PREPARE: a fold there would hold the statistics rows it
                // upserts until COMMIT PREPARED, and a logical replication worker
                // applying two-phase transactions would wait for itself.
                if preparing {
                    continue;
                }
                let pending = pending(c, coll_id, 2 * batch);
                if pending.docs >= batch {
                    // Twice the batch of rows pending, or four times the batch of
                    // documents in several rows, is more than a worker leaves
                    // behind (the rows it is folding count too, until it commits):
                    // none could start, and the batch is folded here (counted in
                    // rows alone, the statistics lagged twice the batch in
                    // transactions: 49 % of an audit's collection, loaded 50 rows
                    // a commit). One big transaction's row is the worker's.
                    let behind = pending.rows >= 2 * batch
                        || (pending.docs >= 4 * batch && pending.rows > 1);
                    if crate::gucs::background_fold() && !behind && !no_worker_lately() {
                        want_fold(coll_id, false, batch);
                    } else {
                        fold_inline(c, coll_id);
                    }
                }
                continue;
            }
            // In slices of TERM_CHUNK terms, in term order: the memory of one
            // statement grows with the terms it upserts (argument arrays, the
            // executor's, the RETURNING rows), and one document of a million
            // distinct words would otherwise need ~100 MB of it at once.
            for at in (0..terms.len()).step_by(TERM_CHUNK) {
                let end = (at + TERM_CHUNK).min(terms.len());
                // Its own SPI connection, whose memory (the argument arrays) goes
                // when it closes.
                Spi::connect_mut(|c| {
                    // The key index is probed per term, in term order, whatever the
                    // planner thinks of the collection's size.
                    let t = cache::update(
                        c,
                        "WITH up AS (INSERT INTO dedup.term_stats AS s (collection_id, term, df, cf) \
                         SELECT $1, u.term, u.df, u.cf \
                         FROM unnest($2::text[], $3::int8[], $4::int8[]) AS u(term, df, cf) \
                         ORDER BY u.term COLLATE \"C\" \
                         ON CONFLICT (collection_id, term) DO UPDATE \
                         SET df = s.df + excluded.df, cf = s.cf + excluded.cf \
                         RETURNING s.ctid, s.df, s.cf) \
                         SELECT ARRAY(SELECT ctid::text FROM up WHERE df <= 0 OR cf <= 0)",
                        None,
                        &[
                            coll_id.into(),
                            terms[at..end]
                                .iter()
                                .map(String::as_str)
                                .collect::<Vec<&str>>()
                                .into(),
                            dfs[at..end].into(),
                            cfs[at..end].into(),
                        ],
                    );
                    let empty: Vec<String> = t
                        .first()
                        .get::<Vec<String>>(1)
                        .ok()
                        .flatten()
                        .unwrap_or_default();
                    delete_empty(c, coll_id, empty);
                });
            }
            if remember && !terms.is_empty() {
                WRITTEN.with(|w| {
                    w.borrow_mut().push(Written {
                        coll_id,
                        terms,
                        dfs,
                        cfs,
                    })
                });
            }
            let counts: [DatumWithOid; 4] = [
                coll_id.into(),
                d.n_docs.into(),
                d.total_len.into(),
                d.changes.into(),
            ];
            cache::update(
                c,
                "UPDATE dedup.collection_stats SET n_docs = greatest(n_docs + $2, 0), \
                 total_len = greatest(total_len + $3, 0), \
                 changes_since_recompute = changes_since_recompute + $4 \
                 WHERE collection_id = $1",
                None,
                &counts,
            );
        }
    });
}

/// Whether this transaction's statistics changes may only be appended as a
/// pending row, for the background fold to write: under REPEATABLE READ or
/// SERIALIZABLE (with `dedup.background_fold` on). Such a transaction cannot update
/// a row that another transaction changed after its snapshot (40001, *could not
/// serialize access due to concurrent update*), and under SERIALIZABLE its reads of
/// the statistics and its writes of them make a read/write dependency with every
/// other writer of the collection: two writers of unrelated texts would fail at
/// commit. An appended row conflicts with nothing, and the worker folds in READ
/// COMMITTED. With the background fold off, the statistics are written as under
/// READ COMMITTED (and such a commit may get 40001 from a concurrent writer).
fn appends_only() -> bool {
    // SAFETY: a plain read of the transaction's isolation level.
    let level = unsafe { pg_sys::XactIsoLevel };
    level >= pg_sys::XACT_REPEATABLE_READ as i32 && crate::gucs::background_fold()
}

thread_local! {
    /// The stored N of each collection as this backend last read it (see
    /// [`note_stored_n`]): what sizes its batch.
    static KNOWN_N: RefCell<std::collections::HashMap<i32, i64>> =
        RefCell::new(std::collections::HashMap::new());
}

/// Records a collection's stored N (`pg::stats_read` calls it whenever it reads
/// the collection row).
pub fn note_stored_n(coll_id: i32, n_docs: i64) {
    KNOWN_N.with(|k| {
        k.borrow_mut().insert(coll_id, n_docs);
    });
}

/// The stored N this backend last saw of a collection; 0 (a batch of 1, writes
/// at once) when it has not read it.
fn known_n(coll_id: i32) -> i64 {
    KNOWN_N.with(|k| k.borrow().get(&coll_id).copied().unwrap_or(0))
}

/// Runs `f` with an active snapshot, pushing one when there is none: just before
/// the commit no portal is active, and every SPI call of the flush needs one,
/// including the extension owner's lookup that `as_owner` makes when a relcache
/// invalidation (an autovacuum ANALYZE of an enabled table, say) emptied its cache
/// since the last row. An ERROR inside aborts the transaction, whose cleanup pops
/// the snapshot.
fn with_snapshot<R>(f: impl FnOnce() -> R) -> R {
    // SAFETY: pushed here and popped below, in the same transaction.
    let pushed = unsafe {
        let push = !pg_sys::ActiveSnapshotSet();
        if push {
            pg_sys::PushActiveSnapshot(pg_sys::GetTransactionSnapshot());
        }
        push
    };
    let r = f();
    if pushed {
        // SAFETY: pops the snapshot pushed above.
        unsafe { pg_sys::PopActiveSnapshot() };
    }
    r
}

/// What a collection's committed pending rows hold, over at most `cap` of them:
/// how many rows, and how many documents they changed (each row at least one).
/// A batch is counted in documents: one `INSERT … SELECT` of 500 rows is 500 of
/// them, so the statistics lag the table by about a batch of documents however
/// the writes are grouped into transactions (an audit saw 4,500 documents, 225 %
/// of N, wait in nine rows when a batch was counted in rows). The count walks
/// the collection's index entries: a sequential or bitmap scan would read every
/// entry and page the folds have emptied since the last vacuum, and the planner,
/// which sees a small table, chooses one.
pub(crate) fn pending(c: &mut pgrx::spi::SpiClient<'_>, coll_id: i32, cap: i64) -> Pending {
    let index_only = [(c"enable_seqscan", c"off"), (c"enable_bitmapscan", c"off")];
    let t = crate::pg::guc_scope::with_settings(&index_only, || {
        cache::update(
            c,
            "SELECT count(*), coalesce(sum(greatest(s.changes, 1)), 0)::int8 \
             FROM (SELECT p.changes FROM dedup.term_stats_pending p \
             WHERE p.collection_id = $1 LIMIT $2) s",
            None,
            &[coll_id.into(), cap.into()],
        )
    });
    let r = t.first();
    Pending {
        rows: stored(r.get::<i64>(1), "the pending row count"),
        docs: stored(r.get::<i64>(2), "the pending document count"),
    }
}

/// Whether any row of `coll_id` is pending.
fn pending_exists(c: &mut pgrx::spi::SpiClient<'_>, coll_id: i32) -> bool {
    cache::update(
        c,
        "SELECT EXISTS (SELECT 1 FROM dedup.term_stats_pending WHERE collection_id = $1)",
        None,
        &[coll_id.into()],
    )
    .first()
    .get::<bool>(1)
    .ok()
    .flatten()
        == Some(true)
}

/// A fold by a committing writer, of rows other writers left too: in a
/// subtransaction, so that one that fails for want of resources or of a lock
/// (`temp_file_limit`, `lock_timeout`) leaves the rows pending for the next fold
/// and the writer's commit goes on, with a WARNING (an audit: single-row inserts
/// failed at COMMIT with 53400 over another transaction's backlog).
fn fold_inline(c: &mut pgrx::spi::SpiClient<'_>, coll_id: i32) {
    const GIVE_WAY: [PgSqlErrorCode; 7] = [
        PgSqlErrorCode::ERRCODE_INSUFFICIENT_RESOURCES,
        PgSqlErrorCode::ERRCODE_DISK_FULL,
        PgSqlErrorCode::ERRCODE_OUT_OF_MEMORY,
        PgSqlErrorCode::ERRCODE_CONFIGURATION_LIMIT_EXCEEDED,
        PgSqlErrorCode::ERRCODE_LOCK_NOT_AVAILABLE,
        PgSqlErrorCode::ERRCODE_T_R_DEADLOCK_DETECTED,
        PgSqlErrorCode::ERRCODE_T_R_SERIALIZATION_FAILURE,
    ];
    // Under SERIALIZABLE a serialization failure is the transaction's own
    // (`background_fold` off has it fold): it ends the transaction, as anywhere.
    // SAFETY: reads the backend's isolation level.
    let serializable = unsafe { pg_sys::XactIsoLevel } == pg_sys::XACT_SERIALIZABLE as i32;
    let give_way = if serializable {
        &GIVE_WAY[..6]
    } else {
        &GIVE_WAY[..]
    };
    if let Err(why) = crate::pg::subxact::catching(give_way, || fold(c, coll_id)) {
        let name = cache::update(
            c,
            "SELECT name FROM dedup.collections WHERE id = $1",
            None,
            &[coll_id.into()],
        )
        .first()
        .get::<String>(1)
        .ok()
        .flatten()
        .unwrap_or_else(|| coll_id.to_string());
        pgrx::pg_sys::panic::ErrorReport::new(
            PgSqlErrorCode::ERRCODE_WARNING,
            format!("the statistics fold of collection \"{name}\" failed: {why}; its pending rows stay for the next fold"),
            "pg_dedup",
        )
        .set_hint("dedup.flush_stats folds them; see README, Statistics lag the table a little")
        .report(pgrx::PgLogLevel::WARNING);
    }
}

/// See [`pending`].
pub(crate) struct Pending {
    pub rows: i64,
    pub docs: i64,
}

/// Folds every committed pending row of a collection: deletes them, upserts their
/// terms into `term_stats` (in term order, as every writer of `term_stats` does)
/// and adds their N, total length and change count to `collection_stats` (last,
/// as every writer does), all in one statement, so the rows and what they carried
/// move together. Returns the number of pending rows folded.
pub(crate) fn fold(c: &mut pgrx::spi::SpiClient<'_>, coll_id: i32) -> i64 {
    note_stats_written();
    crate::pg::stats_lock::write(coll_id);
    let t = c
        .update(
            "WITH d AS (DELETE FROM dedup.term_stats_pending WHERE collection_id = $1 \
                        RETURNING terms, tfs, sign, dfs, n_docs, total_len, changes), \
                  agg AS (SELECT u.term, sum(coalesce(u.df, d.sign))::int8 AS df, \
                                 sum(CASE WHEN u.df IS NULL THEN d.sign * u.tf ELSE u.tf END)::int8 AS cf \
                          FROM d, unnest(d.terms, d.tfs, d.dfs) AS u(term, tf, df) GROUP BY u.term), \
                  ins AS (INSERT INTO dedup.term_stats AS s (collection_id, term, df, cf) \
                          SELECT $1, term, df, cf FROM agg WHERE df <> 0 OR cf <> 0 ORDER BY term COLLATE \"C\" \
                          ON CONFLICT (collection_id, term) DO UPDATE SET df = s.df + excluded.df, cf = s.cf + excluded.cf \
                          RETURNING s.ctid, s.df, s.cf), \
                  n AS (SELECT count(*) AS rows, coalesce(sum(n_docs), 0) AS n_docs, \
                               coalesce(sum(total_len), 0) AS total_len, coalesce(sum(changes), 0) AS changes FROM d), \
                  coll AS (UPDATE dedup.collection_stats s SET n_docs = greatest(s.n_docs + n.n_docs, 0), \
                                  total_len = greatest(s.total_len + n.total_len, 0), \
                                  changes_since_recompute = s.changes_since_recompute + n.changes \
                           FROM n WHERE s.collection_id = $1 AND n.rows > 0 AND (SELECT count(*) FROM ins) >= 0) \
             SELECT (SELECT rows FROM n), ARRAY(SELECT ctid::text FROM ins WHERE df <= 0 OR cf <= 0)",
            None,
            &[coll_id.into()],
        )
        .unwrap_or_else(|e| spi_err(e));
    let r = t.first();
    let folded = stored(r.get::<i64>(1), "the folded pending rows");
    let empty: Vec<String> = stored(r.get::<Vec<String>>(2), "the emptied term rows");
    delete_empty(c, coll_id, empty);
    folded
}

/// Deletes the term rows an upsert of this transaction left at df or cf 0, by the
/// row versions it returned (`ctid` as text): a TID scan, which no estimate of the
/// collection's size can turn into a scan of all its terms. The rows are this
/// transaction's own updated versions, locked until it ends.
fn delete_empty(c: &mut pgrx::spi::SpiClient<'_>, coll_id: i32, ctids: Vec<String>) {
    if ctids.is_empty() {
        return;
    }
    cache::update(
        c,
        "DELETE FROM dedup.term_stats WHERE ctid = ANY($2::text[]::tid[]) \
         AND collection_id = $1 AND (df <= 0 OR cf <= 0)",
        None,
        &[coll_id.into(), ctids.into()],
    );
}

/// Writes this transaction's changes of a collection and folds its pending rows
/// (see `dedup.stats_batch`) into its statistics now. Returns how many pending
/// rows (committed transactions' changes) were folded.
#[pg_extern(volatile, strict, parallel_unsafe)]
fn flush_stats(collection: &str) -> i64 {
    let run = || {
        let coll = load(collection);
        flush_collection(coll.id);
        Spi::connect_mut(|c| fold(c, coll.id))
    };
    if crate::pg::privilege::writes_configuration() {
        return run();
    }
    // A role that owns every table of the collection (as `recompute` asks) has its
    // pending changes folded as the extension's owner: what the fold worker does
    // anyway. Not any reader: the fold locks the collection's statistics rows
    // until the caller's transaction ends.
    crate::pg::privilege::require_collection_owner(collection);
    crate::pg::privilege::as_owner(run)
}

/// Adds a document to a collection's statistics.
#[pg_extern(volatile, strict, parallel_unsafe)]
fn add_document(collection: &str, doc: DocumentDatum) {
    let coll = load(collection);
    crate::pg::privilege::require_configuration("dedup.term_stats", "INSERT", "dedup.add_document");
    add(coll.id, &doc.decode(), None);
    flush_collection(coll.id);
}

/// Removes a document from a collection's statistics.
#[pg_extern(volatile, strict, parallel_unsafe)]
fn remove_document(collection: &str, doc: DocumentDatum) {
    let coll = load(collection);
    crate::pg::privilege::require_configuration(
        "dedup.term_stats",
        "UPDATE",
        "dedup.remove_document",
    );
    remove(coll.id, &doc.decode(), None);
    flush_collection(coll.id);
}

/// A committed transaction's request for a fold (see `pg::worker`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FoldWish {
    pub coll_id: i32,
    /// The role to fold as.
    pub role: pg_sys::Oid,
    /// Whether the worker folds again while rows keep arriving (for writers under
    /// REPEATABLE READ or SERIALIZABLE in a small collection, whose every commit
    /// leaves a pending row to fold at once), or once (a full batch).
    pub drain: bool,
    /// How many pending documents the worker must find to fold (a batch); 0:
    /// fold whatever is pending.
    pub min_docs: i64,
}

/// Notes that `coll_id`'s pending statistics should be folded once the current
/// transaction commits; `drain` and `min_docs` as in [`FoldWish`].
fn want_fold(coll_id: i32, drain: bool, min_docs: i64) {
    // SAFETY: reads the current user: inside `flush` the extension owner (see
    // `privilege::as_owner`), whose rights a fold needs; a writer has none on the
    // statistics tables.
    let role = unsafe { pg_sys::GetUserId() };
    WANTED.with(|w| {
        let mut w = w.borrow_mut();
        match w.iter_mut().find(|f| f.coll_id == coll_id) {
            Some(f) => {
                f.drain |= drain;
                f.min_docs = f.min_docs.min(min_docs);
            }
            None => w.push(FoldWish {
                coll_id,
                role,
                drain,
                min_docs,
            }),
        }
    });
}

/// The collections the committing transaction asked a fold of (for `pg::worker`).
pub fn take_wanted_folds() -> Vec<FoldWish> {
    WANTED.with(|w| std::mem::take(&mut *w.borrow_mut()))
}

/// Forgets the wishes of an aborted (or prepared) transaction.
pub fn forget_wanted_folds() {
    WANTED.with(|w| w.borrow_mut().clear());
}
