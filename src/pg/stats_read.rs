//! Reads of a collection's stored statistics as this transaction sees them: N,
//! the total length, the last recompute and the changes since (`collection_state`, once per
//! statement), and the df/cf of given terms (`term_stats`), each with the
//! transaction's own unwritten changes added (`pg::stats`).

use crate::pg::cache::{self, StmtMap};
use crate::pg::lookup;
use crate::pg::stats::{own_counts, with_own_terms};
use crate::pg::stored;
use crate::weights::{CollectionStats, TermStat};
use pgrx::prelude::*;
use std::cell::RefCell;

/// The collection row as stored: N and the total length, the last recompute
/// (microseconds from the Unix epoch) and the documents added or removed since
/// (`changes_since_recompute`).
#[derive(Clone, Copy, Default, Debug, PartialEq)]
pub struct StoredState {
    pub stats: CollectionStats,
    pub last_recompute: Option<i64>,
    pub changes: i64,
}

thread_local! {
    static STATES: RefCell<StmtMap<i32, StoredState>> = RefCell::new(StmtMap::default());
}

/// A collection's statistics as this transaction sees them, and what a backend
/// cache of them is measured against.
#[derive(Clone, Copy, Debug)]
pub struct State {
    /// N and the total length, this transaction's own unwritten changes added.
    pub stats: CollectionStats,
    pub last_recompute: Option<i64>,
    /// N as stored (without this transaction's own changes).
    pub stored_n: i64,
    /// The documents added or removed since the last recompute, as stored: the
    /// clock cached statistics are read at. N alone would not do: an UPDATE of a
    /// text removes one document and adds another, moving its words' df and not N.
    pub stored_clock: i64,
    /// The same with this transaction's own additions and removals.
    pub clock: i64,
}

/// A collection's [`State`], its row read once per statement (and again after
/// any write).
pub(crate) fn collection_state(id: i32) -> State {
    let st = match cache::with(&STATES, |m| m.get(&id).copied()) {
        Some(s) => s,
        None => {
            let s = collection_state_uncached(id);
            cache::with(&STATES, |m| m.insert(id, s));
            crate::pg::stats::note_stored_n(id, s.stats.n_docs);
            s
        }
    };
    let (n, len, changes) = own_counts(id);
    State {
        stats: CollectionStats {
            n_docs: (st.stats.n_docs + n).max(0),
            total_len: (st.stats.total_len + len).max(0),
        },
        last_recompute: st.last_recompute,
        stored_n: st.stats.n_docs,
        stored_clock: st.changes,
        clock: st.changes.saturating_add(changes),
    }
}

/// `dedup.collection_stats` and the attribute numbers of `n_docs`, `total_len`,
/// `last_recompute` and `changes_since_recompute`. (Its primary key is taken from
/// the relation at each read: a `REINDEX … CONCURRENTLY` replaces the index, and
/// no configuration epoch follows that.)
#[derive(Clone, Copy)]
struct StatsRelation {
    rel: pg_sys::Oid,
    atts: [i32; 4],
}

thread_local! {
    /// [`StatsRelation`], with the configuration epoch it was looked up at.
    static STATS_RELATION: std::cell::Cell<Option<(u64, StatsRelation)>> =
        const { std::cell::Cell::new(None) };
}

fn stats_relation() -> Option<StatsRelation> {
    let epoch = crate::pg::config_cache::epoch();
    if let Some((e, r)) = STATS_RELATION.with(|c| c.get()) {
        if e == epoch {
            return Some(r);
        }
    }
    // On Citus the table is a reference table: this node's copy is a shard of it
    // (see `pg::citus`), or, without one here, the query reads it.
    if crate::pg::citus::present() {
        let r = crate::pg::citus::local_placement("dedup.collection_stats").and_then(|rel| {
            let atts = lookup::one_with_args::<Vec<i32>>(
                "SELECT array_agg(attnum::int4 ORDER BY array_position(ARRAY['n_docs', 'total_len', 'last_recompute', 'changes_since_recompute'], attname::text)) \
                 FROM pg_catalog.pg_attribute WHERE attrelid = $1 \
                   AND attname IN ('n_docs', 'total_len', 'last_recompute', 'changes_since_recompute') AND NOT attisdropped",
                &[rel.into()],
            )
            .ok()
            .flatten()?;
            Some(StatsRelation {
                rel,
                atts: [*atts.first()?, *atts.get(1)?, *atts.get(2)?, *atts.get(3)?],
            })
        });
        if let Some(r) = r {
            STATS_RELATION.with(|c| c.set(Some((epoch, r))));
        }
        if crate::pg::citus::is_distributed_name("dedup.collection_stats") {
            return r;
        }
    }
    let r = Spi::connect(|c| {
        let t = cache::select(
            c,
            "SELECT 'dedup.collection_stats'::regclass::oid, \
                    (SELECT array_agg(attnum::int4 ORDER BY array_position(ARRAY['n_docs', 'total_len', 'last_recompute', 'changes_since_recompute'], attname::text)) \
                     FROM pg_catalog.pg_attribute WHERE attrelid = 'dedup.collection_stats'::regclass \
                       AND attname IN ('n_docs', 'total_len', 'last_recompute', 'changes_since_recompute') AND NOT attisdropped)",
            Some(1),
            &[],
        );
        let r = t.first();
        let atts = r.get::<Vec<i32>>(2).ok().flatten()?;
        Some(StatsRelation {
            rel: r.get::<pg_sys::Oid>(1).ok().flatten()?,
            atts: [*atts.first()?, *atts.get(1)?, *atts.get(2)?, *atts.get(3)?],
        })
    })?;
    STATS_RELATION.with(|c| c.set(Some((epoch, r))));
    Some(r)
}

/// Which `dedup.collection_stats` this backend reads: its OID, new after `DROP
/// EXTENSION` and `CREATE EXTENSION` (whose collections reuse the old ids), 0 where
/// it cannot be looked up. Backend caches kept by collection id are valid for one
/// generation only (`pg::weigher`).
pub(crate) fn generation() -> u32 {
    stats_relation().map_or(0, |r| r.rel.to_u32())
}

/// Microseconds from the Unix epoch to PostgreSQL's (2000-01-01).
const POSTGRES_EPOCH_UNIX_US: i64 = 946_684_800_000_000;

/// The collection row read through its primary key, without starting an executor
/// (as a query it was about a thirtieth of a trigger insert's time). It sees what
/// the query below would (`scan::push_query_snapshot`), so this transaction's own
/// changes show.
fn collection_state_uncached(id: i32) -> StoredState {
    // SAFETY: reads the backend's snapshot stack.
    let have_snapshot = unsafe { pg_sys::ActiveSnapshotSet() };
    if let Some(sr) = stats_relation().filter(|_| have_snapshot) {
        // SAFETY: the relation's OID is current for this configuration epoch, its
        // primary key the relation's own at this moment; the snapshot is pushed and
        // popped, the scan begun and ended, and the relation opened and closed, in
        // pairs; the attributes are int8, int8 and timestamptz (by value).
        unsafe {
            let pushed = crate::pg::scan::push_query_snapshot(false);
            let lock = pg_sys::AccessShareLock as pg_sys::LOCKMODE;
            let rel = pg_sys::table_open(sr.rel, lock);
            let pkey = pg_sys::RelationGetPrimaryKeyIndex(rel);
            if pkey == pg_sys::InvalidOid {
                pg_sys::table_close(rel, lock);
                crate::pg::scan::pop_query_snapshot(pushed);
                return collection_state_query(id);
            }
            let mut key: pg_sys::ScanKeyData = std::mem::zeroed();
            pg_sys::ScanKeyInit(
                &mut key,
                1,
                pg_sys::BTEqualStrategyNumber as pg_sys::StrategyNumber,
                pg_sys::Oid::from(pg_sys::F_INT4EQ),
                pg_sys::Datum::from(id),
            );
            let scan = pg_sys::systable_beginscan(
                rel,
                pkey,
                true,
                pg_sys::GetActiveSnapshot(),
                1,
                &mut key,
            );
            let tup = pg_sys::systable_getnext(scan);
            let out = if tup.is_null() {
                StoredState::default()
            } else {
                let desc = (*rel).rd_att;
                let get = |att: i32| {
                    let mut isnull = false;
                    let d = pg_sys::heap_getattr(tup, att, desc, &mut isnull);
                    (!isnull).then(|| d.value() as i64)
                };
                StoredState {
                    stats: CollectionStats {
                        n_docs: get(sr.atts[0]).unwrap_or(0),
                        total_len: get(sr.atts[1]).unwrap_or(0),
                    },
                    last_recompute: get(sr.atts[2])
                        .map(|t| t.saturating_add(POSTGRES_EPOCH_UNIX_US)),
                    changes: get(sr.atts[3]).unwrap_or(0),
                }
            };
            pg_sys::systable_endscan(scan);
            pg_sys::table_close(rel, lock);
            crate::pg::scan::pop_query_snapshot(pushed);
            return out;
        }
    }
    collection_state_query(id)
}

/// Both reads of the collection row, direct and by query; for tests.
#[cfg(any(test, feature = "pg_test"))]
pub fn collection_state_both(id: i32) -> (StoredState, StoredState) {
    (collection_state_uncached(id), collection_state_query(id))
}

fn collection_state_query(id: i32) -> StoredState {
    Spi::connect(|c| {
        let t = cache::select(
            c,
            "SELECT n_docs, total_len, (extract(epoch FROM last_recompute) * 1e6)::int8, \
                    changes_since_recompute \
             FROM dedup.collection_stats WHERE collection_id = $1",
            Some(1),
            &[id.into()],
        );
        if t.is_empty() {
            return StoredState::default();
        }
        let r = t.first();
        StoredState {
            stats: CollectionStats {
                n_docs: stored(r.get::<i64>(1), "dedup.collection_stats.n_docs"),
                total_len: stored(r.get::<i64>(2), "dedup.collection_stats.total_len"),
            },
            last_recompute: r.get::<i64>(3).ok().flatten(),
            changes: stored(
                r.get::<i64>(4),
                "dedup.collection_stats.changes_since_recompute",
            ),
        }
    })
}

/// How many terms one lookup statement of [`stored_term_stats`] reads at most.
const LOOKUP_CHUNK: usize = 10_000;

/// df/cf of each of `terms` (sorted, unique) as stored, aligned; unseen terms get
/// zeros. This transaction's own unwritten changes are not added (see
/// [`own_term_changes`]).
pub fn stored_term_stats(id: i32, terms: &[String]) -> Vec<TermStat> {
    let mut out = vec![TermStat::default(); terms.len()];
    // The empty collection (`collections::empty`: the built-in model given no
    // collection) has no rows to look up.
    if terms.is_empty() || id == crate::pg::collections::EMPTY_ID {
        return out;
    }
    // One index probe per term, whatever the statistics say: a plain join let the
    // planner, with term_stats not yet analyzed after a bulk load, pick a hash join
    // over every term of the collection (27 ms a document instead of 2). OFFSET 0
    // keeps the LATERAL subquery from being pulled up into such a join. The plan is
    // kept (`cache::select`). In slices of LOOKUP_CHUNK terms, each in an SPI
    // connection of its own (whose rows go when it closes): the arguments and the
    // rows of one statement take memory in proportion (~100 MB for one document of
    // a million distinct words).
    // Index probes whatever the caller's session set: with its index and bitmap
    // scans off each probe was a scan of every collection's terms (an audit:
    // `evaluate` of 783 pairs 68 ms → 72 s).
    crate::pg::guc_scope::key_lookups(|| {
        for (chunk, slice) in terms.chunks(LOOKUP_CHUNK).enumerate() {
            let base = chunk * LOOKUP_CHUNK;
            Spi::connect(|c| {
                let t = cache::select(
                c,
                "SELECT u.i, s.df, s.cf FROM unnest($2::text[]) WITH ORDINALITY AS u(term, i), \
                 LATERAL (SELECT t.df, t.cf FROM dedup.term_stats t \
                          WHERE t.collection_id = $1 AND t.term = u.term OFFSET 0) s",
                None,
                &[
                    id.into(),
                    slice
                        .iter()
                        .map(String::as_str)
                        .collect::<Vec<&str>>()
                        .into(),
                ],
            );
                for r in t {
                    let i = stored(r.get::<i64>(1), "a term lookup's position") as usize;
                    if (1..=slice.len()).contains(&i) {
                        out[base + i - 1] = TermStat {
                            df: stored(r.get::<i64>(2), "dedup.term_stats.df"),
                            cf: stored(r.get::<i64>(3), "dedup.term_stats.cf"),
                        };
                    }
                }
            });
        }
    });
    out
}

/// Adds this transaction's own unwritten changes to statistics of `terms` read
/// from the tables (see [`stored_term_stats`]).
pub fn own_term_changes<'t>(
    id: i32,
    terms: impl IntoIterator<Item = &'t str>,
    stats: &mut [TermStat],
) {
    with_own_terms(id, terms, stats);
}
