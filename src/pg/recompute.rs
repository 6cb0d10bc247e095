//! Bulk recompute: a collection's statistics (and derived signatures) rebuilt
//! from its tables' stored documents, in TID-range chunks; and `staleness`, how far
//! they moved since.

use crate::chunks::{tid_chunks, Runs, RUN_BYTES};
use crate::error::DedupError;
use crate::pg::collections::{load, Collection};
use crate::pg::lookup;
use crate::pg::privilege::{self, as_owner};
use crate::pg::registration;
use crate::pg::spi_err;
use crate::pg::stats::forget_own_changes;
use crate::pg::types::{DocumentDatum, SignatureDatum};
use pgrx::prelude::*;

fn notice(msg: String) {
    pgrx::ereport!(NOTICE, PgSqlErrorCode::ERRCODE_SUCCESSFUL_COMPLETION, msg);
}

/// A table of a recompute: its name as the caller knows it (for messages), as SQL
/// written into a query that runs under another `search_path` (schema-qualified;
/// `pg_temp` for the caller's temporary table), and its document column, quoted.
pub struct DocColumn {
    pub shown: String,
    pub sql: String,
    pub column: String,
}

/// Checks that `col` is a `dedup.document` column of `tbl` (see [`DocColumn`]).
pub fn quoted_doc_column(tbl: pg_sys::Oid, col: &str) -> DocColumn {
    let (shown, sql, ok) = Spi::connect(|c| {
        let t = c
            .select(
                // Schema-qualified whatever the search_path: the table is read as
                // its owner, under `search_path = pg_catalog, pg_temp`.
                "SELECT $1::regclass::text, \
                 pg_catalog.format('%I.%I', CASE WHEN n.oid = pg_catalog.pg_my_temp_schema() THEN 'pg_temp' \
                                                 ELSE n.nspname::text END, c.relname), \
                 (SELECT atttypid = 'dedup.document'::regtype FROM pg_catalog.pg_attribute \
                  WHERE attrelid = $1 AND attname = $2 AND attnum > 0 AND NOT attisdropped) \
                 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
                 WHERE c.oid = $1",
                Some(1),
                &[tbl.into(), col.into()],
            )
            .unwrap_or_else(|e| spi_err(e));
        let r = t.first();
        (
            r.get::<String>(1).ok().flatten().unwrap_or_default(),
            r.get::<String>(2).ok().flatten().unwrap_or_default(),
            r.get::<bool>(3).ok().flatten(),
        )
    });
    match ok {
        None => crate::pg::raise(DedupError::UndefinedColumn {
            msg: format!("column \"{col}\" of relation {shown} does not exist"),
            hint: None,
        }),
        Some(false) => crate::pg::raise(DedupError::DatatypeMismatch {
            msg: format!("column \"{col}\" of relation {shown} is not of type dedup.document"),
            hint: None,
        }),
        Some(true) => DocColumn {
            shown,
            sql,
            column: pgrx::spi::quote_identifier(col),
        },
    }
}

/// Number of progress steps (a NOTICE each, about every 10 %).
const STEPS: i64 = 10;

/// Rebuilds the statistics of `coll` from every registered table, in TID-range
/// chunks so progress can be reported, through a temp table; then refreshes the
/// derived per-row values. Returns the number of documents read.
///
/// Interrupts: the work is SQL run through SPI, during which the executor checks
/// for them per row (the aggregate and `dedup.signature` are per-row calls of
/// bounded cost); [`recompute_collection`] also checks before each chunk.
#[pg_extern(volatile, parallel_unsafe)]
pub fn _recompute(
    collection: Option<&str>,
    tbl: Option<pg_sys::Oid>,
    doc_column: Option<&str>,
) -> Option<i64> {
    let collection = collection?;
    privilege::require_execute(if tbl.is_some() {
        "dedup.recompute(pg_catalog.regclass, pg_catalog.name, pg_catalog.text)"
    } else {
        "dedup.recompute(pg_catalog.text)"
    });
    // The caller's rights decide; the statistics are then written as the
    // extension's owner (src/pg/registration.rs).
    if let Some(tbl) = tbl {
        registration::require_owner(tbl);
        registration::require_table(tbl, true);
    }
    privilege::require_collection_owner(collection);
    let coll = as_owner(|| load(collection));
    if let (Some(tbl), Some(col)) = (tbl, doc_column) {
        quoted_doc_column(tbl, col);
        // A single dedup.signature column is refreshed too.
        let sig: Option<String> = lookup::one_with_args::<String>(
            "SELECT min(attname::text) FROM pg_catalog.pg_attribute WHERE attrelid = $1 AND attnum > 0 \
             AND NOT attisdropped AND atttypid = 'dedup.signature'::regtype HAVING count(*) = 1",
            &[tbl.into()],
        )
        .ok()
        .flatten();
        // Refreshed by one collection only: two would write their own signatures
        // over each other's.
        let taken = sig.as_deref().and_then(|sig| {
            as_owner(|| {
                lookup::one_with_args::<String>(
                    "SELECT c.name FROM dedup.collection_tables t JOIN dedup.collections c ON c.id = t.collection_id \
                     WHERE t.tbl = $1 AND t.sig_column = $2 AND t.collection_id <> $3 LIMIT 1",
                    &[tbl.into(), sig.into(), coll.id.into()],
                )
                .ok()
                .flatten()
            })
        });
        let sig = match taken {
            Some(other) => {
                pgrx::ereport!(
                    NOTICE,
                    pgrx::PgSqlErrorCode::ERRCODE_SUCCESSFUL_COMPLETION,
                    format!(
                        "signature column {} of table {} is refreshed by collection \"{}\", not by \"{}\"",
                        sig.as_deref().unwrap_or_default(),
                        lookup::relation_text(tbl).unwrap_or_default(),
                        crate::error::excerpt(&other),
                        crate::error::excerpt(collection)
                    )
                );
                None
            }
            None => sig,
        };
        as_owner(|| {
            Spi::connect_mut(|c| {
                c.update(
                "INSERT INTO dedup.collection_tables (collection_id, tbl, doc_column, sig_column) \
                 VALUES ($1, $2, $3, $4) ON CONFLICT (collection_id, tbl) \
                 DO UPDATE SET doc_column = excluded.doc_column, \
                 sig_column = coalesce(excluded.sig_column, collection_tables.sig_column)",
                None,
                &[coll.id.into(), tbl.into(), col.into(), sig.into()],
            )
            .unwrap_or_else(|e| spi_err(e));
            })
        });
    }
    Some(recompute_collection(&coll))
}

/// Runs `sql` (no parameters) under `snap` (a copy of it with the current
/// command id, as `SPI_execute_snapshot` does for a statement that writes) and
/// returns the first row's first two `int8` columns (0 for NULL, no row or no
/// such column).
///
/// # Safety
/// SPI is connected and `snap` is a registered snapshot.
unsafe fn two_counts_under(snap: pg_sys::Snapshot, sql: &str) -> [i64; 2] {
    let src = std::ffi::CString::new(sql).unwrap_or_default();
    // SAFETY: the caller's SPI connection; the plan is freed before returning, and
    // the result's tuples are read before the next SPI call.
    unsafe {
        let plan = pg_sys::SPI_prepare(src.as_ptr(), 0, std::ptr::null_mut());
        if plan.is_null() {
            crate::pg::raise(DedupError::Internal(format!(
                "a recompute statement could not be prepared: {sql}"
            )));
        }
        let rc = pg_sys::SPI_execute_snapshot(
            plan,
            std::ptr::null_mut(),
            std::ptr::null(),
            snap,
            std::ptr::null_mut(),
            false,
            true,
            0,
        );
        let mut out = [0i64; 2];
        if rc >= 0 && pg_sys::SPI_processed > 0 && !pg_sys::SPI_tuptable.is_null() {
            let t = &*pg_sys::SPI_tuptable;
            let natts = (*t.tupdesc).natts;
            for (i, v) in out.iter_mut().enumerate() {
                let col = i as i32 + 1;
                if col > natts {
                    break;
                }
                let mut null = false;
                let d = pg_sys::SPI_getbinval(*t.vals, t.tupdesc, col, &mut null);
                if !null {
                    *v = d.value() as i64;
                }
            }
        }
        pg_sys::SPI_freeplan(plan);
        if rc < 0 {
            crate::pg::raise(DedupError::Internal(format!(
                "a recompute statement failed (SPI code {rc}): {sql}"
            )));
        }
        out
    }
}

/// The recompute of the TRUNCATE trigger (`dedup._truncate_trigger`), run as the
/// extension's owner: the collection's statistics without the rows of
/// `truncated`. A Citus distributed table is not read at all: on the coordinator
/// the trigger fires before Citus's own truncates the shards, and reading (or
/// rewriting) them then counted the rows about to go and could deadlock with
/// that truncate. Any other table is read as a recompute reads it (it is empty).
#[pg_extern(volatile, strict, parallel_unsafe)]
fn _recompute_truncated(collection: &str, truncated: pg_sys::Oid) -> i64 {
    privilege::require_collection_owner(collection);
    let coll = as_owner(|| load(collection));
    let skip = crate::pg::citus::is_distributed(truncated).then_some(truncated);
    recompute_collection_without(&coll, skip)
}

/// The work of `dedup.recompute` (see [`_recompute`]); checks for interrupts
/// before each TID-range chunk of each table, and [`refresh_derived`] before each
/// chunk of signatures.
pub fn recompute_collection(coll: &Collection) -> i64 {
    recompute_collection_without(coll, None)
}

/// [`recompute_collection`], counting the table `skip` (a distributed table being
/// truncated) as empty: neither read nor its signatures rewritten.
fn recompute_collection_without(coll: &Collection, skip: Option<pg_sys::Oid>) -> i64 {
    // The tables already hold this transaction's rows: its unwritten changes would
    // count them twice.
    forget_own_changes(coll.id);
    crate::pg::stats::note_stats_written();
    // First, before any statistics row: writers lock them in this order too.
    crate::pg::stats_lock::recompute(coll.id);
    let (dropped, tables): (bool, Vec<(pg_sys::Oid, String, Option<String>)>) = as_owner(|| {
        Spi::connect_mut(|c| {
            // Blocks concurrent add_document/remove_document on this collection until commit.
            let dropped = c
                .update(
                    "SELECT dropped_documents FROM dedup.collection_stats WHERE collection_id = $1 FOR UPDATE",
                    None,
                    &[coll.id.into()],
                )
                .unwrap_or_else(|e| spi_err(e))
                .first()
                .get::<bool>(1)
                .ok()
                .flatten()
                .unwrap_or(false);
            let t = c
            .select(
                "SELECT tbl::oid, doc_column::text, sig_column::text FROM dedup.collection_tables t \
                 WHERE collection_id = $1 \
                 AND EXISTS (SELECT 1 FROM pg_catalog.pg_class r WHERE r.oid = t.tbl) ORDER BY tbl::oid",
                None,
                &[coll.id.into()],
            )
            .unwrap_or_else(|e| spi_err(e));
            let tables = t
                .into_iter()
                .filter_map(|r| {
                    Some((
                        r.get::<pg_sys::Oid>(1).ok()??,
                        r.get::<String>(2).ok()??,
                        r.get::<String>(3).ok().flatten(),
                    ))
                })
                .collect();
            (dropped, tables)
        })
    });
    // A partitioned table's rows are in its leaf partitions: about ten progress
    // steps per table, however many partitions it has.
    let tables: Vec<(pg_sys::Oid, String, Option<String>, i64)> = tables
        .into_iter()
        .flat_map(|(oid, doc, sig)| {
            let leaves = crate::pg::partitions::leaves(oid, None);
            let steps = (STEPS / leaves.len().max(1) as i64).max(1);
            leaves
                .into_iter()
                .map(move |l| (l.rel, doc.clone(), sig.clone(), steps))
        })
        .collect();
    // A collection of no table holds what `add_document` gave it, and what the
    // dropped tables a model kept it for left in it: nothing to rebuild them from,
    // and a model weighs its pairs with them.
    if tables.is_empty() {
        notice(if dropped {
            format!(
                "collection \"{}\" has no registered tables: statistics left as they are, the documents of dropped tables among them (enabling a table into it rebuilds them)",
                coll.name
            )
        } else {
            format!(
                "collection \"{}\" has no registered tables: statistics left as they are",
                coll.name
            )
        });
        return 0;
    }
    let tables: Vec<_> = tables
        .into_iter()
        .filter(|(rel, ..)| Some(*rel) != skip)
        .collect();
    // One snapshot for every chunk read and for the delete of the pending rows,
    // taken after the statistics lock: a COMMIT PREPARED (which takes no such
    // lock) that lands meanwhile is then neither in the rows read nor among the
    // pending rows deleted, and its pending row is folded later. With a snapshot
    // per statement its rows were counted by the chunks read after it, and its
    // pending row deleted (an audit: a document and a few terms miscounted).
    // SAFETY: a copy of the latest snapshot, registered on the transaction's
    // resource owner, unregistered below (or released by the abort).
    let snap = unsafe { pg_sys::RegisterSnapshot(pg_sys::GetLatestSnapshot()) };
    // A fresh table of the extension's owner, never one of that name the caller
    // made, which the owner reads at the end.
    privilege::owner_temp_table(
        "_dedup_recompute",
        "CREATE TEMP TABLE _dedup_recompute (term text, df int8, cf int8) ON COMMIT DROP",
    );
    let (mut n_docs, mut total_len) = (0i64, 0i64);
    for (oid, col, _, steps) in &tables {
        let DocColumn {
            shown,
            sql: tname,
            column: qcol,
        } = quoted_doc_column(*oid, col);
        let pages: i64 = lookup::one_with_args::<i64>(
            "SELECT (pg_relation_size($1) / current_setting('block_size')::int8)",
            &[(*oid).into()],
        )
        .ok()
        .flatten()
        .unwrap_or(0);
        // A Citus distributed table has no pages here: Citus aggregates its shards.
        let ranges: Vec<(String, i64)> = if crate::pg::citus::is_distributed(*oid) {
            vec![("true".into(), 100)]
        } else {
            tid_chunks(pages, *steps)
                .into_iter()
                .map(|c| (c.ctid_range(), c.pct))
                .collect()
        };
        // Each table is read as its owner (see `privilege::as_table_owner`), who
        // writes into this role's temporary table.
        privilege::grant_on_temp_table("_dedup_recompute", "INSERT", *oid);
        for (range, pct) in ranges {
            pgrx::check_for_interrupts!();
            let sql = format!(
                "WITH a AS (SELECT dedup.term_stats_agg({qcol}) AS s FROM {tname} WHERE {range}), \
                 ins AS (INSERT INTO pg_temp._dedup_recompute SELECT e.key, (e.value->>0)::int8, (e.value->>1)::int8 \
                         FROM a, jsonb_each(a.s->'terms') e) \
                 SELECT coalesce((s->>'n_docs')::int8, 0), coalesce((s->>'total_len')::int8, 0) FROM a"
            );
            let (n, l) = privilege::as_table_owner(*oid, || {
                Spi::connect_mut(|_| {
                    // SAFETY: SPI is connected; `snap` is registered.
                    let [n, l] = unsafe { two_counts_under(snap, &sql) };
                    (n, l)
                })
            });
            n_docs += n;
            total_len += l;
            notice(format!(
                "recompute \"{}\": {shown} statistics {pct}% ({n_docs} documents)",
                coll.name
            ));
        }
    }
    // The temporary table is the extension owner's (the others could only insert).
    as_owner(|| {
        Spi::connect_mut(|c| {
            // Pending documents of transactions committed in the snapshot are in
            // the tables just read; those of a later COMMIT PREPARED stay.
            // SAFETY: SPI is connected; `snap` is registered, and no longer used.
            unsafe {
                two_counts_under(
                    snap,
                    &format!(
                        "DELETE FROM dedup.term_stats_pending WHERE collection_id = {}",
                        coll.id
                    ),
                );
                pg_sys::UnregisterSnapshot(snap);
            }
            for sql in [
                "DELETE FROM dedup.term_stats WHERE collection_id = $1",
                "INSERT INTO dedup.term_stats (collection_id, term, df, cf) \
             SELECT $1, term, sum(df), sum(cf) FROM pg_temp._dedup_recompute GROUP BY term",
            ] {
                c.update(sql, None, &[coll.id.into()])
                    .unwrap_or_else(|e| spi_err(e));
            }
            c.update(
            "UPDATE dedup.collection_stats SET n_docs = $2, total_len = $3, last_recompute = now(), \
             n_docs_at_recompute = $2, changes_since_recompute = 0, dropped_documents = false WHERE collection_id = $1",
            None,
            &[coll.id.into(), n_docs.into(), total_len.into()],
        )
        .unwrap_or_else(|e| spi_err(e));
        })
    });
    privilege::owner_temp_ddl("DROP TABLE pg_temp._dedup_recompute");
    for (oid, col, sig, steps) in &tables {
        if let Some(sig) = sig {
            refresh_derived(coll, *oid, col, sig, *steps);
        }
    }
    n_docs
}

/// Refreshes the stored signatures of one table after a recompute: computes them
/// into a temp table in chunks (with progress), then writes them back with a single
/// `UPDATE … FROM`, which Romanov measured at 100,000 rows/s against 1,500 for
/// row-by-row updates.
fn refresh_derived(coll: &Collection, tbl: pg_sys::Oid, doc_col: &str, sig_col: &str, steps: i64) {
    if crate::pg::citus::is_distributed(tbl) {
        return refresh_distributed(coll, tbl, doc_col, sig_col);
    }
    let DocColumn {
        shown,
        sql: tname,
        column: qdoc,
    } = quoted_doc_column(tbl, doc_col);
    let qsig = pgrx::spi::quote_identifier(sig_col);
    let pages: i64 = lookup::one_with_args::<i64>(
        "SELECT (pg_relation_size($1) / current_setting('block_size')::int8)",
        &[tbl.into()],
    )
    .ok()
    .flatten()
    .unwrap_or(0);
    privilege::owner_temp_table(
        "_dedup_signatures",
        "CREATE TEMP TABLE _dedup_signatures (row_id tid, sig dedup.signature) ON COMMIT DROP",
    );
    privilege::grant_on_temp_table("_dedup_signatures", "SELECT", tbl);
    let opts = crate::pg::signature::options_of(coll);
    let mut done = 0i64;
    for chunk in tid_chunks(pages, steps) {
        let range = chunk.ctid_range();
        let sql = format!(
            "SELECT ctid::text, {qdoc}, {qsig} FROM {tname} WHERE {range} AND {qdoc} IS NOT NULL"
        );
        // The rows are read as the table's owner (see `privilege::as_table_owner`);
        // they are signed here, with the collection's statistics read as the
        // extension's owner, out of reach of whatever that read ran (the table's
        // policies may be another role's code), and written into the extension
        // owner's temporary table.
        privilege::as_table_owner(tbl, || {
            Spi::connect_mut(|c| {
                let mut cur = c.open_cursor(sql.as_str(), &[]);
                loop {
                    pgrx::check_for_interrupts!();
                    // A batch holds pointers to its rows' documents; they are
                    // read, decoded and signed a run at a time (`chunks::Runs`).
                    let n = crate::pg::fetch_batch(&mut cur, SIGN_BATCH, |batch| {
                        let n = batch.len();
                        let mut runs = Runs::new(RUN_BYTES);
                        for r in batch {
                            let size = crate::pg::stored_size(&r, 2);
                            if let Some(run) = runs.make_room(size) {
                                done += sign_run(coll, &opts, run);
                            }
                            let (Some(id), Some(d)) = (
                                r.get::<String>(1).ok().flatten(),
                                r.get::<DocumentDatum>(2).ok().flatten(),
                            ) else {
                                continue;
                            };
                            let stored = r.get::<SignatureDatum>(3).ok().flatten();
                            runs.push(size, (id, d.decode(), stored));
                        }
                        done += sign_run(coll, &opts, runs.finish());
                        n
                    })
                    .unwrap_or_else(|e| spi_err(e));
                    if n == 0 {
                        break;
                    }
                }
            })
        });
        notice(format!(
            "recompute \"{}\": {shown} signatures {}% ({done} rows)",
            coll.name, chunk.pct
        ));
    }
    // A row a writer holds (an UPDATE or DELETE under way, a SELECT … FOR UPDATE)
    // keeps its signature rather than make the recompute wait: under the
    // statistics lock (`pg::stats_lock`) the writers wait for the recompute, so a
    // wait here could close a cycle. A row a committed update replaced since is
    // skipped too: its new version was signed by the trigger.
    let sql = format!(
        "UPDATE {tname} t SET {qsig} = x.sig \
         FROM (SELECT r.ctid AS row_id, s.sig FROM {tname} r JOIN pg_temp._dedup_signatures s ON r.ctid = s.row_id \
               FOR UPDATE OF r SKIP LOCKED) x \
         WHERE t.ctid = x.row_id"
    );
    // As the table's owner: its triggers fire.
    privilege::as_table_owner(tbl, || {
        Spi::connect_mut(|c| {
            c.update(sql.as_str(), None, &[])
                .unwrap_or_else(|e| spi_err(e));
        })
    });
    privilege::owner_temp_ddl("DROP TABLE pg_temp._dedup_signatures");
}

/// Signs a run of rows of [`refresh_derived`] with the collection's statistics
/// (read as the extension's owner) and puts the signatures that change into the
/// temporary table; the rows in the run.
fn sign_run(
    coll: &Collection,
    opts: &crate::signature::SignatureOptions,
    run: Vec<(String, crate::document::Document, Option<SignatureDatum>)>,
) -> i64 {
    let n = run.len() as i64;
    if run.is_empty() {
        return 0;
    }
    as_owner(|| {
        let mut w = crate::pg::weigher::Weigher::new(coll, None);
        w.prefetch(run.iter().map(|(_, d, _)| d));
        // Only the rows whose signature changes are written: the update rewrites
        // a row and fires the table's triggers.
        let (ids, sigs): (Vec<String>, Vec<SignatureDatum>) = run
            .into_iter()
            .filter_map(|(id, d, old)| {
                let (body, _) = w.weights(&d);
                let new =
                    SignatureDatum::from_signature(&crate::signature::signature(&d, &body, opts));
                (old.as_ref().map(|o| &o.0) != Some(&new.0)).then_some((id, new))
            })
            .unzip();
        if ids.is_empty() {
            return;
        }
        Spi::connect_mut(|c| {
            c.update(
                "INSERT INTO pg_temp._dedup_signatures \
                 SELECT r::pg_catalog.tid, s FROM ROWS FROM (pg_catalog.unnest($1::pg_catalog.text[]), pg_catalog.unnest($2)) AS u(r, s)",
                None,
                &[ids.into(), sigs.into()],
            )
            .unwrap_or_else(|e| spi_err(e));
        });
    });
    n
}

/// Rows signed per query of [`refresh_derived`].
const SIGN_BATCH: i64 = 1000;

/// [`refresh_derived`] for a Citus distributed table: its documents are brought
/// here and signed here (a signature computed on a worker would read statistics
/// this transaction has not committed yet), then written back by primary key
/// (Citus refuses a modification by tuple id).
fn refresh_distributed(coll: &Collection, tbl: pg_sys::Oid, doc_col: &str, sig_col: &str) {
    let DocColumn {
        shown,
        sql: tname,
        column: qdoc,
    } = quoted_doc_column(tbl, doc_col);
    let qsig = pgrx::spi::quote_identifier(sig_col);
    let key: Vec<String> = lookup::one_with_args::<Vec<String>>(
        "SELECT k.names::text[] FROM dedup._key_columns($1::regclass) k",
        &[tbl.into()],
    )
    .ok()
    .flatten()
    .unwrap_or_default()
    .into_iter()
    .map(pgrx::spi::quote_identifier)
    .collect();
    if key.is_empty() {
        crate::pg::raise(DedupError::NotEnabled {
            msg: format!(
                "distributed table {shown} has no primary key: its signatures cannot be refreshed"
            ),
            hint: Some("add a primary key (it holds the distribution column)".into()),
        });
    }
    let cols = key.join(", ");
    let on = key
        .iter()
        .map(|k| format!("t.{k} = s.{k}"))
        .collect::<Vec<_>>()
        .join(" AND ");
    let n = Spi::connect_mut(|c| {
        c.update("DROP TABLE IF EXISTS pg_temp._dedup_signatures", None, &[])
            .unwrap_or_else(|e| spi_err(e));
        for sql in [
            format!(
                "CREATE TEMP TABLE _dedup_signatures ON COMMIT DROP AS \
                 SELECT {cols}, {qdoc} AS doc, NULL::dedup.signature AS sig FROM {tname} WHERE {qdoc} IS NOT NULL"
            ),
            "UPDATE pg_temp._dedup_signatures SET sig = dedup.signature(doc, $1)".into(),
        ] {
            c.update(sql.as_str(), None, &[coll.name.as_str().into()])
                .unwrap_or_else(|e| spi_err(e));
        }
        let n = c
            .update(
                format!(
                    "UPDATE {tname} t SET {qsig} = s.sig FROM pg_temp._dedup_signatures s \
                         WHERE {on} AND t.{qsig}::text IS DISTINCT FROM s.sig::text"
                )
                .as_str(),
                None,
                &[],
            )
            .unwrap_or_else(|e| spi_err(e))
            .len() as i64;
        c.update("DROP TABLE pg_temp._dedup_signatures", None, &[])
            .unwrap_or_else(|e| spi_err(e));
        n
    });
    notice(format!(
        "recompute \"{}\": {shown} signatures 100% ({n} rows)",
        coll.name
    ));
}

/// How far a collection's statistics moved since its last recompute: the documents
/// added or removed since then, as a fraction of its documents now (0 = fresh).
#[pg_extern(stable, strict)]
fn staleness(collection: &str) -> f64 {
    privilege::reading_collection(collection, "dedup.staleness", || staleness_of(collection))
}

fn staleness_of(collection: &str) -> f64 {
    let coll = load(collection);
    Spi::connect(|c| {
        let t = c
            .select(
                // Committed changes still pending count (see `dedup.stats_batch`).
                "SELECT (s.changes_since_recompute + p.changes)::float8 \
                        / greatest(s.n_docs + p.n_docs, s.changes_since_recompute + p.changes, 1) \
                 FROM dedup.collection_stats s, \
                      LATERAL (SELECT coalesce(sum(changes), 0) AS changes, coalesce(sum(n_docs), 0) AS n_docs \
                               FROM dedup.term_stats_pending WHERE collection_id = $1) p \
                 WHERE s.collection_id = $1",
                Some(1),
                &[coll.id.into()],
            )
            .unwrap_or_else(|e| spi_err(e));
        if t.is_empty() {
            0.0
        } else {
            crate::pg::stored(t.first().get::<f64>(1), "dedup.collection_stats staleness")
        }
    })
}
