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
//! and it is the recheck a lossy page needs), then the order and the limit. The SQL
//! form stays for a table whose signature index is missing or unusable.

use crate::pg::types::SignatureDatum;
use crate::signature::Signature;
use pgrx::prelude::*;
use std::ffi::CStr;

/// What a direct lookup needs of an enabled table, found once per configuration
/// read (`ingest::read_table_config`).
#[derive(Clone, Debug)]
pub struct Target {
    /// The GIN index on the signature column, with `dedup.signature_ops`.
    pub index: pg_sys::Oid,
    /// The function behind `dedup.%` (a scan key needs one; GIN itself uses the
    /// strategy number).
    pub match_proc: pg_sys::Oid,
    /// Attribute numbers of the key, `dedup_doc`, `dedup_sig` and `duplicate_of`.
    pub key_att: i16,
    pub doc_att: i16,
    pub sig_att: i16,
    pub dup_att: i16,
    /// The key column's type and collation (`duplicate_of` has the same type).
    pub key_type: pg_sys::Oid,
    pub key_collation: pg_sys::Oid,
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
    key: pg_sys::Datum,
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

/// The rows of `tbl` whose signature matches `sig` under `%`, with a document, other
/// than `self_key`; by shared keys (descending), then key (the key type's order);
/// at most `limit`. Read with [`push_query_snapshot`]`(false)`, or with `dirty` with
/// a dirty snapshot, as a unique index's check reads: every committed row, this
/// transaction's own, and the rows of transactions still in progress (marked in
/// [`Hit::in_progress`]; see `pg::keylocks`).
pub fn candidates(
    t: &Target,
    tbl: pg_sys::Oid,
    sig: &Signature,
    self_key: Option<&str>,
    dirty: bool,
    limit: usize,
    limits: &crate::limits::Limits,
) -> Vec<Hit> {
    if sig.keys.is_empty() {
        return Vec::new();
    }
    let min_shared = limits.min_shared_keys;
    let threshold = limits.similarity_threshold;
    let _rule = crate::gucs::CandidateRule::set(min_shared, threshold);
    // SAFETY: every call follows nodeBitmapIndexscan.c / nodeBitmapHeapscan.c: the
    // relations are opened and closed with the same lock mode, the scans are ended
    // and the slot dropped before the relations close. On an ERROR the transaction
    // (or subtransaction) abort releases relations, buffer pins and snapshots, and
    // the palloc'd copies go with the memory context.
    unsafe {
        let (key_len, key_byval) = type_len_byval(t.key_type);
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
        let heap = pg_sys::table_open(tbl, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
        let index = pg_sys::index_open(t.index, pg_sys::AccessShareLock as pg_sys::LOCKMODE);

        let query = SignatureDatum::from_signature(sig)
            .into_datum()
            .unwrap_or(pg_sys::Datum::from(0usize));
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
        let mut rows: Vec<Row> = Vec::new();
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
                let Some(doc) = attr(slot, t.doc_att) else {
                    continue;
                };
                let Some(row_sig) = attr(slot, t.sig_att) else {
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
                let Some(k) = attr(slot, t.key_att) else {
                    continue;
                };
                if let Some(me) = self_key {
                    if output(t.key_type, k) == me {
                        continue;
                    }
                }
                rows.push(Row {
                    shared: row_sig.shared_keys(sig),
                    key: datum_copy(k, key_len, key_byval),
                    dup: attr(slot, t.dup_att).map(|d| datum_copy(d, key_len, key_byval)),
                    doc: datum_copy(doc, -1, false),
                    in_progress,
                });
            }
        }
        pg_sys::tbm_end_iterate(it);
        pg_sys::ExecDropSingleTupleTableSlot(slot);
        pg_sys::table_endscan(hscan);
        pg_sys::tbm_free(tbm);
        pg_sys::index_close(index, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
        pg_sys::table_close(heap, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
        pop_query_snapshot(pushed);

        // ORDER BY shared keys DESC, key: the key type's default btree order under
        // the column's collation, as the SQL form sorted.
        let tc = pg_sys::lookup_type_cache(t.key_type, pg_sys::TYPECACHE_CMP_PROC_FINFO as i32);
        let cmp = &mut (*tc).cmp_proc_finfo as *mut pg_sys::FmgrInfo;
        let has_cmp = (*tc).cmp_proc_finfo.fn_oid != pg_sys::InvalidOid;
        rows.sort_by(|a, b| {
            b.shared.cmp(&a.shared).then_with(|| {
                if !has_cmp {
                    return std::cmp::Ordering::Equal;
                }
                let c = pg_sys::FunctionCall2Coll(cmp, t.key_collation, a.key, b.key);
                (c.value() as i32).cmp(&0)
            })
        });
        rows.truncate(limit);
        rows.into_iter()
            .map(|r| Hit {
                key: output(t.key_type, r.key),
                duplicate_of: r.dup.map(|d| output(t.key_type, d)),
                doc: r.doc,
                in_progress: r.in_progress,
            })
            .collect()
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
