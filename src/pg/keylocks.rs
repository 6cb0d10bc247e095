//! The trigger's signature-key locks: how two writers of near-identical texts
//! are kept from both becoming originals, with as few locks held as a unique index
//! would need.
//!
//! A writer takes an exclusive lock on each key of the new row's signature that
//! `signature::signature_and_lock_keys` keeps (under `topwords`, all but the lightest words) (in the
//! order of their lock tags), looks its candidates up with a *dirty* snapshot (rows of transactions
//! still in progress included, as a unique index's check sees them), and keeps the
//! locks only until its row is in the table and its index: they are released when
//! the same backend starts its next row, at the end of the statement (the
//! `dedup_statement_end` trigger `dedup.enable` installs) or at the end of the
//! transaction, whichever comes first. A second writer that finds a near-identical
//! row of a transaction still in progress releases its own key locks and waits for
//! that transaction to end ([`wait_for`]), then looks again: it sees the row if the
//! other committed, and not if it rolled back. So a transaction holds at most one
//! row's keys at a time, whatever its size ([`MAX_HELD`]); the only wait left
//! between transactions is on a near-identical row, the one a unique index has too.
//!
//! The locks live in a namespace of their own: advisory lock tags whose fourth
//! field is [`LOCK_NAMESPACE`], which neither `pg_advisory_lock(bigint)` (1) nor
//! `pg_advisory_lock(int, int)` (2) can produce, so an application's advisory locks
//! never block ingestion or are blocked by it. In `pg_locks` they show as
//! `locktype = 'advisory'`, `objsubid = 3565`, `classid` = the collection id and
//! `objid` = a keyed hash of the key: every role may read `pg_locks`, and a key is
//! a word's hash, which a word list inverts. The hash is SipHash-1-3 under the
//! database's secret (`dedup.lock_secret`, readable by the extension's owner
//! only), read once per backend and configuration epoch ([`config_cache::epoch`]:
//! a change to that table invalidates it like any configuration table's).

use crate::pg::{config_cache, lookup, privilege};
use pgrx::pg_sys;
use pgrx::pg_sys::errcodes::PgSqlErrorCode;
use pgrx::pg_sys::panic::CaughtError;
use pgrx::PgTryBuilder;
use siphasher::sip::SipHasher13;
use std::cell::RefCell;
use std::hash::Hasher;

/// The fourth field of every key lock tag ("DED" in hex, 0x0DED).
pub const LOCK_NAMESPACE: u16 = 0x0DED;

/// Most key locks one transaction holds at once: one row's signature keys, at most
/// the longest `topwords` / `longest` list (256) plus the exact-copy key.
pub const MAX_HELD: usize = 257;

thread_local! {
    /// The key locks this backend took for its last row, to release early.
    static HELD: RefCell<Vec<pg_sys::LOCKTAG>> = const { RefCell::new(Vec::new()) };
    /// This database's lock secret and the configuration epoch it was read at:
    /// kept until an invalidation of the configuration (a change to
    /// `dedup.lock_secret`, or the extension dropped and created again), at every
    /// isolation level, so a writer reads it once, not once per statement.
    static SECRET: std::cell::Cell<Option<(u64, [u8; 16])>> = const { std::cell::Cell::new(None) };
}

/// The database's lock secret (`dedup.lock_secret`), read as the extension's
/// owner; all zeros where there is none, so ingestion goes on (the tags are then
/// plain hashes of the keys): its row deleted, or the extension's objects still
/// 0.1.0's (the library is replaced before `ALTER EXTENSION … UPDATE`).
fn secret() -> [u8; 16] {
    let epoch = config_cache::epoch();
    if let Some((e, key)) = SECRET.with(|c| c.get()) {
        if e == epoch {
            return key;
        }
    }
    let key = {
        let bytes = privilege::as_owner(|| {
            let present = lookup::one::<bool>(
                "SELECT pg_catalog.to_regclass('dedup.lock_secret') IS NOT NULL",
            );
            if !matches!(present, Ok(Some(true))) {
                return Ok(None);
            }
            lookup::one::<Vec<u8>>(
                "SELECT pg_catalog.uuid_send(secret) FROM dedup.lock_secret WHERE only_row",
            )
        });
        let mut key = [0u8; 16];
        if let Ok(Some(b)) = bytes {
            for (k, v) in key.iter_mut().zip(b) {
                *k = v;
            }
        }
        key
    };
    // Kept under the epoch it was read at: an invalidation that arrived while it
    // was read makes the next row read it again.
    SECRET.with(|c| c.set(Some((epoch, key))));
    key
}

/// The lock tag of signature key `key` of collection `coll`: its fourth field
/// carries a keyed hash of the key (see the module notes).
fn tag(secret: &[u8; 16], coll: i32, key: u32) -> pg_sys::LOCKTAG {
    // SAFETY: MyDatabaseId is set for the life of a backend connected to a database.
    let db = unsafe { pg_sys::MyDatabaseId }.to_u32();
    let mut h = SipHasher13::new_with_key(secret);
    h.write_i32(coll);
    h.write_u32(key);
    pg_sys::LOCKTAG {
        locktag_field1: db,
        locktag_field2: coll as u32,
        locktag_field3: h.finish() as u32,
        locktag_field4: LOCK_NAMESPACE,
        locktag_type: pg_sys::LockTagType::LOCKTAG_ADVISORY as u8,
        locktag_lockmethodid: pg_sys::USER_LOCKMETHOD as u8,
    }
}

const MODE: pg_sys::LOCKMODE = pg_sys::ExclusiveLock as pg_sys::LOCKMODE;

/// Runs `f` with the top transaction's resource owner current, so locks taken
/// inside a subtransaction (a PL/pgSQL block with an EXCEPTION clause, say) can be
/// released from any later one; restored on unwind too.
fn as_top_owner<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(pg_sys::ResourceOwner);
    impl Drop for Restore {
        fn drop(&mut self) {
            // SAFETY: puts back the owner that was current on entry.
            unsafe { pg_sys::CurrentResourceOwner = self.0 };
        }
    }
    // SAFETY: both are backend globals; inside a transaction the top owner is set.
    let _restore = unsafe {
        let saved = pg_sys::CurrentResourceOwner;
        if !pg_sys::TopTransactionResourceOwner.is_null() {
            pg_sys::CurrentResourceOwner = pg_sys::TopTransactionResourceOwner;
        }
        Restore(saved)
    };
    f()
}

/// Locks the keys of one row, in ascending order of their tags (one order for
/// every backend, so two writers locking one row's keys each never wait on each
/// other in a cycle; without `early`, locks held across rows can, which
/// PostgreSQL reports as 40P01), after
/// releasing those of this backend's previous row. With `early` the locks are
/// recorded for [`release`]; without it (a table whose lookup cannot see rows in
/// progress) they are held to the end of the transaction, as every key lock once
/// was.
pub fn lock_row(coll: i32, keys: &[u32], early: bool) {
    release();
    let secret = secret();
    let mut keys: Vec<u32> = keys.to_vec();
    keys.sort_unstable();
    keys.dedup();
    keys.truncate(MAX_HELD);
    let mut tags: Vec<pg_sys::LOCKTAG> = keys.iter().map(|&k| tag(&secret, coll, k)).collect();
    tags.sort_unstable_by_key(|t| t.locktag_field3);
    tags.dedup_by_key(|t| t.locktag_field3);
    as_top_owner(|| {
        for t in &tags {
            // SAFETY: a valid tag; LockAcquire reports a deadlock or a lack of shared
            // memory with ereport, which pgrx's guard turns into a Rust unwind.
            unsafe {
                pg_sys::LockAcquire(t, MODE, false, false);
            }
        }
    });
    if early {
        HELD.with(|h| *h.borrow_mut() = tags);
    }
}

/// Releases the key locks of this backend's last row, if it still holds them
/// (a transaction end has released them already; a lock is only released where
/// `LockHeldByMe` says this transaction holds it).
pub fn release() {
    let tags = HELD.with(|h| std::mem::take(&mut *h.borrow_mut()));
    if tags.is_empty() {
        return;
    }
    as_top_owner(|| {
        for t in tags.iter().rev() {
            // SAFETY: valid tags; releasing only what this backend holds.
            unsafe {
                if pg_sys::LockHeldByMe(t, MODE) {
                    pg_sys::LockRelease(t, MODE, false);
                }
            }
        }
    });
}

/// Waits for transaction `xid` (which inserted a near-identical row) to end, as a
/// unique index's check does. The caller holds no key locks while it waits. The
/// deadlock this can meet between two writers, two open transactions that each
/// inserted a near-copy of the other's earlier text, is reported as such (40P01);
/// a cycle of other waits too (a `disable` or `recompute` in it) keeps
/// PostgreSQL's own report.
pub fn wait_for(xid: pg_sys::TransactionId) {
    PgTryBuilder::new(|| {
        // SAFETY: a plain lock wait; a deadlock is reported with ereport (40P01).
        unsafe {
            pg_sys::XactLockTableWait(
                xid,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                pg_sys::XLTW_Oper::XLTW_None,
            );
        }
    })
    .catch_when(PgSqlErrorCode::ERRCODE_T_R_DEADLOCK_DETECTED, |e| {
        let detail = match &e {
            CaughtError::PostgresError(r) | CaughtError::ErrorReport(r) => {
                r.detail().map(str::to_owned)
            }
            CaughtError::RustPanic { .. } => None,
        };
        if !two_writers(detail.as_deref()) {
            e.rethrow();
        }
        crate::pg::raise(crate::error::DedupError::Deadlock {
            msg: "deadlock detected: two transactions each inserted a near-duplicate of a text the other inserted and has not committed".into(),
            detail,
            hint: Some("retry the transaction; as with a unique index, each waits for the other to commit or roll back".into()),
        })
    })
    .execute();
}

/// Whether this backend is a logical replication worker and `xid` a prepared
/// transaction (in progress, in no backend): one the same worker prepared from the
/// publisher's stream (`two_phase`) and can only commit later in it, so a wait for
/// it would never end (the subscription stalled with no error).
pub fn unwaitable(xid: pg_sys::TransactionId) -> bool {
    // SAFETY: plain lookups of this backend's state, the subtransaction log (the
    // xid is in progress, so newer than TransactionXmin) and the proc array.
    unsafe {
        pg_sys::IsLogicalWorker()
            && pg_sys::TransactionIdIsInProgress(xid)
            && pg_sys::BackendXidGetPid(pg_sys::SubTransGetTopmostTransaction(xid)) == 0
    }
}

/// Whether a deadlock's DETAIL (one "Process … waits for … on …; blocked by
/// process …." line per process) is a cycle of two processes, each waiting for
/// the other's transaction: the two writers [`wait_for`] names.
fn two_writers(detail: Option<&str>) -> bool {
    let Some(d) = detail else { return false };
    let waits: Vec<&str> = d.lines().filter(|l| l.starts_with("Process ")).collect();
    waits.len() == 2 && waits.iter().all(|l| l.contains(" on transaction "))
}
