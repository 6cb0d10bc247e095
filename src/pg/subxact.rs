//! Running a piece of work in an internal subtransaction that catches some
//! errors, as a PL/pgSQL `EXCEPTION` block does: the work's changes are rolled
//! back and the transaction goes on.

use pgrx::pg_sys;
use pgrx::pg_sys::panic::CaughtError;
use pgrx::PgSqlErrorCode;

/// Runs `f` in a subtransaction: `Ok` with its result when it succeeds (the
/// subtransaction is released into the transaction), `Err` with the error's
/// message when it raised one of `codes` (the subtransaction is rolled back).
/// Any other error goes on, and the transaction's abort unwinds the
/// subtransaction.
pub fn catching<R>(codes: &[PgSqlErrorCode], f: impl FnOnce() -> R) -> Result<R, String> {
    // SAFETY: the subtransaction is begun, and released or rolled back, around
    // `f`, with the caller's memory context and resource owner put back after
    // either, as PL/pgSQL's exception blocks do.
    unsafe {
        let context = pg_sys::CurrentMemoryContext;
        let owner = pg_sys::CurrentResourceOwner;
        pg_sys::BeginInternalSubTransaction(std::ptr::null());
        pg_sys::MemoryContextSwitchTo(context);
        let mut run = pgrx::PgTryBuilder::new(std::panic::AssertUnwindSafe(|| Ok(f())));
        for &code in codes {
            run = run.catch_when(code, |e| match e {
                CaughtError::PostgresError(r) | CaughtError::ErrorReport(r) => {
                    Err(r.message().to_owned())
                }
                CaughtError::RustPanic { ereport, .. } => Err(ereport.message().to_owned()),
            });
        }
        let r = run.execute();
        pg_sys::MemoryContextSwitchTo(context);
        if r.is_ok() {
            pg_sys::ReleaseCurrentSubTransaction();
        } else {
            pg_sys::RollbackAndReleaseCurrentSubTransaction();
        }
        pg_sys::MemoryContextSwitchTo(context);
        pg_sys::CurrentResourceOwner = owner;
        r
    }
}
