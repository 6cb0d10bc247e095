//! The transaction lifecycle: one module owns the commit and abort callbacks,
//! registered once when the library is loaded (`_PG_init`), and calls the modules
//! that keep per-transaction or per-backend state. Nothing calls back into it, so
//! the glue's imports stay one-way.
//!
//! - before a commit (or PREPARE): the signature-key locks go (`pg::keylocks`),
//!   then the transaction's statistics changes are written (`pg::stats::flush`);
//! - after a commit: the backend's cached term statistics take in what the
//!   commit wrote (`pg::weigher::committed`), and the background folds it asked
//!   for start (`pg::worker`);
//! - on abort: the unwritten changes, the model cache and the backend term and
//!   document caches are emptied (what was read may have included the aborted
//!   transaction's own changes), and no fold is started;
//! - at every end, the tables that left a collection in the transaction are
//!   forgotten (`pg::privilege`);
//! - a subtransaction's changes go to its parent on release, and away on rollback.

use pgrx::pg_sys;

/// Registers the callbacks; called once per backend, from `_PG_init`.
pub fn register() {
    // SAFETY: registers static functions once per backend.
    unsafe {
        pg_sys::RegisterXactCallback(Some(on_xact), std::ptr::null_mut());
        pg_sys::RegisterSubXactCallback(Some(on_subxact), std::ptr::null_mut());
    }
}

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn on_xact(event: pg_sys::XactEvent::Type, _arg: *mut std::ffi::c_void) {
    if event == pg_sys::XactEvent::XACT_EVENT_PRE_PREPARE
        && crate::pg::citus::internal_backend()
        && crate::pg::stats::has_own_changes()
    {
        // A Citus coordinator prepares the transaction on each worker it wrote on
        // when there are several: the statistics writes (to reference tables on
        // every node) cannot start distributed work of their own then.
        crate::pg::raise(crate::error::DedupError::FeatureNotSupported {
            msg: "an enabled distributed table was written on several workers in one transaction".into(),
            hint: Some(
                "write it one row per statement and transaction, or load it on one node and then dedup.distribute it"
                    .into(),
            ),
        });
    }
    if event == pg_sys::XactEvent::XACT_EVENT_PRE_COMMIT
        || event == pg_sys::XactEvent::XACT_EVENT_PRE_PREPARE
    {
        // Every row is in its table: the key locks can go before the statistics
        // rows are taken.
        crate::pg::keylocks::release();
        crate::pg::stats::flush(event == pg_sys::XactEvent::XACT_EVENT_PRE_PREPARE);
    } else if event == pg_sys::XactEvent::XACT_EVENT_ABORT
        || event == pg_sys::XactEvent::XACT_EVENT_PARALLEL_ABORT
    {
        crate::pg::stats::discard_own_changes();
        crate::pg::models::clear_cache();
        crate::pg::weigher::after_abort();
        crate::pg::stats::forget_wanted_folds();
        crate::pg::privilege::forget_left_tables();
        crate::pg::catalog::forget_dropped_collections();
        crate::pg::attach::forget_detaching();
        crate::release_after_large_work();
    } else if event == pg_sys::XactEvent::XACT_EVENT_PREPARE {
        crate::pg::privilege::forget_left_tables();
        crate::pg::catalog::forget_dropped_collections();
        crate::pg::attach::forget_detaching();
        crate::pg::weigher::after_end(true);
        crate::pg::stats::forget_wanted_folds();
        // The prepared transaction may yet be rolled back (ROLLBACK PREPARED): what
        // it wrote must not reach this backend's cache at its next commit.
        drop(crate::pg::stats::take_written());
    } else if event == pg_sys::XactEvent::XACT_EVENT_COMMIT {
        crate::pg::privilege::forget_left_tables();
        crate::pg::catalog::forget_dropped_collections();
        crate::pg::attach::forget_detaching();
        crate::pg::weigher::after_end(false);
        crate::pg::weigher::committed(crate::pg::stats::take_written());
        crate::pg::worker::launch_wanted();
        crate::release_after_large_work();
    }
}

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn on_subxact(
    event: pg_sys::SubXactEvent::Type,
    sub: pg_sys::SubTransactionId,
    parent: pg_sys::SubTransactionId,
    _arg: *mut std::ffi::c_void,
) {
    if event == pg_sys::SubXactEvent::SUBXACT_EVENT_COMMIT_SUB {
        crate::pg::stats::subtransaction_ended(sub, parent, true);
    } else if event == pg_sys::SubXactEvent::SUBXACT_EVENT_ABORT_SUB {
        crate::pg::stats::subtransaction_ended(sub, parent, false);
    }
}
