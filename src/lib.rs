//! pg_dedup: near-duplicate text detection inside PostgreSQL.
//!
//! The algorithms live in modules that never touch pgrx and are tested with plain
//! `#[test]`: [`text`], [`document`], [`doctext`]. The pgrx glue lives under [`pg`]
//! and only marshals data, reads settings and reports errors.

// Pure modules: no pgrx.
pub mod cache_policy;
pub mod chunks;
pub mod codec;
mod coldbench;
mod coverage;
pub mod decide;
pub mod doctext;
pub mod document;
pub mod edge_order;
pub mod error;
pub mod features;
#[doc(hidden)]
// The fuzz targets' property checks (they assert): built for tests and for fuzz/
// (feature `fuzz`), never into the extension.
#[cfg(any(test, feature = "fuzz"))]
pub mod fuzz_checks;
pub mod interrupt;
pub mod limits;
pub mod lru;
pub mod metrics;
pub mod numerals;
pub mod rowkey;
pub mod signature;
pub mod sorted;
pub mod svm;
pub mod text;
pub mod trigrams;
pub mod txdelta;
pub mod weights;
pub mod window;
pub mod workers;

// PostgreSQL glue.
pub mod gucs;
pub mod pg;

::pgrx::pg_module_magic!(name, version);

/// Rust-side allocations (decoded documents, term maps, weights) go through
/// mimalloc; PostgreSQL's own memory (palloc, and libc malloc elsewhere in the
/// backend) is untouched. A trigger insert decodes and drops a dozen stored
/// documents of a few hundred small allocations each; under glibc malloc their
/// allocation and release was about a tenth of the insert.
///
/// Built with `no_thp`: where the kernel's transparent huge pages are in `madvise`
/// mode (Debian's default), mimalloc asked for them, and every fresh or purged
/// 2 MiB region was zeroed whole on first touch. In a new connection that was
/// about 7 % of a trigger insert, and most of its p99 (10.8 ms against 4.3 ms).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

unsafe extern "C" {
    /// mimalloc's own (`mi_collect`, `mi_process_info`), always in the library
    /// the crate links.
    fn mi_collect(force: bool);
    fn mi_process_info(
        elapsed_msecs: *mut usize,
        user_msecs: *mut usize,
        system_msecs: *mut usize,
        current_rss: *mut usize,
        peak_rss: *mut usize,
        current_commit: *mut usize,
        peak_commit: *mut usize,
        page_faults: *mut usize,
    );
}

/// The memory mimalloc holds from the operating system (freed pages it has not
/// purged yet included).
fn mimalloc_commit() -> usize {
    let (mut e, mut u, mut s, mut rss, mut peak, mut commit, mut peak_commit, mut faults) =
        (0, 0, 0, 0, 0, 0, 0, 0);
    // SAFETY: mimalloc writes each of the eight counters it is given.
    unsafe {
        mi_process_info(
            &mut e,
            &mut u,
            &mut s,
            &mut rss,
            &mut peak,
            &mut commit,
            &mut peak_commit,
            &mut faults,
        )
    };
    commit
}

/// How much more than after the last return a transaction's end must find held
/// before [`release_after_large_work`] returns it.
const RELEASE_STEP: usize = 32 * 1024 * 1024;

thread_local! {
    static HELD_AFTER_RELEASE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// At a transaction's end: when mimalloc holds [`RELEASE_STEP`] more than after
/// the last return (a 10 MB text analysed, a large result built and dropped),
/// returns what is free to the operating system. A pooled backend kept 317 MB
/// idle after one `to_document` of 10 MB until its next call (an audit). What
/// stays (the term cache) becomes the new level, so a large cache alone does not
/// make every transaction pay for a collection.
pub fn release_after_large_work() {
    let held = mimalloc_commit();
    let base = HELD_AFTER_RELEASE.get();
    if held > base.saturating_add(RELEASE_STEP) {
        release_freed_memory();
        HELD_AFTER_RELEASE.set(mimalloc_commit());
    } else if held < base {
        HELD_AFTER_RELEASE.set(held);
    }
}

/// Returns the memory freed so far to the operating system at once, rather than
/// when mimalloc would next purge it (for a backend that just dropped a large
/// cache and may stay idle in a pool).
pub fn release_freed_memory() {
    // SAFETY: mimalloc's collection of this thread's freed pages; no arguments
    // beyond the flag, callable at any time on an initialised heap.
    unsafe { mi_collect(true) }
}

#[pgrx::pg_guard]
pub extern "C-unwind" fn _PG_init() {
    gucs::init();
    pg::xact::register();
}

/// Required by `cargo pgrx test`.
#[cfg(test)]
pub mod pg_test {
    pub fn setup(_options: Vec<&str>) {}

    #[must_use]
    pub fn postgresql_conf_options() -> Vec<&'static str> {
        vec![]
    }
}

pgrx::extension_sql_file!("../sql/bootstrap.sql", name = "bootstrap", bootstrap);
pgrx::extension_sql_file!(
    "../sql/collections.sql",
    name = "collections",
    requires = ["bootstrap"]
);
pgrx::extension_sql_file!(
    "../sql/aggregates.sql",
    name = "aggregates",
    requires = ["bootstrap", "collections", _recompute]
);
pgrx::extension_sql_file!(
    "../sql/models.sql",
    name = "models",
    requires = ["collections", _evaluate]
);
pgrx::extension_sql_file!(
    "../sql/signature.sql",
    name = "signature",
    requires = ["bootstrap", _candidates, shared_keys, similarity]
);
pgrx::extension_sql_file!(
    "../sql/ingest.sql",
    name = "ingest",
    requires = [
        "aggregates",
        "signature",
        "models",
        _forget,
        _count_partition,
        _recheck_partition,
        _candidate_counts,
        _leaves_searched,
        _may_read_collection,
        _validate_enable,
        _is_duplicate,
        _find_original,
        _pairs,
        _groups,
        _matrix_quality,
        staleness,
        create_collection,
        set_collection_options,
        collection_limits,
        drop_collection,
        to_document
    ]
);
pgrx::extension_sql_file!("../sql/comments.sql", name = "comments", finalize);
