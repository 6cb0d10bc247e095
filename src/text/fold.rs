//! Folds that make one visible text one spelling, whatever bytes wrote it. Two
//! passes around markdown removal (`super::visible_checked`):
//!
//! - before it, [`invisible`]: **invisible characters** (Unicode's
//!   default-ignorable code points: soft hyphens, zero-width spaces and joiners,
//!   direction marks, variation selectors, fillers, tags) are removed: word
//!   segmentation keeps them inside a word or breaks at them, so "Ку\u{200E}рс"
//!   would be another word than "Курс", and "ht\u{200B}tps://" no link;
//! - after it, [`letters`]: **compatibility letters and digits** — full-width
//!   `ＡＢＣ１２３`, the mathematical alphanumerics of Telegram's "fancy text"
//!   generators (`𝐁𝐨𝐥𝐝`) with the letters they take from Letterlike Symbols
//!   (`ℎ`, `ℯ`, `ℂ`), the Latin ligatures (`ﬁ`) — become the letters and digits
//!   they show (their NFKC form; not NFKC as a whole, which would also read `м²`
//!   as `м2` and `№` as `No`); a **Latin or Cyrillic letter or a digit with
//!   combining marks** is composed with them (NFC: a decomposed `й`, as PDF
//!   extraction and macOS write it, is `й`) and the marks that remain are
//!   removed: stress marks (`сто́ит` is `стоит`), the strike-through and
//!   underline of fancy text (`s̶t̶r̶i̶k̶e̶`), stacked marks; a **keycap** (`1️⃣`) is a
//!   space. Other scripts' text is left as it is.
//!
//! Text that needs none of this (nearly all text) is scanned once a pass,
//! character by character, and borrowed as it is. Neither pass makes its output
//! longer than its input.

use std::borrow::Cow;

use unicode_normalization::char::is_combining_mark;
use unicode_normalization::UnicodeNormalization;

/// Unicode's Default_Ignorable_Code_Point (Unicode 15): what shows nothing and is
/// not a space.
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

/// Letters and digits shown as other letters and digits: full-width ASCII letters
/// and digits, the mathematical alphanumerics, the Latin ligatures, and the
/// letters fancy alphabets take from Letterlike Symbols (italic ℎ, script ℯ ℴ,
/// double-struck ℂ ℝ, fraktur ℭ ℜ), not ℹ (an emoji there). Full-width punctuation
/// stays: it is no markdown.
fn compatibility_letter(c: char) -> bool {
    matches!(
        c,
        '\u{FF10}'..='\u{FF19}'
            | '\u{FF21}'..='\u{FF3A}'
            | '\u{FF41}'..='\u{FF5A}'
            | '\u{1D400}'..='\u{1D7FF}'
            | '\u{FB00}'..='\u{FB06}'
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

/// COMBINING ENCLOSING KEYCAP: word segmentation joins "1\u{20E3}Итоги" into one
/// word; it becomes a space.
const KEYCAP: char = '\u{20E3}';

/// Marks kept on one letter for composing: NFC never needs more (UAX #15's
/// stream-safe limit); the rest are dropped unread.
const MAX_MARKS: usize = 30;

/// What carries marks that are composed or dropped: Latin and Cyrillic letters
/// and ASCII digits.
fn is_base(c: char) -> bool {
    c.is_ascii_alphanumeric() || ('\u{C0}'..'\u{250}').contains(&c) || is_cyrillic(c)
}

/// Cyrillic letters and marks (the Cyrillic and Cyrillic Supplement blocks).
pub(crate) fn is_cyrillic(c: char) -> bool {
    matches!(c, '\u{400}'..='\u{52F}')
}

/// Characters neither pass touches, told without a table: ASCII, Latin-1 and the
/// Latin extensions (no combining marks below U+0300; not the soft hyphen), and
/// Cyrillic letters (not its combining marks U+0483–U+0489).
fn settled(c: char) -> bool {
    (c < '\u{300}' && c != '\u{AD}') || matches!(c, '\u{400}'..='\u{482}' | '\u{48A}'..='\u{4FF}')
}

/// `text` without its invisible characters, borrowed when it has none. Calls
/// `progress` about once per [`super::MARKUP_BYTES_PER_CHECK`] bytes and stops
/// early (with some text) when it returns false: the caller, who made `progress`
/// fail, discards the result.
pub(crate) fn invisible<'t>(text: &'t str, progress: &mut dyn FnMut() -> bool) -> Cow<'t, str> {
    let mut check = Checker::new(progress);
    let first = text
        .char_indices()
        .find(|&(i, c)| !check.at(i) || (!settled(c) && ignorable(c)));
    let Some((start, _)) = first else {
        return Cow::Borrowed(text);
    };
    if !check.ok {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    out.push_str(&text[..start]);
    for (i, c) in text[start..].char_indices() {
        if !check.at(start + i) {
            break;
        }
        if !ignorable(c) {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `text` with its compatibility letters, marked letters and keycaps folded (see
/// the module doc), borrowed when it has none. Calls `progress` as [`invisible`]
/// does.
pub(crate) fn letters<'t>(text: &'t str, progress: &mut dyn FnMut() -> bool) -> Cow<'t, str> {
    let mut check = Checker::new(progress);
    let first = text.char_indices().find(|&(i, c)| {
        !check.at(i)
            || (!settled(c) && (compatibility_letter(c) || c == KEYCAP || is_combining_mark(c)))
    });
    let Some((start, _)) = first else {
        return Cow::Borrowed(text);
    };
    if !check.ok {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    // A base and the marks that follow it, composed when the next base comes.
    let mut cluster: Vec<char> = Vec::with_capacity(MAX_MARKS + 1);
    // Where the text resumes: the cluster's base is the last character before it.
    let (head, tail) = text.split_at(start);
    let mut head_chars = head.chars();
    if let Some(last) = head_chars.next_back() {
        out.push_str(head_chars.as_str());
        if is_base(last) {
            cluster.push(last);
        } else {
            out.push(last);
        }
    }
    let mut expanded = String::new();
    for (i, c) in tail.char_indices() {
        if !check.at(start + i) {
            break;
        }
        if compatibility_letter(c) {
            expanded.clear();
            expanded.extend(std::iter::once(c).nfkc());
            for e in expanded.chars() {
                flush(&mut cluster, &mut out);
                cluster.push(e);
            }
        } else if c == KEYCAP {
            flush(&mut cluster, &mut out);
            out.push(' ');
        } else if is_combining_mark(c) {
            if cluster.is_empty() {
                out.push(c);
            } else if cluster.len() <= MAX_MARKS {
                cluster.push(c);
            }
        } else {
            flush(&mut cluster, &mut out);
            if is_base(c) {
                cluster.push(c);
            } else {
                out.push(c);
            }
        }
    }
    flush(&mut cluster, &mut out);
    Cow::Owned(out)
}

/// Writes a base and its marks: composed (NFC), without the marks that remain.
fn flush(cluster: &mut Vec<char>, out: &mut String) {
    match cluster.len() {
        0 => {}
        1 => out.extend(cluster.iter()),
        _ => out.extend(
            cluster
                .iter()
                .copied()
                .nfc()
                .filter(|&c| !is_combining_mark(c)),
        ),
    }
    cluster.clear();
}

/// Calls a progress callback once per [`super::MARKUP_BYTES_PER_CHECK`] bytes of
/// a pass; remembers a stop.
pub(crate) struct Checker<'p> {
    progress: &'p mut dyn FnMut() -> bool,
    next: usize,
    ok: bool,
}

impl<'p> Checker<'p> {
    pub(crate) fn new(progress: &'p mut dyn FnMut() -> bool) -> Self {
        Checker {
            progress,
            next: super::MARKUP_BYTES_PER_CHECK,
            ok: true,
        }
    }

    /// False once the callback has said stop; `at` is the pass's byte offset.
    pub(crate) fn at(&mut self, at: usize) -> bool {
        if self.ok && at >= self.next {
            self.ok = (self.progress)();
            self.next = at + super::MARKUP_BYTES_PER_CHECK;
        }
        self.ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folded(t: &str) -> String {
        let t = invisible(t, &mut || true).into_owned();
        letters(&t, &mut || true).into_owned()
    }

    #[test]
    fn folds() {
        let f = folded;
        assert_eq!(f("мои\u{306} е\u{308}ж"), "мой ёж");
        assert_eq!(f("ＡＢＣ １２３"), "ABC 123");
        assert_eq!(f("𝐁𝐨𝐥𝐝 𝟏𝟎"), "Bold 10");
        assert_eq!(f("ﬁnal"), "final");
        assert_eq!(f("Ку\u{200E}рс\u{FE0F} ку\u{AD}рс\u{2063}"), "Курс курс");
        assert_eq!(f("сто\u{301}ит"), "стоит");
        // Strike-through, underline, enclosing and stacked marks of "fancy text",
        // on letters and digits.
        assert_eq!(
            f("s\u{336}t\u{336}o\u{336}p\u{336} 9\u{336}2\u{336}"),
            "stop 92"
        );
        assert_eq!(f("с\u{332}т\u{332}о\u{332}п\u{332}"), "стоп");
        assert_eq!(
            f("К\u{489}у\u{489}р\u{489}с\u{489} сто\u{483}ит"),
            "Курс стоит"
        );
        assert_eq!(f("z\u{35B}\u{317}\u{300}a"), "za");
        // Fancy letters from Letterlike Symbols; ℹ stays (an emoji there).
        assert_eq!(
            f("\u{1D447}\u{210E}\u{1D452} ℯxchanℊℯ ℂ\u{1D559}\u{1D55A}\u{1D55F}\u{1D552} ℹ"),
            "The exchange China ℹ"
        );
        // A keycap is a digit in a box.
        assert_eq!(f("1\u{FE0F}\u{20E3}Итоги"), "1 Итоги");
        // Millions of marks on one letter: past 30 they are dropped unread.
        let zalgo = format!("a{} b", "\u{301}".repeat(1_000_000));
        assert_eq!(f(&zalgo), "á b");
        // Marks on what is no Latin or Cyrillic letter or digit stay, uncomposed;
        // so do characters that decompose into marks (Tibetan).
        assert_eq!(f("\u{F73}\u{F73} ★\u{301}"), "\u{F73}\u{F73} ★\u{301}");
        // Not folded: what NFKC would also change but carries meaning, and
        // full-width punctuation.
        assert_eq!(f("10 м² № 5 ½ ［ｘ］"), "10 м² № 5 ½ ［x］");
        // Latin accents compose and stay.
        assert_eq!(f("cafe\u{301}"), "café");
        for t in ["Курс доллара — 92 «рубля»…", "café №5 😀", "", "abc"]
        {
            assert!(
                matches!(invisible(t, &mut || true), Cow::Borrowed(_)),
                "{t}"
            );
            assert!(matches!(letters(t, &mut || true), Cow::Borrowed(_)), "{t}");
        }
        // Neither pass makes a text longer.
        for t in [
            "\u{1D160}\u{FB2C}\u{958} a\u{301}",
            "ﬃ\u{1D400}",
            "x\u{20E3}",
        ] {
            assert!(folded(t).len() <= t.len(), "{t}");
        }
    }

    #[test]
    fn long_texts_check_progress_and_stop() {
        let per = super::super::MARKUP_BYTES_PER_CHECK;
        for unit in [
            "слово\u{200E} ",
            "слово\u{306} ",
            "слово ",
            "\u{200B}",
            "a\u{301}",
        ] {
            let text = unit.repeat(3 * per / unit.len());
            type Pass = for<'t> fn(&'t str, &mut dyn FnMut() -> bool) -> Cow<'t, str>;
            for pass in [invisible as Pass, letters] {
                let mut calls = 0;
                let _ = pass(&text, &mut || {
                    calls += 1;
                    true
                });
                assert!(calls >= 2, "{unit:?}: {calls} checks");
                let mut calls = 0;
                let _ = pass(&text, &mut || {
                    calls += 1;
                    false
                });
                assert_eq!(calls, 1, "{unit:?}: stops at the first refusal");
            }
        }
    }
}
