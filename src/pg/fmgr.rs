//! C entry points of the version-1 calling convention, written by hand where pgrx
//! generates none that fits (GIN support functions, trigger functions that check
//! how they are called): the `pg_finfo_` record and a guarded function.

/// Defines the C function `$name` (and its `$finfo` record) whose body is `$body`,
/// an `unsafe fn(FunctionCallInfo) -> Datum` (a closure that captures nothing).
macro_rules! v1_function {
    ($name:ident, $finfo:ident, $body:expr) => {
        #[no_mangle]
        #[doc(hidden)]
        pub extern "C" fn $finfo() -> &'static pg_sys::Pg_finfo_record {
            const V1: pg_sys::Pg_finfo_record = pg_sys::Pg_finfo_record { api_version: 1 };
            &V1
        }

        #[no_mangle]
        #[doc(hidden)]
        #[pg_guard]
        pub unsafe extern "C-unwind" fn $name(fcinfo: pg_sys::FunctionCallInfo) -> pg_sys::Datum {
            let f: unsafe fn(pg_sys::FunctionCallInfo) -> pg_sys::Datum = $body;
            // SAFETY: PostgreSQL calls this with a valid fcinfo of the declared arity.
            unsafe { f(fcinfo) }
        }
    };
}
pub(crate) use v1_function;
