//! The SQL functions of the collection catalog: `create_collection`,
//! `set_collection_options`, `collection_limits`, `drop_collection`.

use crate::error::DedupError;
use crate::pg::collections::load;
use crate::pg::lookup;
use crate::pg::privilege::require_configuration;
use crate::pg::spi_err;
use crate::pg::stats::forget_own_changes;
use crate::pg::types::JsonArg;
use crate::pg::{raise, OrRaise};
use crate::text::Lang;
use crate::weights::{Params, Weighting};
use pgrx::prelude::*;
use pgrx::JsonB;

/// Creates a collection. The options it is given are stored with today's defaults
/// for what they leave out (see [`crate::signature::new_collection_options`]).
#[pg_extern(volatile, parallel_unsafe)]
fn create_collection(
    name: &str,
    lang: default!(&str, "'auto'"),
    weighting: default!(&str, "'bm25'"),
    k1: default!(f64, 2.0),
    b: default!(f64, 0.75),
    options: default!(JsonArg, "'{}'"),
) {
    if name.is_empty() {
        raise(DedupError::invalid_parameter(
            "collection name must not be empty",
        ));
    }
    crate::limits::check_name("collection", name).or_raise();
    // Models of no collection (the built-in model's export, and what is imported
    // from it) name the collection "default": a collection of that name would
    // make them readable by its readers and weigh their pairs with its statistics.
    if name == crate::pg::models::DEFAULT_MODEL {
        raise(DedupError::ReservedName {
            msg: format!("collection name \"{name}\" is reserved"),
            hint: Some(
                "models of no collection name it; pick another name (dedup.enable of a table named \"default\" takes collection => 'another_name')"
                    .into(),
            ),
        });
    }
    require_configuration("dedup.collections", "INSERT", "dedup.create_collection");
    let lang = Lang::parse(lang).or_raise();
    let weighting = Weighting::parse(weighting).or_raise();
    Params::new(weighting, k1, b).or_raise();
    let serde_json::Value::Object(given) = &options.0 else {
        raise(DedupError::invalid_parameter(
            "options must be a jsonb object",
        ))
    };
    let known = || crate::signature::KEYS.iter().chain(&crate::limits::KEYS);
    if let Some(k) = given.keys().find(|k| !known().any(|x| x == k)) {
        raise(DedupError::InvalidParameter {
            msg: format!("unknown collection option \"{}\"", crate::error::excerpt(k)),
            hint: Some(format!(
                "the options are {}",
                known().copied().collect::<Vec<_>>().join(", ")
            )),
        });
    }
    // Written out whole, so that a later library's defaults never change what the
    // stored signatures mean. The limits first: `signature_pad` defaults to
    // `min_shared_keys`, whose own error names it.
    let options = serde_json::Value::Object(crate::signature::new_collection_options(given));
    crate::limits::Limits::from_json(&options).or_raise();
    crate::signature::SignatureOptions::from_json(&options).or_raise();
    let lang_s = lang_name(lang);
    Spi::connect_mut(|c| {
        let exists = c
            .select(
                "SELECT 1 FROM dedup.collections WHERE name = $1",
                Some(1),
                &[name.into()],
            )
            .unwrap_or_else(|e| spi_err(e));
        if !exists.is_empty() {
            crate::pg::raise(DedupError::DuplicateObject {
                msg: format!("collection \"{name}\" already exists"),
                hint: Some("drop it first with dedup.drop_collection, or pick another name".into()),
            });
        }
        c.update(
            "WITH c AS (INSERT INTO dedup.collections (name, lang, weighting, k1, b, options) \
             VALUES ($1, $2, $3, $4, $5, $6) RETURNING id) \
             INSERT INTO dedup.collection_stats (collection_id) SELECT id FROM c",
            None,
            &[
                name.into(),
                lang_s.into(),
                weighting.as_str().into(),
                k1.into(),
                b.into(),
                JsonB(options).into(),
            ],
        )
        .unwrap_or_else(|e| spi_err(e));
    });
}

/// Changes what a collection enforces (the keys of [`crate::limits`]; a NULL value
/// takes a key back to its default). Other options change the collection's
/// signatures and are set when it is created. Returns the collection's options.
#[pg_extern(volatile, strict, parallel_unsafe)]
fn set_collection_options(collection: &str, options: JsonArg) -> JsonB {
    let coll = load(collection);
    require_configuration(
        "dedup.collections",
        "UPDATE",
        "dedup.set_collection_options",
    );
    let serde_json::Value::Object(changes) = options.0 else {
        raise(DedupError::invalid_parameter(
            "options must be a jsonb object",
        ))
    };
    // The options as they are now, the row locked until the transaction ends: two
    // changes at once each merge into the other's result instead of the second
    // writing over the first with what it read before (an audit lost a change so).
    // A collection dropped (or dropped and made anew, as `disable` and `enable` in
    // one transaction do) since this statement began returns no row.
    let current = Spi::connect_mut(|c| {
        c.update(
            "SELECT options FROM dedup.collections WHERE id = $1 FOR NO KEY UPDATE",
            None,
            &[coll.id.into()],
        )
        .and_then(|t| match t.len() {
            0 => Ok(None),
            _ => t.first().get_one::<JsonB>(),
        })
        .unwrap_or_else(|e| spi_err(e))
    })
    .unwrap_or_else(|| {
        raise(DedupError::SerializationFailure {
            msg: format!("collection \"{collection}\" was dropped or made anew while its options were being changed"),
            hint: Some("run dedup.set_collection_options again".into()),
        })
    });
    let mut merged = match current.0 {
        serde_json::Value::Object(m) => m,
        _ => serde_json::Map::new(),
    };
    for (k, v) in changes {
        if !crate::limits::KEYS.contains(&k.as_str()) {
            let changeable = crate::limits::KEYS.join(", ");
            let (msg, hint) = if crate::signature::KEYS.contains(&k.as_str()) {
                (
                    format!(
                        "option \"{}\" cannot be changed on an existing collection",
                        crate::error::excerpt(&k)
                    ),
                    format!("the options that can are {changeable}; signature options are set by dedup.create_collection"),
                )
            } else if ["lang", "weighting", "k1", "b"].contains(&k.as_str()) {
                (
                    format!("\"{k}\" cannot be changed on an existing collection"),
                    format!("lang, weighting, k1 and b are arguments of dedup.create_collection; the options that can change are {changeable}"),
                )
            } else {
                (
                    format!(
                        "unknown collection option \"{}\"",
                        crate::error::excerpt(&k)
                    ),
                    format!("the options an existing collection changes are {changeable}"),
                )
            };
            raise(DedupError::InvalidParameter {
                msg,
                hint: Some(hint),
            });
        }
        if v.is_null() {
            merged.remove(&k);
        } else {
            merged.insert(k, v);
        }
    }
    let merged = serde_json::Value::Object(merged);
    crate::limits::Limits::from_json(&merged).or_raise();
    Spi::connect_mut(|c| {
        c.update(
            "UPDATE dedup.collections SET options = $2 WHERE id = $1",
            None,
            &[coll.id.into(), JsonB(merged.clone()).into()],
        )
        .unwrap_or_else(|e| spi_err(e));
    });
    JsonB(merged)
}

/// What a collection enforces (see [`crate::limits`]), defaults filled in; for
/// `dedup.enable`'s backfill and for users.
#[pg_extern(stable, strict)]
fn collection_limits(
    collection: &str,
) -> TableIterator<
    'static,
    (
        name!(max_document_bytes, i64),
        name!(min_word_length, i32),
        name!(min_shared_keys, i32),
        name!(similarity_threshold, f64),
    ),
> {
    let l = crate::pg::privilege::reading_collection(collection, "dedup.collection_limits", || {
        load(collection).limits
    });
    TableIterator::once((
        l.max_document_bytes as i64,
        l.min_word_length as i32,
        l.min_shared_keys as i32,
        l.similarity_threshold,
    ))
}

/// A collection `dedup.disable` dropped in this transaction: what it was made with
/// and the options set on it since.
struct Dropped {
    name: String,
    lang: &'static str,
    params: Params,
    options: serde_json::Value,
}

thread_local! {
    /// [`drop_created_collection`]'s collections, forgotten at every transaction's
    /// end ([`forget_dropped_collections`]).
    static DROPPED_IN_XACT: std::cell::RefCell<Vec<Dropped>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Drops the collection `dedup.enable` made for a table that left it and that
/// nothing else keeps, and remembers its settings until the transaction ends:
/// `enable` makes it anew with them ([`create_default_collection`]). So README's
/// way of changing a table's settings, `disable` and `enable` in one transaction,
/// keeps what a DBA set on its collection (an audit lost a lowered
/// `max_document_bytes` so, without a word).
pub fn drop_created_collection(name: &str) {
    // Read now, not from the statement's cache: options set earlier in the same
    // statement (a DO block) count too.
    let coll = crate::pg::collections::load_uncached(name)
        .unwrap_or_else(|| raise(crate::pg::collections::unknown_collection(name)));
    drop_collection(name);
    DROPPED_IN_XACT.with(|d| {
        d.borrow_mut().push(Dropped {
            name: coll.name,
            lang: lang_name(coll.lang),
            params: coll.params,
            options: coll.options,
        })
    });
}

/// Forgets the collections `disable` dropped: the transaction ended.
pub fn forget_dropped_collections() {
    DROPPED_IN_XACT.with(|d| d.borrow_mut().clear());
}

/// A collection of `name` for `dedup.enable` (the caller runs it as the extension's
/// owner): with the settings of the collection of that name `disable` dropped in
/// this transaction, else with the defaults of `dedup.create_collection`.
pub fn create_default_collection(name: &str) {
    let kept = DROPPED_IN_XACT.with(|d| {
        let mut d = d.borrow_mut();
        let i = d.iter().rposition(|x| x.name == name)?;
        Some(d.remove(i))
    });
    match kept {
        Some(k) => create_collection(
            name,
            k.lang,
            k.params.weighting.as_str(),
            k.params.k1,
            k.params.b,
            JsonArg(k.options),
        ),
        None => create_collection(
            name,
            "auto",
            "bm25",
            2.0,
            0.75,
            JsonArg(serde_json::Value::Object(serde_json::Map::new())),
        ),
    }
}

/// The name `dedup.collections.lang` stores for `lang`.
fn lang_name(lang: Lang) -> &'static str {
    match lang {
        Lang::Auto => "auto",
        Lang::Russian => "russian",
        Lang::English => "english",
        Lang::Simple => "simple",
    }
}

/// The stored models trained on collection `name`, listed for a message, or None.
pub fn models_trained_on(name: &str) -> Option<String> {
    lookup::one_with_args::<String>(
        "SELECT string_agg(format('%I', m.name), ', ' ORDER BY m.name) FROM dedup.models m WHERE m.collection = $1",
        &[name.into()],
    )
    .ok()
    .flatten()
}

/// Drops a collection and all its statistics.
#[pg_extern(volatile, strict, parallel_unsafe)]
pub fn drop_collection(name: &str) {
    let coll = load(name);
    require_configuration("dedup.collections", "DELETE", "dedup.drop_collection");
    let users = lookup::one_with_args::<String>(
        "SELECT string_agg(e.tbl::regclass::text, ', ' ORDER BY e.tbl::regclass::text) \
         FROM dedup.enabled_tables e WHERE e.collection_id = $1",
        &[coll.id.into()],
    )
    .ok()
    .flatten();
    if let Some(users) = users {
        crate::pg::raise(DedupError::ObjectInUse {
            msg: format!("collection \"{name}\" is used by enabled table {users}"),
            hint: Some("call dedup.disable on those tables first".into()),
        });
    }
    // A model names its collection, whose statistics weigh the pairs it judges
    // (`classify_pair`, `evaluate`): dropping them would change its verdicts.
    if let Some(models) = models_trained_on(name) {
        crate::pg::raise(DedupError::ObjectInUse {
            msg: format!("collection \"{name}\" is used by model {models}"),
            hint: Some(
                "delete those models from dedup.models first, or train them on another collection"
                    .into(),
            ),
        });
    }
    forget_own_changes(coll.id);
    crate::pg::stats::note_stats_written();
    Spi::connect_mut(|c| {
        for sql in [
            "DELETE FROM dedup.term_stats WHERE collection_id = $1",
            "DELETE FROM dedup.term_stats_pending WHERE collection_id = $1",
            "DELETE FROM dedup.collection_stats WHERE collection_id = $1",
            "DELETE FROM dedup.collection_tables WHERE collection_id = $1",
            "DELETE FROM dedup.collections WHERE id = $1",
        ] {
            c.update(sql, None, &[coll.id.into()])
                .unwrap_or_else(|e| spi_err(e));
        }
    });
}
