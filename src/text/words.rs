//! Words to stems: normalisation (lower case, `ё`→`е`, typographic apostrophes,
//! invisible format characters, one script per word: see [`super::lookalike`]), stop
//! words, the length filters (too short: under `min_word_length` chars; too long:
//! a stem over [`MAX_TERM_BYTES`] bytes) and stemming, with a per-call cache so
//! each distinct spelling is processed once.

use std::collections::HashMap;
use std::sync::OnceLock;

use rust_stemmers::{Algorithm, Stemmer};

use super::lookalike::Majority;
use super::stopwords::is_stop_word;
use super::{AnalyzeOptions, Lang};
use crate::document::{Term, MAX_TERM_BYTES};

/// Writes the normalised form of `word` into `out` (cleared first): lower case,
/// `ё` folded to `е`, `’`/`ʼ`/`‘` folded to `'`, soft hyphens, zero-width
/// spaces/joiners and BOMs removed (HTML often carries `&shy;` inside words), and
/// a word mixing Cyrillic and Latin look-alikes written in one script.
pub(crate) fn normalize_into(word: &str, majority: Majority, out: &mut String) {
    out.clear();
    push_normalized(word, majority, out);
}

/// Appends the normalised form of `word` to `out` (see [`normalize_into`]): once
/// lower-cased, a word that mixes scripts, or is written in look-alikes of the
/// text's `majority` script, is put in one ([`super::lookalike::homoglyphs`]).
fn push_normalized(word: &str, majority: Majority, out: &mut String) {
    if word.is_ascii() && majority != Majority::Cyrillic {
        push_lowered(word, out);
        return;
    }
    let start = out.len();
    push_lowered(word, out);
    if let Some(w) = out
        .get(start..)
        .and_then(|w| super::lookalike::homoglyphs(w, word, majority))
    {
        out.truncate(start);
        out.push_str(&w);
    }
}

/// Appends `word` lower-cased, `ё` folded, apostrophes unified and invisible
/// format characters dropped.
fn push_lowered(word: &str, out: &mut String) {
    if word.is_ascii() {
        let start = out.len();
        out.push_str(word);
        // SAFETY-free: the appended range is ASCII, so lower-casing it in place
        // keeps `out` valid UTF-8.
        if let Some(tail) = out.get_mut(start..) {
            tail.make_ascii_lowercase();
        }
        return;
    }
    for c in word.chars() {
        match c {
            // Basic Russian letters, the bulk of non-ASCII news text: lower-cased
            // by offset, without the general Unicode tables.
            'а'..='я' => out.push(c),
            'А'..='Я' => out.push(char::from_u32(c as u32 + 0x20).unwrap_or(c)),
            'ё' | 'Ё' => out.push('е'),
            '\u{AD}' | '\u{200B}' | '\u{200C}' | '\u{200D}' | '\u{2060}' | '\u{FEFF}' => {}
            '\u{2019}' | '\u{2018}' | '\u{2BC}' => out.push('\''),
            _ => {
                for l in c.to_lowercase() {
                    out.push(if l == 'ё' { 'е' } else { l });
                }
            }
        }
    }
}

/// True if the token is a word for terms and for `Document::words`: it holds at
/// least one letter. Pure numbers ("2024", "3.5", "1,000") are not words; they are
/// picked up by [`super::numbers`]. Mixed tokens ("5g", "covid19") are words.
pub(crate) fn is_word(token: &str) -> bool {
    token.chars().any(char::is_alphabetic)
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Script {
    Cyrillic,
    Latin,
    Other,
}

fn is_cyrillic(c: char) -> bool {
    matches!(c, '\u{400}'..='\u{52F}' | '\u{1C80}'..='\u{1C8F}' | '\u{2DE0}'..='\u{2DFF}' | '\u{A640}'..='\u{A69F}')
}

fn is_latin(c: char) -> bool {
    c.is_ascii_alphabetic()
        || matches!(c, '\u{C0}'..='\u{24F}' | '\u{1E00}'..='\u{1EFF}') && c != '×' && c != '÷'
}

/// The script of a word's letters: Cyrillic or Latin only if every letter is;
/// digits and other non-letters do not count.
fn script(word: &str) -> Script {
    let (mut cyr, mut lat, mut other) = (false, false, false);
    for c in word.chars().filter(|c| c.is_alphabetic()) {
        if is_cyrillic(c) {
            cyr = true;
        } else if is_latin(c) {
            lat = true;
        } else {
            other = true;
        }
    }
    match (cyr, lat, other) {
        (true, false, false) => Script::Cyrillic,
        (false, true, false) => Script::Latin,
        _ => Script::Other,
    }
}

fn russian() -> &'static Stemmer {
    static S: OnceLock<Stemmer> = OnceLock::new();
    S.get_or_init(|| Stemmer::create(Algorithm::Russian))
}

fn english() -> &'static Stemmer {
    static S: OnceLock<Stemmer> = OnceLock::new();
    S.get_or_init(|| Stemmer::create(Algorithm::English))
}

/// The stemmer `lang` applies to the normalised `word`, if any.
fn stemmer_for(lang: Lang, word: &str) -> Option<&'static Stemmer> {
    match lang {
        Lang::Simple => None,
        Lang::Russian => Some(russian()),
        Lang::English => Some(english()),
        Lang::Auto => match script(word) {
            Script::Cyrillic => Some(russian()),
            Script::Latin => Some(english()),
            Script::Other => None,
        },
    }
}

/// What a normalised word is under some options: shared by all calls on a thread.
#[derive(Clone)]
enum Known {
    NotWord,
    Dropped,
    Kept(Term),
}

/// Words remembered across calls before the memo starts over (about 60 MB at most).
const MAX_KNOWN: usize = 400_000;

/// The analyser's maps are keyed by words of untrusted text. foldhash is keyed with
/// a random per-process seed (minimal DoS resistance, like the term statistics
/// cache); SipHash had been about a sixth of `analyze`.
type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

thread_local! {
    /// Normalised word → outcome, for the options it was computed under. News
    /// vocabulary is Zipfian: after a few hundred documents nearly every word of a
    /// new one is here, and stemming (a fifth of `analyze`) is skipped.
    static KNOWN: std::cell::RefCell<(Option<AnalyzeOptions>, FastMap<Term, Known>)> =
        std::cell::RefCell::new((None, FastMap::default()));
}

/// The outcome of `word` (the normalised form of `raw`), from the memo or computed.
/// Whether a token is a word depends only on its letters, which normalisation keeps,
/// so the memo may be keyed by the normalised form.
fn known(opts: &AnalyzeOptions, raw: &str, word: &str) -> Known {
    let hit = KNOWN.with(|k| {
        let k = k.borrow();
        if k.0.as_ref() == Some(opts) {
            k.1.get(word).cloned()
        } else {
            None
        }
    });
    if let Some(h) = hit {
        return h;
    }
    let out = if !is_word(raw) {
        Known::NotWord
    } else if (opts.lang != Lang::Simple && is_stop_word(word))
        || word.chars().count() < opts.min_word_length
    {
        Known::Dropped
    } else {
        let stem = match stemmer_for(opts.lang, word) {
            Some(s) => s.stem(word),
            None => std::borrow::Cow::Borrowed(word),
        };
        // Snowball never empties a non-empty word, but a term must not be empty.
        let term: &str = if stem.is_empty() { word } else { &stem };
        // A stored term is at most MAX_TERM_BYTES long (the binary form's bound):
        // a longer one (a URL without separators, a base64 run) is dropped.
        if term.len() > MAX_TERM_BYTES {
            Known::Dropped
        } else {
            Known::Kept(term.into())
        }
    };
    KNOWN.with(|k| {
        let mut k = k.borrow_mut();
        if k.0.as_ref() != Some(opts) || k.1.len() >= MAX_KNOWN {
            k.1.clear();
            k.0 = Some(*opts);
        }
        k.1.insert(Term::from(word), out.clone());
    });
    out
}

/// What a raw token turned out to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// No letters: not a word (numbers, stray marks).
    NotWord,
    /// A word removed as a stop word, as too short, or as too long a stem.
    Dropped,
    /// A kept word: the id of its stem in [`Stems::stems`].
    Kept(u32),
}

/// A classified token: its outcome and the id of its normalised spelling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Token {
    pub(crate) outcome: Outcome,
    norm: u32,
}

/// Per-call stemming state. Tokens are cached by their raw spelling, borrowed from
/// the analysed text, so a repeated word costs one hash lookup and no allocation;
/// a word new to the call is looked up in the thread's memo ([`known`]) before it
/// is stemmed. Stems are inline strings (`CompactString`: no allocation and no
/// pointer to chase for a stem of up to 24 bytes), and the normalised
/// spellings live in one buffer, so a distinct word costs no allocation of its own
/// once the memo knows it.
/// The cache also keeps each spelling's normalised form, so `analyze` hashes the
/// fingerprint without normalising every word again.
///
/// Measured in CPU time on 1 MB of mixed Russian/English news prose (18.5k
/// distinct stems): splitting and stemming every token without the cache runs at
/// ~8 MB/s, while all of `analyze` with it runs at ~17 MB/s, snowball taking ~7%.
/// `cargo test --release --lib coldbench -- --ignored --nocapture` prints the
/// current figure on synthetic text.
pub(crate) struct Stems<'t> {
    opts: AnalyzeOptions,
    /// The analysed text's majority script, which look-alike words are read in.
    majority: Majority,
    cache: FastMap<&'t str, Token>,
    ids: FastMap<Term, u32>,
    /// Distinct stems, indexed by id (ids are given in order of first appearance).
    pub(crate) stems: Vec<Term>,
    /// Normalised spellings, concatenated; `norm_ends[i]` ends the i-th.
    norm_buf: String,
    norm_ends: Vec<u32>,
}

impl<'t> Stems<'t> {
    pub(crate) fn new(opts: &AnalyzeOptions, majority: Majority) -> Self {
        Self::for_text(opts, 0, majority)
    }

    /// Sized for a text of `bytes` bytes (about one distinct token per 12 bytes of
    /// news prose), so that the maps are not grown and rehashed token by token.
    pub(crate) fn for_text(opts: &AnalyzeOptions, bytes: usize, majority: Majority) -> Self {
        let n = (bytes / 12).min(1 << 16);
        Stems {
            opts: *opts,
            majority,
            cache: FastMap::with_capacity_and_hasher(n, Default::default()),
            ids: FastMap::with_capacity_and_hasher(n, Default::default()),
            stems: Vec::with_capacity(n),
            norm_buf: String::with_capacity(bytes.min(1 << 20)),
            norm_ends: Vec::with_capacity(n),
        }
    }

    /// Classifies one token from the word splitter.
    pub(crate) fn token(&mut self, raw: &'t str) -> Token {
        if let Some(t) = self.cache.get(raw) {
            return *t;
        }
        let t = self.compute(raw);
        self.cache.insert(raw, t);
        t
    }

    /// The normalised spelling of a token (lower case, `ё`→`е`).
    pub(crate) fn norm(&self, t: Token) -> &str {
        let i = t.norm as usize;
        let end = self.norm_ends.get(i).map_or(0, |&e| e as usize);
        let start = match i.checked_sub(1) {
            Some(p) => self.norm_ends.get(p).map_or(0, |&e| e as usize),
            None => 0,
        };
        self.norm_buf.get(start..end).unwrap_or("")
    }

    /// The stem with id `id`.
    pub(crate) fn stem(&self, id: u32) -> &str {
        self.stems.get(id as usize).map_or("", |s| s)
    }

    fn compute(&mut self, raw: &str) -> Token {
        let start = self.norm_buf.len();
        push_normalized(raw, self.majority, &mut self.norm_buf);
        let outcome = match known(&self.opts, raw, self.norm_buf.get(start..).unwrap_or("")) {
            Known::NotWord => Outcome::NotWord,
            Known::Dropped => Outcome::Dropped,
            Known::Kept(stem) => Outcome::Kept(self.intern(stem)),
        };
        let norm = u32::try_from(self.norm_ends.len()).unwrap_or(u32::MAX);
        // Texts are bounded by dedup.max_document_bytes (< 4 GB).
        self.norm_ends
            .push(u32::try_from(self.norm_buf.len()).unwrap_or(u32::MAX));
        Token { outcome, norm }
    }

    fn intern(&mut self, stem: Term) -> u32 {
        if let Some(id) = self.ids.get(&stem) {
            return *id;
        }
        // More than u32::MAX distinct stems would need > 4 GB of text; the caller's
        // size limits keep us far below, so saturating is only a no-panic guard.
        let id = u32::try_from(self.stems.len()).unwrap_or(u32::MAX);
        self.ids.insert(stem.clone(), id);
        self.stems.push(stem);
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(s: &str) -> String {
        let mut o = String::new();
        normalize_into(s, Majority::Neither, &mut o);
        o
    }

    #[test]
    fn normalisation() {
        assert_eq!(norm("ЁЛКА"), "елка");
        assert_eq!(norm("Ёжик"), "ежик");
        assert_eq!(norm("HeLLo"), "hello");
        assert_eq!(norm("don\u{2019}t"), "don't");
        assert_eq!(norm("при\u{AD}мер"), "пример");
    }

    #[test]
    fn scripts() {
        assert_eq!(script("книга"), Script::Cyrillic);
        assert_eq!(script("covid19"), Script::Latin);
        assert_eq!(script("café"), Script::Latin);
        assert_eq!(script("mоscow"), Script::Other); // Cyrillic 'о' inside
        assert_eq!(script("λόγος"), Script::Other);
        assert_eq!(script("東京"), Script::Other);
    }

    #[test]
    fn stemmers_survive_any_script() {
        // Lang::Russian/English stem every word, whatever its script.
        let samples = [
            "東京",
            "λόγος",
            "mоscow",
            "'",
            "''''",
            "ß",
            "ǅ",
            "ﬁ",
            "a'",
            "'s",
            "ёёё",
            "ъ",
            "\u{301}",
        ];
        for s in samples {
            let _ = russian().stem(s);
            let _ = english().stem(s);
        }
    }

    #[test]
    fn memo_follows_the_options() {
        let auto = AnalyzeOptions {
            lang: Lang::Auto,
            min_word_length: 3,
        };
        let simple = AnalyzeOptions {
            lang: Lang::Simple,
            min_word_length: 3,
        };
        let long = AnalyzeOptions {
            lang: Lang::Auto,
            min_word_length: 8,
        };
        for _ in 0..2 {
            let mut a = Stems::new(&auto, Majority::Neither);
            assert!(matches!(a.token("Книгами").outcome, Outcome::Kept(_)));
            assert_eq!(a.stems, vec![Term::from("книг")]);
            let mut s = Stems::new(&simple, Majority::Neither);
            s.token("Книгами");
            assert_eq!(s.stems, vec![Term::from("книгами")]);
            let mut l = Stems::new(&long, Majority::Neither);
            assert_eq!(l.token("Книгами").outcome, Outcome::Dropped);
            assert_eq!(l.token("2024").outcome, Outcome::NotWord);
        }
    }

    #[test]
    fn cache_is_consistent() {
        let opts = AnalyzeOptions {
            lang: Lang::Auto,
            min_word_length: 3,
        };
        let mut st = Stems::new(&opts, Majority::Neither);
        let a = st.token("Книги");
        let b = st.token("книгами");
        assert_eq!(a.outcome, b.outcome);
        assert_eq!(st.token("Книги"), a);
        assert_eq!(st.norm(a), "книги");
        assert_eq!(st.token("и").outcome, Outcome::Dropped);
        assert_eq!(st.token("2024").outcome, Outcome::NotWord);
        assert_eq!(st.token("ab").outcome, Outcome::Dropped);
        assert_eq!(st.stems, vec![Term::from("книг")]);
    }
}
