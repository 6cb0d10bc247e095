//! Running a piece of code with some settings changed, as a function's `SET`
//! clause does: in a new GUC nest level, popped afterwards, or by the
//! (sub)transaction abort if the code raises.

use pgrx::pg_sys;
use std::ffi::CStr;

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
