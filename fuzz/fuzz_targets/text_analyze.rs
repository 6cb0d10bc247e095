//! `text::analyze` on arbitrary bytes read as UTF-8 (lossily), under options
//! picked by the first byte: never a panic, and every analysed document keeps the
//! invariants the decoders check (it encodes, decodes and prints back as itself).
#![no_main]

use libfuzzer_sys::fuzz_target;
use pg_dedup::doctext::{from_text, to_text};
use pg_dedup::document::{Document, MAX_TERM_BYTES};
use pg_dedup::text::{analyze, fingerprint, numbers, tokens, AnalyzeOptions, Lang};

fuzz_target!(|data: &[u8]| {
    let Some((&head, rest)) = data.split_first() else {
        return;
    };
    let lang = [Lang::Auto, Lang::Russian, Lang::English, Lang::Simple][(head & 3) as usize];
    let opts = AnalyzeOptions {
        lang,
        min_word_length: ((head >> 2) & 7) as usize,
    };
    let text = String::from_utf8_lossy(rest);
    // The first line is the title when the option byte says so.
    let (title, body) = match (head & 0x80 != 0, text.split_once('\n')) {
        (true, Some((t, b))) => (Some(t), b),
        _ => (None, &*text),
    };
    let d = analyze(body, title, Some(i64::MAX), Some("fuzz"), &opts);
    for list in [&d.terms, &d.title_terms] {
        assert!(list.windows(2).all(|w| w[0].term < w[1].term));
        assert!(list
            .iter()
            .all(|t| t.tf >= 1 && !t.term.is_empty() && t.term.len() <= MAX_TERM_BYTES));
    }
    assert_eq!(tokens(body, &opts).len() as u64, d.length());
    assert_eq!(d.fingerprint, fingerprint(body));
    assert_eq!(d.numbers, numbers(body));
    assert_eq!(Document::decode(&d.encode()).unwrap(), d);
    assert_eq!(from_text(&to_text(&d)).unwrap(), d);
});
