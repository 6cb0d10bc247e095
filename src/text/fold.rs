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
//! - **combining marks that NFC leaves on a Latin or Cyrillic letter** are removed:
//!   stress marks (`сто́ит` is `стоит`), the strike-through and underline of
//!   "fancy text" (`s̶t̶r̶i̶k̶e̶`), stacked marks; and past 30 marks on one character
//!   (UAX #15's stream-safe limit) any further ones are dropped before NFC.
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
    matches!(
        c,
        '\u{FF01}'..='\u{FF5E}'
            | '\u{1D400}'..='\u{1D7FF}'
            | '\u{FB00}'..='\u{FB06}'
            // The letters fancy alphabets take from Letterlike Symbols (italic ℎ,
            // script ℯ ℴ, double-struck ℂ ℝ, fraktur ℭ ℜ), not ℹ (an emoji there).
            | '\u{2102}'
            | '\u{210A}'..='\u{210E}'
            | '\u{2110}'..='\u{2113}'
            | '\u{2115}'
            | '\u{2119}'..='\u{211D}'
            | '\u{2124}'
            | '\u{2128}'
            | '\u{212C}'..='\u{212D}'
            | '\u{212F}'..='\u{2131}'
            | '\u{2133}'..='\u{2134}'
            | '\u{2145}'..='\u{2149}'
    )
}

/// Combining marks kept on one base character before the rest are dropped: the
/// stream-safe limit of UAX #15, so NFC never holds more than a few characters
/// (a text of one letter and millions of marks would make it buffer them all).
const MAX_MARKS: usize = 30;

fn is_letter_base(c: char) -> bool {
    c.is_ascii_alphabetic() || ('\u{C0}'..'\u{250}').contains(&c) || is_cyrillic(c)
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

/// The script most of a text's letters are in: at least two thirds of its
/// Cyrillic and Latin letters that have no look-alike in the other script.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) enum Majority {
    Cyrillic,
    Latin,
    /// No letters, or neither script has two thirds of them.
    #[default]
    Neither,
}

/// Counts a text's Cyrillic and Latin letters that have no look-alike in the
/// other script (`д`, `и`, `я`; `d`, `n`, `s`): look-alikes slipped into a text
/// must not decide which script it is in.
#[derive(Default)]
struct Letters {
    cyrillic: usize,
    latin: usize,
}

impl Letters {
    fn add(&mut self, c: char) {
        if c.is_ascii_alphabetic() {
            if !matches!(
                c.to_ascii_lowercase(),
                'a' | 'b' | 'c' | 'e' | 'h' | 'k' | 'm' | 'o' | 'p' | 't' | 'x' | 'y'
            ) {
                self.latin += 1;
            }
        } else if is_cyrillic(c) {
            let lower = match c {
                'А'..='Я' => char::from_u32(c as u32 + 0x20).unwrap_or(c),
                _ => c,
            };
            if !matches!(
                lower,
                'а' | 'в' | 'с' | 'е' | 'н' | 'к' | 'м' | 'о' | 'р' | 'т' | 'х' | 'у'
            ) {
                self.cyrillic += 1;
            }
        }
    }

    fn majority(&self) -> Majority {
        if self.cyrillic > 0 && self.cyrillic >= 2 * self.latin {
            Majority::Cyrillic
        } else if self.latin > 0 && self.latin >= 2 * self.cyrillic {
            Majority::Latin
        } else {
            Majority::Neither
        }
    }
}

/// The majority script of a visible text's letters, leaving out links and
/// addresses (whitespace-separated runs holding `//`, `@` or opening with `www.`), whose
/// Latin letters say nothing of the language. Calls `progress` as [`visible`] does
/// (`Neither` after a stop).
pub(crate) fn majority(text: &str, progress: &mut dyn FnMut() -> bool) -> Majority {
    let mut check = Checker::new(progress);
    let mut total = Letters::default();
    // The current whitespace-separated run: its letters, whether it is a link.
    let mut run = Letters::default();
    let (mut link, mut prev, mut run_chars) = (false, ' ', 0usize);
    for (i, c) in text.char_indices() {
        if !check.at(i) {
            return Majority::Neither;
        }
        if c.is_whitespace() {
            if !link {
                total.cyrillic += run.cyrillic;
                total.latin += run.latin;
            }
            run = Letters::default();
            (link, prev, run_chars) = (false, c, 0);
            continue;
        }
        if c == '@'
            || (c == '/' && prev == '/')
            || (c == '.'
                && run_chars == 3
                && text
                    .get(i.saturating_sub(3)..i)
                    .is_some_and(|w| w.eq_ignore_ascii_case("www")))
        {
            link = true;
        }
        run.add(c);
        prev = c;
        run_chars += 1;
    }
    if !link {
        total.cyrillic += run.cyrillic;
        total.latin += run.latin;
    }
    total.majority()
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
        if ignorable(c) || compatibility_letter(c) || c == KEYCAP {
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
    // twice at most (input and output), never three times. The check runs on the
    // input, which a run of dropped characters consumes without output.
    let mut check = Checker::new(check.progress);
    let mut chars = text.chars();
    let mut expanded: Vec<char> = Vec::new();
    let (mut read, mut marks) = (0usize, 0usize);
    let kept = std::iter::from_fn(|| loop {
        if let Some(c) = expanded.pop() {
            return Some(c);
        }
        let c = chars.next()?;
        read += c.len_utf8();
        if !check.at(read) {
            return None;
        }
        if ignorable(c) {
            continue;
        }
        if canonical_combining_class(c) != 0 {
            marks += 1;
            if marks > MAX_MARKS {
                continue;
            }
        } else {
            marks = 0;
        }
        if compatibility_letter(c) {
            expanded.extend(std::iter::once(c).nfkc());
            expanded.reverse();
            continue;
        }
        return Some(c);
    });
    let mut out = String::with_capacity(text.len());
    // Marks NFC left on a Latin or Cyrillic letter (stress marks, strike-through
    // and underline of "fancy text", stacked marks) are not part of the word.
    let mut on_letter = false;
    for c in kept.nfc() {
        if canonical_combining_class(c) != 0 {
            if on_letter {
                continue;
            }
        } else {
            on_letter = is_letter_base(c);
        }
        // A keycap ("1️⃣Итоги") is a digit in a box, not part of the next word.
        out.push(if c == KEYCAP { ' ' } else { c });
    }
    Cow::Owned(out)
}

/// COMBINING ENCLOSING KEYCAP: word segmentation joins "1\u{20E3}Итоги" into one
/// word; it becomes a space.
const KEYCAP: char = '\u{20E3}';

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
    if c == 'ë' {
        // Latin-1's e with diaeresis in a Cyrillic word is its ё (folded to е).
        return Some('е');
    }
    PAIRS.iter().find(|p| p.0 == c).map(|p| p.1)
}

fn to_latin(c: char) -> Option<char> {
    PAIRS.iter().find(|p| p.1 == c).map(|p| p.0)
}

/// Latin letters that look like Cyrillic ones as they are written (`o`, `C`,
/// `H`; not `h`, which looks like no Cyrillic letter), and the other way round.
fn looks_cyrillic(c: char) -> bool {
    matches!(
        c,
        'a' | 'c'
            | 'e'
            | 'o'
            | 'p'
            | 'x'
            | 'y'
            | 'A'
            | 'B'
            | 'C'
            | 'E'
            | 'H'
            | 'K'
            | 'M'
            | 'O'
            | 'P'
            | 'T'
            | 'X'
            | 'Y'
    )
}

fn looks_latin(c: char) -> bool {
    matches!(
        c,
        'а' | 'с'
            | 'е'
            | 'о'
            | 'р'
            | 'х'
            | 'у'
            | 'А'
            | 'В'
            | 'С'
            | 'Е'
            | 'Н'
            | 'К'
            | 'М'
            | 'О'
            | 'Р'
            | 'Т'
            | 'Х'
            | 'У'
    )
}

/// Rewrites the lower-cased word `w` (written `raw` in the text) in one script:
///
/// - a word that mixes Cyrillic and Latin letters, when the letters of one script
///   all have a look-alike in the other: into the script whose letters do not all
///   have one, or, when both ways are possible, into the text's `majority` script
///   (else the word's own majority; Cyrillic on a tie). A word whose letters of
///   both scripts include one without a look-alike (`яndex`, `макsим`) is left as
///   it is;
/// - a word of one letter and no digit in the script that is not the text's
///   majority, which looks like a letter of the majority's script as written (a
///   Latin `a`, `c`, `o` or `y` in Russian text, a Cyrillic `а` in English text):
///   into the majority's script (`x86`, `A320`, `13900K` stay: codes). Longer words wholly in the other script are left as they
///   are: in Russian text they are nearly always real Latin words (`PHP`, `HTTP`,
///   `CEO`, `max`), which a fold would turn into Cyrillic nonsense.
///
/// Returns `None` when nothing changes.
pub(crate) fn homoglyphs(w: &str, raw: &str, majority: Majority) -> Option<String> {
    // Nearly every word is of one script and longer than a letter: told apart
    // without the look-alike tables.
    let (mut lat, mut cyr) = (0usize, 0usize);
    for c in w.chars() {
        if c.is_ascii_alphabetic() || ('\u{C0}'..'\u{250}').contains(&c) {
            lat += 1;
        } else if is_cyrillic(c) {
            cyr += 1;
        }
    }
    if (lat == 0 || cyr == 0) && lat + cyr != 1 {
        return None;
    }
    let (mut lat, mut cyr, mut lat_ok, mut cyr_ok) = (0usize, 0usize, true, true);
    for c in w.chars() {
        if c.is_ascii_alphabetic() || c == 'ë' {
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
    let into_cyrillic = match (lat, cyr) {
        (0, 0) => return None,
        (1, 0) => {
            if majority == Majority::Cyrillic
                && !raw.chars().any(|c| c.is_ascii_digit())
                && raw
                    .chars()
                    .filter(|c| c.is_alphabetic())
                    .all(looks_cyrillic)
            {
                true
            } else {
                return None;
            }
        }
        (0, 1) => {
            if majority == Majority::Latin
                && !raw.chars().any(|c| c.is_ascii_digit())
                && raw.chars().filter(|c| c.is_alphabetic()).all(looks_latin)
            {
                false
            } else {
                return None;
            }
        }
        (_, 0) | (0, _) => return None,
        _ => match (lat_ok, cyr_ok) {
            (true, false) => true,
            (false, true) => false,
            (false, false) => return None,
            (true, true) => match majority {
                Majority::Cyrillic => true,
                Majority::Latin => false,
                Majority::Neither => lat <= cyr,
            },
        },
    };
    if into_cyrillic {
        Some(w.chars().map(|c| to_cyrillic(c).unwrap_or(c)).collect())
    } else {
        Some(w.chars().map(|c| to_latin(c).unwrap_or(c)).collect())
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
        // Strike-through, underline and stacked marks of "fancy text".
        assert_eq!(f("s\u{336}t\u{336}o\u{336}p\u{336}"), "stop");
        assert_eq!(f("с\u{332}т\u{332}о\u{332}п\u{332}"), "стоп");
        assert_eq!(f("z\u{35B}\u{317}\u{300}a\u{489}"), "za\u{489}");
        // Fancy letters from Letterlike Symbols; ℹ stays (an emoji there).
        assert_eq!(
            f("\u{1D447}\u{210E}\u{1D452} ℯxchanℊℯ ℂ\u{1D559}\u{1D55A}\u{1D55F}\u{1D552} ℹ"),
            "The exchange China ℹ"
        );
        // Millions of marks on one letter: past 30 they are dropped before NFC,
        // which would otherwise hold them all.
        let zalgo = format!("a{} b", "\u{301}".repeat(1_000_000));
        assert_eq!(f(&zalgo), "á b");
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
        use Majority::{Cyrillic, Latin, Neither};
        // `raw` as written, `w` lower-cased (as `push_normalized` passes it).
        let f = |raw: &str, m: Majority| {
            let w = raw.to_lowercase();
            homoglyphs(&w, raw, m).unwrap_or(w)
        };
        // Latin letters in Cyrillic words, whatever the text.
        for m in [Cyrillic, Latin, Neither] {
            assert_eq!(f("Дeнь", m), "день");
            assert_eq!(f("Пpaздник", m), "праздник");
            assert_eq!(f("CША", m), "сша");
            assert_eq!(f("Tб", m), "тб");
            assert_eq!(f("разомнëт", m), "разомнет");
            // Cyrillic letters in Latin words.
            assert_eq!(f("Wildberriеs", m), "wildberries");
            assert_eq!(f("Сybertruck", m), "cybertruck");
            assert_eq!(f("ВМW", m), "bmw");
            // No look-alike on either side: left alone.
            assert_eq!(homoglyphs("яndex", "Яndex", m), None);
            assert_eq!(homoglyphs("макsим", "МакSим", m), None);
            assert_eq!(homoglyphs("cafés", "cafés", m), None);
        }
        // Both ways possible: the text's script decides, else the word's majority
        // (Cyrillic on a tie). A Russian word with most of its letters swapped
        // ("нac", "Mocквa") is the commoner case than a Latin word made only of
        // look-alikes with one Cyrillic slip ("сopy", which a Russian text then
        // reads as "сору").
        assert_eq!(f("Mocквa", Cyrillic), "москва");
        assert_eq!(f("нac", Cyrillic), "нас");
        assert_eq!(f("сopy", Cyrillic), "сору");
        assert_eq!(f("Mocквa", Latin), "mockba");
        assert_eq!(f("сopy", Neither), "copy");
        assert_eq!(f("oт", Neither), "от");
        // One-letter words in look-alikes of the text's script.
        assert_eq!(f("a", Cyrillic), "а");
        assert_eq!(f("C", Cyrillic), "с");
        assert_eq!(f("а", Latin), "a");
        assert_eq!(f("Тhе", Latin), "the");
        assert_eq!(homoglyphs("a", "a", Latin), None);
        assert_eq!(homoglyphs("a", "a", Neither), None);
        // Not a look-alike as written (t, h, m are not), or longer: kept.
        assert_eq!(homoglyphs("t", "t", Cyrillic), None);
        assert_eq!(homoglyphs("x86", "x86", Cyrillic), None);
        assert_eq!(homoglyphs("13900k", "13900K", Cyrillic), None);
        assert_eq!(homoglyphs("php", "PHP", Cyrillic), None);
        assert_eq!(homoglyphs("oc", "OC", Cyrillic), None);
        assert_eq!(homoglyphs("тема", "тема", Latin), None);
        // One script, the text's: nothing to do.
        assert_eq!(homoglyphs("день", "день", Cyrillic), None);
        assert_eq!(homoglyphs("copy", "copy", Latin), None);
    }

    #[test]
    fn the_majority_leaves_links_out() {
        let m = |t: &str| majority(t, &mut || true);
        assert_eq!(
            m("Курс доллара вырос https://example.com/very/long/path/about/dollars"),
            Majority::Cyrillic
        );
        assert_eq!(
            m("Курс доллара CEO and CFO of the company said"),
            Majority::Latin
        );
        assert_eq!(m("Курс доллара, said the CEO"), Majority::Neither);
        // Look-alikes slipped in do not count.
        assert_eq!(m("Kypc дoллapa вырoc"), Majority::Cyrillic);
        assert_eq!(m("The rate rose, said Иванов"), Majority::Latin);
        assert_eq!(m("42 + 7"), Majority::Neither);
        assert_eq!(
            m("Цена www.example.com/dollars/today/rate"),
            Majority::Cyrillic
        );
        assert_eq!(m("Цена mail@example.com-dollars-today"), Majority::Cyrillic);
    }
}
