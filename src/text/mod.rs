//! Text analysis: from a news body (HTML, Telegram markdown or plain text) to the
//! [`Document`] model. Pure Rust, no pgrx.
//!
//! Pipeline: markup removal ([`html`], then [`markdown`]) and the folds of
//! [`fold`] (one spelling for one visible text) give the visible text;
//! [`segment`] splits it into paragraphs and sentences; Unicode word segmentation
//! gives words, which [`words`] turns into stems; [`numbers`] and [`fingerprint`]
//! read the same visible text. Every public function here applies the same markup
//! removal first, so `tokens(body)`, `numbers(body)` and `fingerprint(body)` agree
//! with what `analyze(body, …)` stores. Nothing here panics, whatever the input.
//!
//! [`analyze`], [`tokens`] and [`fingerprint`] have `_checked` forms that call a
//! cancellation check ([`crate::interrupt`]) as they go: after markup removal,
//! every [`WORDS_PER_CHECK`] words (and sentences) while they segment and stem,
//! and between the later stages. What runs between two calls is at most one pass
//! of markup removal or of the number scan over the whole text (each above
//! 500 MB/s in a release build), the word split of one run of text without
//! whitespace, or the sort of the distinct terms; all bounded by the size limit of
//! the caller (`dedup.max_document_bytes`, at most 1 GB).

mod fingerprint;
mod fold;
mod html;
mod lookalike;
mod markdown;
mod numbers;
mod segment;
mod stopwords;
mod words;
mod wordsplit;

use std::borrow::Cow;
use std::ops::ControlFlow;

use xxhash_rust::xxh3::xxh3_64;

use crate::document::{Document, Segment, Term, TermFreq};
use crate::error::{DedupError, Result};
use crate::interrupt::{finished, unstoppable, Check, Pacer};
use words::{Outcome, Stems};
use xxhash_rust::xxh3::Xxh3Default;

/// Text-search configuration, chosen per collection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    /// Per word: Cyrillic words get the Russian stemmer, Latin words the English
    /// one, anything else (Greek, CJK, mixed scripts) stays unstemmed.
    Auto,
    /// Russian stemmer for every word.
    Russian,
    /// English stemmer for every word.
    English,
    /// No stemming and no stop words, like PostgreSQL's `simple` configuration.
    Simple,
}

impl Lang {
    /// Parses `auto`, `russian`, `english` or `simple`, in any case.
    pub fn parse(s: &str) -> Result<Lang> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Ok(Lang::Auto),
            "russian" => Ok(Lang::Russian),
            "english" => Ok(Lang::English),
            "simple" => Ok(Lang::Simple),
            _ => Err(DedupError::InvalidParameter {
                msg: format!("unknown language \"{}\"", crate::error::excerpt(s)),
                hint: Some("valid values are: auto, russian, english, simple".into()),
            }),
        }
    }
}

/// How words become terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AnalyzeOptions {
    pub lang: Lang,
    /// Words shorter than this many chars (counted after lower-casing, before
    /// stemming) are dropped; 0 and 1 keep every word.
    pub min_word_length: usize,
}

/// Visible text of a body plus the counts markup removal made.
struct Visible<'a> {
    text: Cow<'a, str>,
    /// The script of most of its letters, which look-alike words are read in.
    majority: lookalike::Majority,
    images: u32,
    links: u32,
}

/// Markup removal: HTML if it looks like HTML, then invisible characters
/// ([`fold::invisible`]: Unicode word segmentation takes them for a break or keeps
/// them inside a word although they show nothing: "Ку\u{200B}рс" is the word
/// "Курс", and a copy sprinkled with them is still a copy), then Telegram
/// markdown, then the letter folds ([`fold::letters`]: compatibility letters,
/// letters composed with their marks); and the text's majority script. Plain
/// text that needs none is borrowed, not copied.
fn visible(input: &str) -> Visible<'_> {
    finished(visible_checked(
        input,
        &mut Pacer::new(&mut unstoppable(), 1),
    ))
}

/// [`visible`], calling the pacer's check about once per [`MARKUP_BYTES_PER_CHECK`]
/// bytes of a markup pass (a text of many small tags or links is many steps
/// between words); stops at its first error.
fn visible_checked<'t, E>(
    input: &'t str,
    pacer: &mut Pacer<'_, '_, E>,
) -> std::result::Result<Visible<'t>, E> {
    let mut stopped = None;
    let mut progress = || match pacer.now() {
        Ok(()) => true,
        Err(e) => {
            stopped = Some(e);
            false
        }
    };
    let h = html::strip(input, &mut progress);
    // In HTML, bare URLs are the labels of already counted <a href> tags.
    let count_bare_urls = !h.html;
    // Invisible characters go before markdown reads links ("ht\u{200B}tps://");
    // letters are composed with their marks after it, when no markup is left
    // between them ("сто`\u{301}ит").
    let unseen = match h.text {
        Cow::Borrowed(s) => fold::invisible(s, &mut progress),
        Cow::Owned(s) => match fold::invisible(&s, &mut progress) {
            Cow::Owned(o) => Cow::Owned(o),
            Cow::Borrowed(_) => Cow::Owned(s),
        },
    };
    let (text, md_links) = match unseen {
        Cow::Borrowed(s) => markdown::clean(s, count_bare_urls, &mut progress),
        Cow::Owned(s) => match markdown::clean(&s, count_bare_urls, &mut progress) {
            (Cow::Owned(o), n) => (Cow::Owned(o), n),
            (Cow::Borrowed(_), n) => (Cow::Owned(s), n),
        },
    };
    let text = match text {
        Cow::Borrowed(s) => fold::letters(s, &mut progress),
        Cow::Owned(s) => match fold::letters(&s, &mut progress) {
            Cow::Owned(o) => Cow::Owned(o),
            Cow::Borrowed(_) => Cow::Owned(s),
        },
    };
    let majority = lookalike::majority(&text, &mut progress);
    if let Some(e) = stopped {
        return Err(e);
    }
    pacer.now()?;
    Ok(Visible {
        text,
        majority,
        images: h.images,
        links: h.links.saturating_add(md_links),
    })
}

/// Bytes of a markup pass between two calls of the check: about a millisecond.
pub const MARKUP_BYTES_PER_CHECK: usize = 1 << 20;

/// Words (and sentences) between two calls of the check of a `_checked`
/// function: about 30 kB of prose, under a millisecond.
pub const WORDS_PER_CHECK: u64 = 4096;

/// Calls `on` with every word token of `text`, then `SentenceEnd` after each
/// sentence and `ParagraphEnd` after each paragraph (a segment may hold no kept
/// token; the caller drops those). Ticks `pacer` once per word and per sentence,
/// and stops at its first error.
fn walk<'t, E>(
    text: &'t str,
    stems: &mut Stems<'t>,
    pacer: &mut Pacer<'_, '_, E>,
    mut on: impl FnMut(&Stems<'t>, Event),
) -> std::result::Result<(), E> {
    let mut stopped = None;
    let mut tick = |pacer: &mut Pacer<'_, '_, E>| match pacer.tick(1) {
        Ok(()) => ControlFlow::Continue(()),
        Err(e) => {
            stopped = Some(e);
            ControlFlow::Break(())
        }
    };
    // Splitting each sentence yields the same tokens as splitting the whole text
    // (see `wordsplit`), which keeps `analyze`'s fingerprint equal to `fingerprint`.
    let _ = segment::for_each_paragraph(text, |p| {
        segment::for_each_sentence(p, |s| {
            wordsplit::for_each_word(s, |w| {
                let t = stems.token(w);
                on(stems, Event::Token(t));
                tick(pacer)
            })?;
            on(stems, Event::SentenceEnd);
            tick(pacer)
        })?;
        on(stems, Event::ParagraphEnd);
        ControlFlow::Continue(())
    });
    match stopped {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

#[derive(Clone, Copy)]
enum Event {
    Token(words::Token),
    SentenceEnd,
    ParagraphEnd,
}

/// Stems of `text` in text order: markup removed, segmented, lower-cased, `ё`→`е`,
/// stop words removed (except for [`Lang::Simple`]), words shorter than
/// `min_word_length` chars dropped, stemmed, stems longer than
/// [`crate::document::MAX_TERM_BYTES`] bytes dropped. Equals the multiset of
/// `analyze(text, …).terms`.
pub fn tokens(text: &str, opts: &AnalyzeOptions) -> Vec<String> {
    finished(tokens_checked(text, opts, &mut unstoppable()))
}

/// [`tokens`], calling `check` as the module doc says; stops at its first error.
pub fn tokens_checked<E>(
    text: &str,
    opts: &AnalyzeOptions,
    check: &mut Check<'_, E>,
) -> std::result::Result<Vec<String>, E> {
    let mut pacer = Pacer::new(check, WORDS_PER_CHECK);
    let vis = visible_checked(text, &mut pacer)?;
    let mut stems = Stems::new(opts, vis.majority);
    let mut ids = Vec::new();
    walk(&vis.text, &mut stems, &mut pacer, |_, e| {
        if let Event::Token(t) = e {
            if let Outcome::Kept(id) = t.outcome {
                ids.push(id);
            }
        }
    })?;
    Ok(ids
        .iter()
        .filter_map(|&id| stems.stems.get(id as usize).map(|s| s.to_string()))
        .collect())
}

/// 128-bit hash of the normalised word sequence of `text`: markup, case,
/// punctuation and whitespace do not matter; words are not stemmed and stop words
/// and numbers are kept. 0 for a text without words.
pub fn fingerprint(text: &str) -> u128 {
    let vis = visible(text);
    fingerprint::of_visible(&vis.text, vis.majority)
}

/// [`fingerprint`], calling `check` as the module doc says; stops at its first
/// error.
pub fn fingerprint_checked<E>(
    text: &str,
    check: &mut Check<'_, E>,
) -> std::result::Result<u128, E> {
    let mut pacer = Pacer::new(check, WORDS_PER_CHECK);
    let vis = visible_checked(text, &mut pacer)?;
    fingerprint::of_visible_checked(&vis.text, vis.majority, &mut pacer)
}

/// Numbers of `text` (after markup removal), normalised, in text order; see
/// the `numbers` module for the rules ("3,5" → "3.5", "1 000" → "1000").
pub fn numbers(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    numbers::scan(&visible(text).text, &mut out);
    out
}

/// Sorted, unique terms with frequencies from stem ids; returns the terms and the
/// map from stem id to term index.
fn term_table(stems: &[Term], counts: &[u32]) -> (Vec<TermFreq>, Vec<u32>) {
    let mut order: Vec<usize> = (0..stems.len()).collect();
    order.sort_unstable_by(|&a, &b| stems[a].cmp(&stems[b]));
    let mut remap = vec![0u32; stems.len()];
    let mut terms = Vec::with_capacity(order.len());
    for &id in &order {
        let tf = counts.get(id).copied().unwrap_or(0);
        if tf == 0 {
            continue;
        }
        remap[id] = u32::try_from(terms.len()).unwrap_or(u32::MAX);
        terms.push(TermFreq {
            term: stems[id].clone(),
            tf,
        });
    }
    (terms, remap)
}

/// Title terms: the title's stems, counted.
fn title_terms<E>(
    title: &str,
    opts: &AnalyzeOptions,
    pacer: &mut Pacer<'_, '_, E>,
) -> std::result::Result<Vec<TermFreq>, E> {
    let vis = visible_checked(title, pacer)?;
    let mut stems = Stems::new(opts, vis.majority);
    let mut counts: Vec<u32> = Vec::new();
    walk(&vis.text, &mut stems, pacer, |_, e| {
        if let Event::Token(words::Token {
            outcome: Outcome::Kept(id),
            ..
        }) = e
        {
            let id = id as usize;
            if counts.len() <= id {
                counts.resize(id + 1, 0);
            }
            counts[id] = counts[id].saturating_add(1);
        }
    })?;
    Ok(term_table(&stems.stems, &counts).0)
}

/// Builds the full document model of a body and an optional title.
pub fn analyze(
    body: &str,
    title: Option<&str>,
    published_at: Option<i64>,
    source: Option<&str>,
    opts: &AnalyzeOptions,
) -> Document {
    finished(analyze_checked(
        body,
        title,
        published_at,
        source,
        opts,
        &mut unstoppable(),
    ))
}

/// [`analyze`], calling `check` as the module doc says; stops at its first error.
pub fn analyze_checked<E>(
    body: &str,
    title: Option<&str>,
    published_at: Option<i64>,
    source: Option<&str>,
    opts: &AnalyzeOptions,
    check: &mut Check<'_, E>,
) -> std::result::Result<Document, E> {
    let mut pacer = Pacer::new(check, WORDS_PER_CHECK);
    let vis = visible_checked(body, &mut pacer)?;
    let text: &str = &vis.text;

    let mut stems = Stems::for_text(opts, text.len(), vis.majority);
    let mut counts: Vec<u32> = Vec::new();
    let mut words: u32 = 0;
    let mut sentences = Vec::new();
    let mut paragraphs = Vec::new();
    // Segment state: stem ids and the stems joined by ' ' (the hash key).
    let (mut s_ids, mut s_key) = (Vec::new(), String::new());
    let (mut p_ids, mut p_key) = (Vec::<u32>::new(), String::new());
    // The fingerprint, hashed as the words go by (see `fingerprint::of_visible`).
    let mut fp = Xxh3Default::new();
    let mut fp_any = false;
    // The trigrams of the first distinct words, as the fingerprint reads them.
    let mut tri = crate::trigrams::Collector::new();
    walk(text, &mut stems, &mut pacer, |st, e| match e {
        Event::Token(t) => {
            let norm = st.norm(t);
            if !norm.is_empty() {
                if fp_any {
                    fp.update(b" ");
                }
                fp_any = true;
                fp.update(norm.as_bytes());
                tri.word(norm);
            }
            match t.outcome {
                Outcome::NotWord => {}
                Outcome::Dropped => words = words.saturating_add(1),
                Outcome::Kept(id) => {
                    words = words.saturating_add(1);
                    let i = id as usize;
                    if counts.len() <= i {
                        counts.resize(i + 1, 0);
                    }
                    counts[i] = counts[i].saturating_add(1);
                    if !s_ids.is_empty() {
                        s_key.push(' ');
                    }
                    s_key.push_str(st.stem(id));
                    s_ids.push(id);
                }
            }
        }
        Event::SentenceEnd => {
            if !s_ids.is_empty() {
                if !p_ids.is_empty() {
                    p_key.push(' ');
                }
                p_key.push_str(&s_key);
                p_ids.extend_from_slice(&s_ids);
                sentences.push(Segment {
                    hash: xxh3_64(s_key.as_bytes()),
                    terms: std::mem::take(&mut s_ids),
                });
                s_key.clear();
            }
        }
        Event::ParagraphEnd => {
            if !p_ids.is_empty() {
                paragraphs.push(Segment {
                    hash: xxh3_64(p_key.as_bytes()),
                    terms: std::mem::take(&mut p_ids),
                });
                p_key.clear();
            }
        }
    })?;
    pacer.now()?;

    let (terms, remap) = term_table(&stems.stems, &counts);
    for seg in sentences.iter_mut().chain(paragraphs.iter_mut()) {
        for t in &mut seg.terms {
            *t = remap.get(*t as usize).copied().unwrap_or(0);
        }
    }
    pacer.now()?;
    let mut nums = Vec::new();
    numbers::scan(text, &mut nums);
    pacer.now()?;
    let title_terms = match title {
        Some(t) => title_terms(t, opts, &mut pacer)?,
        None => Vec::new(),
    };

    Ok(Document {
        analyzer: crate::document::ANALYZER_VERSION,
        terms,
        title_terms,
        numbers: nums,
        sentences,
        paragraphs,
        images: vis.images,
        links: vis.links,
        published_at,
        source: source.map(str::to_owned),
        words,
        fingerprint: if fp_any { fp.digest128() } else { 0 },
        trigrams: Some(tri.finish()),
    })
}

#[cfg(test)]
mod tests;
