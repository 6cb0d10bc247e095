//! The C entry points of pg_dedup's trigger functions written in Rust (declared
//! in `sql/ingest.sql`): they refuse a direct call and a trigger fired otherwise
//! than `dedup.enable` installs it, then run the function's body. pgrx's
//! `#[pg_trigger]` panics on a direct call (XX000).

use crate::error::DedupError;
use crate::pg::raise;
use pgrx::prelude::*;

/// How a trigger function of pg_dedup must be fired: the row or statement level,
/// before or after, and for which operations.
#[derive(Clone, Copy)]
pub(crate) enum Fired {
    /// A row trigger BEFORE INSERT OR UPDATE (`_trigger`).
    RowBeforeWrite,
    /// A row trigger AFTER INSERT OR UPDATE (`_row_stored`).
    RowAfterWrite,
    /// A statement trigger BEFORE INSERT OR UPDATE (`_statement_start`).
    StatementBeforeWrite,
    /// A statement trigger AFTER INSERT OR UPDATE (`_statement_end`).
    StatementAfterWrite,
    /// A statement trigger AFTER any operation (`_config_changed`).
    StatementAfter,
}

impl Fired {
    fn describe(self) -> &'static str {
        match self {
            Fired::RowBeforeWrite => "a row trigger BEFORE INSERT OR UPDATE",
            Fired::RowAfterWrite => "a row trigger AFTER INSERT OR UPDATE",
            Fired::StatementBeforeWrite => "a statement trigger BEFORE INSERT OR UPDATE",
            Fired::StatementAfterWrite => "a statement trigger AFTER INSERT OR UPDATE",
            Fired::StatementAfter => "a statement trigger AFTER the change",
        }
    }

    fn matches(self, t: &pgrx::PgTrigger<'_>) -> bool {
        use pgrx::{PgTriggerLevel as L, PgTriggerOperation as O, PgTriggerWhen as W};
        let write = matches!(t.op(), Ok(O::Insert | O::Update));
        let (row, before) = (
            matches!(t.level(), L::Row),
            matches!(t.when(), Ok(W::Before)),
        );
        let after = matches!(t.when(), Ok(W::After));
        match self {
            Fired::RowBeforeWrite => row && before && write,
            Fired::RowAfterWrite => row && after && write,
            Fired::StatementBeforeWrite => !row && before && write,
            Fired::StatementAfterWrite => !row && after && write,
            Fired::StatementAfter => !row && after,
        }
    }
}

/// The body of a C entry point of a trigger function: refuses a direct call
/// (0A000, as PL/pgSQL does) and a trigger fired otherwise than `dedup.enable`
/// installs it (39P01: a statement function as a BEFORE row trigger would drop
/// every row; a trigger of another name than `tgname`, the one `enable` gives it,
/// or, where Citus is installed, that name with a shard's `_<shard id>`: a second
/// `dedup._row_stored` trigger counted each row twice), then runs `body`.
///
/// # Safety
/// `fcinfo` is the call PostgreSQL made.
pub(crate) unsafe fn enter_trigger(
    fcinfo: pg_sys::FunctionCallInfo,
    name: &str,
    tgname: Option<&str>,
    fired: Fired,
    body: impl for<'t> FnOnce(&'t pgrx::PgTrigger<'t>) -> Option<PgHeapTuple<'t, AllocatedByPostgres>>,
) -> pg_sys::Datum {
    // SAFETY: PostgreSQL passes a valid fcinfo; its context is a node or null.
    let as_trigger = unsafe {
        let ctx = (*fcinfo).context;
        !ctx.is_null() && (*ctx).type_ == pg_sys::NodeTag::T_TriggerData
    };
    if !as_trigger {
        raise(DedupError::FeatureNotSupported {
            msg: format!(
                "dedup.{name}() is a trigger function: it can only be called as a trigger"
            ),
            hint: Some("dedup.enable installs it on the tables it enables".into()),
        });
    }
    // SAFETY: checked above that PostgreSQL called it as a trigger.
    let trigger = match unsafe { pgrx::PgTrigger::from_fcinfo(&*fcinfo) } {
        Ok(t) => t,
        Err(_) => raise(DedupError::FeatureNotSupported {
            msg: format!(
                "dedup.{name}() is a trigger function: it can only be called as a trigger"
            ),
            hint: None,
        }),
    };
    if !fired.matches(&trigger) {
        raise(DedupError::TriggerProtocol {
            msg: format!("dedup.{name}() must be fired as {}", fired.describe()),
            hint: Some("dedup.enable installs it; do not create triggers on it by hand".into()),
        });
    }
    if let Some(expected) = tgname {
        check_trigger_name(name, trigger.name().unwrap_or("?"), expected);
    }
    // The triggers on an enabled table (not `_config_changed`, on pg_dedup's own).
    if !matches!(fired, Fired::StatementAfter) {
        if let Ok(tbl) = trigger.relid() {
            // SAFETY: a trigger's data always points at the trigger that fired.
            let tgoid = unsafe { (*trigger.trigger_data().tg_trigger).tgoid };
            crate::pg::snapshot_setup::require_trigger(tgoid, tbl);
        }
    }
    // Bound to a name so the returned tuple is dropped before `trigger`, which it
    // borrows.
    #[allow(clippy::let_and_return)]
    let datum = match crate::pg::guc_scope::without_jit(|| body(&trigger)) {
        None => pg_sys::Datum::from(0usize),
        Some(tuple) => tuple
            .into_trigger_datum()
            .unwrap_or(pg_sys::Datum::from(0usize)),
    };
    datum
}

/// Raises 39P01 unless the trigger firing `dedup.{function}()` is named
/// `expected`, the name `dedup.enable` gives it, or, where Citus is installed,
/// `expected` with a shard's `_<shard id>`. Not checked against pg_dist_shard:
/// while create_distributed_table copies rows into new shards, a worker does not
/// know them yet.
pub(crate) fn check_trigger_name(function: &str, actual: &str, expected: &str) {
    let named = actual == expected
        || actual
            .strip_prefix(expected)
            .and_then(|rest| rest.strip_prefix('_'))
            .is_some_and(|id| {
                !id.is_empty()
                    && id.bytes().all(|b| b.is_ascii_digit())
                    && crate::pg::citus::present()
            });
    if !named {
        raise(DedupError::TriggerProtocol {
            msg: format!(
                "dedup.{function}() fires only as the trigger {expected} that dedup.enable creates, not as \"{}\"",
                crate::error::excerpt(actual)
            ),
            hint: Some("dedup.enable installs it; do not create triggers on it by hand".into()),
        });
    }
}

// `dedup._check_trigger_name(function text, tg_name text, expected text)`, the
// same check for the PL/pgSQL trigger functions: STRICT, so no argument is NULL.
crate::pg::fmgr::v1_function!(
    dedup_check_trigger_name,
    pg_finfo_dedup_check_trigger_name,
    |fcinfo| unsafe {
        let text = |i: usize| pgrx::fcinfo::pg_getarg::<&str>(fcinfo, i).unwrap_or_default();
        check_trigger_name(text(0), text(1), text(2));
        pg_sys::Datum::from(0usize)
    }
);

/// The C entry point `$sym` (with its `pg_finfo_` record) of the trigger function
/// `dedup.$name()`, declared in `sql/ingest.sql`, whose body is `$body`; `$tgname`
/// is the name `dedup.enable` gives its triggers (None: not checked).
macro_rules! trigger_entry {
    ($sym:ident, $finfo:ident, $name:literal, $tgname:expr, $fired:expr, $body:path) => {
        $crate::pg::fmgr::v1_function!($sym, $finfo, |fcinfo| unsafe {
            $crate::pg::trigger_entry::enter_trigger(
                fcinfo,
                $name,
                $tgname,
                $fired,
                |t| match $body(t) {
                    Ok(r) => r,
                    Err(e) => match e {},
                },
            )
        });
    };
}
pub(crate) use trigger_entry;
