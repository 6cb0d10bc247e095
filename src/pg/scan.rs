//! The trigger's candidate lookup without the executor.
//!
//! `ingest::find_candidates` used to run
//! `SELECT key, dedup_doc, duplicate_of FROM t WHERE dedup_sig % $1 AND dedup_doc IS NOT NULL
//! ORDER BY dedup.shared_keys(dedup_sig, $1) DESC, key LIMIT 50` for every inserted row.
//! Starting that plan, sorting its rows and calling `shared_keys` and the recheck through
//! fmgr was about a third of the query's cost. This module runs the same plan by hand:
//! a bitmap scan of the table's GIN signature index, the heap pages it names through
//! the table AM's bitmap-scan interface (which handles visibility, HOT chains and lossy
//! pages, as a `Bitmap Heap Scan` node does), the `%` test on every row (it is cheap,
//! and it is the recheck a lossy page needs), keeping the best `limit` rows in the
//! query's order as it goes (only those are copied). On a
//! partitioned table it does so in every leaf partition the time window meets
//! (`pg::partitions`, `crate::window`), and orders the rows of all of them. The SQL
//! form stays for a table whose signature index is missing or unusable, and for a
//! Citus distributed table (`pg::citus`).

use crate::pg::times::stored_time;
use crate::pg::types::SignatureDatum;
use crate::signature::Signature;
use crate::window::{admits, Interval, Span};
use pgrx::prelude::*;
use std::ffi::CStr;

/// What a direct lookup needs of an enabled table, found once per configuration
/// read (`ingest::read_table_config`).
#[derive(Clone, Debug)]
pub struct Target {
    /// The function behind `dedup.%` (a scan key needs one; GIN itself uses the
    /// strategy number).
    pub match_proc: pg_sys::Oid,
    /// The key columns' types and collations, in key order.
    pub key_types: Vec<(pg_sys::Oid, pg_sys::Oid)>,
    /// The type of `duplicate_of`: the key column's, or the composite type of the
    /// key columns (see `crate::rowkey`).
    pub dup_type: pg_sys::Oid,
    /// The type of the time column a window compares, if the table has a window.
    pub time_type: Option<pg_sys::Oid>,
    /// The tables that hold the rows: the table, or each leaf partition.
    pub leaves: Vec<LeafTarget>,
    /// Leaf partitions (and their spans) newer than a REPEATABLE READ
    /// transaction's snapshot, whose index it cannot see: a lookup whose window
    /// meets one is refused (see `pg::snapshot_setup`).
    pub unseen: Vec<(pg_sys::Oid, Span)>,
}

/// One table holding rows of an enabled table (the table itself, or a leaf
/// partition), with its own index and attribute numbers (a partition attached
/// after its columns changed may number them differently).
#[derive(Clone, Debug)]
pub struct LeafTarget {
    pub rel: pg_sys::Oid,
    /// The GIN index on the signature column, with `dedup.signature_ops`.
    pub index: pg_sys::Oid,
    /// Attribute numbers of the key columns (in key order), `dedup_doc`,
    /// `dedup_sig`, `duplicate_of` and the window's time column.
    pub key_atts: Vec<i16>,
    pub doc_att: i16,
    pub sig_att: i16,
    pub dup_att: i16,
    pub time_att: Option<i16>,
    /// The times its rows can have (see `crate::window`).
    pub span: Span,
}

/// A matching row: its key and `duplicate_of` as text, and its document as a datum
/// copied into the current memory context (possibly still compressed or a TOAST
/// pointer: it is read while the statement's snapshot is active).
pub struct Hit {
    pub key: String,
    pub duplicate_of: Option<String>,
    pub doc: pg_sys::Datum,
    /// The transaction that inserted the row, when it is still in progress (only
    /// with a dirty lookup): the row is not committed yet, and may never be.
    pub in_progress: Option<pg_sys::TransactionId>,
}

/// A row kept for ordering: datums copied out of the heap page.
struct Row {
    shared: usize,
    key: Vec<pg_sys::Datum>,
    dup: Option<pg_sys::Datum>,
    doc: pg_sys::Datum,
    in_progress: Option<pg_sys::TransactionId>,
}

/// Whether a row a dirty snapshot returned is committed (or this transaction's
/// own), inserted by a transaction still in progress, or gone (its inserter
/// aborted since the visibility check): HeapTupleSatisfiesDirty's order.
enum Inserter {
    Visible,
    InProgress(pg_sys::TransactionId),
    Aborted,
}

/// The inserter of the slot's current tuple (a heap buffer slot).
unsafe fn inserter(slot: *mut pg_sys::TupleTableSlot) -> Inserter {
    // SAFETY: the caller upholds this function's contract (see its comment).
    unsafe {
        let bslot = slot.cast::<pg_sys::BufferHeapTupleTableSlot>();
        let tuple = (*bslot).base.tuple;
        if tuple.is_null() || (*tuple).t_data.is_null() {
            return Inserter::Visible;
        }
        let header = (*tuple).t_data;
        if u32::from((*header).t_infomask) & pg_sys::HEAP_XMIN_COMMITTED != 0 {
            return Inserter::Visible;
        }
        let xmin = (*header).t_choice.t_heap.t_xmin;
        if pg_sys::TransactionIdIsCurrentTransactionId(xmin) {
            Inserter::Visible
        } else if pg_sys::TransactionIdIsInProgress(xmin) {
            Inserter::InProgress(xmin)
        } else if pg_sys::TransactionIdDidCommit(xmin) {
            Inserter::Visible
        } else {
            Inserter::Aborted
        }
    }
}

/// The rows of the table whose signature matches `sig` under `%`, with a document,
/// other than `self_key`, published within `window` (see `crate::window`); by
/// shared keys (descending), then key (the key type's order); at most `limit`.
/// Every leaf whose span meets the window is searched. Read with
/// [`push_query_snapshot`]`(false)`, or with `dirty` with a dirty snapshot, as a
/// unique index's check reads: every committed row, this transaction's own, and the
/// rows of transactions still in progress (marked in [`Hit::in_progress`]; see
/// `pg::keylocks`).
#[allow(clippy::too_many_arguments)]
pub fn candidates(
    t: &Target,
    sig: &Signature,
    self_key: Option<&str>,
    dirty: bool,
    limit: usize,
    limits: &crate::limits::Limits,
    window: Option<Interval>,
) -> Vec<Hit> {
    if sig.keys.is_empty() || limit == 0 {
        return Vec::new();
    }
    if let Some(&(rel, _)) = t.unseen.iter().find(|(_, s)| s.meets(window)) {
        crate::pg::snapshot_setup::refuse_leaf(rel);
    }
    let min_shared = limits.min_shared_keys;
    let threshold = limits.similarity_threshold;
    let keep = limit + usize::from(self_key.is_some());
    let _rule = crate::gucs::CandidateRule::set(min_shared, threshold);
    // SAFETY: every call follows nodeBitmapIndexscan.c / nodeBitmapHeapscan.c: the
    // relations are opened and closed with the same lock mode, the scans are ended
    // and the slot dropped before the relations close. On an ERROR the transaction
    // (or subtransaction) abort releases relations, buffer pins and snapshots, and
    // the palloc'd copies go with the memory context.
    unsafe {
        let lens: Vec<(i16, bool)> = t
            .key_types
            .iter()
            .map(|&(typ, _)| type_len_byval(typ))
            .collect();
        let dup_len = type_len_byval(t.dup_type);
        let pushed = if dirty {
            false
        } else {
            push_query_snapshot(false)
        };
        // InitDirtySnapshot: HeapTupleSatisfiesDirty writes the in-progress xids
        // into it as it goes.
        let mut dirty_snapshot: pg_sys::SnapshotData = std::mem::zeroed();
        dirty_snapshot.snapshot_type = pg_sys::SnapshotType::SNAPSHOT_DIRTY;
        let snapshot = if dirty {
            &mut dirty_snapshot as pg_sys::Snapshot
        } else {
            pg_sys::GetActiveSnapshot()
        };
        let query = SignatureDatum::from_signature(sig)
            .into_datum()
            .unwrap_or(pg_sys::Datum::from(0usize));
        // ORDER BY shared keys DESC, key: each key column's default btree order
        // under its collation, as the SQL form sorted.
        let cmps: Vec<Option<(*mut pg_sys::FmgrInfo, pg_sys::Oid)>> = t
            .key_types
            .iter()
            .map(|&(typ, coll)| {
                let tc = pg_sys::lookup_type_cache(typ, pg_sys::TYPECACHE_CMP_PROC_FINFO as i32);
                ((*tc).cmp_proc_finfo.fn_oid != pg_sys::InvalidOid)
                    .then(|| (&mut (*tc).cmp_proc_finfo as *mut pg_sys::FmgrInfo, coll))
            })
            .collect();
        // The rows kept are the best `limit` so far in that order, best first: a row
        // that would not be among them is passed over before anything of it is
        // copied, so a lookup holds at most `limit` documents however many rows
        // match (a table of texts sharing one template matches them all).
        let order =
            |a_shared: usize, a_key: &[pg_sys::Datum], b_shared: usize, b_key: &[pg_sys::Datum]| {
                b_shared.cmp(&a_shared).then_with(|| {
                    for (i, c) in cmps.iter().enumerate() {
                        let Some((cmp, coll)) = *c else { continue };
                        let r = pg_sys::FunctionCall2Coll(cmp, coll, a_key[i], b_key[i]);
                        let o = (r.value() as i32).cmp(&0);
                        if o != std::cmp::Ordering::Equal {
                            return o;
                        }
                    }
                    std::cmp::Ordering::Equal
                })
            };
        let mut rows: Vec<Row> = Vec::new();
        for leaf in t.leaves.iter().filter(|l| l.span.meets(window)) {
            LEAVES_SEARCHED.with(|c| c.set(c.get() + 1));
            let heap = pg_sys::table_open(leaf.rel, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
            let index = pg_sys::index_open(leaf.index, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
            let mut key: pg_sys::ScanKeyData = std::mem::zeroed();
            pg_sys::ScanKeyEntryInitialize(
                &mut key,
                0,
                1,
                1, // strategy 1: `%` (sql/signature.sql)
                pg_sys::InvalidOid,
                pg_sys::InvalidOid,
                t.match_proc,
                query,
            );
            let iscan = pg_sys::index_beginscan_bitmap(index, snapshot, 1);
            pg_sys::index_rescan(iscan, &mut key, 1, std::ptr::null_mut(), 0);
            let tbm = pg_sys::tbm_create(pg_sys::work_mem as i64 * 1024, std::ptr::null_mut());
            pg_sys::index_getbitmap(iscan, tbm);
            pg_sys::index_endscan(iscan);

            let hscan = pg_sys::table_beginscan_bm(heap, snapshot, 0, std::ptr::null_mut());
            let slot = pg_sys::table_slot_create(heap, std::ptr::null_mut());
            let it = pg_sys::tbm_begin_iterate(tbm);
            loop {
                let res = pg_sys::tbm_iterate(it);
                if res.is_null() {
                    break;
                }
                if !pg_sys::table_scan_bitmap_next_block(hscan, res) {
                    continue;
                }
                while pg_sys::table_scan_bitmap_next_tuple(hscan, res, slot) {
                    let in_progress = if dirty {
                        match inserter(slot) {
                            Inserter::Visible => None,
                            Inserter::InProgress(xid) => Some(xid),
                            Inserter::Aborted => continue,
                        }
                    } else {
                        None
                    };
                    let Some(doc) = attr(slot, leaf.doc_att) else {
                        continue;
                    };
                    let Some(row_sig) = attr(slot, leaf.sig_att) else {
                        continue;
                    };
                    let Some(row_sig) =
                        SignatureDatum::from_polymorphic_datum(row_sig, false, pg_sys::InvalidOid)
                    else {
                        continue;
                    };
                    let row_sig = row_sig.decode();
                    if !crate::signature::is_candidate(&row_sig, sig, min_shared, threshold) {
                        continue;
                    }
                    if window.is_some() {
                        let at = match (leaf.time_att, t.time_type) {
                            (Some(att), Some(typ)) => {
                                attr(slot, att).and_then(|d| stored_time(typ, d))
                            }
                            _ => None,
                        };
                        if !admits(window, at) {
                            continue;
                        }
                    }
                    let Some(k) = leaf
                        .key_atts
                        .iter()
                        .map(|&a| attr(slot, a))
                        .collect::<Option<Vec<_>>>()
                    else {
                        continue;
                    };
                    let shared = row_sig.shared_keys(sig);
                    let Some(at) = crate::sorted::best_first_position(&rows, keep, |r| {
                        order(r.shared, &r.key, shared, &k)
                    }) else {
                        continue;
                    };
                    rows.insert(
                        at,
                        Row {
                            shared,
                            key: k
                                .iter()
                                .zip(&lens)
                                .map(|(&d, &(len, byval))| datum_copy(d, len, byval))
                                .collect(),
                            dup: attr(slot, leaf.dup_att)
                                .map(|d| datum_copy(d, dup_len.0, dup_len.1)),
                            doc: datum_copy(doc, -1, false),
                            in_progress,
                        },
                    );
                    if rows.len() > keep {
                        if let Some(out) = rows.pop() {
                            free_row(out, &lens, dup_len);
                        }
                    }
                }
            }
            pg_sys::tbm_end_iterate(it);
            pg_sys::ExecDropSingleTupleTableSlot(slot);
            pg_sys::table_endscan(hscan);
            pg_sys::tbm_free(tbm);
            pg_sys::index_close(index, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
            pg_sys::table_close(heap, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
        }
        pop_query_snapshot(pushed);

        // The row of `self_key` is left out here, among the `keep` best (one more
        // than `limit` when there is one to leave out), rather than as the scan meets
        // each row: that would turn every row's key into text.
        rows.into_iter()
            .map(|r| Hit {
                key: key_text(t, &r.key),
                duplicate_of: r.dup.map(|d| output(t.dup_type, d)),
                doc: r.doc,
                in_progress: r.in_progress,
            })
            .filter(|h| Some(h.key.as_str()) != self_key)
            .take(limit)
            .collect()
    }
}

thread_local! {
    /// Tables (leaf partitions) this backend's lookups searched since it started.
    static LEAVES_SEARCHED: std::cell::Cell<i64> = const { std::cell::Cell::new(0) };
}

/// How many tables this backend's candidate lookups searched since it started: one
/// per lookup in a table that is not partitioned, one per partition searched in a
/// partitioned one (a time window skips those outside it). For benchmarks and
/// tests.
#[pg_extern(volatile, parallel_restricted)]
fn _leaves_searched() -> i64 {
    LEAVES_SEARCHED.with(|c| c.get())
}

/// A key as text (see `crate::rowkey`).
///
/// # Safety
/// `key` holds non-null datums of the target's key types.
unsafe fn key_text(t: &Target, key: &[pg_sys::Datum]) -> String {
    // SAFETY: the caller upholds this function's contract (see its comment).
    unsafe {
        let parts: Vec<String> = key
            .iter()
            .zip(&t.key_types)
            .map(|(&d, &(typ, _))| output(typ, d))
            .collect();
        let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
        crate::rowkey::key_text(&refs)
    }
}

/// Makes the active snapshot the one a query run through SPI at this point would
/// read with: with `force`, or in a transaction that has written (pgrx then runs SPI
/// in non-read-only mode), a new snapshot after a command-counter increment, which
/// sees rows committed since the statement began and this transaction's own earlier
/// rows; otherwise the active snapshot as it is. Returns whether one was pushed, for
/// [`pop_query_snapshot`]. Not an RAII guard: on an ERROR the (sub)transaction abort
/// pops it.
///
/// # Safety
/// There must be an active snapshot, and a `true` result must be handed to
/// [`pop_query_snapshot`] before the caller returns.
pub(crate) unsafe fn push_query_snapshot(force: bool) -> bool {
    // SAFETY: the caller upholds this function's contract (see its comment).
    unsafe {
        let push = force
            || (pg_sys::GetCurrentTransactionIdIfAny() != pg_sys::InvalidTransactionId
                && !pg_sys::IsInParallelMode());
        if push {
            pg_sys::CommandCounterIncrement();
            pg_sys::PushActiveSnapshot(pg_sys::GetTransactionSnapshot());
        }
        push
    }
}

/// Undoes [`push_query_snapshot`].
///
/// # Safety
/// `pushed` is what the matching [`push_query_snapshot`] returned.
pub(crate) unsafe fn pop_query_snapshot(pushed: bool) {
    // SAFETY: the caller upholds this function's contract (see its comment).
    unsafe {
        if pushed {
            pg_sys::PopActiveSnapshot();
        }
    }
}

/// Attribute `att` of the slot's current tuple, or None when NULL.
unsafe fn attr(slot: *mut pg_sys::TupleTableSlot, att: i16) -> Option<pg_sys::Datum> {
    // SAFETY: the caller upholds this function's contract (see its comment).
    unsafe {
        let mut isnull = false;
        let d = pg_sys::slot_getattr(slot, att as i32, &mut isnull);
        (!isnull).then_some(d)
    }
}

/// `typlen` and `typbyval` of a type.
unsafe fn type_len_byval(typ: pg_sys::Oid) -> (i16, bool) {
    // SAFETY: the caller upholds this function's contract (see its comment).
    unsafe {
        let mut len: i16 = 0;
        let mut byval = false;
        pg_sys::get_typlenbyval(typ, &mut len, &mut byval);
        (len, byval)
    }
}

/// Frees the copies [`datum_copy`] made of a row that left the kept set.
///
/// # Safety
/// `row` holds copies made by [`datum_copy`] with these lengths.
unsafe fn free_row(row: Row, lens: &[(i16, bool)], dup_len: (i16, bool)) {
    // SAFETY: the caller upholds this function's contract (see its comment).
    unsafe {
        for (d, &(_, byval)) in row.key.iter().zip(lens) {
            if !byval {
                pg_sys::pfree(d.cast_mut_ptr());
            }
        }
        if let Some(d) = row.dup {
            if !dup_len.1 {
                pg_sys::pfree(d.cast_mut_ptr());
            }
        }
        pg_sys::pfree(row.doc.cast_mut_ptr());
    }
}

/// A copy of a datum in the current memory context (utils/adt/datum.c's
/// datumCopy, for the forms a key or a document column can take).
unsafe fn datum_copy(d: pg_sys::Datum, len: i16, byval: bool) -> pg_sys::Datum {
    // SAFETY: the caller upholds this function's contract (see its comment).
    unsafe {
        if byval {
            return d;
        }
        let size = if len == -1 {
            pgrx::varlena::varsize_any(d.cast_mut_ptr::<pg_sys::varlena>())
        } else if len == -2 {
            CStr::from_ptr(d.cast_mut_ptr::<std::ffi::c_char>())
                .to_bytes_with_nul()
                .len()
        } else {
            len as usize
        };
        let p = pg_sys::palloc(size);
        std::ptr::copy_nonoverlapping(d.cast_mut_ptr::<u8>(), p.cast::<u8>(), size);
        pg_sys::Datum::from(p)
    }
}

/// A datum of type `typ` as its text output (what `::text` gives for a key).
unsafe fn output(typ: pg_sys::Oid, d: pg_sys::Datum) -> String {
    // SAFETY: the caller upholds this function's contract (see its comment).
    unsafe {
        let mut out = pg_sys::InvalidOid;
        let mut varlena = false;
        pg_sys::getTypeOutputInfo(typ, &mut out, &mut varlena);
        let s = pg_sys::OidOutputFunctionCall(out, d);
        let r = CStr::from_ptr(s).to_string_lossy().into_owned();
        pg_sys::pfree(s.cast());
        r
    }
}

/// What holds the values a new row has in the unique indexes of its table.
pub enum Conflict {
    /// A committed row, or one of this transaction's.
    Stored,
    /// Only a row a transaction still in progress inserted.
    InProgress(pg_sys::TransactionId),
    None,
}

/// Whether a row of `rel` holds the values `tuple` (a row of `rel`, not yet
/// stored) has in one of `rel`'s unique indexes an `INSERT … ON CONFLICT` can take
/// (valid, checked at once, on plain columns, with no predicate), primary key
/// included, so that the insert is headed for that row; found as PostgreSQL's own
/// unique check finds it, with a dirty snapshot through the index, which also
/// shows the rows of transactions still in progress, for the caller to wait for
/// and look again, as that check waits. A NULL matches only under `NULLS NOT
/// DISTINCT`.
///
/// # Safety
/// `rel` is open (a row trigger's relation, while it fires) and `tuple` a row
/// described by its descriptor.
pub unsafe fn unique_conflict(rel: pg_sys::Relation, tuple: pg_sys::HeapTuple) -> Conflict {
    // SAFETY: by the caller's contract. Each index is opened and closed with the
    // same lock mode, its scan ended and the slot dropped before; on an ERROR the
    // (sub)transaction abort releases them. The dirty snapshot is never
    // registered: it lives on this stack frame, as in
    // check_exclusion_or_unique_constraint.
    unsafe {
        let list = pg_sys::RelationGetIndexList(rel);
        let indexes = pgrx::PgList::<pg_sys::Oid>::from_pg(list);
        let mut found = Conflict::None;
        for oid in indexes.iter_oid() {
            let index = pg_sys::index_open(oid, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
            let form = (*index).rd_index;
            let usable = (*form).indisunique
                && (*form).indisvalid
                && (*form).indimmediate
                && pg_sys::heap_attisnull(
                    (*index).rd_indextuple,
                    pg_sys::Anum_pg_index_indpred as i32,
                    std::ptr::null_mut(),
                )
                && pg_sys::heap_attisnull(
                    (*index).rd_indextuple,
                    pg_sys::Anum_pg_index_indexprs as i32,
                    std::ptr::null_mut(),
                );
            if usable {
                match conflict_in(rel, index, tuple) {
                    Conflict::None => {}
                    Conflict::InProgress(xid) => found = Conflict::InProgress(xid),
                    Conflict::Stored => found = Conflict::Stored,
                }
            }
            pg_sys::index_close(index, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
            if matches!(found, Conflict::Stored) {
                break;
            }
        }
        pg_sys::list_free(list);
        found
    }
}

/// [`unique_conflict`] in one index.
///
/// # Safety
/// `rel` and `index` open, `index` a unique btree-like index of `rel` on plain
/// columns, `tuple` a row of `rel`.
unsafe fn conflict_in(
    rel: pg_sys::Relation,
    index: pg_sys::Relation,
    tuple: pg_sys::HeapTuple,
) -> Conflict {
    // SAFETY: by the caller's contract.
    unsafe {
        let form = (*index).rd_index;
        let nkeys = (*form).indnkeyatts as usize;
        let attnums = (*form).indkey.values.as_slice(nkeys);
        let mut keys: Vec<pg_sys::ScanKeyData> = vec![std::mem::zeroed(); nkeys];
        for (i, &attnum) in attnums.iter().enumerate() {
            let mut isnull = false;
            let value = pg_sys::heap_getattr(tuple, attnum as i32, (*rel).rd_att, &mut isnull);
            if isnull {
                if !(*form).indnullsnotdistinct {
                    // A NULL conflicts with nothing.
                    return Conflict::None;
                }
                pg_sys::ScanKeyEntryInitialize(
                    &mut keys[i],
                    (pg_sys::SK_ISNULL | pg_sys::SK_SEARCHNULL) as i32,
                    (i + 1) as pg_sys::AttrNumber,
                    0, // InvalidStrategy: an IS NULL search
                    pg_sys::InvalidOid,
                    pg_sys::InvalidOid,
                    pg_sys::InvalidOid,
                    pg_sys::Datum::from(0usize),
                );
                continue;
            }
            let family = *(*index).rd_opfamily.add(i);
            let input = *(*index).rd_opcintype.add(i);
            let op = pg_sys::get_opfamily_member(
                family,
                input,
                input,
                pg_sys::BTEqualStrategyNumber as i16,
            );
            if op == pg_sys::InvalidOid {
                return Conflict::None;
            }
            pg_sys::ScanKeyEntryInitialize(
                &mut keys[i],
                0,
                (i + 1) as pg_sys::AttrNumber,
                pg_sys::BTEqualStrategyNumber as pg_sys::StrategyNumber,
                input,
                *(*index).rd_indcollation.add(i),
                pg_sys::get_opcode(op),
                value,
            );
        }
        let mut dirty: pg_sys::SnapshotData = std::mem::zeroed();
        dirty.snapshot_type = pg_sys::SnapshotType::SNAPSHOT_DIRTY;
        let scan = pg_sys::index_beginscan(rel, index, &mut dirty, nkeys as i32, 0);
        pg_sys::index_rescan(
            scan,
            keys.as_mut_ptr(),
            nkeys as i32,
            std::ptr::null_mut(),
            0,
        );
        let slot = pg_sys::table_slot_create(rel, std::ptr::null_mut());
        let mut found = Conflict::None;
        while pg_sys::index_getnext_slot(scan, pg_sys::ScanDirection::ForwardScanDirection, slot) {
            match inserter(slot) {
                Inserter::Visible => {
                    found = Conflict::Stored;
                    break;
                }
                Inserter::InProgress(xid) => found = Conflict::InProgress(xid),
                Inserter::Aborted => {}
            }
        }
        pg_sys::index_endscan(scan);
        pg_sys::ExecDropSingleTupleTableSlot(slot);
        found
    }
}
