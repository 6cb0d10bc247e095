//! Every `dedup.*` setting, registered once from `_PG_init`.
//!
//! | setting | default | range | what |
//! |---|---|---|---|
//! | `dedup.max_document_bytes` | 10MB | 1kB .. 1GB | larger `to_document` input is refused with 54000 |
//! | `dedup.min_word_length` | 3 | 1 .. 64 | shorter words (in characters) are not terms |
//! | `dedup.stats_batch` | 0 | 0 .. 1000 | documents of committed transactions' statistics changes collected before they are folded into `term_stats` (0 = automatic: 1, at once, below 2,000 documents, then 0.5 % of the collection, at most 1,000) |
//! | `dedup.background_fold` | on | on, off | a full batch is folded by a background worker after commit, not inside the insert; under REPEATABLE READ and SERIALIZABLE every writer's statistics go through it |
//! | `dedup.min_shared_keys` | 4 | 1 .. 256 | `topwords` signatures are candidates when they share this many keys |
//! | `dedup.similarity_threshold` | 0.8 | 0 .. 1 | `longest` signatures are candidates at this similarity |
//! | `dedup.document_cache_size` | 32MB | 0 .. 1GB | per-backend memory for decoded, weighed documents (0 = off) |
//! | `dedup.prune_candidates` | on | on, off | rule candidates out by bounds before weighing them (same decisions; off weighs every candidate) |
//!
//! `dedup.max_document_bytes`, `dedup.stats_batch` and `dedup.background_fold` are
//! `SUSET` (the superuser's to give, with `GRANT SET ON PARAMETER`):
//! `max_document_bytes` as `temp_file_limit` is, since analysing a text costs
//! memory in proportion to it; the other two since a writer's batch and fold
//! decide how long every writer's statistics changes wait (a session's batch of
//! 1,000 held a new collection's statistics at 0 documents for everyone). The rest
//! are `USERSET`: a session or a single transaction (`SET LOCAL`) may change them.

use pgrx::{GucContext, GucFlags, GucRegistry, GucSetting};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

pub static MAX_DOCUMENT_BYTES: GucSetting<i32> = GucSetting::<i32>::new(10 * 1024 * 1024);
pub static MIN_WORD_LENGTH: GucSetting<i32> = GucSetting::<i32>::new(3);

pub static STATS_BATCH: GucSetting<i32> = GucSetting::<i32>::new(0);
pub static BACKGROUND_FOLD: GucSetting<bool> = GucSetting::<bool>::new(true);
pub static PRUNE_CANDIDATES: GucSetting<bool> = GucSetting::<bool>::new(true);
pub static MIN_SHARED_KEYS: GucSetting<i32> = GucSetting::<i32>::new(4);
pub static SIMILARITY_THRESHOLD: GucSetting<f64> = GucSetting::<f64>::new(0.8);
/// In kB.
pub static DOCUMENT_CACHE_SIZE: GucSetting<i32> = GucSetting::<i32>::new(32 * 1024);

pub fn init() {
    GucRegistry::define_int_guc(
        c"dedup.max_document_bytes",
        c"Largest text, in bytes, that dedup.to_document accepts.",
        c"Larger input raises SQLSTATE 54000. Range 1kB to 1GB. Superuser-only, as temp_file_limit is (GRANT SET ON PARAMETER gives it to a role): a text costs memory in proportion to it.",
        &MAX_DOCUMENT_BYTES,
        1024,
        1024 * 1024 * 1024,
        GucContext::Suset,
        GucFlags::UNIT_BYTE,
    );
    GucRegistry::define_int_guc(
        c"dedup.min_word_length",
        c"Words shorter than this many characters are not terms.",
        c"Range 1 to 64.",
        &MIN_WORD_LENGTH,
        1,
        64,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"dedup.stats_batch",
        c"Committed transactions' statistics changes collected before they are folded into dedup.term_stats.",
        c"0 (the default) is automatic: 1 while the collection has fewer than 2,000 documents, then 0.5 % of its documents, at most 1,000. With a batch of 1 every commit updates the term and collection rows; with a larger batch each committing transaction adds one pending row instead (writers then share no row and never queue on each other), and once the pending rows changed a batch of documents a fold takes them at once; N, df and cf then lag by about the batch until that fold or dedup.flush_stats, within the 1 % drift cached statistics are allowed anyway. Range 0 to 1000, the automatic batch's largest. Superuser-only (GRANT SET ON PARAMETER gives it to a role): the batch decides how long every writer's changes wait.",
        &STATS_BATCH,
        0,
        1_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"dedup.background_fold",
        c"Whether a full batch of pending term statistics is folded by a background worker.",
        c"On (the default): once dedup.stats_batch pending rows (one per committed transaction) are waiting, the transaction that reached the batch starts a background worker when it commits, and the fold runs there instead of inside an insert. Twice the batch pending is folded at once whatever this says (no free worker slot), except by a REPEATABLE READ or SERIALIZABLE transaction. Off: the transaction that reaches the batch folds it. Under REPEATABLE READ and SERIALIZABLE (while on) every transaction appends a pending row, whatever the batch, and the worker folds it (after every commit below 2,000 documents, once a batch waits above): such a transaction cannot update statistics rows other writers change without failing with 40001. Values on and off. Superuser-only (GRANT SET ON PARAMETER gives it to a role).",
        &BACKGROUND_FOLD,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"dedup.min_shared_keys",
        c"Keys two topwords signatures must share to be candidates.",
        c"Range 1 to 256. Read by the % operator, which is therefore STABLE.",
        &MIN_SHARED_KEYS,
        1,
        256,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_float_guc(
        c"dedup.similarity_threshold",
        c"Similarity two longest signatures must reach to be candidates.",
        c"Range 0 to 1. Read by the % operator, which is therefore STABLE.",
        &SIMILARITY_THRESHOLD,
        0.0,
        1.0,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"dedup.document_cache_size",
        c"Memory each backend may keep decoded, weighed stored documents in.",
        c"Comparing two stored documents costs mostly decoding and weighing them; a document seen again (an original compared with each reprint, pairs over a table) is taken from this cache while its weights are current. 0 turns it off. Range 0 to 1GB.",
        &DOCUMENT_CACHE_SIZE,
        0,
        1024 * 1024,
        GucContext::Userset,
        GucFlags::UNIT_KB,
    );
    GucRegistry::define_bool_guc(
        c"dedup.prune_candidates",
        c"Whether candidates are ruled out by bounds before they are weighed.",
        c"On (the default): a candidate whose feature bounds, computed from the new document's weights and the candidate's unweighed terms, already keep the linear model or the threshold rule at or below 0 in both directions is not weighed. The decisions are the same as with off, which weighs every candidate (for comparison). RBF models are never pruned. Values on and off.",
        &PRUNE_CANDIDATES,
        GucContext::Userset,
        GucFlags::default(),
    );
}

/// `dedup.max_document_bytes`, in bytes.
pub fn max_document_bytes() -> usize {
    MAX_DOCUMENT_BYTES.get().max(0) as usize
}

/// `dedup.min_word_length`, in characters.
pub fn min_word_length() -> usize {
    MIN_WORD_LENGTH.get().max(1) as usize
}

/// The candidate rule of the collection whose index the trigger is scanning, in
/// place of the session's settings (see [`CandidateRule`]): min_shared_keys (0 =
/// none) and the threshold's bits. Plain statics, not thread-locals: a backend is
/// one thread, and the library's static TLS block is already near glibc's limit
/// for a dlopen'ed library.
static RULE_MIN: AtomicUsize = AtomicUsize::new(0);
static RULE_THRESHOLD: AtomicU64 = AtomicU64::new(0);

fn rule() -> Option<(usize, f64)> {
    match RULE_MIN.load(Ordering::Relaxed) {
        0 => None,
        m => Some((m, f64::from_bits(RULE_THRESHOLD.load(Ordering::Relaxed)))),
    }
}

fn set_rule(r: Option<(usize, f64)>) {
    let (m, t) = r.unwrap_or((0, 0.0));
    RULE_THRESHOLD.store(t.to_bits(), Ordering::Relaxed);
    RULE_MIN.store(m, Ordering::Relaxed);
}

/// While alive, `min_shared_keys()` and `similarity_threshold()` (which the `%`
/// operator and the GIN consistent functions read) answer with a collection's
/// values instead of the session's: what the trigger finds must not depend on the
/// writer's `SET`. Restores the previous rule when dropped (also on an error).
pub struct CandidateRule(Option<(usize, f64)>);

impl CandidateRule {
    pub fn set(min_shared_keys: usize, similarity_threshold: f64) -> CandidateRule {
        let previous = rule();
        set_rule(Some((min_shared_keys.max(1), similarity_threshold)));
        CandidateRule(previous)
    }
}

impl Drop for CandidateRule {
    fn drop(&mut self) {
        set_rule(self.0);
    }
}

/// `dedup.min_shared_keys` (or the collection's, under a [`CandidateRule`]).
pub fn min_shared_keys() -> usize {
    match rule() {
        Some((m, _)) => m.max(1),
        None => MIN_SHARED_KEYS.get().max(1) as usize,
    }
}

/// `dedup.similarity_threshold` (or the collection's, under a [`CandidateRule`]).
pub fn similarity_threshold() -> f64 {
    match rule() {
        Some((_, t)) => t,
        None => SIMILARITY_THRESHOLD.get(),
    }
}

/// `dedup.stats_batch` (0: automatic, see `cache_policy::batch`).
pub fn stats_batch() -> i64 {
    STATS_BATCH.get().max(0) as i64
}

/// `dedup.background_fold`.
pub fn background_fold() -> bool {
    BACKGROUND_FOLD.get()
}

/// `dedup.document_cache_size`, in bytes.
pub fn document_cache_bytes() -> usize {
    DOCUMENT_CACHE_SIZE.get().max(0) as usize * 1024
}

/// `dedup.prune_candidates`.
pub fn prune_candidates() -> bool {
    PRUNE_CANDIDATES.get()
}
