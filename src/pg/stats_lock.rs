//! The collection statistics lock: one heavyweight lock per collection that puts
//! the statistics writers and a recompute in one order.
//!
//! A committing writer changes the shared statistics rows in one order (the term
//! rows in term order, then the collection row; a fold deletes the pending rows
//! first), and a recompute rewrites them all. Without a common first lock a
//! recompute that had locked the collection row would wait on a folding writer's
//! term or pending rows while that writer waited on the collection row: 40P01 for
//! one of them (an audit saw 2 of 4 recomputes and 14 of 2,173 single-row inserts
//! fail so). So whoever writes a collection's statistics takes this lock first:
//! a committing writer just before it writes (its term rows with a batch of 1,
//! or its pending row), a fold before it folds, in share mode, which never waits
//! on another writer; a recompute in exclusive mode, first. The recompute waits
//! for the writers writing at that moment (milliseconds), writers that commit
//! meanwhile wait for it, and it waits on no writer after that (its signature
//! refresh skips rows a writer holds), so no cycle goes through it; nor does a
//! pending row committed meanwhile fall between its read of the tables and its
//! delete of the pending rows, lost as it was before. Writers hold it only from
//! their commit's write to its end: not while their transaction runs, which would
//! make a recompute wait for every open transaction (a prepared one for ever) and
//! close cycles with the signature-key locks and with TRUNCATE (an audit saw
//! both). A `PREPARE TRANSACTION` takes none. Partition DDL under an enabled
//! table (`CREATE TABLE … PARTITION OF`, `ATTACH` / `DETACH PARTITION`) and `DROP
//! TABLE` of a partition take it (share) before they lock any table
//! (`pg::attach`): they write statistics at commit while they hold a table a
//! recompute reads. Transaction-scoped, an advisory
//! lock tag in a namespace of its own (`objsubid` 3566 in `pg_locks`, `classid`
//! the collection id). On Citus a shard's trigger takes it on its worker and a
//! recompute on the coordinator, so there it orders nothing.

use pgrx::pg_sys;

/// The fourth field of the lock tag ("DEE"), next to the key locks' 0x0DED.
const NAMESPACE: u16 = 0x0DEE;

fn tag(coll: i32) -> pg_sys::LOCKTAG {
    // SAFETY: MyDatabaseId is set for the life of a backend connected to a database.
    let db = unsafe { pg_sys::MyDatabaseId }.to_u32();
    pg_sys::LOCKTAG {
        locktag_field1: db,
        locktag_field2: coll as u32,
        locktag_field3: 0,
        locktag_field4: NAMESPACE,
        locktag_type: pg_sys::LockTagType::LOCKTAG_ADVISORY as u8,
        locktag_lockmethodid: pg_sys::USER_LOCKMETHOD as u8,
    }
}

fn acquire(coll: i32, mode: u32) {
    let t = tag(coll);
    // SAFETY: a valid tag; LockAcquire reports a deadlock, a lock timeout or a
    // lack of shared memory with ereport, which pgrx's guard turns into an unwind.
    unsafe {
        pg_sys::LockAcquire(&t, mode as pg_sys::LOCKMODE, false, false);
    }
}

/// Before this transaction writes a collection's statistics (again: a lock it
/// holds is granted at once).
pub fn write(coll: i32) {
    acquire(coll, pg_sys::ShareLock);
}

/// Before a recompute rewrites a collection's statistics.
pub fn recompute(coll: i32) {
    acquire(coll, pg_sys::ExclusiveLock);
}
