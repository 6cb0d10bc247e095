//! Publication times as pg_dedup reads them from a table's time column, in one
//! place for the trigger, its candidate scan, the analyst queries and `enable`'s
//! backfill: a date at midnight UTC, a timestamp as UTC, a timestamptz as it is,
//! text through timestamptz's input with `DateStyle` `ISO, MDY` and `TimeZone`
//! `UTC` (PostgreSQL's defaults; never the writer's, which would move what the
//! trigger compares); text that is not a time, and `infinity` / `-infinity`, count
//! as no time.

use pgrx::prelude::*;
use std::ffi::CString;

/// A date, timestamp or timestamptz datum as a time in microseconds (a date at
/// midnight UTC, a timestamp as UTC: never in the session's time zone, which each
/// writer sets; beyond the range: the infinities); None for another type.
///
/// # Safety
/// `d` is a non-null datum of type `typ`.
pub unsafe fn to_timestamptz(typ: pg_sys::Oid, d: pg_sys::Datum) -> Option<i64> {
    let clamp = |t: i64, overflow: i32| match overflow.signum() {
        -1 => i64::MIN,
        1 => i64::MAX,
        _ => t,
    };
    if typ == pg_sys::TIMESTAMPTZOID {
        Some(d.value() as i64)
    } else if typ == pg_sys::TIMESTAMPOID {
        // A time without a zone is taken as UTC, whatever the session's TimeZone:
        // a writer's setting must not move what the trigger compares (the time
        // features, the window, the partitions searched).
        Some(d.value() as i64)
    } else if typ == pg_sys::DATEOID {
        // Midnight UTC; -infinity and infinity stay the ends of time.
        let days = d.value() as i32;
        Some(match days {
            i32::MIN => i64::MIN,
            i32::MAX => i64::MAX,
            _ => {
                let (t, over) = (days as i64).overflowing_mul(86_400_000_000);
                clamp(t, if over { days.signum() } else { 0 })
            }
        })
    } else {
        None
    }
}

/// `text` as a timestamptz, or None when timestamptz's input refuses it (22007,
/// 22008): the refusal is caught in a subtransaction, as a PL/pgSQL exception
/// block catches it, so that a writer's text time column never fails its insert.
/// Read with `DateStyle` `ISO, MDY` and `TimeZone` `UTC` whatever the session
/// set: a writer's `DateStyle = 'DMY'` read "03/04/2024" as the 3rd of April, and
/// its zone moved a time without one, and so what the trigger compared (the
/// window, the time features) and stored.
pub fn parse_time(text: &str) -> Option<TimestampWithTimeZone> {
    let text = CString::new(text).ok()?;
    crate::pg::guc_scope::with_settings(
        &[(c"DateStyle", c"ISO, MDY"), (c"TimeZone", c"UTC")],
        || parse_time_pinned(&text),
    )
}

fn parse_time_pinned(text: &CString) -> Option<TimestampWithTimeZone> {
    // Only what timestamptz's input says of text that is not a time is caught
    // (its subtransaction rolled back); anything else (a cancel, out of memory)
    // goes on.
    let parsed = crate::pg::subxact::catching(
        &[
            PgSqlErrorCode::ERRCODE_INVALID_DATETIME_FORMAT,
            PgSqlErrorCode::ERRCODE_DATETIME_FIELD_OVERFLOW,
            PgSqlErrorCode::ERRCODE_INVALID_TIME_ZONE_DISPLACEMENT_VALUE,
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
        ],
        // SAFETY: timestamptz's input function, given NUL-terminated text.
        || unsafe {
            pg_sys::OidInputFunctionCall(
                pg_sys::Oid::from(pg_sys::F_TIMESTAMPTZ_IN),
                text.as_ptr() as *mut _,
                pg_sys::InvalidOid,
                -1,
            )
        },
    )
    .ok()?;
    // SAFETY: the input function returned a timestamptz.
    unsafe { TimestampWithTimeZone::from_datum(parsed, false) }
}

/// A stored row's time as the trigger reads the new row's, for comparing it with
/// a window: None for no time, for text that is not a time (the trigger stored
/// such a row with a WARNING, as one without a time), and for the infinities
/// (which have no distance to another time).
///
/// # Safety
/// `d` is a non-null datum of type `typ`.
pub unsafe fn stored_time(typ: pg_sys::Oid, d: pg_sys::Datum) -> Option<i64> {
    // SAFETY: the caller upholds this function's contract (see its comment).
    let t = match unsafe { to_timestamptz(typ, d) } {
        Some(t) => Some(t),
        None if typ == pg_sys::TEXTOID || typ == pg_sys::VARCHAROID => {
            // SAFETY: a non-null text or varchar datum.
            let text = unsafe { String::from_datum(d, false) }?;
            parse_time(&text).map(pg_sys::TimestampTz::from)
        }
        None => None,
    };
    t.filter(|&t| t != i64::MIN && t != i64::MAX)
}

/// A time column's value as `dedup.enable`'s backfill and the analyst queries
/// read it: [`stored_time`] as SQL (NULL for no time). Polymorphic over the column
/// types `enable` accepts (timestamptz, timestamp, date, text, varchar).
#[pg_extern(stable, strict, parallel_unsafe)]
pub fn _published(value: pgrx::AnyElement) -> Option<TimestampWithTimeZone> {
    // SAFETY: a non-null datum of the type the executor says it has.
    let t = unsafe { stored_time(value.oid(), value.datum()) }?;
    // SAFETY: any i64 is a timestamptz datum.
    unsafe { TimestampWithTimeZone::from_datum(pg_sys::Datum::from(t), false) }
}
