//! The catalog writes of `dedup.enable`, `dedup.disable`, `dedup.set_time_window`
//! and `dedup.recompute`: made as the extension's owner once the caller is found to
//! own the table, so that a table's owner needs no rights on the extension's tables
//! to enable it, as it needs none to index it. The table itself (its columns,
//! index, triggers and stored values) is changed by the calling SQL, with the
//! caller's rights.

use crate::error::DedupError;
use crate::pg::lookup;
use crate::pg::privilege::{self, as_owner, caller};
use crate::pg::types::required;
use crate::pg::{raise, spi_err};
use pgrx::datum::Interval;
use pgrx::prelude::*;

fn table_name(tbl: pg_sys::Oid) -> String {
    lookup::relation_text(tbl).unwrap_or_default()
}

/// `tbl`'s schema-qualified name as an SQL literal, to name it in a statement's
/// text: on Citus each node has its own OID for the table, and Citus sends a
/// regclass parameter to them as the coordinator's.
fn qualified_literal(tbl: pg_sys::Oid) -> String {
    lookup::one_with_args::<String>(
        "SELECT pg_catalog.quote_literal(dedup._qualified($1::oid::regclass))",
        &[tbl.into()],
    )
    .ok()
    .flatten()
    .unwrap_or_default()
}

/// Raises 42501 unless the caller owns `tbl` (or is a member of its owning role),
/// the right `ALTER TABLE` asks for.
pub fn require_owner(tbl: pg_sys::Oid) {
    if !privilege::owns(tbl, caller()) {
        raise(DedupError::InsufficientPrivilege {
            msg: format!("must be owner of table {}", table_name(tbl)),
            hint: None,
        });
    }
}

/// Raises 42809 unless `tbl` is a table or a partitioned table (a view's functions
/// would run with the rights of whoever reads it: here, the extension's owner), and
/// unless `temporary_too` not a temporary one (an enabled table's registration
/// would outlive it: a session's end drops it without the event trigger).
pub fn require_table(tbl: pg_sys::Oid, temporary_too: bool) {
    let kind = as_owner(|| {
        lookup::one_with_args::<String>(
            "SELECT relkind::text || relpersistence::text FROM pg_catalog.pg_class WHERE oid = $1",
            &[tbl.into()],
        )
        .ok()
        .flatten()
    });
    let ok = match kind.as_deref() {
        Some("rp" | "pp" | "ru" | "pu") => true,
        Some("rt" | "pt") => temporary_too,
        _ => false,
    };
    if ok && partition_key_expressions(tbl) {
        raise(DedupError::FeatureNotSupported {
            msg: format!(
                "{} is partitioned by an expression, which pg_dedup does not read",
                table_name(tbl)
            ),
            hint: Some(
                "partition by columns: building the key runs its functions as whoever reads the table first"
                    .into(),
            ),
        });
    }
    if !ok {
        let temporary = matches!(kind.as_deref(), Some("rt" | "pt"));
        raise(DedupError::WrongObjectType {
            msg: format!(
                "{} is {}",
                table_name(tbl),
                if temporary {
                    "a temporary table"
                } else {
                    "not a table"
                }
            ),
            hint: Some(
                "enable a table or a partitioned table, not a view or a temporary table".into(),
            ),
        });
    }
}

/// Whether `tbl`, or a partitioned table under it, is partitioned by an
/// expression (read from the catalog: building the key would run it).
pub fn partition_key_expressions(tbl: pg_sys::Oid) -> bool {
    as_owner(|| {
        lookup::one_with_args::<bool>(
            "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_partition_tree($1::oid::regclass) t \
                            JOIN pg_catalog.pg_partitioned_table p ON p.partrelid = t.relid \
                            WHERE p.partexprs IS NOT NULL)",
            &[tbl.into()],
        )
        .ok()
        .flatten()
        .unwrap_or(false)
    })
}

/// Raises 42703 unless `col` is a column of `tbl`, and 0A000 when it is a
/// generated one (a BEFORE trigger sees it NULL).
fn require_column(tbl: pg_sys::Oid, col: &str) {
    let generated = as_owner(|| {
        lookup::one_with_args::<bool>(
            "SELECT attgenerated <> '' FROM pg_catalog.pg_attribute WHERE attrelid = $1 \
                    AND attname::text = $2 AND attnum > 0 AND NOT attisdropped",
            &[tbl.into(), col.into()],
        )
        .ok()
        .flatten()
    });
    match generated {
        None => raise(DedupError::UndefinedColumn {
            msg: format!("column \"{col}\" of relation {} does not exist", table_name(tbl)),
            hint: None,
        }),
        Some(true) => raise(DedupError::FeatureNotSupported {
            msg: format!("column \"{col}\" of relation {} is a generated column", table_name(tbl)),
            hint: Some("the trigger runs before PostgreSQL computes it: give dedup.enable a column the rows store".into()),
        }),
        Some(false) => {}
    }
}

/// The columns `dedup.enable` adds before it registers a table, of their types.
fn require_prepared(tbl: pg_sys::Oid) {
    let ok = as_owner(|| {
        lookup::one_with_args::<bool>(
            "SELECT pg_catalog.count(*) = 4 FROM pg_catalog.pg_attribute a \
             WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped AND ( \
               (a.attname = 'dedup_doc' AND a.atttypid = 'dedup.document'::pg_catalog.regtype) \
               OR (a.attname = 'dedup_sig' AND a.atttypid = 'dedup.signature'::pg_catalog.regtype) \
               OR (a.attname = 'dedup_verdict' AND a.atttypid = 'dedup.verdict'::pg_catalog.regtype) \
               OR a.attname = 'duplicate_of')",
            &[tbl.into()],
        )
        .ok()
        .flatten()
        .unwrap_or(false)
    });
    if !ok {
        raise(DedupError::InvalidParameter {
            msg: format!(
                "table {} lacks the columns dedup.enable adds",
                table_name(tbl)
            ),
            hint: Some("call dedup.enable".into()),
        });
    }
}

/// What `enable` registers must be what it made, whoever calls: a table; its
/// primary key's first column, no key column generated; no key type for a key of
/// one column, else the composite `<table>_dedup_key` beside the table (or
/// `<table>_dedup_keyN` when a renamed table or a detached partition holds that
/// name, the table's name cut to fit: `dedup._free_name`), of the key's columns,
/// owned by a role whose rights the caller has (`disable` and `DROP TABLE` drop
/// it); a known action.
fn require_registration(
    tbl: pg_sys::Oid,
    key_column: &str,
    key_type: Option<pg_sys::Oid>,
    action: &str,
) {
    require_table(tbl, false);
    if !matches!(action, "mark" | "skip" | "error") {
        raise(DedupError::InvalidParameter {
            msg: format!("unknown action \"{}\"", crate::error::excerpt(action)),
            hint: Some("action is 'mark', 'skip' or 'error'".into()),
        });
    }
    // With a pinned search_path (as the extension's owner), so that no operator of
    // the caller's takes part in the check.
    let role = caller();
    let ok = as_owner(|| {
        lookup::one_with_args::<bool>(
        "SELECT k.names[1]::text = $2 \
           AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a WHERE a.attrelid = $1 \
                             AND a.attname = ANY (k.names) AND a.attgenerated <> '') AND CASE \
           WHEN $3::oid IS NULL THEN pg_catalog.array_length(k.names, 1) = 1 \
           ELSE pg_catalog.array_length(k.names, 1) > 1 AND EXISTS ( \
             SELECT 1 FROM pg_catalog.pg_type y JOIN pg_catalog.pg_class r ON r.oid = $1 \
             WHERE y.oid = $3 AND y.typtype = 'c' AND y.typnamespace = r.relnamespace \
               AND EXISTS (SELECT 1 FROM (VALUES (dedup._name_base($1::oid::pg_catalog.regclass, '_dedup_key')), \
                                                 (r.relname || '_dedup_key')) b(base) \
                           WHERE pg_catalog.starts_with(y.typname::text, b.base) \
                             AND pg_catalog.substr(y.typname::text, pg_catalog.length(b.base) + 1) ~ '^[0-9]*$') \
               AND pg_catalog.pg_has_role($4, y.typowner, 'USAGE') \
               AND (SELECT pg_catalog.array_agg(a.attname::text || ' ' || pg_catalog.format_type(a.atttypid, a.atttypmod) ORDER BY a.attnum) \
                    FROM pg_catalog.pg_attribute a WHERE a.attrelid = y.typrelid AND a.attnum > 0 AND NOT a.attisdropped) \
                 = (SELECT pg_catalog.array_agg(n || ' ' || t ORDER BY i) FROM ROWS FROM (pg_catalog.unnest(k.names), pg_catalog.unnest(k.types)) WITH ORDINALITY AS u(n, t, i))) \
           END \
         FROM dedup._key_columns($1::oid::regclass) k",
        &[tbl.into(), key_column.into(), key_type.into(), role.into()],
    )
    .ok()
    .flatten()
    .unwrap_or(false)
    });
    if !ok {
        raise(DedupError::InvalidParameter {
            msg: format!(
                "the key of table {} is not what dedup.enable registers",
                table_name(tbl)
            ),
            hint: Some("call dedup.enable".into()),
        });
    }
}

/// `dedup.enable`'s registration of `tbl`: creates the collection when there is
/// none of that name (with default options) and records the table's columns and
/// settings. Returns the collection's id. The caller must own `tbl` and every
/// table the collection already reads.
#[allow(clippy::too_many_arguments)]
#[pg_extern(volatile, parallel_unsafe)]
pub fn _register_table(
    tbl: Option<pg_sys::Oid>,
    collection: Option<&str>,
    body: Option<&str>,
    title: Option<&str>,
    published_at: Option<&str>,
    source: Option<&str>,
    model: Option<&str>,
    action: Option<&str>,
    model_column: Option<&str>,
    key_column: Option<&str>,
    key_type: Option<pg_sys::Oid>,
    time_window: Option<Interval>,
) -> i32 {
    let tbl = required(tbl, "tbl");
    let collection = required(collection, "collection");
    let body = required(body, "body");
    let action = required(action, "action");
    let key_column = required(key_column, "key_column");
    privilege::require_execute(privilege::ENABLE);
    require_owner(tbl);
    privilege::require_collection_owner(collection);
    require_registration(tbl, key_column, key_type, action);
    for col in [Some(body), title, published_at, source, model_column]
        .into_iter()
        .flatten()
    {
        require_column(tbl, col);
    }
    // What enable checks before it registers, for a caller who skips enable: the
    // model is known, a time window has its time column, and the table has the
    // columns enable adds (without them its inserts fail and dedup.status, which
    // counts every table's marks, fails for everyone).
    crate::pg::ingest::_validate_enable(model, Some(action));
    if time_window.is_some() {
        Spi::connect_mut(|c| {
            c.update(
                "SELECT dedup._validate_window($1::pg_catalog.name, $2)",
                None,
                &[published_at.into(), time_window.into()],
            )
            .unwrap_or_else(|e| spi_err(e));
        });
    }
    require_prepared(tbl);
    if let Some(m) = model {
        crate::pg::models::hold(m);
    }
    as_owner(|| {
        let exists = lookup::one_with_args::<i32>(
            "SELECT id FROM dedup.collections WHERE name = $1",
            &[collection.into()],
        )
        .ok()
        .flatten();
        let created = exists.is_none();
        if created {
            crate::pg::catalog::create_default_collection(collection);
        }
        let id = crate::pg::stored(
            lookup::one_with_args::<i32>(
                "SELECT id FROM dedup.collections WHERE name = $1",
                &[collection.into()],
            ),
            "the enabled table's collection",
        );
        // The table by its qualified name (search_path is pinned here), in two
        // plain statements: Citus, whose reference tables these become, resolves a
        // name on each node, and plans neither an OID nor a data-modifying CTE.
        let qname = table_name(tbl);
        Spi::connect_mut(|c| {
            c.update(
                "INSERT INTO dedup.enabled_tables (tbl, collection_id, created_collection, body_column, \
                        title_column, published_at_column, source_column, model, action, model_column, \
                        key_column, key_type, time_window) \
                 VALUES ($1::pg_catalog.regclass, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, \
                         $12::pg_catalog.oid::pg_catalog.regtype, $13)",
                None,
                &[
                    qname.as_str().into(),
                    id.into(),
                    created.into(),
                    body.into(),
                    title.into(),
                    published_at.into(),
                    source.into(),
                    model.into(),
                    action.into(),
                    model_column.into(),
                    key_column.into(),
                    key_type.into(),
                    time_window.into(),
                ],
            )
            .unwrap_or_else(|e| spi_err(e));
            c.update(
                "INSERT INTO dedup.collection_tables (collection_id, tbl, doc_column, sig_column) \
                 VALUES ($1, $2::pg_catalog.regclass, 'dedup_doc', 'dedup_sig') \
                 ON CONFLICT ON CONSTRAINT collection_tables_pkey \
                 DO UPDATE SET doc_column = 'dedup_doc', sig_column = 'dedup_sig'",
                None,
                &[id.into(), qname.as_str().into()],
            )
            .unwrap_or_else(|e| spi_err(e));
        });
        // What the trigger will read, read now: a column type it refuses fails
        // enable, not the first insert.
        crate::pg::ingest::read_table_config(tbl);
        id
    })
}

/// 55000 for a table that is not enabled, named as the caller sees it.
fn not_enabled(name: &str) -> DedupError {
    DedupError::NotEnabled {
        msg: format!("table {name} is not enabled for deduplication"),
        hint: None,
    }
}

/// `dedup.disable`'s part in the catalog: removes `tbl`'s registration, and the
/// collection `enable` created for it once nothing else reads it; a collection
/// that stays (another table reads it, or `enable` was given it) no longer counts
/// the table's documents. Returns the key type `enable` created beside the table
/// (a key of several columns), for the caller to drop. Raises 55000 when `tbl` is
/// not enabled.
///
/// Locks: the collection's statistics lock (share, as a committing writer takes
/// it), then the table as `DROP TRIGGER` will (access exclusive): writers still in
/// a transaction commit their statistics first, and a recompute waits for this
/// or this for it (taken the other way round, a recompute reading the table and
/// this commit writing the statistics would wait on each other).
#[pg_extern(volatile, strict, parallel_unsafe)]
pub fn _unregister_table(tbl: pg_sys::Oid) -> Option<String> {
    privilege::require_execute("dedup.disable(pg_catalog.regclass)");
    require_owner(tbl);
    // In the caller's search_path, as PostgreSQL names it in messages.
    let name = table_name(tbl);
    let locked = as_owner(|| {
        lookup::one_with_args::<i32>(
            "SELECT collection_id FROM dedup.enabled_tables WHERE tbl = $1::oid::regclass",
            &[tbl.into()],
        )
        .ok()
        .flatten()
    });
    let Some(locked) = locked else {
        raise(not_enabled(&name))
    };
    crate::pg::stats_lock::write(locked);
    Spi::run(&format!(
        "LOCK TABLE {} IN ACCESS EXCLUSIVE MODE",
        lookup::qualified_relation(tbl)
    ))
    .unwrap_or_else(|e| spi_err(e));
    as_owner(|| {
        let row = Spi::connect(|c| {
            let t = c
                .select(
                    "SELECT e.collection_id, e.created_collection, e.key_type::text, c.name \
                     FROM dedup.enabled_tables e JOIN dedup.collections c ON c.id = e.collection_id \
                     WHERE e.tbl = $1::oid::regclass",
                    Some(1),
                    &[tbl.into()],
                )
                .unwrap_or_else(|e| spi_err(e));
            t.into_iter().next().map(|r| {
                (
                    crate::pg::stored(r.get::<i32>(1), "the enabled table's collection"),
                    r.get::<bool>(2).ok().flatten().unwrap_or(false),
                    r.get::<String>(3).ok().flatten(),
                    r.get::<String>(4).ok().flatten().unwrap_or_default(),
                )
            })
        });
        let Some((coll_id, created, key_type, coll)) = row else {
            raise(not_enabled(&name))
        };
        // Read again under the locks: a disable or enable that committed while
        // this waited (into another collection: its lock too, late but before
        // its statistics are written).
        if coll_id != locked {
            crate::pg::stats_lock::write(coll_id);
        }
        let others = lookup::one_with_args::<bool>(
            "SELECT EXISTS (SELECT 1 FROM dedup.collection_tables c \
                            WHERE c.collection_id = $1 AND c.tbl <> $2::oid::regclass)",
            &[coll_id.into(), tbl.into()],
        )
        .ok()
        .flatten()
        .unwrap_or(false);
        // The collection stays (another table reads it, `enable` was given it, or
        // a model trained on it keeps it): it stops counting this table's
        // documents, which those who read only its other tables, or a table
        // enabled into it later, could otherwise read in its statistics. (On
        // Citus the workers count a distributed table's documents.)
        let stays = !created || others || crate::pg::catalog::models_trained_on(&coll).is_some();
        if stays && !crate::pg::citus::is_distributed(tbl) {
            for leaf in crate::pg::partitions::leaves(tbl, None) {
                crate::pg::attach::count_partition(tbl, leaf.rel, -1);
            }
        }
        // By name (see `qualified_literal`).
        let q = qualified_literal(tbl);
        Spi::connect_mut(|c| {
            for sql in [
                format!("DELETE FROM dedup.collection_tables c WHERE dedup._qualified(c.tbl) = {q} AND c.collection_id = {coll_id}"),
                format!("DELETE FROM dedup.enabled_tables e WHERE dedup._qualified(e.tbl) = {q}"),
            ] {
                c.update(sql.as_str(), None, &[])
                    .unwrap_or_else(|e| spi_err(e));
            }
        });
        // Its owner may enable it again into the collection in this transaction.
        privilege::table_left(&coll, tbl);
        let unused = lookup::one_with_args::<bool>(
            "SELECT NOT EXISTS (SELECT 1 FROM dedup.collection_tables WHERE collection_id = $1)",
            &[coll_id.into()],
        )
        .ok()
        .flatten()
        .unwrap_or(false);
        if created && !unused {
            // The tables left (enabled with `collection =>` this one) inherit it:
            // the last of them to go takes it along, as this table would have.
            Spi::run_with_args(
                "UPDATE dedup.enabled_tables SET created_collection = true WHERE collection_id = $1",
                &[coll_id.into()],
            )
            .unwrap_or_else(|e| spi_err(e));
        }
        if created && unused {
            // A model trained on it keeps it (see `catalog::drop_collection`).
            match crate::pg::catalog::models_trained_on(&coll) {
                None => crate::pg::catalog::drop_created_collection(&coll),
                Some(models) => pgrx::ereport!(
                    NOTICE,
                    PgSqlErrorCode::ERRCODE_SUCCESSFUL_COMPLETION,
                    format!("collection \"{coll}\" is kept: model {models} was trained on it; after this transaction only a role with the configuration rights can enable a table into it")
                ),
            }
        }
        key_type
    })
}

/// `dedup.set_time_window`'s change of the registration (NULL: no window).
#[pg_extern(volatile, parallel_unsafe)]
pub fn _set_time_window(tbl: Option<pg_sys::Oid>, time_window: Option<Interval>) {
    let tbl = required(tbl, "tbl");
    privilege::require_execute("dedup.set_time_window(pg_catalog.regclass, pg_catalog.interval)");
    require_owner(tbl);
    let name = table_name(tbl);
    as_owner(|| {
        let published_at = Spi::connect(|c| {
            let t = c
                .select(
                    "SELECT published_at_column::text FROM dedup.enabled_tables WHERE tbl = $1::oid::regclass",
                    Some(1),
                    &[tbl.into()],
                )
                .unwrap_or_else(|e| spi_err(e));
            t.into_iter()
                .next()
                .map(|r| r.get::<String>(1).ok().flatten())
        });
        let Some(published_at) = published_at else {
            raise(not_enabled(&name))
        };
        let q = qualified_literal(tbl);
        Spi::connect_mut(|c| {
            c.update(
                "SELECT dedup._validate_window($1::name, $2)",
                None,
                &[published_at.into(), time_window.into()],
            )
            .unwrap_or_else(|e| spi_err(e));
            // By name (see `_unregister_table`).
            let sql = format!(
                "UPDATE dedup.enabled_tables e SET time_window = $1 WHERE dedup._qualified(e.tbl) = {q}"
            );
            c.update(sql.as_str(), None, &[time_window.into()])
                .unwrap_or_else(|e| spi_err(e));
        });
    })
}

/// Whether the collection of an enabled table the caller owns still counts the
/// documents of a dropped table (`dedup._forget_dropped`), for `dedup.enable`,
/// which then rebuilds its statistics from the tables it reads, the new one among
/// them: left, the dropped table's words stayed counted on the table made again,
/// and its owner could not read the collection. False for a table the caller
/// does not own: who else may know it is the configuration roles'.
#[pg_extern(stable, strict, parallel_unsafe)]
fn _counts_dropped_documents(tbl: pg_sys::Oid) -> bool {
    if !privilege::owns(tbl, caller()) {
        return false;
    }
    as_owner(|| {
        lookup::one_with_args::<bool>(
            "SELECT s.dropped_documents FROM dedup.enabled_tables e \
             JOIN dedup.collection_stats s ON s.collection_id = e.collection_id WHERE e.tbl = $1",
            &[tbl.into()],
        )
        .ok()
        .flatten()
        .unwrap_or(false)
    })
}
