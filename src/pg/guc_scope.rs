//! Running a piece of code with some settings changed, as a function's `SET`
//! clause does: in a new GUC nest level, popped afterwards, or by the
//! (sub)transaction abort if the code raises.

use pgrx::pg_sys;
use std::ffi::{CStr, CString};

/// Runs `f` with each `(name, value)` setting in force.
pub fn with_settings<R>(settings: &[(&CStr, &CStr)], f: impl FnOnce() -> R) -> R {
    // SAFETY: the nest level is opened and closed around `f` as fmgr does for a
    // function with SET; the strings are NUL-terminated and outlive the calls.
    let level = unsafe {
        let level = pg_sys::NewGUCNestLevel();
        for (name, value) in settings {
            pg_sys::set_config_option(
                name.as_ptr(),
                value.as_ptr(),
                pg_sys::GucContext::PGC_USERSET,
                pg_sys::GucSource::PGC_S_SESSION,
                pg_sys::GucAction::GUC_ACTION_SAVE,
                true,
                0,
                false,
            );
        }
        level
    };
    let r = f();
    // SAFETY: closes the level opened above.
    unsafe { pg_sys::AtEOXact_GUC(true, level) };
    r
}

/// Runs `f` with `search_path = pg_catalog, pg_temp`, as the current role: for
/// queries that must run with the caller's rights (its privileges and row-level
/// security apply) but none of its functions or operators (an `=` of its own for
/// two `regclass` values would beat `pg_catalog`'s `oid` one).
pub fn pinned_path<R>(f: impl FnOnce() -> R) -> R {
    with_settings(&[(c"search_path", c"pg_catalog, pg_temp")], f)
}

/// Runs `f` with `extra_float_digits` at least 1, so that a float key prints
/// exactly: keys travel as text (into `duplicate_of`, out of the analyst
/// functions, between the queries that find and fetch pairs), and a session's
/// setting below 1 (some drivers set 0) would round one into a key no row has, or
/// two keys into one.
pub fn exact_floats<R>(f: impl FnOnce() -> R) -> R {
    // SAFETY: reads a GUC variable of this backend.
    if unsafe { pg_sys::extra_float_digits } < 1 {
        with_settings(&[(c"extra_float_digits", c"1")], f)
    } else {
        f()
    }
}

/// Runs `f` with the planner free to look rows up by key: index and bitmap scans
/// and nested loops on, JIT off. For the queries that fetch a batch of rows by
/// their keys (the analyst functions' documents): a caller's `enable_indexscan`
/// off made each batch a scan of the whole table, and since a backend keeps its
/// plans, the first call's settings decided every later call's speed.
pub fn key_lookups<R>(f: impl FnOnce() -> R) -> R {
    // SAFETY: reads GUC variables of this backend.
    let free =
        unsafe { pg_sys::enable_indexscan && pg_sys::enable_bitmapscan && pg_sys::enable_nestloop };
    if free && !jit_may_compile() {
        return f();
    }
    with_settings(
        &[
            (c"enable_indexscan", c"on"),
            (c"enable_bitmapscan", c"on"),
            (c"enable_nestloop", c"on"),
            (c"jit", c"off"),
        ],
        f,
    )
}

/// Runs `f` with JIT compilation off, when the session has it on: pg_dedup's
/// own queries are small and run many times, and a session's low JIT thresholds
/// (or a disabled plan type, which costs a plan past them) compiled each of them
/// on every run (an audit: a 1,000-row insert 0.5 → 2.9 s, `pairs` 0.4 → 75 s).
///
/// Under PostgreSQL's default JIT thresholds with every plan type enabled its
/// small queries cost too little to be compiled, and `f` runs as it is (a
/// settings level costs about 1 % of an insert).
pub fn without_jit<R>(f: impl FnOnce() -> R) -> R {
    if jit_may_compile() {
        with_settings(&[(c"jit", c"off")], f)
    } else {
        f()
    }
}

/// Whether the session's settings may compile a small query: JIT on, and its
/// threshold below PostgreSQL's default or a plan type disabled (which adds its
/// `disable_cost`, 1e10, to any plan that still uses it).
fn jit_may_compile() -> bool {
    // SAFETY: reads GUC variables of this backend.
    unsafe {
        pg_sys::jit_enabled
            && pg_sys::jit_above_cost >= 0.0
            && (pg_sys::jit_above_cost < 100_000.0
                || ![
                    pg_sys::enable_seqscan,
                    pg_sys::enable_indexscan,
                    pg_sys::enable_indexonlyscan,
                    pg_sys::enable_bitmapscan,
                    pg_sys::enable_tidscan,
                    pg_sys::enable_sort,
                    pg_sys::enable_incremental_sort,
                    pg_sys::enable_hashagg,
                    pg_sys::enable_nestloop,
                    pg_sys::enable_material,
                    pg_sys::enable_memoize,
                    pg_sys::enable_mergejoin,
                    pg_sys::enable_hashjoin,
                    pg_sys::enable_gathermerge,
                ]
                .iter()
                .all(|&on| on))
    }
}

/// A collection's `min_shared_keys` and `similarity_threshold` as the settings the
/// `%` operator reads: a lookup puts them in force so that it matches as the
/// collection says, whatever the session set.
pub struct MatchSettings {
    min_shared_keys: CString,
    similarity_threshold: CString,
}

impl MatchSettings {
    pub fn of(l: &crate::limits::Limits) -> MatchSettings {
        MatchSettings {
            min_shared_keys: CString::new(l.min_shared_keys.to_string()).unwrap_or_default(),
            similarity_threshold: CString::new(l.similarity_threshold.to_string())
                .unwrap_or_default(),
        }
    }

    /// The two settings, for [`with_settings`].
    pub fn pairs(&self) -> [(&CStr, &CStr); 2] {
        [
            (c"dedup.min_shared_keys", self.min_shared_keys.as_c_str()),
            (
                c"dedup.similarity_threshold",
                self.similarity_threshold.as_c_str(),
            ),
        ]
    }
}
