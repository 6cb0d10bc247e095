//! Deduplication at insert time: the per-row check behind the trigger
//! ([`check_row`], called by src/pg/trigger.rs), `is_duplicate` and
//! `find_original`. `enable`/`disable` are SQL (sql/ingest.sql).

use crate::decide::{self, Judged};
use crate::document::Document;
use crate::error::DedupError;
use crate::features::N_FEATURES;
use crate::gucs;
use crate::pg::cache;
use crate::pg::collections::{self, Collection};
use crate::pg::config_cache;
use crate::pg::keylocks;
use crate::pg::lookup;
use crate::pg::models::{self, verdict, verdict_of, Authorities, Loaded, WithAuthority};
use crate::pg::partitions;
use crate::pg::privilege::{self, as_owner};
use crate::pg::raise;
use crate::pg::scan;
use crate::pg::signature::options_of;
use crate::pg::snapshot_setup;
use crate::pg::stats;
use crate::pg::types::{DocRef, DocumentDatum, SignatureDatum, StoredDoc};
use crate::pg::weigher::{self, Sketched, Weigher};
use crate::signature::Signature;
use crate::text::{self, AnalyzeOptions};
use crate::window::Interval;
use pgrx::prelude::*;
use std::rc::Rc;

/// Candidates examined per new document, best signature matches first.
pub const MAX_CANDIDATES: i64 = 50;

/// Stored bytes of candidate documents examined per new document, best matches
/// first (the first is always examined): a weighed document takes about 14 times
/// its stored size (a 10 MB text of 1.5 million distinct words, 210 MB), so 50
/// near-copies of such a text would take a backend past 10 GB. Ordinary texts
/// never come near it (50 candidates of a few kilobytes).
const CANDIDATE_BYTES: usize = 32 * 1024 * 1024;

/// Keeps the first of `rows` whose documents fit in [`CANDIDATE_BYTES`] (at
/// least one).
fn keep_within_budget<T>(rows: &mut Vec<(T, DocRef)>) {
    decide::keep_within_budget(rows, |(_, d)| d.raw_size(), CANDIDATE_BYTES);
}

/// How a table was enabled (`dedup.enabled_tables`).
pub struct TableConfig {
    /// The enabled table (for a partition of an enabled partitioned table, that
    /// partitioned table: the trigger fires on the partition, the configuration and
    /// the statement it follows are the enabled table's).
    pub tbl: pg_sys::Oid,
    /// The table's name, schema-qualified and quoted for SQL (it is kept across
    /// statements, so it must not depend on `search_path`).
    pub tname: String,
    /// The primary key.
    pub key: Key,
    pub coll: Collection,
    pub model: Option<String>,
    /// Column names, unquoted, as `enable` recorded them (the trigger's view).
    pub columns: Columns,
    pub action: Action,
    /// The time window in microseconds (`enable`'s `time_window`; see
    /// `crate::window`).
    pub window: Option<i64>,
    /// The table is partitioned (a row may move between its partitions).
    pub partitioned: bool,
    /// The table is a Citus distributed table (see `pg::citus`).
    pub distributed: bool,
    /// How to look candidates up without a query (None: a signature index is
    /// missing or unusable, and the SQL form runs).
    pub scan: Option<scan::Target>,
    /// The types the dedup columns must have: `dedup_doc`, `dedup_sig`,
    /// `dedup_verdict`, and `duplicate_of` (the key's type).
    pub column_types: [pg_sys::Oid; 4],
}

/// An enabled table's primary key (see `crate::rowkey`).
pub struct Key {
    /// Its columns, unquoted, in key order.
    pub columns: Vec<String>,
    /// The composite type of the key columns that `duplicate_of` has when there are
    /// several (schema-qualified and quoted), None for a single column.
    pub composite: Option<String>,
    /// The type of `duplicate_of` as SQL spells it.
    pub sql_type: String,
    /// How equal keys are told apart when one key has several text forms (a
    /// `numeric` key's 1 and 1.0, text under a nondeterministic collation): an
    /// `ORDER BY` list over `u.k`, a key of `sql_type`, whose ties are the equal
    /// keys (see [`same_keys`]). None when equal keys have one text form.
    pub rank_order: Option<String>,
}

impl Key {
    /// The key of the row named `alias`, as an SQL expression of `duplicate_of`'s
    /// type (whose text form is the key's text).
    pub fn expr(&self, alias: &str) -> String {
        let col = |c: &String| format!("{alias}.{}", pgrx::spi::quote_identifier(c));
        match &self.composite {
            None => self.columns.first().map(col).unwrap_or_default(),
            Some(t) => format!(
                "ROW({})::{t}",
                self.columns.iter().map(col).collect::<Vec<_>>().join(", ")
            ),
        }
    }

    /// An SQL condition: the key of the row named `alias` equals the key of the row
    /// named `other` (column by column, so that a primary key index serves it).
    pub fn equal(&self, alias: &str, other: &str) -> String {
        self.columns
            .iter()
            .map(|c| {
                let c = pgrx::spi::quote_identifier(c);
                format!("{alias}.{c} = {other}.{c}")
            })
            .collect::<Vec<_>>()
            .join(" AND ")
    }
}

/// The columns `enable` was given.
pub struct Columns {
    pub body: String,
    pub title: Option<String>,
    pub published_at: Option<String>,
    pub source: Option<String>,
    pub model: Option<String>,
}

/// What the trigger does with a duplicate (`enable`'s `action`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Action {
    Mark,
    Skip,
    Error,
}

/// Raises 42501 unless the caller may read the statistics of the collection of
/// the enabled table `tbl` (or of the enabled table it is a partition of): the
/// functions that judge its rows weigh them against the whole collection, which
/// may read other tables too ([`privilege::require_collection_read`]).
pub fn require_collection_read_of(tbl: pg_sys::Oid, what: &str) {
    let coll = as_owner(|| table_config(tbl).coll.name.clone());
    privilege::require_collection_read(&coll, what);
}

/// The configuration of an enabled table; raises 55000 when it is not enabled.
pub fn table_config(tbl: pg_sys::Oid) -> Rc<TableConfig> {
    match enabled_table(tbl) {
        Some(cfg) => cfg,
        None => {
            let name = lookup::relation_text(tbl);
            raise(DedupError::NotEnabled {
                msg: format!(
                    "table {} is not enabled for deduplication",
                    name.unwrap_or_default()
                ),
                hint: Some("call dedup.enable(table, body_column) first".into()),
            })
        }
    }
}

thread_local! {
    /// By table and the session's time zone: the partitions' time spans turn date
    /// and timestamp bounds into times in it (see `times::to_timestamptz`).
    static CONFIGS: std::cell::RefCell<config_cache::Kept<(u32, usize), TableConfig>> =
        std::cell::RefCell::new(config_cache::Kept::default());
}

/// The configuration of `tbl` (kept per backend, see `config_cache`), or None when
/// it is not enabled (not cached: that is an error or a trigger left behind). For a
/// partition of an enabled partitioned table (at any depth) it is that table's.
pub fn enabled_table(tbl: pg_sys::Oid) -> Option<Rc<TableConfig>> {
    // SAFETY: reads the pointer to the session's time zone (`SET TimeZone`
    // replaces it; the same zone keeps its pointer).
    let tz = unsafe { pg_sys::session_timezone } as usize;
    config_cache::get_or(&CONFIGS, (tbl.to_u32(), tz), || {
        // Read with the owner's rights (the writer needs none on the extension's
        // tables); a cached configuration costs no switch.
        let cfg = as_owner(|| read_table_config(tbl))?;
        // ATTACH and DETACH PARTITION invalidate both tables' relcache entries.
        config_cache::watch(tbl);
        config_cache::watch(cfg.tbl);
        Some(cfg)
    })
}

/// Reads the row of `dedup.enabled_tables` of `tbl`, or of the partitioned table
/// `tbl` is a partition of, and its collection; None when neither is enabled.
pub(crate) fn read_table_config(tbl: pg_sys::Oid) -> Option<TableConfig> {
    // The two columns 0.2.0 added are read through the row's jsonb, so that the new
    // library still reads a 0.1.0 catalog until ALTER EXTENSION UPDATE runs.
    type Row = (
        pg_sys::Oid,
        String,
        String,
        Option<String>,
        String,
        Columns,
        Option<f64>,
        Key,
    );
    let row: Option<Row> = Spi::connect(|c| {
        let t = cache::select(
            c,
            "SELECT e.tbl::oid, format('%I.%I', n.nspname, r.relname), c.name, e.model, e.action, \
                    e.body_column::text, e.title_column::text, e.published_at_column::text, \
                    e.source_column::text, e.model_column::text, \
                    extract(epoch FROM e.t_window)::float8, e.key_column::text, \
                    (SELECT array_agg(a.attname::text ORDER BY a.attnum) FROM pg_catalog.pg_type y \
                     JOIN pg_catalog.pg_attribute a ON a.attrelid = y.typrelid AND a.attnum > 0 AND NOT a.attisdropped \
                     WHERE y.oid = e.k_type), \
                    e.k_type::pg_catalog.text, \
                    coalesce(e.k_type::pg_catalog.text, (SELECT pg_catalog.format_type(a.atttypid, a.atttypmod) \
                     FROM pg_catalog.pg_attribute a WHERE a.attrelid = e.tbl AND a.attname = e.key_column AND NOT a.attisdropped)) \
             FROM (SELECT x.*, (to_jsonb(x) ->> 'key_type')::pg_catalog.regtype AS k_type, \
                          (to_jsonb(x) ->> 'time_window')::pg_catalog.interval AS t_window \
                   FROM dedup.enabled_tables x) e \
             JOIN dedup.collections c ON c.id = e.collection_id \
             JOIN pg_catalog.pg_class r ON r.oid = e.tbl JOIN pg_catalog.pg_namespace n ON n.oid = r.relnamespace \
             WHERE e.tbl IN (SELECT $1 UNION ALL SELECT a.relid FROM pg_catalog.pg_partition_ancestors($1) a) \
             ORDER BY e.tbl = $1 DESC LIMIT 1",
            Some(1),
            &[tbl.into()],
        );
        if t.is_empty() {
            return None;
        }
        let r = t.first();
        let s = |i: usize| r.get::<String>(i).ok().flatten();
        let composite = s(14);
        let key = Key {
            columns: match &composite {
                Some(_) => r.get::<Vec<String>>(13).ok().flatten().unwrap_or_default(),
                None => s(12).into_iter().collect(),
            },
            composite,
            sql_type: s(15).unwrap_or_else(|| "text".into()),
            rank_order: None,
        };
        Some((
            r.get::<pg_sys::Oid>(1).ok().flatten()?,
            s(2).unwrap_or_default(),
            s(3).unwrap_or_default(),
            s(4),
            s(5).unwrap_or_default(),
            Columns {
                body: s(6).unwrap_or_default(),
                title: s(7),
                published_at: s(8),
                source: s(9),
                model: s(10),
            },
            r.get::<f64>(11).ok().flatten(),
            key,
        ))
    });
    // A shard of a Citus distributed table: the distributed table's configuration.
    let Some((root, tname, coll, model, action, columns, window, mut key)) = row else {
        return crate::pg::citus::logical_table(tbl).and_then(read_table_config);
    };
    // The name the table has now, which statements are written with: the
    // snapshot's may be an old one (a REPEATABLE READ transaction, the table
    // renamed since), or name another table.
    let tname = lookup::current_name(root).unwrap_or(tname);
    let action = match action.as_str() {
        "skip" => Action::Skip,
        "error" => Action::Error,
        _ => Action::Mark,
    };
    let window = window.map(|secs| (secs * 1e6).round() as i64);
    require_builtin_types(root, &tname, &key, columns.published_at.as_deref());
    key.rank_order = rank_order(root, &key);
    let column_types = Spi::connect(|c| {
        let t = cache::select(
            c,
            "SELECT 'dedup.document'::pg_catalog.regtype::oid, 'dedup.signature'::pg_catalog.regtype::oid, \
                    'dedup.verdict'::pg_catalog.regtype::oid, \
                    (SELECT atttypid FROM pg_catalog.pg_attribute WHERE attrelid = $1 AND attname = 'duplicate_of' AND NOT attisdropped)",
            Some(1),
            &[root.into()],
        );
        let r = t.first();
        let oid = |i: usize| {
            r.get::<pg_sys::Oid>(i)
                .ok()
                .flatten()
                .unwrap_or(pg_sys::InvalidOid)
        };
        [oid(1), oid(2), oid(3), oid(4)]
    });
    // A distributed table's rows are on the workers: the lookup is a query on the
    // distributed table, which Citus sends to every shard.
    let distributed = crate::pg::citus::is_distributed(root);
    let scan = if distributed {
        None
    } else {
        scan_target(
            root,
            &key,
            window.and(columns.published_at.as_deref()),
            column_types[3],
        )
    };
    Some(TableConfig {
        tbl: root,
        tname,
        key,
        coll: collections::load(&coll),
        model,
        columns,
        action,
        window,
        partitioned: partitions::is_partitioned(root),
        distributed,
        scan,
        column_types,
    })
}

/// Raises 0A000 unless the key columns, the time column and `duplicate_of` are of
/// built-in types, enums, or a composite of those. The extension reads and casts
/// them with its owner's rights (a key as text back to its type, a time to
/// timestamptz): a domain's CHECK or a cast the table's owner wrote would run with
/// them. Checked whenever the configuration is read, so a column's type changed
/// after `enable` is caught too.
fn require_builtin_types(tbl: pg_sys::Oid, tname: &str, key: &Key, time: Option<&str>) {
    let mut cols: Vec<String> = key.columns.clone();
    cols.extend(time.map(str::to_owned));
    cols.push("duplicate_of".into());
    let bad = Spi::connect(|c| {
        let t = cache::select(
            c,
            "SELECT a.attname::pg_catalog.text, pg_catalog.format_type(a.atttypid, a.atttypmod) \
             FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_type t ON t.oid = a.atttypid \
             WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped \
               AND a.attname::pg_catalog.text = ANY($2) \
               AND NOT (a.atttypid < 16384 OR t.typtype = 'e' \
                        OR (t.typtype = 'c' AND NOT EXISTS ( \
                              SELECT 1 FROM pg_catalog.pg_attribute m JOIN pg_catalog.pg_type mt ON mt.oid = m.atttypid \
                              WHERE m.attrelid = t.typrelid AND m.attnum > 0 AND NOT m.attisdropped \
                                AND NOT (m.atttypid < 16384 OR mt.typtype = 'e')))) \
             ORDER BY a.attnum LIMIT 1",
            Some(1),
            &[tbl.into(), cols.into()],
        );
        t.into_iter().next().map(|r| {
            (
                r.get::<String>(1).ok().flatten().unwrap_or_default(),
                r.get::<String>(2).ok().flatten().unwrap_or_default(),
            )
        })
    });
    if let Some((col, typ)) = bad {
        raise(DedupError::FeatureNotSupported {
            msg: format!("column \"{col}\" of table {tname} is of type {typ}, which pg_dedup does not read"),
            hint: Some(
                "the key columns, the time column and duplicate_of must be of built-in types or enums: a domain's checks or a cast of the table owner's would run with the extension owner's rights"
                    .into(),
            ),
        });
    }
}

/// Key types whose equal values have one text form (with a deterministic
/// collation, for the collatable ones). Any other (`numeric`, floats, `interval`,
/// `bpchar`, arrays, ranges...) is compared by value (see [`Key::rank_order`]).
const ONE_TEXT_FORM: [pg_sys::Oid; 15] = [
    pg_sys::INT2OID,
    pg_sys::INT4OID,
    pg_sys::INT8OID,
    pg_sys::OIDOID,
    pg_sys::TEXTOID,
    pg_sys::VARCHAROID,
    pg_sys::NAMEOID,
    pg_sys::CHAROID,
    pg_sys::UUIDOID,
    pg_sys::DATEOID,
    pg_sys::TIMESTAMPOID,
    pg_sys::TIMESTAMPTZOID,
    pg_sys::TIMEOID,
    pg_sys::BOOLOID,
    pg_sys::BYTEAOID,
];

/// [`Key::rank_order`] of the key columns of `tbl`.
fn rank_order(tbl: pg_sys::Oid, key: &Key) -> Option<String> {
    // Per key column in key order: its type, whether an enum, its collation
    // (qualified) and whether that is deterministic.
    type Col = (pg_sys::Oid, bool, Option<String>, bool);
    let cols: Vec<Col> = Spi::connect(|c| {
        cache::select(
            c,
            "SELECT a.atttypid, t.typtype = 'e', \
                    CASE WHEN a.attcollation <> 0 THEN pg_catalog.format('%I.%I', cn.nspname, co.collname) END, \
                    coalesce(co.collisdeterministic, true) \
             FROM pg_catalog.unnest($2::pg_catalog.text[]) WITH ORDINALITY AS x(name, i) \
             JOIN pg_catalog.pg_attribute a ON a.attrelid = $1 AND a.attname = x.name AND NOT a.attisdropped \
             JOIN pg_catalog.pg_type t ON t.oid = a.atttypid \
             LEFT JOIN pg_catalog.pg_collation co ON co.oid = a.attcollation \
             LEFT JOIN pg_catalog.pg_namespace cn ON cn.oid = co.collnamespace \
             ORDER BY x.i",
            None,
            &[tbl.into(), key.columns.clone().into()],
        )
        .map(|r| {
            (
                r.get::<pg_sys::Oid>(1).ok().flatten().unwrap_or_default(),
                r.get::<bool>(2).ok().flatten().unwrap_or(false),
                r.get::<String>(3).ok().flatten(),
                r.get::<bool>(4).ok().flatten().unwrap_or(true),
            )
        })
        .collect()
    });
    let one_form = |(ty, is_enum, _, deterministic): &Col| {
        (*is_enum || ONE_TEXT_FORM.contains(ty)) && *deterministic
    };
    if cols.len() == key.columns.len() && cols.iter().all(one_form) {
        return None;
    }
    let order = key
        .columns
        .iter()
        .zip(
            cols.iter()
                .map(|c| c.2.as_deref())
                .chain(std::iter::repeat(None)),
        )
        .map(|(name, coll)| {
            let expr = match key.composite {
                None => "u.k".to_owned(),
                Some(_) => format!("(u.k).{}", pgrx::spi::quote_identifier(name)),
            };
            match coll {
                Some(c) => format!("{expr} COLLATE {c}"),
                None => expr,
            }
        })
        .collect::<Vec<_>>()
        .join(", ");
    Some(order)
}

/// For each of `texts` (text forms of keys of `cfg`'s table), a number that equal
/// keys share: their rank in the key type's own order ([`Key::rank_order`]), in
/// which equal keys tie. Each casts back: they were all printed in this session,
/// the check's own key and its candidates' keys and marks.
fn same_keys(
    cfg: &TableConfig,
    order: &str,
    texts: &[&str],
) -> std::collections::HashMap<String, i64> {
    let sql = format!(
        "SELECT u.t, pg_catalog.dense_rank() OVER (ORDER BY {order}) \
         FROM (SELECT x.t, x.t::{ty} AS k FROM pg_catalog.unnest($1::pg_catalog.text[]) AS x(t)) u",
        ty = cfg.key.sql_type
    );
    let texts: Vec<&str> = texts.to_vec();
    crate::pg::guc_scope::pinned_path(|| {
        Spi::connect(|c| {
            cache::select(c, &sql, None, &[texts.into()])
                .filter_map(|r| Some((r.get::<String>(1).ok()??, r.get::<i64>(2).ok()??)))
                .collect()
        })
    })
}

/// What a direct candidate lookup reads (see `pg::scan`): each leaf's signature
/// index and attribute numbers, or None when a leaf has no valid, whole-column GIN
/// index with `dedup.signature_ops` on `dedup_sig`, or the key columns' types do
/// not match `duplicate_of` (then the SQL form runs). `time_column` is the column a
/// window compares, when the table has one.
fn scan_target(
    tbl: pg_sys::Oid,
    key: &Key,
    time_column: Option<&str>,
    dup_type: pg_sys::Oid,
) -> Option<scan::Target> {
    let key_types: Vec<(pg_sys::Oid, pg_sys::Oid)> = Spi::connect(|c| {
        key.columns
            .iter()
            .map(|k| {
                let t = cache::select(
                    c,
                    "SELECT atttypid, attcollation FROM pg_catalog.pg_attribute \
                     WHERE attrelid = $1 AND attname = $2 AND attnum > 0 AND NOT attisdropped",
                    Some(1),
                    &[tbl.into(), k.as_str().into()],
                );
                if t.is_empty() {
                    return None;
                }
                let r = t.first();
                Some((
                    r.get::<pg_sys::Oid>(1).ok().flatten()?,
                    r.get::<pg_sys::Oid>(2).ok().flatten()?,
                ))
            })
            .collect::<Option<Vec<_>>>()
    })?;
    if key_types.is_empty() || (key.composite.is_none() && key_types[0].0 != dup_type) {
        return None;
    }
    let time_type: Option<pg_sys::Oid> = match time_column {
        None => None,
        Some(col) => Some(
            lookup::one_with_args::<pg_sys::Oid>(
                "SELECT atttypid FROM pg_catalog.pg_attribute WHERE attrelid = $1 AND attname = $2 AND NOT attisdropped",
                &[tbl.into(), col.into()],
            )
            .ok()
            .flatten()?,
        ),
    };
    let mut match_proc = None;
    let mut leaves = Vec::new();
    let mut unseen = Vec::new();
    for leaf in partitions::leaves(tbl, time_column) {
        let (rel, span) = (leaf.rel, leaf.span);
        match leaf_target(leaf, key, time_column, dup_type) {
            Some((t, proc)) => {
                match_proc = Some(proc);
                leaves.push(t);
            }
            // A partition made after a REPEATABLE READ snapshot: refused only by
            // a lookup whose window meets it.
            None if snapshot_setup::leaf_unseen(rel) => unseen.push((rel, span)),
            None => return None,
        }
    }
    Some(scan::Target {
        match_proc: match_proc?,
        key_types,
        dup_type,
        time_type,
        leaves,
        unseen,
    })
}

/// One leaf's part of [`scan_target`], with the function behind `%`.
fn leaf_target(
    leaf: partitions::Leaf,
    key: &Key,
    time_column: Option<&str>,
    dup_type: pg_sys::Oid,
) -> Option<(scan::LeafTarget, pg_sys::Oid)> {
    let names: Vec<String> = key.columns.clone();
    let found = Spi::connect(|c| {
        let t = cache::select(
            c,
            "SELECT i.indexrelid, o.oprcode::oid, d.attnum, s.attnum, u.attnum, \
                    (SELECT array_agg(k.attnum ORDER BY x.i) FROM unnest($2::text[]) WITH ORDINALITY AS x(name, i) \
                     JOIN pg_catalog.pg_attribute k ON k.attrelid = d.attrelid AND k.attname = x.name AND NOT k.attisdropped), \
                    (SELECT t.attnum FROM pg_catalog.pg_attribute t WHERE t.attrelid = d.attrelid AND t.attname = $3 AND NOT t.attisdropped) \
             FROM pg_catalog.pg_attribute d \
             JOIN pg_catalog.pg_attribute s ON s.attrelid = d.attrelid AND s.attname = 'dedup_sig' AND NOT s.attisdropped \
             JOIN pg_catalog.pg_attribute u ON u.attrelid = d.attrelid AND u.attname = 'duplicate_of' AND NOT u.attisdropped \
             JOIN pg_catalog.pg_index i ON i.indrelid = d.attrelid AND i.indnatts = 1 AND i.indkey[0] = s.attnum \
                  AND i.indisvalid AND i.indisready AND i.indpred IS NULL AND i.indexprs IS NULL \
             JOIN pg_catalog.pg_opclass oc ON oc.oid = i.indclass[0] AND oc.opcname = 'signature_ops' \
             JOIN pg_catalog.pg_namespace ns ON ns.oid = oc.opcnamespace AND ns.nspname = 'dedup' \
             JOIN pg_catalog.pg_am am ON am.oid = oc.opcmethod AND am.amname = 'gin' \
             JOIN pg_catalog.pg_operator o ON o.oprname = '%' AND o.oprnamespace = ns.oid \
                  AND o.oprleft = s.atttypid AND o.oprright = s.atttypid \
             WHERE d.attrelid = $1 AND d.attname = 'dedup_doc' AND NOT d.attisdropped AND u.atttypid = $4 \
               AND s.atttypid = 'dedup.signature'::regtype AND d.atttypid = 'dedup.document'::regtype \
             ORDER BY i.indexrelid LIMIT 1",
            Some(1),
            &[
                leaf.rel.into(),
                names.clone().into(),
                time_column.into(),
                dup_type.into(),
            ],
        );
        if t.is_empty() {
            return None;
        }
        let r = t.first();
        let oid = |i: usize| r.get::<pg_sys::Oid>(i).ok().flatten();
        let att = |i: usize| r.get::<i16>(i).ok().flatten();
        let key_atts = r.get::<Vec<i16>>(6).ok().flatten()?;
        if key_atts.len() != names.len() {
            return None;
        }
        let time_att = att(7);
        if time_column.is_some() && time_att.is_none() {
            return None;
        }
        Some((
            scan::LeafTarget {
                rel: leaf.rel,
                index: oid(1)?,
                key_atts,
                doc_att: att(3)?,
                sig_att: att(4)?,
                dup_att: att(5)?,
                time_att,
                span: leaf.span,
            },
            oid(2)?,
        ))
    });
    // The query reads the catalog as the transaction's snapshot sees it: under
    // REPEATABLE READ an index dropped since (see `snapshot_setup`; a partition
    // made since finds none: `scan_target`).
    if let Some((t, _)) = &found {
        snapshot_setup::require_index(t.index, leaf.rel);
    }
    found
}

/// A candidate row: key and its own `duplicate_of`, and the transaction that
/// inserted it when that is still in progress (a writer's dirty lookup).
struct Candidate {
    key: String,
    duplicate_of: Option<String>,
    in_progress: Option<pg_sys::TransactionId>,
}

/// A candidate as found: weighed, or left unweighed (and undecoded) because its
/// bounds already rule out a duplicate either way (see [`Pruner`]), with its bytes,
/// its sketch and the bound on "new duplicates it".
type Assessed = Result<WithAuthority, (Rc<Sketched>, f64)>;

/// The rows whose signatures match `sig`, best first, each weighed (through the
/// backend document cache: a candidate seen before is neither decompressed nor
/// decoded again) unless `prune` rules it out unweighed. With `new_snapshot` (a writer
/// holding the signature locks) the lookup sees a near-identical row that a
/// concurrent writer committed while this one waited for the locks: the direct
/// lookup (`pg::scan`) reads with a dirty snapshot, which also returns the rows of
/// transactions still in progress (see `pg::keylocks`); a table without a usable
/// signature index runs the same search as a query, with a new snapshot.
#[allow(clippy::too_many_arguments)]
fn find_candidates(
    cfg: &TableConfig,
    sig: &Signature,
    self_key: Option<&str>,
    new_snapshot: bool,
    window: Option<Interval>,
    weigher: &mut Weigher,
    auth: &Authorities,
    prune: &Pruner,
) -> Vec<(Candidate, Assessed)> {
    if sig.keys.is_empty() {
        return Vec::new();
    }
    // Weighs the documents of `rows`, or not (see `Pruner::rules_out`).
    let weigh = |weigher: &mut Weigher, docs: &[&dyn StoredDoc]| -> Vec<Assessed> {
        let mut bound = vec![0.0; docs.len()];
        let mut rule = |i: usize, s: &Sketched| match prune.rules_out(s, auth) {
            Some(upper_new) => {
                if let Some(b) = bound.get_mut(i) {
                    *b = upper_new;
                }
                true
            }
            None => false,
        };
        let weighed = weigher.weigh_stored_unless(
            docs,
            prune.active().then_some(&mut rule as &mut weigher::SkipFn),
        );
        weighed
            .into_iter()
            .zip(bound)
            .map(|(w, upper_new)| match w {
                Ok(w) => Ok(models::with_authority(w, auth)),
                Err(s) => Err((s, upper_new)),
            })
            .collect()
    };
    if let Some(target) = &cfg.scan {
        let found = scan::candidates(
            target,
            sig,
            self_key,
            new_snapshot,
            MAX_CANDIDATES as usize,
            &cfg.coll.limits,
            window,
        );
        // SAFETY: each document is a non-null copy of a `dedup.document` varlena in
        // the current memory context, alive for the rest of the row's check.
        let mut rows: Vec<(scan::Hit, DocRef)> = found
            .into_iter()
            .filter_map(|f| {
                let d =
                    unsafe { DocRef::from_polymorphic_datum(f.doc, false, pg_sys::InvalidOid) }?;
                Some((f, d))
            })
            .collect();
        keep_within_budget(&mut rows);
        let refs: Vec<&dyn StoredDoc> = rows.iter().map(|(_, d)| d as &dyn StoredDoc).collect();
        let weighed = weigh(weigher, &refs);
        return rows
            .into_iter()
            .zip(weighed)
            .map(|((f, _), w)| {
                (
                    Candidate {
                        key: f.key,
                        duplicate_of: f.duplicate_of,
                        in_progress: f.in_progress,
                    },
                    w,
                )
            })
            .collect();
    }
    // The tie-break is the key's own order (`r.id`: a bare `key` would name the
    // first output column, the key as text, and sort 10 before 9). The window
    // compares the time column read as the trigger reads it (`dedup._published`).
    let in_window = match (&cfg.columns.published_at, window) {
        (Some(col), Some(_)) => format!(
            " AND (dedup._published(r.{c}) IS NULL OR dedup._published(r.{c}) BETWEEN $3 AND $4)",
            c = pgrx::spi::quote_identifier(col)
        ),
        _ => String::new(),
    };
    let sql = format!(
        "SELECT {key}::text, r.dedup_doc, r.duplicate_of::text FROM {t} AS r \
         WHERE r.dedup_sig OPERATOR(dedup.%) $1 AND r.dedup_doc IS NOT NULL AND ($2::text IS NULL OR {key}::text <> $2){in_window} \
         ORDER BY dedup.shared_keys(r.dedup_sig, $1) DESC, {key} LIMIT {MAX_CANDIDATES}",
        key = cfg.key.expr("r"),
        t = cfg.tname
    );
    Spi::connect_mut(|c| {
        let mut args = vec![SignatureDatum::from_signature(sig).into(), self_key.into()];
        if !in_window.is_empty() {
            let w = window.unwrap_or(Interval { lo: 0, hi: 0 });
            args.push(
                TimestampWithTimeZone::try_from(w.lo)
                    .unwrap_or_else(|_| TimestampWithTimeZone::negative_infinity())
                    .into(),
            );
            args.push(
                TimestampWithTimeZone::try_from(w.hi)
                    .unwrap_or_else(|_| TimestampWithTimeZone::positive_infinity())
                    .into(),
            );
        }
        // The `%` operator reads the session settings: the collection's are put
        // in force for the query.
        let matching = crate::pg::guc_scope::MatchSettings::of(&cfg.coll.limits);
        let settings = matching.pairs();
        // As the table's owner: planning a query on the table runs what its owner
        // put there (an index expression's immutable functions), which must not
        // run with the extension owner's rights (`privilege::as_table_owner`).
        let t = privilege::as_table_owner(cfg.tbl, || {
            crate::pg::guc_scope::with_settings(&settings, || {
                crate::pg::citus::nested(|| {
                    if new_snapshot {
                        cache::select_new_snapshot(c, sql.as_str(), None, &args)
                    } else {
                        cache::select(c, sql.as_str(), None, &args)
                    }
                })
            })
        });
        // The documents stay in SPI memory, and are read, while the rows are alive.
        let rows: Vec<(Candidate, DocRef)> = t
            .into_iter()
            .filter_map(|r| {
                let key = r.get::<String>(1).ok()??;
                let doc = r.get::<DocRef>(2).ok()??;
                let duplicate_of = r.get::<String>(3).ok().flatten();
                let c = Candidate {
                    key,
                    duplicate_of,
                    in_progress: None,
                };
                Some((c, doc))
            })
            .collect();
        let mut rows = rows;
        keep_within_budget(&mut rows);
        let docs: Vec<&dyn StoredDoc> = rows.iter().map(|(_, d)| d as &dyn StoredDoc).collect();
        let weighed = weigh(weigher, &docs);
        rows.into_iter()
            .zip(weighed)
            .map(|((c, _), w)| (c, w))
            .collect()
    })
}

/// Rules candidates out before they are weighed: from the new document's weights
/// and a candidate's term, segment and number hashes alone (skimmed off its bytes),
/// [`crate::features::bounds`] bounds ρ in both directions, and the model (or the
/// threshold rule) bounds its decision value over those ranges. A candidate whose
/// bounds are ≤ 0 both ways duplicates nothing and is duplicated by nothing, and
/// is never weighed: most candidates share a word or two with the new document
/// and no more. The decisions are exactly those of weighing everything (see
/// [`check`] for the one case that weighs them after all). RBF models give no
/// bound and rule nothing out.
struct Pruner<'a> {
    new: Option<(&'a WithAuthority, Option<&'a Loaded>, bool)>,
}

impl Pruner<'_> {
    fn active(&self) -> bool {
        self.new.is_some()
    }

    /// `Some(bound on "new duplicates it")` when the candidate is ruled out.
    fn rules_out(&self, cand: &Sketched, auth: &Authorities) -> Option<f64> {
        let (new, model, positive) = self.new?;
        if decide::exact_copy(new.doc().fingerprint, cand.sketch.fingerprint) {
            return decide::ruled_out(true, None, None);
        }
        let (ab, ba) = crate::features::bounds(
            &new.side(),
            new.w.prep(),
            &cand.sketch,
            auth.of(cand.sketch.source.as_deref()),
            positive,
        );
        let upper = |r: &[crate::features::Range; N_FEATURES]| match model {
            Some(m) => m.model.decision_upper(r),
            None => Some(decide::threshold_rule_upper(r)),
        };
        decide::ruled_out(false, upper(&ab), upper(&ba))
    }
}

thread_local! {
    /// This backend's candidate counts since it started: examined, ruled out
    /// unweighed, and ruled out but weighed after all (see [`check`]).
    static COUNTS: std::cell::Cell<[i64; 3]> = const { std::cell::Cell::new([0; 3]) };
}

fn count(examined: usize, pruned: usize, reweighed: usize) {
    COUNTS.with(|c| {
        let [e, p, r] = c.get();
        c.set([e + examined as i64, p + pruned as i64, r + reweighed as i64]);
    });
}

/// This backend's candidate counts (for benchmarks and tests): candidates examined
/// by inserts, `is_duplicate` and `find_original`, those ruled out before weighing,
/// and those of them weighed after all.
#[pg_extern(volatile, parallel_restricted)]
fn _candidate_counts() -> TableIterator<
    'static,
    (
        name!(examined, i64),
        name!(pruned, i64),
        name!(reweighed, i64),
    ),
> {
    let [e, p, r] = COUNTS.with(|c| c.get());
    TableIterator::once((e, p, r))
}

/// Judges a new document against the weighed candidates in both directions, in
/// candidate order; those left unweighed are weighed here only if `upper_new`
/// (their bound) reaches `reach`. Each comes with its candidate's
/// [`Candidate::in_progress`].
fn judge(
    model: Option<&Loaded>,
    new: &WithAuthority,
    cands: &[(Candidate, Assessed)],
    weigher: &mut Weigher,
    auth: &Authorities,
    reach: Option<f64>,
) -> Vec<(Judged, Option<pg_sys::TransactionId>)> {
    cands
        .iter()
        .filter_map(|(c, found)| {
            // A pair of long texts takes a while (a second for two of 10 MB).
            pgrx::check_for_interrupts!();
            let weighed;
            let w = match found {
                Ok(w) => w,
                Err((s, upper_new)) if reach.is_some_and(|r| *upper_new >= r) => {
                    weighed = models::with_authority(weigher.weigh(s.decode()), auth);
                    &weighed
                }
                Err(_) => return None,
            };
            let (score_new_dup, score_cand_dup) = models::scores(model, new, w);
            let j = Judged {
                key: c.key.clone(),
                duplicate_of: c.duplicate_of.clone(),
                score_new_dup,
                score_cand_dup,
                exact: decide::exact_copy(new.doc().fingerprint, w.doc().fingerprint),
            };
            Some((j, c.in_progress))
        })
        .collect()
}

/// Leaves out the candidates marked as copies of the row being checked
/// (`self_key`: an updated row's key before the update, or the key of the row an
/// inserted one would replace through ON CONFLICT). An original whose text is
/// edited, or stored again unchanged, stays the original of its copies: it is not
/// marked as a copy of its own copy (which would leave the group with no
/// original), and it may still be marked as a copy of another group's row.
/// Copies of those copies go too (see [`decide::without_copies_of`]): a row
/// inserted under the key of a deleted original, which its copies still name,
/// takes that original's place rather than close a cycle of marks.
fn without_own_copies(cfg: &TableConfig, judged: &mut Vec<Judged>, self_key: Option<&str>) {
    let Some(me) = self_key else {
        return;
    };
    match &cfg.key.rank_order {
        None => decide::without_copies_of(judged, me),
        Some(_) if judged.is_empty() => {}
        // Compared by value: a key of several text forms (an audit marked a row as
        // a copy of itself, its key re-spelled 'abc-1' → 'ABC-1' under a
        // case-insensitive collation, and closed a cycle of marks with numeric
        // keys 1 and 1.0).
        Some(order) => {
            let mut texts: Vec<&str> = std::iter::once(me)
                .chain(judged.iter().map(|j| j.key.as_str()))
                .chain(judged.iter().filter_map(|j| j.duplicate_of.as_deref()))
                .collect();
            texts.sort_unstable();
            texts.dedup();
            let ranks = same_keys(cfg, order, &texts);
            decide::without_copies_of_by(judged, me, |k| {
                ranks.get(k).map_or(Err(k.to_owned()), |&r| Ok(r))
            });
        }
    }
}

/// Clears the `duplicate_of` of each judged candidate the new document duplicates
/// whose original is no longer in the table (see [`decide::Roots`]): an original
/// that is itself a candidate is there; any other is looked up by key.
fn resolve_roots(
    roots: &mut decide::Roots,
    cfg: &TableConfig,
    cands: &[(Candidate, Assessed)],
    judged: &mut [Judged],
    new_snapshot: bool,
) {
    roots.resolve(judged, |root| {
        cands.iter().any(|(c, _)| c.key == root) || row_exists(cfg, root, new_snapshot)
    });
}

/// Whether the table has a row with the key whose text form is `key` (through the
/// primary key's index), read with a new snapshot when `new_snapshot` (a writer,
/// as its candidate lookup).
pub fn row_exists(cfg: &TableConfig, key: &str, new_snapshot: bool) -> bool {
    let sql = match (&cfg.key.composite, cfg.key.columns.as_slice()) {
        (None, [col]) => format!(
            "SELECT 1 FROM {t} AS r WHERE r.{c} = $1::text::{ty}",
            t = cfg.tname,
            c = pgrx::spi::quote_identifier(col),
            ty = cfg.key.sql_type
        ),
        _ => format!(
            "SELECT 1 FROM {t} AS r, (SELECT ($1::text::{ty}).*) AS k WHERE {eq}",
            t = cfg.tname,
            ty = cfg.key.sql_type,
            eq = cfg.key.equal("r", "k")
        ),
    };
    // As the table's owner (see `find_candidates`), who must be able to.
    privilege::require_owner_reads(cfg.tbl);
    privilege::as_table_owner(cfg.tbl, || {
        crate::pg::citus::nested(|| {
            Spi::connect_mut(|c| {
                let args = [key.into()];
                let rows = if new_snapshot {
                    cache::select_new_snapshot(c, &sql, Some(1), &args)
                } else {
                    cache::select(c, &sql, Some(1), &args)
                };
                !rows.is_empty()
            })
        })
    })
}

/// Everything the trigger needs for one row.
pub struct Checked {
    /// The new document's stored form (when it was added to the statistics).
    pub doc: Option<DocumentDatum>,
    pub sig: Option<Signature>,
    pub original: Option<String>,
    pub verdict: Option<verdict>,
    pub score: Option<f64>,
    pub judged: Vec<Judged>,
}

/// What [`check`] does with the collection statistics.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Store {
    /// Nothing: `is_duplicate`, `find_original`.
    Nothing,
    /// The document is added (the trigger's rows that are stored).
    Always,
    /// Added unless it duplicates a row (action `'skip'`, whose duplicates are not
    /// stored).
    UnlessDuplicate,
}

/// Checks one document against a table. Unless `store` is [`Store::Nothing`], it
/// serialises on the signature keys (see `pg::keylocks`: locks taken in the order of their tags
/// before the candidate lookup and held until the row is in the table, and a wait
/// for any transaction in progress that inserted a near-identical row, so of two
/// concurrent near-identical inserts the second sees the first) and adds the
/// document to the collection statistics.
pub fn check(
    cfg: &TableConfig,
    doc: Document,
    model: Option<&str>,
    self_key: Option<&str>,
    store: Store,
) -> Checked {
    let commit = store != Store::Nothing;
    let model: Option<Rc<Loaded>> = model.and_then(models::by_name);
    let opts = options_of(&cfg.coll);
    // One weigher for the new document and its candidates: the statistics of their
    // terms come from one query each.
    let mut weigher = Weigher::new(&cfg.coll, None);
    let auth = Authorities::cached(&cfg.coll);
    let (new, new_read_at) = weigher.weigh_read_at(doc);
    let new = models::with_authority(new, &auth);
    // The signature, and the keys locked while the row is judged (all but the
    // lightest words).
    let (sig, lock_keys) = crate::signature::signature_and_lock_keys(
        new.doc(),
        &new.w.body,
        &opts,
        cfg.coll.limits.min_shared_keys,
    );
    let bounded = model
        .as_deref()
        .is_none_or(|m| m.model.kernel == crate::svm::Kernel::Linear);
    let pruner = Pruner {
        new: (bounded && gucs::prune_candidates()).then_some((
            &new,
            model.as_deref(),
            weigher.weights_positive(),
        )),
    };
    // The rows the new one is compared with (see `crate::window`).
    let window = crate::window::around(new.doc().published_at, cfg.window);
    let (cands, mut judged) = loop {
        // Not on a Citus distributed table: the locks are per node, and the
        // connections Citus opens for one statement, one per shard, would wait for
        // each other's (a distributed deadlock). See docs/scale-out.md.
        if commit && !cfg.distributed {
            keylocks::lock_row(cfg.coll.id, &lock_keys, cfg.scan.is_some());
        }
        let cands = find_candidates(
            cfg,
            &sig,
            self_key,
            commit,
            window,
            &mut weigher,
            &auth,
            &pruner,
        );
        let judged = judge(model.as_deref(), &new, &cands, &mut weigher, &auth, None);
        if let Some(xid) = decide::must_wait(&judged).filter(|&x| !keylocks::unwaitable(x)) {
            // As a unique index does: wait for the transaction that inserted a
            // near-identical row to end (holding no key locks), then look again.
            // (A logical replication worker does not wait for a transaction it
            // prepared itself: the row is judged without it.)
            keylocks::release();
            keylocks::wait_for(xid);
            continue;
        }
        break (cands, decide::settled(judged));
    };
    count(
        cands.len(),
        cands.iter().filter(|(_, f)| f.is_err()).count(),
        0,
    );
    warn_if_other_analyzer(cfg, new.doc().analyzer, &cands);
    let mut roots = decide::Roots::default();
    without_own_copies(cfg, &mut judged, self_key);
    resolve_roots(&mut roots, cfg, &cands, &mut judged, commit);
    let mut d = decide::choose(&judged);
    // With no duplicate, the verdict is that of the closest candidate (the highest
    // "new duplicates it" value): when that says "it duplicates new", a candidate
    // left unweighed (which duplicates nothing either way) could be closer still.
    // Weigh those whose bound reaches it, and decide again: rare, and exact.
    let reach = (!d.new_dup && d.cand_dup).then_some(d.score);
    let reweighed = reach.map_or(0, |r| {
        cands
            .iter()
            .filter(|(_, f)| matches!(f, Err((_, u)) if *u >= r))
            .count()
    });
    if reweighed > 0 {
        count(0, 0, reweighed);
        judged = decide::settled(judge(
            model.as_deref(),
            &new,
            &cands,
            &mut weigher,
            &auth,
            reach,
        ));
        without_own_copies(cfg, &mut judged, self_key);
        resolve_roots(&mut roots, cfg, &cands, &mut judged, commit);
        d = decide::choose(&judged);
    }
    let add = store == Store::Always || (store == Store::UnlessDuplicate && d.original.is_none());
    let stored = add.then(|| {
        stats::add(cfg.coll.id, new.doc(), Some(cfg.tbl));
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

/// Whether this backend already warned about documents of another analyser.
static WARNED_ANALYZER: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A candidate made by another analyser version than the new document (stored
/// before an upgrade that changed the analysis) is compared term by term all the
/// same, which may miss a duplicate: the first time a backend meets one it says
/// so, with the fix. See `document::ANALYZER_VERSION`.
fn warn_if_other_analyzer(cfg: &TableConfig, new: u16, cands: &[(Candidate, Assessed)]) {
    if WARNED_ANALYZER.load(std::sync::atomic::Ordering::Relaxed) {
        return;
    }
    let other = cands.iter().find_map(|(_, f)| {
        let v = match f {
            Ok(w) => w.doc().analyzer,
            Err((s, _)) => crate::document::analyzer_of(&s.bytes),
        };
        (v != new).then_some(v)
    });
    if let Some(old) = other {
        WARNED_ANALYZER.store(true, std::sync::atomic::Ordering::Relaxed);
        let col = format!("\"{}\"", cfg.columns.body.replace('"', "\"\""));
        pgrx::pg_sys::panic::ErrorReport::new(
            PgSqlErrorCode::ERRCODE_WARNING,
            format!(
                "table {} holds documents made by analyser version {old}; this build's is {new}, so their verdicts may miss duplicates",
                cfg.tname
            ),
            "pg_dedup",
        )
        .set_hint(format!(
            "re-analyse the stored rows: UPDATE {} SET {col} = {col}",
            cfg.tname
        ))
        .report(pgrx::PgLogLevel::WARNING);
    }
}

/// The trigger's analysis of a row's text (up to the collection's
/// `max_document_bytes`, at most 1 GB): checks for interrupts every 4,096 words
/// and between its stages (`text::analyze_checked`).
fn analyze(
    cfg: &TableConfig,
    body: &str,
    title: Option<&str>,
    ts: Option<TimestampWithTimeZone>,
    source: Option<&str>,
) -> Document {
    let opts = AnalyzeOptions {
        lang: cfg.coll.lang,
        min_word_length: cfg.coll.limits.min_word_length,
    };
    text::analyze_checked(
        body,
        title,
        crate::pg::types::finite_time(ts),
        source,
        &opts,
        &mut crate::pg::interrupts(),
    )
    .unwrap_or_else(|e| raise(e))
}

/// The title and source `cfg`'s collection checks a text with: one over its limit
/// is left out, with a WARNING (see `Limits::side_fields`).
fn side_fields<'a>(
    cfg: &TableConfig,
    title: Option<&'a str>,
    source: Option<&'a str>,
) -> (Option<&'a str>, Option<&'a str>) {
    let (title, source, left_out) = cfg.coll.limits.side_fields(title, source);
    for o in left_out {
        let limit = if o.what == "source" {
            format!("the {} bytes a source may have", o.limit)
        } else {
            format!(
                "the max_document_bytes of collection \"{}\" ({})",
                cfg.coll.name, o.limit
            )
        };
        pgrx::ereport!(
            WARNING,
            PgSqlErrorCode::ERRCODE_PROGRAM_LIMIT_EXCEEDED,
            format!(
                "{} of {} bytes is over {limit}: the text is checked without it",
                o.what, o.bytes
            )
        );
    }
    (title, source)
}

/// The trigger's per-row work (`dedup._trigger()`, src/pg/trigger.rs): a NULL
/// body is stored and never matches; a text over its collection's
/// `max_document_bytes` is stored unchecked with a WARNING (a title or source over
/// its limit is left out of the check instead, with a WARNING); anything else is
/// checked and added to the collection statistics as `store` says. `analysed`:
/// the text's document when the caller has it already (an update that changed it).
#[allow(clippy::too_many_arguments)]
pub fn check_row(
    cfg: &TableConfig,
    body: Option<&str>,
    title: Option<&str>,
    published_at: Option<TimestampWithTimeZone>,
    source: Option<&str>,
    model: Option<&str>,
    self_key: Option<&str>,
    store: Store,
    analysed: Option<Document>,
) -> Checked {
    let unchecked = Checked {
        doc: None,
        sig: None,
        original: None,
        verdict: None,
        score: None,
        judged: Vec::new(),
    };
    let Some(body) = body else {
        return unchecked;
    };
    if let Some(o) = cfg.coll.limits.body_over(body) {
        // Under 'error' a row that cannot be checked is refused: a copy padded past
        // the limit (with markup nobody sees) would otherwise go in unchecked.
        if cfg.action == Action::Error && store != Store::Nothing {
            raise(DedupError::TooLarge {
                msg: format!(
                    "text of {} bytes is over the max_document_bytes of collection \"{}\" ({}): action 'error' refuses a row it cannot check",
                    o.bytes, cfg.coll.name, o.limit
                ),
                hint: Some("raise the collection's limit with dedup.set_collection_options, or enable the table with action 'mark' or 'skip', which store such a row unchecked".into()),
            });
        }
        pgrx::ereport!(
            WARNING,
            PgSqlErrorCode::ERRCODE_PROGRAM_LIMIT_EXCEEDED,
            format!(
                "text of {} bytes is over the max_document_bytes of collection \"{}\" ({}): row stored without a duplicate check",
                o.bytes, cfg.coll.name, o.limit
            )
        );
        return unchecked;
    }
    let (title, source) = side_fields(cfg, title, source);
    let doc = analysed.unwrap_or_else(|| analyze(cfg, body, title, published_at, source));
    let model = model.or(cfg.model.as_deref());
    check(cfg, doc, model, self_key, store)
}

/// Whether this text, analysed as the trigger would analyse it now (the
/// collection's language and limits), gives exactly the stored document `old`:
/// an update that stores a row's text again need not check it again. A NULL text
/// or one over the collection's limit never does (its row has no document).
/// Returns the new document when it differs, for [`check_row`] to check without
/// analysing the text again.
pub fn analyses_to(
    cfg: &TableConfig,
    body: Option<&str>,
    title: Option<&str>,
    published_at: Option<TimestampWithTimeZone>,
    source: Option<&str>,
    old: &DocumentDatum,
) -> Result<(), Option<Box<Document>>> {
    let Some(body) = body else { return Err(None) };
    if cfg.coll.limits.body_over(body).is_some() {
        return Err(None);
    }
    let (title, source, _) = cfg.coll.limits.side_fields(title, source);
    let doc = analyze(cfg, body, title, published_at, source);
    if doc.encode() == old.0 {
        Ok(())
    } else {
        Err(Some(Box::new(doc)))
    }
}

/// Removes a stored document from its table's collection statistics; `row_trigger`
/// when the table's row trigger does it (an UPDATE's old row).
pub fn forget(cfg: &TableConfig, doc: &DocumentDatum, row_trigger: bool) {
    stats::remove(cfg.coll.id, &doc.decode(), row_trigger.then_some(cfg.tbl));
}

thread_local! {
    /// Rows `_table_document` analysed without their title or source (over its
    /// limit) since `_table_document_left_out` last read it.
    static LEFT_OUT: std::cell::Cell<i64> = const { std::cell::Cell::new(0) };
}

/// The document the trigger would store for a row of `tbl` with this text: the
/// collection's language and `min_word_length`, NULL for a text over its
/// `max_document_bytes`, a title or source over its limit left out (counted, not
/// reported row by row: `enable` reports the count once, see
/// [`_table_document_left_out`]). `dedup.enable`'s backfill analyses the existing
/// rows with it, as the trigger analyses new ones (the session's settings play no
/// part). Only the table's owner may call it (as `enable` does): the collection's
/// limit may be far above `dedup.max_document_bytes`, which bounds what other
/// roles analyse.
#[pg_extern(volatile, parallel_unsafe)]
pub fn _table_document(
    tbl: Option<pg_sys::Oid>,
    body: Option<&str>,
    title: Option<&str>,
    published_at: Option<TimestampWithTimeZone>,
    source: Option<&str>,
) -> Option<DocumentDatum> {
    let tbl = crate::pg::types::required(tbl, "tbl");
    if !privilege::owns(tbl, privilege::caller()) {
        raise(DedupError::InsufficientPrivilege {
            msg: "must be owner of the table to analyse its rows".into(),
            hint: Some("dedup.enable analyses a table's rows with this; dedup.to_document analyses any text".into()),
        });
    }
    let body = body?;
    let cfg = as_owner(|| table_config(tbl));
    if cfg.coll.limits.body_over(body).is_some() {
        return None;
    }
    let (title, source, left_out) = cfg.coll.limits.side_fields(title, source);
    if !left_out.is_empty() {
        LEFT_OUT.with(|n| n.set(n.get().saturating_add(1)));
    }
    Some(DocumentDatum::from_document(&analyze(
        &cfg,
        body,
        title,
        published_at,
        source,
    )))
}

/// How many rows `_table_document` analysed without their title or source since
/// the last call, and starts the count again: `enable` reads it after its backfill
/// to report them in one WARNING instead of one per row.
#[pg_extern(volatile, parallel_unsafe)]
pub fn _table_document_left_out() -> i64 {
    LEFT_OUT.with(|n| n.replace(0))
}

/// Whether the text would be a duplicate in `tbl`: the trigger's decision, without
/// inserting anything or touching statistics. Uses the table's model.
#[pg_extern(stable)]
pub fn _is_duplicate(
    tbl: Option<pg_sys::Oid>,
    body: Option<&str>,
    title: Option<&str>,
    published_at: Option<TimestampWithTimeZone>,
    source: Option<&str>,
) -> bool {
    // pg_dedup's own queries, not compiled (see `guc_scope::without_jit`).
    crate::pg::guc_scope::without_jit(|| {
        let tbl = crate::pg::types::required(tbl, "tbl");
        privilege::require_execute(
            "dedup.is_duplicate(pg_catalog.regclass, pg_catalog.text, pg_catalog.text, pg_catalog.timestamptz, pg_catalog.text)",
        );
        privilege::require_read(tbl, "dedup.is_duplicate");
        require_collection_read_of(tbl, "dedup.is_duplicate");
        as_owner(|| {
            let cfg = table_config(tbl);
            let Some(body) = body else { return false };
            // The trigger stores such a text unchecked (or refuses it): no answer
            // either way is true.
            if let Some(o) = cfg.coll.limits.body_over(body) {
                raise(DedupError::TooLarge {
                    msg: format!(
                        "text of {} bytes is over the max_document_bytes of collection \"{}\" ({}): it cannot be checked",
                        o.bytes, cfg.coll.name, o.limit
                    ),
                    hint: Some("raise the collection's limit with dedup.set_collection_options".into()),
                });
            }
            let (title, source) = side_fields(&cfg, title, source);
            let doc = analyze(&cfg, body, title, published_at, source);
            check(&cfg, doc, cfg.model.as_deref(), None, Store::Nothing)
                .original
                .is_some()
        })
    })
}

/// The rows a document duplicates, as their originals (the first of a chain), best first.
#[pg_extern(stable, strict)]
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
    crate::pg::guc_scope::without_jit(|| {
        privilege::require_execute("dedup.find_original(pg_catalog.regclass, dedup.document)");
        privilege::require_read(tbl, "dedup.find_original");
        require_collection_read_of(tbl, "dedup.find_original");
        // The keys come back as text.
        let c = crate::pg::guc_scope::exact_floats(|| {
            as_owner(|| {
                let cfg = table_config(tbl);
                check(
                    &cfg,
                    doc.decode(),
                    cfg.model.as_deref(),
                    None,
                    Store::Nothing,
                )
            })
        });
        let mut rows: Vec<(bool, String, verdict, f64)> = c
            .judged
            .into_iter()
            .filter(|j| j.score_new_dup > 0.0)
            .map(|j| {
                let v = verdict_of(true, j.score_cand_dup > 0.0);
                (j.exact, j.duplicate_of.unwrap_or(j.key), v, j.score_new_dup)
            })
            .collect();
        // Best first as the trigger picks (`decide::choose`: an exact copy's original,
        // then the highest score), each original once (two candidates of one chain
        // name one original).
        rows.sort_by(|a, b| {
            b.0.cmp(&a.0)
                .then_with(|| b.3.total_cmp(&a.3))
                .then_with(|| a.1.cmp(&b.1))
        });
        let mut seen = std::collections::HashSet::new();
        rows.retain(|r| seen.insert(r.1.clone()));
        TableIterator::new(rows.into_iter().map(|(_, k, v, s)| (k, v, s)))
    })
}

/// Validates `enable`'s model and action arguments before any DDL runs.
#[pg_extern(stable, parallel_unsafe)]
pub fn _validate_enable(model: Option<&str>, action: Option<&str>) {
    if let Some(m) = model {
        as_owner(|| models::by_name(m));
        // The table's own pairs would show the model's scores: enabling with a
        // model is reading it.
        models::require_readable(m, "dedup.enable");
    }
    match action {
        Some("mark" | "skip" | "error") => {}
        None => raise(DedupError::NullNotAllowed("action must not be null".into())),
        Some(other) => raise(DedupError::InvalidParameter {
            msg: format!("unknown action \"{}\"", crate::error::excerpt(other)),
            hint: Some("action is 'mark', 'skip' or 'error'".into()),
        }),
    }
}
