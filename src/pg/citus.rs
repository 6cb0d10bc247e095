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

/// The distributed table whose shard `rel` is, when it is one. Citus names a shard
/// `<table>_<shard id>` beside its table (a long name cut, with a hash, before the
/// `_<shard id>`). The name is read from the syscache, not from a query on
/// `pg_class`: Citus hides shards from those in a client's backend, where a node
/// that holds shards (a single-node cluster, a coordinator with
/// `shouldhaveshards`) runs an insert into its own shard itself (an audit found
/// every such row left unchecked), and Citus itself says whether the relation is
/// that shard.
pub fn logical_table(rel: pg_sys::Oid) -> Option<pg_sys::Oid> {
    if !present() {
        return None;
    }
    let shard: i64 = rel_name(rel)?.rsplit_once('_')?.1.parse().ok()?;
    Spi::connect(|c| {
        let t = cache::select(
            c,
            "SELECT s.logicalrelid::pg_catalog.oid FROM pg_catalog.pg_dist_shard s \
             WHERE s.shardid = $1 AND pg_catalog.relation_is_a_known_shard($2::pg_catalog.oid::pg_catalog.regclass)",
            Some(1),
            &[shard.into(), rel.into()],
        );
        if t.is_empty() {
            return None;
        }
        t.first().get::<pg_sys::Oid>(1).ok().flatten()
    })
}

/// A relation's name, from the syscache (None when there is no such relation).
fn rel_name(rel: pg_sys::Oid) -> Option<String> {
    // SAFETY: a syscache lookup by OID; a palloc'd copy of the name, or null.
    unsafe {
        let p = pg_sys::get_rel_name(rel);
        if p.is_null() {
            return None;
        }
        let name = std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned();
        pg_sys::pfree(p.cast());
        Some(name)
    }
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

/// Whether the extension's own tables are Citus reference tables here (the first
/// `enable` of a distributed table made them so): every node then holds a copy
/// that names the enabled tables.
pub fn catalog_distributed() -> bool {
    present() && is_distributed_name("dedup.enabled_tables")
}

/// Raises 55000 for a row that pg_dedup's trigger meets on `rel`, a table (or a
/// shard of one) that this node's copy of the extension's tables does not name.
pub fn raise_unregistered(rel: pg_sys::Oid) -> ! {
    let tbl = logical_table(rel).unwrap_or(rel);
    crate::pg::raise(crate::error::DedupError::NotEnabled {
        msg: format!(
            "table {} has pg_dedup's trigger and this node's copy of pg_dedup's tables does not name it",
            lookup::relation_text(tbl).unwrap_or_default()
        ),
        hint: Some(
            "a worker added after tables were enabled holds the coordinator's table OIDs: run SELECT dedup.citus_resync() on the coordinator; a table Citus made anew (alter_distributed_table, undistribute_table) is no longer enabled: drop its dedup_* triggers (docs/scale-out.md)"
                .into(),
        ),
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

/// This node's copy of the reference table named `name` (a shard of it, beside it),
/// when this node has one. Code that reads a
/// table directly, without a query, reads that copy: the table itself is an empty
/// shell on every node. The copy is found by name in the syscache: a query on
/// `pg_class` does not see it in a client's backend (see [`logical_table`]).
pub fn local_placement(name: &str) -> Option<pg_sys::Oid> {
    if !present() {
        return None;
    }
    Spi::connect(|c| {
        let t = cache::select(
            c,
            "SELECT l.relname::pg_catalog.text || '_' || s.shardid, l.relnamespace \
             FROM pg_catalog.pg_dist_shard s JOIN pg_catalog.pg_class l ON l.oid = s.logicalrelid \
             WHERE s.logicalrelid = $1::pg_catalog.regclass",
            Some(1),
            &[name.into()],
        );
        if t.is_empty() {
            return None;
        }
        let r = t.first();
        let shard = r.get::<String>(1).ok().flatten()?;
        let nsp = r.get::<pg_sys::Oid>(2).ok().flatten()?;
        let shard = std::ffi::CString::new(shard).ok()?;
        // SAFETY: a syscache lookup by name and schema; InvalidOid when absent.
        let rel = unsafe { pg_sys::get_relname_relid(shard.as_ptr(), nsp) };
        (rel != pg_sys::InvalidOid).then_some(rel)
    })
}
