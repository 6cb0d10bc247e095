//! The PostgreSQL glue. Each submodule converts SQL arguments, calls the pure
//! modules, and turns `DedupError` into an `ereport!` with its SQLSTATE.

pub mod analyst;
pub mod attach;
pub mod cache;
pub mod catalog;
pub mod citus;
pub mod collections;
pub mod config_cache;
pub mod ddl_command;
pub mod document;
pub mod filter_quality;
pub mod fmgr;
pub mod guc_scope;
pub mod ingest;
pub mod keylocks;
pub mod lookup;
pub mod models;
pub mod partitions;
pub mod privilege;
pub mod recompute;
pub mod registration;
pub mod retype;
pub mod scan;
pub mod signature;
pub mod snapshot_setup;
pub mod statement;
pub mod stats;
pub mod stats_agg;
pub mod stats_lock;
pub mod stats_read;
pub mod subxact;
pub mod tests;
pub mod times;
pub mod trigger;
pub mod trigger_entry;
pub mod types;
pub mod weigher;
pub mod worker;
pub mod xact;

use crate::error::DedupError;
use pgrx::pg_sys::errcodes::PgSqlErrorCode;
use pgrx::pg_sys::panic::ErrorReport;
use pgrx::PgLogLevel;

/// Raises `e` as an SQL error with its SQLSTATE ([`DedupError::sqlstate`]), detail
/// and hint. Does not return. The error's LOCATION is the caller's.
#[track_caller]
pub fn raise(e: DedupError) -> ! {
    let code = PgSqlErrorCode::from(crate::error::sqlstate_code(e.sqlstate()));
    let mut r = ErrorReport::new(code, e.to_string(), "pg_dedup");
    if let Some(d) = e.detail() {
        r = r.set_detail(d);
    }
    if let Some(h) = e.hint() {
        r = r.set_hint(h);
    }
    r.report(PgLogLevel::ERROR);
    unreachable!("ereport(ERROR) returned")
}

/// As [`raise`], for an error about one column of a row the trigger is storing:
/// the error also carries the relation's schema and table names and the column's
/// name (libpq's `PG_DIAG_SCHEMA_NAME`, `PG_DIAG_TABLE_NAME`,
/// `PG_DIAG_COLUMN_NAME`; the table's alone when `attno` is 0), as PostgreSQL's own errors about a table's rows do, so
/// that a driver or an ORM can tell which table and column refused the row.
///
/// pgrx's `ErrorReport` has no such fields, and raises at the function's
/// boundary, after this frame is gone: so an error context callback, which
/// PostgreSQL calls from `errfinish` of the next error, sets them on the error
/// when it is this one (its SQLSTATE) and disarms itself. Any `PG_CATCH`
/// restores the callback stack, so it never outlives the error.
#[track_caller]
pub fn raise_on_column(e: DedupError, rel: pgrx::pg_sys::Relation, attno: i32) -> ! {
    use pgrx::pg_sys;
    let code = crate::error::sqlstate_code(e.sqlstate());
    // SAFETY: allocated in the (sub)transaction's context, which the error's abort
    // frees after `errfinish` has called the callback (so a loop of refusals each
    // caught by a savepoint does not pile them up); `rel` stays open until then.
    unsafe {
        let mut cx = pgrx::PgMemoryContexts::For(pg_sys::CurTransactionContext);
        let arg = cx.palloc_struct::<ColumnFields>();
        arg.write(ColumnFields {
            rel,
            attno,
            code,
            armed: true,
        });
        let cb = cx.palloc_struct::<pg_sys::ErrorContextCallback>();
        cb.write(pg_sys::ErrorContextCallback {
            previous: pg_sys::error_context_stack,
            callback: Some(column_fields),
            arg: arg.cast(),
        });
        pg_sys::error_context_stack = cb;
    }
    raise(e)
}

/// The argument of [`column_fields`].
struct ColumnFields {
    rel: pgrx::pg_sys::Relation,
    attno: i32,
    /// The SQLSTATE (as PostgreSQL packs it) of the error the fields are for.
    code: i32,
    armed: bool,
}

/// The error context callback of [`raise_on_column`].
#[pgrx::pg_guard]
unsafe extern "C-unwind" fn column_fields(arg: *mut std::ffi::c_void) {
    // SAFETY: `arg` is the `ColumnFields` raise_on_column allocated; the error
    // being finished is current, so `geterrcode` and `errtablecol` apply to it.
    unsafe {
        let f = &mut *arg.cast::<ColumnFields>();
        if f.armed && pgrx::pg_sys::geterrcode() == f.code {
            f.armed = false;
            if f.attno > 0 {
                pgrx::pg_sys::errtablecol(f.rel, f.attno);
            } else {
                pgrx::pg_sys::errtable(f.rel);
            }
        }
    }
}

/// A value the extension reads back from its own catalog tables or from a query
/// of its own: a NULL or a value of another type raises XX001 (data_corrupted)
/// naming what was read, never a silent default.
pub fn stored<T>(v: pgrx::spi::SpiResult<Option<T>>, what: &str) -> T {
    match v {
        Ok(Some(v)) => v,
        Ok(None) => raise(DedupError::Corrupted(format!("{what} is null"))),
        Err(e) => raise(DedupError::Corrupted(format!("{what} does not read: {e}"))),
    }
}

/// As [`stored`], for a value that may be NULL (an aggregate over no rows): then
/// `default`.
pub fn stored_or<T>(v: pgrx::spi::SpiResult<Option<T>>, what: &str, default: T) -> T {
    match v {
        Ok(v) => v.unwrap_or(default),
        Err(e) => raise(DedupError::Corrupted(format!("{what} does not read: {e}"))),
    }
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
    #[track_caller]
    fn or_raise(self) -> T {
        match self {
            Ok(v) => v,
            Err(e) => raise(e),
        }
    }
    #[track_caller]
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

/// A cursor over a caller's pairs query, which must return `columns`: a query
/// SPI cannot run as one (no SELECT: COPY, BEGIN; 42P11 as a cursor) or refuses
/// is the same 22023 every pairs query gives. The cursor is always read-only
/// (SPI's `read_only`: a `DELETE … RETURNING` is refused with 0A000, and the
/// query sees the snapshot of the statement that called): pgrx opens one
/// read-only only while the transaction has written nothing, so inside a
/// transaction that had, a pairs query could write.
pub fn pairs_cursor<'conn>(
    c: &pgrx::spi::SpiClient<'conn>,
    query: &str,
    columns: &str,
) -> pgrx::spi::SpiCursor<'conn> {
    // Text from PostgreSQL holds no NUL.
    let src = std::ffi::CString::new(query).unwrap_or_else(|_| query_not_select(columns));
    let name = pgrx::PgTryBuilder::new(std::panic::AssertUnwindSafe(|| {
        // SAFETY: SPI is connected (`c`); a query without parameters; the portal
        // returned, when there is one, lives until the connection ends, and its
        // name is copied out.
        unsafe {
            let portal = pgrx::pg_sys::SPI_cursor_open_with_args(
                std::ptr::null(),
                src.as_ptr(),
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null(),
                true,
                0,
            );
            (!portal.is_null()).then(|| {
                std::ffi::CStr::from_ptr((*portal).name)
                    .to_string_lossy()
                    .into_owned()
            })
        }
    }))
    .catch_when(
        pgrx::PgSqlErrorCode::ERRCODE_INVALID_CURSOR_DEFINITION,
        |_| query_not_select(columns),
    )
    // PostgreSQL's own words for a read-only cursor over a statement that writes
    // ("DELETE is not allowed in a non-volatile function") name no function here.
    .catch_when(pgrx::PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED, |e| {
        let what = match e {
            pgrx::pg_sys::panic::CaughtError::PostgresError(r)
            | pgrx::pg_sys::panic::CaughtError::ErrorReport(r)
            | pgrx::pg_sys::panic::CaughtError::RustPanic { ereport: r, .. } => r
                .message()
                .split(" is not allowed")
                .next()
                .unwrap_or("it")
                .to_owned(),
        };
        raise(DedupError::FeatureNotSupported {
            msg: format!("pairs query must not write: {what} is not allowed in it"),
            hint: Some(format!(
                "the pairs query is read as a query: one SELECT returning {columns}"
            )),
        })
    })
    .execute();
    let Some(name) = name else {
        query_not_select(columns)
    };
    c.find_cursor(&name)
        .unwrap_or_else(|e| query_refused(columns, e))
}

/// The next `count` rows of `cur`, handed to `f`, then their tuple table freed:
/// SPI keeps every batch a cursor fetched until the connection ends, so a loop
/// over a large result held all of it (an audit grew `evaluate` to 1.1 GB over 2
/// million pairs). `f` copies out what it keeps; queries it runs leave the
/// table to be freed all the same.
pub fn fetch_batch<R>(
    cur: &mut pgrx::spi::SpiCursor<'_>,
    count: i64,
    f: impl for<'t> FnOnce(pgrx::spi::SpiTupleTable<'t>) -> R,
) -> pgrx::spi::SpiResult<R> {
    let t = cur.fetch(count)?;
    // SAFETY: the fetch just set SPI_tuptable to the table `t` reads (or left it
    // NULL).
    let table = unsafe { pgrx::pg_sys::SPI_tuptable };
    let r = f(t);
    if !table.is_null() {
        // SAFETY: `t` was moved into `f` and dropped there, so nothing reads the
        // table any more; SPI_freetuptable looks it up among the connection's own
        // (and only warns about one it does not find).
        unsafe { pgrx::pg_sys::SPI_freetuptable(table) };
    }
    Ok(r)
}

/// The uncompressed size of the document in column `ordinal` of a fetched row,
/// read from its header or TOAST pointer (nothing is detoasted); 0 for NULL or a
/// column of another type. What [`crate::chunks::Runs`] cuts a batch by.
pub fn stored_size(r: &pgrx::spi::SpiHeapTupleData<'_>, ordinal: usize) -> usize {
    use crate::pg::types::StoredDoc;
    r.get::<crate::pg::types::DocRef>(ordinal)
        .ok()
        .flatten()
        .map_or(0, |d| d.raw_size())
}

/// An SPI failure that no user input should cause. Raised as XX000.
pub fn spi_err(e: pgrx::spi::Error) -> ! {
    raise(DedupError::Internal(format!("SPI error: {e}")))
}

/// A user-supplied query that SPI refused to run as a query (`COPY`, `BEGIN`,
/// `COMMIT`: SPI returns those as error codes, not as PostgreSQL errors). Raised as
/// 22023 invalid_parameter_value; `expected` names the columns it must return.
pub fn query_refused(expected: &str, _e: pgrx::spi::Error) -> ! {
    query_not_select(expected)
}

/// [`query_refused`], for a refusal that came as an error of PostgreSQL's (a
/// cursor over a query that is no SELECT: 42P11).
pub fn query_not_select(expected: &str) -> ! {
    raise(DedupError::InvalidParameter {
        msg: format!("pairs query must be one SELECT returning {expected}"),
        hint: Some("COPY and transaction control (BEGIN, COMMIT) cannot run as a query".into()),
    })
}

/// A user-supplied query whose columns do not have the documented types. Raised
/// as 42804 datatype_mismatch; `expected` names the columns it must return.
pub fn query_err(expected: &str, _e: pgrx::spi::Error) -> ! {
    raise(DedupError::DatatypeMismatch {
        msg: format!("pairs query returned a column of the wrong type: it must return {expected}"),
        hint: None,
    })
}
