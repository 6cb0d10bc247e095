//! The PostgreSQL glue. Each submodule converts SQL arguments, calls the pure
//! modules, and turns `DedupError` into an `ereport!` with its SQLSTATE.

pub mod analyst;
pub mod cache;
pub mod catalog;
pub mod collections;
pub mod config_cache;
pub mod document;
pub mod guc_scope;
pub mod ingest;
pub mod keylocks;
pub mod models;
pub mod privilege;
pub mod recompute;
pub mod scan;
pub mod signature;
pub mod statement;
pub mod stats;
pub mod stats_agg;
pub mod stats_read;
pub mod tests;
pub mod trigger;
pub mod types;
pub mod weigher;
pub mod worker;
pub mod xact;

use crate::error::DedupError;
use pgrx::pg_sys::errcodes::PgSqlErrorCode;
use pgrx::pg_sys::panic::ErrorReport;
use pgrx::PgLogLevel;

fn errcode(e: &DedupError) -> PgSqlErrorCode {
    match e {
        DedupError::InvalidParameter { .. } => PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
        DedupError::InvalidInput(_) => PgSqlErrorCode::ERRCODE_INVALID_TEXT_REPRESENTATION,
        DedupError::TooLarge { .. } => PgSqlErrorCode::ERRCODE_PROGRAM_LIMIT_EXCEEDED,
        DedupError::UndefinedObject { .. } => PgSqlErrorCode::ERRCODE_UNDEFINED_OBJECT,
        DedupError::InvalidBinary(_) => PgSqlErrorCode::ERRCODE_INVALID_BINARY_REPRESENTATION,
        DedupError::Corrupted(_) => PgSqlErrorCode::ERRCODE_DATA_CORRUPTED,
    }
}

/// Raises `e` as an SQL error with its own SQLSTATE and hint. Does not return.
pub fn raise(e: DedupError) -> ! {
    raise_with(errcode(&e), e.to_string(), e.hint().map(str::to_owned))
}

/// Raises an SQL error with an explicit SQLSTATE. Does not return.
pub fn raise_with(code: PgSqlErrorCode, msg: String, hint: Option<String>) -> ! {
    let mut r = ErrorReport::new(code, msg, "pg_dedup");
    if let Some(h) = hint {
        r = r.set_hint(h);
    }
    r.report(PgLogLevel::ERROR);
    unreachable!("ereport(ERROR) returned")
}

/// Unwraps a pure-module result or raises its error.
pub trait OrRaise<T> {
    fn or_raise(self) -> T;
    /// For decoding a value that was checked when it came in (read from a table,
    /// or an argument of our type): a decoder's [`DedupError::InvalidBinary`]
    /// (22P03, the answer to bad input) is raised as [`DedupError::Corrupted`]
    /// (XX001), since such bytes were valid once.
    fn or_raise_stored(self) -> T;
}

impl<T> OrRaise<T> for Result<T, DedupError> {
    fn or_raise(self) -> T {
        match self {
            Ok(v) => v,
            Err(e) => raise(e),
        }
    }
    fn or_raise_stored(self) -> T {
        match self {
            Ok(v) => v,
            Err(DedupError::InvalidBinary(m)) => raise(DedupError::Corrupted(m)),
            Err(e) => raise(e),
        }
    }
}

/// The backend's [`crate::interrupt::Check`]: PostgreSQL's `CHECK_FOR_INTERRUPTS`.
/// A pending query cancel, `statement_timeout`, `lock_timeout` or termination is
/// raised from inside it as the usual SQL error (57014, 57P01, …), unwinding
/// through whatever pure code called it; it never returns `Err`. Only the
/// backend's own thread may call it (never a worker thread of `svm::train`).
pub fn interrupts() -> impl FnMut() -> crate::error::Result<()> {
    || {
        pgrx::check_for_interrupts!();
        Ok(())
    }
}

/// An SPI failure that no user input should cause. Raised as XX000.
pub fn spi_err(e: pgrx::spi::Error) -> ! {
    raise_with(
        PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
        format!("SPI error: {e}"),
        None,
    )
}

/// A user-supplied query whose columns do not have the documented types. Raised
/// as 42804 datatype_mismatch; `expected` names the columns it must return.
pub fn query_err(expected: &str, _e: pgrx::spi::Error) -> ! {
    raise_with(
        PgSqlErrorCode::ERRCODE_DATATYPE_MISMATCH,
        format!("pairs query returned a column of the wrong type: it must return {expected}"),
        None,
    )
}
