//! Splitting visible text into paragraphs and sentences.
//!
//! Paragraphs end at blank lines (a line holding only whitespace); markup removal
//! has already turned block tags into blank lines. Inside a paragraph a single
//! newline ends a sentence, and so does a run of `.`, `!`, `?`, `…` (plus closing
//! quotes or brackets) followed by whitespace and then an upper-case letter, a digit,
//! an opening quote, a dash, or the end of the paragraph. A lone `.` does not end a
//! sentence after an initial ("А. С. Пушкин"), a dotted acronym ("U.S.", "т.е.")
//! or a listed abbreviation; decimals never split because the dot is not followed by
//! whitespace.

use std::ops::ControlFlow;

/// Abbreviations (lower-case, without the final dot) after which a `.` does not end
/// a sentence.
const ABBREVIATIONS: &[&str] = &[
    // Russian
    "т.е", "т.д", "т.п", "г", "гг", "ул", "им", "др", "пр", "руб", "млн", "млрд", "тыс", "см",
    "стр", "н.э", "и.о", "проф", "акад", "доц", "обл", "пос", "пер", "д", "кв",
    // English
    "mr", "mrs", "ms", "dr", "prof", "inc", "ltd", "co", "corp", "vs", "etc", "e.g", "i.e", "u.s",
    "u.k", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
    "st", "no", "jr", "sr", "gen", "gov", "sen", "rep", "mt",
];

/// Longest word (in chars) looked at behind a dot; abbreviations are shorter, so a
/// longer look-behind would only cost time.
const MAX_ABBREVIATION_CHARS: usize = 16;

/// Calls `f` with each paragraph of `text` (never empty or blank), in order,
/// until it breaks.
pub(crate) fn for_each_paragraph<'t>(
    text: &'t str,
    mut f: impl FnMut(&'t str) -> ControlFlow<()>,
) -> ControlFlow<()> {
    let mut start: Option<usize> = None;
    let mut end = 0;
    let mut pos = 0;
    for line in text.split_inclusive('\n') {
        let line_start = pos;
        pos += line.len();
        if line.trim().is_empty() {
            if let Some(s) = start.take() {
                f(&text[s..end])?;
            }
        } else {
            start.get_or_insert(line_start);
            end = line_start + line.strip_suffix('\n').unwrap_or(line).len();
        }
    }
    if let Some(s) = start {
        f(&text[s..end])?;
    }
    ControlFlow::Continue(())
}

fn is_terminator(c: char) -> bool {
    matches!(c, '.' | '!' | '?' | '…')
}

fn is_closer(c: char) -> bool {
    matches!(c, '"' | '\'' | '»' | '”' | '’' | ')' | ']')
}

/// May a sentence start with `c`?
fn is_opener(c: char) -> bool {
    c.is_uppercase()
        || c.is_numeric()
        || matches!(c, '"' | '\'' | '«' | '“' | '„' | '-' | '–' | '—')
}

/// Calls `f` with each sentence of `paragraph` (never blank), in order, until
/// it breaks.
pub(crate) fn for_each_sentence<'t>(
    paragraph: &'t str,
    mut f: impl FnMut(&'t str) -> ControlFlow<()>,
) -> ControlFlow<()> {
    let mut emit = |s: &'t str| {
        if s.trim().is_empty() {
            ControlFlow::Continue(())
        } else {
            f(s)
        }
    };
    let mut start = 0;
    let mut it = paragraph.char_indices().peekable();
    while let Some((i, c)) = it.next() {
        if c == '\n' {
            emit(&paragraph[start..i])?;
            start = i + 1;
            continue;
        }
        if !is_terminator(c) {
            continue;
        }
        let mut end = i + c.len_utf8();
        let mut single_dot = c == '.';
        while let Some(&(j, d)) = it.peek() {
            if is_terminator(d) {
                single_dot = false;
                end = j + d.len_utf8();
                it.next();
            } else {
                break;
            }
        }
        while let Some(&(j, d)) = it.peek() {
            if is_closer(d) {
                end = j + d.len_utf8();
                it.next();
            } else {
                break;
            }
        }
        let rest = &paragraph[end..];
        let boundary = match rest.chars().next() {
            None => true,
            Some(w) if w.is_whitespace() => rest.trim_start().chars().next().is_none_or(is_opener),
            Some(_) => false,
        };
        if boundary && !(single_dot && dot_is_not_a_stop(paragraph, i)) {
            emit(&paragraph[start..end])?;
            start = end;
        }
    }
    emit(&paragraph[start..])
}

/// Does the `.` at byte `dot` close an initial, an acronym or an abbreviation?
fn dot_is_not_a_stop(text: &str, dot: usize) -> bool {
    let before = &text[..dot];
    let mut wstart = dot;
    for (n, (k, c)) in before.char_indices().rev().enumerate() {
        if !(c.is_alphabetic() || c == '.') {
            break;
        }
        if n >= MAX_ABBREVIATION_CHARS {
            return false; // too long for an abbreviation
        }
        wstart = k;
    }
    let word = &text[wstart..dot];
    if word.is_empty() {
        return false;
    }
    let mut chars = word.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        if c.is_uppercase() {
            return true; // an initial: "А. С. Пушкин", "J. R. R. Tolkien"
        }
        // "т. е.", "т. д.", "т. п." written with a space
        if matches!(c, 'е' | 'д' | 'п') && text[..wstart].trim_end().ends_with("т.") {
            return true;
        }
    }
    let lower = word.to_lowercase();
    if ABBREVIATIONS.contains(&lower.as_str()) {
        return true;
    }
    // dotted acronyms: every part one letter ("U.S", "т.е", "e.g")
    word.contains('.') && word.split('.').all(|p| p.chars().count() == 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sentences(s: &str) -> Vec<String> {
        let mut v = Vec::new();
        let _ = for_each_sentence(s, |x| {
            v.push(x.trim().to_string());
            ControlFlow::Continue(())
        });
        v
    }

    fn paragraphs(s: &str) -> Vec<String> {
        let mut v = Vec::new();
        let _ = for_each_paragraph(s, |x| {
            v.push(x.to_string());
            ControlFlow::Continue(())
        });
        v
    }

    #[test]
    fn break_stops() {
        let mut n = 0;
        let r = for_each_paragraph("a\n\nb\n\nc", |_| {
            n += 1;
            ControlFlow::Break(())
        });
        assert_eq!((r, n), (ControlFlow::Break(()), 1));
        let r = for_each_sentence("One. Two. Three.", |_| {
            n += 1;
            if n == 3 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
        assert_eq!((r, n), (ControlFlow::Break(()), 3));
    }

    #[test]
    fn paragraph_split() {
        assert_eq!(paragraphs("a\nb\n\nc\n \t\n\nd"), ["a\nb", "c", "d"]);
        assert_eq!(paragraphs("\n\n  \n"), Vec::<String>::new());
        assert_eq!(paragraphs("x\r\n\r\ny"), ["x\r", "y"]);
        assert_eq!(paragraphs(""), Vec::<String>::new());
    }

    #[test]
    fn basic_sentences() {
        assert_eq!(
            sentences("Первое предложение. Второе! Третье?! Четвёртое… 5 штук... «Цитата»"),
            [
                "Первое предложение.",
                "Второе!",
                "Третье?!",
                "Четвёртое…",
                "5 штук...",
                "«Цитата»"
            ]
        );
        assert_eq!(
            sentences("He said \"Hi.\" Then left."),
            ["He said \"Hi.\"", "Then left."]
        );
        assert_eq!(sentences("line one\nline two"), ["line one", "line two"]);
        assert_eq!(sentences("Lower. case stays"), ["Lower. case stays"]);
        assert_eq!(sentences("Dash. — Yes"), ["Dash.", "— Yes"]);
    }

    #[test]
    fn initials_and_abbreviations() {
        assert_eq!(
            sentences("Поэт А. С. Пушкин родился в Москве. Он писал."),
            ["Поэт А. С. Пушкин родился в Москве.", "Он писал."]
        );
        assert_eq!(
            sentences("J. R. R. Tolkien wrote. Mr. Smith met Dr. Who in the U.S. Today."),
            [
                "J. R. R. Tolkien wrote.",
                "Mr. Smith met Dr. Who in the U.S. Today."
            ]
        );
        assert_eq!(
            sentences("Книги, журналы и т.д. Все это. В 2024 г. Москва, ул. Тверская."),
            [
                "Книги, журналы и т.д. Все это.",
                "В 2024 г. Москва, ул. Тверская."
            ]
        );
        assert_eq!(sentences("Итак, т. е. Москва"), ["Итак, т. е. Москва"]);
        assert_eq!(
            sentences("Apples, pears, etc. Then more"),
            ["Apples, pears, etc. Then more"]
        );
        assert_eq!(
            sentences("See Jan. 5 and e.g. X"),
            ["See Jan. 5 and e.g. X"]
        );
    }

    #[test]
    fn decimals_do_not_split() {
        assert_eq!(
            sentences("Рост 3.5 процента. Цена 3,5 рубля."),
            ["Рост 3.5 процента.", "Цена 3,5 рубля."]
        );
        assert_eq!(sentences("Version 2.0 is out"), ["Version 2.0 is out"]);
        assert_eq!(sentences("Пункт 1. Далее"), ["Пункт 1.", "Далее"]);
    }

    #[test]
    fn odd_inputs() {
        assert_eq!(sentences(""), Vec::<String>::new());
        assert_eq!(sentences("...!!!???"), ["...!!!???"]);
        assert_eq!(sentences(". . . A"), [". . .", "A"]);
        let long = format!("{} X", "a.".repeat(10_000));
        assert_eq!(sentences(&long).len(), 2);
    }
}
