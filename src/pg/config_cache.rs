//! The backend cache of enabled tables' configurations.
//!
//! Every trigger insert needs its table's row of `dedup.enabled_tables` and the
//! collection it names. They change only when a table is enabled or disabled or a
//! collection is created or dropped, yet reading them was two SPI queries per row
//! (about 5 % of an insert). They are now kept for the life of the backend and
//! dropped through PostgreSQL's relcache invalidation, the mechanism the server's
//! own caches use:
//!
//! - a statement-level trigger on `dedup.enabled_tables` and `dedup.collections`
//!   ([`_config_changed`]) queues a relcache invalidation of that table; it reaches
//!   this backend at its next command, and every other backend after the commit,
//!   and a rollback replays it locally;
//! - DDL on an enabled table (ALTER, DROP, the column changes of `enable` and
//!   `disable`) invalidates that table's relcache entry by itself;
//! - a callback ([`on_relcache`]) empties the cache (or drops one table) when either
//!   arrives, and after a lost-invalidation reset.
//!
//! An entry is kept across statements only when the snapshot it was read under is
//! certain to be newer than every invalidation this backend has processed: under
//! READ COMMITTED, and when no relevant invalidation arrived since the statement
//! started. Otherwise (REPEATABLE READ and SERIALIZABLE read an older snapshot, or
//! an invalidation arrived mid-statement) it serves the current statement only,
//! the behaviour of every read before this cache.

use crate::pg::cache::{self, StmtMap};
use crate::pg::ingest::{read_table_config, TableConfig};
use pgrx::prelude::*;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

thread_local! {
    /// Configurations kept across statements, by table OID.
    static KEPT: RefCell<HashMap<u32, Rc<TableConfig>>> = RefCell::new(HashMap::new());
    /// Configurations for the current statement only.
    static STATEMENT: RefCell<StmtMap<u32, Rc<TableConfig>>> = RefCell::new(StmtMap::default());
    /// When this backend last processed an invalidation that concerns the cache.
    static LAST_INVAL: Cell<i64> = const { Cell::new(i64::MIN) };
    /// OIDs of `dedup.enabled_tables` and `dedup.collections`, once looked up.
    static WATCHED: Cell<Option<(u32, u32)>> = const { Cell::new(None) };
    static REGISTERED: Cell<bool> = const { Cell::new(false) };
}

/// The configuration of `tbl`, or None when it is not enabled (not cached: a
/// table that is not enabled is an error or a trigger left behind).
pub fn get(tbl: pg_sys::Oid) -> Option<Rc<TableConfig>> {
    let key = tbl.to_u32();
    if let Some(c) = KEPT.with(|k| k.borrow().get(&key).cloned()) {
        return Some(c);
    }
    if let Some(c) = cache::with(&STATEMENT, |m| m.get(&key).cloned()) {
        return Some(c);
    }
    register();
    let cfg = Rc::new(read_table_config(tbl)?);
    if keepable() {
        KEPT.with(|k| k.borrow_mut().insert(key, cfg.clone()));
    } else {
        cache::with(&STATEMENT, |m| m.insert(key, cfg.clone()));
    }
    Some(cfg)
}

/// Whether an entry read now may outlive the statement (see the module notes).
fn keepable() -> bool {
    // SAFETY: plain reads of the backend's transaction state.
    let (xact_snapshot, stmt_start) = unsafe {
        (
            pg_sys::XactIsoLevel >= pg_sys::XACT_REPEATABLE_READ as i32,
            pg_sys::GetCurrentStatementStartTimestamp(),
        )
    };
    !xact_snapshot && LAST_INVAL.with(|l| l.get()) < stmt_start
}

/// Registers the relcache callback once per backend and learns the OIDs of the
/// configuration tables.
fn register() {
    if WATCHED.with(|w| w.get()).is_none() {
        let oids = Spi::connect(|c| {
            let t = cache::select(
                c,
                "SELECT 'dedup.enabled_tables'::regclass::oid, 'dedup.collections'::regclass::oid",
                Some(1),
                &[],
            );
            let r = t.first();
            (
                r.get::<pg_sys::Oid>(1).ok().flatten(),
                r.get::<pg_sys::Oid>(2).ok().flatten(),
            )
        });
        if let (Some(a), Some(b)) = oids {
            WATCHED.with(|w| w.set(Some((a.to_u32(), b.to_u32()))));
        }
    }
    if !REGISTERED.with(|r| r.replace(true)) {
        // SAFETY: registers a static function once per backend; it only touches
        // thread-local maps and cannot raise.
        unsafe { pg_sys::CacheRegisterRelcacheCallback(Some(on_relcache), pg_sys::Datum::from(0)) };
    }
}

/// Empties everything: used by the callback and after an aborted transaction.
fn clear() {
    KEPT.with(|k| k.borrow_mut().clear());
    // SAFETY: reads the clock.
    let now = unsafe { pg_sys::GetCurrentTimestamp() };
    LAST_INVAL.with(|l| l.set(now));
}

/// The relcache callback: `relid` 0 means "everything" (a reset).
#[pg_guard]
unsafe extern "C-unwind" fn on_relcache(_arg: pg_sys::Datum, relid: pg_sys::Oid) {
    let r = relid.to_u32();
    let watched = WATCHED.with(|w| w.get());
    if r == 0 || watched.is_some_and(|(a, b)| r == a || r == b) {
        clear();
    } else if KEPT.with(|k| k.borrow_mut().remove(&r).is_some()) {
        let now = pg_sys::GetCurrentTimestamp();
        LAST_INVAL.with(|l| l.set(now));
    }
}

/// Statement trigger on `dedup.enabled_tables` and `dedup.collections`: queues a
/// relcache invalidation of the changed table, which empties every backend's
/// cache of configurations (this one at its next command, the others at commit).
#[pg_trigger]
fn _config_changed<'a>(
    trigger: &'a pgrx::PgTrigger<'a>,
) -> Result<Option<PgHeapTuple<'a, AllocatedByPostgres>>, std::convert::Infallible> {
    if let Ok(relid) = trigger.relid() {
        // SAFETY: queues an invalidation message for an existing relation.
        unsafe { pg_sys::CacheInvalidateRelcacheByRelid(relid) };
    }
    Ok(None)
}
