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

thread_local! {
    static HOOKED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn on_xact(event: pg_sys::XactEvent::Type, _arg: *mut std::ffi::c_void) {
    if event == pg_sys::XactEvent::XACT_EVENT_ABORT
        || event == pg_sys::XactEvent::XACT_EVENT_PARALLEL_ABORT
    {
        crate::pg::models::clear_cache();
        crate::pg::collections::clear_backend_cache();
    }
}

/// Registers, once per backend, the transaction callback that empties the
/// backend-level caches (models, term statistics) when a transaction aborts.
pub fn ensure_abort_hook() {
    if !HOOKED.with(|h| h.replace(true)) {
        // SAFETY: registers a static function once per backend; it only clears
        // thread-local maps.
        unsafe { pg_sys::RegisterXactCallback(Some(on_xact), std::ptr::null_mut()) };
    }
}
