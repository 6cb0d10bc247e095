//! HTML to visible text: one forgiving pass that drops scripts, styles and
//! comments, counts images and links, turns block tags into blank lines and
//! decodes entities.
//!
//! It is not a conforming HTML parser and does not need to be: it never fails,
//! never panics and runs in linear time on any input, broken markup included. An
//! unterminated tag, comment or `<script>` swallows the rest of the input, as in a
//! browser.

use std::borrow::Cow;

/// Tags that end a paragraph: they become a blank line.
#[rustfmt::skip]
const BLOCK_TAGS: &[&str] = &[
    "address", "article", "aside", "blockquote", "body", "caption", "center", "dd",
    "details", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form",
    "h1", "h2", "h3", "h4", "h5", "h6", "head", "header", "hr", "html", "li", "main",
    "nav", "ol", "p", "pre", "section", "summary", "table", "tbody", "tfoot", "thead",
    "title", "tr", "ul",
];

/// Inline formatting tags: removed without a trace, so "<b>Hel</b>lo" stays one word.
/// Any other tag (td, img, unknown names…) becomes a space.
#[rustfmt::skip]
const INLINE_TAGS: &[&str] = &[
    "a", "abbr", "b", "bdi", "bdo", "cite", "code", "data", "del", "dfn", "em", "font",
    "i", "ins", "kbd", "mark", "q", "s", "samp", "small", "span", "strike", "strong",
    "sub", "sup", "tg-emoji", "tg-spoiler", "time", "tt", "u", "var", "wbr",
];

/// Elements dropped with their content.
const RAW_TEXT_TAGS: &[&str] = &["noscript", "script", "style", "template"];

/// Tag names that make a `<name` count as HTML in [`looks_like_html`].
const DETECT_TAGS: &[&str] = &["br", "img", "iframe", "meta", "link", "td", "th", "video"];

/// Visible text plus what markup removal counted.
pub(crate) struct Stripped<'a> {
    pub(crate) text: Cow<'a, str>,
    /// The input was treated as HTML (whitespace collapsed, tags removed).
    pub(crate) html: bool,
    pub(crate) images: u32,
    pub(crate) links: u32,
}

fn is_name_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'-'
}

/// The ASCII-lower-cased tag name starting at `i`, at most 16 bytes (longer names
/// are not ones we look for).
fn tag_name(b: &[u8], i: usize) -> ([u8; 16], usize, usize) {
    let mut name = [0u8; 16];
    let mut n = 0;
    let mut k = i;
    while k < b.len() && is_name_byte(b[k]) {
        if n < name.len() {
            name[n] = b[k].to_ascii_lowercase();
            n += 1;
        } else {
            n = name.len() + 1; // too long: matches nothing
        }
        k += 1;
    }
    (name, n.min(17), k)
}

fn name_in(name: &[u8; 16], n: usize, list: &[&str]) -> bool {
    n <= name.len() && list.iter().any(|t| t.as_bytes() == &name[..n])
}

/// Cheap HTML detection: a comment or doctype (`<!`), a closing tag (`</x`), or an
/// opening tag with a known name followed by `>`, `/` or whitespace. A stray
/// "a<b" in plain text is therefore not HTML, which keeps its line breaks intact.
pub(crate) fn looks_like_html(s: &str) -> bool {
    let b = s.as_bytes();
    let mut from = 0;
    while let Some(p) = s[from..].find('<') {
        let i = from + p;
        from = i + 1;
        match b.get(i + 1) {
            Some(b'!') => return true,
            Some(b'/') if b.get(i + 2).is_some_and(u8::is_ascii_alphabetic) => return true,
            Some(c) if c.is_ascii_alphabetic() => {
                let (name, n, k) = tag_name(b, i + 1);
                let known = [BLOCK_TAGS, INLINE_TAGS, RAW_TEXT_TAGS, DETECT_TAGS]
                    .iter()
                    .any(|l| name_in(&name, n, l));
                if known && tag_continues(b, k) {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

/// After a known tag name at `k`: is this a tag? Yes for `>` or `/`, and for
/// whitespace followed by an attribute (`name=` or a bare name then `>`), so the
/// "a<b и b>c" of plain prose does not count.
fn tag_continues(b: &[u8], k: usize) -> bool {
    match b.get(k) {
        Some(b'>' | b'/') => true,
        Some(c) if c.is_ascii_whitespace() => {
            let mut j = k;
            while b.get(j).is_some_and(u8::is_ascii_whitespace) {
                j += 1;
            }
            let a = j;
            while b
                .get(j)
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'-')
            {
                j += 1;
            }
            j > a && matches!(b.get(j), Some(b'=' | b'>'))
        }
        _ => false,
    }
}

/// Visible text of `s`. Input that does not look like HTML keeps its whitespace
/// and is only entity-decoded (RSS titles often carry "&amp;" without tags); it is
/// borrowed unchanged when it holds no entity. `progress` is called about once per
/// [`super::MARKUP_BYTES_PER_CHECK`] bytes of HTML; when it answers false the pass
/// stops, and its text is incomplete (the caller drops it).
pub(crate) fn strip<'s>(s: &'s str, progress: &mut dyn FnMut() -> bool) -> Stripped<'s> {
    if !looks_like_html(s) {
        return Stripped {
            text: decode_entities(s),
            html: false,
            images: 0,
            links: 0,
        };
    }
    let mut p = Parser {
        s,
        b: s.as_bytes(),
        out: String::with_capacity(s.len()),
        images: 0,
        links: 0,
        quotes_ok: true,
    };
    p.run(progress);
    Stripped {
        text: Cow::Owned(p.out),
        html: true,
        images: p.images,
        links: p.links,
    }
}

struct Parser<'a> {
    s: &'a str,
    b: &'a [u8],
    out: String,
    images: u32,
    links: u32,
    /// Cleared after a quoted attribute value ran to the end of input once; from
    /// then on quotes are ignored, so a stray quote cannot make tag scanning
    /// quadratic.
    quotes_ok: bool,
}

impl Parser<'_> {
    fn run(&mut self, progress: &mut dyn FnMut() -> bool) {
        let mut i = 0;
        let mut next_check = super::MARKUP_BYTES_PER_CHECK;
        while i < self.b.len() {
            if i >= next_check {
                if !progress() {
                    return;
                }
                next_check = i + super::MARKUP_BYTES_PER_CHECK;
            }
            let next = self.s[i..].find('<').map_or(self.b.len(), |p| i + p);
            self.text(&self.s[i..next]);
            if next >= self.b.len() {
                break;
            }
            i = self.markup(next);
        }
    }

    /// Handles the `<` at `i` and returns where text resumes.
    fn markup(&mut self, i: usize) -> usize {
        let b = self.b;
        let len = b.len();
        if b[i..].starts_with(b"<!--") {
            return find(self.s, i + 4, "-->").map_or(len, |e| e + 3);
        }
        let closing = b.get(i + 1) == Some(&b'/');
        let name_at = if closing { i + 2 } else { i + 1 };
        match b.get(name_at) {
            Some(c) if c.is_ascii_alphabetic() => {}
            // "</ >", "<!doctype", "<?xml": bogus markup up to the next '>'
            _ if closing || matches!(b.get(i + 1), Some(b'!' | b'?')) => {
                return find(self.s, i + 1, ">").map_or(len, |e| e + 1);
            }
            // a lone '<' is text
            _ => {
                self.out.push('<');
                return i + 1;
            }
        }
        let (name, n, name_end) = tag_name(b, name_at);
        let Some(end) = self.tag_end(name_end) else {
            return len; // unterminated tag: drop the rest
        };
        let after = end + 1;
        let is = |t: &str| n <= name.len() && &name[..n] == t.as_bytes();
        if !closing && name_in(&name, n, RAW_TEXT_TAGS) {
            return self.skip_raw_text(after, &name[..n]);
        }
        if is("br") {
            self.out.push('\n');
        } else if name_in(&name, n, BLOCK_TAGS) {
            self.out.push_str("\n\n");
        } else if name_in(&name, n, INLINE_TAGS) {
            if !closing && is("a") && has_href(&self.s[name_end..end]) {
                self.links = self.links.saturating_add(1);
            }
        } else {
            if !closing && is("img") {
                self.images = self.images.saturating_add(1);
            }
            self.push_space();
        }
        after
    }

    /// Index of the `>` closing a tag whose attributes start at `i`.
    fn tag_end(&mut self, i: usize) -> Option<usize> {
        if self.quotes_ok {
            // A quote opens an attribute value only right after '=' (spaces
            // allowed), so "don't" in an unquoted value does not start one.
            let mut quote = None;
            let mut prev = 0u8;
            for (k, &c) in self.b.iter().enumerate().skip(i) {
                match quote {
                    Some(q) if c == q => {
                        quote = None;
                        prev = c;
                    }
                    Some(_) => {}
                    None if c == b'>' => return Some(k),
                    None if (c == b'"' || c == b'\'') && prev == b'=' => quote = Some(c),
                    None if c.is_ascii_whitespace() => {}
                    None => prev = c,
                }
            }
            self.quotes_ok = false;
        }
        find(self.s, i, ">")
    }

    /// Skips the content of a raw-text element up to and including its end tag.
    fn skip_raw_text(&mut self, mut i: usize, name: &[u8]) -> usize {
        let b = self.b;
        while let Some(p) = find(self.s, i, "</") {
            let n = p + 2;
            let matches = b.len() >= n + name.len()
                && b[n..n + name.len()].eq_ignore_ascii_case(name)
                && !b.get(n + name.len()).is_some_and(|c| is_name_byte(*c));
            if matches {
                self.push_space();
                return find(self.s, n, ">").map_or(b.len(), |e| e + 1);
            }
            i = n;
        }
        b.len()
    }

    fn push_space(&mut self) {
        if !self.out.ends_with([' ', '\n']) && !self.out.is_empty() {
            self.out.push(' ');
        }
    }

    /// Appends a text chunk: entities decoded, HTML whitespace (which includes
    /// newlines) collapsed to single spaces.
    fn text(&mut self, t: &str) {
        let b = t.as_bytes();
        let mut run = 0;
        let mut k = 0;
        while k < b.len() {
            let c = b[k];
            if c.is_ascii_whitespace() {
                self.out.push_str(&t[run..k]);
                self.push_space();
                k += 1;
                run = k;
            } else if c == b'&' {
                self.out.push_str(&t[run..k]);
                k = decode_entity(t, k, &mut self.out);
                run = k;
            } else {
                k += 1;
            }
        }
        self.out.push_str(&t[run..]);
    }
}

fn find(s: &str, from: usize, pat: &str) -> Option<usize> {
    s.get(from..)?.find(pat).map(|p| from + p)
}

/// Does an `<a …>` tag's attribute text hold an `href` attribute?
fn has_href(attrs: &str) -> bool {
    attrs
        .as_bytes()
        .windows(4)
        .any(|w| w.eq_ignore_ascii_case(b"href"))
}

/// Entity decoding alone, for text that is not HTML.
fn decode_entities(s: &str) -> Cow<'_, str> {
    let Some(first) = s.find('&') else {
        return Cow::Borrowed(s);
    };
    let mut out = String::with_capacity(s.len());
    out.push_str(&s[..first]);
    let mut i = first;
    while let Some(p) = find(s, i, "&") {
        out.push_str(&s[i..p]);
        i = decode_entity(s, p, &mut out);
    }
    out.push_str(&s[i..]);
    Cow::Owned(out)
}

const ENTITIES: &[(&str, &str)] = &[
    ("amp", "&"),
    ("lt", "<"),
    ("gt", ">"),
    ("quot", "\""),
    ("apos", "'"),
    ("nbsp", "\u{A0}"),
    ("thinsp", "\u{2009}"),
    ("ensp", "\u{2002}"),
    ("emsp", "\u{2003}"),
    ("shy", "\u{AD}"),
    ("mdash", "—"),
    ("ndash", "–"),
    ("minus", "−"),
    ("laquo", "«"),
    ("raquo", "»"),
    ("lsquo", "‘"),
    ("rsquo", "’"),
    ("sbquo", "‚"),
    ("ldquo", "“"),
    ("rdquo", "”"),
    ("bdquo", "„"),
    ("hellip", "…"),
    ("copy", "©"),
    ("reg", "®"),
    ("trade", "™"),
    ("deg", "°"),
    ("times", "×"),
    ("middot", "·"),
    ("bull", "•"),
    ("euro", "€"),
    ("para", "¶"),
    ("sect", "§"),
    ("numero", "№"),
];

/// Decodes the entity at the `&` at `i` into `out` and returns the index after
/// it; an unknown or malformed entity is kept as a literal `&`.
fn decode_entity(t: &str, i: usize, out: &mut String) -> usize {
    let b = t.as_bytes();
    if b.get(i + 1) == Some(&b'#') {
        let hex = matches!(b.get(i + 2), Some(b'x' | b'X'));
        let start = if hex { i + 3 } else { i + 2 };
        let mut k = start;
        let mut value: u32 = 0;
        while let Some(&c) = b.get(k) {
            let Some(d) = char::from(c).to_digit(if hex { 16 } else { 10 }) else {
                break;
            };
            // Saturate: anything past U+10FFFF is invalid anyway.
            value = value
                .saturating_mul(if hex { 16 } else { 10 })
                .saturating_add(d)
                .min(0x11_0000);
            k += 1;
        }
        if k > start {
            let c = char::from_u32(value)
                .filter(|c| *c != '\0')
                .unwrap_or('\u{FFFD}');
            out.push(c);
            return if b.get(k) == Some(&b';') { k + 1 } else { k };
        }
    } else {
        let mut k = i + 1;
        while k < b.len() && k - i <= 8 && b[k].is_ascii_alphanumeric() {
            k += 1;
        }
        if b.get(k) == Some(&b';') {
            let name = &t[i + 1..k];
            if let Some((_, v)) = ENTITIES.iter().find(|(n, _)| *n == name) {
                out.push_str(v);
                return k + 1;
            }
        }
    }
    out.push('&');
    i + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strip(s: &str) -> Stripped<'_> {
        super::strip(s, &mut || true)
    }

    #[test]
    fn a_pass_of_many_tags_calls_progress_and_stops_when_told() {
        let s = "<p>".repeat(super::super::MARKUP_BYTES_PER_CHECK);
        let mut calls = 0;
        let r = super::strip(&s, &mut || {
            calls += 1;
            calls < 2
        });
        assert_eq!(calls, 2);
        assert!(r.text.len() < s.len());
    }

    fn vis(s: &str) -> (String, u32, u32) {
        let r = strip(s);
        (r.text.into_owned(), r.images, r.links)
    }

    #[test]
    fn detection() {
        assert!(looks_like_html("<p>x</p>"));
        assert!(looks_like_html("a<br>b"));
        assert!(looks_like_html("x <!-- c -->"));
        assert!(looks_like_html("text</foo>"));
        assert!(looks_like_html("<IMG SRC=x>"));
        assert!(!looks_like_html("если a<b и b>c"));
        assert!(!looks_like_html("1 < 2, x<y"));
        assert!(!looks_like_html("plain\n\ntext"));
        assert!(looks_like_html("<p class=x>y"));
        assert!(looks_like_html("<img hidden>"));
        assert!(!looks_like_html("<img hidden"));
        assert!(!looks_like_html("x <b"));
    }

    #[test]
    fn scripts_styles_comments_dropped() {
        let (t, ..) = vis("<p>a<script>var x = '<p>';</script>b<style>p{}</style>c<!-- d -->e</p>");
        // a comment joins its neighbours, as in a browser
        assert_eq!(t.split_whitespace().collect::<Vec<_>>(), ["a", "b", "ce"]);
        let (t, ..) = vis("<p>keep</p><SCRIPT type=x>evil</ScRiPt >tail");
        assert!(t.contains("keep") && t.contains("tail") && !t.contains("evil"));
    }

    #[test]
    fn unterminated_constructs_drop_the_rest() {
        assert_eq!(vis("<p>a</p><script>var x = 1; never closed").0.trim(), "a");
        assert_eq!(vis("<p>a</p><script").0.trim(), "a");
        assert_eq!(vis("<p>a</p><!-- open").0.trim(), "a");
        assert_eq!(vis("<p>a</p><div class=\"x").0.trim(), "a");
    }

    #[test]
    fn counts() {
        let (_, img, links) = vis(
            "<p><img src=a.png><IMG src='b'> <a href=\"x\">x</a> <a name=y>y</a> <A HREF=z>z</A></p>",
        );
        assert_eq!((img, links), (2, 2));
    }

    #[test]
    fn blocks_become_paragraphs() {
        let (t, ..) = vis("<h1>T</h1><p>one\ntwo</p><ul><li>x</li><li>y</li></ul>a<br>b<br><br>c");
        let paras: Vec<&str> = t
            .split("\n\n")
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .collect();
        assert_eq!(paras, ["T", "one two", "x", "y", "a\nb", "c"]);
        assert_eq!(
            vis("<b>Hel</b>lo <td>a</td><td>b</td>").0.trim(),
            "Hello a b"
        );
    }

    #[test]
    fn entities() {
        let (t, ..) = vis("<p>&amp; &lt;b&gt; &quot;q&quot; &apos; &nbsp;&mdash;&ndash;&laquo;&raquo;&hellip;&copy; &#1025; &#x41; &#65 &bogus; &amp</p>");
        assert_eq!(t.trim(), "& <b> \"q\" ' \u{a0}—–«»…© Ё A A &bogus; &amp");
        let (t, ..) = vis("<p>&#0; &#xFFFFFFFFFFFF; &#xD800; &#99999999999999999999;</p>");
        assert_eq!(t.trim(), "\u{FFFD} \u{FFFD} \u{FFFD} \u{FFFD}");
    }

    #[test]
    fn plain_text_entities() {
        let r = strip("AT&T &amp; Co &laquo;x&raquo;\n\nnext &#x41;");
        assert!(!r.html);
        assert_eq!(r.text, "AT&T & Co «x»\n\nnext A");
        assert!(matches!(strip("no entities\n").text, Cow::Borrowed(_)));
    }

    #[test]
    fn quotes_in_attributes() {
        assert_eq!(vis("<p title=\"a>b\">x</p>").0.trim(), "x");
        // an unbalanced quote falls back to the first '>'
        assert_eq!(vis("<p title=\"a>x</p>").0.trim(), "x");
        assert_eq!(vis("<p alt=don't>x</p><p>y'z</p>").0.trim(), "x\n\n\n\ny'z");
    }

    #[test]
    fn broken_html_is_linear() {
        let s = "<p>".to_string() + &"<a x=\"".repeat(50_000) + &"<b>y</b>".repeat(50_000);
        let (t, ..) = vis(&s);
        assert!(t.len() < s.len());
        let s = "< <<<<".repeat(50_000) + "<p>";
        let _ = vis(&s);
        let s = "<p>".to_string() + &"<script>".repeat(50_000);
        let _ = vis(&s);
        let s = "<p>".to_string() + &"</scrip".repeat(50_000);
        let _ = vis(&s);
    }
}
