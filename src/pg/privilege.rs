//! Whose rights the extension's own bookkeeping runs with, and what a caller may
//! be told.
//!
//! A role that may write to an enabled table needs nothing else: the trigger's
//! reads and writes of the extension's tables (configuration, statistics, models,
//! sources, rejected rows), and the statistics written when the transaction
//! commits, run as the extension's owner ([`as_owner`]), with `search_path` pinned
//! to `pg_catalog, pg_temp` so that no function or operator of the caller's can be
//! picked up by a query of the extension's. The extension's tables grant nothing to
//! PUBLIC. What the extension reveals of a table's rows (the original's key in an
//! error's DETAIL, the answers of `is_duplicate` and `find_original`) follows the
//! rule PostgreSQL applies to a unique violation's DETAIL ([`may_read`]).

use crate::error::DedupError;
use crate::pg::lookup;
use crate::pg::raise;
use pgrx::pg_sys;
use std::cell::Cell;

thread_local! {
    /// The extension owner's role, with the configuration epoch it was read at.
    static OWNER: Cell<Option<(u64, pg_sys::Oid)>> = const { Cell::new(None) };
}

/// The role that owns the extension (`pg_extension.extowner`).
fn owner() -> pg_sys::Oid {
    let epoch = crate::pg::config_cache::epoch();
    if let Some((e, o)) = OWNER.with(Cell::get) {
        if e == epoch {
            return o;
        }
    }
    let o = lookup::one::<pg_sys::Oid>(
        "SELECT extowner FROM pg_catalog.pg_extension WHERE extname OPERATOR(pg_catalog.=) 'pg_dedup'",
    )
    .ok()
    .flatten()
    .unwrap_or_else(|| {
        raise(DedupError::UndefinedObject {
            msg: "extension \"pg_dedup\" is not installed in this database".into(),
            hint: None,
        })
    });
    OWNER.with(|c| c.set(Some((epoch, o))));
    o
}

/// The role the caller runs as (outside [`as_owner`]).
pub fn caller() -> pg_sys::Oid {
    // SAFETY: reads the backend's current user.
    unsafe { pg_sys::GetUserId() }
}

/// Runs `f` as the extension's owner, as a restricted operation (no `SET ROLE`,
/// no temporary objects), with `search_path = pg_catalog, pg_temp`; both are put
/// back afterwards, and by the (sub)transaction abort when `f` raises.
pub fn as_owner<R>(f: impl FnOnce() -> R) -> R {
    run_as(owner(), f)
}

/// Runs `f` as `role`, as [`as_owner`] and [`as_table_owner`] describe.
fn run_as<R>(role: pg_sys::Oid, f: impl FnOnce() -> R) -> R {
    let mut saved_user = pg_sys::InvalidOid;
    let mut saved_ctx: i32 = 0;
    // SAFETY: saves and switches the current user, as fmgr does for a SECURITY
    // DEFINER function and PostgreSQL's maintenance commands for a table's owner.
    unsafe {
        pg_sys::GetUserIdAndSecContext(&mut saved_user, &mut saved_ctx);
        pg_sys::SetUserIdAndSecContext(
            role,
            saved_ctx
                | pg_sys::SECURITY_LOCAL_USERID_CHANGE as i32
                | pg_sys::SECURITY_RESTRICTED_OPERATION as i32,
        );
    }
    let r = crate::pg::guc_scope::with_settings(&[(c"search_path", c"pg_catalog, pg_temp")], f);
    // SAFETY: puts back the user saved above.
    unsafe { pg_sys::SetUserIdAndSecContext(saved_user, saved_ctx) };
    r
}

/// Makes this session's temporary table `name` afresh with `create` (the
/// extension's own fixed DDL), as the extension's owner (see
/// [`owner_temp_ddl`]); a table of that name the caller made is dropped first.
pub fn owner_temp_table(name: &str, create: &str) {
    let qualified = format!("pg_temp.{name}");
    let exists = lookup::one_with_args::<bool>(
        "SELECT pg_catalog.to_regclass($1) IS NOT NULL",
        &[qualified.as_str().into()],
    )
    .ok()
    .flatten()
    .unwrap_or(false);
    if exists {
        owner_temp_ddl(&format!("DROP TABLE {qualified}"));
    }
    owner_temp_ddl(create);
}

/// Runs the extension's own DDL `sql` on a temporary table of this session as
/// the extension's owner, so that the table is the owner's: code of other roles
/// that a recompute runs while it fills the table (a table's policies, triggers,
/// index expressions, as their owner or as the caller) may insert where
/// [`grant_on_temp_table`] lets it, but can neither alter, replace nor drop it,
/// and the extension's owner may read it afterwards. Not a restricted operation
/// (PostgreSQL refuses temporary tables in one), so nothing but `sql` may run:
/// fixed text of the extension's, with `search_path` pinned.
pub fn owner_temp_ddl(sql: &str) {
    let mut saved_user = pg_sys::InvalidOid;
    let mut saved_ctx: i32 = 0;
    // SAFETY: saves and switches the current user, as `run_as` does.
    unsafe {
        pg_sys::GetUserIdAndSecContext(&mut saved_user, &mut saved_ctx);
        pg_sys::SetUserIdAndSecContext(
            owner(),
            saved_ctx | pg_sys::SECURITY_LOCAL_USERID_CHANGE as i32,
        );
    }
    crate::pg::guc_scope::with_settings(&[(c"search_path", c"pg_catalog, pg_temp")], || {
        pgrx::Spi::run(sql).unwrap_or_else(|e| crate::pg::spi_err(e));
    });
    // SAFETY: puts back the user saved above.
    unsafe { pg_sys::SetUserIdAndSecContext(saved_user, saved_ctx) };
}

/// Grants `privs` on this session's temporary table `name` (made by
/// [`owner_temp_ddl`]) to the owner of `tbl`, who reads or writes it when a
/// recompute runs a query on `tbl` ([`as_table_owner`]).
pub fn grant_on_temp_table(name: &str, privs: &str, tbl: pg_sys::Oid) {
    let role = rel_owner(tbl);
    if role == owner() || role == pg_sys::InvalidOid {
        return;
    }
    let grant = lookup::one_with_args::<String>(
        "SELECT pg_catalog.format('GRANT %s ON pg_temp.%I TO %s', $1, $2, $3::pg_catalog.regrole)",
        &[privs.into(), name.into(), role.into()],
    )
    .ok()
    .flatten()
    .unwrap_or_default();
    as_owner(|| pgrx::Spi::run(&grant).unwrap_or_else(|e| crate::pg::spi_err(e)));
}

/// Whether `role` may read every row of `rel`, by the rule PostgreSQL uses for a
/// unique violation's DETAIL: SELECT on the table, and no row-level security
/// applying to that role; and USAGE on its schema, without which a `SELECT`
/// naming the table fails.
pub fn may_read(rel: pg_sys::Oid, role: pg_sys::Oid) -> bool {
    uses_schema_of(rel, role)
        // SAFETY: catalog checks on an existing relation; check_enable_rls with
        // noError does not raise.
        && unsafe {
            pg_sys::pg_class_aclcheck(rel, role, pg_sys::ACL_SELECT as pg_sys::AclMode)
                == pg_sys::AclResult::ACLCHECK_OK
                && pg_sys::check_enable_rls(rel, role, true)
                    != pg_sys::CheckEnableRlsResult::RLS_ENABLED as i32
        }
}

/// Whether `role` has USAGE on the schema of `rel` (a temporary table's schema
/// is usable by its session).
fn uses_schema_of(rel: pg_sys::Oid, role: pg_sys::Oid) -> bool {
    // SAFETY: catalog lookups of an existing relation and its schema.
    unsafe {
        let nsp = pg_sys::get_rel_namespace(rel);
        nsp == pg_sys::InvalidOid
            || pg_sys::pg_namespace_aclcheck(nsp, role, pg_sys::ACL_USAGE as pg_sys::AclMode)
                == pg_sys::AclResult::ACLCHECK_OK
    }
}

/// Whether `role` may read the column `duplicate_of` of `rel` (SELECT on the
/// table or on the column).
fn may_read_duplicate_of(rel: pg_sys::Oid, role: pg_sys::Oid) -> bool {
    // SAFETY: catalog checks on an existing relation; get_attnum gives 0 for a
    // missing column, which no column privilege names.
    unsafe {
        if pg_sys::pg_class_aclcheck(rel, role, pg_sys::ACL_SELECT as pg_sys::AclMode)
            == pg_sys::AclResult::ACLCHECK_OK
        {
            return true;
        }
        let attno = pg_sys::get_attnum(rel, c"duplicate_of".as_ptr());
        attno > 0
            && pg_sys::pg_attribute_aclcheck(
                rel,
                attno,
                role,
                pg_sys::ACL_SELECT as pg_sys::AclMode,
            ) == pg_sys::AclResult::ACLCHECK_OK
    }
}

/// Whether the trigger may store an original's key in the row `role` writes to
/// `leaf` (a partition of the enabled table `root`, or `root` itself), by the
/// rule PostgreSQL applies to a unique violation's DETAIL: not under row-level
/// security; and when the writer may not read the whole table, not where it could
/// read the key back (from the partition it writes or any table between it and
/// the root), since the original may be in a partition it may not read; nor when
/// it writes through a view (it holds no INSERT or UPDATE right on the table
/// itself), which may hide the original and show the key.
pub fn may_see_original_key(leaf: pg_sys::Oid, root: pg_sys::Oid, role: pg_sys::Oid) -> bool {
    if under_rls(root, role) || under_rls(leaf, role) {
        return false;
    }
    if may_read(root, role) {
        return true;
    }
    // Asked for every row a statement writes: the catalog walk is made once per
    // statement and command.
    let stamp = statement_stamp();
    let id = (leaf, root, role);
    if let Some(v) = KEY_SHOWN.with(|c| c.get().filter(|(i, s, _)| *i == id && *s == stamp)) {
        return v.2;
    }
    let chain = if leaf == root {
        vec![root]
    } else {
        with_ancestors(leaf)
    };
    let shown = chain.iter().any(|&r| writes_directly(r, role))
        && !chain
            .iter()
            .filter(|&&r| r != root)
            .any(|&r| under_rls(r, role) || may_read_duplicate_of(r, role));
    KEY_SHOWN.with(|c| c.set(Some((id, stamp, shown))));
    shown
}

/// Whether `role` holds INSERT or UPDATE on `rel` or on one of its columns: a
/// writer without it writes through a view (or a rule) whose owner holds it.
fn writes_directly(rel: pg_sys::Oid, role: pg_sys::Oid) -> bool {
    let mode = (pg_sys::ACL_INSERT | pg_sys::ACL_UPDATE) as pg_sys::AclMode;
    // SAFETY: catalog checks on an existing relation.
    unsafe {
        pg_sys::pg_class_aclmask(rel, role, mode, pg_sys::AclMaskHow::ACLMASK_ANY) != 0
            || pg_sys::pg_attribute_aclcheck_all(rel, role, mode, pg_sys::AclMaskHow::ACLMASK_ANY)
                == pg_sys::AclResult::ACLCHECK_OK
    }
}

/// (leaf, root, role) of [`may_see_original_key`].
type KeyAsk = (pg_sys::Oid, pg_sys::Oid, pg_sys::Oid);

thread_local! {
    /// The last answer of [`may_see_original_key`]'s catalog walk: what was
    /// asked, the statement it was asked in, and the answer.
    static KEY_SHOWN: Cell<Option<(KeyAsk, Stamp, bool)>> = const { Cell::new(None) };
}

/// `rel` and each table it is a partition of, up to the root.
fn with_ancestors(rel: pg_sys::Oid) -> Vec<pg_sys::Oid> {
    let above: Vec<pg_sys::Oid> = lookup::one_with_args::<Vec<pg_sys::Oid>>(
        "SELECT pg_catalog.array_agg(a.relid::pg_catalog.oid) FROM pg_catalog.pg_partition_ancestors($1) a \
         WHERE a.relid::pg_catalog.oid <> $1",
        &[rel.into()],
    )
    .ok()
    .flatten()
    .unwrap_or_default();
    std::iter::once(rel).chain(above).collect()
}

/// Whether row-level security applies to `role` on `rel`.
pub fn under_rls(rel: pg_sys::Oid, role: pg_sys::Oid) -> bool {
    // SAFETY: check_enable_rls with noError does not raise.
    unsafe {
        pg_sys::check_enable_rls(rel, role, true)
            == pg_sys::CheckEnableRlsResult::RLS_ENABLED as i32
    }
}

/// Whether `role` owns `rel` (or is a member of its owning role, or a superuser).
pub fn owns(rel: pg_sys::Oid, role: pg_sys::Oid) -> bool {
    // SAFETY: a catalog check on an existing relation.
    unsafe { pg_sys::pg_class_ownercheck(rel, role) }
}

/// Raises 42501 unless the caller may read every row of `rel` (see [`may_read`]),
/// and of each table it is a partition of: the reading functions answer from the
/// whole enabled table, which a partition's name leads them to. Then, as for the
/// trigger, unless each one's owner may read it (see [`require_owner_reads`]).
pub fn require_read(rel: pg_sys::Oid, what: &str) {
    let me = caller();
    let rels = with_ancestors(rel);
    let Some(denied) = rels.iter().copied().find(|&r| !may_read(r, me)) else {
        // They read the table as its owner, who must be able to as well.
        rels.into_iter().for_each(require_owner_reads);
        return;
    };
    if !uses_schema_of(denied, me) {
        let schema = lookup::one_with_args::<String>(
            "SELECT n.nspname::text FROM pg_catalog.pg_class c \
             JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = $1",
            &[denied.into()],
        )
        .ok()
        .flatten()
        .unwrap_or_default();
        raise(DedupError::InsufficientPrivilege {
            msg: format!("permission denied for schema {schema}"),
            hint: None,
        })
    }
    let name = lookup::relation_text(denied).unwrap_or_default();
    raise(DedupError::InsufficientPrivilege {
        msg: format!("permission denied for table {name}"),
        hint: Some(format!(
            "{what} answers from every row of the table: it needs SELECT on it, USAGE on its schema, and no row-level security applying to the caller"
        )),
    })
}

/// Raises 42501 when the owner of `rel` may not read it (no USAGE on its schema,
/// no SELECT: after `ALTER TABLE … OWNER TO` a role that lacks them): the trigger
/// reads an enabled table as its owner to tell an upsert from a new copy, and
/// PostgreSQL's own "permission denied for schema" named neither the owner nor
/// pg_dedup.
pub fn require_owner_reads(rel: pg_sys::Oid) {
    let owner = rel_owner(rel);
    if owner == pg_sys::InvalidOid || may_read(rel, owner) {
        return;
    }
    // SAFETY: a role OID from pg_class; missing_ok gives NULL for none.
    let role = unsafe {
        let n = pg_sys::GetUserNameFromId(owner, true);
        if n.is_null() {
            String::new()
        } else {
            std::ffi::CStr::from_ptr(n).to_string_lossy().into_owned()
        }
    };
    let what = if uses_schema_of(rel, owner) {
        "SELECT on it"
    } else {
        "USAGE on its schema"
    };
    raise(DedupError::InsufficientPrivilege {
        msg: format!(
            "the owner of table {} may not read it: {} lacks {what}",
            rel_name(rel),
            crate::error::excerpt(&role)
        ),
        hint: Some(
            "pg_dedup reads an enabled table as its owner (to tell an upsert from a new copy, and in the reading functions): grant the owner USAGE on the table's schema and SELECT on the table"
                .into(),
        ),
    })
}

/// A statement, and a command in it: (transaction start, statement start, command id).
type Stamp = (i64, i64, u32);

/// `dedup.enable`'s signature, for [`require_execute`] in its bodies.
pub const ENABLE: &str = "dedup.enable(pg_catalog.regclass, pg_catalog.name, pg_catalog.name, \
     pg_catalog.name, pg_catalog.name, pg_catalog.text, pg_catalog.text, pg_catalog.text, \
     pg_catalog.name, pg_catalog.interval)";

thread_local! {
    /// Public functions the caller was found allowed to execute, in which statement.
    static MAY_EXECUTE: std::cell::RefCell<Vec<(&'static str, pg_sys::Oid, Stamp)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Raises 42501 unless the caller may execute the public function `public` (a
/// schema-qualified signature, `dedup.pairs(pg_catalog.regclass, pg_catalog.text)`)
/// that wraps the internal one running: a `REVOKE EXECUTE` on the public name
/// then also closes its `_`-prefixed body, as PostgreSQL's own privileges would.
/// A yes is kept for the statement (`is_duplicate` runs once per row).
pub fn require_execute(public: &'static str) {
    let role = caller();
    let stamp = statement_stamp();
    let known = MAY_EXECUTE.with(|c| {
        c.borrow()
            .iter()
            .any(|(n, r, s)| *n == public && *r == role && *s == stamp)
    });
    if known {
        return;
    }
    let allowed = lookup::one_with_args::<bool>(
        "SELECT pg_catalog.has_function_privilege($1, $2::pg_catalog.regprocedure, 'EXECUTE')",
        &[role.into(), public.into()],
    )
    .ok()
    .flatten()
    .unwrap_or(false);
    if !allowed {
        let name = public.split('(').next().unwrap_or(public);
        raise(DedupError::InsufficientPrivilege {
            msg: format!(
                "permission denied for function {}",
                name.trim_start_matches("dedup.")
            ),
            hint: Some(format!(
                "this function is the body of {name}: it needs EXECUTE on {name}"
            )),
        });
    }
    MAY_EXECUTE.with(|c| {
        let mut c = c.borrow_mut();
        c.retain(|(_, _, s)| *s == stamp);
        c.push((public, role, stamp));
    });
}

thread_local! {
    /// Collections the caller was found allowed to read, in which statement and
    /// command (a GRANT or REVOKE advances the command counter): the reading
    /// functions are called once per row, the check is made once per statement.
    static MAY_READ_COLLECTION: std::cell::RefCell<Vec<(String, pg_sys::Oid, Stamp)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

fn statement_stamp() -> Stamp {
    // SAFETY: plain reads of the backend's transaction/statement timestamps and
    // command counter.
    unsafe {
        (
            pg_sys::GetCurrentTransactionStartTimestamp(),
            pg_sys::GetCurrentStatementStartTimestamp(),
            pg_sys::GetCurrentCommandId(false),
        )
    }
}

/// Whether `role` has the configuration rights (README, Security): SELECT on the
/// term statistics, which hold the words of every collection.
pub fn reads_configuration(role: pg_sys::Oid) -> bool {
    lookup::one_with_args::<bool>(
        "SELECT pg_catalog.has_table_privilege($1, 'dedup.term_stats', 'SELECT')",
        &[role.into()],
    )
    .ok()
    .flatten()
    .unwrap_or(false)
}

/// Raises 42501, with the grant README gives, unless the caller holds `privilege`
/// (`INSERT`, `UPDATE`, `DELETE`) on the extension's table `table`: the
/// configuration functions run with the caller's rights, and without this check
/// their first statement would fail with PostgreSQL's bare "permission denied for
/// table …".
pub fn require_configuration(table: &str, privilege: &str, what: &str) {
    let granted = lookup::one_with_args::<bool>(
        "SELECT pg_catalog.has_table_privilege($1, $2, $3)",
        &[caller().into(), table.into(), privilege.into()],
    )
    .ok()
    .flatten()
    .unwrap_or(false);
    if !granted {
        raise(DedupError::InsufficientPrivilege {
            msg: format!("permission denied for {what}"),
            hint: Some(format!(
                "{what} needs the configuration rights ({privilege} on {table}): the extension's owner can GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA dedup and USAGE ON ALL SEQUENCES IN SCHEMA dedup to a DBA role (README, Security)"
            )),
        });
    }
}

/// Whether the caller has the configuration rights (README, Security): it may
/// change any collection's statistics itself.
pub fn writes_configuration() -> bool {
    lookup::one_with_args::<bool>(
        "SELECT pg_catalog.has_table_privilege($1, 'dedup.term_stats', 'INSERT, UPDATE, DELETE')",
        &[caller().into()],
    )
    .ok()
    .flatten()
    .unwrap_or(false)
}

thread_local! {
    /// Tables that left a collection (`dedup.disable`) in the current transaction,
    /// with the collection's name: until the transaction ends, the collection
    /// still counts as reading them (see [`counted_tables`]). Emptied by
    /// [`forget_left_tables`] at every transaction's end.
    static LEFT_IN_XACT: std::cell::RefCell<Vec<(String, pg_sys::Oid)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Records that `tbl` left `collection` in this transaction (`dedup.disable`).
pub fn table_left(collection: &str, tbl: pg_sys::Oid) {
    LEFT_IN_XACT.with(|l| l.borrow_mut().push((collection.to_owned(), tbl)));
}

/// Forgets the tables that left their collections: the transaction ended.
pub fn forget_left_tables() {
    LEFT_IN_XACT.with(|l| l.borrow_mut().clear());
}

/// The tables whose rights decide who may change or read a collection: those it
/// reads ([`collection_tables`]) and those that left it in this transaction and
/// still exist. So README's way of changing a table's settings, `disable` and
/// `enable` in one transaction, stays its owner's also when a model trained on the
/// collection kept it with no table meanwhile; the statistics held nothing else of
/// that table's for a moment. None when there is no such collection.
fn counted_tables(collection: &str) -> Option<Vec<pg_sys::Oid>> {
    let mut tables = collection_tables(collection)?;
    let left: Vec<pg_sys::Oid> = LEFT_IN_XACT.with(|l| {
        l.borrow()
            .iter()
            .filter(|(c, _)| c == collection)
            .map(|&(_, t)| t)
            .collect()
    });
    for t in left {
        let exists = lookup::one_with_args::<bool>(
            "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_class WHERE oid = $1)",
            &[t.into()],
        )
        .ok()
        .flatten()
        .unwrap_or(false);
        if exists && !tables.contains(&t) {
            tables.push(t);
        }
    }
    Some(tables)
}

/// Raises 42501 unless the caller may change a collection's statistics: it owns
/// every table the collection reads (joining a collection makes its other tables'
/// writers run work on behalf of the new one), or, for a collection that reads no
/// table, has the configuration rights. An unknown collection passes. A table
/// that left the collection in this transaction still counts ([`counted_tables`]).
pub fn require_collection_owner(collection: &str) {
    let Some(tables) = counted_tables(collection) else {
        return;
    };
    let role = caller();
    if let Some(t) = tables.iter().find(|&&t| !owns(t, role)) {
        raise(DedupError::InsufficientPrivilege {
            msg: format!("must be owner of table {}", rel_name(*t)),
            hint: Some(format!(
                "collection \"{collection}\" reads that table: only a role that owns every table of a collection may change its statistics"
            )),
        });
    }
    if tables.is_empty() && !writes_configuration() {
        raise(DedupError::InsufficientPrivilege {
            msg: format!(
                "permission denied for collection \"{}\"",
                crate::error::excerpt(collection)
            ),
            hint: Some(
                "a collection that reads no table is changed only by a role with the configuration rights: to join one, call dedup.enable as a role that also owns the table (a superuser, say), or, to change an enabled table's settings, dedup.disable and dedup.enable it in one transaction (README, Security)"
                    .into(),
            ),
        });
    }
}

fn rel_name(rel: pg_sys::Oid) -> String {
    lookup::relation_text(rel).unwrap_or_default()
}

/// The tables a collection reads (that still exist), or None when there is no
/// such collection. Read as the extension's owner.
pub fn collection_tables(collection: &str) -> Option<Vec<pg_sys::Oid>> {
    as_owner(|| {
        lookup::one_with_args::<Vec<i64>>(
            "SELECT ARRAY(SELECT ct.tbl::oid::int8 FROM dedup.collection_tables ct \
                          WHERE ct.collection_id = c.id \
                            AND EXISTS (SELECT 1 FROM pg_catalog.pg_class r WHERE r.oid = ct.tbl)) \
             FROM dedup.collections c WHERE c.name = $1",
            &[collection.into()],
        )
        .ok()
        .flatten()
    })
    .map(|v| v.into_iter().map(|o| pg_sys::Oid::from(o as u32)).collect())
}

/// Whether a collection still counts the documents of a table it read that was
/// dropped (until a recompute): nobody can tell who could read that table.
fn counts_dropped_documents(collection: &str) -> bool {
    as_owner(|| {
        lookup::one_with_args::<bool>(
            "SELECT s.dropped_documents FROM dedup.collections c \
             JOIN dedup.collection_stats s ON s.collection_id = c.id WHERE c.name = $1",
            &[collection.into()],
        )
        .ok()
        .flatten()
        .unwrap_or(false)
    })
}

/// Whether the caller may read a collection's statistics: every table the
/// collection reads is one it may read whole ([`may_read`]: its statistics are
/// derived from their rows), or it has the configuration rights (a collection that
/// reads no table holds only what `add_document` gave it, and one that still counts
/// the documents of a dropped table, until a recompute, holds what nobody can say
/// who could read). An unknown collection is readable: its lookup raises 42704
/// next. A yes is kept for the statement.
pub fn may_read_collection(collection: &str) -> bool {
    if GRANTED.with(|g| g.borrow().iter().any(|c| c == collection)) {
        return true;
    }
    let role = caller();
    let stamp = statement_stamp();
    let known = MAY_READ_COLLECTION.with(|c| {
        c.borrow()
            .iter()
            .any(|(n, r, s)| n == collection && *r == role && *s == stamp)
    });
    if known {
        return true;
    }
    let allowed = match &counted_tables(collection) {
        None => true,
        Some(t) if !t.is_empty() && !counts_dropped_documents(collection) => {
            t.iter().all(|&rel| may_read(rel, role))
        }
        Some(_) => false,
    } || reads_configuration(role);
    if allowed {
        MAY_READ_COLLECTION.with(|c| {
            let mut c = c.borrow_mut();
            c.retain(|(_, _, s)| *s == stamp);
            c.push((collection.to_owned(), role, stamp));
        });
    }
    allowed
}

thread_local! {
    /// Collections the extension itself lets whoever runs read, for a moment (see
    /// [`granting_collection_read`]).
    static GRANTED: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Runs `f` with `collection` readable by whoever runs: a recompute signs a
/// table's rows as that table's owner ([`as_table_owner`]), who may not read the
/// other tables of a shared collection. Withdrawn when `f` returns or raises.
pub fn granting_collection_read<R>(collection: &str, f: impl FnOnce() -> R) -> R {
    struct Withdraw;
    impl Drop for Withdraw {
        fn drop(&mut self) {
            GRANTED.with(|g| {
                g.borrow_mut().pop();
            });
        }
    }
    GRANTED.with(|g| g.borrow_mut().push(collection.to_owned()));
    let _withdraw = Withdraw;
    f()
}

/// `dedup.status` lists the collections the caller may read
/// ([`may_read_collection`]).
#[pgrx::pg_extern(stable, strict, parallel_unsafe)]
fn _may_read_collection(collection: &str) -> bool {
    may_read_collection(collection)
}

/// Raises 42501 unless the caller may read a collection's statistics
/// ([`may_read_collection`]).
pub fn require_collection_read(collection: &str, what: &str) {
    if !may_read_collection(collection) {
        let msg = format!(
            "permission denied for collection \"{}\"",
            crate::error::excerpt(collection)
        );
        if counts_dropped_documents(collection) {
            raise(DedupError::InsufficientPrivilege {
                msg,
                hint: Some(
                    "the collection still counts the documents of a dropped table: until dedup.recompute rebuilds its statistics, only roles with the configuration rights read them".into(),
                ),
            });
        }
        let tables = counted_tables(collection).unwrap_or_default();
        if tables.is_empty() {
            raise(DedupError::InsufficientPrivilege {
                msg,
                hint: Some(format!(
                    "{what} reads the collection's statistics, and the collection reads no table: only roles with the configuration rights read it (README, Security)"
                )),
            });
        }
        // The table it may not read, by name: the collection is often named after
        // another table, which the caller may well read.
        let role = caller();
        let unread = tables
            .into_iter()
            .find(|&t| !may_read(t, role))
            .map(|t| format!("; the caller may not read {}", rel_name(t)))
            .unwrap_or_default();
        raise(DedupError::InsufficientPrivilege {
            msg,
            hint: Some(format!(
                "{what} reads the collection's statistics: it needs to read every table the collection reads (SELECT, USAGE on the table's schema, no row-level security applying to the caller), or the configuration rights (README, Security){unread}"
            )),
        });
    }
}

/// Runs a reading function's body (one that reads a collection's statistics, not
/// a table) as the extension's owner, once the caller may read the collection
/// ([`require_collection_read`]).
pub fn reading_collection<R>(collection: &str, what: &str, f: impl FnOnce() -> R) -> R {
    require_collection_read(collection, what);
    // Called once per row (`dedup.signature` over a table): the owner itself, as
    // the trigger and `recompute` are, needs no switch of user, but its queries
    // still run under a pinned search_path: the caller's (a superuser's
    // `"$user", public`) may hold another role's functions and operators.
    if caller() == owner() {
        crate::pg::guc_scope::pinned_path(f)
    } else {
        as_owner(f)
    }
}

/// The role that owns `rel` (from the syscache: the trigger's lookups ask it), or
/// InvalidOid when there is no such relation.
pub fn rel_owner(rel: pg_sys::Oid) -> pg_sys::Oid {
    // SAFETY: a syscache lookup by OID; the tuple, when found, is a pg_class row,
    // read and released here.
    unsafe {
        let tup = pg_sys::SearchSysCache1(
            pg_sys::SysCacheIdentifier::RELOID as i32,
            pg_sys::Datum::from(rel),
        );
        if tup.is_null() {
            return pg_sys::InvalidOid;
        }
        let form = pg_sys::GETSTRUCT(tup).cast::<pg_sys::FormData_pg_class>();
        let owner = (*form).relowner;
        pg_sys::ReleaseSysCache(tup);
        owner
    }
}

/// Runs `f` as the owner of `rel`, as a restricted operation with `search_path =
/// pg_catalog, pg_temp`, as PostgreSQL runs its maintenance of a table (VACUUM,
/// ANALYZE, REINDEX): a change the extension makes to a table's rows from a
/// privileged context (a SECURITY DEFINER trigger, [`as_owner`]) fires the table's
/// own triggers with its owner's rights, not the extension owner's. No switch when
/// the current user owns the table already.
pub fn as_table_owner<R>(rel: pg_sys::Oid, f: impl FnOnce() -> R) -> R {
    let owner = rel_owner(rel);
    if owner == caller() || owner == pg_sys::InvalidOid {
        return f();
    }
    run_as(owner, f)
}
