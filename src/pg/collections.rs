//! The collection catalog row: a collection's id, language, weighting and
//! options, loaded once per statement (`load`), or an empty one for the built-in
//! model (`empty`). The SQL functions that change the catalog are in
//! `pg::catalog`.

use crate::error::DedupError;
use crate::pg::cache::{self, StmtMap};
use crate::pg::stored;
use crate::pg::{raise, OrRaise};
use crate::text::Lang;
use crate::weights::{Params, Weighting};
use pgrx::prelude::*;
use pgrx::JsonB;
use std::cell::RefCell;

/// A collection's catalog row.
#[derive(Debug, Clone)]
pub struct Collection {
    pub id: i32,
    pub name: String,
    pub lang: Lang,
    pub params: Params,
    pub options: serde_json::Value,
    /// What the trigger enforces, from `options` (see [`crate::limits`]).
    pub limits: crate::limits::Limits,
}

pub(crate) fn unknown_collection(name: &str) -> DedupError {
    DedupError::UndefinedObject {
        msg: format!(
            "collection \"{}\" does not exist",
            crate::error::excerpt(name)
        ),
        // A table of that name enabled into a collection of another name (its
        // collection is named after it only by default): that one is meant.
        // The name in the hint only when it is shown whole.
        hint: Some(if let Some(coll) = collection_of_table(name) {
            format!(
                "table {} is enabled with collection \"{}\": name that collection",
                crate::error::excerpt(name),
                crate::error::excerpt(&coll)
            )
        } else if crate::error::excerpt(name) == name {
            format!(
                "create it with dedup.create_collection('{}')",
                name.replace('\'', "''")
            )
        } else {
            "create it with dedup.create_collection(name)".into()
        }),
    }
}

/// The collection of an enabled table named `name` (`table` or `schema.table`,
/// unquoted: read from the catalog, whatever the search_path), if there is one.
fn collection_of_table(name: &str) -> Option<String> {
    // Under a pinned search_path: the caller's may hold its own `=` for two names.
    crate::pg::guc_scope::pinned_path(|| {
        crate::pg::lookup::one_with_args::<String>(
        "SELECT c.name FROM dedup.enabled_tables e JOIN dedup.collections c ON c.id = e.collection_id \
         JOIN pg_catalog.pg_class r ON r.oid = e.tbl JOIN pg_catalog.pg_namespace n ON n.oid = r.relnamespace \
         WHERE r.relname = $1 OR n.nspname || '.' || r.relname = $1 \
         ORDER BY n.nspname = 'public' DESC, n.nspname LIMIT 1",
        &[name.into()],
    )
    .ok()
    .flatten()
    })
}

thread_local! {
    static COLLECTIONS: RefCell<StmtMap<String, Collection>> = RefCell::new(StmtMap::default());
}

/// Loads a collection by name (once per statement); an unknown name raises 42704.
pub fn load(name: &str) -> Collection {
    find(name).unwrap_or_else(|| raise(unknown_collection(name)))
}

/// Loads a collection by name (once per statement), or None when there is none.
pub fn find(name: &str) -> Option<Collection> {
    if let Some(c) = cache::with(&COLLECTIONS, |m| m.get(name).cloned()) {
        return Some(c);
    }
    let c = load_uncached(name)?;
    cache::with(&COLLECTIONS, |m| m.insert(name.to_owned(), c.clone()));
    Some(c)
}

/// The id of [`empty`]'s collection (stored collections count from 1).
pub const EMPTY_ID: i32 = 0;

/// A collection with no row and no statistics (every N and df is 0): what the
/// built-in model weighs a pair against when it is given no collection.
pub fn empty(name: &str) -> Collection {
    Collection {
        id: EMPTY_ID,
        name: name.to_owned(),
        lang: Lang::Auto,
        params: Params::new(Weighting::Bm25, 2.0, 0.75).or_raise(),
        limits: crate::limits::Limits::default(),
        options: serde_json::json!({}),
    }
}

/// A collection as stored now, past the statement's cache; None when there is none.
pub(crate) fn load_uncached(name: &str) -> Option<Collection> {
    let row = Spi::connect(|c| {
        let t = cache::select(
            c,
            "SELECT id, lang, weighting, k1, b, options FROM dedup.collections WHERE name = $1",
            Some(1),
            &[name.into()],
        );
        if t.is_empty() {
            return None;
        }
        let r = t.first();
        Some((
            stored(r.get::<i32>(1), "dedup.collections.id"),
            stored(r.get::<String>(2), "dedup.collections.lang"),
            stored(r.get::<String>(3), "dedup.collections.weighting"),
            stored(r.get::<f64>(4), "dedup.collections.k1"),
            stored(r.get::<f64>(5), "dedup.collections.b"),
            r.get::<JsonB>(6)
                .ok()
                .flatten()
                .map(|j| j.0)
                .unwrap_or(serde_json::Value::Null),
        ))
    });
    let (id, lang, weighting, k1, b, options) = row?;
    let weighting = Weighting::parse(&weighting).or_raise();
    Some(Collection {
        id,
        name: name.to_owned(),
        lang: Lang::parse(&lang).or_raise(),
        params: Params::new(weighting, k1, b).or_raise(),
        limits: crate::limits::Limits::from_json(&options).or_raise(),
        options,
    })
}
