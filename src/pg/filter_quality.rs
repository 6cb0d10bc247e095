//! `dedup.filter_quality`: the candidate filter's recall and efficiency on
//! labelled pairs (Andreev et al., Table 1), counted by `crate::metrics`.

use crate::chunks::{Runs, RUN_BYTES};
use crate::error::DedupError;
use crate::pg::collections::{self, Collection};
use crate::pg::privilege;
use crate::pg::query_err;
use crate::pg::raise;
use crate::pg::signature::{options_of, signature_of};
use crate::pg::types::DocumentDatum;
use crate::signature::{self, SignatureOptions};
use pgrx::prelude::*;

/// `pairs` is a
/// query returning `(a dedup.document, b dedup.document, collection text, label boolean)`.
/// Interrupts: checked by the executor while the query runs, then once per row
/// decoded and once per pair whose signatures are built. VOLATILE: the pairs
/// query is the caller's, and may call functions that write.
#[pg_extern(volatile, strict)]
fn filter_quality(
    pairs: &str,
) -> TableIterator<
    'static,
    (
        name!(total_pairs, i64),
        name!(passing, i64),
        name!(duplicates, i64),
        name!(duplicates_kept, i64),
        name!(duplicates_lost, i64),
        name!(recall, f64),
        name!(efficiency, f64),
    ),
> {
    const COLUMNS: &str = "(a dedup.document, b dedup.document, collection text, label boolean)";
    let mut q = crate::metrics::FilterQuality::default();
    let mut loaded: Option<(Collection, SignatureOptions)> = None;
    // The pairs of a run (`chunks::Runs`): their signatures, each row's
    // collection read as the extension's owner once the caller may read it
    // (`privilege::reading_collection`); the pairs query ran with the caller's
    // rights.
    let mut judge = |run: Vec<(DocumentDatum, DocumentDatum, String, bool)>| {
        for (a, b, coll, label) in run {
            pgrx::check_for_interrupts!();
            let (a, b) = (a.decode(), b.decode());
            if loaded.as_ref().is_none_or(|(c, _)| c.name != coll) {
                let (c, o) = privilege::reading_collection(&coll, "dedup.filter_quality", || {
                    let c = collections::load(&coll);
                    let o = options_of(&c);
                    (c, o)
                });
                loaded = Some((c, o));
            }
            let Some((c, o)) = loaded.as_ref() else {
                continue;
            };
            let (sa, sb) = privilege::reading_collection(&coll, "dedup.filter_quality", || {
                (signature_of(&a, c, o), signature_of(&b, c, o))
            });
            // The collection's filter, as its trigger and `pairs` apply it (the
            // session's `dedup.min_shared_keys` is the `%` operator's alone: an
            // audit's collection with 2 was scored with the session's 4).
            let l = &c.limits;
            q.add(
                signature::is_candidate(&sa, &sb, l.min_shared_keys, l.similarity_threshold),
                label,
            );
        }
    };
    Spi::connect(|c| {
        // Through a cursor, a batch at a time (`pg::fetch_batch`), its documents
        // read a run at a time: memory holds one run, however many pairs the query
        // returns and however long their documents.
        let mut cur = crate::pg::pairs_cursor(c, pairs, COLUMNS);
        loop {
            pgrx::check_for_interrupts!();
            let fetched = crate::pg::fetch_batch(&mut cur, 256, |t| {
                if t.columns().is_ok_and(|n| n < 4) {
                    raise(DedupError::invalid_parameter(format!(
                        "pairs query must return {COLUMNS}"
                    )));
                }
                let fetched = t.len();
                let mut runs = Runs::new(RUN_BYTES);
                for r in t {
                    pgrx::check_for_interrupts!();
                    let size = crate::pg::stored_size(&r, 1) + crate::pg::stored_size(&r, 2);
                    if let Some(run) = runs.make_room(size) {
                        judge(run);
                    }
                    let row = (|| {
                        let a = r
                            .get::<DocumentDatum>(1)
                            .unwrap_or_else(|e| query_err(COLUMNS, e))?;
                        let b = r
                            .get::<DocumentDatum>(2)
                            .unwrap_or_else(|e| query_err(COLUMNS, e))?;
                        let coll = r
                            .get::<String>(3)
                            .unwrap_or_else(|e| query_err(COLUMNS, e))?;
                        let label = r.get::<bool>(4).unwrap_or_else(|e| query_err(COLUMNS, e))?;
                        Some((a, b, coll, label))
                    })();
                    if let Some(row) = row {
                        runs.push(size, row);
                    }
                }
                judge(runs.finish());
                fetched
            })
            .unwrap_or_else(|e| crate::pg::query_refused(COLUMNS, e));
            if fetched == 0 {
                break;
            }
        }
    });
    TableIterator::once((
        q.total_pairs,
        q.passing,
        q.duplicates,
        q.duplicates_kept,
        q.duplicates_lost,
        q.recall,
        q.efficiency,
    ))
}
