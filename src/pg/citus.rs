//! Citus: an enabled table that is a distributed table of a Citus cluster.
//!
//! Citus keeps a distributed table's rows in shards on the workers and runs its
//! triggers there, once per shard (with `citus.enable_unsafe_triggers`), seeing only
//! that shard. pg_dedup's trigger fires on a shard of the enabled table (this
//! module maps it back, [`logical_table`]), looks candidates up with a query on the
//! distributed table itself, which Citus sends to every shard on every worker, and
//! reads and writes the extension's own tables, which `dedup.enable` made reference
//! tables (a copy on every node, written on all of them in one transaction).
//! Citus forbids a query on a shard from starting distributed work of its own
//! unless `citus.allow_nested_distributed_execution` is on; [`nested`] turns it on
//! around pg_dedup's own work. See docs/scale-out.md.

use crate::pg::cache;
use crate::pg::lookup;
use pgrx::prelude::*;

/// Whether the Citus extension is installed in this database (its catalog table
/// `pg_dist_partition` exists: a syscache lookup).
pub fn present() -> bool {
    // SAFETY: a syscache lookup by name; InvalidOid when absent.
    unsafe {
        pg_sys::get_relname_relid(
            c"pg_dist_partition".as_ptr(),
            pg_sys::Oid::from(pg_sys::PG_CATALOG_NAMESPACE),
        ) != pg_sys::InvalidOid
    }
}

/// Whether this backend serves a Citus coordinator or worker (its connections name
/// themselves `citus_internal …`): the DDL it runs creates and drops shards, never
/// a table pg_dedup has registered, and its queries on the extension's reference
/// tables outside a trigger are refused. Only where Citus is installed: elsewhere
/// any role could name its session so and switch the DDL bookkeeping off.
pub fn internal_backend() -> bool {
    if !present() {
        return false;
    }
    // SAFETY: reads a string setting that always exists.
    let name = unsafe { pg_sys::GetConfigOption(c"application_name".as_ptr(), true, false) };
    if name.is_null() {
        return false;
    }
    // SAFETY: a NUL-terminated string owned by the GUC machinery.
    unsafe { std::ffi::CStr::from_ptr(name) }
        .to_bytes()
        .starts_with(b"citus_internal")
}

/// Runs `f` with `citus.allow_nested_distributed_execution` on when Citus is
/// installed: pg_dedup's work inside a trigger on a shard, or in the commit of a
/// transaction a coordinator started on a worker, runs queries on the distributed
/// table and the reference tables, which Citus otherwise refuses there.
pub fn nested<R>(f: impl FnOnce() -> R) -> R {
    if present() {
        crate::pg::guc_scope::with_settings(
            &[(c"citus.allow_nested_distributed_execution", c"on")],
            f,
        )
    } else {
        f()
    }
}

/// The distributed table whose shard `rel` is, when it is one (Citus names a shard
/// `<table>_<shard id>`, beside its table).
pub fn logical_table(rel: pg_sys::Oid) -> Option<pg_sys::Oid> {
    if !present() {
        return None;
    }
    Spi::connect(|c| {
        let t = cache::select(
            c,
            "SELECT s.logicalrelid::oid FROM pg_catalog.pg_class r \
             JOIN pg_catalog.pg_dist_shard s ON s.shardid = substring(r.relname FROM '_([0-9]+)$')::bigint \
             JOIN pg_catalog.pg_class l ON l.oid = s.logicalrelid \
             WHERE r.oid = $1 AND l.relnamespace = r.relnamespace \
               AND r.relname = l.relname || '_' || s.shardid",
            Some(1),
            &[rel.into()],
        );
        if t.is_empty() {
            return None;
        }
        t.first().get::<pg_sys::Oid>(1).ok().flatten()
    })
}

/// Whether `tbl` is a Citus distributed table (or a reference table).
pub fn is_distributed(tbl: pg_sys::Oid) -> bool {
    if !present() {
        return false;
    }
    Spi::connect(|c| {
        let t = cache::select(
            c,
            "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_dist_partition WHERE logicalrelid = $1)",
            Some(1),
            &[tbl.into()],
        );
        t.first().get::<bool>(1).ok().flatten().unwrap_or(false)
    })
}

/// Whether the table named `name` is a Citus distributed or reference table.
pub fn is_distributed_name(name: &str) -> bool {
    present()
        && lookup::one_with_args::<pg_sys::Oid>(
            "SELECT $1::pg_catalog.regclass::pg_catalog.oid",
            &[name.into()],
        )
        .ok()
        .flatten()
        .is_some_and(is_distributed)
}

/// This node's copy of the reference table named `name` (a shard of it, beside it)
/// and that copy's primary key index, when this node has one. Code that reads a
/// table directly, without a query, reads that copy: the table itself is an empty
/// shell on every node.
pub fn local_placement(name: &str) -> Option<(pg_sys::Oid, pg_sys::Oid)> {
    if !present() {
        return None;
    }
    Spi::connect(|c| {
        let t = cache::select(
            c,
            "SELECT r.oid, i.indexrelid FROM pg_catalog.pg_dist_shard s \
             JOIN pg_catalog.pg_class l ON l.oid = s.logicalrelid \
             JOIN pg_catalog.pg_class r ON r.relnamespace = l.relnamespace AND r.relname = l.relname || '_' || s.shardid \
             JOIN pg_catalog.pg_index i ON i.indrelid = r.oid AND i.indisprimary \
             WHERE s.logicalrelid = $1::pg_catalog.regclass",
            Some(1),
            &[name.into()],
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
}
