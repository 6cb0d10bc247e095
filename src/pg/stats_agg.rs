//! The `dedup.term_stats_agg` aggregate: document frequencies summed over rows,
//! in parallel (combine, serial and deserial functions).

use crate::error::DedupError;
use crate::pg::types::{DocumentDatum, JsonText};
use crate::pg::OrRaise;
use crate::weights::{StatsAccumulator, MAX_RESULT_BYTES};
use pgrx::prelude::*;
use pgrx::{Internal, PgMemoryContexts};

// ---- the term_stats_agg aggregate ---------------------------------------------------
// Declared by hand in sql/aggregates.sql: an `internal` state with explicit
// combine, serial and deserial functions (pgrx #2351 mis-declares DESERIALFUNC).

/// The aggregate memory context of the current call, or raise if not called as an aggregate.
fn agg_context(fcinfo: pg_sys::FunctionCallInfo) -> pg_sys::MemoryContext {
    let mut ctx: pg_sys::MemoryContext = std::ptr::null_mut();
    // SAFETY: fcinfo is the live call info PostgreSQL passed to this function.
    let kind = unsafe { pg_sys::AggCheckCallContext(fcinfo, &mut ctx) };
    if kind == 0 || ctx.is_null() {
        crate::pg::raise(DedupError::FeatureNotSupported {
            msg: "term_stats_agg support function called outside an aggregate".into(),
            hint: Some("call the aggregate dedup.term_stats_agg(document)".into()),
        });
    }
    ctx
}

fn new_state(fcinfo: pg_sys::FunctionCallInfo, acc: StatsAccumulator) -> Internal {
    let ctx = agg_context(fcinfo);
    let ptr = PgMemoryContexts::For(ctx).leak_and_drop_on_delete(acc);
    Internal::from(Some(pg_sys::Datum::from(ptr)))
}

#[pg_extern(immutable, parallel_safe, sql = false)]
fn term_stats_agg_trans(
    mut state: Internal,
    doc: Option<DocumentDatum>,
    fcinfo: pg_sys::FunctionCallInfo,
) -> Internal {
    let Some(doc) = doc else { return state };
    let doc = doc.decode();
    // SAFETY: a non-null state was created by new_state as a StatsAccumulator.
    if let Some(acc) = unsafe { state.get_mut::<StatsAccumulator>() } {
        acc.add(&doc);
        refuse_when_surely_too_large(acc);
        return state;
    }
    let mut acc = StatsAccumulator::default();
    acc.add(&doc);
    new_state(fcinfo, acc)
}

#[pg_extern(immutable, parallel_safe, sql = false)]
fn term_stats_agg_combine(
    mut a: Internal,
    b: Internal,
    fcinfo: pg_sys::FunctionCallInfo,
) -> Internal {
    // SAFETY: both states, when non-null, are StatsAccumulators made by this aggregate.
    let other = unsafe { b.get::<StatsAccumulator>() }.cloned();
    match (unsafe { a.get_mut::<StatsAccumulator>() }, other) {
        (Some(acc), Some(o)) => {
            acc.merge(o);
            refuse_when_surely_too_large(acc);
            a
        }
        (Some(_), None) => a,
        (None, Some(o)) => new_state(fcinfo, o),
        (None, None) => a,
    }
}

/// Raises 54000 when `acc`'s result would pass [`MAX_RESULT_BYTES`] (an
/// allocation PostgreSQL refuses past 1 GB, XX000, after minutes of work).
fn require_result_fits(acc: &StatsAccumulator) {
    pgrx::check_for_interrupts!();
    if acc.result_bytes() > MAX_RESULT_BYTES {
        too_large(acc);
    }
}

/// [`require_result_fits`] by the count of terms alone, after each row: a state
/// that cannot fit is refused as soon as it is one, not after every row is read.
fn refuse_when_surely_too_large(acc: &StatsAccumulator) {
    if acc.surely_too_large() {
        too_large(acc);
    }
}

fn too_large(acc: &StatsAccumulator) -> ! {
    crate::pg::raise(DedupError::TooLarge {
        msg: format!(
            "term statistics of {} distinct terms are too large to return",
            acc.terms.len()
        ),
        hint: Some(
            "aggregate fewer documents; a collection's statistics are kept by dedup.recompute"
                .into(),
        ),
    })
}

#[pg_extern(immutable, parallel_safe, sql = false)]
fn term_stats_agg_serial(state: Internal) -> Vec<u8> {
    // SAFETY: the state is a StatsAccumulator made by this aggregate.
    let acc = unsafe { state.get::<StatsAccumulator>() };
    acc.map(|a| {
        require_result_fits(a);
        a.to_bytes()
    })
    .unwrap_or_default()
}

#[pg_extern(immutable, parallel_safe, sql = false)]
fn term_stats_agg_deserial(
    bytes: Vec<u8>,
    _unused: Internal,
    fcinfo: pg_sys::FunctionCallInfo,
) -> Internal {
    let acc = StatsAccumulator::from_bytes(&bytes).or_raise();
    new_state(fcinfo, acc)
}

#[pg_extern(immutable, parallel_safe, sql = false)]
fn term_stats_agg_final(state: Internal) -> Option<JsonText> {
    // SAFETY: the state is a StatsAccumulator made by this aggregate.
    let acc = unsafe { state.get::<StatsAccumulator>() }?;
    require_result_fits(acc);
    // Written as jsonb's text directly: a serde_json value of its millions of terms
    // took as much memory again as the accumulator, and printing it could not be
    // interrupted.
    let mut out = Vec::with_capacity(acc.result_bytes() / 2);
    out.extend_from_slice(
        format!(
            "{{\"n_docs\": {}, \"total_len\": {}, \"terms\": {{",
            acc.n_docs, acc.total_len
        )
        .as_bytes(),
    );
    for (i, (t, s)) in acc.sorted_terms().into_iter().enumerate() {
        if i % 65_536 == 0 {
            pgrx::check_for_interrupts!();
        }
        if i > 0 {
            out.extend_from_slice(b", ");
        }
        // A string into memory: serde_json's escaping cannot fail.
        if serde_json::to_writer(&mut out, t).is_err() {
            crate::pg::raise(DedupError::Internal(format!("term {t:?} not written")));
        }
        out.extend_from_slice(format!(": [{}, {}]", s.df, s.cf).as_bytes());
    }
    out.extend_from_slice(b"}}");
    let Ok(text) = String::from_utf8(out) else {
        crate::pg::raise(DedupError::Internal("term statistics not utf-8".into()));
    };
    Some(JsonText(text))
}
