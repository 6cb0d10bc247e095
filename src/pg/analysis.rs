//! Analyst queries over an enabled table: `pairs`, `groups`, `matrix_quality`.
//! Candidate pairs come from a GIN self-join on the signatures (no O(N²) scan);
//! every candidate pair is judged in both directions, as the trigger does.

use crate::decide::{self, Member};
use crate::features;
use crate::pg::collections::Weigher;
use crate::pg::ingest::{score, table_config, verdict_of};
use crate::pg::models::{self, verdict, Authorities, Loaded};
use crate::pg::spi_err;
use crate::pg::types::DocumentDatum;
use pgrx::prelude::*;
use std::collections::HashMap;
use std::rc::Rc;

/// A judged candidate pair (a < b by key).
pub struct PairRow {
    pub a: String,
    pub b: String,
    pub score_ab: f64,
    pub score_ba: f64,
}

/// What `groups` needs of each document.
pub struct Info {
    pub published_at: Option<i64>,
    pub authority: f64,
}

/// All candidate pairs of an enabled table, judged in both directions.
fn judged_pairs(tbl: pg_sys::Oid, model: Option<&str>) -> (Vec<PairRow>, HashMap<String, Info>) {
    let cfg = table_config(tbl);
    let model: Option<Rc<Loaded>> = model.or(cfg.model.as_deref()).map(models::model);
    let mut weigher = Weigher::new(&cfg.coll, None);
    weigher.prefetch_all();
    let auth = Authorities::load(&cfg.coll);
    // The LATERAL subquery holds only the signature match, so its one index path is
    // the GIN index; OFFSET 0 keeps it from being flattened into a join where
    // `a.key < b.key` lets the planner walk the primary key instead. GIN cannot cost
    // a match against a value it has not seen, so the planner may still prefer to
    // filter every row of b: seqscan is off for this query alone. Either O(N²) plan
    // took 21-29 s for 5,000 rows, against about 1 s through the index.
    let sql = format!(
        "SELECT a.{k}::text, a.dedup_doc, b.k, b.dedup_doc FROM {t} a, \
         LATERAL (SELECT b.{k} AS key, b.{k}::text AS k, b.dedup_doc FROM {t} b \
                  WHERE b.dedup_sig OPERATOR(dedup.%) a.dedup_sig OFFSET 0) b \
         WHERE a.dedup_doc IS NOT NULL AND b.dedup_doc IS NOT NULL AND a.{k} < b.key",
        k = cfg.key,
        t = cfg.tname
    );
    let mut rows = Vec::new();
    let mut info: HashMap<String, Info> = HashMap::new();
    Spi::connect_mut(|c| {
        let old = c
            .update("SELECT current_setting('enable_seqscan'), set_config('enable_seqscan', 'off', true)", None, &[])
            .unwrap_or_else(|e| spi_err(e))
            .first()
            .get::<String>(1)
            .ok()
            .flatten()
            .unwrap_or_else(|| "on".into());
        let mut cur = c.open_cursor(sql.as_str(), &[]);
        loop {
            let batch = cur.fetch(1000).unwrap_or_else(|e| spi_err(e));
            if batch.is_empty() {
                break;
            }
            for r in batch {
                let (Some(ka), Some(da), Some(kb), Some(db)) = (
                    r.get::<String>(1).ok().flatten(),
                    r.get::<DocumentDatum>(2).ok().flatten(),
                    r.get::<String>(3).ok().flatten(),
                    r.get::<DocumentDatum>(4).ok().flatten(),
                ) else {
                    continue;
                };
                let wa = models::weigh_with(da.decode(), &weigher, &auth);
                let wb = models::weigh_with(db.decode(), &weigher, &auth);
                let ab = features::compare(&wa.side(), &wb.side());
                let ba = features::compare(&wb.side(), &wa.side());
                for (k, w) in [(&ka, &wa), (&kb, &wb)] {
                    info.entry(k.clone()).or_insert_with(|| Info {
                        published_at: w.doc.published_at,
                        authority: w.authority,
                    });
                }
                rows.push(PairRow {
                    a: ka,
                    b: kb,
                    score_ab: score(model.as_deref(), &ab),
                    score_ba: score(model.as_deref(), &ba),
                });
            }
        }
        drop(cur);
        c.update("SELECT set_config('enable_seqscan', $1, true)", None, &[old.as_str().into()])
            .unwrap_or_else(|e| spi_err(e));
    });
    (rows, info)
}

/// Every duplicate pair in an enabled table. Public as `dedup.pairs` (sql/ingest.sql).
#[pg_extern(stable, parallel_safe)]
pub fn _pairs(
    tbl: pg_sys::Oid,
    model: Option<&str>,
) -> TableIterator<
    'static,
    (
        name!(a, String),
        name!(b, String),
        name!(verdict, verdict),
        name!(score, f64),
    ),
> {
    let (rows, _) = judged_pairs(tbl, model);
    let out: Vec<_> = rows
        .into_iter()
        .filter(|p| p.score_ab > 0.0 || p.score_ba > 0.0)
        .map(|p| {
            let v = verdict_of(p.score_ab > 0.0, p.score_ba > 0.0);
            (p.a, p.b, v, p.score_ab.max(p.score_ba))
        })
        .collect();
    TableIterator::new(out)
}

/// Connected groups of duplicates; the original is the earliest document, then the
/// most authoritative. Public as `dedup.groups`.
#[pg_extern(stable, parallel_safe)]
pub fn _groups(
    tbl: pg_sys::Oid,
    model: Option<&str>,
) -> TableIterator<
    'static,
    (
        name!(key, String),
        name!(group_id, i64),
        name!(is_original, bool),
    ),
> {
    let (rows, info) = judged_pairs(tbl, model);
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut members: Vec<Member> = Vec::new();
    let mut edges = Vec::new();
    for p in rows
        .into_iter()
        .filter(|p| p.score_ab > 0.0 || p.score_ba > 0.0)
    {
        let mut id = |k: String| -> usize {
            if let Some(&i) = index.get(&k) {
                return i;
            }
            let i = members.len();
            let inf = info.get(&k);
            members.push(Member {
                key: k.clone(),
                published_at: inf.and_then(|x| x.published_at),
                authority: inf.map(|x| x.authority).unwrap_or(0.5),
            });
            index.insert(k, i);
            i
        };
        let (a, b) = (id(p.a), id(p.b));
        edges.push((a, b));
    }
    let out: Vec<_> = decide::groups(&members, &edges)
        .into_iter()
        .map(|(i, g, o)| (members[i].key.clone(), g, o))
        .collect();
    TableIterator::new(out)
}

/// Lande et al.'s symmetry and transitivity of the duplicate relation of a table.
/// Public as `dedup.matrix_quality`.
#[pg_extern(stable, parallel_safe)]
pub fn _matrix_quality(
    tbl: pg_sys::Oid,
    model: Option<&str>,
) -> TableIterator<
    'static,
    (
        name!(pairs, i64),
        name!(symmetry, f64),
        name!(transitivity, f64),
    ),
> {
    let (rows, _) = judged_pairs(tbl, model);
    let mut ids: HashMap<String, i64> = HashMap::new();
    let mut edges = Vec::new();
    for p in rows {
        let n = ids.len() as i64;
        let a = *ids.entry(p.a).or_insert(n);
        let n = ids.len() as i64;
        let b = *ids.entry(p.b).or_insert(n);
        if p.score_ab > 0.0 {
            edges.push((a, b));
        }
        if p.score_ba > 0.0 {
            edges.push((b, a));
        }
    }
    let q = crate::metrics::matrix_quality(&edges);
    TableIterator::once((q.pairs, q.symmetry, q.transitivity))
}
