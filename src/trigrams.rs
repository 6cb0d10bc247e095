//! Character trigrams of a document's first distinct words: what pg_trgm's
//! `similarity()` reads, kept compactly in the document so that two stored
//! documents can be compared on it without their text.
//!
//! Pure Rust, no pgrx. The stems miss what one-line paraphrases share most: stop
//! words, words shorter than the minimum length, inflections the stemmer splits,
//! names in two spellings. Character trigrams of the surface words see all of it.
//!
//! **What is read.** The first [`MAX_WORDS`] distinct words of the body's visible
//! text (the tokens the fingerprint reads: lower-cased, `ё` as `е`, numbers
//! included), each cut to its first [`MAX_WORD_CHARS`] characters. As in pg_trgm, a
//! word is padded with two spaces in front and one behind ("  кот ") and gives the
//! trigrams of that string ("  к", " ко", "кот", "от "). A one-line text (a
//! headline, a sentence) is read whole; of a news post, its lead. So a document
//! holds at most [`MAX_WORDS`] words of at most `MAX_WORD_CHARS + 1` keys each,
//! whatever its length.
//!
//! **Keys.** A trigram's three characters hashed to 16 bits ([`key`]). Each word
//! keeps its keys sorted and distinct ([`Trigrams`]); the document's set is their
//! union. Two sets of 200 keys (a 32-word lead) share about 0.6 keys by collision;
//! two headlines of 60, 0.05. Stored as varint gaps (`crate::document`): about 2
//! bytes a key.
//!
//! **Features** (`crate::features`), for the sets `A` and `B` and the word
//! sequences `a`, `b`:
//! - `trigrams = 1 − |A ∩ B| / |A ∪ B|`: 1 − pg_trgm's similarity, symmetric;
//! - `word_order = 1 − LCS(a, b) / max(|a|, |b|)`, the longest common subsequence
//!   of the two sequences of distinct words (two words equal when their keys are):
//!   phrasing and word order, stop words included, symmetric.
//!
//! Both read no weights: the pruning bounds have them exactly. Cost: one pass over
//! the first words at analysis; a merge of two sorted lists and a `MAX_WORDS`²
//! table of word comparisons a pair.
//!
//! Measured and left out (`bench/short_texts.sh`, see docs/quality.md): the share of
//! a's trigrams that b lacks (both directions), and a soft match of each word to
//! its nearest word of the other side by trigram Jaccard; neither moved the
//! cross-validated ROC-AUC on ParaPhraser or MSRP by more than 0.001 over `trigrams`.

/// Distinct words of the body read, from the first.
pub const MAX_WORDS: usize = 32;

/// Characters of a word read, from the first.
pub const MAX_WORD_CHARS: usize = 32;

/// The most keys one word gives.
pub const MAX_WORD_KEYS: usize = MAX_WORD_CHARS + 1;

/// The most keys a document holds. Decoding refuses more.
pub const MAX_TRIGRAMS: usize = MAX_WORDS * MAX_WORD_KEYS;

/// The padding character, as pg_trgm pads.
const PAD: char = ' ';

/// A trigram's 16-bit key: its three code points (21 bits each) packed and mixed
/// by a multiplicative hash, top 16 bits. Fixed across platforms and builds, since
/// stored documents hold it.
pub fn key(c: [char; 3]) -> u16 {
    let packed = (u64::from(c[0]) << 42) | (u64::from(c[1]) << 21) | u64::from(c[2]);
    let mixed = (packed ^ (packed >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (mixed >> 48) as u16
}

/// The trigram keys of a document's first distinct words, word by word.
///
/// Invariants (checked where documents are read): at most [`MAX_WORDS`] words;
/// each word's keys are 1 to [`MAX_WORD_KEYS`], sorted, distinct; `lens` sums to
/// `keys.len()`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trigrams {
    /// Each word's keys, word after word.
    pub keys: Vec<u16>,
    /// How many keys each word has, in text order.
    pub lens: Vec<u8>,
}

impl Trigrams {
    /// Each word's keys, in text order.
    pub fn words(&self) -> impl Iterator<Item = &[u16]> {
        let mut at = 0usize;
        self.lens.iter().map(move |&n| {
            let end = (at + n as usize).min(self.keys.len());
            let w = &self.keys[at.min(end)..end];
            at = end;
            w
        })
    }

    /// The document's set: every word's keys, sorted, distinct.
    pub fn set(&self) -> Vec<u16> {
        let mut v = self.keys.clone();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Approximate heap bytes.
    pub fn heap_bytes(&self) -> usize {
        2 * self.keys.len() + self.lens.len()
    }

    /// Whether the invariants hold (see [`Trigrams`]).
    pub fn is_valid(&self) -> bool {
        self.lens.len() <= MAX_WORDS
            && self.lens.iter().map(|&n| n as usize).sum::<usize>() == self.keys.len()
            && self
                .lens
                .iter()
                .all(|&n| (1..=MAX_WORD_KEYS).contains(&(n as usize)))
            && self.words().all(|w| w.windows(2).all(|p| p[0] < p[1]))
    }
}

/// Collects the trigram keys of words given one at a time.
#[derive(Debug, Default)]
pub struct Collector {
    out: Trigrams,
    /// xxh3 of the words read so far (at most [`MAX_WORDS`], each cut to
    /// [`MAX_WORD_CHARS`] characters), to skip repeats without keeping them.
    seen: Vec<u64>,
}

impl Collector {
    pub fn new() -> Collector {
        Collector {
            out: Trigrams {
                keys: Vec::with_capacity(8 * MAX_WORDS),
                lens: Vec::with_capacity(MAX_WORDS),
            },
            seen: Vec::with_capacity(MAX_WORDS),
        }
    }

    /// Whether more words would be read.
    pub fn wants_more(&self) -> bool {
        self.out.lens.len() < MAX_WORDS
    }

    /// Adds a normalised word (lower case); ignored when empty, when it repeats a
    /// word read before, and past [`MAX_WORDS`] distinct words. Reads at most
    /// [`MAX_WORD_CHARS`] characters of it.
    pub fn word(&mut self, w: &str) {
        if w.is_empty() || !self.wants_more() {
            return;
        }
        let cut = match w.char_indices().nth(MAX_WORD_CHARS) {
            Some((i, _)) => &w[..i],
            None => w,
        };
        let h = xxhash_rust::xxh3::xxh3_64(cut.as_bytes());
        if self.seen.contains(&h) {
            return;
        }
        self.seen.push(h);
        let start = self.out.keys.len();
        let mut win = [PAD, PAD, PAD];
        for c in cut.chars() {
            win = [win[1], win[2], c];
            self.out.keys.push(key(win));
        }
        // The closing trigram: the last two characters and the pad.
        self.out.keys.push(key([win[1], win[2], PAD]));
        let word = &mut self.out.keys[start..];
        word.sort_unstable();
        let mut n = 0;
        for i in 0..word.len() {
            if i == 0 || word[i] != word[n - 1] {
                word[n] = word[i];
                n += 1;
            }
        }
        self.out.keys.truncate(start + n);
        self.out.lens.push(n as u8);
    }

    pub fn finish(self) -> Trigrams {
        self.out
    }
}

/// The trigrams of a sequence of normalised words (see [`Collector`]).
pub fn of_words<'a>(words: impl IntoIterator<Item = &'a str>) -> Trigrams {
    let mut c = Collector::new();
    for w in words {
        if !c.wants_more() {
            break;
        }
        c.word(w);
    }
    c.finish()
}

/// `|a ∩ b|` of two sorted, distinct key lists.
pub fn shared(a: &[u16], b: &[u16]) -> usize {
    crate::sorted::intersection_count(a, b)
}

/// One side as the features read it: its words and their union.
#[derive(Debug, Clone, Copy)]
pub struct Side<'a> {
    pub words: &'a Trigrams,
    /// `words.set()`.
    pub set: &'a [u16],
}

/// The trigram features of a pair (both symmetric).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Features {
    /// `trigrams`.
    pub distance: f64,
    /// `word_order`.
    pub order: f64,
}

/// Whether the trigram features of a pair are known: both sides recorded their
/// trigrams, and one of them has some.
pub fn known(a: Option<&Trigrams>, b: Option<&Trigrams>) -> bool {
    matches!((a, b), (Some(a), Some(b)) if !(a.keys.is_empty() && b.keys.is_empty()))
}

/// The features of a pair (see the module documentation), or None when the pair
/// says nothing: a side without recorded trigrams (a document stored before they
/// were), or neither side with any.
pub fn features(a: Option<Side>, b: Option<Side>) -> Option<Features> {
    let (a, b) = (a?, b?);
    if !known(Some(a.words), Some(b.words)) {
        return None;
    }
    let common = shared(a.set, b.set) as f64;
    let union = (a.set.len() + b.set.len()) as f64 - common;
    Some(Features {
        distance: if union > 0.0 {
            1.0 - common / union
        } else {
            0.0
        },
        order: order(a.words, b.words),
    })
}

/// A word's identity: a hash of its keys.
fn word_id(w: &[u16]) -> u64 {
    w.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &k| {
        (h ^ u64::from(k)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// `word_order`: `1 −` the longest common subsequence of the two word sequences
/// (words equal when their keys are) over the longer sequence; 0 when both are
/// empty.
fn order(a: &Trigrams, b: &Trigrams) -> f64 {
    let ia: Vec<u64> = a.words().map(word_id).collect();
    let ib: Vec<u64> = b.words().map(word_id).collect();
    let longer = ia.len().max(ib.len());
    if longer == 0 {
        return 0.0;
    }
    let mut prev = [0u8; MAX_WORDS + 1];
    let mut cur = [0u8; MAX_WORDS + 1];
    for x in ia.iter().take(MAX_WORDS) {
        for (j, y) in ib.iter().enumerate().take(MAX_WORDS) {
            cur[j + 1] = if x == y {
                prev[j] + 1
            } else {
                prev[j + 1].max(cur[j])
            };
        }
        prev = cur;
    }
    let lcs = prev[ib.len().min(MAX_WORDS)] as f64;
    1.0 - lcs / longer as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// pg_trgm's trigrams of a word.
    fn strings(w: &str) -> Vec<[char; 3]> {
        let padded: Vec<char> = "  "
            .chars()
            .chain(w.chars())
            .chain(std::iter::once(' '))
            .collect();
        padded.windows(3).map(|x| [x[0], x[1], x[2]]).collect()
    }

    fn feats(a: &Trigrams, b: &Trigrams) -> Option<Features> {
        let (sa, sb) = (a.set(), b.set());
        features(
            Some(Side { words: a, set: &sa }),
            Some(Side { words: b, set: &sb }),
        )
    }

    #[test]
    fn a_word_gives_pg_trgms_trigrams() {
        for w in ["кот", "a", "ab", "hello", "ёлка2024", "aaaa"] {
            let mut want: Vec<u16> = strings(w).into_iter().map(key).collect();
            want.sort_unstable();
            want.dedup();
            let t = of_words([w]);
            assert_eq!(t.keys, want, "{w}");
            assert_eq!(t.lens, [want.len() as u8]);
            assert!(t.is_valid());
        }
        assert_eq!(strings("hello").len(), 6);
    }

    #[test]
    fn similarity_as_pg_trgm_computes_it() {
        // pg_trgm: similarity('word', 'words') = 4 / 7 ("  w", " wo", "wor", "ord"
        // shared, 7 distinct in all).
        let a = of_words(["word"]);
        let b = of_words(["words"]);
        assert_eq!((a.keys.len(), b.keys.len()), (5, 6));
        let f = feats(&a, &b).unwrap();
        assert!((f.distance - (1.0 - 4.0 / 7.0)).abs() < 1e-12, "{f:?}");
        // Two different words: no common subsequence.
        assert_eq!(f.order, 1.0);
        let same = feats(&a, &a).unwrap();
        assert_eq!(
            same,
            Features {
                distance: 0.0,
                order: 0.0,
            }
        );
    }

    #[test]
    fn word_order_is_the_longest_common_subsequence() {
        let a = of_words(["the", "cat", "sat", "on", "mat"]);
        let b = of_words(["on", "the", "mat", "sat", "cat", "a"]);
        // "the", "mat" (or "the", "sat"...): 2 of the longer 6.
        let f = feats(&a, &b).unwrap();
        assert!((f.order - (1.0 - 2.0 / 6.0)).abs() < 1e-12, "{f:?}");
        assert_eq!(feats(&a, &a).unwrap().order, 0.0);
    }

    #[test]
    fn unknown_and_empty_sides() {
        let a = of_words(["кот"]);
        let sa = a.set();
        let side = Side {
            words: &a,
            set: &sa,
        };
        assert_eq!(features(None, Some(side)), None);
        assert_eq!(features(Some(side), None), None);
        let e = Trigrams::default();
        assert_eq!(feats(&e, &e), None);
        let f = feats(&e, &a).unwrap();
        assert_eq!((f.distance, f.order), (1.0, 1.0));
    }

    #[test]
    fn reads_a_bounded_opening_of_distinct_words() {
        let long = "x".repeat(10_000);
        let t = of_words(std::iter::repeat_n(long.as_str(), 1000));
        assert_eq!(t.lens.len(), 1, "a repeated word is read once");
        assert!(t.keys.len() <= MAX_WORD_KEYS);
        // Distinct words past MAX_WORDS are not read; repeats do not count.
        let many: Vec<String> = (0..1000).map(|i| format!("w{}", i / 2)).collect();
        let k1 = of_words(many.iter().map(String::as_str));
        let distinct: Vec<String> = (0..MAX_WORDS).map(|i| format!("w{i}")).collect();
        let k2 = of_words(distinct.iter().map(String::as_str));
        assert_eq!(k1, k2);
        assert_eq!(k1.lens.len(), MAX_WORDS);
        assert!(k1.keys.len() <= MAX_TRIGRAMS && k1.is_valid());
    }

    #[test]
    fn keys_are_fixed() {
        // Stored documents hold these: a change would silently compare old keys
        // with new ones.
        assert_eq!(key([' ', ' ', 'a']), 65010);
        assert_eq!(key(['a', 'b', 'c']), 55236);
        assert_eq!(of_words(["кот"]).keys, [7145, 49510, 54742, 61294]);
    }

    #[test]
    fn validity() {
        let ok = of_words(["кот", "пёс"]);
        assert!(ok.is_valid());
        let mut t = ok.clone();
        t.lens[0] += 1;
        assert!(!t.is_valid());
        let mut t = ok.clone();
        t.keys.swap(0, 1);
        assert!(!t.is_valid());
        let t = Trigrams {
            keys: vec![],
            lens: vec![0],
        };
        assert!(!t.is_valid());
    }
}
