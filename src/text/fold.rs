//! Folds that make one visible text one spelling, whatever bytes wrote it.
//!
//! Over the whole visible text ([`visible`]):
//! - **invisible characters** (Unicode's default-ignorable code points: soft
//!   hyphens, zero-width spaces and joiners, direction marks, variation selectors,
//!   fillers, tags) are removed: word segmentation keeps them inside a word or
//!   breaks at them, so "Ку\u{200E}рс" would be another word than "Курс";
//! - **compatibility letters** — full-width `ＡＢＣ１２３`, the mathematical
//!   alphanumerics of Telegram's "fancy text" generators (`𝐁𝐨𝐥𝐝`), the Latin
//!   ligatures (`ﬁ`) — become the letters and digits they show (their NFKC form;
//!   not NFKC as a whole, which would also read `м²` as `м2` and `№` as `No`);
//! - the text is put in **NFC**: a decomposed `й` (`и` + U+0306, as PDF
//!   extraction and macOS write it) is `й`;
//! - **stress marks** (U+0300, U+0301) after a Cyrillic letter are removed
//!   (`сто́ит` is `стоит`).
//!
//! Over each lower-cased word ([`homoglyphs`]): **look-alike letters of the other
//! script**. A Cyrillic word typed with Latin `o`, `p`, `e`, `c` … (`Дeнь`,
//! `Пpaздник`, by accident or to slip past a duplicate filter) is written in
//! Cyrillic, and a Latin word with a Cyrillic `с` (`Wildberriеs`) in Latin.
//!
//! Text that needs none of this (nearly all text) is scanned once, character by
//! character, and borrowed as it is.

use std::borrow::Cow;

use unicode_normalization::char::canonical_combining_class;
use unicode_normalization::{is_nfc_quick, IsNormalized, UnicodeNormalization};

/// Unicode's Default_Ignorable_Code_Point (Unicode 15), less U+034F's neighbours
/// that are not in it: what shows nothing and is not a space.
fn ignorable(c: char) -> bool {
    matches!(
        c,
        '\u{AD}'
            | '\u{34F}'
            | '\u{61C}'
            | '\u{115F}'..='\u{1160}'
            | '\u{17B4}'..='\u{17B5}'
            | '\u{180B}'..='\u{180F}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}'
            | '\u{3164}'
            | '\u{FE00}'..='\u{FE0F}'
            | '\u{FEFF}'
            | '\u{FFA0}'
            | '\u{FFF0}'..='\u{FFF8}'
            | '\u{1BCA0}'..='\u{1BCA3}'
            | '\u{1D173}'..='\u{1D17A}'
            | '\u{E0000}'..='\u{E0FFF}'
    )
}

/// Letters and digits shown as other letters and digits: full-width ASCII, the
/// mathematical alphanumerics, the Latin ligatures.
fn compatibility_letter(c: char) -> bool {
    matches!(c, '\u{FF01}'..='\u{FF5E}' | '\u{1D400}'..='\u{1D7FF}' | '\u{FB00}'..='\u{FB06}')
}

/// Characters no fold of [`visible`] touches and that need no NFC table lookup
/// (each is NFC, and none composes with what comes before it):
/// ASCII, Latin-1 and the Latin extensions (no combining marks below U+0300),
/// and Cyrillic.
fn settled(c: char) -> bool {
    (c < '\u{300}' && c != '\u{AD}') || matches!(c, '\u{400}'..='\u{4FF}')
}

fn is_cyrillic(c: char) -> bool {
    matches!(c, '\u{400}'..='\u{52F}')
}

/// `text` with the folds above applied, borrowed when none changes anything.
/// Calls `progress` about once per [`super::MARKUP_BYTES_PER_CHECK`] bytes of each
/// pass and stops early (with some text) when it returns false: the caller, who
/// made `progress` fail, discards the result.
pub(crate) fn visible<'t>(text: &'t str, progress: &mut dyn FnMut() -> bool) -> Cow<'t, str> {
    let mut check = Checker::new(progress);
    let mut nfc = true;
    let mut touched = false;
    for (i, c) in text.char_indices() {
        if !check.at(i) {
            return Cow::Borrowed(text);
        }
        if settled(c) {
            continue;
        }
        if ignorable(c) || compatibility_letter(c) || matches!(c, '\u{300}' | '\u{301}') {
            touched = true;
            break;
        }
        // A combining mark may compose with the letter before it or need
        // reordering: NFC decides, as for a character NFC would change.
        if canonical_combining_class(c) != 0
            || is_nfc_quick(std::iter::once(c)) != IsNormalized::Yes
        {
            nfc = false;
        }
    }
    if !touched && nfc {
        return Cow::Borrowed(text);
    }
    // One pass, the input's characters streamed through NFC: the text is held
    // twice at most (input and output), never three times.
    let mut check = Checker::new(check.progress);
    let mut chars = text.chars();
    let mut expanded: Vec<char> = Vec::new();
    let kept = std::iter::from_fn(|| loop {
        if let Some(c) = expanded.pop() {
            return Some(c);
        }
        let c = chars.next()?;
        if ignorable(c) {
            continue;
        }
        if compatibility_letter(c) {
            expanded.extend(std::iter::once(c).nfkc());
            expanded.reverse();
            continue;
        }
        return Some(c);
    });
    let mut out = String::with_capacity(text.len());
    let mut after_cyrillic = false;
    for c in kept.nfc() {
        if !check.at(out.len()) {
            break;
        }
        if after_cyrillic && matches!(c, '\u{300}' | '\u{301}') {
            continue;
        }
        after_cyrillic = is_cyrillic(c);
        out.push(c);
    }
    Cow::Owned(out)
}

/// Calls a progress callback once per [`super::MARKUP_BYTES_PER_CHECK`] bytes of
/// a pass; remembers a stop.
struct Checker<'p> {
    progress: &'p mut dyn FnMut() -> bool,
    next: usize,
    ok: bool,
}

impl<'p> Checker<'p> {
    fn new(progress: &'p mut dyn FnMut() -> bool) -> Self {
        Checker {
            progress,
            next: super::MARKUP_BYTES_PER_CHECK,
            ok: true,
        }
    }

    /// False once the callback has said stop; `at` is the pass's byte offset.
    fn at(&mut self, at: usize) -> bool {
        if self.ok && at >= self.next {
            self.ok = (self.progress)();
            self.next = at + super::MARKUP_BYTES_PER_CHECK;
        }
        self.ok
    }
}

/// Lower-case Latin letters and the Cyrillic letters they look like (upper-case
/// look-alikes lower-cased: `B`/`В` → `b`/`в`, `H`/`Н` → `h`/`н`).
const PAIRS: [(char, char); 12] = [
    ('a', 'а'),
    ('b', 'в'),
    ('c', 'с'),
    ('e', 'е'),
    ('h', 'н'),
    ('k', 'к'),
    ('m', 'м'),
    ('o', 'о'),
    ('p', 'р'),
    ('t', 'т'),
    ('x', 'х'),
    ('y', 'у'),
];

fn to_cyrillic(c: char) -> Option<char> {
    PAIRS.iter().find(|p| p.0 == c).map(|p| p.1)
}

fn to_latin(c: char) -> Option<char> {
    PAIRS.iter().find(|p| p.1 == c).map(|p| p.0)
}

/// Rewrites the lower-cased word `w` in one script when it mixes Cyrillic and
/// Latin letters and the letters of one of them all look like letters of the
/// other: into Cyrillic when its Latin letters allow it and are not the
/// majority (or its Cyrillic ones do not allow the other way), else into Latin
/// when its Cyrillic letters allow it. A word whose letters of both scripts
/// include one without a look-alike (`яndex`, `макsим`) is left as it is.
/// Returns `None` when nothing changes.
pub(crate) fn homoglyphs(w: &str) -> Option<String> {
    if w.is_ascii() {
        return None;
    }
    let (mut lat, mut cyr, mut lat_ok, mut cyr_ok) = (0usize, 0usize, true, true);
    for c in w.chars() {
        if c.is_ascii_alphabetic() {
            lat += 1;
            lat_ok &= to_cyrillic(c).is_some();
        } else if is_cyrillic(c) {
            cyr += 1;
            cyr_ok &= to_latin(c).is_some();
        } else if c.is_alphabetic() && !c.is_ascii() && c < '\u{250}' {
            // Latin letters outside ASCII (é, ß): Latin without a look-alike.
            lat += 1;
            lat_ok = false;
        }
    }
    if lat == 0 || cyr == 0 {
        return None;
    }
    if lat_ok && (lat <= cyr || !cyr_ok) {
        Some(w.chars().map(|c| to_cyrillic(c).unwrap_or(c)).collect())
    } else if cyr_ok {
        Some(w.chars().map(|c| to_latin(c).unwrap_or(c)).collect())
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visible_folds() {
        let f = |t: &str| visible(t, &mut || true).into_owned();
        assert_eq!(f("мои\u{306} е\u{308}ж"), "мой ёж");
        assert_eq!(f("ＡＢＣ １２３"), "ABC 123");
        assert_eq!(f("𝐁𝐨𝐥𝐝 𝟏𝟎"), "Bold 10");
        assert_eq!(f("ﬁnal"), "final");
        assert_eq!(f("Ку\u{200E}рс\u{FE0F} ку\u{AD}рс\u{2063}"), "Курс курс");
        assert_eq!(f("сто\u{301}ит"), "стоит");
        // Not folded: what NFKC would also change but carries meaning.
        assert_eq!(f("10 м² № 5 ½"), "10 м² № 5 ½");
        // Latin accents compose and stay.
        assert_eq!(f("cafe\u{301}"), "café");
        for t in ["Курс доллара — 92 «рубля»…", "café №5 😀", "", "abc"]
        {
            assert!(matches!(visible(t, &mut || true), Cow::Borrowed(_)), "{t}");
        }
    }

    #[test]
    fn long_texts_check_progress_and_stop() {
        let per = super::super::MARKUP_BYTES_PER_CHECK;
        for unit in ["слово\u{200E} ", "слово\u{306} ", "слово "] {
            let text = unit.repeat(3 * per / unit.len());
            let mut calls = 0;
            let _ = visible(&text, &mut || {
                calls += 1;
                true
            });
            assert!(calls >= 2, "{unit:?}: {calls} checks");
            let mut calls = 0;
            let _ = visible(&text, &mut || {
                calls += 1;
                false
            });
            assert_eq!(calls, 1, "{unit:?}: stops at the first refusal");
        }
    }

    #[test]
    fn look_alikes_take_the_words_script() {
        let f = |w: &str| homoglyphs(w).unwrap_or_else(|| w.to_string());
        // Latin letters in Cyrillic words.
        assert_eq!(f("дeнь"), "день");
        assert_eq!(f("пpaздник"), "праздник");
        assert_eq!(f("cша"), "сша");
        assert_eq!(f("oт"), "от");
        assert_eq!(f("tб"), "тб");
        // Cyrillic letters in Latin words.
        assert_eq!(f("wildberriеs"), "wildberries");
        assert_eq!(f("сybertruck"), "cybertruck");
        assert_eq!(f("вмw"), "bmw");
        assert_eq!(f("codecheсker"), "codechecker");
        // The majority decides when both ways are possible.
        assert_eq!(f("сopy"), "copy");
        assert_eq!(f("kokос"), "kokoc");
        // No look-alike on either side: left alone.
        assert_eq!(homoglyphs("яndex"), None);
        assert_eq!(homoglyphs("макsим"), None);
        assert_eq!(homoglyphs("супремitизм"), None);
        assert_eq!(homoglyphs("cafés"), None);
        // One script: nothing to do.
        assert_eq!(homoglyphs("день"), None);
        assert_eq!(homoglyphs("copy"), None);
        assert_eq!(homoglyphs("ёж"), None);
    }
}
