//! Whether an `ALTER TABLE` retypes `duplicate_of`, for the event trigger
//! `dedup._key_type_changed` (sql/ingest.sql): `duplicate_of` follows its table's
//! key by itself, and a type the owner gives it otherwise is refused (2BP01), as a
//! drop or rename of pg_dedup's columns is. The trigger made it follow the key
//! again after the fact, with the values the owner's `USING` had lost.

use crate::pg::ddl_command;
use crate::pg::fmgr::v1_function;
use pgrx::prelude::*;

/// Whether `cmd` (a collected command, or null) is an `ALTER TABLE` that changes
/// the type of a column named `duplicate_of`.
///
/// # Safety
/// `cmd` must be a `CollectedCommand` the event trigger machinery handed out, or
/// null.
unsafe fn retypes_duplicate_of(cmd: *const pg_sys::CollectedCommand) -> bool {
    // SAFETY: by the caller's contract; a subcommand's column name is a
    // NUL-terminated string or null.
    unsafe {
        ddl_command::alter_table_cmds(cmd).into_iter().any(|at| {
            (*at).subtype == pg_sys::AlterTableType::AT_AlterColumnType
                && !(*at).name.is_null()
                && std::ffi::CStr::from_ptr((*at).name).to_bytes() == b"duplicate_of"
        })
    }
}

// `dedup._retypes_duplicate_of(pg_ddl_command)`: STRICT, so the argument is never
// NULL.
v1_function!(
    dedup_retypes_duplicate_of,
    pg_finfo_dedup_retypes_duplicate_of,
    |fcinfo| unsafe { pg_sys::Datum::from(retypes_duplicate_of(ddl_command::arg(fcinfo, 0))) }
);
