//! Analyst queries over an enabled table: `pairs`, `groups`, `matrix_quality`.
//! Candidate pairs come from a GIN self-join on the signatures (no O(N²) scan);
//! every candidate pair is judged in both directions, as the trigger does.

use crate::decide::{self, Member};
use crate::pg::ingest::table_config;
use crate::pg::lookup;
use crate::pg::models::{self, verdict, verdict_of, Authorities, Loaded, WithAuthority};
use crate::pg::privilege::{self, as_owner};
use crate::pg::spi_err;
use crate::pg::types::{required, DocRef};
use crate::pg::weigher::Weigher;
use pgrx::prelude::*;
use std::collections::HashMap;
use std::rc::Rc;

/// A judged candidate pair (a < b by key).
pub struct PairRow {
    pub a: String,
    pub b: String,
    pub score_ab: f64,
    pub score_ba: f64,
    /// The two are exact copies (`decide::exact_copy`).
    pub exact: bool,
}

/// What `groups` needs of each document.
pub struct Info {
    pub published_at: Option<i64>,
    pub authority: f64,
}

/// All candidate pairs of an enabled table, judged in both directions.
///
/// First the candidate key pairs, from a GIN self-join on the signatures that reads
/// no documents. Then each document is read, decoded and weighed once, not once per
/// pair it is in: the documents are visited in breadth-first order of the candidate
/// graph, and a document leaves memory after the last pair that needs it (at 100k
/// documents, reading both documents for every candidate row took minutes).
///
/// Interrupts (a cancel, `statement_timeout`): checked by the executor while the
/// queries run, once per batch of candidate rows fetched, and while pairs are
/// judged once per document whose pairs come next and every [`PAIRS_PER_CHECK`]
/// pairs judged.
fn judged_pairs(
    tbl: pg_sys::Oid,
    model: Option<&str>,
    pairing: Pairing,
) -> (Vec<PairRow>, HashMap<String, Info>) {
    // Keys travel as text between the queries and out of the functions.
    crate::pg::guc_scope::without_jit(|| {
        crate::pg::guc_scope::exact_floats(|| judged_pairs_exact(tbl, model, pairing))
    })
}

/// [`judged_pairs`] with float keys printed exactly.
fn judged_pairs_exact(
    tbl: pg_sys::Oid,
    model: Option<&str>,
    pairing: Pairing,
) -> (Vec<PairRow>, HashMap<String, Info>) {
    let cfg = table_config(tbl);
    let model: Option<Rc<Loaded>> = model.or(cfg.model.as_deref()).and_then(models::by_name);
    let mut weigher = Weigher::new(&cfg.coll, None);
    weigher.prefetch_all();
    let auth = Authorities::load(&cfg.coll);
    let (keys, edges) = candidate_edges(&cfg, pairing);
    let fetch = rows_by_key(&cfg, "r.dedup_doc", "r.dedup_doc IS NOT NULL", "");

    // Breadth-first ranks; each edge oriented from its lower rank to its higher,
    // and the last position in `work` that needs each node: it leaves the cache then.
    let (work, last_use) = crate::edge_order::plan(keys.len(), &edges);
    let mut cache = DocCache::default();
    let mut rows = Vec::with_capacity(work.len());
    let mut info: HashMap<String, Info> = HashMap::new();
    // Weighs the documents of `ns` into the cache, as the table's owner; past
    // the cache's budget only those `keep` names are kept.
    let mut load = |ns: &[u32], keep: &[u32], cache: &mut DocCache| {
        let names: Vec<String> = ns.iter().map(|&n| keys[n as usize].clone()).collect();
        let by_name: HashMap<&str, u32> = names
            .iter()
            .map(String::as_str)
            .zip(ns.iter().copied())
            .collect();
        Spi::connect(|c| {
            // As the table's owner (see `privilege::as_table_owner`).
            let t = privilege::as_table_owner(cfg.tbl, || {
                crate::pg::guc_scope::key_lookups(|| {
                    crate::pg::cache::select(c, &fetch, None, &[names.clone().into()])
                })
            });
            for r in t {
                let (Some(k), Some(d)) = (
                    r.get::<String>(1).ok().flatten(),
                    r.get::<DocRef>(2).ok().flatten(),
                ) else {
                    continue;
                };
                let Some(&n) = by_name.get(k.as_str()) else {
                    continue;
                };
                if cache.full() && !keep.contains(&n) {
                    continue; // loaded when its pair comes
                }
                let Some(w) = weigher.weigh_stored(&[&d]).pop() else {
                    continue;
                };
                let w = models::with_authority(w, &auth);
                info.entry(k).or_insert_with(|| Info {
                    published_at: w.doc().published_at,
                    authority: w.authority,
                });
                cache.insert(n, Rc::new(w));
            }
        });
    };
    let mut judging = Progress::new(cfg.tbl, "judging", pairing, work.len() as u64);
    let mut i = 0;
    while i < work.len() {
        pgrx::check_for_interrupts!();
        judging.update(i as u64, "pairs");
        let lo = work[i].0;
        let mut j = i;
        while j < work.len() && work[j].0 == lo {
            j += 1;
        }
        let mut need: Vec<u32> = std::iter::once(lo)
            .chain(work[i..j].iter().map(|w| w.1))
            .filter(|n| !cache.has(*n))
            .collect();
        need.sort_unstable();
        need.dedup();
        if !need.is_empty() {
            load(&need, &[lo], &mut cache);
        }
        for (p, &(lo, hi, swapped)) in work[i..j].iter().enumerate() {
            if p % PAIRS_PER_CHECK == PAIRS_PER_CHECK - 1 {
                pgrx::check_for_interrupts!();
            }
            // Left out of a full cache (long documents): loaded now, and let go
            // after the pair.
            let fetched = !cache.has(hi);
            if fetched {
                pgrx::check_for_interrupts!();
                load(&[hi], &[hi], &mut cache);
            }
            let (Some(wl), Some(wh)) = (cache.get(lo), cache.get(hi)) else {
                continue; // a row deleted or emptied meanwhile
            };
            let (a, b, wa, wb) = if swapped {
                (hi, lo, wh, wl)
            } else {
                (lo, hi, wl, wh)
            };
            let (score_ab, score_ba) = models::scores(model.as_deref(), &wa, &wb);
            if fetched && cache.full() {
                cache.remove(hi);
            }
            // Only duplicates (in either direction) are kept: every caller
            // reads those alone.
            if score_ab <= 0.0 && score_ba <= 0.0 {
                continue;
            }
            rows.push(PairRow {
                a: keys[a as usize].clone(),
                b: keys[b as usize].clone(),
                score_ab,
                score_ba,
                exact: crate::decide::exact_copy(wa.doc().fingerprint, wb.doc().fingerprint),
            });
        }
        for &(lo, hi, _) in &work[i..j] {
            for n in [lo, hi] {
                if last_use[n as usize] < j {
                    cache.remove(n);
                }
            }
        }
        // Documents kept for later pairs are let go when they fill the cache:
        // loaded again when their pairs come.
        if cache.full() {
            cache.clear();
        }
        i = j;
    }
    (rows, info)
}

/// Memory for weighed documents in [`judged_pairs`]: past it, documents are
/// loaded when their pair comes and let go after it. Ordinary texts never fill
/// it (thousands of documents); near-copies of 10 MB texts (about 210 MB each
/// weighed) would otherwise be held by the dozen.
const PAIRS_CACHE_BYTES: usize = 256 * 1024 * 1024;

/// The weighed documents of [`judged_pairs`], with the memory they hold.
#[derive(Default)]
struct DocCache {
    docs: HashMap<u32, (Rc<WithAuthority>, usize)>,
    bytes: usize,
}

impl DocCache {
    fn has(&self, n: u32) -> bool {
        self.docs.contains_key(&n)
    }
    fn get(&self, n: u32) -> Option<Rc<WithAuthority>> {
        self.docs.get(&n).map(|(w, _)| w.clone())
    }
    fn full(&self) -> bool {
        self.bytes > PAIRS_CACHE_BYTES
    }
    fn insert(&mut self, n: u32, w: Rc<WithAuthority>) {
        let size = w.w.heap_bytes();
        if let Some((_, old)) = self.docs.insert(n, (w, size)) {
            self.bytes -= old;
        }
        self.bytes += size;
    }
    fn remove(&mut self, n: u32) {
        if let Some((_, size)) = self.docs.remove(&n) {
            self.bytes -= size;
        }
    }
    fn clear(&mut self) {
        self.docs.clear();
        self.bytes = 0;
    }
}

/// Pairs judged between two checks for interrupts when one document has many
/// candidates (a pair is a few microseconds).
const PAIRS_PER_CHECK: usize = 1024;

/// NOTICEs of `dedup.enable`'s backfill as it finds and judges the pairs (every
/// 10 %, once a phase has run for [`PROGRESS_AFTER`]): the part that takes long
/// on templated rows (minutes for 20,000, where an audit found no sign of life).
/// The analysts' functions print none.
struct Progress {
    /// "enable public.news: duplicates, candidates", or None for no notices.
    label: Option<String>,
    total: u64,
    next_pct: u64,
    started: std::time::Instant,
}

/// How long a phase of the backfill runs before it reports its progress.
const PROGRESS_AFTER: std::time::Duration = std::time::Duration::from_secs(5);

impl Progress {
    fn new(tbl: pg_sys::Oid, phase: &str, pairing: Pairing, total: u64) -> Self {
        let label = (pairing == Pairing::BestEarlier && total > 0).then(|| {
            let name = lookup::relation_text(tbl).unwrap_or_default();
            format!("enable {name}: duplicates, {phase}")
        });
        Progress {
            label,
            total,
            next_pct: 10,
            started: std::time::Instant::now(),
        }
    }

    /// `done` of `total`: a NOTICE at each 10 % passed (not at 100 %: the
    /// phase's end says it).
    fn update(&mut self, done: u64, unit: &str) {
        let Some(label) = &self.label else { return };
        let pct = done.saturating_mul(100) / self.total.max(1);
        if pct >= self.next_pct && pct < 100 && self.started.elapsed() >= PROGRESS_AFTER {
            pgrx::ereport!(
                NOTICE,
                PgSqlErrorCode::ERRCODE_SUCCESSFUL_COMPLETION,
                format!(
                    "{label} {}% ({done} of {} {unit})",
                    pct / 10 * 10,
                    self.total
                )
            );
            self.next_pct = pct / 10 * 10 + 10;
        }
    }
}

/// Which candidates each row is paired with (see [`candidate_edges`]).
#[derive(Clone, Copy, PartialEq)]
enum Pairing {
    /// Its best matches among all rows.
    Best,
    /// Its best matches among the rows before it (the backfill).
    BestEarlier,
}

/// Candidate pairs `(a, b)` with a < b by key, as indices into the returned keys.
/// Checks for interrupts once per batch of 10,000 rows fetched (the executor
/// checks while it produces them).
fn candidate_edges(
    cfg: &crate::pg::ingest::TableConfig,
    pairing: Pairing,
) -> (Vec<String>, Vec<(u32, u32)>) {
    // The LATERAL subquery holds only the signature match, so its one index path is
    // the GIN index; its LIMIT keeps it from being flattened into a join where
    // `a.key < b.key` lets the planner walk the primary key instead. GIN cannot cost
    // a match against a value it has not seen, so the planner may still prefer to
    // filter every row of b: seqscan is off for this query alone. Either O(N²) plan
    // took 21-29 s for 5,000 rows, against about 1 s through the index.
    // Under a time window (see `crate::window`) a pair is a candidate only when
    // the two times are within it, or one is missing, as for the trigger. Times are
    // read as the trigger reads them (`dedup._published`: text that is not a time
    // and the infinities are no time, a timestamp is UTC whatever the session's
    // TimeZone). `a_time` is how the query names a's time column.
    let time = |col: &str| format!("dedup._published({col})");
    let window_clause = |a_time: &str| match (&cfg.columns.published_at, cfg.window) {
        // The distance, not `a ± window`: a time near the end of timestamptz's
        // range plus a window (or a window of millions of years) overflows
        // (22008), and one such row failed the analyst functions for the table.
        (Some(col), Some(w)) => format!(
            " AND ({a} IS NULL OR {b} IS NULL OR \
             pg_catalog.abs(pg_catalog.date_part('epoch', {b} - {a})) <= {s})",
            a = time(&if a_time.is_empty() {
                format!("a.{}", pgrx::spi::quote_identifier(col))
            } else {
                a_time.to_owned()
            }),
            b = time(&format!("b.{}", pgrx::spi::quote_identifier(col))),
            s = w as f64 / 1e6
        ),
        _ => String::new(),
    };
    // Which rows b a row a is paired with: any other row, or for the backfill the
    // rows before it in the order `decide::originals` replays them (publication
    // time, none last, then key), which are the rows the trigger would have compared
    // it with. `a_key` and `a_time` name a's key and time in the query.
    let before = |a_key: &str, a_time: &str| {
        let kb = cfg.key.expr("b");
        match (pairing, &cfg.columns.published_at) {
            (Pairing::Best, _) => format!("{kb} IS DISTINCT FROM {a_key}"),
            (Pairing::BestEarlier, None) => format!("{kb} < {a_key}"),
            (Pairing::BestEarlier, Some(col)) => format!(
                "(coalesce({b}, 'infinity'::timestamptz), {kb}) \
                 < (coalesce({a}, 'infinity'::timestamptz), {a_key})",
                b = time(&format!("b.{}", pgrx::spi::quote_identifier(col))),
                a = time(a_time)
            ),
        }
    };
    let limit = crate::pg::ingest::MAX_CANDIDATES;
    let sql = if cfg.distributed {
        // Citus joins a distributed table with itself only on the distribution
        // column: the signatures (and times) go to every worker as an intermediate
        // result, which each shard joins through its own signature index. Its
        // matches come back to the coordinator as another intermediate result (a
        // file), where each row keeps its best MAX_CANDIDATES, as on one node: the
        // ranking is a sort that spills to disk, not the pairs held in this backend.
        let (ka, kb) = (cfg.key.expr("a"), cfg.key.expr("b"));
        let time = match &cfg.columns.published_at {
            Some(col) => format!(", a.{} AS pub", pgrx::spi::quote_identifier(col)),
            None => String::new(),
        };
        format!(
            "WITH a AS MATERIALIZED (SELECT {ka} AS key, {ka}::text AS k, a.dedup_sig{time} FROM {t} a \
                                     WHERE a.dedup_doc IS NOT NULL), \
                  m AS MATERIALIZED (SELECT a.k, {kb}::text AS kb, a.key < {kb} AS a_first, {kb} AS bkey, \
                                            dedup.shared_keys(b.dedup_sig, a.dedup_sig) AS shared \
                                     FROM a JOIN {t} b ON b.dedup_sig OPERATOR(dedup.%) a.dedup_sig \
                                     WHERE b.dedup_doc IS NOT NULL AND {before}{in_window}) \
             SELECT k, kb, a_first FROM (SELECT k, kb, a_first, row_number() OVER \
                 (PARTITION BY k ORDER BY shared DESC, bkey) AS rank FROM m) r \
             WHERE rank <= {limit}",
            t = cfg.tname,
            before = before("a.key", "a.pub"),
            in_window = window_clause("a.pub"),
        )
    } else {
        // Each row with its best MAX_CANDIDATES matches, as the trigger compares a
        // new row: a table of templated texts, each matching every other, gives
        // MAX_CANDIDATES pairs a row rather than N² / 2 (which took a backend
        // past 20 GB at 30,000 rows).
        let (ka, kb) = (cfg.key.expr("a"), cfg.key.expr("b"));
        let a_time = match &cfg.columns.published_at {
            Some(col) => format!("a.{}", pgrx::spi::quote_identifier(col)),
            None => String::new(),
        };
        // The backfill reads every row, those without candidates too (a NULL
        // match), so that its progress counts them.
        format!(
            "SELECT {ka}::text, b.k, {ka} < b.key FROM {t} a {join} \
             LATERAL (SELECT {kb} AS key, {kb}::text AS k FROM {t} b \
                      WHERE b.dedup_sig OPERATOR(dedup.%) a.dedup_sig AND b.dedup_doc IS NOT NULL \
                      AND {before}{in_window} \
                      ORDER BY dedup.shared_keys(b.dedup_sig, a.dedup_sig) DESC, {kb} LIMIT {limit}) b {on} \
             WHERE a.dedup_doc IS NOT NULL",
            t = cfg.tname,
            before = before(&ka, &a_time),
            in_window = window_clause(""),
            join = if pairing == Pairing::BestEarlier { "LEFT JOIN" } else { "CROSS JOIN" },
            on = if pairing == Pairing::BestEarlier { "ON true" } else { "" },
        )
    };
    let mut ids: HashMap<String, u32> = HashMap::new();
    let mut keys: Vec<String> = Vec::new();
    let mut edges = Vec::new();
    let mut id = |k: String, keys: &mut Vec<String>| -> u32 {
        if let Some(&i) = ids.get(&k) {
            return i;
        }
        let i = keys.len() as u32;
        keys.push(k.clone());
        ids.insert(k, i);
        i
    };
    // As the table's owner: planning a query on the table runs what its owner put
    // there (see `privilege::as_table_owner`). The setting is saved and put back as
    // a function's SET clause does, which a parallel query allows.
    // The `%` operator reads the session settings: the collection's are put in
    // force, as for the trigger's lookup (a caller's SET would change the pairs).
    let matching = crate::pg::guc_scope::MatchSettings::of(&cfg.coll.limits);
    let [min_keys, threshold] = matching.pairs();
    // The plan is one GIN bitmap lookup per row, in a nested loop: a caller's
    // `enable_bitmapscan` or `enable_nestloop` off made each lookup a scan of the
    // whole table (an audit: 0.5 s became 16 s at 6,000 rows). The disabled
    // sequential scan of the outer rows costs the plan past JIT's thresholds,
    // which compiled it on every call (150 ms on a table of two rows).
    let settings = [
        (c"enable_seqscan", c"off"),
        (c"enable_bitmapscan", c"on"),
        (c"enable_nestloop", c"on"),
        (c"jit", c"off"),
        min_keys,
        threshold,
    ];
    // The backfill's progress: the rows whose candidates were read (a row's
    // matches come together, one LATERAL lookup each), of those with a document.
    let rows = if pairing == Pairing::BestEarlier && !cfg.distributed {
        privilege::as_table_owner(cfg.tbl, || {
            lookup::one_with_args::<i64>(
                &format!(
                    "SELECT count(*) FROM {} WHERE dedup_doc IS NOT NULL",
                    cfg.tname
                ),
                &[],
            )
            .ok()
            .flatten()
            .unwrap_or(0)
        })
    } else {
        0
    };
    let mut finding = Progress::new(cfg.tbl, "candidates", pairing, rows.max(0) as u64);
    let (mut rows_read, mut last_a) = (0u64, None::<String>);
    privilege::as_table_owner(cfg.tbl, || {
        crate::pg::guc_scope::with_settings(&settings, || {
            Spi::connect(|c| {
                let mut cur = c.open_cursor(sql.as_str(), &[]);
                loop {
                    pgrx::check_for_interrupts!();
                    finding.update(rows_read, "rows");
                    let more = crate::pg::fetch_batch(&mut cur, 10_000, |batch| {
                        let more = !batch.is_empty();
                        for r in batch {
                            let Some(ka) = r.get::<String>(1).ok().flatten() else {
                                continue;
                            };
                            if last_a.as_deref() != Some(ka.as_str()) {
                                rows_read += 1;
                                last_a = Some(ka.clone());
                            }
                            // A row without a candidate (the backfill's NULL match).
                            let Some(kb) = r.get::<String>(2).ok().flatten() else {
                                continue;
                            };
                            let a = id(ka, &mut keys);
                            let b = id(kb, &mut keys);
                            // Each pair as (smaller key, larger key).
                            if r.get::<bool>(3).ok().flatten().unwrap_or(true) {
                                edges.push((a, b));
                            } else {
                                edges.push((b, a));
                            }
                        }
                        more
                    })
                    .unwrap_or_else(|e| spi_err(e));
                    if !more {
                        break;
                    }
                }
            })
        })
    });
    // A pair in both rows' lists is judged once.
    let fetched = edges.len();
    edges.sort_unstable();
    edges.dedup();
    pgrx::debug1!(
        "candidate pairs of {}: {fetched} matches, {} pairs, {} rows",
        cfg.tname,
        edges.len(),
        keys.len()
    );
    (keys, edges)
}

/// The duplicate pairs of an enabled table, each row with its best candidates
/// (see [`candidate_edges`]). Public as `dedup.pairs` (sql/ingest.sql).
/// Can be cancelled while it finds and judges the pairs (see `judged_pairs`).
#[pg_extern(stable)]
pub fn _pairs(
    tbl: Option<pg_sys::Oid>,
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
    let tbl = required(tbl, "tbl");
    privilege::require_execute("dedup.pairs(pg_catalog.regclass, pg_catalog.text)");
    privilege::require_read(tbl, "dedup.pairs");
    crate::pg::ingest::require_collection_read_of(tbl, "dedup.pairs");
    if let Some(m) = model {
        crate::pg::models::require_readable(m, "dedup.pairs");
    }
    let (rows, _) = as_owner(|| judged_pairs(tbl, model, Pairing::Best));
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

/// A judged pair over member indices: `(a, b, score_ab, score_ba, exact)`.
type Judged = (usize, usize, f64, f64, bool);

/// The documents of the pairs judged duplicates in some direction, and those pairs.
fn duplicate_graph(rows: Vec<PairRow>, info: &HashMap<String, Info>) -> (Vec<Member>, Vec<Judged>) {
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
                rank: 0,
                published_at: inf.and_then(|x| x.published_at),
                authority: inf.map(|x| x.authority).unwrap_or(0.5),
            });
            index.insert(k, i);
            i
        };
        let (a, b) = (id(p.a), id(p.b));
        edges.push((a, b, p.score_ab, p.score_ba, p.exact));
    }
    (members, edges)
}

/// A query over the rows of `cfg`'s table whose keys are in `$1` (their text
/// forms): each row's key as text, then `also` (a column list, or nothing), where
/// `filter`, then `tail`. By key: a primary key index serves the join, in each
/// partition of a partitioned table (Citus plans a distributed table's filter by
/// an array, not a join with one).
fn rows_by_key(
    cfg: &crate::pg::ingest::TableConfig,
    also: &str,
    filter: &str,
    tail: &str,
) -> String {
    let k = cfg.key.expr("r");
    let also = if also.is_empty() {
        String::new()
    } else {
        format!(", {also}")
    };
    let (t, ty) = (&cfg.tname, &cfg.key.sql_type);
    if cfg.distributed {
        format!("SELECT {k}::text{also} FROM {t} r WHERE {k} = ANY($1::text[]::{ty}[]) AND {filter} {tail}")
    } else {
        let eq = match &cfg.key.composite {
            None => format!("{k} = w"),
            Some(_) => cfg.key.equal("r", "w"),
        };
        format!("SELECT {k}::text{also} FROM {t} r JOIN unnest($1::text[]::{ty}[]) AS w ON {eq} WHERE {filter} {tail}")
    }
}

/// Sets each member's [`Member::rank`]: its key's place in the key type's own
/// order, as the table's owner reads the rows (`ORDER BY` the key expression, so a
/// text key sorts by its column's collation, and a composite one field by field as
/// `duplicate_of`'s type, with that type's collations: as the candidate query's
/// `a.key < b.key` compares them).
fn rank_members(tbl: pg_sys::Oid, members: &mut [Member]) {
    if members.len() < 2 {
        return;
    }
    let cfg = table_config(tbl);
    let sql = rows_by_key(&cfg, "", "true", &format!("ORDER BY {}", cfg.key.expr("r")));
    let keys: Vec<String> = members.iter().map(|m| m.key.clone()).collect();
    let ordered: Vec<String> = crate::pg::guc_scope::exact_floats(|| {
        privilege::as_table_owner(cfg.tbl, || {
            crate::pg::guc_scope::key_lookups(|| {
                Spi::connect(|c| {
                    c.select(&sql, None, &[keys.into()])
                        .unwrap_or_else(|e| spi_err(e))
                        .filter_map(|r| r.get::<String>(1).ok().flatten())
                        .collect()
                })
            })
        })
    });
    let rank: HashMap<&str, u32> = ordered
        .iter()
        .enumerate()
        .map(|(i, k)| (k.as_str(), u32::try_from(i + 1).unwrap_or(u32::MAX)))
        .collect();
    for m in members.iter_mut() {
        m.rank = rank.get(m.key.as_str()).copied().unwrap_or(u32::MAX);
    }
}

/// Connected groups of duplicates; the original is the earliest document, then the
/// most authoritative. Public as `dedup.groups`. Can be cancelled while it finds
/// and judges the pairs (see `judged_pairs`); the grouping after is near-linear.
#[pg_extern(stable)]
pub fn _groups(
    tbl: Option<pg_sys::Oid>,
    model: Option<&str>,
) -> TableIterator<
    'static,
    (
        name!(key, String),
        name!(group_id, i64),
        name!(is_original, bool),
    ),
> {
    let tbl = required(tbl, "tbl");
    privilege::require_execute("dedup.groups(pg_catalog.regclass, pg_catalog.text)");
    privilege::require_read(tbl, "dedup.groups");
    crate::pg::ingest::require_collection_read_of(tbl, "dedup.groups");
    if let Some(m) = model {
        crate::pg::models::require_readable(m, "dedup.groups");
    }
    let (rows, info) = as_owner(|| judged_pairs(tbl, model, Pairing::Best));
    let (mut members, judged) = duplicate_graph(rows, &info);
    as_owner(|| rank_members(tbl, &mut members));
    let edges: Vec<(usize, usize)> = judged.iter().map(|&(a, b, ..)| (a, b)).collect();
    let out: Vec<_> = decide::groups(&members, &edges)
        .into_iter()
        .map(|(i, g, o)| (members[i].key.clone(), g, o))
        .collect();
    TableIterator::new(out)
}

/// Each row that duplicates an earlier one, with the original the trigger would
/// have given it, and each row an earlier one duplicates, with the verdict the
/// trigger would have recorded (see [`decide::originals`]): what `dedup.enable`
/// marks when it backfills a table (the other rows are `distinct`). Can be
/// cancelled while it finds and judges the pairs.
#[pg_extern(stable)]
pub fn _originals(
    tbl: Option<pg_sys::Oid>,
    model: Option<&str>,
) -> TableIterator<
    'static,
    (
        name!(key, String),
        name!(original, Option<String>),
        name!(verdict, verdict),
    ),
> {
    let tbl = required(tbl, "tbl");
    // enable's backfill: closed with enable, not with groups.
    privilege::require_execute(privilege::ENABLE);
    privilege::require_read(tbl, "dedup.enable");
    // The verdicts weigh with the collection's statistics (enable's caller owns
    // every table of it).
    crate::pg::ingest::require_collection_read_of(tbl, "dedup.enable");
    if let Some(m) = model {
        crate::pg::models::require_readable(m, "dedup.groups");
    }
    let (rows, info) = as_owner(|| judged_pairs(tbl, model, Pairing::BestEarlier));
    let (mut members, judged) = duplicate_graph(rows, &info);
    as_owner(|| rank_members(tbl, &mut members));
    let edges: Vec<(usize, usize, f64, bool)> = judged
        .iter()
        .flat_map(|&(a, b, ab, ba, exact)| [(a, b, ab, exact), (b, a, ba, exact)])
        .collect();
    let out: Vec<_> = decide::originals(&members, &edges)
        .into_iter()
        .map(|m| {
            (
                members[m.member].key.clone(),
                m.original.map(|o| members[o].key.clone()),
                verdict_of(m.new_dup, m.cand_dup),
            )
        })
        .collect();
    TableIterator::new(out)
}

/// Lande et al.'s symmetry and transitivity of the duplicate relation of a table.
/// Public as `dedup.matrix_quality`. Can be cancelled while it finds and judges
/// the pairs (see `judged_pairs`) and while it counts paths (cubic in the size of
/// a dense group: `metrics::matrix_quality_checked`, about every millisecond).
#[pg_extern(stable)]
pub fn _matrix_quality(
    tbl: Option<pg_sys::Oid>,
    model: Option<&str>,
) -> TableIterator<
    'static,
    (
        name!(pairs, i64),
        name!(symmetry, f64),
        name!(transitivity, f64),
    ),
> {
    let tbl = required(tbl, "tbl");
    privilege::require_execute("dedup.matrix_quality(pg_catalog.regclass, pg_catalog.text)");
    privilege::require_read(tbl, "dedup.matrix_quality");
    crate::pg::ingest::require_collection_read_of(tbl, "dedup.matrix_quality");
    if let Some(m) = model {
        crate::pg::models::require_readable(m, "dedup.matrix_quality");
    }
    let (rows, _) = as_owner(|| judged_pairs(tbl, model, Pairing::Best));
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
    let q = crate::metrics::matrix_quality_checked(&edges, &mut crate::pg::interrupts())
        .unwrap_or_else(|e| crate::pg::raise(e));
    TableIterator::once((q.pairs, q.symmetry, q.transitivity))
}

/// The rows of an enabled table marked as duplicates, for `dedup.status`: counted
/// as the table's owner (planning a query on the table runs what its owner put
/// there, see `privilege::as_table_owner`), for a caller that may read the whole
/// table or has the configuration rights; others get 42501.
#[pg_extern(stable, strict)]
fn _marked_rows(tbl: pg_sys::Oid) -> i64 {
    let role = privilege::caller();
    if !privilege::may_read(tbl, role) && !privilege::reads_configuration(role) {
        privilege::require_read(tbl, "dedup.status");
    }
    let name = lookup::one_with_args::<String>(
        "SELECT pg_catalog.format('%I.%I', n.nspname, c.relname) FROM pg_catalog.pg_class c \
         JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = $1",
        &[tbl.into()],
    )
    .ok()
    .flatten()
    .unwrap_or_default();
    // A table without duplicate_of (dropped while an event trigger was disabled)
    // counts none, rather than failing dedup.status for every role.
    let has_marks = lookup::one_with_args::<bool>(
        "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute WHERE attrelid = $1 \
                        AND attname = 'duplicate_of' AND attnum > 0 AND NOT attisdropped)",
        &[tbl.into()],
    )
    .ok()
    .flatten()
    .unwrap_or(false);
    if name.is_empty() || !has_marks {
        return 0;
    }
    let sql = format!("SELECT count(*) FROM {name} WHERE duplicate_of IS NOT NULL");
    privilege::as_table_owner(tbl, || lookup::one::<i64>(&sql))
        .ok()
        .flatten()
        .unwrap_or(0)
}
