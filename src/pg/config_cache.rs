//! Backend caches of configuration: enabled tables and source authorities (and the
//! epoch the model cache, `pg::models`, keeps its models under).
//!
//! Every trigger insert needs its table's row of `dedup.enabled_tables`, the
//! collection it names and the collection's rows of `dedup.sources`. They change
//! only when a table is enabled or disabled, a collection is created or dropped, or
//! authorities are learned, yet reading them was three SPI queries per row (about
//! 6 % of an insert). They are now kept for the life of the backend and dropped
//! through PostgreSQL's relcache invalidation, the mechanism the server's own
//! caches use:
//!
//! - a statement-level trigger on `dedup.enabled_tables`, `dedup.collections`,
//!   `dedup.sources`, `dedup.models` and `dedup.lock_secret` ([`_config_changed`])
//!   queues a relcache
//!   invalidation of that
//!   table; it reaches this backend at its next command, and every other backend
//!   after the commit, and a rollback replays it locally;
//! - DDL on an enabled table (ALTER, DROP, the column changes of `enable` and
//!   `disable`) invalidates that table's relcache entry by itself;
//! - a callback ([`on_relcache`]) advances an epoch when either arrives, or after a
//!   lost-invalidation reset, and every [`Kept`] map empties itself at the next
//!   read under a new epoch.
//!
//! An entry is kept across statements only when the snapshot it was read under is
//! certain to be newer than every invalidation this backend has processed: under
//! READ COMMITTED, and when no relevant invalidation arrived since the statement
//! started. Otherwise (REPEATABLE READ and SERIALIZABLE read an older snapshot, or
//! an invalidation arrived mid-statement) it serves the current statement only,
//! the behaviour of every read before these caches.

use crate::pg::cache::{self, StmtMap};
use crate::pg::lookup;
use pgrx::prelude::*;
use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::hash::Hash;
use std::rc::Rc;

thread_local! {
    /// Whether this backend warned of a catalog of another version.
    static WARNED_CATALOG: Cell<bool> = const { Cell::new(false) };
    /// Advanced by every invalidation that concerns these caches.
    static EPOCH: Cell<u64> = const { Cell::new(0) };
    /// When this backend last processed such an invalidation.
    static LAST_INVAL: Cell<i64> = const { Cell::new(i64::MIN) };
    /// The configuration tables and every enabled table read so far, by OID.
    static WATCHED: RefCell<HashSet<u32>> = RefCell::new(HashSet::new());
    static REGISTERED: Cell<bool> = const { Cell::new(false) };
    /// The epoch at which the configuration tables' OIDs were last looked up (they
    /// change if the extension is dropped and created again).
    static LEARNED: Cell<Option<u64>> = const { Cell::new(None) };
    /// The start of the statement that last took in other backends' invalidations.
    static ACCEPTED_AT: Cell<i64> = const { Cell::new(i64::MIN) };
}

/// Takes in, once per statement, the invalidations that other backends' commits
/// have queued. PostgreSQL does so when a transaction starts and when a statement
/// locks a relation anew; inside a transaction block the configuration tables stay
/// locked from its first statement on, so a model or table configuration another
/// session commits meanwhile would otherwise reach this backend only at its next
/// transaction, not at its next statement.
fn accept_invalidations() {
    // SAFETY: reads the backend's statement start; takes in queued invalidations,
    // which PostgreSQL itself does at any lock acquisition mid-statement.
    unsafe {
        let stmt = pg_sys::GetCurrentStatementStartTimestamp();
        if ACCEPTED_AT.with(|a| a.replace(stmt)) != stmt {
            pg_sys::AcceptInvalidationMessages();
        }
    }
}

/// A map kept across statements while no invalidation arrives (see the module
/// notes), with a statement-only side for entries that may not be kept.
pub struct Kept<K, V> {
    epoch: u64,
    kept: HashMap<K, Rc<V>>,
    statement: StmtMap<K, Rc<V>>,
}

impl<K: Hash + Eq + Clone, V> Default for Kept<K, V> {
    fn default() -> Self {
        Kept {
            epoch: 0,
            kept: HashMap::new(),
            statement: StmtMap::default(),
        }
    }
}

impl<K: Hash + Eq + Clone, V> Kept<K, V> {
    fn lookup(&mut self, key: &K) -> Option<Rc<V>> {
        let now = EPOCH.with(|e| e.get());
        if self.epoch != now {
            self.kept.clear();
            self.epoch = now;
        }
        self.kept
            .get(key)
            .or_else(|| self.statement.current().get(key))
            .cloned()
    }

    fn store(&mut self, key: K, v: Rc<V>) {
        if keepable() {
            self.kept.insert(key, v);
        } else {
            self.statement.current().insert(key, v);
        }
    }
}

/// The entry of `key` in the thread-local map `cell`, read by `fill` when absent
/// (None from `fill` is not cached). The map is not borrowed while `fill` runs, so
/// `fill` may run SPI queries, during which invalidations may arrive.
pub fn get_or<K, V>(
    cell: &'static std::thread::LocalKey<RefCell<Kept<K, V>>>,
    key: K,
    fill: impl FnOnce() -> Option<V>,
) -> Option<Rc<V>>
where
    K: Hash + Eq + Clone + 'static,
    V: 'static,
{
    accept_invalidations();
    if let Some(v) = cell.with(|c| c.borrow_mut().lookup(&key)) {
        return Some(v);
    }
    register();
    let v = Rc::new(fill()?);
    cell.with(|c| c.borrow_mut().store(key, v.clone()));
    Some(v)
}

/// The configuration epoch: it advances with every invalidation that concerns the
/// caches, including the extension being dropped (which drops the configuration
/// tables), so OIDs looked up at one epoch stay valid while it lasts.
pub fn epoch() -> u64 {
    register();
    accept_invalidations();
    EPOCH.with(|e| e.get())
}

/// Adds a relation whose relcache invalidation empties the caches (an enabled
/// table, once its configuration has been read).
pub fn watch(relid: pg_sys::Oid) {
    WATCHED.with(|w| w.borrow_mut().insert(relid.to_u32()));
}

/// Whether an entry read now may outlive the statement (see the module notes).
pub fn keepable() -> bool {
    // SAFETY: plain reads of the backend's transaction state.
    let (xact_snapshot, stmt_start) = unsafe {
        (
            pg_sys::XactIsoLevel >= pg_sys::XACT_REPEATABLE_READ as i32,
            pg_sys::GetCurrentStatementStartTimestamp(),
        )
    };
    !xact_snapshot && LAST_INVAL.with(|l| l.get()) < stmt_start
}

/// Registers the relcache callback once per backend, and watches the
/// configuration tables (looked up again after every invalidation, in case the
/// extension was dropped and created again).
fn register() {
    if !REGISTERED.with(|r| r.replace(true)) {
        // SAFETY: registers a static function once per backend; it only touches
        // thread-local cells and cannot raise. Registered before the lookup below,
        // so no invalidation is missed in between (with nothing watched yet, every
        // one counts).
        unsafe { pg_sys::CacheRegisterRelcacheCallback(Some(on_relcache), pg_sys::Datum::from(0)) };
    }
    let epoch = EPOCH.with(|e| e.get());
    if LEARNED.with(|l| l.get()) == Some(epoch) {
        return;
    }
    LEARNED.with(|l| l.set(Some(epoch)));
    let (oids, catalog): (Vec<Option<pg_sys::Oid>>, Option<String>) = Spi::connect(|c| {
        let t = cache::select(
            c,
            "SELECT 'dedup.enabled_tables'::pg_catalog.regclass::pg_catalog.oid, \
             'dedup.collections'::pg_catalog.regclass::pg_catalog.oid, \
             'dedup.sources'::pg_catalog.regclass::pg_catalog.oid, \
             'dedup.models'::pg_catalog.regclass::pg_catalog.oid, \
             pg_catalog.to_regclass('dedup.lock_secret')::pg_catalog.oid, \
             (SELECT e.extversion FROM pg_catalog.pg_extension e WHERE e.extname = 'pg_dedup')",
            Some(1),
            &[],
        );
        let r = t.first();
        let oids = (1..=5)
            .map(|i| r.get::<pg_sys::Oid>(i).ok().flatten())
            .collect();
        (oids, r.get::<String>(6).ok().flatten())
    });
    for o in oids.into_iter().flatten() {
        watch(o);
    }
    if let Some(v) = catalog {
        warn_other_catalog(&v);
    }
}

/// Warns, once per backend, when the database's catalog of the extension is of
/// another version than this library: between installing a new build and
/// `ALTER EXTENSION pg_dedup UPDATE`, when statements that read what the update
/// adds fail (42703 on a column of `dedup.*`), so that the log says why.
fn warn_other_catalog(catalog: &str) {
    let library = env!("CARGO_PKG_VERSION");
    if catalog == library || WARNED_CATALOG.with(|w| w.replace(true)) {
        return;
    }
    pgrx::pg_sys::panic::ErrorReport::new(
        pgrx::PgSqlErrorCode::ERRCODE_WARNING,
        format!(
            "pg_dedup's catalog in this database is version {}, its library version {library}",
            crate::error::excerpt(catalog)
        ),
        "pg_dedup",
    )
    .set_detail("until the catalog is updated, statements that read what the update adds fail")
    .set_hint("run ALTER EXTENSION pg_dedup UPDATE in every database that has the extension")
    .report(pgrx::PgLogLevel::WARNING);
}

/// The relcache callback: `relid` 0 means "everything" (a reset).
#[pg_guard]
unsafe extern "C-unwind" fn on_relcache(_arg: pg_sys::Datum, relid: pg_sys::Oid) {
    let r = relid.to_u32();
    let relevant = WATCHED.with(|w| {
        let w = w.borrow();
        w.is_empty() || w.contains(&r)
    });
    if r == 0 || relevant {
        EPOCH.with(|e| e.set(e.get().wrapping_add(1)));
        // SAFETY: reads the clock.
        let now = unsafe { pg_sys::GetCurrentTimestamp() };
        LAST_INVAL.with(|l| l.set(now));
    }
}

/// Statement trigger on the configuration tables: queues a relcache invalidation
/// of the changed table, which empties every backend's configuration caches (this
/// one at its next command, the others at commit).
fn _config_changed<'a>(
    trigger: &'a pgrx::PgTrigger<'a>,
) -> Result<Option<PgHeapTuple<'a, AllocatedByPostgres>>, std::convert::Infallible> {
    if let Ok(relid) = trigger.relid() {
        // SAFETY: queues an invalidation message for an existing relation.
        unsafe { pg_sys::CacheInvalidateRelcacheByRelid(relid) };
    }
    // On Citus the trigger fires on each node's copy of a reference table (a shard,
    // whose OID no backend watches): the enabled-tables table, watched by every
    // backend, is invalidated too.
    if crate::pg::citus::present() {
        let t =
            lookup::one::<pg_sys::Oid>("SELECT 'dedup.enabled_tables'::pg_catalog.regclass::oid")
                .ok()
                .flatten();
        if let Some(t) = t {
            // SAFETY: as above.
            unsafe { pg_sys::CacheInvalidateRelcacheByRelid(t) };
        }
    }
    Ok(None)
}

crate::pg::trigger_entry::trigger_entry!(
    _config_changed_wrapper,
    pg_finfo__config_changed_wrapper,
    "_config_changed",
    None,
    crate::pg::trigger_entry::Fired::StatementAfter,
    _config_changed
);
