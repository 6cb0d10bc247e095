//! One-row lookups that only read.
//!
//! pgrx's `Spi::get_one*` run their query as an update, and an update first has
//! the transaction assigned an xid. A parallel query refuses that ("cannot assign
//! XIDs during a parallel operation", also in the leader while a `Gather` runs),
//! and so does a hot standby ("cannot assign TransactionIds during recovery"): a
//! reading function that looked a name up that way failed in both. These run the
//! query through `SpiClient::select`, which is read-only unless the transaction has
//! already written (then it takes a new snapshot, as an update would).

use pgrx::datum::{DatumWithOid, FromDatum, IntoDatum};
use pgrx::spi::{Spi, SpiResult};

/// The first column of the first row of a reading query, or None when it returns
/// no row or a NULL.
pub fn one<A: FromDatum + IntoDatum>(query: &str) -> SpiResult<Option<A>> {
    one_with_args(query, &[])
}

/// [`one`] with arguments `$1`, `$2`, ….
pub fn one_with_args<A: FromDatum + IntoDatum>(
    query: &str,
    args: &[DatumWithOid<'_>],
) -> SpiResult<Option<A>> {
    Spi::connect(|c| c.select(query, Some(1), args)?.first().get_one())
}

/// `rel` as `regclass` prints it (schema-qualified where the search_path needs
/// it, quoted), for messages; None when no relation has that OID.
pub fn relation_text(rel: pgrx::pg_sys::Oid) -> Option<String> {
    one_with_args::<String>(
        "SELECT $1::pg_catalog.regclass::pg_catalog.text",
        &[rel.into()],
    )
    .ok()
    .flatten()
}

/// `rel`'s schema-qualified, quoted name as the catalog has it now (the
/// syscache, not the transaction's snapshot: under REPEATABLE READ a table
/// renamed since, and another given its old name, must not be confused); None
/// when no relation has that OID.
pub fn current_name(rel: pgrx::pg_sys::Oid) -> Option<String> {
    use pgrx::pg_sys;
    // SAFETY: syscache lookups (NULL when the relation or its schema is gone);
    // the quoted name is copied out.
    unsafe {
        let name = pg_sys::get_rel_name(rel);
        if name.is_null() {
            return None;
        }
        let nsp = pg_sys::get_namespace_name(pg_sys::get_rel_namespace(rel));
        if nsp.is_null() {
            return None;
        }
        let q = pg_sys::quote_qualified_identifier(nsp, name);
        Some(std::ffi::CStr::from_ptr(q).to_string_lossy().into_owned())
    }
}

/// [`current_name`], to write into a statement's text whatever the search_path
/// it runs under; 42P01 when no relation has that OID.
pub fn qualified_relation(rel: pgrx::pg_sys::Oid) -> String {
    current_name(rel).unwrap_or_else(|| {
        crate::pg::raise(crate::error::DedupError::UndefinedTable(format!(
            "relation with OID {} does not exist",
            rel.to_u32()
        )))
    })
}
