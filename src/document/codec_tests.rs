//! Tests of the binary form of `dedup.document` (`Document::encode`, `decode`,
//! `skim`): round trips, the content hash, hostile bytes and their memory bounds.

use super::*;
use crate::error::DedupError;

/// A document with every field set (also used by the text form's tests).
pub(crate) fn sample() -> Document {
    Document {
        analyzer: 1,
        // Sorted by bytes: Latin before Cyrillic.
        terms: vec![
            TermFreq {
                term: "run".into(),
                tf: 1,
            },
            TermFreq {
                term: "книг".into(),
                tf: 2,
            },
        ],
        title_terms: vec![TermFreq {
            term: "книг".into(),
            tf: 1,
        }],
        numbers: vec!["3.5".into(), "1000000".into()],
        sentences: vec![Segment {
            hash: 7,
            terms: vec![0, 1, 1],
        }],
        paragraphs: vec![Segment {
            hash: 9,
            terms: vec![1, 0],
        }],
        images: 2,
        links: 3,
        published_at: Some(784_111_777_123_456),
        source: Some("tass".into()),
        words: 5,
        fingerprint: 0x0123_4567_89ab_cdef_0011_2233_4455_6677,
        // As documents stored before 0.2.0's trigrams: their bytes stay as they were.
        trigrams: None,
    }
}

#[test]
fn binary_round_trip_and_truncation() {
    let d = sample();
    let b = d.encode();
    assert_eq!(Document::decode(&b).unwrap(), d);
    for n in 0..b.len() {
        assert!(Document::decode(&b[..n]).is_err(), "prefix {n} decoded");
    }
    let mut extra = b.clone();
    extra.push(0);
    assert!(Document::decode(&extra).is_err());
    let mut v = b.clone();
    v[0] = 99;
    assert!(Document::decode(&v).is_err());
}

#[test]
fn content_hash_names_the_bytes_and_version_1_still_reads() {
    use crate::document::{content_key, stored_key, FORMAT_VERSION_1, HEADER_LEN};
    let d = sample();
    let b = d.encode();
    // The key is readable from the header alone, and is the hash of the body.
    let key = stored_key(&b[..HEADER_LEN]).unwrap();
    assert_eq!(key, xxhash_rust::xxh3::xxh3_128(&b[HEADER_LEN..]));
    assert_eq!(content_key(&b), key);
    // Any flipped byte after the header is caught by the hash.
    for i in [HEADER_LEN, b.len() / 2, b.len() - 1] {
        let mut x = b.clone();
        x[i] ^= 0x40;
        assert!(Document::decode(&x).is_err(), "byte {i}");
    }
    let mut x = b.clone();
    x[3] ^= 1;
    assert!(Document::decode(&x).is_err(), "a wrong hash is refused");
    // The same document in version 1: no hash, keyed by all its bytes.
    let mut v1 = vec![FORMAT_VERSION_1];
    v1.extend_from_slice(&b[HEADER_LEN..]);
    assert_eq!(Document::decode(&v1).unwrap(), d);
    assert_eq!(stored_key(&v1), None);
    assert_eq!(content_key(&v1), xxhash_rust::xxh3::xxh3_128(&v1));
}

#[test]
fn decode_never_panics_on_junk() {
    use crate::document::MAX_DECODE_EXPANSION;
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for len in 0..400 {
        // Version 1 reaches the parser directly; version 2 with a matching hash
        // reaches it past the hash check.
        let mut buf = vec![crate::document::FORMAT_VERSION_1];
        for _ in 0..len {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            buf.push(x as u8);
        }
        let _ = Document::decode(&buf);
        let mut v2 = vec![crate::document::FORMAT_VERSION];
        v2.extend_from_slice(&xxhash_rust::xxh3::xxh3_128(&buf[1..]).to_le_bytes());
        v2.extend_from_slice(&buf[1..]);
        let _ = Document::decode(&v2);
        let _ = Document::skim(&buf);
        if let Ok(d) = Document::decode(&v2) {
            assert_eq!(Document::skim(&v2).unwrap(), crate::document::Skim::of(&d));
            assert!(d.heap_bytes() <= MAX_DECODE_EXPANSION * v2.len());
        }
        for e in [Document::decode(&buf), Document::decode(&v2)]
            .into_iter()
            .filter_map(|r| r.err())
        {
            assert_eq!(e.sqlstate(), "22P03", "{e}");
        }
    }
    // Every cut and every byte flipped in a real analysed document: never a
    // panic, always 22P03 (version 1, so the hash does not catch them first).
    let body = "Минфин 3,5 млрд рублей. The bank said 1 000 000 runs.\n\nSecond paragraph here.";
    let opts = crate::text::AnalyzeOptions {
        lang: crate::text::Lang::Auto,
        min_word_length: 1,
    };
    let d = crate::text::analyze(body, Some("Title"), Some(5), Some("src"), &opts);
    let mut v1 = vec![crate::document::FORMAT_VERSION_1];
    v1.extend_from_slice(&d.encode()[crate::document::HEADER_LEN..]);
    assert_eq!(Document::decode(&v1).unwrap(), d);
    for n in 0..v1.len() {
        assert_eq!(Document::decode(&v1[..n]).unwrap_err().sqlstate(), "22P03");
        assert_eq!(Document::skim(&v1[..n]).unwrap_err().sqlstate(), "22P03");
    }
    for i in 1..v1.len() {
        for flip in [0x01u8, 0x80, 0xff] {
            let mut b = v1.clone();
            b[i] ^= flip;
            match Document::decode(&b) {
                Ok(d) => assert!(d.heap_bytes() <= MAX_DECODE_EXPANSION * b.len()),
                Err(e) => assert_eq!(e.sqlstate(), "22P03"),
            }
            let _ = Document::skim(&b);
        }
    }
}

pub(crate) fn put_var(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A version-2 document: the version, the content hash of `body`, `body`.
pub(crate) fn v2(body: &[u8]) -> Vec<u8> {
    let mut b = vec![crate::document::FORMAT_VERSION];
    b.extend_from_slice(&xxhash_rust::xxh3::xxh3_128(body).to_le_bytes());
    b.extend_from_slice(body);
    b
}

/// Flags 0, images, links, words 0, fingerprint 0: the body up to the term lists.
pub(crate) fn empty_head() -> Vec<u8> {
    let mut b = vec![0u8, 0, 0, 0];
    b.extend_from_slice(&[0u8; 16]);
    b
}

/// The reproduction of issue #17: body terms whose entry i shares i bytes with
/// the previous term and adds one, so n entries of ~5 bytes decode (without a
/// bound on term length) into n²/2 bytes of terms.
fn growing_prefix_bomb(n: u64) -> Vec<u8> {
    let mut b = empty_head();
    put_var(&mut b, n);
    for i in 0..n {
        put_var(&mut b, i);
        put_var(&mut b, 1);
        b.push(b'a');
        put_var(&mut b, 1);
    }
    b.extend_from_slice(&[0, 0, 0, 0]);
    v2(&b)
}

/// Peak resident set of this process, in KiB.
fn max_rss_kib() -> i64 {
    // SAFETY: getrusage writes one rusage into the zeroed struct we own.
    unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        u.ru_maxrss
    }
}

#[test]
fn growing_prefix_bomb_is_rejected_quickly_and_small() {
    use crate::document::{MAX_DECODE_EXPANSION, MAX_TERM_BYTES};
    // 20,000 entries: 103 KB that decoded into 200 MB of terms before the bound.
    let bomb = growing_prefix_bomb(20_000);
    assert!(bomb.len() < 110_000, "{}", bomb.len());
    let rss = max_rss_kib();
    let t = std::time::Instant::now();
    for _ in 0..10 {
        let e = Document::decode(&bomb).unwrap_err();
        assert_eq!(e.sqlstate(), "22P03");
        assert!(matches!(e, DedupError::InvalidBinary(_)), "{e:?}");
        assert!(e.to_string().contains("longer than 128 bytes"), "{e}");
        let e = Document::skim(&bomb).unwrap_err();
        assert_eq!(e.sqlstate(), "22P03");
        // Version 1 (no hash) reaches the same reader.
        let mut v1 = vec![crate::document::FORMAT_VERSION_1];
        v1.extend_from_slice(&bomb[crate::document::HEADER_LEN..]);
        assert_eq!(Document::decode(&v1).unwrap_err().sqlstate(), "22P03");
    }
    assert!(
        t.elapsed() < std::time::Duration::from_secs(2),
        "{:?}",
        t.elapsed()
    );
    // The old decoder's 200 MB would show in the peak RSS; the bound keeps the
    // decode to a few KB (the slack allows for tests running alongside).
    let grown_mib = (max_rss_kib() - rss) / 1024;
    assert!(grown_mib < 64, "peak RSS grew by {grown_mib} MiB");
    // The same list cut at the bound decodes, within the documented expansion.
    let ok = growing_prefix_bomb(MAX_TERM_BYTES as u64);
    let d = Document::decode(&ok).unwrap();
    assert_eq!(d.terms.len(), MAX_TERM_BYTES);
    assert_eq!(d.terms.last().unwrap().term.len(), MAX_TERM_BYTES);
    assert!(d.heap_bytes() <= MAX_DECODE_EXPANSION * ok.len());
    assert_eq!(Document::skim(&ok).unwrap(), crate::document::Skim::of(&d));
    // One more entry is one byte too long.
    let e = Document::decode(&growing_prefix_bomb(MAX_TERM_BYTES as u64 + 1)).unwrap_err();
    assert_eq!(e.sqlstate(), "22P03");
}

#[test]
fn counts_beyond_what_the_bytes_hold_are_refused_before_reserving() {
    // Each claims more items than the bytes left could hold at their smallest
    // size (3 bytes a term entry, 2 a number, 9 a segment).
    let mut terms = empty_head();
    put_var(&mut terms, 10);
    terms.extend_from_slice(&[0u8; 29]);
    let mut numbers = empty_head();
    numbers.extend_from_slice(&[0, 0]);
    put_var(&mut numbers, 10);
    numbers.extend_from_slice(&[0u8; 19]);
    let mut huge = empty_head();
    put_var(&mut huge, u64::MAX);
    let mut huge_suffix = empty_head();
    huge_suffix.extend_from_slice(&[1, 0]);
    put_var(&mut huge_suffix, u64::MAX);
    huge_suffix.extend_from_slice(&[b'a', 1, 0, 0, 0, 0]);
    for body in [terms, numbers, huge, huge_suffix] {
        let b = v2(&body);
        assert_eq!(Document::decode(&b).unwrap_err().sqlstate(), "22P03");
        assert_eq!(Document::skim(&b).unwrap_err().sqlstate(), "22P03");
    }
}

#[test]
fn decoded_size_stays_within_the_documented_expansion() {
    use crate::document::{MAX_DECODE_EXPANSION, MAX_TERM_BYTES};
    // The dearest items: 128-byte terms in 4-byte entries, 1-digit numbers,
    // segments of one index each.
    let mut body = empty_head();
    let n_terms = 90u64;
    put_var(&mut body, n_terms);
    // First term: 127 'a' and one byte; then each keeps 127 and changes the last.
    put_var(&mut body, 0);
    put_var(&mut body, MAX_TERM_BYTES as u64);
    body.extend(std::iter::repeat_n(b'a', MAX_TERM_BYTES - 1));
    body.push(b'!');
    put_var(&mut body, 1);
    for i in 1..n_terms {
        put_var(&mut body, MAX_TERM_BYTES as u64 - 1);
        put_var(&mut body, 1);
        body.push(b'!' + i as u8);
        put_var(&mut body, 1);
    }
    put_var(&mut body, 0);
    put_var(&mut body, 1000);
    for _ in 0..1000 {
        body.extend_from_slice(&[1, b'7']);
    }
    for _ in 0..2 {
        put_var(&mut body, 500);
        for _ in 0..500 {
            body.extend_from_slice(&[0u8; 8]);
            body.extend_from_slice(&[1, 0]);
        }
    }
    let b = v2(&body);
    let d = Document::decode(&b).unwrap();
    assert_eq!(d.terms.len(), n_terms as usize);
    assert_eq!(d.numbers.len(), 1000);
    let ratio = d.heap_bytes() as f64 / b.len() as f64;
    assert!(ratio <= MAX_DECODE_EXPANSION as f64, "{ratio}");
    // and the term list alone is close to the bound
    let terms_only = {
        let mut body = body.clone();
        let cut = body.len() - (2 + 2000 + 2 * (2 + 5000));
        body.truncate(cut);
        body.extend_from_slice(&[0, 0, 0]);
        v2(&body)
    };
    let d = Document::decode(&terms_only).unwrap();
    let ratio = d.heap_bytes() as f64 / terms_only.len() as f64;
    assert!(
        ratio > 25.0 && ratio <= MAX_DECODE_EXPANSION as f64,
        "{ratio}"
    );
}

#[test]
fn skim_reads_what_decode_reads() {
    use crate::document::Skim;
    let d = sample();
    let b = d.encode();
    let s = Document::skim(&b).unwrap();
    assert_eq!(s, Skim::of(&d));
    assert_eq!(s.terms.len(), d.terms.len());
    assert_eq!(s.sentences.len(), d.sentences.len());
    assert_eq!(
        Document::skim(&Document::default().encode()).unwrap(),
        Skim::default()
    );
    for n in 0..b.len() {
        assert!(Document::skim(&b[..n]).is_err(), "prefix {n} skimmed");
    }
    let mut extra = b.clone();
    extra.push(0);
    assert!(Document::skim(&extra).is_err());
    let mut flipped = b.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 1;
    assert!(Document::skim(&flipped).is_err());
}

#[test]
fn prefix_key_keeps_four_characters() {
    use crate::document::prefix_key;
    let k = |s: &str| prefix_key(s.as_bytes());
    assert_eq!(k("восьмиэтажк"), k("восьмиэтажн"));
    assert_eq!(k("восьмиэтажк"), k("восьм"));
    assert_ne!(k("восьмиэтажк"), k("вос"));
    assert_eq!(k("alphabet"), k("alph"));
    assert_ne!(k("alp"), k("alph"));
    assert_ne!(k(""), k("a"));
    // Not UTF-8: still four lead bytes kept, the same wherever it is read.
    let (x, y) = (
        [0xff, 0xfe, 0x80, 0x41, 0x42, 0x43],
        [0xff, 0xfe, 0x80, 0x41, 0x42, 0x44],
    );
    assert_eq!(prefix_key(&x), prefix_key(&y));
    assert_eq!(prefix_key(&x), prefix_key(&x[..5]));
}

#[test]
fn trigrams_are_optional_and_old_bytes_unchanged() {
    use crate::document::Skim;
    // Without trigrams, the bytes are those of a build that knew nothing of them:
    // flag bit 3 clear, nothing after the paragraphs.
    let old = sample();
    let b = old.encode();
    assert_eq!(b[HEADER_LEN] & 8, 0);
    assert_eq!(Document::decode(&b).unwrap().trigrams, None);
    let with = Document {
        trigrams: Some(crate::trigrams::Trigrams {
            keys: vec![0, 1, 7, 300, 40_000, 65_535],
            lens: vec![2, 4],
        }),
        ..sample()
    };
    let bt = with.encode();
    assert_eq!(bt[HEADER_LEN] & 8, 8);
    // The same bytes up to the paragraphs' end, apart from the flag and the hash.
    assert_eq!(&bt[HEADER_LEN + 1..b.len()], &b[HEADER_LEN + 1..]);
    assert_eq!(Document::decode(&bt).unwrap(), with);
    assert_eq!(Document::skim(&bt).unwrap(), Skim::of(&with));
    for n in 0..bt.len() {
        assert!(Document::decode(&bt[..n]).is_err(), "prefix {n} decoded");
        assert!(Document::skim(&bt[..n]).is_err(), "prefix {n} skimmed");
    }
    // An empty set is not an absent one.
    let empty = Document {
        trigrams: Some(Default::default()),
        ..sample()
    };
    assert_eq!(Document::decode(&empty.encode()).unwrap(), empty);
}

#[test]
fn bad_trigrams_are_refused() {
    let base = sample().encode();
    let with = |tail: &[u8]| {
        let mut body = base[HEADER_LEN..].to_vec();
        body[0] |= 8;
        body.extend_from_slice(tail);
        v2(&body)
    };
    let ok = Document::decode(&with(&[1, 2, 5, 3])).unwrap();
    assert_eq!(ok.trigrams.unwrap().keys, [5, 8]);
    let too_many_words: Vec<u8> = std::iter::once(33)
        .chain([1u8, 1].iter().copied().cycle().take(66))
        .collect();
    let too_many_keys: Vec<u8> = [1u8, 34].into_iter().chain([1u8; 34]).collect();
    for (tail, why) in [
        (&[1u8, 2, 5, 0][..], "a repeated key"),
        (&[1, 2, 0x80, 0x80, 0x04, 1], "a key past 2^16"),
        (&[1, 2, 0xff, 0xff, 0x03, 1], "a gap past 2^16"),
        (&[1, 3, 1, 1], "fewer keys than counted"),
        (&[2, 1, 5], "fewer words than counted"),
        (&[1, 0], "a word without keys"),
        (&too_many_words, "more words than a document holds"),
        (&too_many_keys, "more keys than a word gives"),
    ] {
        let e = Document::decode(&with(tail)).unwrap_err();
        assert_eq!(e.sqlstate(), "22P03", "{why}");
        assert!(Document::skim(&with(tail)).is_err(), "{why}");
    }
}

#[test]
fn analysis_records_the_opening_words_trigrams() {
    let opts = crate::text::AnalyzeOptions {
        lang: crate::text::Lang::Auto,
        min_word_length: 3,
    };
    // Stop words and short words give no terms but do give trigrams.
    let d = crate::text::analyze("Он и Она в 2024, ЁЛКА!", None, None, None, &opts);
    assert_eq!(
        d.trigrams,
        Some(crate::trigrams::of_words([
            "он", "и", "она", "в", "2024", "елка"
        ]))
    );
    // Repeated words are read once.
    let d2 = crate::text::analyze("Он и Она, и он в 2024. ЁЛКА!", None, None, None, &opts);
    assert_eq!(d2.trigrams, d.trigrams);
    let long: String = (0..5000).map(|i| format!("слово{i} ")).collect();
    let d = crate::text::analyze(&long, None, None, None, &opts);
    let first: Vec<String> = (0..crate::trigrams::MAX_WORDS)
        .map(|i| format!("слово{i}"))
        .collect();
    assert_eq!(
        d.trigrams,
        Some(crate::trigrams::of_words(first.iter().map(String::as_str)))
    );
    assert_eq!(
        crate::text::analyze("", None, None, None, &opts).trigrams,
        Some(Default::default())
    );
}
