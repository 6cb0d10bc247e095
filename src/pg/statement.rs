//! One INSERT or UPDATE statement on an enabled table, followed from its start to
//! its end, so that the collection statistics count only rows the table received.
//!
//! The BEFORE row trigger adds a row's document to the statistics before the
//! executor stores the row, and the executor may still drop it: `INSERT … ON
//! CONFLICT DO NOTHING` skips a conflicting row after the BEFORE triggers ran, `ON
//! CONFLICT DO UPDATE` turns it into an update of another row, and a later BEFORE
//! trigger may return NULL. So `dedup.enable` installs, besides the row trigger:
//! - `dedup_statement_start`, BEFORE each INSERT or UPDATE statement: opens the
//!   statement's own level of statistics changes ([`crate::txdelta::Statement`]);
//! - `dedup_row_stored`, AFTER INSERT OR UPDATE OF the text columns, FOR EACH ROW:
//!   records the tuple id of every row that was stored (an AFTER row trigger fires
//!   for exactly those);
//! - `dedup_statement_end`, AFTER each statement: when every row the BEFORE trigger
//!   handed back was stored (nearly always), the changes stand; otherwise they are
//!   rebuilt from the stored rows' documents, read back by tuple id (changes made
//!   inside the statement by other statements are kept as they are), or (when it
//!   restored rows with their documents taken as given) the collection is
//!   recomputed.
//!
//! On a partitioned table the statement is followed as the enabled (root) table's,
//! whichever table it names (each partition has its own statement triggers), and
//! stored rows are kept with their partition. An UPDATE that moves a row to another
//! partition is a delete and an insert to the executor, whose triggers fire too:
//! `txdelta::Statement::take_move` tells them apart from real ones.

use crate::pg::ingest;
use crate::pg::stats::with_own_changes;
use crate::txdelta::{CollDelta, Repair};
use pgrx::prelude::*;
use pgrx::PgRelation;
use std::ffi::CStr;

/// A tuple id as one number (block number, then offset).
fn tid(t: &pg_sys::ItemPointerData) -> u64 {
    let block = (u64::from(t.ip_blkid.bi_hi) << 16) | u64::from(t.ip_blkid.bi_lo);
    (block << 16) | u64::from(t.ip_posid)
}

fn item_pointer(t: u64) -> pg_sys::ItemPointerData {
    let block = t >> 16;
    pg_sys::ItemPointerData {
        ip_blkid: pg_sys::BlockIdData {
            bi_hi: (block >> 16) as u16,
            bi_lo: (block & 0xffff) as u16,
        },
        ip_posid: (t & 0xffff) as u16,
    }
}

/// Whether the relation's row trigger and its AFTER row trigger fire together (the
/// same enabled state): a table whose `dedup_row_stored` was disabled or dropped by
/// hand is not followed, rather than have all its rows look dropped.
fn followed(rel: &PgRelation) -> bool {
    // SAFETY: a trigger's open relation; its trigger descriptor lists `numtriggers`
    // triggers.
    unsafe {
        let desc = (*rel.as_ptr()).trigdesc;
        if desc.is_null() {
            return false;
        }
        let n = (*desc).numtriggers as usize;
        let triggers = std::slice::from_raw_parts((*desc).triggers, n);
        let state = |name: &CStr| {
            triggers
                .iter()
                .find(|t| !t.tgname.is_null() && CStr::from_ptr(t.tgname) == name)
                .map(|t| t.tgenabled)
        };
        let before = state(c"dedup_trigger");
        before.is_some() && before == state(c"dedup_row_stored")
    }
}

fn subtransaction() -> u32 {
    // SAFETY: reads the backend's transaction state.
    unsafe { pg_sys::GetCurrentSubTransactionId() }
}

/// The enabled table whose statements `tbl`'s are followed as: itself, or the
/// partitioned table it is a partition of (a statement on a partition opens that
/// table's level, and its rows, wherever they are routed, count there).
fn followed_as(tbl: pg_sys::Oid) -> Option<u32> {
    ingest::enabled_table(tbl).map(|c| c.tbl.to_u32())
}

/// `dedup_statement_start`: a statement on `rel` begins.
pub fn start(rel: &PgRelation) {
    if followed(rel) {
        let Some(tbl) = followed_as(rel.oid()) else {
            return;
        };
        with_own_changes(|d| d.open_statement(subtransaction(), tbl));
    }
}

/// The row trigger hands a row of the enabled table `tbl` back to the executor;
/// `taken_as_given` when it did not count the row's document (a restored row).
pub fn row_returned(tbl: pg_sys::Oid, taken_as_given: bool) {
    with_own_changes(|d| {
        if let Some(s) = d.statement(tbl.to_u32()) {
            s.returned += 1;
            s.taken_as_given += u64::from(taken_as_given);
        }
    });
}

/// Runs `f` on the open statement of the enabled table `tbl`, if there is one.
pub fn with_statement<R>(
    tbl: pg_sys::Oid,
    f: impl FnOnce(&mut crate::txdelta::Statement) -> R,
) -> Option<R> {
    with_own_changes(|d| d.statement(tbl.to_u32()).map(f))
}

/// `dedup_row_stored`: a row of `rel` (a partition, when the enabled table is
/// partitioned) was stored (`old`: the version an update replaced).
pub fn row_stored(
    rel: pg_sys::Oid,
    old: Option<&pg_sys::ItemPointerData>,
    new: &pg_sys::ItemPointerData,
) {
    let Some(tbl) = followed_as(rel) else {
        return;
    };
    let r = rel.to_u32();
    with_own_changes(|d| {
        if let Some(s) = d.statement(tbl) {
            match old {
                Some(o) => s.updated.push((r, tid(o), tid(new))),
                None => s.inserted.push((r, tid(new))),
            }
        }
    });
}

/// A tuple id as one number (see [`row_stored`]), for [`crate::txdelta::Statement::note_update`].
pub fn tid_of(t: &pg_sys::ItemPointerData) -> u64 {
    tid(t)
}

/// `dedup_statement_end`: the statement on `rel` ended; its changes stand,
/// rebuilt from the stored rows when some counted rows never reached the table.
pub fn end(rel: &PgRelation) {
    let Some(tbl) = followed_as(rel.oid()) else {
        return;
    };
    let Some((sub, st, mut colls)) = with_own_changes(|d| d.close_statement(tbl)) else {
        return;
    };
    let repair = st.repair();
    let cfg = match repair {
        Repair::Keep => None,
        _ => ingest::enabled_table(rel.oid()),
    };
    let Some(cfg) = cfg else {
        with_own_changes(|d| d.merge_down(sub, colls));
        return;
    };
    match repair {
        Repair::Keep => {}
        Repair::Rebuild => {
            // The statement's own rows as they were stored, and what else changed
            // inside it (a nested statement's rows, repaired at its own end; a
            // direct add_document) as it is.
            let mut rebuilt = st.other.clone();
            rebuilt
                .entry(cfg.coll.id)
                .or_default()
                .merge(stored_changes(&st));
            colls = rebuilt;
        }
        Repair::Recompute => {
            with_own_changes(|d| d.merge_down(sub, colls));
            // As `dedup.recompute` runs it: as the writer, who makes the temporary
            // table (a security-restricted switch to the extension's owner may not),
            // with the statistics written and the tables read under their own
            // owners' rights inside.
            crate::pg::recompute::recompute_collection(&cfg.coll);
            return;
        }
    }
    with_own_changes(|d| d.merge_down(sub, colls));
}

/// The statistics changes of the statement's stored rows: each inserted row's
/// document, for each updated row its new document less its old one, and for each
/// row moved to another partition (stored as an insert there) its old document
/// taken away.
fn stored_changes(st: &crate::txdelta::Statement) -> CollDelta {
    let mut delta = CollDelta::default();
    let mut add = |rel: u32, t: u64, sign: i64| {
        if let Some(doc) = document_at(pg_sys::Oid::from(rel), t) {
            delta.add_document(&doc, sign);
        }
    };
    for &(rel, t) in &st.inserted {
        add(rel, t, 1);
    }
    for &(rel, old, new) in &st.updated {
        add(rel, old, -1);
        add(rel, new, 1);
    }
    for &(rel, t) in &st.moved_from {
        add(rel, t, -1);
    }
    delta
}

/// The document of the tuple version at `t` of relation `rel` (any version: an
/// update's old one is dead to this transaction's snapshot).
fn document_at(rel: pg_sys::Oid, t: u64) -> Option<crate::document::Document> {
    let mut tuple = pg_sys::HeapTupleData {
        t_self: item_pointer(t),
        ..Default::default()
    };
    let mut buffer: pg_sys::Buffer = 0;
    // SAFETY: the relation is one this statement stored a row in (it holds a lock
    // on it until the transaction ends); heap_fetch of a tuple id it stored, with
    // SnapshotAny; the buffer it pins is released below, after the datum was
    // copied out, and the relation closed.
    unsafe {
        let r = pg_sys::table_open(rel, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
        let att = pg_sys::SPI_fnumber((*r).rd_att, c"dedup_doc".as_ptr());
        let mut doc = None;
        if att > 0
            && pg_sys::heap_fetch(
                r,
                std::ptr::addr_of_mut!(pg_sys::SnapshotAnyData),
                &mut tuple,
                &mut buffer,
                false,
            )
        {
            let mut isnull = false;
            let d = pg_sys::heap_getattr(&mut tuple, att, (*r).rd_att, &mut isnull);
            if !isnull {
                doc = crate::pg::types::DocumentDatum::from_polymorphic_datum(
                    d,
                    false,
                    pg_sys::InvalidOid,
                )
                .map(|d| d.decode());
            }
        }
        if buffer != 0 {
            pg_sys::ReleaseBuffer(buffer);
        }
        pg_sys::table_close(r, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
        doc
    }
}
