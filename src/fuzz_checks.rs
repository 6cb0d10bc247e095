//! The property checks of the fuzz targets (fuzz/fuzz_targets/*.rs, a crate of
//! its own that needs cargo-fuzz), kept here so that the normal test tier runs
//! them too: each target is one call of the function of its name, and the unit
//! test below runs every function over every file of the committed seed corpus
//! of its target (fuzz/corpus/<target>/). Pure Rust, no pgrx.
//!
//! Each function takes arbitrary bytes and panics when a property fails (that is
//! how libFuzzer notices); nothing outside fuzzing and tests calls them.

use crate::codec::{decode_model, encode_model, MAGIC};
use crate::doctext::{from_text, to_text};
use crate::document::{Document, Skim, FORMAT_VERSION, MAX_DECODE_EXPANSION, MAX_TERM_BYTES};
use crate::signature::{Signature, MAX_TEXT_KEYS};
use crate::text::{analyze, fingerprint, numbers, tokens, AnalyzeOptions, Lang};

/// `data` as a version 2 document: its first byte replaced by the version and
/// the hash of the rest filled in. (As given, a leading 1 is version 1, without
/// a content hash, so every byte reaches the parser.)
fn as_version_2(data: &[u8]) -> Vec<u8> {
    let body = data.get(1..).unwrap_or(&[]);
    let mut v2 = vec![FORMAT_VERSION];
    v2.extend_from_slice(&xxhash_rust::xxh3::xxh3_128(body).to_le_bytes());
    v2.extend_from_slice(body);
    v2
}

/// `Document::decode` on arbitrary bytes (what binary COPY hands `document_recv`).
/// Besides not panicking: every refusal is 22P03, and what decodes stays within
/// the documented size, reads back from its own encoding and from its text form,
/// and skims as it decodes.
pub fn document_decode(data: &[u8]) {
    let v2 = as_version_2(data);
    for buf in [data, &v2[..]] {
        match Document::decode(buf) {
            Ok(d) => {
                assert!(d.heap_bytes() <= MAX_DECODE_EXPANSION * buf.len());
                assert_eq!(Document::decode(&d.encode()).unwrap(), d);
                assert_eq!(from_text(&to_text(&d)).unwrap(), d);
                assert_eq!(Document::skim(buf).unwrap(), Skim::of(&d));
                prepared_within_bound(&d);
            }
            Err(e) => assert_eq!(e.sqlstate(), "22P03"),
        }
    }
}

/// `Document::skim` (the trigger's read of stored candidates) on arbitrary bytes:
/// never a panic, every refusal 22P03, and on whatever decodes it reads what
/// decode reads.
pub fn document_skim(data: &[u8]) {
    let v2 = as_version_2(data);
    for buf in [data, &v2[..]] {
        match Document::skim(buf) {
            Ok(s) => {
                if let Ok(d) = Document::decode(buf) {
                    assert_eq!(s, Skim::of(&d));
                }
            }
            Err(e) => {
                assert_eq!(e.sqlstate(), "22P03");
                // What skim refuses, decode refuses too.
                assert!(Document::decode(buf).is_err());
            }
        }
    }
}

/// `doctext::from_text` (what `document_in` gets) on arbitrary bytes: never a
/// panic, every refusal 22P02, and what it accepts prints and reads back as
/// itself, and decodes from its own binary form.
pub fn document_text(data: &[u8]) {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    match from_text(s) {
        Ok(d) => {
            let t = to_text(&d);
            assert_eq!(from_text(&t).unwrap(), d);
            assert_eq!(to_text(&from_text(&t).unwrap()), t);
            assert_eq!(Document::decode(&d.encode()).unwrap(), d);
        }
        Err(e) => assert_eq!(e.sqlstate(), "22P02"),
    }
}

/// `codec::decode_model` on arbitrary bytes (stored or imported model bytes):
/// never a panic, every refusal 22P03, and a model that decodes is usable and
/// reads back from its own encoding.
pub fn model_decode(data: &[u8]) {
    // As given, and behind a valid header so the payload reaches bincode.
    let mut framed = MAGIC.to_vec();
    framed.extend_from_slice(&crate::codec::FORMAT_VERSION.to_le_bytes());
    framed.extend_from_slice(data);
    for buf in [data, &framed[..]] {
        match decode_model(buf) {
            Ok(m) => {
                assert_eq!(decode_model(&encode_model(&m)).unwrap(), m);
                let x = vec![0.5; 64];
                let _ = m.decision(&x);
                let _ = m.contributions(&x);
            }
            Err(e) => assert_eq!(e.sqlstate(), "22P03"),
        }
    }
}

/// `Signature::decode` on arbitrary bytes (what `signature_recv` gets): never a
/// panic, every refusal 22P03, and what decodes (at most the key limit) reads back
/// from its encoding and from its text form.
pub fn signature_decode(data: &[u8]) {
    match Signature::decode(data) {
        Ok(s) => {
            assert_eq!(s.encode(), data);
            assert!(s.keys.len() <= MAX_TEXT_KEYS);
            assert_eq!(Signature::from_text(&s.to_text()).unwrap(), s);
            assert_eq!(s.shared_keys(&s), s.keys.len());
        }
        Err(e) => assert_eq!(e.sqlstate(), "22P03"),
    }
}

/// `text::analyze` on arbitrary bytes read as UTF-8 (lossily), under options
/// picked by the first byte: never a panic, and every analysed document keeps the
/// invariants the decoders check (it encodes, decodes and prints back as itself).
pub fn text_analyze(data: &[u8]) {
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
    prepared_within_bound(&d);
}

/// What comparing prepares of `d` (weights of 1, and of none) stays within the
/// bound a cache charges for it before it is made.
fn prepared_within_bound(d: &Document) {
    let bound = crate::features::prepared_bytes_bound(d);
    let ones = (vec![1.0; d.terms.len()], vec![1.0; d.title_terms.len()]);
    for (weights, title_weights) in [(&ones.0[..], &ones.1[..]), (&[][..], &[][..])] {
        let side = crate::features::Side {
            doc: d,
            weights,
            title_weights,
            authority: 0.0,
        };
        assert!(crate::features::Prepared::new(&side).heap_bytes() <= bound);
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    /// A fuzz target: the name of its file, its corpus and its function here.
    type Target = (&'static str, fn(&[u8]));

    /// Every fuzz target.
    const TARGETS: &[Target] = &[
        ("document_decode", super::document_decode),
        ("document_skim", super::document_skim),
        ("document_text", super::document_text),
        ("model_decode", super::model_decode),
        ("signature_decode", super::signature_decode),
        ("text_analyze", super::text_analyze),
    ];

    fn fuzz_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz")
    }

    fn files(dir: &Path) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| {
                e.unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                    .path()
            })
            .filter(|p| p.is_file())
            .collect();
        v.sort();
        v
    }

    /// Each file in fuzz/fuzz_targets is listed here, and is nothing but a call of
    /// its function in this module, so the fuzzer and this test check the same.
    #[test]
    fn every_fuzz_target_calls_its_check() {
        let targets = files(&fuzz_dir().join("fuzz_targets"));
        let names: Vec<String> = targets
            .iter()
            .filter(|p| p.extension().is_some_and(|x| x == "rs"))
            .filter_map(|p| Some(p.file_stem()?.to_str()?.to_owned()))
            .collect();
        let mut ours: Vec<&str> = TARGETS.iter().map(|t| t.0).collect();
        ours.sort_unstable();
        assert_eq!(names, ours, "fuzz targets and fuzz_checks::tests::TARGETS");
        for name in names {
            let path = fuzz_dir().join("fuzz_targets").join(format!("{name}.rs"));
            let src = std::fs::read_to_string(&path).unwrap();
            let call = format!("pg_dedup::fuzz_checks::{name}(data)");
            assert!(
                src.contains(&call),
                "{} does not call {call}",
                path.display()
            );
        }
    }

    /// News-like texts (titles, numbers in digits and words, paragraphs, repeats)
    /// pass the analysis checks, the prepared form's bound among them.
    #[test]
    fn news_like_texts_pass_the_analysis_checks() {
        let para = "В Москве 12 марта открыли новую станцию метро «Пример», \
                    её строили три года. Стоимость составила 4,8 млрд рублей.\n\n\
                    The mayor said 2,500 passengers a day are expected; \
                    в среду — ещё восемь поездов. https://t.me/example";
        let mut texts: Vec<String> = vec![String::new(), "Заголовок\nтело".into()];
        for n in [1, 3, 40] {
            texts.push(format!("Новость дня {n}\n{}", vec![para; n].join("\n\n")));
        }
        for t in &texts {
            for head in [0x00u8, 0x01, 0x02, 0x03, 0x81, 0x85] {
                let mut data = vec![head];
                data.extend_from_slice(t.as_bytes());
                super::text_analyze(&data);
            }
        }
    }

    /// The committed seeds of every target pass its checks.
    #[test]
    fn fuzz_corpora_pass_their_checks() {
        let mut failed = Vec::new();
        for &(name, check) in TARGETS {
            let seeds = files(&fuzz_dir().join("corpus").join(name));
            assert!(!seeds.is_empty(), "fuzz/corpus/{name} has no seeds");
            for path in seeds {
                let data = std::fs::read(&path).unwrap();
                if std::panic::catch_unwind(|| check(&data)).is_err() {
                    failed.push(path.display().to_string());
                }
            }
        }
        assert!(failed.is_empty(), "seeds failing their checks: {failed:?}");
    }
}
