//! Pair comparison and SVM models: `compare`, `train`, `classify_pair`,
//! `pair_score`, `explain_pair`, `evaluate`, model export/import, source
//! authority, and the per-backend model cache.

use crate::chunks::{Runs, RUN_BYTES};
use crate::decide;
use crate::document::Document;
use crate::error::DedupError;
use crate::features::{self, Side, FEATURE_NAMES, N_FEATURES};
use crate::pg::collections::{self, Collection};
use crate::pg::privilege;
use crate::pg::types::{DocRef, DocumentDatum, JsonArg, StoredDoc};
use crate::pg::weigher::{self, Weighed};
use crate::pg::{query_err, spi_err};
use crate::pg::{raise, OrRaise};
use crate::svm::{self, Example, Kernel, Model, TrainOptions};
use pgrx::prelude::*;
use pgrx::JsonB;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

pub use crate::pg::types::Verdict as verdict;

/// The verdict of a pair from its two decisions: "a duplicates b", "b duplicates a".
pub fn verdict_of(a_dup: bool, b_dup: bool) -> verdict {
    match (a_dup, b_dup) {
        (false, false) => verdict::distinct,
        (true, false) => verdict::a_duplicates_b,
        (false, true) => verdict::b_duplicates_a,
        (true, true) => verdict::mutual,
    }
}

// ---- one side of a comparison ------------------------------------------------------

/// A weighed document and its source authority.
pub struct WithAuthority {
    pub w: Rc<Weighed>,
    pub authority: f64,
}

impl WithAuthority {
    pub fn doc(&self) -> &Document {
        &self.w.doc
    }

    pub fn side(&self) -> Side<'_> {
        Side {
            doc: &self.w.doc,
            weights: &self.w.body,
            title_weights: &self.w.title,
            authority: self.authority,
        }
    }
}

/// Weighs two stored documents with one statistics lookup, through the backend
/// document cache.
pub fn weigh_pair(
    a: &dyn StoredDoc,
    b: &dyn StoredDoc,
    coll: &Collection,
) -> (WithAuthority, WithAuthority) {
    let mut w = weigher::Weigher::new(coll, None).for_arguments();
    let mut both = w.weigh_stored(&[a, b]);
    let auth = Authorities::cached(coll);
    match (both.pop(), both.pop()) {
        (Some(wb), Some(wa)) => (with_authority(wa, &auth), with_authority(wb, &auth)),
        _ => crate::pg::raise(crate::error::DedupError::Internal(
            "weighing a pair returned fewer than two documents".into(),
        )),
    }
}

/// Every source authority of a collection, loaded once for work over many documents.
pub struct Authorities(HashMap<String, f64>);

thread_local! {
    static AUTHORITIES: RefCell<crate::pg::config_cache::Kept<i32, Authorities>> =
        RefCell::new(crate::pg::config_cache::Kept::default());
}

impl Authorities {
    /// The collection's authorities, kept per backend until `dedup.sources` or
    /// `dedup.collections` changes (see `config_cache`).
    pub fn cached(coll: &Collection) -> Rc<Authorities> {
        crate::pg::config_cache::get_or(&AUTHORITIES, coll.id, || Some(Authorities::load(coll)))
            .unwrap_or_else(|| Rc::new(Authorities(HashMap::new())))
    }

    pub fn load(coll: &Collection) -> Self {
        let map = Spi::connect(|c| {
            let t = crate::pg::cache::select(
                c,
                "SELECT source, authority FROM dedup.sources WHERE collection = $1",
                None,
                &[coll.name.as_str().into()],
            );
            t.into_iter()
                .filter_map(|r| Some((r.get::<String>(1).ok()??, r.get::<f64>(2).ok()??)))
                .collect()
        });
        Authorities(map)
    }

    pub fn of(&self, source: Option<&str>) -> f64 {
        source.and_then(|s| self.0.get(s).copied()).unwrap_or(0.5)
    }
}

/// A weighed document with its source's authority.
pub fn with_authority(w: Rc<Weighed>, auth: &Authorities) -> WithAuthority {
    let authority = auth.of(w.doc.source.as_deref());
    WithAuthority { w, authority }
}

/// ρ(a,b) and ρ(b,a).
pub fn both_ways(a: &WithAuthority, b: &WithAuthority) -> ([f64; N_FEATURES], [f64; N_FEATURES]) {
    features::compare_prepared(&a.side(), a.w.prep(), &b.side(), b.w.prep())
}

/// The decision values for "a duplicates b" and "b duplicates a": the model's (the
/// threshold rule's without one), at least [`decide::EXACT_COPY_SCORE`] both ways
/// for an exact copy. Every verdict (the trigger, `is_duplicate`, `find_original`,
/// `pairs`, `groups`, `classify_pair`, `pair_score`) is made here.
pub fn scores(model: Option<&Loaded>, a: &WithAuthority, b: &WithAuthority) -> (f64, f64) {
    let (ab, ba) = both_ways(a, b);
    let one = |rho: &[f64; N_FEATURES]| match model {
        Some(m) => m.model.decision(rho),
        None => decide::threshold_rule(rho),
    };
    let exact = decide::exact_copy(a.doc().fingerprint, b.doc().fingerprint);
    (
        decide::with_exact_copy(one(&ab), exact),
        decide::with_exact_copy(one(&ba), exact),
    )
}

/// The names of the features of `compare`, in order.
#[pg_extern(immutable, parallel_safe)]
fn feature_names() -> Vec<String> {
    FEATURE_NAMES.iter().map(|s| s.to_string()).collect()
}

/// ρ(a,b): the pair's feature vector, in the order of `feature_names()`.
#[pg_extern(stable, strict)]
fn compare(a: DocRef, b: DocRef, collection: &str) -> Vec<f64> {
    privilege::reading_collection(collection, "dedup.compare", || {
        let coll = collections::load(collection);
        let (a, b) = weigh_pair(&a, &b, &coll);
        both_ways(&a, &b).0.to_vec()
    })
}

// ---- the model cache ---------------------------------------------------------------

/// A loaded model and what it was loaded from.
pub struct Loaded {
    pub name: String,
    pub version: i32,
    /// The stored row's xmin and ctid (empty for the built-in model): a model
    /// deleted and trained again under its name starts at version 1 again, in
    /// another row.
    pub row: String,
    pub collection: Collection,
    pub model: Model,
}

struct CacheEntry {
    loaded: Rc<Loaded>,
    /// Statement (transaction start, statement start) the version was last checked in.
    checked_in: (i64, i64),
    /// The configuration epoch the version was checked at, when that check may
    /// outlive its statement (`config_cache::keepable`): until the epoch moves (any
    /// change to `dedup.models` moves it, in every backend), the entry is current
    /// without a query.
    kept_at: Option<u64>,
}

thread_local! {
    /// Per-backend cache of deserialised models. The version is re-checked once per
    /// statement; the whole cache is dropped on transaction abort (a rolled-back
    /// `train` must not leave its model here).
    static CACHE: RefCell<HashMap<String, CacheEntry>> = RefCell::new(HashMap::new());
}

/// Drops every cached model (on transaction abort: a rolled-back `train` must not
/// leave its model here).
pub fn clear_cache() {
    CACHE.with(|c| c.borrow_mut().clear());
}

fn statement_stamp() -> (i64, i64) {
    // SAFETY: plain reads of the backend's transaction/statement timestamps.
    unsafe {
        (
            pg_sys::GetCurrentTransactionStartTimestamp(),
            pg_sys::GetCurrentStatementStartTimestamp(),
        )
    }
}

fn unknown_model(name: &str) -> DedupError {
    DedupError::UndefinedObject {
        msg: format!("model \"{}\" does not exist", crate::error::excerpt(name)),
        hint: Some("train one with dedup.train, or import it with dedup.import_model".into()),
    }
}

/// Locks stored model `name` against DELETE and renaming until this transaction
/// ends (`FOR KEY SHARE`: retraining it may go on), for a table being enabled with
/// it: the `models_in_use` trigger cannot see a registration not yet committed, so
/// without the lock a concurrent delete would leave the table naming no model and
/// every insert failing with 42704. Raises 42704 when the model went meanwhile;
/// the built-in model and the threshold rule need no row.
pub fn hold(name: &str) {
    if name == THRESHOLD_RULE {
        return;
    }
    let held = privilege::as_owner(|| {
        Spi::connect_mut(|c| {
            let t = c
                .update(
                    "SELECT pg_catalog.count(*) FROM (SELECT 1 FROM dedup.models WHERE name = $1 FOR KEY SHARE) m",
                    None,
                    &[name.into()],
                )
                .unwrap_or_else(|e| spi_err(e));
            t.first().get::<i64>(1).ok().flatten().unwrap_or(0)
        })
    });
    if held == 0 && name != DEFAULT_MODEL {
        raise(unknown_model(name));
    }
}

/// Name of the built-in model (see [`builtin`]).
pub const DEFAULT_MODEL: &str = "default";

/// The built-in model's export (`dedup.export_model` form), rebuilt from the public
/// labelled pairs by `scripts/train_default_model.sh`.
const DEFAULT_EXPORT: &str = include_str!("../../models/default.json");

/// The built-in model `default`, used when no row of `dedup.models` has that name.
/// Its pair functions weigh against an empty collection (no statistics).
fn builtin() -> Rc<Loaded> {
    let j: serde_json::Value = serde_json::from_str(DEFAULT_EXPORT)
        .map_err(|e| DedupError::corrupted(format!("built-in model cannot be read: {e}")))
        .or_raise();
    let bytes = j
        .get("model")
        .and_then(|v| v.as_str())
        .and_then(unhex)
        .unwrap_or_default();
    let model = crate::codec::decode_model(&bytes)
        .map_err(|e| DedupError::corrupted(format!("built-in model cannot be read: {e}")))
        .or_raise();
    Rc::new(Loaded {
        name: DEFAULT_MODEL.to_owned(),
        version: 0,
        row: String::new(),
        collection: collections::empty(DEFAULT_MODEL),
        model,
    })
}

/// The name that selects the threshold rule instead of a model (`enable`'s
/// `model`, a `model_column` value, `pairs`' `model`); no model may take it.
pub const THRESHOLD_RULE: &str = "threshold";

/// The model `name`, or None for [`THRESHOLD_RULE`] (the threshold rule decides).
pub fn by_name(name: &str) -> Option<Rc<Loaded>> {
    (name != THRESHOLD_RULE).then(|| model(name))
}

/// Refuses [`THRESHOLD_RULE`] as the name of a model to store.
fn require_storable_name(name: &str) {
    if name.is_empty() {
        raise(DedupError::invalid_parameter(
            "model name must not be empty",
        ));
    }
    crate::limits::check_name("model", name).or_raise();
    if name == THRESHOLD_RULE {
        raise(DedupError::InvalidParameter {
            msg: format!("model name \"{THRESHOLD_RULE}\" is reserved for the threshold rule"),
            hint: Some("pick another name".into()),
        });
    }
}

/// The model `name`, from the cache when its version is current.
pub fn model(name: &str) -> Rc<Loaded> {
    let stamp = statement_stamp();
    let epoch = crate::pg::config_cache::epoch();
    if let Some(l) = CACHE.with(|c| {
        c.borrow()
            .get(name)
            .filter(|e| e.checked_in == stamp || e.kept_at == Some(epoch))
            .map(|e| e.loaded.clone())
    }) {
        return l;
    }
    let kept_at = crate::pg::config_cache::keepable().then_some(epoch);
    let version = Spi::connect(|c| {
        let t = crate::pg::cache::select(
            c,
            "SELECT version, xmin::text || ctid::text FROM dedup.models WHERE name = $1",
            Some(1),
            &[name.into()],
        );
        t.into_iter().next().and_then(|r| {
            Some((
                r.get::<i32>(1).ok().flatten()?,
                r.get::<String>(2).ok().flatten().unwrap_or_default(),
            ))
        })
    });
    let Some((version, row)) = version else {
        if name == DEFAULT_MODEL {
            // The built-in model (version 0; a stored one starts at 1), kept in the
            // same cache.
            let l = CACHE
                .with(|c| {
                    c.borrow()
                        .get(name)
                        .filter(|e| e.loaded.version == 0)
                        .map(|e| e.loaded.clone())
                })
                .unwrap_or_else(builtin);
            CACHE.with(|c| {
                c.borrow_mut().insert(
                    name.to_owned(),
                    CacheEntry {
                        loaded: l.clone(),
                        checked_in: stamp,
                        kept_at,
                    },
                )
            });
            return l;
        }
        CACHE.with(|c| c.borrow_mut().remove(name));
        raise(unknown_model(name))
    };
    let cached = CACHE.with(|c| {
        let mut c = c.borrow_mut();
        let e = c.get_mut(name)?;
        if e.loaded.version == version && e.loaded.row == row {
            e.checked_in = stamp;
            e.kept_at = kept_at;
            Some(e.loaded.clone())
        } else {
            None
        }
    });
    if let Some(l) = cached {
        return l;
    }
    let (coll, bytes) = Spi::connect(|c| {
        let t = c
            .select(
                "SELECT collection, model FROM dedup.models WHERE name = $1",
                Some(1),
                &[name.into()],
            )
            .unwrap_or_else(|e| spi_err(e));
        let r = t.first();
        (
            r.get::<String>(1).ok().flatten().unwrap_or_default(),
            r.get::<Vec<u8>>(2).ok().flatten().unwrap_or_default(),
        )
    });
    let model = crate::codec::decode_model(&bytes)
        .map_err(|e| DedupError::corrupted(format!("model \"{name}\" cannot be read: {e}")))
        .or_raise();
    // A model whose collection is gone (dropped before drop_collection refused
    // that, or the built-in model's "default" imported) weighs pairs with no
    // statistics, as the built-in model does: the trigger decides with the
    // table's own collection either way.
    let loaded = Rc::new(Loaded {
        name: name.to_owned(),
        version,
        row,
        collection: collections::find(&coll).unwrap_or_else(|| collections::empty(&coll)),
        model,
    });
    CACHE.with(|c| {
        c.borrow_mut().insert(
            name.to_owned(),
            CacheEntry {
                loaded: loaded.clone(),
                checked_in: stamp,
                kept_at,
            },
        )
    });
    loaded
}

// ---- classification ------------------------------------------------------------------

/// A model for the pair functions, read as the extension's owner: any role may use
/// the built-in model (it weighs against no statistics); a stored one weighs
/// against its collection's, which the caller must be allowed to read
/// ([`privilege::require_collection_read`]).
fn readable_model(name: &str, what: &str) -> Rc<Loaded> {
    let m = privilege::as_owner(|| self::model(name));
    // The built-in model's weights are public, and so are those of a model stored
    // as `default`, which every table enabled without a model uses (their pairs
    // show its scores); another stored model's are read by who may read its
    // collection, and one without a collection (trained or imported for the
    // default one, or whose collection is gone) by the configuration roles.
    if m.version != 0 && name != DEFAULT_MODEL {
        if m.collection.id != 0 {
            privilege::require_collection_read(&m.collection.name, what);
        } else if !privilege::reads_configuration(privilege::caller()) {
            raise(DedupError::InsufficientPrivilege {
                msg: format!("permission denied for model \"{}\"", crate::error::excerpt(name)),
                hint: Some(format!(
                    "{what} reads the model's weights, and the model belongs to no collection a role may read: it needs the configuration rights (README, Security)"
                )),
            });
        }
    }
    m
}

/// Raises 42501 unless the caller may use stored model `name` where its scores
/// are shown (`pairs`, `groups`, `matrix_quality` with a model named), as
/// [`pair_score`] checks: the threshold rule and the built-in model pass.
pub fn require_readable(name: &str, what: &str) {
    if name != THRESHOLD_RULE {
        readable_model(name, what);
    }
}

/// What judges a pair for a pair function: the model `name`, or None for
/// [`THRESHOLD_RULE`]; and the collection whose statistics weigh the pair (the
/// model's; none for the rule, as for the built-in model).
fn pair_judge(name: &str, what: &str) -> (Option<Rc<Loaded>>, Collection) {
    if name == THRESHOLD_RULE {
        return (None, collections::empty(THRESHOLD_RULE));
    }
    let m = weighing_model(name, what);
    let coll = m.collection.clone();
    (Some(m), coll)
}

/// [`readable_model`], for a function that weighs a pair against the model's
/// collection: a model stored as `default` is public, but its collection's
/// statistics are read by who may read that collection.
fn weighing_model(name: &str, what: &str) -> Rc<Loaded> {
    let m = readable_model(name, what);
    if m.version != 0 && name == DEFAULT_MODEL && m.collection.id != 0 {
        privilege::require_collection_read(&m.collection.name, what);
    }
    m
}

/// The verdict for a pair from both directions: D(ρ(a,b)) and D(ρ(b,a)).
#[pg_extern(stable, strict)]
fn classify_pair(model: &str, a: DocRef, b: DocRef) -> verdict {
    let (m, coll) = pair_judge(model, "dedup.classify_pair");
    let (a, b) = privilege::as_owner(|| weigh_pair(&a, &b, &coll));
    let (ab, ba) = scores(m.as_deref(), &a, &b);
    verdict_of(ab > 0.0, ba > 0.0)
}

/// The decision value for "a duplicates b": positive means duplicate.
#[pg_extern(stable, strict)]
fn pair_score(model: &str, a: DocRef, b: DocRef) -> f64 {
    let (m, coll) = pair_judge(model, "dedup.pair_score");
    let (a, b) = privilege::as_owner(|| weigh_pair(&a, &b, &coll));
    scores(m.as_deref(), &a, &b).0
}

/// Each feature's value and contribution to the decision, in both directions.
/// Linear kernel: exact (w_i·z_i). rbf: occlusion, the change in the decision value
/// when the feature is set to its training mean.
#[pg_extern(stable, strict)]
fn explain_pair(
    model: &str,
    a: DocRef,
    b: DocRef,
) -> TableIterator<
    'static,
    (
        name!(feature, String),
        name!(value_ab, f64),
        name!(value_ba, f64),
        name!(contribution_ab, f64),
        name!(contribution_ba, f64),
    ),
> {
    if model == THRESHOLD_RULE {
        raise(DedupError::InvalidParameter {
            msg: "the threshold rule has no per-feature contributions to explain".into(),
            hint: Some(
                "explain_pair explains a model; dedup.compare gives the pair's features".into(),
            ),
        });
    }
    let m = weighing_model(model, "dedup.explain_pair");
    let (a, b) = privilege::as_owner(|| weigh_pair(&a, &b, &m.collection));
    let (ab, ba) = both_ways(&a, &b);
    let (cab, cba) = (m.model.contributions(&ab), m.model.contributions(&ba));
    let rows: Vec<_> = (0..N_FEATURES)
        .map(|i| {
            (
                FEATURE_NAMES[i].to_string(),
                ab[i],
                ba[i],
                cab.get(i).copied().unwrap_or(0.0),
                cba.get(i).copied().unwrap_or(0.0),
            )
        })
        .collect();
    TableIterator::new(rows)
}

// ---- labelled pairs ------------------------------------------------------------------

/// The columns a training or evaluation query must return.
const TRAIN_COLUMNS: &str =
    "(a dedup.document, b dedup.document, a_dup_b boolean, b_dup_a boolean)";

/// Rows a cursor over a pairs query fetches at a time.
const PAIRS_BATCH: i64 = 256;

/// Calls `f` with the rows of a user query returning [`TRAIN_COLUMNS`], read
/// through a cursor [`PAIRS_BATCH`] rows at a time and handed over in runs of
/// at most [`RUN_BYTES`] of documents (`chunks::Runs`), so that memory holds one
/// run (and whatever `f` keeps), however many rows the query returns and however
/// long its documents. Rows with a NULL document are skipped, and so are rows
/// whose two labels are both NULL; a NULL label is unknown (None): that direction
/// is no example. Stops reading when `f` returns false.
///
/// Interrupts: the executor checks for them while it runs the query; the copy of
/// its rows checks once per row.
fn each_labelled_pair(query: &str, mut f: impl FnMut(Vec<LabelledPair>) -> bool) {
    Spi::connect(|c| {
        let mut cursor = crate::pg::pairs_cursor(c, query, TRAIN_COLUMNS);
        let mut go_on = true;
        while go_on {
            // `f` runs while the batch is open: its queries run in a connection of
            // their own, and the batch's rows stay as they were fetched.
            let fetched = crate::pg::fetch_batch(&mut cursor, PAIRS_BATCH, |t| {
                if t.columns().is_ok_and(|n| n < 4) {
                    raise(DedupError::invalid_parameter(format!(
                        "pairs query must return {TRAIN_COLUMNS}"
                    )));
                }
                let fetched = t.len();
                let mut runs = Runs::new(RUN_BYTES);
                for r in t {
                    pgrx::check_for_interrupts!();
                    let size = crate::pg::stored_size(&r, 1) + crate::pg::stored_size(&r, 2);
                    if let Some(run) = runs.make_room(size) {
                        go_on = f(run);
                        if !go_on {
                            return fetched;
                        }
                    }
                    let a = r
                        .get::<DocumentDatum>(1)
                        .unwrap_or_else(|e| query_err(TRAIN_COLUMNS, e));
                    let b = r
                        .get::<DocumentDatum>(2)
                        .unwrap_or_else(|e| query_err(TRAIN_COLUMNS, e));
                    let ab = r
                        .get::<bool>(3)
                        .unwrap_or_else(|e| query_err(TRAIN_COLUMNS, e));
                    let ba = r
                        .get::<bool>(4)
                        .unwrap_or_else(|e| query_err(TRAIN_COLUMNS, e));
                    if let (Some(a), Some(b)) = (a, b) {
                        if ab.is_some() || ba.is_some() {
                            runs.push(size, (a, b, ab, ba));
                        }
                    }
                }
                let last = runs.finish();
                if !last.is_empty() {
                    go_on = f(last);
                }
                fetched
            })
            .unwrap_or_else(|e| crate::pg::query_refused(TRAIN_COLUMNS, e));
            go_on &= fetched > 0;
        }
    })
}

/// A labelled pair of a user query: the two documents and whether a duplicates b
/// and b duplicates a (None: not known).
type LabelledPair = (DocumentDatum, DocumentDatum, Option<bool>, Option<bool>);

/// The examples, ρ(a,b) and ρ(b,a), of each labelled pair: one a known label.
/// Checks for interrupts once per pair (each is two decodes, maybe a statistics
/// query, and two comparisons).
fn examples(coll: &Collection, pairs: Vec<LabelledPair>) -> Vec<Example> {
    let mut ex = Vec::with_capacity(pairs.len() * 2);
    for (a, b, ab, ba) in pairs {
        pgrx::check_for_interrupts!();
        let (a, b) = weigh_pair(&a, &b, coll);
        let (xab, xba) = both_ways(&a, &b);
        for (x, y) in [(xab, ab), (xba, ba)] {
            if let Some(y) = y {
                ex.push(Example { x: x.to_vec(), y });
            }
        }
    }
    ex
}

fn kernel_name(k: &Kernel) -> &'static str {
    match k {
        Kernel::Linear => "linear",
        Kernel::Rbf { .. } => "rbf",
    }
}

fn metrics_json(m: &svm::CvMetrics) -> serde_json::Value {
    serde_json::json!({"tp": m.tp, "fp": m.fp, "fn": m.fn_, "tn": m.tn,
                       "precision": m.precision, "recall": m.recall, "f1": m.f1})
}

/// Trains (or retrains) a named model on labelled pairs and stores it.
/// `pairs` is a query returning `(a dedup.document, b dedup.document, a_dup_b boolean, b_dup_a boolean)`.
///
/// Interrupts (a cancel, `statement_timeout`): checked while the pairs query runs
/// and once per row read, once per pair weighed, and, while the SVM trains, every
/// 50 ms by this backend thread as it waits for the fits on worker threads (see
/// `svm::train_checked`). A fit under way is one linfa call that cannot be
/// stopped: a cancel returns at once, and the fit ends on its worker thread in
/// the background (seconds at the default C, minutes at a large C on noisy
/// labels); until it has, this session refuses another training (55006), so that
/// stopped fits do not pile up. More pairs than [`svm::MAX_TRAIN_PAIRS`] are
/// refused before any is weighed, and the query is read no further than one pair
/// past the limit.
#[pg_extern(volatile, parallel_unsafe)]
fn train(model: &str, collection: &str, pairs: &str, options: default!(JsonArg, "'{}'")) -> JsonB {
    if crate::workers::live_workers() > 0 {
        raise(DedupError::ObjectInUse {
            msg: "a training this session stopped is still finishing its fit in the background"
                .into(),
            hint: Some("try again in a while, or train from another session".into()),
        });
    }
    require_storable_name(model);
    let coll = collections::load(collection);
    privilege::require_configuration("dedup.models", "INSERT", "dedup.train");
    let opts = TrainOptions::from_json(&options.0, N_FEATURES, &FEATURE_NAMES).or_raise();
    // Each run of pairs is weighed as it is read, so memory holds the examples
    // and one run of documents. The pairs query runs with the caller's
    // search_path; the extension's own queries with a pinned one (the caller, with
    // the configuration rights, may have another role's schema on its path).
    let (mut n_pairs, mut ex) = (0usize, Vec::new());
    each_labelled_pair(pairs, |run| {
        n_pairs += run.len();
        if n_pairs <= svm::MAX_TRAIN_PAIRS {
            ex.extend(crate::pg::guc_scope::pinned_path(|| examples(&coll, run)));
        }
        n_pairs <= svm::MAX_TRAIN_PAIRS
    });
    if n_pairs < 10 {
        raise(DedupError::invalid_parameter(format!(
            "training needs at least 10 labelled pairs, got {n_pairs}"
        )));
    }
    if n_pairs > svm::MAX_TRAIN_PAIRS {
        raise(DedupError::TooLarge {
            msg: format!(
                "training accepts at most {} labelled pairs, and the pairs query returned more",
                svm::MAX_TRAIN_PAIRS
            ),
            hint: Some(
                "the SVM solver keeps an n×n kernel matrix in memory; train on a sample".into(),
            ),
        });
    }
    crate::pg::guc_scope::pinned_path(|| fit_and_store(model, &coll, &opts, ex, n_pairs))
}

/// `train`'s fit of `pairs` and its store as `model`.
fn fit_and_store(
    model: &str,
    coll: &Collection,
    opts: &TrainOptions,
    ex: Vec<Example>,
    n_pairs: usize,
) -> JsonB {
    // The locks the store at the end takes, taken before the fit: a session that
    // holds the models table or the model's row makes train wait, or fail under
    // lock_timeout, now rather than after a fit of minutes (an audit lost a 40 s
    // fit so).
    Spi::run("LOCK TABLE dedup.models IN ROW EXCLUSIVE MODE").unwrap_or_else(|e| spi_err(e));
    Spi::run_with_args(
        "SELECT 1 FROM dedup.models WHERE name = $1 FOR UPDATE",
        &[model.into()],
    )
    .unwrap_or_else(|e| spi_err(e));
    let report = svm::train_checked(&ex, opts, &mut crate::pg::interrupts()).or_raise();
    let features: Vec<String> = report
        .model
        .features
        .iter()
        .map(|&i| FEATURE_NAMES[i].to_string())
        .collect();
    let params = serde_json::json!({
        "kernel": kernel_name(&report.model.kernel),
        "gamma": match report.model.kernel { Kernel::Rbf { gamma } => Some(gamma), Kernel::Linear => None },
        "C": opts.c, "class_weights": [opts.class_weight_pos, opts.class_weight_neg],
        "folds": opts.folds, "seed": opts.seed,
    });
    let metrics = serde_json::json!({
        "pairs": n_pairs, "examples": report.n_examples, "positives": report.n_positive,
        "cv": report.cv.as_ref().map(metrics_json), "train": metrics_json(&report.train_metrics),
    });
    let scaler = serde_json::to_value(&report.model.scaler).unwrap_or(serde_json::Value::Null);
    let bytes = crate::codec::encode_model(&report.model);
    let version = store(
        model,
        &coll.name,
        &features,
        kernel_name(&report.model.kernel),
        &params,
        &scaler,
        &bytes,
        &metrics,
        None,
    );
    let mut out = metrics;
    if let Some(o) = out.as_object_mut() {
        o.insert("model".into(), model.into());
        o.insert("version".into(), version.into());
        o.insert("kernel".into(), kernel_name(&report.model.kernel).into());
        o.insert("features".into(), features.into());
    }
    JsonB(out)
}

/// Upserts a model row; a retrained model gets version + 1. Returns the version.
#[allow(clippy::too_many_arguments)]
fn store(
    name: &str,
    collection: &str,
    features: &[String],
    kernel: &str,
    params: &serde_json::Value,
    scaler: &serde_json::Value,
    bytes: &[u8],
    metrics: &serde_json::Value,
    trained_at: Option<&str>,
) -> i32 {
    Spi::connect_mut(|c| {
        let t = c
            .update(
                "INSERT INTO dedup.models AS m (name, collection, features, kernel, parameters, scaler, model, metrics, trained_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, coalesce($9::timestamptz, now())) \
                 ON CONFLICT (name) DO UPDATE SET collection = excluded.collection, features = excluded.features, \
                 kernel = excluded.kernel, parameters = excluded.parameters, scaler = excluded.scaler, \
                 model = excluded.model, metrics = excluded.metrics, trained_at = excluded.trained_at, \
                 version = m.version + 1 \
                 RETURNING version",
                None,
                &[
                    name.into(),
                    collection.into(),
                    features.to_vec().into(),
                    kernel.into(),
                    JsonB(params.clone()).into(),
                    JsonB(scaler.clone()).into(),
                    bytes.to_vec().into(),
                    JsonB(metrics.clone()).into(),
                    trained_at.into(),
                ],
            )
            .unwrap_or_else(|e| spi_err(e));
        crate::pg::stored(t.first().get::<i32>(1), "dedup.models.version")
    })
}

/// Confusion counts and quality of a model on labelled pairs (both directions count).
/// Public as `dedup.evaluate` (sql/models.sql), whose column is named `fn`.
///
/// Interrupts: checked while the pairs query runs and once per row read, once
/// per pair weighed, and once per example classified. VOLATILE: the pairs
/// query is the caller's, and may call functions that write.
#[pg_extern(volatile, strict)]
pub fn _evaluate(
    model: &str,
    pairs: &str,
) -> TableIterator<
    'static,
    (
        name!(tp, i64),
        name!(fp, i64),
        name!(fn_, i64),
        name!(tn, i64),
        name!(precision, f64),
        name!(recall, f64),
        name!(f1, f64),
    ),
> {
    // The pairs query runs with the caller's rights; the model and the
    // statistics are read as the extension's owner once the caller may read
    // the model's collection (as `pair_score` does).
    privilege::require_execute("dedup.evaluate(pg_catalog.text, pg_catalog.text)");
    let (m, coll) = pair_judge(model, "dedup.evaluate");
    // A run of pairs at a time: memory holds at most `chunks::RUN_BYTES` of the
    // query's stored documents decoded, not all its rows.
    let mut c = crate::metrics::Confusion::default();
    each_labelled_pair(pairs, |run| {
        for (a, b, ab, ba) in run {
            pgrx::check_for_interrupts!();
            // The model alone (or the rule), as explain_pair shows it: no
            // exact-copy floor (see `scores`).
            let (a, b) = privilege::as_owner(|| weigh_pair(&a, &b, &coll));
            let (xab, xba) = both_ways(&a, &b);
            let dup = |x: &[f64; N_FEATURES]| match m.as_deref() {
                Some(m) => m.model.predict(x),
                None => decide::threshold_rule(x) > 0.0,
            };
            for (x, y) in [(xab, ab), (xba, ba)] {
                if let Some(y) = y {
                    c.add(dup(&x), y);
                }
            }
        }
        true
    });
    TableIterator::once((c.tp, c.fp, c.fn_, c.tn, c.precision(), c.recall(), c.f1()))
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// A model as jsonb, to move it to another database with `import_model`.
#[pg_extern(stable, strict)]
fn export_model(name: &str) -> JsonB {
    if name == THRESHOLD_RULE {
        raise(DedupError::InvalidParameter {
            msg: "the threshold rule has no weights to export".into(),
            hint: Some(
                "name it in model => 'threshold' wherever a model is named; no model may be stored under that name".into(),
            ),
        });
    }
    // The built-in model is anyone's to export; a stored one is configuration.
    let stored = privilege::as_owner(|| {
        crate::pg::lookup::one_with_args::<bool>(
            "SELECT EXISTS (SELECT 1 FROM dedup.models WHERE name = $1)",
            &[name.into()],
        )
        .ok()
        .flatten()
        .unwrap_or(false)
    });
    if stored || name != DEFAULT_MODEL {
        privilege::require_configuration("dedup.models", "SELECT", "dedup.export_model");
    }
    let row = privilege::as_owner(|| {
        Spi::connect(|c| {
            let t = c
            .select(
                "SELECT jsonb_build_object('name', name, 'collection', collection, 'features', features, \
                 'kernel', kernel, 'parameters', parameters, 'scaler', scaler, 'metrics', metrics, \
                 'version', version, 'trained_at', trained_at, 'format', $2::text), encode(model, 'hex') \
                 FROM dedup.models WHERE name = $1",
                Some(1),
                &[name.into(), EXPORT_FORMAT.into()],
            )
            .unwrap_or_else(|e| spi_err(e));
            if t.is_empty() {
                return None;
            }
            let r = t.first();
            Some((
                r.get::<JsonB>(1).ok().flatten(),
                r.get::<String>(2).ok().flatten(),
            ))
        })
    });
    let Some((Some(JsonB(mut j)), Some(bytes))) = row else {
        if name == DEFAULT_MODEL {
            return JsonB(serde_json::from_str(DEFAULT_EXPORT).unwrap_or_default());
        }
        raise(unknown_model(name))
    };
    if let Some(o) = j.as_object_mut() {
        o.insert("model".into(), bytes.into());
    }
    JsonB(j)
}

/// The `format` an export names (`export_model`), which `import_model` reads.
const EXPORT_FORMAT: &str = "pg_dedup model v1";

/// Stores a model exported by `export_model`. Its collection must exist here,
/// unless it is the built-in model's `default`.
/// Returns the model's name.
#[pg_extern(volatile, strict, parallel_unsafe)]
fn import_model(model: JsonArg) -> String {
    privilege::require_configuration("dedup.models", "INSERT", "dedup.import_model");
    let j = &model.0;
    let bad = |what: &str| -> ! {
        raise(DedupError::invalid_input(format!(
            "invalid model export: {what}"
        )))
    };
    // What export_model writes (the built-in model's export also says what it was
    // trained on), and nothing else: a misspelt key would be dropped without a word.
    const KEYS: [&str; 12] = [
        "name",
        "collection",
        "features",
        "kernel",
        "parameters",
        "scaler",
        "metrics",
        "version",
        "trained_at",
        "format",
        "model",
        "trained_on",
    ];
    let Some(obj) = j.as_object() else {
        bad("it must be a jsonb object")
    };
    if let Some(k) = obj.keys().find(|k| !KEYS.contains(&k.as_str())) {
        bad(&format!(
            "unknown key \"{}\" (an export holds {})",
            crate::error::excerpt(k),
            KEYS.join(", ")
        ));
    }
    // A text field: None when absent or null.
    let s = |k: &str| {
        j.get(k).filter(|v| !v.is_null()).map(|v| {
            v.as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| bad(&format!("\"{k}\" must be a string")))
        })
    };
    if let Some(f) = s("format") {
        if f != EXPORT_FORMAT {
            bad(&format!(
                "\"format\" is \"{}\", this build reads \"{EXPORT_FORMAT}\"",
                crate::error::excerpt(&f)
            ));
        }
    }
    let Some(name) = s("name") else {
        bad("missing \"name\"")
    };
    require_storable_name(&name);
    let Some(collection) = s("collection") else {
        bad("missing \"collection\"")
    };
    let Some(bytes) = s("model").and_then(|h| unhex(&h)) else {
        bad("\"model\" must be hex bytes")
    };
    let m = crate::codec::decode_model(&bytes).unwrap_or_else(|e| bad(&e.to_string()));
    // The bytes decide; the export's descriptive fields must agree with them.
    if let Some(k) = j.get("kernel").filter(|k| !k.is_null()) {
        if k.as_str() != Some(kernel_name(&m.kernel)) {
            bad(&format!(
                "\"kernel\" is {}, the model bytes hold a {} model",
                crate::error::json_excerpt(k),
                kernel_name(&m.kernel)
            ));
        }
    }
    // The built-in model's export names the collection "default", which need
    // not exist: the model then weighs pairs with no statistics, as it does built in.
    if collection != DEFAULT_MODEL {
        collections::load(&collection);
    }
    // The model reads the pair vector of this build: an index past it (a model of
    // another build, or made by hand) would read 0 for ever, and a repeated one
    // counts a feature twice.
    if let Some(&i) = m.features.iter().find(|&&i| i >= FEATURE_NAMES.len()) {
        bad(&format!(
            "the model reads feature {i}, and this build's pair vector has {} (0 to {})",
            FEATURE_NAMES.len(),
            FEATURE_NAMES.len() - 1
        ));
    }
    let mut sorted = m.features.clone();
    sorted.sort_unstable();
    if sorted.windows(2).any(|w| w[0] == w[1]) {
        bad("the model reads a feature twice");
    }
    let features: Vec<String> = m
        .features
        .iter()
        .filter_map(|&i| FEATURE_NAMES.get(i))
        .map(|s| s.to_string())
        .collect();
    // The export's descriptive list, when given, must name the same features.
    if let Some(f) = j.get("features").filter(|f| !f.is_null()) {
        let named: Option<Vec<&str>> = f
            .as_array()
            .and_then(|a| a.iter().map(|v| v.as_str()).collect());
        if named.as_deref() != Some(&features.iter().map(String::as_str).collect::<Vec<_>>()[..]) {
            bad(&format!(
                "\"features\" is {}, the model bytes read {}",
                crate::error::excerpt(&f.to_string()),
                serde_json::Value::from(features.clone())
            ));
        }
    }
    // The scaler is read from the bytes; an export that says another is refused
    // like one naming another kernel (both print the same numbers, so a
    // difference beyond rounding is an edit).
    let scaler = serde_json::to_value(&m.scaler).unwrap_or(serde_json::Value::Null);
    if let Some(given) = j.get("scaler").filter(|v| !v.is_null()) {
        if !same_numbers(given, &scaler) {
            bad("\"scaler\" is not the one the model bytes hold (they decide: leave it out to take theirs)");
        }
    }
    // The descriptive fields: objects, a version of at least 1 (the stored
    // version is this database's own: the next of the name here), what the model
    // was trained on as text (not stored), a time PostgreSQL reads.
    let object = |k: &str| match j.get(k).filter(|v| !v.is_null()) {
        None => serde_json::json!({}),
        Some(v) if v.is_object() => v.clone(),
        Some(_) => bad(&format!("\"{k}\" must be an object")),
    };
    let params = object("parameters");
    let metrics = object("metrics");
    if let Some(v) = j.get("version").filter(|v| !v.is_null()) {
        if v.as_i64().is_none_or(|n| n < 1) {
            bad(&format!(
                "\"version\" is {}, it must be a positive integer",
                crate::error::json_excerpt(v)
            ));
        }
    }
    s("trained_on");
    let trained_at = s("trained_at");
    if let Some(t) = trained_at.as_deref() {
        let read = crate::pg::subxact::catching(
            &[
                PgSqlErrorCode::ERRCODE_INVALID_DATETIME_FORMAT,
                PgSqlErrorCode::ERRCODE_DATETIME_FIELD_OVERFLOW,
                PgSqlErrorCode::ERRCODE_INVALID_TIME_ZONE_DISPLACEMENT_VALUE,
                PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            ],
            || {
                Spi::get_one_with_args::<bool>(
                    "SELECT pg_catalog.isfinite($1::pg_catalog.timestamptz)",
                    &[t.into()],
                )
            },
        );
        match read {
            Err(why) => bad(&format!(
                "\"trained_at\" is \"{}\": {why}",
                crate::error::excerpt(t)
            )),
            Ok(Ok(Some(true))) => {}
            Ok(_) => bad(&format!(
                "\"trained_at\" is \"{}\", which is no finite time",
                crate::error::excerpt(t)
            )),
        }
    }
    store(
        &name,
        &collection,
        &features,
        kernel_name(&m.kernel),
        &params,
        &scaler,
        &bytes,
        &metrics,
        trained_at.as_deref(),
    );
    name
}

/// Whether two JSON values hold the same numbers in the same shape, floats equal
/// to a relative 1e-9 (a scaler printed and read back through jsonb).
fn same_numbers(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => x == y || (x - y).abs() <= 1e-9 * x.abs().max(y.abs()),
            _ => false,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_numbers(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_numbers(v, w)))
        }
        _ => a == b,
    }
}

/// Estimates each source's authority as its share of originals among labelled
/// pairs where exactly one side duplicates the other, and stores it in
/// `dedup.sources`. Sources seen only in mutual or distinct pairs are left alone.
/// Returns the number of sources written. Interrupts: checked while the pairs
/// query runs, once per row read and once per pair counted.
#[pg_extern(volatile, strict, parallel_unsafe)]
fn learn_authority(collection: &str, pairs: &str) -> i64 {
    let coll = collections::load(collection);
    privilege::require_configuration("dedup.sources", "INSERT", "dedup.learn_authority");
    let mut counts: HashMap<String, (i64, i64)> = HashMap::new();
    each_labelled_pair(pairs, |run| {
        for (a, b, ab, ba) in run {
            pgrx::check_for_interrupts!();
            let (a, b) = (a.decode(), b.decode());
            let (orig, dup) = match (ab, ba) {
                (Some(true), Some(false)) => (b.source, a.source),
                (Some(false), Some(true)) => (a.source, b.source),
                _ => continue,
            };
            if let Some(o) = orig {
                let e = counts.entry(o).or_default();
                e.0 += 1;
                e.1 += 1;
            }
            if let Some(d) = dup {
                counts.entry(d).or_default().1 += 1;
            }
        }
        true
    });
    let mut n = 0;
    Spi::connect_mut(|c| {
        let mut keys: Vec<_> = counts.into_iter().collect();
        keys.sort();
        for (source, (orig, total)) in keys {
            let a = if total > 0 {
                orig as f64 / total as f64
            } else {
                0.5
            };
            c.update(
                "INSERT INTO dedup.sources (collection, source, authority) VALUES ($1, $2, $3) \
                 ON CONFLICT (collection, source) DO UPDATE SET authority = excluded.authority",
                None,
                &[coll.name.as_str().into(), source.as_str().into(), a.into()],
            )
            .unwrap_or_else(|e| spi_err(e));
            n += 1;
        }
    });
    n
}
