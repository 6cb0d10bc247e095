//! Whether an `ALTER TABLE` retypes `duplicate_of`, for the event trigger
//! `dedup._key_type_changed` (sql/ingest.sql): `duplicate_of` follows its table's
//! key by itself, and a type the owner gives it otherwise is refused (2BP01), as a
//! drop or rename of pg_dedup's columns is. The trigger made it follow the key
//! again after the fact, with the values the owner's `USING` had lost.

use pgrx::prelude::*;

/// Whether `cmd` (a collected `ALTER TABLE`) changes the type of a column named
/// `duplicate_of`.
///
/// # Safety
/// `cmd` must be a `CollectedCommand` the event trigger machinery handed out, or
/// null.
unsafe fn retypes_duplicate_of(cmd: *const pg_sys::CollectedCommand) -> bool {
    // SAFETY: by the caller's contract; the node tags are checked before each cast,
    // and a subcommand's column name is a NUL-terminated string or null.
    unsafe {
        if cmd.is_null() || (*cmd).type_ != pg_sys::CollectedCommandType::SCT_AlterTable {
            return false;
        }
        let subcmds =
            pgrx::PgList::<pg_sys::CollectedATSubcmd>::from_pg((*cmd).d.alterTable.subcmds);
        let found = subcmds.iter_ptr().any(|sub| {
            let tree = (*sub).parsetree;
            if tree.is_null() || (*tree).type_ != pg_sys::NodeTag::T_AlterTableCmd {
                return false;
            }
            let at = tree.cast::<pg_sys::AlterTableCmd>();
            (*at).subtype == pg_sys::AlterTableType::AT_AlterColumnType
                && !(*at).name.is_null()
                && std::ffi::CStr::from_ptr((*at).name).to_bytes() == b"duplicate_of"
        });
        found
    }
}

#[no_mangle]
#[doc(hidden)]
pub extern "C" fn pg_finfo_dedup_retypes_duplicate_of() -> &'static pg_sys::Pg_finfo_record {
    const V1: pg_sys::Pg_finfo_record = pg_sys::Pg_finfo_record { api_version: 1 };
    &V1
}

/// `dedup._retypes_duplicate_of(pg_ddl_command)`: STRICT, so the argument is
/// never NULL.
#[no_mangle]
#[doc(hidden)]
#[pg_guard]
pub unsafe extern "C-unwind" fn dedup_retypes_duplicate_of(
    fcinfo: pg_sys::FunctionCallInfo,
) -> pg_sys::Datum {
    // SAFETY: a pg_ddl_command argument is a pointer to a CollectedCommand (see
    // pg_event_trigger_ddl_commands).
    unsafe {
        let cmd = pgrx::fcinfo::pg_getarg_datum(fcinfo, 0)
            .map(|d| d.cast_mut_ptr::<pg_sys::CollectedCommand>())
            .unwrap_or(std::ptr::null_mut());
        pg_sys::Datum::from(retypes_duplicate_of(cmd))
    }
}
