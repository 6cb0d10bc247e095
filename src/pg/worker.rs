//! The background fold of batched term statistics (`dedup.background_fold`).
//!
//! With a batch larger than 1 (`dedup.stats_batch`, automatic by default: see
//! `cache_policy::batch`) each committing transaction adds one row to
//! `dedup.term_stats_pending`, and every batch the rows are folded into
//! `dedup.term_stats` and `dedup.collection_stats`. Folding 1,000 documents of 850 words takes
//! about 0.6 s, which used to land inside whichever INSERT reached the batch. Now
//! that transaction only notes the collection ([`want_fold`]); when it commits, a
//! dynamic background worker is started ([`launch_wanted`]), which connects to the
//! same database as the role that wrote the pending rows (the extension owner,
//! for the trigger's: a writer has no rights on the statistics tables) and folds
//! the committed pending rows. No
//! `shared_preload_libraries` entry is needed.
//!
//! The worker folds in one transaction (`pg::stats::fold`: pending rows deleted,
//! term rows upserted in term order, the collection row last, the order every
//! writer of those rows keeps). A session advisory lock keeps two workers of one
//! collection from folding at once; the second one waits for the first (up to
//! two seconds) and then folds what is left, if enough is.
//!
//! Nothing is lost if no worker can start (all `max_worker_processes` slots busy)
//! or a worker fails: the rows stay pending, and an insert that finds twice the
//! batch pending folds them itself (under READ COMMITTED: a REPEATABLE READ or
//! SERIALIZABLE writer only appends, see `pg::stats::appends_only`, and its rows
//! wait for the next worker). A worker waits at most 100 ms for a row lock
//! ([`yield_locks`]), so it gives way to users' statements instead of deadlocking
//! with them.

use pgrx::bgworkers::SignalWakeFlags;
use pgrx::bgworkers::{BackgroundWorker, BackgroundWorkerBuilder, BgWorkerStartTime};
use pgrx::datum::DatumWithOid;
use pgrx::prelude::*;
use std::cell::RefCell;
use std::collections::HashMap;

/// The key of the advisory lock a folding worker holds (the one-bigint form, a
/// space of its own apart from the trigger's two-int4 signature locks), plus the
/// collection id.
const FOLD_LOCK: i64 = 0x6465_6475_0000_0000; // "dedu" in the high half

thread_local! {
    /// The last worker this backend started for each collection (a handle in
    /// TopMemoryContext), so that a commit does not start a second one while the
    /// first has not finished.
    static STARTED: RefCell<HashMap<i32, *mut pg_sys::BackgroundWorkerHandle>> =
        RefCell::new(HashMap::new());
}

/// Starts a fold worker for each collection the committed transaction asked for,
/// unless this backend's previous worker for it is still starting or running.
/// Runs in the commit callback: it must not raise, and it does not (a worker that
/// cannot be registered is skipped, see the module notes).
pub fn launch_wanted() {
    let wanted = crate::pg::stats::take_wanted_folds();
    if wanted.is_empty() {
        return;
    }
    // SAFETY: a plain read of the backend's database.
    let db = unsafe { pg_sys::MyDatabaseId };
    for crate::pg::stats::FoldWish {
        coll_id,
        role: user,
        drain,
        min_docs,
    } in wanted
    {
        STARTED.with(|s| {
            let mut s = s.borrow_mut();
            if let Some(&h) = s.get(&coll_id) {
                let mut pid: pg_sys::pid_t = 0;
                // SAFETY: `h` came from RegisterDynamicBackgroundWorker and lives in
                // TopMemoryContext.
                let status = unsafe { pg_sys::GetBackgroundWorkerPid(h, &mut pid) };
                if status != pg_sys::BgwHandleStatus::BGWH_STOPPED {
                    return;
                }
                // SAFETY: as above; nothing else holds the handle.
                unsafe { pg_sys::pfree(h.cast()) };
                s.remove(&coll_id);
            }
            let builder = BackgroundWorkerBuilder::new("pg_dedup fold")
                .set_type("pg_dedup fold")
                .set_library("pg_dedup")
                .set_function("dedup_fold_worker_main")
                .enable_spi_access()
                .set_start_time(BgWorkerStartTime::RecoveryFinished)
                .set_argument(coll_id.into_datum())
                .set_extra(&format!(
                    "{} {} {} {}",
                    db.to_u32(),
                    user.to_u32(),
                    u8::from(drain),
                    min_docs
                ));
            let mut bgw: pg_sys::BackgroundWorker = (&builder).into();
            let mut handle: *mut pg_sys::BackgroundWorkerHandle = std::ptr::null_mut();
            // SAFETY: registers a worker from a regular backend; the handle is
            // allocated in TopMemoryContext so it outlives the transaction.
            let ok = unsafe {
                let old = pg_sys::MemoryContextSwitchTo(pg_sys::TopMemoryContext);
                let ok = pg_sys::RegisterDynamicBackgroundWorker(&mut bgw, &mut handle);
                pg_sys::MemoryContextSwitchTo(old);
                ok
            };
            if ok && !handle.is_null() {
                s.insert(coll_id, handle);
            } else if crate::pg::stats::note_no_worker() {
                // In the server log only (a commit callback must not raise), once
                // in a while: the commits fold the batches themselves meanwhile.
                pgrx::log!(
                    "pg_dedup: no background worker slot free for a statistics fold; commits fold the statistics themselves (raise max_worker_processes)"
                );
            }
        });
    }
}

/// The worker's entry point (named in [`launch_wanted`]). Its argument is the
/// collection id; `bgw_extra` holds the database and user OIDs, whether to drain
/// and the pending documents to wait for (see `pg::stats::FoldWish`).
#[pg_guard]
#[no_mangle]
pub extern "C-unwind" fn dedup_fold_worker_main(arg: pg_sys::Datum) {
    BackgroundWorker::attach_signal_handlers(SignalWakeFlags::SIGTERM);
    let coll_id = arg.value() as i32;
    let mut ids = BackgroundWorker::get_extra()
        .split(' ')
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let db = pg_sys::Oid::from(ids.next().unwrap_or(0));
    let user = pg_sys::Oid::from(ids.next().unwrap_or(0));
    let drain = ids.next() == Some(1);
    let min_docs = i64::from(ids.next().unwrap_or(0));
    if db == pg_sys::InvalidOid || user == pg_sys::InvalidOid {
        return;
    }
    BackgroundWorker::connect_worker_to_spi_by_oid(Some(db), Some(user));
    // READ COMMITTED whatever the server's, the database's or the role's default:
    // a fold updates rows that writers' commits change (under REPEATABLE READ it
    // would fail with 40001), and under SERIALIZABLE it would take part in the
    // writers' read/write dependencies. SAFETY: sets a GUC by name, outside any
    // transaction, with constant C strings.
    unsafe {
        pg_sys::SetConfigOption(
            c"default_transaction_isolation".as_ptr(),
            c"read committed".as_ptr(),
            pg_sys::GucContext::PGC_SUSET,
            pg_sys::GucSource::PGC_S_OVERRIDE,
        );
    }
    let lock = FOLD_LOCK | coll_id as i64;
    // Whether there is something to fold: a batch of documents (`min_docs`), or
    // any pending row.
    let enough = || {
        if min_docs > 0 {
            BackgroundWorker::transaction(|| {
                Spi::connect_mut(|c| crate::pg::stats::pending(c, coll_id, min_docs).docs)
            }) >= min_docs
        } else {
            ask(
                "SELECT EXISTS (SELECT 1 FROM dedup.term_stats_pending WHERE collection_id = $1)",
                &[coll_id.into()],
            )
        }
    };
    let mut rounds = 0;
    let mut waits = 0;
    loop {
        if !ask("SELECT pg_try_advisory_lock($1)", &[lock.into()]) {
            // Another worker folds the collection, with a snapshot that may
            // predate the rows this one was started for: waits for it to let the
            // lock go, then looks for them (an audit found a big transaction's
            // rows left pending when the second worker just left).
            waits += 1;
            if waits > LOCK_WAITS
                || !BackgroundWorker::wait_latch(Some(std::time::Duration::from_millis(LINGER_MS)))
            {
                return;
            }
            continue;
        }
        if !enough() {
            return;
        }
        // A full batch is folded once: folding again at once what arrived
        // meanwhile would fold the common terms far more often. Asked to drain,
        // folds again, each time in a transaction of its own (whose snapshot sees
        // the rows committed meanwhile), while the last fold found rows.
        loop {
            let folded = BackgroundWorker::transaction(|| {
                Spi::connect_mut(|c| {
                    yield_locks(c);
                    crate::pg::subxact::catching(
                        &[PgSqlErrorCode::ERRCODE_LOCK_NOT_AVAILABLE],
                        || crate::pg::stats::fold(c, coll_id),
                    )
                })
            });
            let Ok(folded) = folded else {
                // Gave way on a row lock, as designed (see `yield_locks`): the
                // rows stay pending for a later fold. Raised, it put an ERROR and
                // the worker's "exited with exit code 1" in the server log for
                // what is no error.
                pgrx::debug1!(
                    "pg_dedup: a statistics fold gave way on a row lock; its rows stay pending"
                );
                return;
            };
            rounds += 1;
            if !drain
                || folded == 0
                || rounds >= FOLD_ROUNDS
                || BackgroundWorker::sigterm_received()
            {
                break;
            }
        }
        if rounds >= FOLD_ROUNDS || BackgroundWorker::sigterm_received() {
            // The lock is the session's: it goes when the worker exits.
            return;
        }
        // Lets the lock go, then looks again a few times before leaving: a
        // worker that found the lock taken while this one folded waits for it,
        // and a writer whose commit lands while this worker runs starts no other
        // (see `launch_wanted`), so what it committed (a batch, or anything
        // under drain) is this worker's to take. A commit that lands between
        // its last look and its exit waits for the next fold.
        ask("SELECT pg_advisory_unlock($1)", &[lock.into()]);
        let mut idle = 0;
        while !enough() {
            idle += 1;
            if idle > LINGER_LOOKS
                || !BackgroundWorker::wait_latch(Some(std::time::Duration::from_millis(LINGER_MS)))
            {
                return;
            }
        }
    }
}

/// How many times a worker that finds another folding the collection waits
/// [`LINGER_MS`] for it before it leaves (two seconds: a fold of a batch of long
/// documents takes about 0.6 s).
const LOCK_WAITS: u32 = 40;

/// How long a worker waits between its looks for new pending rows before it
/// leaves, and how many looks it makes (see `dedup_fold_worker_main`).
const LINGER_MS: u64 = 50;
const LINGER_LOOKS: u32 = 10;

/// Runs one query with a boolean answer in a transaction of its own (false if it
/// fails or answers NULL).
fn ask(q: &str, args: &[DatumWithOid<'_>]) -> bool {
    BackgroundWorker::transaction(|| {
        Spi::connect_mut(|c| {
            c.update(q, None, args)
                .ok()
                .and_then(|t| t.first().get::<bool>(1).ok().flatten())
                .unwrap_or(false)
        })
    })
}

/// How many folds one draining worker makes at most (see `dedup_fold_worker_main`),
/// so that a steady stream of writers cannot keep one worker forever.
const FOLD_ROUNDS: usize = 100;

/// Makes the worker, not a user's statement, give way on a row lock: a
/// multi-row DELETE with unbatched statistics locks term rows document by
/// document, out of the fold's term order, and the two used to deadlock (the
/// deadlock detector, after `deadlock_timeout`, could pick the user's statement).
/// After 100 ms the fold fails with 55P03, it is rolled back, the rows stay
/// pending, the worker leaves quietly, and a later fold takes them.
fn yield_locks(c: &mut pgrx::spi::SpiClient<'_>) {
    c.update(
        "SELECT set_config('lock_timeout', '100ms', true)",
        None,
        &[],
    )
    .ok();
}
