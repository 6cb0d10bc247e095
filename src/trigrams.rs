//! Character trigrams of a document's opening words: what pg_trgm's `similarity()`
//! reads, kept compactly in the document so that two stored documents can be
//! compared on it without their text.
//!
//! Pure Rust, no pgrx. The stems miss what one-line paraphrases share most: stop
//! words, words shorter than the minimum length, inflections the stemmer splits,
//! names in two spellings. Character trigrams of the surface words see all of it.
//!
//! **What is read.** The first [`MAX_WORDS`] words of the body's visible text (the
//! tokens the fingerprint reads: lower-cased, `ё` as `е`, numbers included), each cut
//! to its first [`MAX_WORD_CHARS`] characters. As in pg_trgm, a word is padded with
//! two spaces in front and one behind ("  кот ") and gives the trigrams of that
//! string ("  к", " ко", "кот", "от "). A one-line text (a headline, a sentence) is
//! read whole; of a news post, its lead. So a document holds at most
//! `MAX_WORDS × (MAX_WORD_CHARS + 1)` = [`MAX_TRIGRAMS`] keys, whatever its length.
//!
//! **Keys.** A trigram's three characters hashed to 16 bits ([`key`]), kept as a
//! sorted set. Two sets of 200 keys (a 32-word lead) share about 0.6 keys by
//! collision; two headlines of 60, 0.05. Stored as a count and varint gaps
//! (`crate::document`): about 2 bytes a key.
//!
//! **Features** (`crate::features`), for sets `A` and `B`:
//! - `trigrams = 1 − |A ∩ B| / |A ∪ B|`: 1 − pg_trgm's similarity, symmetric;
//! - `trigrams_missing(a, b) = 1 − |A ∩ B| / |A|`: the share of a's trigrams that b
//!   lacks (0 when a has none), so that a short text inside a longer one is told
//!   from the longer one inside the short.
//!
//! Both read no weights: the pruning bounds have them exactly. Cost: one pass over
//! at most [`MAX_WORDS`] words at analysis, one merge of two sorted lists a pair.

/// Words of the body read, from the first.
pub const MAX_WORDS: usize = 32;

/// Characters of a word read, from the first.
pub const MAX_WORD_CHARS: usize = 32;

/// The most keys a document holds: every word gives at most `MAX_WORD_CHARS + 1`
/// trigrams. Decoding refuses more.
pub const MAX_TRIGRAMS: usize = MAX_WORDS * (MAX_WORD_CHARS + 1);

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

/// Collects the trigram keys of words given one at a time.
#[derive(Debug, Default)]
pub struct Collector {
    keys: Vec<u16>,
    words: usize,
}

impl Collector {
    pub fn new() -> Collector {
        Collector {
            keys: Vec::with_capacity(8 * MAX_WORDS),
            words: 0,
        }
    }

    /// Whether more words would be read.
    pub fn wants_more(&self) -> bool {
        self.words < MAX_WORDS
    }

    /// Adds a normalised word (lower case); ignored past [`MAX_WORDS`] words and
    /// when empty. Reads at most [`MAX_WORD_CHARS`] characters of it.
    pub fn word(&mut self, w: &str) {
        if w.is_empty() || !self.wants_more() {
            return;
        }
        self.words += 1;
        let mut win = [PAD, PAD, PAD];
        for c in w.chars().take(MAX_WORD_CHARS) {
            win = [win[1], win[2], c];
            self.keys.push(key(win));
        }
        // The closing trigram: the last two characters and the pad.
        self.keys.push(key([win[1], win[2], PAD]));
    }

    /// The sorted, distinct keys.
    pub fn finish(mut self) -> Vec<u16> {
        self.keys.sort_unstable();
        self.keys.dedup();
        self.keys
    }
}

/// The trigram keys of a sequence of normalised words (see [`Collector`]).
pub fn of_words<'a>(words: impl IntoIterator<Item = &'a str>) -> Vec<u16> {
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
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n
}

/// Whether the trigram features of a pair are known: both sides recorded their
/// trigrams, and one of them has some.
pub fn known(a: Option<&[u16]>, b: Option<&[u16]>) -> bool {
    matches!((a, b), (Some(a), Some(b)) if !(a.is_empty() && b.is_empty()))
}

/// `(trigrams, trigrams_missing(a, b), trigrams_missing(b, a))` of two documents'
/// keys, or None when the pair says nothing: a side without recorded trigrams (a
/// document stored before they were), or neither side with any.
pub fn features(a: Option<&[u16]>, b: Option<&[u16]>) -> Option<(f64, f64, f64)> {
    if !known(a, b) {
        return None;
    }
    let (a, b) = (a?, b?);
    let common = shared(a, b) as f64;
    let union = (a.len() + b.len()) as f64 - common;
    let missing = |n: usize| {
        if n == 0 {
            0.0
        } else {
            1.0 - common / n as f64
        }
    };
    Some((1.0 - common / union, missing(a.len()), missing(b.len())))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// pg_trgm's trigrams of a word, as strings.
    fn strings(w: &str) -> Vec<[char; 3]> {
        let padded: Vec<char> = "  "
            .chars()
            .chain(w.chars())
            .chain(std::iter::once(' '))
            .collect();
        padded.windows(3).map(|x| [x[0], x[1], x[2]]).collect()
    }

    #[test]
    fn a_word_gives_pg_trgms_trigrams() {
        for w in ["кот", "a", "ab", "hello", "ёлка2024"] {
            let mut want: Vec<u16> = strings(w).into_iter().map(key).collect();
            want.sort_unstable();
            want.dedup();
            assert_eq!(of_words([w]), want, "{w}");
            assert_eq!(strings(w).len(), w.chars().count() + 2 - 1);
        }
    }

    #[test]
    fn similarity_as_pg_trgm_computes_it() {
        // pg_trgm: similarity('word', 'words') = 4 / 7 ("  w", " wo", "wor", "ord"
        // shared, 7 distinct in all).
        let a = of_words(["word"]);
        let b = of_words(["words"]);
        assert_eq!((a.len(), b.len()), (5, 6));
        let (d, mab, mba) = features(Some(&a), Some(&b)).unwrap();
        assert!((d - (1.0 - 4.0 / 7.0)).abs() < 1e-12, "{d}");
        assert!((mab - (1.0 - 4.0 / 5.0)).abs() < 1e-12);
        assert!((mba - (1.0 - 4.0 / 6.0)).abs() < 1e-12);
        let same = features(Some(&a), Some(&a)).unwrap();
        assert_eq!(same, (0.0, 0.0, 0.0));
    }

    #[test]
    fn unknown_and_empty_sides() {
        let a = of_words(["кот"]);
        assert_eq!(features(None, Some(&a)), None);
        assert_eq!(features(Some(&a), None), None);
        assert_eq!(features(Some(&[]), Some(&[])), None);
        assert_eq!(features(Some(&[]), Some(&a)), Some((1.0, 0.0, 1.0)));
    }

    #[test]
    fn reads_a_bounded_opening() {
        let long = "x".repeat(10_000);
        let words: Vec<&str> = std::iter::repeat(long.as_str()).take(1000).collect();
        let k = of_words(words.iter().copied());
        assert!(k.len() <= MAX_WORD_CHARS + 1);
        // Distinct words past MAX_WORDS are not read.
        let many: Vec<String> = (0..1000).map(|i| format!("w{i}")).collect();
        let k1 = of_words(many.iter().map(String::as_str));
        let k2 = of_words(many[..MAX_WORDS].iter().map(String::as_str));
        assert_eq!(k1, k2);
        let mut c = Collector::new();
        for w in &many {
            c.word(w);
        }
        assert!(c.finish().len() <= MAX_TRIGRAMS);
    }

    #[test]
    fn keys_are_fixed() {
        // Stored documents hold these: a change would silently compare old keys
        // with new ones.
        assert_eq!(key([' ', ' ', 'a']), 65010);
        assert_eq!(key(['a', 'b', 'c']), 55236);
        assert_eq!(of_words(["кот"]), [7145, 49510, 54742, 61294]);
    }
}
