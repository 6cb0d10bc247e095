//! Deduplication at insert time: the per-row check behind the trigger
//! (`_check`), `is_duplicate` and `find_original`. `enable`/`disable` and the
//! trigger function itself are SQL (sql/ingest.sql); they call `_check`.

use crate::decide::{self, Judged};
use crate::document::Document;
use crate::error::DedupError;
use crate::features::N_FEATURES;
use crate::gucs;
use crate::pg::cache::{self, StmtMap};
use crate::pg::collections::{self, Collection, Weigher};
use crate::pg::models::{self, verdict, Authorities, Loaded, Weighted};
use crate::pg::signature::options_of;
use crate::pg::types::{DocRef, DocumentDatum, SignatureDatum, StoredDoc};
use crate::pg::{raise, raise_with};
use crate::signature::Signature;
use crate::text::{self, AnalyzeOptions};
use pgrx::prelude::*;
use std::rc::Rc;

/// Candidates examined per new document, best signature matches first.
pub const MAX_CANDIDATES: i64 = 50;

/// How a table was enabled (`dedup.enabled_tables`).
pub struct TableConfig {
    pub tbl: pg_sys::Oid,
    /// The table's name, quoted for SQL.
    pub tname: String,
    /// The primary key column, quoted for SQL.
    pub key: String,
    pub coll: Collection,
    pub model: Option<String>,
}

thread_local! {
    static CONFIGS: std::cell::RefCell<StmtMap<u32, ConfigRow>> =
        std::cell::RefCell::new(StmtMap::default());
}

/// (quoted table name, key column, collection name, model)
type ConfigRow = (String, String, String, Option<String>);

/// The configuration of an enabled table (read once per statement).
pub fn table_config(tbl: pg_sys::Oid) -> TableConfig {
    let cached = cache::with(&CONFIGS, |m| m.get(&tbl.to_u32()).cloned());
    let row = cached.or_else(|| {
        let r = table_config_row(tbl)?;
        cache::with(&CONFIGS, |m| m.insert(tbl.to_u32(), r.clone()));
        Some(r)
    });
    let Some((tname, key, coll, model)) = row else {
        let name = Spi::get_one_with_args::<String>("SELECT $1::regclass::text", &[tbl.into()])
            .ok()
            .flatten();
        raise_with(
            PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
            format!(
                "table {} is not enabled for deduplication",
                name.unwrap_or_default()
            ),
            Some("call dedup.enable(table, body_column) first".into()),
        )
    };
    TableConfig {
        tbl,
        tname,
        key: pgrx::spi::quote_identifier(key),
        coll: collections::load(&coll),
        model,
    }
}

fn table_config_row(tbl: pg_sys::Oid) -> Option<ConfigRow> {
    Spi::connect(|c| {
        let t = cache::select(
            c,
            "SELECT $1::regclass::text, e.key_column::text, c.name, e.model \
             FROM dedup.enabled_tables e JOIN dedup.collections c ON c.id = e.collection_id WHERE e.tbl = $1",
            Some(1),
            &[tbl.into()],
        );
        if t.is_empty() {
            return None;
        }
        let r = t.first();
        Some((
            r.get::<String>(1).ok().flatten().unwrap_or_default(),
            r.get::<String>(2).ok().flatten().unwrap_or_default(),
            r.get::<String>(3).ok().flatten().unwrap_or_default(),
            r.get::<String>(4).ok().flatten(),
        ))
    })
}

/// Decision value for "a duplicates b" under a model, or the threshold rule.
pub fn score(model: Option<&Loaded>, rho: &[f64; N_FEATURES]) -> f64 {
    match model {
        Some(m) => m.model.decision(rho),
        None => decide::threshold_rule(rho),
    }
}

pub fn verdict_of(new_dup: bool, cand_dup: bool) -> verdict {
    match (new_dup, cand_dup) {
        (false, false) => verdict::distinct,
        (true, false) => verdict::a_duplicates_b,
        (false, true) => verdict::b_duplicates_a,
        (true, true) => verdict::mutual,
    }
}

/// A candidate row: key and its own `duplicate_of`.
struct Candidate {
    key: String,
    duplicate_of: Option<String>,
}

/// The rows whose signatures match `sig`, best first, each weighed (through the
/// backend document cache: a candidate seen before is neither decompressed nor
/// decoded again).
fn find_candidates(
    cfg: &TableConfig,
    sig: &Signature,
    self_key: Option<&str>,
    weigher: &mut Weigher,
    auth: &Authorities,
) -> Vec<(Candidate, Weighted)> {
    if sig.keys.is_empty() {
        return Vec::new();
    }
    let sql = format!(
        "SELECT {key}::text, dedup_doc, duplicate_of::text FROM {t} \
         WHERE dedup_sig OPERATOR(dedup.%) $1 AND dedup_doc IS NOT NULL AND ($2::text IS NULL OR {key}::text <> $2) \
         ORDER BY dedup.shared_keys(dedup_sig, $1) DESC, {key} LIMIT {MAX_CANDIDATES}",
        key = cfg.key,
        t = cfg.tname
    );
    Spi::connect(|c| {
        let t = cache::select(
            c,
            sql.as_str(),
            None,
            &[SignatureDatum::from_signature(sig).into(), self_key.into()],
        );
        // The documents stay in SPI memory, and are read, while the rows are alive.
        let rows: Vec<(Candidate, DocRef)> = t
            .into_iter()
            .filter_map(|r| {
                let key = r.get::<String>(1).ok()??;
                let doc = r.get::<DocRef>(2).ok()??;
                let duplicate_of = r.get::<String>(3).ok().flatten();
                Some((Candidate { key, duplicate_of }, doc))
            })
            .collect();
        let docs: Vec<&dyn StoredDoc> = rows.iter().map(|(_, d)| d as &dyn StoredDoc).collect();
        let weighed = weigher.weigh_stored(&docs);
        rows.into_iter()
            .zip(weighed)
            .map(|((c, _), w)| (c, models::with_authority(w, auth)))
            .collect()
    })
}

/// Judges a new document against candidates in both directions.
fn judge(model: Option<&Loaded>, new: &Weighted, cands: &[(Candidate, Weighted)]) -> Vec<Judged> {
    cands
        .iter()
        .map(|(c, w)| {
            let (ab, ba) = models::both_ways(new, w);
            Judged {
                key: c.key.clone(),
                duplicate_of: c.duplicate_of.clone(),
                score_new_dup: score(model, &ab),
                score_cand_dup: score(model, &ba),
            }
        })
        .collect()
}

/// Everything the trigger needs for one row.
pub struct Checked {
    /// The new document's stored form (when `commit`).
    pub doc: Option<DocumentDatum>,
    pub sig: Option<Signature>,
    pub original: Option<String>,
    pub verdict: Option<verdict>,
    pub score: Option<f64>,
    pub judged: Vec<Judged>,
}

/// Checks one document against a table. With `commit`, it serialises on the
/// signature keys (transaction-scoped advisory locks, taken in key order before the
/// candidate lookup, so of two concurrent near-identical inserts the second sees the
/// first) and adds the document to the collection statistics.
pub fn check(
    cfg: &TableConfig,
    doc: Document,
    model: Option<&str>,
    self_key: Option<&str>,
    commit: bool,
) -> Checked {
    let model: Option<Rc<Loaded>> = model.map(models::model);
    let opts = options_of(&cfg.coll);
    // One weigher for the new document and its candidates: the statistics of their
    // terms come from one query each.
    let mut weigher = Weigher::new(&cfg.coll, None);
    let auth = Authorities::cached(&cfg.coll);
    let (new, new_read_at) = weigher.weigh_read_at(doc);
    let new = models::with_authority(new, &auth);
    let sig = crate::signature::signature(new.doc(), &new.w.body, &opts);
    if commit && !sig.keys.is_empty() {
        let keys: Vec<i32> = sig.keys.iter().map(|&k| k as i32).collect();
        Spi::connect_mut(|c| {
            cache::update(
                c,
                "SELECT pg_advisory_xact_lock($1, k) FROM unnest($2::int4[]) AS k ORDER BY k",
                None,
                &[cfg.coll.id.into(), keys.into()],
            );
        });
    }
    let cands = find_candidates(cfg, &sig, self_key, &mut weigher, &auth);
    let judged = judge(model.as_deref(), &new, &cands);
    let d = decide::choose(&judged);
    let stored = commit.then(|| {
        collections::add(cfg.coll.id, new.doc());
        // Kept under the bytes it is stored as: the next inserts of a story compare
        // with it without reading it back.
        let bytes = new.doc().encode();
        weigher.remember(&bytes, &new.w, new_read_at);
        DocumentDatum(bytes)
    });
    Checked {
        doc: stored,
        sig: Some(sig),
        original: d.original,
        verdict: Some(verdict_of(d.new_dup, d.cand_dup)),
        score: if d.score.is_finite() {
            Some(d.score)
        } else {
            None
        },
        judged,
    }
}

fn analyze(
    cfg: &TableConfig,
    body: &str,
    title: Option<&str>,
    ts: Option<TimestampWithTimeZone>,
    source: Option<&str>,
) -> Document {
    let opts = AnalyzeOptions {
        lang: cfg.coll.lang,
        min_word_length: gucs::min_word_length(),
    };
    text::analyze(
        body,
        title,
        ts.map(pg_sys::TimestampTz::from),
        source,
        &opts,
    )
}

/// Whether a text is over `dedup.max_document_bytes`. The trigger then stores the
/// row unchecked with a WARNING (nothing is lost); `is_duplicate` answers false.
fn over_limit(body: &str, title: Option<&str>) -> bool {
    let limit = gucs::max_document_bytes();
    body.len() > limit || title.is_some_and(|t| t.len() > limit)
}

/// The trigger's per-row work. Internal: called by `dedup._trigger()`.
#[pg_extern(volatile, parallel_unsafe)]
#[allow(clippy::too_many_arguments)]
pub fn _check(
    tbl: pg_sys::Oid,
    body: Option<&str>,
    title: Option<&str>,
    published_at: Option<TimestampWithTimeZone>,
    source: Option<&str>,
    model: Option<&str>,
    self_key: Option<&str>,
) -> TableIterator<
    'static,
    (
        name!(doc, Option<DocumentDatum>),
        name!(sig, Option<SignatureDatum>),
        name!(original, Option<String>),
        name!(verdict, Option<verdict>),
        name!(score, Option<f64>),
    ),
> {
    let cfg = table_config(tbl);
    let Some(body) = body else {
        return TableIterator::once((None, None, None, None, None));
    };
    if over_limit(body, title) {
        pgrx::ereport!(
            WARNING,
            PgSqlErrorCode::ERRCODE_PROGRAM_LIMIT_EXCEEDED,
            format!(
                "text of {} bytes is over dedup.max_document_bytes ({}): row stored without a duplicate check",
                body.len(),
                gucs::max_document_bytes()
            )
        );
        return TableIterator::once((None, None, None, None, None));
    }
    let doc = analyze(&cfg, body, title, published_at, source);
    let model = model.or(cfg.model.as_deref());
    let c = check(&cfg, doc, model, self_key, true);
    TableIterator::once((
        c.doc,
        c.sig.as_ref().map(SignatureDatum::from_signature),
        c.original,
        c.verdict,
        c.score,
    ))
}

/// Removes a row's document from its table's collection statistics (UPDATE, DELETE).
#[pg_extern(volatile, strict, parallel_unsafe)]
pub fn _forget(tbl: pg_sys::Oid, doc: DocumentDatum) {
    let cfg = table_config(tbl);
    collections::remove(cfg.coll.id, &doc.decode());
}

/// Whether the text would be a duplicate in `tbl`: the trigger's decision, without
/// inserting anything or touching statistics. Uses the table's model.
#[pg_extern(stable, parallel_safe)]
pub fn _is_duplicate(
    tbl: pg_sys::Oid,
    body: Option<&str>,
    title: Option<&str>,
    published_at: Option<TimestampWithTimeZone>,
    source: Option<&str>,
) -> bool {
    let cfg = table_config(tbl);
    let Some(body) = body else { return false };
    if over_limit(body, title) {
        return false;
    }
    let doc = analyze(&cfg, body, title, published_at, source);
    check(&cfg, doc, cfg.model.as_deref(), None, false)
        .original
        .is_some()
}

/// The rows a document duplicates, as their originals (the first of a chain), best first.
#[pg_extern(stable, strict, parallel_safe)]
pub fn _find_original(
    tbl: pg_sys::Oid,
    doc: DocumentDatum,
) -> TableIterator<
    'static,
    (
        name!(key, String),
        name!(verdict, verdict),
        name!(score, f64),
    ),
> {
    let cfg = table_config(tbl);
    let c = check(&cfg, doc.decode(), cfg.model.as_deref(), None, false);
    let mut rows: Vec<(String, verdict, f64)> = c
        .judged
        .into_iter()
        .filter(|j| j.score_new_dup > 0.0)
        .map(|j| {
            let v = verdict_of(true, j.score_cand_dup > 0.0);
            (j.duplicate_of.unwrap_or(j.key), v, j.score_new_dup)
        })
        .collect();
    rows.sort_by(|a, b| b.2.total_cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
    rows.dedup_by(|a, b| a.0 == b.0);
    TableIterator::new(rows)
}

/// Validates `enable`'s model and action arguments before any DDL runs.
#[pg_extern(stable, parallel_safe)]
pub fn _validate_enable(model: Option<&str>, action: Option<&str>) {
    if let Some(m) = model {
        models::model(m);
    }
    match action {
        Some("mark" | "skip" | "error") => {}
        other => raise(DedupError::InvalidParameter {
            msg: format!("unknown action \"{}\"", other.unwrap_or("NULL")),
            hint: Some("action is 'mark', 'skip' or 'error'".into()),
        }),
    }
}
