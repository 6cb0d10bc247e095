//! Cyrillic and Latin look-alike letters (`о`/`o`, `р`/`p`, `с`/`c` …): which
//! script most of a text's letters are in ([`majority`]), and each lower-cased
//! word written in one script ([`homoglyphs`]). A Cyrillic word typed with Latin
//! `o`, `p`, `e`, `c` (`Дeнь`, `Пpaздник`, by accident or to slip past a duplicate
//! filter) is written in Cyrillic, and a Latin word with a Cyrillic `с`
//! (`Wildberriеs`) in Latin.

use super::fold::{is_cyrillic, Checker};

/// The script most of a text's letters are in: at least two thirds of its
/// Cyrillic and Latin letters that have no look-alike in the other script.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Majority {
    Cyrillic,
    Latin,
    /// No letters, or neither script has two thirds of them.
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
/// addresses (whitespace-separated runs holding `/` or `@`, or opening with `www.`), whose
/// Latin letters say nothing of the language. Calls `progress` as [`visible`] does
/// (`Neither` after a stop).
pub(crate) fn majority(text: &str, progress: &mut dyn FnMut() -> bool) -> Majority {
    let mut check = Checker::new(progress);
    let mut total = Letters::default();
    // The current whitespace-separated run: its letters, whether it is a link.
    let mut run = Letters::default();
    let (mut link, mut run_chars) = (false, 0usize);
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
            (link, run_chars) = (false, 0);
            continue;
        }
        if c == '@'
            || c == '/'
            || (c == '.'
                && run_chars == 3
                && text
                    .get(i.saturating_sub(3)..i)
                    .is_some_and(|w| w.eq_ignore_ascii_case("www")))
        {
            link = true;
        }
        run.add(c);
        run_chars += 1;
    }
    if !link {
        total.cyrillic += run.cyrillic;
        total.latin += run.latin;
    }
    total.majority()
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
        assert_eq!(m("Цена t.me/channel_about_dollars"), Majority::Cyrillic);
        assert_eq!(
            m("Цена www.example.com/dollars/today/rate"),
            Majority::Cyrillic
        );
        assert_eq!(m("Цена mail@example.com-dollars-today"), Majority::Cyrillic);
    }

    #[test]
    fn the_majority_checks_progress_and_stops() {
        let text = "слово ".repeat(3 * super::super::MARKUP_BYTES_PER_CHECK / 11);
        let mut calls = 0;
        assert_eq!(
            majority(&text, &mut || {
                calls += 1;
                true
            }),
            Majority::Cyrillic
        );
        assert!(calls >= 2, "{calls} checks");
        let mut calls = 0;
        let _ = majority(&text, &mut || {
            calls += 1;
            false
        });
        assert_eq!(calls, 1);
    }
}
