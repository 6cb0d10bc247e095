//! Statement-scoped caches.
//!
//! A statement that calls `dedup.signature(doc, 'news')` for 12,000 rows used to
//! run three catalog and statistics queries per row (0.46 ms a row, 16 s in all in
//! the signature regress test). Everything here is keyed by a [`Stamp`]: the
//! transaction start, the statement start and the command id. A write through SPI
//! (such as `add_document` inside the trigger) advances the command id, so the next
//! row re-reads the statistics it changed; nothing stale survives a write.

use pgrx::pg_sys;
use std::cell::RefCell;
use std::collections::HashMap;

/// Identifies "the same statement, with no write since".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp(i64, i64, u32);

pub fn stamp() -> Stamp {
    // SAFETY: plain reads of the backend's transaction state.
    unsafe {
        Stamp(
            pg_sys::GetCurrentTransactionStartTimestamp(),
            pg_sys::GetCurrentStatementStartTimestamp(),
            pg_sys::GetCurrentCommandId(false),
        )
    }
}

/// A map valid for one [`Stamp`]; reading it under another stamp empties it first.
pub struct StmtMap<K, V> {
    stamp: Option<Stamp>,
    map: HashMap<K, V>,
}

impl<K: std::hash::Hash + Eq, V> Default for StmtMap<K, V> {
    fn default() -> Self {
        StmtMap {
            stamp: None,
            map: HashMap::new(),
        }
    }
}

impl<K: std::hash::Hash + Eq, V> StmtMap<K, V> {
    /// The map for the current statement.
    pub fn current(&mut self) -> &mut HashMap<K, V> {
        let now = stamp();
        if self.stamp != Some(now) {
            self.map.clear();
            self.stamp = Some(now);
        }
        &mut self.map
    }
}

/// Runs `f` on a thread-local statement map.
pub fn with<K, V, R>(
    cell: &'static std::thread::LocalKey<RefCell<StmtMap<K, V>>>,
    f: impl FnOnce(&mut HashMap<K, V>) -> R,
) -> R
where
    K: std::hash::Hash + Eq + 'static,
    V: 'static,
{
    cell.with(|c| f(c.borrow_mut().current()))
}

// ---- kept plans -------------------------------------------------------------------

use pgrx::datum::DatumWithOid;
use pgrx::spi::{OwnedPreparedStatement, SpiClient, SpiTupleTable};
use std::rc::Rc;

/// A kept plan's key: SQL text, argument type OIDs, and whether it was prepared
/// for a writing query.
type PlanKey = (String, Vec<u32>, bool);

thread_local! {
    /// Plans of the per-row queries, by SQL text and argument types.
    static PLANS: RefCell<HashMap<PlanKey, Rc<OwnedPreparedStatement>>> =
        RefCell::new(HashMap::new());
}

/// More distinct statements than this (one per enabled table at most, plus a
/// dozen fixed ones) means something generates SQL freely: start over.
const MAX_PLANS: usize = 512;

/// A plan for `sql`, parsed and prepared once per backend and kept (SPI_keepplan).
/// PostgreSQL re-plans it by itself when a table it reads is altered, dropped or
/// re-analyzed (plan cache invalidation), so keeping it is always safe. Per-row
/// queries of the trigger used to be parsed and planned for every row: about a
/// tenth of an insert's time.
fn plan(
    c: &SpiClient<'_>,
    sql: &str,
    args: &[DatumWithOid<'_>],
    mutating: bool,
) -> Rc<OwnedPreparedStatement> {
    let oids: Vec<u32> = args.iter().map(|a| a.oid().to_u32()).collect();
    let key = (sql.to_owned(), oids, mutating);
    if let Some(p) = PLANS.with(|m| m.borrow().get(&key).cloned()) {
        return p;
    }
    let types: Vec<pgrx::PgOid> = args.iter().map(|a| pgrx::PgOid::from(a.oid())).collect();
    let prepared = if mutating {
        c.prepare_mut(sql, &types)
    } else {
        c.prepare(sql, &types)
    }
    .unwrap_or_else(|e| crate::pg::spi_err(e));
    let p = Rc::new(prepared.keep());
    PLANS.with(|m| {
        let mut m = m.borrow_mut();
        if m.len() >= MAX_PLANS {
            m.clear();
        }
        m.insert(key, p.clone());
    });
    p
}

/// Runs a read-only query through its kept plan.
pub fn select<'c>(
    c: &SpiClient<'c>,
    sql: &str,
    limit: Option<i64>,
    args: &[DatumWithOid<'_>],
) -> SpiTupleTable<'c> {
    let p = plan(c, sql, args, false);
    c.select(&*p, limit.map(|l| l as _), args)
        .unwrap_or_else(|e| crate::pg::spi_err(e))
}

/// Runs a reading query through its kept plan in SPI's non-read-only mode, which
/// takes a new snapshot for it: under READ COMMITTED it sees rows that other
/// transactions committed after the statement began (for instance while this one
/// waited for a lock), and every row this transaction wrote before it. It marks the
/// transaction as writing (assigns its xid), so it is only for callers that write.
pub fn select_new_snapshot<'c>(
    c: &mut SpiClient<'c>,
    sql: &str,
    limit: Option<i64>,
    args: &[DatumWithOid<'_>],
) -> SpiTupleTable<'c> {
    update(c, sql, limit, args)
}

/// Runs a writing query through its kept plan.
pub fn update<'c>(
    c: &mut SpiClient<'c>,
    sql: &str,
    limit: Option<i64>,
    args: &[DatumWithOid<'_>],
) -> SpiTupleTable<'c> {
    let p = plan(c, sql, args, true);
    c.update(&*p, limit.map(|l| l as _), args)
        .unwrap_or_else(|e| crate::pg::spi_err(e))
}
