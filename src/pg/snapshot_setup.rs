//! Whether a REPEATABLE READ or SERIALIZABLE transaction's snapshot sees the
//! pg_dedup setup of the table it writes.
//!
//! A relation's triggers, partitions and indexes are always the latest (the
//! relcache reads the catalog as it is now), but everything pg_dedup reads
//! through SPI is of the transaction's snapshot: the table's registration in
//! `dedup.enabled_tables`, the catalog rows of its signature index and of its
//! partitions. When the table was enabled, enabled again (a `disable` and an
//! `enable` in one transaction, the way settings change) or given a partition
//! after the snapshot was taken, the trigger fires but finds no registration (the
//! row would go in unchecked), an old one (naming an index or a collection that is
//! gone), or a partition it cannot look into (the rows other transactions put
//! there would go unseen). Such a transaction is refused with 40001, as
//! PostgreSQL refuses one whose snapshot is too old for a write; its retry takes
//! a new snapshot. READ COMMITTED takes a new snapshot for every statement and is
//! never refused.
//!
//! Every query here compares with `OPERATOR(pg_catalog.=)`: the writer's
//! `search_path` must not decide the answer.

use crate::error::DedupError;
use crate::pg::raise;
use pgrx::prelude::*;
use std::cell::RefCell;

thread_local! {
    /// The local transaction and the triggers [`require_trigger`] found in its
    /// snapshot (one per partition an insert reached).
    static TRIGGERS_SEEN: RefCell<(u32, Vec<u32>)> = const { RefCell::new((0, Vec::new())) };
}

/// Whether the transaction reads one snapshot throughout (REPEATABLE READ or
/// SERIALIZABLE).
fn xact_snapshot() -> bool {
    // SAFETY: a plain read of the backend's transaction state.
    unsafe { pg_sys::XactIsoLevel >= pg_sys::XACT_REPEATABLE_READ as i32 }
}

/// Refuses (40001) a trigger of `tbl` whose `pg_trigger` row the transaction's
/// snapshot does not hold: `dedup.enable` created it after the snapshot. Checked
/// once per transaction and trigger.
pub fn require_trigger(tgoid: pg_sys::Oid, tbl: pg_sys::Oid) {
    if !xact_snapshot() {
        return;
    }
    // SAFETY: a plain read of the backend's own PGPROC.
    let lxid = unsafe { (*pg_sys::MyProc).lxid };
    let known = TRIGGERS_SEEN.with(|s| {
        let mut s = s.borrow_mut();
        if s.0 != lxid {
            *s = (lxid, Vec::new());
        }
        s.1.contains(&tgoid.to_u32())
    });
    if known {
        return;
    }
    if visible(&[tgoid], "pg_trigger") < 1 {
        refuse(
            tbl,
            "was enabled for deduplication, or made a partition of an enabled table,",
        );
    }
    TRIGGERS_SEEN.with(|s| s.borrow_mut().1.push(tgoid.to_u32()));
}

/// Refuses (40001) a signature index `index` of `leaf` that the snapshot's
/// catalog names but that is gone: the table was disabled and enabled again, or
/// the index rebuilt (`REINDEX CONCURRENTLY`, which README suggests for tables
/// with retention, replaces it).
pub fn require_index(index: pg_sys::Oid, leaf: pg_sys::Oid) {
    // SAFETY: a syscache lookup, which reads the latest catalog ('\0': none).
    if unsafe { pg_sys::get_rel_relkind(index) } == 0 {
        refuse(
            leaf,
            "was enabled for deduplication again, or its signature index rebuilt,",
        );
    }
}

/// For a table or partition whose signature index the snapshot's catalog does
/// not show: whether, under REPEATABLE READ, the relation or one of its indexes
/// is newer than the snapshot (a partition created or attached since, an index
/// `ATTACH` built), so that a lookup would pass over its rows (see
/// [`refuse_leaf`]). A table that really lacks the index (its owner dropped it)
/// is not.
pub fn leaf_unseen(leaf: pg_sys::Oid) -> bool {
    if !xact_snapshot() {
        return false;
    }
    // SAFETY: the relation is opened and closed with the same lock; its index
    // list is copied out before it closes.
    let mut oids = vec![leaf];
    unsafe {
        let rel = pg_sys::relation_open(leaf, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
        let list = pgrx::PgList::<pg_sys::Oid>::from_pg(pg_sys::RelationGetIndexList(rel));
        oids.extend(list.iter_oid());
        pg_sys::relation_close(rel, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
    }
    visible(&oids, "pg_class") < oids.len() as i64
}

/// Refuses (40001) a lookup that would have to search `leaf`, which
/// [`leaf_unseen`] found newer than the snapshot.
pub fn refuse_leaf(leaf: pg_sys::Oid) -> ! {
    refuse(leaf, "or one of its indexes was created")
}

/// How many of `oids` the snapshot's `pg_catalog.<catalog>` holds.
fn visible(oids: &[pg_sys::Oid], catalog: &str) -> i64 {
    let sql = format!(
        "SELECT pg_catalog.count(*) FROM pg_catalog.{catalog} x \
         WHERE x.oid OPERATOR(pg_catalog.=) ANY ($1::pg_catalog.oid[])"
    );
    Spi::connect(|c| {
        let t = crate::pg::cache::select(c, &sql, Some(1), &[oids.to_vec().into()]);
        t.first().get::<i64>(1).ok().flatten().unwrap_or(0)
    })
}

/// Raises the 40001 for `rel`, named from the latest catalog (the snapshot's may
/// not hold it).
fn refuse(rel: pg_sys::Oid, what: &str) -> ! {
    let name = crate::pg::lookup::current_name(rel)
        .unwrap_or_else(|| format!("relation {}", rel.to_u32()));
    raise(DedupError::SerializationFailure {
        msg: format!("could not serialize access: {name} {what} after this transaction's snapshot"),
        hint: Some("retry the transaction".into()),
    })
}

/// `dedup._require_setup_in_snapshot(tbl, tgname)`: [`require_trigger`] for the
/// trigger `tgname` of `tbl`, from a trigger written in PL/pgSQL (which does not
/// know its trigger's OID). A trigger of another name is not checked.
#[pg_extern(volatile, parallel_unsafe)]
fn _require_setup_in_snapshot(tbl: pg_sys::Oid, tgname: &str) {
    if !xact_snapshot() {
        return;
    }
    // SAFETY: the relation is opened and closed with the same lock (the firing
    // statement holds a stronger one); its trigger descriptor is read before. An
    // OID that names no relation (a direct call) has nothing to check.
    let tgoid = unsafe {
        let rel = pg_sys::try_relation_open(tbl, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
        if rel.is_null() {
            return;
        }
        let desc = (*rel).trigdesc;
        let mut found = None;
        if !desc.is_null() {
            let triggers =
                std::slice::from_raw_parts((*desc).triggers, (*desc).numtriggers as usize);
            found = triggers
                .iter()
                .find(|t| std::ffi::CStr::from_ptr(t.tgname).to_bytes() == tgname.as_bytes())
                .map(|t| t.tgoid);
        }
        pg_sys::relation_close(rel, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
        found
    };
    if let Some(tgoid) = tgoid {
        require_trigger(tgoid, tbl);
    }
}
