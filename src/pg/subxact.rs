//! Running a piece of work in an internal subtransaction that catches some
//! errors, as a PL/pgSQL `EXCEPTION` block does: the work's changes are rolled
//! back and the transaction goes on.

use pgrx::pg_sys;
use pgrx::pg_sys::panic::CaughtError;
use pgrx::PgSqlErrorCode;

/// How the work in the subtransaction ended.
enum Ended<R> {
    Done(R),
    Caught(String),
    Other(Box<CaughtError>),
}

/// Runs `f` in a subtransaction: `Ok` with its result when it succeeds (the
/// subtransaction is released into the transaction), `Err` with the error's
/// message when it raised one of `codes` (the subtransaction is rolled back).
/// Any other error (a cancel, a panic) rolls the subtransaction back too and is
/// raised again, as PL/pgSQL's exception blocks do: left open, the transaction's
/// abort would only abort the subtransaction, and a commit that raised so would
/// leave the session in a transaction block it never began.
pub fn catching<R>(codes: &[PgSqlErrorCode], f: impl FnOnce() -> R) -> Result<R, String> {
    // SAFETY: the subtransaction is begun, and released or rolled back, around
    // `f`, with the caller's memory context and resource owner put back after
    // either, as PL/pgSQL's exception blocks do.
    unsafe {
        let context = pg_sys::CurrentMemoryContext;
        let owner = pg_sys::CurrentResourceOwner;
        pg_sys::BeginInternalSubTransaction(std::ptr::null());
        pg_sys::MemoryContextSwitchTo(context);
        let mut run = pgrx::PgTryBuilder::new(std::panic::AssertUnwindSafe(|| Ended::Done(f())));
        for &code in codes {
            run = run.catch_when(code, |e| match e {
                CaughtError::PostgresError(r) | CaughtError::ErrorReport(r) => {
                    Ended::Caught(r.message().to_owned())
                }
                other => Ended::Other(Box::new(other)),
            });
        }
        let ended = run.catch_others(|e| Ended::Other(Box::new(e))).execute();
        pg_sys::MemoryContextSwitchTo(context);
        if matches!(ended, Ended::Done(_)) {
            pg_sys::ReleaseCurrentSubTransaction();
        } else {
            pg_sys::RollbackAndReleaseCurrentSubTransaction();
        }
        pg_sys::MemoryContextSwitchTo(context);
        pg_sys::CurrentResourceOwner = owner;
        match ended {
            Ended::Done(r) => Ok(r),
            Ended::Caught(m) => Err(m),
            Ended::Other(e) => e.rethrow(),
        }
    }
}
