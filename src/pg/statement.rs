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
//!   rebuilt from the stored rows' documents, read back by tuple id, or (when the
//!   level holds other changes too) the collection is recomputed.

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

/// `dedup_statement_start`: a statement on `rel` begins.
pub fn start(rel: &PgRelation) {
    if followed(rel) {
        let tbl = rel.oid().to_u32();
        with_own_changes(|d| d.open_statement(subtransaction(), tbl));
    }
}

/// The row trigger hands a row back to the executor; `taken_as_given` when it did
/// not count the row's document (a restored row).
pub fn row_returned(tbl: pg_sys::Oid, taken_as_given: bool) {
    with_own_changes(|d| {
        if let Some(s) = d.statement(tbl.to_u32()) {
            s.returned += 1;
            s.taken_as_given += u64::from(taken_as_given);
        }
    });
}

/// `dedup_row_stored`: a row of `tbl` was stored (`old`: the version an update
/// replaced).
pub fn row_stored(
    tbl: pg_sys::Oid,
    old: Option<&pg_sys::ItemPointerData>,
    new: &pg_sys::ItemPointerData,
) {
    with_own_changes(|d| {
        if let Some(s) = d.statement(tbl.to_u32()) {
            match old {
                Some(o) => s.updated.push((tid(o), tid(new))),
                None => s.inserted.push(tid(new)),
            }
        }
    });
}

/// `dedup_statement_end`: the statement on `rel` ended; its changes stand,
/// rebuilt from the stored rows when some counted rows never reached the table.
pub fn end(rel: &PgRelation) {
    let tbl = rel.oid();
    let Some((sub, st, mut colls)) = with_own_changes(|d| d.close_statement(tbl.to_u32())) else {
        return;
    };
    let repair = st.repair();
    let cfg = match repair {
        Repair::Keep => None,
        _ => ingest::enabled_table(tbl),
    };
    let Some(cfg) = cfg else {
        with_own_changes(|d| d.merge_down(sub, colls));
        return;
    };
    match repair {
        Repair::Keep => {}
        Repair::Rebuild => {
            colls.insert(cfg.coll.id, stored_changes(rel, &st));
        }
        Repair::Recompute => {
            with_own_changes(|d| d.merge_down(sub, colls));
            crate::pg::privilege::as_owner(|| {
                crate::pg::recompute::recompute_collection(&cfg.coll)
            });
            return;
        }
    }
    with_own_changes(|d| d.merge_down(sub, colls));
}

/// The statistics changes of the statement's stored rows: each inserted row's
/// document, and for each updated row its new document less its old one.
fn stored_changes(rel: &PgRelation, st: &crate::txdelta::Statement) -> CollDelta {
    let mut delta = CollDelta::default();
    let Some(att) = doc_attribute(rel) else {
        return delta;
    };
    let mut add = |t: u64, sign: i64| {
        if let Some(doc) = document_at(rel, att, t) {
            delta.add_document(&doc, sign);
        }
    };
    for &t in &st.inserted {
        add(t, 1);
    }
    for &(old, new) in &st.updated {
        add(old, -1);
        add(new, 1);
    }
    delta
}

/// The attribute number of `dedup_doc`.
fn doc_attribute(rel: &PgRelation) -> Option<i32> {
    // SAFETY: an open relation's descriptor.
    let n = unsafe { pg_sys::SPI_fnumber((*rel.as_ptr()).rd_att, c"dedup_doc".as_ptr()) };
    (n > 0).then_some(n)
}

/// The document of the tuple version at `t` (any version: an update's old one is
/// dead to this transaction's snapshot).
fn document_at(rel: &PgRelation, att: i32, t: u64) -> Option<crate::document::Document> {
    let mut tuple = pg_sys::HeapTupleData {
        t_self: item_pointer(t),
        ..Default::default()
    };
    let mut buffer: pg_sys::Buffer = 0;
    // SAFETY: heap_fetch of a tuple id this statement stored, with SnapshotAny; the
    // buffer it pins is released below, after the datum was copied out.
    unsafe {
        let found = pg_sys::heap_fetch(
            rel.as_ptr(),
            std::ptr::addr_of_mut!(pg_sys::SnapshotAnyData),
            &mut tuple,
            &mut buffer,
            false,
        );
        if !found {
            if buffer != 0 {
                pg_sys::ReleaseBuffer(buffer);
            }
            return None;
        }
        let mut isnull = false;
        let d = pg_sys::heap_getattr(&mut tuple, att, (*rel.as_ptr()).rd_att, &mut isnull);
        let doc = if isnull {
            None
        } else {
            crate::pg::types::DocumentDatum::from_polymorphic_datum(d, false, pg_sys::InvalidOid)
                .map(|d| d.decode())
        };
        pg_sys::ReleaseBuffer(buffer);
        doc
    }
}
