//! When a backend may reuse collection statistics it read earlier: the pure
//! decisions behind the term and document caches of `pg::weigher`.
//!
//! A cached df/cf (or a document weighed with them) is reused while at most a
//! tolerance of documents have been added to or removed from the collection since
//! it was read (its stored `changes_since_recompute`: N alone would miss an UPDATE,
//! which removes one document and adds another, moving df and not N), and there
//! was no recompute. Each addition or removal moves a df by at most 1, so a cached
//! df lags by at most the tolerance. Entries expire one by one, so a long ingest
//! refreshes a steady trickle of terms instead of the whole cache at once. Weights
//! move far less than N: at 1 % a term's IDF changes by about 0.01 nats.

/// The share of N a cached statistic may lag by (in documents added or removed).
pub const DRIFT: f64 = 0.01;

/// Collections with fewer documents are always re-read, so that hand-checked
/// examples stay exact.
pub const SMALL_COLLECTION: i64 = 100;

/// A collection with at most this many distinct terms is read whole, in one scan,
/// the first time a backend weighs a document with a term it has not cached (and
/// again once that read is older than the tolerance). Candidates then cost no
/// statistics query: a term absent from the read had df 0. About 60 bytes a term,
/// so at most ~18 MB per collection a backend weighs with (kept while the
/// backend's cached terms of all collections stay within
/// [`BACKEND_CACHED_TERMS`]); larger collections are read term by term.
pub const PRELOAD_MAX_TERMS: i64 = 300_000;

/// The terms a backend keeps cached over all the collections it weighs with
/// (about 90 bytes a term in all: ~90 MB). When a collection's terms are put back
/// and the total is over it, the least recently used other collections' go
/// first (see [`evict`]); the collection in use keeps its own, however many.
pub const BACKEND_CACHED_TERMS: usize = 600_000;

/// Which cached collections to drop, given each one's `(id, terms, last use)`:
/// the least recently used first, never `keep`, until the total is within
/// `budget`.
pub fn evict(entries: &[(i32, usize, u64)], keep: i32, budget: usize) -> Vec<i32> {
    let mut total: usize = entries.iter().map(|e| e.1).sum();
    if total <= budget {
        return Vec::new();
    }
    let mut others: Vec<&(i32, usize, u64)> = entries.iter().filter(|e| e.0 != keep).collect();
    others.sort_by_key(|e| (e.2, e.0));
    let mut out = Vec::new();
    for e in others {
        if total <= budget {
            break;
        }
        total -= e.1;
        out.push(e.0);
    }
    out
}

/// Below this many documents a collection's statistics are written at every
/// commit (a batch of 1) when `dedup.stats_batch` is automatic.
pub const BATCH_FROM_DOCS: i64 = 2_000;

/// The automatic batch: 1 in 200 documents of the collection.
pub const BATCH_SHARE: i64 = 200;

/// The largest automatic batch.
pub const MAX_AUTO_BATCH: i64 = 1_000;

/// How many committed transactions' statistics changes are collected before they
/// are folded, for `dedup.stats_batch` = `setting` (0: automatic) and a collection
/// of `n_docs` stored documents. Automatic: 1 (every commit writes the term and
/// collection rows) below [`BATCH_FROM_DOCS`], then `n_docs / BATCH_SHARE` up to
/// [`MAX_AUTO_BATCH`], so that the lag of a batch waiting for its fold (up to
/// twice the batch) stays within the [`DRIFT`] cached statistics are allowed.
pub fn batch(setting: i64, n_docs: i64) -> i64 {
    if setting >= 1 {
        return setting;
    }
    if n_docs < BATCH_FROM_DOCS {
        return 1;
    }
    (n_docs / BATCH_SHARE).clamp(1, MAX_AUTO_BATCH)
}

/// How many times per batch, on average, a committing transaction counts the
/// pending rows under the automatic batch.
pub const FOLD_CHECKS_PER_BATCH: f64 = 8.0;

/// The share of batched commits that count the pending rows (and start a fold
/// once a batch is waiting): every one under a `dedup.stats_batch` setting, so
/// that a set batch folds exactly when it fills; under the automatic batch (at
/// least 10) a random [`FOLD_CHECKS_PER_BATCH`] per batch of documents, in
/// proportion to the `changes` (documents) the commit made, so that counting
/// costs a commit almost nothing and a batch waits at most about an eighth longer
/// for its fold, however many connections share the writing and however many
/// rows each commit writes (a share per commit let 50-row commits leave four
/// batches pending).
pub fn fold_check_share(setting: i64, batch: i64, changes: i64) -> f64 {
    if setting >= 1 || batch <= 1 {
        return 1.0;
    }
    (FOLD_CHECKS_PER_BATCH * changes.max(1) as f64 / batch as f64).min(1.0)
}

/// How far N may move (in documents) before a cached statistic is read again, for
/// a collection of `n_docs` documents and a batch of `stats_batch` (see [`batch`]).
///
/// With a batch B > 1 the stored df/cf already lag N by up to 2B documents (a
/// batch fills while the previous one waits for its background fold; at 2B an
/// insert folds inline, under READ COMMITTED; REPEATABLE READ and SERIALIZABLE
/// writers rely on the worker alone), so entries 2B documents old are no staler
/// than the table can be. Each re-validation of a whole read costs ~0.1 s at 50k terms; at B it
/// was a seventh of a trigger insert's time.
pub fn tolerance(n_docs: i64, stats_batch: i64) -> i64 {
    if n_docs < SMALL_COLLECTION {
        return 0;
    }
    let lag = if stats_batch > 1 {
        2 * stats_batch - 1
    } else {
        0
    };
    ((DRIFT * n_docs as f64) as i64).max(lag)
}

/// Whether something read at N = `read_at` is still current at N = `n_now`.
pub fn current(n_now: i64, read_at: i64, tolerance: i64) -> bool {
    (n_now - read_at).abs() <= tolerance
}

/// Whether to try reading every term of the collection: never for a small
/// collection (re-read on every use anyway) or with reading whole turned off
/// (`limit` 0), and after a refused read (more terms than the limit) only once N
/// has doubled.
pub fn may_read_whole(tolerance: i64, limit: i64, refused_at: Option<i64>, n_now: i64) -> bool {
    tolerance > 0 && limit > 0 && refused_at.is_none_or(|at| n_now >= at.saturating_mul(2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerance_is_a_share_of_n_or_the_batch_lag() {
        assert_eq!(tolerance(0, 1), 0);
        assert_eq!(
            tolerance(99, 1000),
            0,
            "small collections are always re-read"
        );
        assert_eq!(tolerance(100, 1), 1);
        assert_eq!(tolerance(50_000, 1), 500);
        assert_eq!(tolerance(50_000, 1000), 1999, "2B - 1 with a batch");
        assert_eq!(tolerance(1_000_000, 1000), 10_000);
    }

    #[test]
    fn the_automatic_batch_grows_with_the_collection() {
        assert_eq!(batch(0, 0), 1);
        assert_eq!(batch(0, 1_999), 1, "small collections write at once");
        assert_eq!(batch(0, 2_000), 10);
        assert_eq!(batch(0, 100_000), 500);
        assert_eq!(batch(0, 10_000_000), 1_000);
        assert_eq!(batch(1, 10_000_000), 1, "a setting wins");
        assert_eq!(batch(16, 0), 16);
        for n in [2_000, 50_000, 199_999, 1_000_000] {
            let b = batch(0, n);
            assert!(
                2 * b - 1 <= tolerance(n, 1),
                "a batch's lag stays within the drift at {n}"
            );
        }
    }

    #[test]
    fn a_set_batch_counts_at_every_commit_the_automatic_one_now_and_then() {
        assert_eq!(fold_check_share(3, 3, 1), 1.0);
        assert_eq!(fold_check_share(1000, 1000, 1), 1.0);
        assert_eq!(fold_check_share(0, 1, 1), 1.0);
        assert_eq!(fold_check_share(0, 10, 1), 0.8);
        assert_eq!(fold_check_share(0, 1000, 1), 0.008);
        // In proportion to the documents a commit changed: 50 at a time count
        // 50 times as often, at least every commit past an eighth of a batch.
        assert_eq!(fold_check_share(0, 1000, 50), 0.4);
        assert_eq!(fold_check_share(0, 1000, 125), 1.0);
        assert_eq!(fold_check_share(0, 1000, 0), 0.008);
    }

    #[test]
    fn currency_is_symmetric_and_inclusive() {
        assert!(current(1000, 990, 10) && current(990, 1000, 10));
        assert!(!current(1000, 989, 10));
        assert!(current(5, 5, 0) && !current(6, 5, 0));
    }

    #[test]
    fn eviction_drops_the_least_recently_used_others_until_within_budget() {
        let e = [(1, 400, 5), (2, 300, 1), (3, 500, 9), (4, 200, 3)];
        assert!(evict(&e, 3, 1400).is_empty(), "within budget");
        assert_eq!(evict(&e, 3, 1000), vec![2, 4], "oldest first, 1400 -> 900");
        assert_eq!(evict(&e, 2, 1000), vec![4, 1], "the one in use stays");
        assert_eq!(
            evict(&e, 3, 100),
            vec![2, 4, 1],
            "the one in use stays over budget"
        );
        assert!(evict(&[], 1, 0).is_empty());
    }

    #[test]
    fn whole_reads_wait_for_n_to_double_after_a_refusal() {
        assert!(may_read_whole(10, PRELOAD_MAX_TERMS, None, 1000));
        assert!(!may_read_whole(0, PRELOAD_MAX_TERMS, None, 1000));
        assert!(!may_read_whole(10, 0, None, 1000));
        assert!(!may_read_whole(10, 5, Some(1000), 1999));
        assert!(may_read_whole(10, 5, Some(1000), 2000));
    }
}
