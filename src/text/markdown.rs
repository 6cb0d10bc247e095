//! Telegram-style markdown to visible text: `[text](url)` links keep their text,
//! bare `http(s)://` URLs are removed, and the markers `**`, `__`, `~~`, `||` and
//! `` ` `` are dropped while their text stays. A backslash before ASCII punctuation
//! (MarkdownV2 escaping, "\." or "\*") is dropped and the character kept literally.
//!
//! Runs on every input, after HTML removal. Linear time: each scan that can fail
//! stops at the next `[`, so no byte is rescanned more than a few times.

use std::borrow::Cow;

/// Visible text and the number of links found. `count_bare_urls` is false for
/// HTML input, whose `<a href>` tags were already counted and whose bare URLs are
/// almost always the visible label of such a tag. `progress` is called about once
/// per [`super::MARKUP_BYTES_PER_CHECK`] bytes; when it answers false the pass
/// stops, and its text is incomplete (the caller drops it).
pub(crate) fn clean<'s>(
    s: &'s str,
    count_bare_urls: bool,
    progress: &mut dyn FnMut() -> bool,
) -> (Cow<'s, str>, u32) {
    if !needs_work(s) {
        return (Cow::Borrowed(s), 0);
    }
    let mut out = String::with_capacity(s.len());
    let mut links = 0u32;
    let mut rest = s;
    let mut next_check = super::MARKUP_BYTES_PER_CHECK;
    loop {
        let done = s.len() - rest.len();
        if done >= next_check {
            if !progress() {
                break;
            }
            next_check = done + super::MARKUP_BYTES_PER_CHECK;
        }
        let Some(p) = rest.find('[') else {
            plain(rest, &mut out, &mut links, count_bare_urls);
            break;
        };
        plain(&rest[..p], &mut out, &mut links, count_bare_urls);
        match link_at(&rest[p..]) {
            Some((text, used)) => {
                links = links.saturating_add(1);
                plain(text, &mut out, &mut links, false);
                rest = &rest[p + used..];
            }
            None => {
                out.push('[');
                rest = &rest[p + 1..];
            }
        }
    }
    (Cow::Owned(out), links)
}

/// True if `s` holds a byte that [`clean`] may change; lets plain prose through
/// without a copy.
fn needs_work(s: &str) -> bool {
    let b = s.as_bytes();
    b.iter().enumerate().any(|(i, &c)| match c {
        b'[' | b'`' | b'\\' => true,
        b'*' | b'_' | b'~' | b'|' => b.get(i + 1) == Some(&c),
        b'h' | b'H' => url_prefix_len(b, i) > 0,
        _ => false,
    })
}

/// Parses `[text](url)` at the start of `s` (which begins with '['); returns the
/// text and the bytes used. The text may not hold '[' or a newline; the url must
/// be non-empty and hold no whitespace, brackets or parentheses.
fn link_at(s: &str) -> Option<(&str, usize)> {
    let b = s.as_bytes();
    let close = b
        .iter()
        .skip(1)
        .position(|&c| matches!(c, b']' | b'[' | b'\n'))?
        + 1;
    if b[close] != b']' || b.get(close + 1) != Some(&b'(') {
        return None;
    }
    let url_start = close + 2;
    let url_len = b[url_start..].iter().position(|&c| {
        c.is_ascii_whitespace() || matches!(c, b')' | b'(' | b'[' | b']' | b'<' | b'>')
    })?;
    if url_len == 0 || b[url_start + url_len] != b')' {
        return None;
    }
    Some((&s[1..close], url_start + url_len + 1))
}

/// Length of "http://" or "https://" (any case) at `i`, or 0. Not inside a word.
fn url_prefix_len(b: &[u8], i: usize) -> usize {
    if i > 0 && b[i - 1].is_ascii_alphanumeric() {
        return 0;
    }
    let rest = &b[i..];
    for p in [&b"https://"[..], &b"http://"[..]] {
        if rest.len() >= p.len() && rest[..p.len()].eq_ignore_ascii_case(p) {
            return p.len();
        }
    }
    0
}

/// End of the URL starting at `i`: up to whitespace or a delimiter, minus trailing
/// punctuation that belongs to the sentence ("see https://x.ru/a." keeps the dot).
fn url_end(s: &str, i: usize) -> usize {
    let tail = &s[i..];
    let stop = tail
        .char_indices()
        .find(|&(_, c)| {
            c.is_whitespace() || matches!(c, '<' | '>' | '"' | '«' | '»' | '[' | ']' | '`')
        })
        .map_or(tail.len(), |(k, _)| k);
    let mut url = &tail[..stop];
    let opened = url.bytes().filter(|&c| c == b'(').count();
    let mut closed = url.bytes().filter(|&c| c == b')').count();
    while let Some(c) = url.chars().next_back() {
        let trailing = match c {
            // keep a ')' that closes a '(' inside the URL (Wikipedia-style paths)
            ')' if closed > opened => {
                closed -= 1;
                true
            }
            ')' => false,
            _ => matches!(
                c,
                '.' | ',' | ';' | ':' | '!' | '?' | '\'' | '…' | '*' | '_' | '~' | '|'
            ),
        };
        if !trailing {
            break;
        }
        url = &url[..url.len() - c.len_utf8()];
    }
    i + url.len()
}

/// Copies `s` without markers and bare URLs.
fn plain(s: &str, out: &mut String, links: &mut u32, count_urls: bool) {
    let b = s.as_bytes();
    let mut i = 0;
    let mut run = 0;
    while i < b.len() {
        let c = b[i];
        let skip = match c {
            b'*' | b'_' | b'~' | b'|' if b.get(i + 1) == Some(&c) => 2,
            b'`' => 1,
            b'\\' if b.get(i + 1).is_some_and(u8::is_ascii_punctuation) => {
                out.push_str(&s[run..i]);
                run = i + 1; // keep the escaped character itself
                i += 2;
                continue;
            }
            b'h' | b'H' if url_prefix_len(b, i) > 0 => {
                let end = url_end(s, i);
                if count_urls {
                    *links = links.saturating_add(1);
                }
                end - i
            }
            _ => 0,
        };
        if skip == 0 {
            i += 1;
        } else {
            out.push_str(&s[run..i]);
            i += skip;
            run = i;
        }
    }
    out.push_str(&s[run..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clean(s: &str, count_bare_urls: bool) -> (Cow<'_, str>, u32) {
        super::clean(s, count_bare_urls, &mut || true)
    }

    #[test]
    fn a_pass_of_many_links_calls_progress() {
        let s = "[a](b) ".repeat(super::super::MARKUP_BYTES_PER_CHECK / 2);
        let mut calls = 0;
        let (_, links) = super::clean(&s, true, &mut || {
            calls += 1;
            true
        });
        assert_eq!(calls, 3);
        assert_eq!(links as usize, super::super::MARKUP_BYTES_PER_CHECK / 2);
    }

    fn md(s: &str) -> (String, u32) {
        let (t, n) = clean(s, true);
        (t.into_owned(), n)
    }

    #[test]
    fn plain_text_is_borrowed() {
        assert!(matches!(
            clean("Обычный текст, без разметки.", true).0,
            Cow::Borrowed(_)
        ));
        assert!(matches!(
            clean("a_b * c ~ d | e happy", true).0,
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn links() {
        assert_eq!(
            md("См. [сайт ТАСС](https://tass.ru/x) и [тут](t.me/y)."),
            ("См. сайт ТАСС и тут.".into(), 2)
        );
        assert_eq!(md("[**bold link**](http://a.b)"), ("bold link".into(), 1));
        assert_eq!(md("[https://a.b](https://a.b)"), ("".into(), 1));
        assert_eq!(
            md("[not a link] (x) [a](b c) [a]() [a"),
            ("[not a link] (x) [a](b c) [a]() [a".into(), 0)
        );
    }

    #[test]
    fn bare_urls() {
        assert_eq!(
            md("Читать: https://ria.ru/2024/01/01/x.html. Далее"),
            ("Читать: . Далее".into(), 1)
        );
        assert_eq!(md("(see HTTP://EXAMPLE.com/a_(b))"), ("(see )".into(), 1));
        assert_eq!(
            clean("x https://a.b y", false),
            (Cow::Owned("x  y".to_string()), 0)
        );
        assert_eq!(md("xhttps://a.b"), ("xhttps://a.b".into(), 0));
    }

    #[test]
    fn markers() {
        assert_eq!(
            md("**Срочно**: __важно__ ~~old~~ ||spoiler|| `code` ```block```"),
            ("Срочно: важно old spoiler code block".into(), 0)
        );
        assert_eq!(md("Цена 5\\.5\\*\\* \\a"), ("Цена 5.5** \\a".into(), 0));
        assert_eq!(md("a\\"), ("a\\".into(), 0));
    }

    #[test]
    fn linear_on_adversarial_input() {
        let s = "[a](xxxx".repeat(100_000);
        assert_eq!(md(&s).1, 0);
        let s = "[".repeat(100_000) + "]";
        assert_eq!(md(&s).0.len(), 100_001);
        let s = "https://".repeat(100_000);
        assert_eq!(md(&s).1, 1);
        let s = format!("https://x{}", ")".repeat(100_000));
        assert_eq!(md(&s).0.len(), 100_000);
    }
}
