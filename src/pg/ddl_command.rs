//! Reading a collected DDL command (`pg_ddl_command`, a row of
//! `pg_event_trigger_ddl_commands()`), for the event triggers' helpers that ask
//! what an `ALTER TABLE` or `CREATE TABLE` does (`pg::attach`, `pg::retype`).

use pgrx::prelude::*;

/// Argument `i` of a function taking `pg_ddl_command`: a pointer to the
/// `CollectedCommand`, or null for a NULL argument.
///
/// # Safety
/// `fcinfo` is a valid call whose argument `i` is a `pg_ddl_command`.
pub unsafe fn arg(fcinfo: pg_sys::FunctionCallInfo, i: usize) -> *const pg_sys::CollectedCommand {
    // SAFETY: by the caller's contract; a pg_ddl_command datum is a pointer to a
    // CollectedCommand (see pg_event_trigger_ddl_commands).
    unsafe {
        pgrx::fcinfo::pg_getarg_datum(fcinfo, i)
            .map(|d| d.cast_mut_ptr::<pg_sys::CollectedCommand>().cast_const())
            .unwrap_or(std::ptr::null())
    }
}

/// The subcommands of a collected `ALTER TABLE` (none for any other command or a
/// null one), each an `AlterTableCmd` node.
///
/// # Safety
/// `cmd` is null or a `CollectedCommand` the event trigger machinery handed out,
/// alive while the pointers returned are used.
pub unsafe fn alter_table_cmds(
    cmd: *const pg_sys::CollectedCommand,
) -> Vec<*const pg_sys::AlterTableCmd> {
    // SAFETY: by the caller's contract; the node tag is checked before the cast.
    unsafe {
        if cmd.is_null() || (*cmd).type_ != pg_sys::CollectedCommandType::SCT_AlterTable {
            return Vec::new();
        }
        pgrx::PgList::<pg_sys::CollectedATSubcmd>::from_pg((*cmd).d.alterTable.subcmds)
            .iter_ptr()
            .map(|sub| (*sub).parsetree)
            .filter(|tree| !tree.is_null() && (**tree).type_ == pg_sys::NodeTag::T_AlterTableCmd)
            .map(|tree| tree.cast::<pg_sys::AlterTableCmd>().cast_const())
            .collect()
    }
}
