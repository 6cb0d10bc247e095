//! Weighing documents against a collection: the collection's N and total length
//! (`collection_state`), its terms' df/cf through a backend term cache, and the
//! cache of weighed stored documents (`Weigher`), plus the SQL functions `weights`
//! and `top_terms`. The cache policies (drift tolerance, whole reads, validity)
//! are described where they are decided.

use crate::document::Document;
use crate::error::DedupError;
use crate::features::{self, Prepared, Side, Unweighed};
use crate::lru::CostLru;
use crate::pg::collections::{load, Collection};
use crate::pg::spi_err;
use crate::pg::stats_read::{collection_state, generation, own_term_changes, stored_term_stats};
use crate::pg::types::{DocumentDatum, StoredDoc};
use crate::pg::{raise, OrRaise};
use crate::pg::{stored, stored_or};
use crate::weights::{self, CollectionStats, Params, TermStat, Weighting};
use pgrx::prelude::*;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

thread_local! {
    /// Term statistics fetched by [`Weigher`]s, per collection id, kept across
    /// statements; each entry while at most [`cache_policy::DRIFT`] of N documents
    /// have been added or removed since it was read (see [`Weigher::prefetch`]).
    static TERMS: RefCell<HashMap<i32, CachedTerms>> = RefCell::new(HashMap::new());
    /// Decoded, weighed stored documents (see [`Weigher::weigh_stored`]), within
    /// `dedup.document_cache_size`.
    static DOCS: RefCell<CostLru<DocKey, DocEntry>> = RefCell::new(CostLru::new(0));
    /// Candidates ruled out before weighing, decoded and sketched, within the same
    /// budget as `DOCS` (and emptied with it).
    static SKETCHES: RefCell<CostLru<DocKey, Rc<Sketched>>> = RefCell::new(CostLru::new(0));
}

/// Term statistics a backend read from the tables, without any transaction's own
/// unwritten changes (a [`Weigher`] adds its transaction's at each lookup): each
/// entry remembers the stored clock (documents added or removed since the last
/// recompute) it was read at.
struct CachedTerms {
    /// When a [`Weigher`] last put it back (a backend-wide count), for eviction.
    used: u64,
    last_recompute: Option<i64>,
    terms: TermMap,
    whole: WholeRead,
}

/// Whether a backend holds every term of a collection (see [`PRELOAD_MAX_TERMS`]).
#[derive(Clone, Copy, Default)]
struct WholeRead {
    /// The stored clock at which every term row was read into an emptied map: a
    /// term absent from the map then had df 0.
    complete_at: Option<i64>,
    /// The N at which a whole read found more than [`PRELOAD_MAX_TERMS`] terms; not
    /// tried again until N has doubled.
    refused_at: Option<i64>,
}

/// Cached terms by name. foldhash, randomly seeded per backend, rather than SipHash:
/// weighing looks up every term of every document compared, and this map was the
/// largest part of `classify_pair`'s time.
type TermMap = HashMap<crate::document::Term, Cached, foldhash::fast::RandomState>;

/// One cached term: its stored df/cf and the collection's stored clock when they
/// were read.
#[derive(Clone, Copy)]
struct Cached {
    stat: TermStat,
    read_at: i64,
}

use crate::cache_policy::{self, PRELOAD_MAX_TERMS};

/// Largest number of cached terms per collection before the cache starts over.
const MAX_CACHED_TERMS: usize = 2_000_000;

thread_local! {
    /// [`PRELOAD_MAX_TERMS`], lowered by tests to compare both ways of reading.
    static PRELOAD_LIMIT: std::cell::Cell<i64> = const { std::cell::Cell::new(PRELOAD_MAX_TERMS) };
}

/// Sets the largest collection (in terms) read whole; for tests.
#[cfg(any(test, feature = "pg_test"))]
pub fn set_preload_limit(n: i64) {
    PRELOAD_LIMIT.with(|c| c.set(n));
}

/// A document with its body and title weights in one collection, aligned with
/// `doc.terms` and `doc.title_terms`.
/// [`Self::prep`] holds what comparing needs of it alone, made at its first
/// comparison (an insert with no candidate to compare never needs it) and kept,
/// so a cached document costs nothing but the comparison when it meets the next
/// one.
pub struct Weighed {
    pub doc: Document,
    pub body: Vec<f64>,
    pub title: Vec<f64>,
    prep: std::cell::OnceCell<Prepared>,
}

impl Weighed {
    pub fn new(doc: Document, body: Vec<f64>, title: Vec<f64>) -> Weighed {
        Weighed {
            doc,
            body,
            title,
            prep: std::cell::OnceCell::new(),
        }
    }

    /// What comparing needs of this document alone, made once.
    pub fn prep(&self) -> &Prepared {
        self.prep.get_or_init(|| {
            Prepared::new(&Side {
                doc: &self.doc,
                weights: &self.body,
                title_weights: &self.title,
                authority: 0.0,
            })
        })
    }

    /// The memory this weighed document holds, roughly, counting its prepared
    /// form at its bound whether made yet or not: a cache charges a document once,
    /// when it takes it, and the form may be made later.
    pub fn heap_bytes(&self) -> usize {
        std::mem::size_of::<Weighed>()
            + self.doc.heap_bytes()
            + 8 * (self.body.len() + self.title.len())
            + features::prepared_bytes_bound(&self.doc)
    }
}

/// df/cf of a document's body and title terms, aligned with them, and the
/// oldest clock any of them was read at.
#[derive(Default)]
struct DocStats {
    body: Vec<TermStat>,
    title: Vec<TermStat>,
    read_at: i64,
}

/// A stored document's identity in the cache: a 128-bit hash of its bytes, and
/// what its weights depend on besides the statistics.
#[derive(Clone, PartialEq, Eq, Hash)]
struct DocKey {
    bytes: u128,
    collection: i32,
    weighting: Weighting,
}

/// Decides, from its index and its decoded, sketched form, to leave a candidate
/// unweighed (see [`Weigher::weigh_stored_unless`]).
pub type SkipFn<'a> = dyn FnMut(usize, &Sketched) -> bool + 'a;

/// A stored document not decoded or weighed: its bytes (uncompressed), and what
/// `features::bounds` needs of it, skimmed from them.
pub struct Sketched {
    pub bytes: Vec<u8>,
    pub sketch: Unweighed,
}

impl Sketched {
    fn heap_bytes(&self) -> usize {
        std::mem::size_of::<Sketched>() + self.bytes.len() + self.sketch.heap_bytes()
    }

    /// The document itself (corrupt bytes raise XX001, as any decode does).
    pub fn decode(&self) -> Document {
        Document::decode(&self.bytes).or_raise_stored()
    }
}

struct DocEntry {
    weighed: Rc<Weighed>,
    /// The oldest clock any of the statistics behind the weights was read at.
    read_at: i64,
    last_recompute: Option<i64>,
    k1: u64,
    b: u64,
}

/// The term changes a committed transaction wrote straight into `term_stats`
/// (see `pg::stats::take_written`): the backend's cached entries of those terms
/// take them in, so its next lookups count its own documents as a re-read would
/// (a term a whole read found absent had df 0, so it is cached with the change).
pub fn committed(written: Vec<crate::pg::stats::Written>) {
    TERMS.with(|t| {
        let mut t = t.borrow_mut();
        for w in written {
            let Some(c) = t.get_mut(&w.coll_id) else {
                continue;
            };
            for ((term, df), cf) in w.terms.iter().zip(w.dfs).zip(w.cfs) {
                if let Some(e) = c.terms.get_mut(term.as_str()) {
                    e.stat.df += df;
                    e.stat.cf += cf;
                } else if let Some(at) = c.whole.complete_at {
                    let stat = TermStat { df, cf };
                    c.terms
                        .insert(term.as_str().into(), Cached { stat, read_at: at });
                }
            }
        }
    });
}

thread_local! {
    /// Counts the term cache's uses ([`CachedTerms::used`]).
    static USES: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    /// The [`generation`] the caches above were filled under.
    static GENERATION: std::cell::Cell<Option<u32>> = const { std::cell::Cell::new(None) };
}

/// Empties the backend caches when the extension has been dropped and created
/// again since they were filled: its collections reuse the dropped ones' ids, and
/// their statistics would be taken for the new ones' until N moved by the
/// tolerance (a kept connection of a pool).
fn check_generation() {
    let now = generation();
    if GENERATION
        .with(|g| g.replace(Some(now)))
        .is_some_and(|was| was != now)
    {
        clear_backend_cache();
    }
}

/// Empties the backend term and document caches.
pub fn clear_backend_cache() {
    clear_caches(true);
}

/// The transaction rolled back. The weighed documents go (their weights counted
/// its own changes). The term cache goes only when it wrote statistics rows:
/// otherwise it holds committed rows alone (a transaction's own changes are added
/// at each lookup, never cached), and keeping it spares the next insert a whole
/// read of the collection (an insert refused under `'error'` rolls back).
pub fn after_abort() {
    clear_caches(crate::pg::stats::take_stats_written());
}

/// The transaction committed, or was prepared: a prepared transaction that wrote
/// statistics rows may yet be rolled back, so the term cache goes with them.
pub fn after_end(prepared: bool) {
    if crate::pg::stats::take_stats_written() && prepared {
        clear_caches(true);
    }
}

/// Empties the weighed-document caches, and the term cache when `terms`.
fn clear_caches(terms: bool) {
    let terms = if terms {
        TERMS.with(|t| {
            let mut t = t.borrow_mut();
            let n: usize = t.values().map(|c| c.terms.len()).sum();
            t.clear();
            n
        })
    } else {
        0
    };
    let mut bytes = DOCS.with(|d| {
        let mut d = d.borrow_mut();
        let b = d.total();
        d.clear();
        b
    });
    bytes += SKETCHES.with(|d| {
        let mut d = d.borrow_mut();
        let b = d.total();
        d.clear();
        b
    });
    // What a large cache held goes back to the operating system now, not when
    // mimalloc would next purge it: the backend may stay idle in a pool.
    if terms >= RELEASE_AFTER_TERMS || bytes >= RELEASE_AFTER_BYTES {
        crate::release_freed_memory();
    }
}

/// Puts both document caches under `budget` (`dedup.document_cache_size`, read
/// per call): a session that lowers the setting gets the memory back at its next
/// insert, to the operating system too when the caches shrank by
/// [`RELEASE_AFTER_BYTES`] or more (an audit's backend kept 49 MB after `SET
/// dedup.document_cache_size = 0`: the sketches were not looked at with no budget).
fn apply_document_budget(budget: usize) {
    let total = || DOCS.with(|d| d.borrow().total()) + SKETCHES.with(|s| s.borrow().total());
    let before = total();
    if before <= budget {
        return;
    }
    DOCS.with(|d| d.borrow_mut().set_budget(budget));
    SKETCHES.with(|s| s.borrow_mut().set_budget(budget));
    if before.saturating_sub(total()) >= RELEASE_AFTER_BYTES {
        crate::release_freed_memory();
    }
}

/// Cleared caches at least this large (terms, or weighed documents' bytes) have
/// their memory returned at once (see [`clear_caches`]).
const RELEASE_AFTER_TERMS: usize = 100_000;
const RELEASE_AFTER_BYTES: usize = 16 * 1024 * 1024;

/// Weighs documents against one collection's statistics, fetching the df/cf of
/// many documents' terms in one query. What it fetched stays in a per-backend cache
/// for the next `Weigher` of the collection, each entry while at most
/// [`cache_policy::DRIFT`] of N documents have been added or removed since it was
/// read.
pub struct Weigher<'c> {
    pub coll: &'c Collection,
    params: Params,
    /// N and the total length as this transaction sees them (its own changes in).
    stats: CollectionStats,
    /// The stored count of documents added or removed since the last recompute
    /// (see `stats_read::State`): cached statistics are current while it stays
    /// within the tolerance of the count they were read at. A transaction's own
    /// changes are added at each lookup, exactly, so a bulk load in one transaction
    /// (which changes nothing stored until it commits) never reads the same
    /// statistics twice.
    stored_clock: i64,
    /// The same with this transaction's own additions and removals: what weighed
    /// documents record.
    clock: i64,
    terms: TermMap,
    last_recompute: Option<i64>,
    /// Entries read more than this many additions and removals ago are read again.
    tolerance: i64,
    whole: WholeRead,
    /// The documents given to weigh are a function's arguments, not stored rows
    /// (see [`require_within_limits`]).
    arguments: bool,
}

impl Drop for Weigher<'_> {
    fn drop(&mut self) {
        let terms = std::mem::take(&mut self.terms);
        if terms.len() > MAX_CACHED_TERMS {
            return;
        }
        let used = USES.with(|u| {
            u.set(u.get() + 1);
            u.get()
        });
        let entry = CachedTerms {
            used,
            last_recompute: self.last_recompute,
            terms,
            whole: self.whole,
        };
        TERMS.with(|t| {
            let mut t = t.borrow_mut();
            t.insert(self.coll.id, entry);
            if t.len() == 1 {
                return;
            }
            let sizes: Vec<(i32, usize, u64)> = t
                .iter()
                .map(|(id, c)| (*id, c.terms.len(), c.used))
                .collect();
            let evicted =
                cache_policy::evict(&sizes, self.coll.id, cache_policy::BACKEND_CACHED_TERMS);
            for id in &evicted {
                t.remove(id);
            }
            if !evicted.is_empty() {
                drop(t);
                crate::release_freed_memory();
            }
        });
    }
}

impl<'c> Weigher<'c> {
    pub fn new(coll: &'c Collection, scheme: Option<Weighting>) -> Self {
        let mut params = coll.params;
        if let Some(w) = scheme {
            params.weighting = w;
        }
        let state = collection_state(coll.id);
        let (stats, last_recompute) = (state.stats, state.last_recompute);
        check_generation();
        let cached = TERMS.with(|t| t.borrow_mut().remove(&coll.id));
        let small = stats.n_docs < cache_policy::SMALL_COLLECTION;
        let (terms, whole) = match cached {
            Some(c) if c.last_recompute == last_recompute && !small => (c.terms, c.whole),
            Some(mut c) => {
                c.terms.clear();
                (c.terms, WholeRead::default())
            }
            None => (TermMap::default(), WholeRead::default()),
        };
        Weigher {
            coll,
            params,
            stats,
            stored_clock: state.stored_clock,
            clock: state.clock,
            terms,
            last_recompute,
            tolerance: cache_policy::tolerance(
                stats.n_docs,
                cache_policy::batch(crate::gucs::stats_batch(), state.stored_n),
            ),
            whole,
            arguments: false,
        }
    }

    /// This weigher weighs a function's arguments: each document not weighed
    /// before is held to [`require_within_limits`].
    pub fn for_arguments(mut self) -> Self {
        self.arguments = true;
        self
    }

    fn current(&self, c: &Cached) -> bool {
        cache_policy::current(self.stored_clock, c.read_at, self.tolerance)
    }

    /// This transaction's own additions and removals: added to a cached entry's
    /// `read_at` to put it on the scale of `clock` (what weighed documents record).
    fn own_clock(&self) -> i64 {
        self.clock - self.stored_clock
    }

    /// Adds this transaction's own unwritten changes of `terms` to `stats`.
    fn add_own(&self, terms: &[crate::document::TermFreq], stats: &mut [TermStat]) {
        own_term_changes(self.coll.id, terms.iter().map(|t| t.term.as_str()), stats);
    }

    /// Fetches the statistics of every term of `docs` not fetched yet (or fetched
    /// too many documents ago): from a whole read of the collection's terms when it
    /// is small enough (see [`PRELOAD_MAX_TERMS`]), otherwise in one query for the
    /// missing terms.
    pub fn prefetch<'d>(&mut self, docs: impl IntoIterator<Item = &'d Document>) {
        let mut missing: Vec<crate::document::Term> = Vec::new();
        for d in docs {
            for t in d.terms.iter().chain(&d.title_terms) {
                if !self
                    .terms
                    .get(t.term.as_str())
                    .is_some_and(|c| self.current(c))
                {
                    missing.push(t.term.clone());
                }
            }
        }
        self.fetch(missing);
    }

    /// Reads the statistics of `missing` terms (unsorted, repeats allowed) into the
    /// cache.
    fn fetch(&mut self, mut missing: Vec<crate::document::Term>) {
        if missing.is_empty() {
            return;
        }
        if !self.whole_current() && self.may_read_whole() {
            self.read_whole();
        }
        if let Some(at) = self.whole.complete_at.filter(|_| self.whole_current()) {
            // Every term row was read at `at`, within the tolerance: a term the read
            // did not see had df 0 then. (A term read since and gone stale, which
            // only deletions can cause, is read again below.)
            let (absent, stale): (Vec<_>, Vec<_>) = missing
                .into_iter()
                .partition(|t| !self.terms.contains_key(t.as_str()));
            for t in absent {
                let stat = TermStat::default();
                self.terms.insert(t, Cached { stat, read_at: at });
            }
            missing = stale;
            if missing.is_empty() {
                return;
            }
        }
        missing.sort_unstable();
        missing.dedup();
        let names: Vec<String> = missing.iter().map(|t| t.to_string()).collect();
        let found = stored_term_stats(self.coll.id, &names);
        let read_at = self.stored_clock;
        for (t, stat) in missing.into_iter().zip(found) {
            self.terms.insert(t, Cached { stat, read_at });
        }
    }

    fn whole_current(&self) -> bool {
        self.whole
            .complete_at
            .is_some_and(|at| cache_policy::current(self.stored_clock, at, self.tolerance))
    }

    /// Small collections (N < 100) are read term by term: they are re-read on
    /// every use anyway. A refused whole read is retried once N has doubled.
    fn may_read_whole(&self) -> bool {
        cache_policy::may_read_whole(
            self.tolerance,
            PRELOAD_LIMIT.with(|c| c.get()),
            self.whole.refused_at,
            self.stats.n_docs,
        )
    }

    /// Reads every term row of the collection into an emptied map, unless there
    /// are more than the preload limit.
    fn read_whole(&mut self) {
        let limit = PRELOAD_LIMIT.with(|c| c.get());
        if !self.read_all(Some(limit)) {
            self.whole.refused_at = Some(self.stats.n_docs);
        }
    }

    /// Loads the statistics of every term of the collection (for whole-table work).
    pub fn prefetch_all(&mut self) {
        self.read_all(None);
    }

    /// Replaces the cached terms with every term row of the collection, unless there
    /// are more than `limit`; returns whether it did.
    fn read_all(&mut self, limit: Option<i64>) -> bool {
        let mut read = TermMap::default();
        let read_at = self.stored_clock;
        // One row: the terms joined by newlines (a term never holds whitespace), and
        // their df and cf as arrays. Reading 50,000 terms as one row per term cost
        // ~5 us a row in SPI tuple handling; this costs a fraction of that.
        let complete = Spi::connect(|c| {
            // LIMIT NULL is no limit. Planned and run without plain index scans: an
            // index scan visits a heap page per term (51k buffer reads for 51k terms,
            // 51 ms), a bitmap scan each page once (1.9k, 21 ms), and a new
            // connection pays a page fault for every shared buffer it touches first.
            let t = without_index_scans(|| {
                c.select(
                    "SELECT count(*), string_agg(term, E'\\n'), array_agg(df), array_agg(cf) \
                     FROM (SELECT term, df, cf FROM dedup.term_stats WHERE collection_id = $1 LIMIT $2) s",
                    None,
                    &[self.coll.id.into(), limit.map(|l| l.saturating_add(1)).into()],
                )
            })
            .unwrap_or_else(|e| spi_err(e));
            let r = t.first();
            let n = stored(r.get::<i64>(1), "the term count of a whole read");
            if limit.is_some_and(|l| n > l) {
                return false;
            }
            let terms = stored_or(r.get::<&str>(2), "dedup.term_stats.term", "");
            let dfs = stored_or(r.get::<Vec<i64>>(3), "dedup.term_stats.df", Vec::new());
            let cfs = stored_or(r.get::<Vec<i64>>(4), "dedup.term_stats.cf", Vec::new());
            if n == 0 {
                return true;
            }
            let split: Vec<&str> = terms.split('\n').collect();
            if split.len() as i64 != n || dfs.len() != split.len() || cfs.len() != split.len() {
                // A term with a newline in it (a hand-written document): read term by
                // term instead, as for a collection that is too large.
                return false;
            }
            read.reserve(split.len());
            for ((term, df), cf) in split.into_iter().zip(dfs).zip(cfs) {
                let stat = TermStat { df, cf };
                read.insert(term.into(), Cached { stat, read_at });
            }
            true
        });
        if complete {
            self.terms = read;
            self.whole.complete_at = Some(read_at);
        }
        complete
    }

    /// The cached statistics of `terms` (unseen when not prefetched), with this
    /// transaction's own changes.
    fn lookup(&self, terms: &[crate::document::TermFreq]) -> Vec<TermStat> {
        let mut out: Vec<TermStat> = terms
            .iter()
            .map(|t| {
                self.terms
                    .get(t.term.as_str())
                    .map_or_else(TermStat::default, |c| c.stat)
            })
            .collect();
        self.add_own(terms, &mut out);
        out
    }

    /// Body and title weights of `doc`, aligned with its terms. Terms not prefetched
    /// count as unseen.
    pub fn weights(&self, doc: &Document) -> (Vec<f64>, Vec<f64>) {
        let st = DocStats {
            body: self.lookup(&doc.terms),
            title: self.lookup(&doc.title_terms),
            read_at: self.clock,
        };
        self.weights_from(doc, &st)
    }

    /// The statistics of every term of `docs`, each term looked up once in the
    /// cache; those missing or stale are fetched together (see [`Self::fetch`]).
    /// This transaction's own changes are added. A document's `read_at` is on the
    /// scale of `clock`: its oldest term's stored clock plus the own changes.
    fn stats_of(&mut self, docs: &[&Document]) -> Vec<DocStats> {
        let now = self.clock;
        let own = self.own_clock();
        let mut out = Vec::with_capacity(docs.len());
        // (document, title?, term index) of each term not in the cache.
        let mut missing: Vec<(usize, bool, usize)> = Vec::new();
        for (di, d) in docs.iter().enumerate() {
            let mut read_at = now;
            let mut look = |terms: &[crate::document::TermFreq], title: bool| -> Vec<TermStat> {
                terms
                    .iter()
                    .enumerate()
                    .map(|(ti, t)| match self.terms.get(t.term.as_str()) {
                        Some(c) if self.current(c) => {
                            read_at = read_at.min(c.read_at + own);
                            c.stat
                        }
                        _ => {
                            missing.push((di, title, ti));
                            TermStat::default()
                        }
                    })
                    .collect()
            };
            let body = look(&d.terms, false);
            let title = look(&d.title_terms, true);
            out.push(DocStats {
                body,
                title,
                read_at,
            });
        }
        if missing.is_empty() {
            self.add_own_to(docs, &mut out);
            return out;
        }
        let term_at = |&(di, title, ti): &(usize, bool, usize)| {
            let d: &Document = docs[di];
            let terms = if title { &d.title_terms } else { &d.terms };
            terms.get(ti).map(|t| &t.term)
        };
        self.fetch(missing.iter().filter_map(|m| term_at(m).cloned()).collect());
        for m in &missing {
            let (Some(term), Some(s)) = (term_at(m), out.get_mut(m.0)) else {
                continue;
            };
            if let Some(c) = self.terms.get(term.as_str()) {
                s.read_at = s.read_at.min(c.read_at + own);
                let slot = if m.1 {
                    s.title.get_mut(m.2)
                } else {
                    s.body.get_mut(m.2)
                };
                if let Some(slot) = slot {
                    *slot = c.stat;
                }
            }
        }
        self.add_own_to(docs, &mut out);
        out
    }

    /// Adds this transaction's own changes to the stored statistics of `docs`.
    fn add_own_to(&self, docs: &[&Document], out: &mut [DocStats]) {
        for (d, s) in docs.iter().zip(out.iter_mut()) {
            self.add_own(&d.terms, &mut s.body);
            self.add_own(&d.title_terms, &mut s.title);
        }
    }

    /// Body and title weights of `doc` from its statistics.
    fn weights_from(&self, doc: &Document, st: &DocStats) -> (Vec<f64>, Vec<f64>) {
        let body = weights::term_weights(
            &doc.terms,
            doc.length() as i64,
            &self.stats,
            &st.body,
            &self.params,
        );
        let tlen: i64 = doc.title_terms.iter().map(|t| t.tf as i64).sum();
        let title =
            weights::term_weights(&doc.title_terms, tlen, &self.stats, &st.title, &self.params);
        (body, title)
    }

    /// Weighs a document that is not stored (yet): fetches its statistics first.
    pub fn weigh(&mut self, doc: Document) -> Rc<Weighed> {
        self.weigh_read_at(doc).0
    }

    /// [`Self::weigh`], and the oldest clock the statistics used were read at.
    pub fn weigh_read_at(&mut self, doc: Document) -> (Rc<Weighed>, i64) {
        require_within_limits(&doc, self.coll);
        let st = self.stats_of(&[&doc]).pop().unwrap_or_default();
        let (body, title) = self.weights_from(&doc, &st);
        (Rc::new(Weighed::new(doc, body, title)), st.read_at)
    }

    fn doc_key(&self, content: u128) -> DocKey {
        DocKey {
            bytes: content,
            collection: self.coll.id,
            weighting: self.params.weighting,
        }
    }

    fn still_valid(&self, e: &DocEntry) -> bool {
        e.last_recompute == self.last_recompute
            && e.k1 == self.params.k1.to_bits()
            && e.b == self.params.b.to_bits()
            && cache_policy::current(self.clock, e.read_at, self.tolerance)
    }

    fn entry(&self, weighed: Rc<Weighed>, read_at: i64) -> DocEntry {
        DocEntry {
            weighed,
            read_at,
            last_recompute: self.last_recompute,
            k1: self.params.k1.to_bits(),
            b: self.params.b.to_bits(),
        }
    }

    /// Weighs stored documents (their `dedup.document` bytes), aligned with
    /// `payloads`. A document weighed before in this backend, under statistics that
    /// are still current by the rule of [`cache_policy::DRIFT`], comes from the cache; the others
    /// are decoded (corrupt bytes raise XX001), their missing statistics fetched in
    /// one query, and they are kept for next time within
    /// `dedup.document_cache_size`.
    pub fn weigh_stored(&mut self, docs: &[&dyn StoredDoc]) -> Vec<Rc<Weighed>> {
        self.weigh_stored_unless(docs, None)
            .into_iter()
            .flatten()
            .collect()
    }

    /// [`Self::weigh_stored`], except that with `skip`, a document not in the cache
    /// is first skimmed (`Document::skim`: hashes and counts read off its bytes,
    /// without decoding it) and shown to `skip` (with its index in `docs`); when
    /// `skip` says so it is returned unweighed and undecoded (`Err`). Such
    /// documents are kept, as bytes and sketch, within `dedup.document_cache_size`
    /// too: the candidate ruled out for one insert is often a candidate of the next.
    pub fn weigh_stored_unless(
        &mut self,
        docs: &[&dyn StoredDoc],
        mut skip: Option<&mut SkipFn>,
    ) -> Vec<Result<Rc<Weighed>, Rc<Sketched>>> {
        use crate::pg::OrRaise;
        let budget = crate::gucs::document_cache_bytes();
        apply_document_budget(budget);
        let mut out: Vec<Option<Result<Rc<Weighed>, Rc<Sketched>>>> = vec![None; docs.len()];
        let mut todo: Vec<(usize, Option<DocKey>, Document)> = Vec::with_capacity(docs.len());
        DOCS.with(|cell| {
            let mut cache = cell.borrow_mut();
            cache.set_budget(budget);
            for (i, d) in docs.iter().enumerate() {
                let mut key = None;
                let mut bytes = None;
                if budget > 0 {
                    // A version-2 document names itself in its first 17 bytes; an
                    // old one is read whole and hashed.
                    let content = match d.stored_key() {
                        Some(k) => k,
                        None => {
                            let b = d.bytes();
                            let k = crate::document::content_key(&b);
                            bytes = Some(b);
                            k
                        }
                    };
                    let k = self.doc_key(content);
                    if let Some(e) = cache.get(&k) {
                        if self.still_valid(e) {
                            out[i] = Some(Ok(e.weighed.clone()));
                            continue;
                        }
                    }
                    key = Some(k);
                }
                let Some(skip) = skip.as_deref_mut() else {
                    let bytes = bytes.unwrap_or_else(|| d.bytes());
                    todo.push((i, key, Document::decode(&bytes).or_raise_stored()));
                    continue;
                };
                let kept = key
                    .as_ref()
                    .and_then(|k| SKETCHES.with(|s| s.borrow_mut().get(k).cloned()));
                let newly_weighed = kept.is_none();
                let sketched = kept.unwrap_or_else(|| {
                    let bytes = bytes.take().unwrap_or_else(|| d.bytes());
                    let sketch = Unweighed::from_skim(Document::skim(&bytes).or_raise_stored());
                    Rc::new(Sketched {
                        bytes: bytes.into_owned(),
                        sketch,
                    })
                });
                if skip(i, &sketched) {
                    if let (Some(k), true) = (key, newly_weighed) {
                        SKETCHES.with(|s| {
                            let mut s = s.borrow_mut();
                            s.set_budget(budget);
                            let cost = sketched.heap_bytes();
                            s.insert(k, sketched.clone(), cost);
                        });
                    }
                    out[i] = Some(Err(sketched));
                    continue;
                }
                // To be weighed (and cached so): the sketch is not needed again.
                if let (Some(k), false) = (key.as_ref(), newly_weighed) {
                    SKETCHES.with(|s| s.borrow_mut().remove(k));
                }
                todo.push((i, key, sketched.decode()));
            }
        });
        if !todo.is_empty() {
            if self.arguments {
                for (_, _, d) in &todo {
                    require_within_limits(d, self.coll);
                }
            }
            let docs: Vec<&Document> = todo.iter().map(|t| &t.2).collect();
            let stats = self.stats_of(&docs);
            DOCS.with(|cell| {
                let mut cache = cell.borrow_mut();
                for ((i, key, doc), st) in todo.into_iter().zip(stats) {
                    let (body, title) = self.weights_from(&doc, &st);
                    let read_at = st.read_at;
                    let w = Rc::new(Weighed::new(doc, body, title));
                    if let Some(k) = key {
                        let cost = w.heap_bytes();
                        cache.insert(k, self.entry(w.clone(), read_at), cost);
                    }
                    out[i] = Some(Ok(w));
                }
            });
        }
        // Every index was filled above: from the cache, skipped, or weighed.
        out.into_iter()
            .map(|o| {
                o.unwrap_or_else(|| {
                    Err(Rc::new(Sketched {
                        bytes: Vec::new(),
                        sketch: Unweighed::default(),
                    }))
                })
            })
            .collect()
    }

    /// Whether every term with tf > 0 weighs > 0 under this weigher (see
    /// [`weights::weights_positive`]).
    pub fn weights_positive(&self) -> bool {
        weights::weights_positive(&self.stats, &self.params)
    }

    /// Keeps a weighed document under the bytes it is about to be stored as, so
    /// that comparing it later (as a candidate of the next insert) reads no bytes.
    /// `read_at` is what [`Self::weigh_read_at`] returned with it.
    pub fn remember(&self, payload: &[u8], weighed: &Rc<Weighed>, read_at: i64) {
        let budget = crate::gucs::document_cache_bytes();
        if budget == 0 {
            return;
        }
        DOCS.with(|cell| {
            let mut cache = cell.borrow_mut();
            cache.set_budget(budget);
            let cost = weighed.heap_bytes();
            let key = self.doc_key(crate::document::content_key(payload));
            cache.insert(key, self.entry(weighed.clone(), read_at), cost);
        });
    }
}

/// Runs `f` with `enable_indexscan` off (see `pg::guc_scope`).
fn without_index_scans<R>(f: impl FnOnce() -> R) -> R {
    crate::pg::guc_scope::with_settings(&[(c"enable_indexscan", c"off")], f)
}

/// Raises 54000 when a document to weigh that is not stored (a function's
/// argument, which any role can write as a literal) holds more body or title
/// terms than a text of the collection's `max_document_bytes` can give (a term
/// takes two bytes at least): its weighing takes memory and time in proportion
/// (an audit's literal of 12 million terms took 4 GB and a minute in `compare`,
/// past cancels). Stored documents are not checked: a lowered limit must not
/// fail the inserts that meet older rows.
pub fn require_within_limits(doc: &Document, coll: &Collection) {
    let max = coll.limits.max_document_bytes / 2 + 1;
    let n = doc.terms.len().max(doc.title_terms.len());
    if n > max {
        crate::pg::raise(crate::error::DedupError::TooLarge {
            msg: format!(
                "document of {n} distinct terms is larger than a text of collection \"{}\"'s max_document_bytes ({}) can give",
                crate::error::excerpt(&coll.name),
                coll.limits.max_document_bytes
            ),
            hint: Some(
                "documents made by dedup.to_document from texts within that limit are weighed; raise it with dedup.set_collection_options to weigh larger ones"
                    .into(),
            ),
        });
    }
}

/// Body and title weights of `doc` in collection `coll`, aligned with its terms.
pub fn document_weights(
    doc: &Document,
    coll: &Collection,
    scheme: Option<Weighting>,
) -> (Vec<f64>, Vec<f64>) {
    require_within_limits(doc, coll);
    let mut w = Weigher::new(coll, scheme);
    w.prefetch([doc]);
    w.weights(doc)
}

/// The weight of each body term of `doc` against a collection's statistics.
/// `scheme` overrides the collection's weighting ('bm25' or 'tf_ridf').
#[pg_extern(stable)]
fn weights(
    doc: Option<DocumentDatum>,
    collection: Option<&str>,
    scheme: default!(Option<&str>, "NULL"),
) -> TableIterator<'static, (name!(term, String), name!(weight, f64))> {
    let (Some(doc), Some(collection)) = (doc, collection) else {
        return TableIterator::new(Vec::new());
    };
    let scheme = scheme.map(|s| Weighting::parse(s).or_raise());
    let doc = doc.decode();
    let (w, _) = crate::pg::privilege::reading_collection(collection, "dedup.weights", || {
        document_weights(&doc, &load(collection), scheme)
    });
    TableIterator::new(
        doc.terms
            .into_iter()
            .zip(w)
            .map(|(t, w)| (t.term.into_string(), w))
            .collect::<Vec<_>>(),
    )
}

/// The k heaviest body terms of `doc` in a collection.
#[pg_extern(stable, strict)]
fn top_terms(
    doc: DocumentDatum,
    collection: &str,
    k: i32,
) -> TableIterator<'static, (name!(term, String), name!(weight, f64))> {
    if k < 0 {
        raise(DedupError::invalid_parameter(format!(
            "k must not be negative, got {k}"
        )));
    }
    let doc = doc.decode();
    let (w, _) = crate::pg::privilege::reading_collection(collection, "dedup.top_terms", || {
        document_weights(&doc, &load(collection), None)
    });
    TableIterator::new(weights::top_terms(&doc, &w, k as usize))
}
