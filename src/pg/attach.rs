//! A partition that joins or leaves an enabled partitioned table (`CREATE TABLE …
//! PARTITION OF`, `ATTACH PARTITION`, `DETACH PARTITION`), as the event trigger
//! `dedup._partitions_changed` (sql/ingest.sql) sees it after the DDL: the
//! documents the partition holds join or leave the collection statistics.

use crate::pg::ddl_command;
use crate::pg::fmgr::v1_function;
use crate::pg::ingest;
use crate::pg::lookup;
use crate::pg::spi_err;
use crate::pg::stats;
use crate::pg::types::DocumentDatum;
use pgrx::prelude::*;

/// Adds (`sign` 1) or removes (-1) the stored documents of partition `part` to or
/// from the statistics of the enabled table `tbl`'s collection, as this
/// transaction's changes (written when it commits); returns the documents counted.
/// Interrupts: checked per batch of rows fetched.
#[pg_extern(volatile, strict, parallel_unsafe)]
fn _count_partition(tbl: pg_sys::Oid, part: pg_sys::Oid, sign: i32) -> i64 {
    count_partition(tbl, part, sign)
}

/// [`_count_partition`], for the extension's own callers (as its owner).
pub fn count_partition(tbl: pg_sys::Oid, part: pg_sys::Oid, sign: i32) -> i64 {
    let cfg = ingest::table_config(tbl);
    let name = lookup::qualified_relation(part);
    let sql = format!("SELECT dedup_doc FROM {name} WHERE dedup_doc IS NOT NULL");
    let mut n = 0i64;
    // Read as the partition's owner: planning a query on it runs what its owner
    // put there (see `privilege::as_table_owner`).
    crate::pg::privilege::as_table_owner(part, || {
        Spi::connect_mut(|c| {
            let mut cur = c.open_cursor(sql.as_str(), &[]);
            loop {
                pgrx::check_for_interrupts!();
                // A batch holds pointers to its documents, read one at a time.
                let fetched = crate::pg::fetch_batch(&mut cur, 1000, |batch| {
                    let fetched = batch.len();
                    for d in batch.filter_map(|r| r.get::<DocumentDatum>(1).ok().flatten()) {
                        let doc = d.decode();
                        if sign < 0 {
                            stats::remove(cfg.coll.id, &doc, None);
                        } else {
                            stats::add(cfg.coll.id, &doc, None);
                        }
                        n += 1;
                    }
                    fetched
                })
                .unwrap_or_else(|e| spi_err(e));
                if fetched == 0 {
                    break;
                }
            }
        })
    });
    n
}

/// The relation a name in a DDL statement names, looked up without a lock and
/// without raising: None when it does not exist, or when PostgreSQL would refuse
/// the name itself (a schema the caller may not use, another database). The
/// hooks here act only on statements PostgreSQL will run, and leave every error
/// to it, in its order.
fn quiet_relid(rv: *mut pg_sys::RangeVar) -> Option<pg_sys::Oid> {
    if rv.is_null() {
        return None;
    }
    // SAFETY: a RangeVar of the statement being run; catalog lookups that do not
    // raise (missing_ok), then the lookup itself, which raises only for what was
    // checked here.
    unsafe {
        if !(*rv).catalogname.is_null() {
            let here = pg_sys::get_database_name(pg_sys::MyDatabaseId);
            if here.is_null()
                || std::ffi::CStr::from_ptr((*rv).catalogname) != std::ffi::CStr::from_ptr(here)
            {
                return None;
            }
        }
        if !(*rv).schemaname.is_null() && std::ffi::CStr::from_ptr((*rv).schemaname) != c"pg_temp" {
            let nsp = pg_sys::get_namespace_oid((*rv).schemaname, true);
            if nsp == pg_sys::InvalidOid
                || pg_sys::pg_namespace_aclcheck(
                    nsp,
                    crate::pg::privilege::caller(),
                    pg_sys::ACL_USAGE as pg_sys::AclMode,
                ) != pg_sys::AclResult::ACLCHECK_OK
            {
                return None;
            }
        }
        let oid = pg_sys::RangeVarGetRelidExtended(
            rv,
            pg_sys::NoLock as pg_sys::LOCKMODE,
            pg_sys::RVROption::RVR_MISSING_OK,
            None,
            std::ptr::null_mut(),
        );
        (oid != pg_sys::InvalidOid).then_some(oid)
    }
}

/// Before `DROP TABLE` of a partition of an enabled partitioned table (at any
/// depth, or a partitioned partition with its own), its documents leave the
/// statistics: after the drop nothing can read them. The event trigger
/// `dedup_partition_dropping` (ON ddl_command_start WHEN TAG IN ('DROP TABLE', 'ALTER TABLE', 'CREATE TABLE'))
/// calls this with the statement. If the drop fails, the transaction's changes go
/// with it.
fn dropping(stmt: *mut pg_sys::DropStmt) {
    if crate::pg::citus::internal_backend() {
        return;
    }
    // SAFETY: a DropStmt the event trigger was handed; its objects are lists of
    // String nodes naming relations, looked up without a lock (the drop that
    // follows takes its own).
    let (names, missing_ok): (Vec<Option<pg_sys::Oid>>, bool) = unsafe {
        if (*stmt).removeType != pg_sys::ObjectType::OBJECT_TABLE || (*stmt).objects.is_null() {
            return;
        }
        let objects = pgrx::PgList::<pg_sys::List>::from_pg((*stmt).objects);
        let names = objects
            .iter_ptr()
            .map(|names| quiet_relid(pg_sys::makeRangeVarFromNameList(names)))
            .collect();
        (names, (*stmt).missing_ok)
    };
    // A DROP that PostgreSQL will refuse (a name it cannot find without IF
    // EXISTS, one it refuses, a table the caller may not drop: its owner's or
    // its schema's) does nothing here, waits on nothing, and fails as it would
    // without the extension.
    if !missing_ok && names.iter().any(Option::is_none) {
        return;
    }
    let rels: Vec<pg_sys::Oid> = names.into_iter().flatten().collect();
    let me = crate::pg::privilege::caller();
    let may_drop = |r: pg_sys::Oid| {
        // SAFETY: catalog lookups of a relation found above, before any wait.
        crate::pg::privilege::owns(r, me)
            || unsafe { pg_sys::pg_namespace_ownercheck(pg_sys::get_rel_namespace(r), me) }
    };
    if !rels.iter().all(|&r| may_drop(r)) {
        return;
    }
    // Each leaf once, however often the command names it or a table above it
    // (`DROP TABLE p1, p1`, or a sub-partition with its own leaf).
    let mut counted: std::collections::HashSet<pg_sys::Oid> = std::collections::HashSet::new();
    let enabled_root = |rel: pg_sys::Oid| {
        crate::pg::privilege::as_owner(|| {
            lookup::one_with_args::<pg_sys::Oid>(
                "SELECT e.tbl::oid FROM dedup.enabled_tables e \
                 WHERE e.tbl IN (SELECT a.relid FROM pg_catalog.pg_partition_ancestors($1) a) AND e.tbl <> $1::regclass",
                &[rel.into()],
            )
            .ok()
            .flatten()
        })
    };
    for rel in rels {
        let Some(root) = enabled_root(rel) else {
            continue;
        };
        // The statistics lock before the drop locks the partition (see
        // [`partition_ddl`]).
        if let Some(cfg) = ingest::enabled_table(root) {
            crate::pg::stats_lock::write(cfg.coll.id);
        }
        // Then its parent and the partition, in the order and mode DROP TABLE
        // takes them, and the question again: a DETACH that committed while this
        // waited has taken the documents out already (they were subtracted twice).
        let parent = lookup::one_with_args::<pg_sys::Oid>(
            "SELECT i.inhparent FROM pg_catalog.pg_inherits i WHERE i.inhrelid OPERATOR(pg_catalog.=) $1",
            &[rel.into()],
        )
        .ok()
        .flatten();
        // SAFETY: relations found above; a lock on one dropped meanwhile is taken
        // on its OID and released at the end of the transaction.
        unsafe {
            if let Some(p) = parent {
                pg_sys::LockRelationOid(p, pg_sys::AccessExclusiveLock as pg_sys::LOCKMODE);
            }
            pg_sys::LockRelationOid(rel, pg_sys::AccessExclusiveLock as pg_sys::LOCKMODE);
        }
        let Some(root) = enabled_root(rel) else {
            continue;
        };
        for leaf in crate::pg::partitions::leaves(rel, None) {
            if counted.insert(leaf.rel) {
                crate::pg::privilege::as_owner(|| count_partition(root, leaf.rel, -1));
            }
        }
    }
}

/// Before DDL that adds or removes a partition under an enabled partitioned table
/// (`ALTER TABLE … ATTACH / DETACH PARTITION`, `CREATE TABLE … PARTITION OF`), the
/// collection's statistics lock (share mode, as a committing writer takes it),
/// before the command locks any table: the command holds the parent or the
/// partition, which a recompute reads, while its bookkeeping (or a later write
/// of its transaction) writes the statistics at commit under that lock. Taken
/// only then, a recompute that held the lock and went on to read the table
/// closed a cycle with it (40P01 for one of them). Taken first, the command waits
/// for the recompute, or the recompute for the command. Only for a parent the
/// caller owns (the command checks after this hook).
fn partition_ddl(parent: *mut pg_sys::RangeVar) {
    if crate::pg::citus::internal_backend() {
        return;
    }
    let Some(parent) = quiet_relid(parent) else {
        return;
    };
    if !crate::pg::privilege::owns(parent, crate::pg::privilege::caller()) {
        return;
    }
    // The parent itself, or a partitioned partition of an enabled table.
    if let Some(cfg) = ingest::enabled_table(parent) {
        crate::pg::stats_lock::write(cfg.coll.id);
    }
}

/// The parent an `ALTER TABLE` attaches a partition to or detaches one from.
///
/// # Safety
/// `stmt` must be an AlterTableStmt the event trigger machinery handed out.
unsafe fn partition_parent_of_alter(stmt: *mut pg_sys::AlterTableStmt) -> *mut pg_sys::RangeVar {
    // SAFETY: by the caller's contract; the node tags are checked before each cast.
    unsafe {
        if (*stmt).cmds.is_null() {
            return std::ptr::null_mut();
        }
        let cmds = pgrx::PgList::<pg_sys::Node>::from_pg((*stmt).cmds);
        let partitions = cmds.iter_ptr().any(|c| {
            !c.is_null()
                && (*c).type_ == pg_sys::NodeTag::T_AlterTableCmd
                && matches!(
                    (*c.cast::<pg_sys::AlterTableCmd>()).subtype,
                    pg_sys::AlterTableType::AT_AttachPartition
                        | pg_sys::AlterTableType::AT_DetachPartition
                        | pg_sys::AlterTableType::AT_DetachPartitionFinalize
                )
        });
        if partitions {
            (*stmt).relation
        } else {
            std::ptr::null_mut()
        }
    }
}

/// The parent a `CREATE TABLE … PARTITION OF` creates a partition of.
///
/// # Safety
/// `stmt` must be a CreateStmt the event trigger machinery handed out.
unsafe fn partition_parent_of_create(stmt: *mut pg_sys::CreateStmt) -> *mut pg_sys::RangeVar {
    // SAFETY: by the caller's contract; a partition's inhRelations is its parent.
    unsafe {
        if (*stmt).partbound.is_null() || (*stmt).inhRelations.is_null() {
            return std::ptr::null_mut();
        }
        let parents = pgrx::PgList::<pg_sys::Node>::from_pg((*stmt).inhRelations);
        let first = parents.iter_ptr().next();
        match first {
            Some(n) if !n.is_null() && (*n).type_ == pg_sys::NodeTag::T_RangeVar => {
                n.cast::<pg_sys::RangeVar>()
            }
            _ => std::ptr::null_mut(),
        }
    }
}

/// Before `DROP SCHEMA … CASCADE` or `DROP OWNED BY`, which drop partitions of an
/// enabled table without naming them (the statistics kept their documents): the
/// leaf partitions that go while their enabled table stays (one of its schemas,
/// or its owners, is not among those dropped) leave the statistics, as a `DROP
/// TABLE` of each does. `cond` is an SQL condition on `pg_class` alias `x`, true
/// for a relation the command drops, over `$1` (an `oid[]`).
fn dropping_implicitly(cond: &str, ids: Vec<pg_sys::Oid>) {
    if crate::pg::citus::internal_backend() || ids.is_empty() {
        return;
    }
    let on = |alias: &str| cond.replace("x.", &format!("{alias}."));
    let sql = format!(
        "SELECT c.oid, r.tbl::oid FROM pg_catalog.pg_class c \
         JOIN LATERAL (SELECT e.tbl FROM dedup.enabled_tables e \
                       WHERE e.tbl IN (SELECT a.relid FROM pg_catalog.pg_partition_ancestors(c.oid) a) \
                         AND e.tbl <> c.oid::regclass) r ON true \
         JOIN pg_catalog.pg_class rc ON rc.oid = r.tbl \
         WHERE c.relispartition AND c.relkind = 'r' AND NOT ({root}) \
           AND EXISTS (SELECT 1 FROM pg_catalog.pg_partition_ancestors(c.oid) a \
                       JOIN pg_catalog.pg_class ac ON ac.oid = a.relid WHERE {anc})",
        root = on("rc"),
        anc = on("ac"),
    );
    let leaves: Vec<(pg_sys::Oid, pg_sys::Oid)> = crate::pg::privilege::as_owner(|| {
        Spi::connect(|c| {
            c.select(&sql, None, &[ids.into()])
                .unwrap_or_else(|e| spi_err(e))
                .filter_map(|r| {
                    Some((
                        r.get::<pg_sys::Oid>(1).ok().flatten()?,
                        r.get::<pg_sys::Oid>(2).ok().flatten()?,
                    ))
                })
                .collect()
        })
    });
    for (leaf, root) in leaves {
        if let Some(cfg) = ingest::enabled_table(root) {
            crate::pg::stats_lock::write(cfg.coll.id);
        }
        crate::pg::privilege::as_owner(|| count_partition(root, leaf, -1));
    }
}

/// `DROP SCHEMA … CASCADE` of schemas the caller owns (see
/// [`dropping_implicitly`]); any other does nothing here.
fn dropping_schemas(stmt: *mut pg_sys::DropStmt) {
    let me = crate::pg::privilege::caller();
    // SAFETY: a DropStmt of schemas: its objects are String nodes; the lookups do
    // not raise.
    let ids: Option<Vec<pg_sys::Oid>> = unsafe {
        if (*stmt).behavior != pg_sys::DropBehavior::DROP_CASCADE || (*stmt).objects.is_null() {
            return;
        }
        let objects = pgrx::PgList::<pg_sys::Node>::from_pg((*stmt).objects);
        objects
            .iter_ptr()
            .map(|n| {
                if n.is_null() || (*n).type_ != pg_sys::NodeTag::T_String {
                    return None;
                }
                let name = (*n.cast::<pg_sys::String>()).sval;
                let nsp = pg_sys::get_namespace_oid(name, true);
                (nsp != pg_sys::InvalidOid && pg_sys::pg_namespace_ownercheck(nsp, me))
                    .then_some(nsp)
            })
            .collect()
    };
    if let Some(ids) = ids {
        dropping_implicitly("x.relnamespace = ANY($1)", ids);
    }
}

/// `DROP OWNED BY` roles the caller has the privileges of (see
/// [`dropping_implicitly`]): the tables they own, and those of the schemas they
/// own (which go with CASCADE; without it the command fails and takes back what
/// this did); any other does nothing here.
fn dropping_owned(stmt: *mut pg_sys::DropOwnedStmt) {
    let me = crate::pg::privilege::caller();
    // SAFETY: a DropOwnedStmt: its roles are RoleSpec nodes; the lookups do not
    // raise (missing_ok).
    let ids: Option<Vec<pg_sys::Oid>> = unsafe {
        if (*stmt).roles.is_null() {
            return;
        }
        let roles = pgrx::PgList::<pg_sys::RoleSpec>::from_pg((*stmt).roles);
        roles
            .iter_ptr()
            .map(|r| {
                let role = pg_sys::get_rolespec_oid(r, true);
                (role != pg_sys::InvalidOid && pg_sys::has_privs_of_role(me, role)).then_some(role)
            })
            .collect()
    };
    if let Some(ids) = ids {
        // Their tables, and with CASCADE every table of the schemas they own.
        dropping_implicitly(
            "(x.relowner = ANY($1) OR x.relnamespace IN \
              (SELECT n.oid FROM pg_catalog.pg_namespace n WHERE n.nspowner = ANY($1)))",
            ids,
        );
    }
}

#[no_mangle]
#[doc(hidden)]
pub extern "C" fn pg_finfo_dedup_partition_dropping() -> &'static pg_sys::Pg_finfo_record {
    const V1: pg_sys::Pg_finfo_record = pg_sys::Pg_finfo_record { api_version: 1 };
    &V1
}

/// `dedup._partition_dropping()`, the event trigger function (see [`dropping`] and
/// [`partition_ddl`]). Its queries of the extension's tables are allowed under
/// Citus's local execution of a shard's DDL (`citus::nested`), as the plpgsql
/// event triggers' `SET citus.allow_nested_distributed_execution` allows theirs:
/// on a node that holds shards a `DROP TABLE` of a distributed table drops them
/// in the client's backend, and Citus otherwise refused it ("cannot execute a
/// distributed query from a query on a shard").
#[no_mangle]
#[doc(hidden)]
#[pg_guard]
pub unsafe extern "C-unwind" fn dedup_partition_dropping(
    fcinfo: pg_sys::FunctionCallInfo,
) -> pg_sys::Datum {
    // SAFETY: PostgreSQL calls an event trigger function with EventTriggerData as
    // its context; anything else is left alone.
    crate::pg::citus::nested(|| unsafe { partition_dropping(fcinfo) })
}

/// [`dedup_partition_dropping`]'s body.
///
/// # Safety
/// `fcinfo` is the call PostgreSQL made.
unsafe fn partition_dropping(fcinfo: pg_sys::FunctionCallInfo) -> pg_sys::Datum {
    // SAFETY: by the caller's contract; the context is checked before its use.
    unsafe {
        let ctx = (*fcinfo).context;
        if !ctx.is_null() && (*ctx).type_ == pg_sys::NodeTag::T_EventTriggerData {
            let data = ctx.cast::<pg_sys::EventTriggerData>();
            let tree = (*data).parsetree;
            if !tree.is_null() && (*tree).type_ == pg_sys::NodeTag::T_DropStmt {
                let stmt = tree.cast::<pg_sys::DropStmt>();
                if (*stmt).removeType == pg_sys::ObjectType::OBJECT_SCHEMA {
                    dropping_schemas(stmt);
                } else {
                    dropping(stmt);
                }
            } else if !tree.is_null() && (*tree).type_ == pg_sys::NodeTag::T_DropOwnedStmt {
                dropping_owned(tree.cast::<pg_sys::DropOwnedStmt>());
            } else if !tree.is_null() && (*tree).type_ == pg_sys::NodeTag::T_AlterTableStmt {
                let stmt = tree.cast::<pg_sys::AlterTableStmt>();
                let detached = detached_by(stmt);
                DETACHING.with(|d| *d.borrow_mut() = detached);
                partition_ddl(partition_parent_of_alter(stmt));
            } else if !tree.is_null() && (*tree).type_ == pg_sys::NodeTag::T_CreateStmt {
                partition_ddl(partition_parent_of_create(
                    tree.cast::<pg_sys::CreateStmt>(),
                ));
            }
        }
        pg_sys::Datum::from(0usize)
    }
}

/// What one collected DDL command (a row of `pg_event_trigger_ddl_commands()`)
/// does to partitions: `added` (CREATE TABLE ... PARTITION OF, ALTER TABLE ...
/// ATTACH PARTITION), `detached` (DETACH PARTITION, also CONCURRENTLY and
/// FINALIZE), or nothing. The event trigger acts on these alone: an ALTER TABLE
/// of an enabled partitioned table that adds a constraint is none, and pg_restore
/// runs one after it restored the statistics but before the partitions' own
/// statement triggers.
///
/// # Safety
/// `cmd` must be a `CollectedCommand` the event trigger machinery handed out.
unsafe fn partition_change(cmd: *const pg_sys::CollectedCommand) -> Option<&'static str> {
    // SAFETY: by the caller's contract; the node tag is checked before the cast.
    unsafe {
        if cmd.is_null() {
            return None;
        }
        if (*cmd).type_ == pg_sys::CollectedCommandType::SCT_Simple {
            let tree = (*cmd).parsetree;
            return (!tree.is_null()
                && (*tree).type_ == pg_sys::NodeTag::T_CreateStmt
                && !(*tree.cast::<pg_sys::CreateStmt>()).partbound.is_null())
            .then_some("added");
        }
        let mut change = None;
        for at in ddl_command::alter_table_cmds(cmd) {
            match (*at).subtype {
                pg_sys::AlterTableType::AT_AttachPartition => change = Some("added"),
                pg_sys::AlterTableType::AT_DetachPartition
                | pg_sys::AlterTableType::AT_DetachPartitionFinalize => return Some("detached"),
                _ => {}
            }
        }
        change
    }
}

// `dedup._partition_command(pg_ddl_command)` (see [`partition_change`]): STRICT,
// so the argument is never NULL; the text returned is palloc'd by into_datum.
v1_function!(
    dedup_partition_command,
    pg_finfo_dedup_partition_command,
    |fcinfo| unsafe {
        match partition_change(ddl_command::arg(fcinfo, 0)).and_then(|s| s.into_datum()) {
            Some(d) => d,
            None => pgrx::fcinfo::pg_return_null(fcinfo),
        }
    }
);

thread_local! {
    /// The tables the `ALTER TABLE … DETACH PARTITION` being run names, found when
    /// it started (with the caller's search_path, which the event trigger at its
    /// end does not have): set by every `ALTER TABLE`, read by
    /// `dedup._detached_partitions()`, emptied at every transaction's end.
    static DETACHING: std::cell::RefCell<Vec<pg_sys::Oid>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Forgets the tables a DETACH named: the transaction ended.
pub fn forget_detaching() {
    DETACHING.with(|d| d.borrow_mut().clear());
}

/// The tables an `ALTER TABLE` detaches (`DETACH PARTITION`, also CONCURRENTLY
/// and FINALIZE), each as found by name now, or none.
///
/// # Safety
/// `stmt` must be an AlterTableStmt the event trigger machinery handed out.
unsafe fn detached_by(stmt: *mut pg_sys::AlterTableStmt) -> Vec<pg_sys::Oid> {
    // SAFETY: by the caller's contract; the node tags are checked before each cast.
    unsafe {
        if (*stmt).cmds.is_null() {
            return Vec::new();
        }
        pgrx::PgList::<pg_sys::Node>::from_pg((*stmt).cmds)
            .iter_ptr()
            .filter_map(|c| {
                if c.is_null() || (*c).type_ != pg_sys::NodeTag::T_AlterTableCmd {
                    return None;
                }
                let cmd = c.cast::<pg_sys::AlterTableCmd>();
                let def = (*cmd).def;
                (matches!(
                    (*cmd).subtype,
                    pg_sys::AlterTableType::AT_DetachPartition
                        | pg_sys::AlterTableType::AT_DetachPartitionFinalize
                ) && !def.is_null()
                    && (*def).type_ == pg_sys::NodeTag::T_PartitionCmd)
                    .then(|| quiet_relid((*def.cast::<pg_sys::PartitionCmd>()).name))
                    .flatten()
            })
            .collect()
    }
}

/// `dedup._detached_partitions()`: the tables the `ALTER TABLE … DETACH
/// PARTITION` being run detached (see [`DETACHING`]). The event trigger at its
/// end takes those out of their enabled table whoever owns them: PostgreSQL
/// detached them from it. (What it tells is the session's own command.)
#[pg_extern(volatile, parallel_unsafe)]
fn _detached_partitions() -> Vec<pg_sys::Oid> {
    DETACHING.with(|d| d.borrow().clone())
}

/// Has the trigger check the rows a partition brought along that hold no document
/// (an `UPDATE` of `dedup_doc`, which the trigger replaces by the text's own), as
/// the partition's owner: the event trigger that calls it runs as the extension's
/// owner, and the partition's own triggers fire too (see
/// `privilege::as_table_owner`). Not executable by PUBLIC. Returns the rows updated.
#[pg_extern(volatile, strict, parallel_unsafe)]
fn _recheck_partition(part: pg_sys::Oid, body_column: &str) -> i64 {
    let name = lookup::qualified_relation(part);
    let sql = format!(
        "UPDATE {name} SET dedup_doc = NULL WHERE dedup_doc IS NULL AND dedup_verdict IS NULL AND {} IS NOT NULL",
        pgrx::spi::quote_identifier(body_column)
    );
    crate::pg::privilege::as_table_owner(part, || {
        Spi::connect_mut(|c| {
            c.update(sql.as_str(), None, &[])
                .unwrap_or_else(|e| spi_err(e))
                .len() as i64
        })
    })
}
