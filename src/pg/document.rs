//! SQL functions over `dedup.document`: its I/O functions and the public
//! `to_document`, `tokens`, `terms`, `numbers`, `summary`, `fingerprint`.

use crate::document::Document;
use crate::error::DedupError;
use crate::gucs;
use crate::pg::types::DocumentDatum;
use crate::pg::{raise, OrRaise};
use crate::text::{self, AnalyzeOptions, Lang};
use pgrx::prelude::*;
use pgrx::{AnyNumeric, Internal, JsonB, StringInfo, Uuid};
use std::ffi::CStr;

// ---- type I/O (declared in sql/bootstrap.sql) -------------------------------

#[pg_extern(immutable, strict, parallel_safe, sql = false)]
fn document_in(input: &CStr) -> DocumentDatum {
    let s = match input.to_str() {
        Ok(s) => s,
        Err(_) => raise(crate::error::DedupError::invalid_input(
            "invalid input syntax for type dedup.document: not valid UTF-8",
        )),
    };
    DocumentDatum::from_document(&crate::doctext::from_text(s).or_raise())
}

#[pg_extern(immutable, strict, parallel_safe, sql = false)]
fn document_out(doc: DocumentDatum) -> &'static CStr {
    let mut s = StringInfo::new();
    s.push_str(&crate::doctext::to_text(&doc.decode()));
    // SAFETY: the StringInfo was allocated in the current memory context just above.
    unsafe { s.leak_cstr() }
}

#[pg_extern(immutable, strict, parallel_safe, sql = false)]
fn document_recv(mut buf: Internal) -> DocumentDatum {
    DocumentDatum(crate::pg::types::receive(&mut buf, "dedup.document", |b| {
        Document::decode(b).map(|_| ())
    }))
}

#[pg_extern(immutable, strict, parallel_safe, sql = false)]
fn document_send(doc: DocumentDatum) -> Vec<u8> {
    doc.0
}

// ---- public functions --------------------------------------------------------

fn options(lang: &str) -> AnalyzeOptions {
    AnalyzeOptions {
        lang: Lang::parse(lang).or_raise(),
        min_word_length: gucs::min_word_length(),
    }
}

fn check_size(what: &str, s: &str) {
    let limit = gucs::max_document_bytes();
    if s.len() > limit {
        raise(crate::error::DedupError::TooLarge {
            msg: format!(
                "{what} is {} bytes, over the limit of {limit} bytes",
                s.len()
            ),
            hint: Some("split the text, or have a superuser raise dedup.max_document_bytes (GRANT SET ON PARAMETER lets a role do it)".into()),
        });
    }
}

/// Builds the document model of a text. STABLE: it reads `dedup.min_word_length`
/// and `dedup.max_document_bytes`. A NULL body gives NULL. Checks for interrupts
/// every 4,096 words and between the stages of the analysis
/// (`text::analyze_checked`).
#[pg_extern(stable, parallel_safe)]
fn to_document(
    body: Option<&str>,
    title: default!(Option<&str>, "NULL"),
    published_at: default!(Option<TimestampWithTimeZone>, "NULL"),
    source: default!(Option<&str>, "NULL"),
    lang: default!(Option<&str>, "'auto'"),
) -> Option<DocumentDatum> {
    let body = body?;
    check_size("body", body);
    if let Some(t) = title {
        check_size("title", t);
    }
    if let Some(s) = source.filter(|s| s.len() > crate::limits::MAX_SOURCE_BYTES) {
        raise(crate::error::DedupError::TooLarge {
            msg: format!(
                "source is {} bytes, over the limit of {} bytes",
                s.len(),
                crate::limits::MAX_SOURCE_BYTES
            ),
            hint: Some("a source names where a text came from: a name or an address".into()),
        });
    }
    let opts = options(lang.unwrap_or("auto"));
    let published_at = crate::pg::types::finite_time(published_at);
    let doc = text::analyze_checked(
        body,
        title,
        published_at,
        source,
        &opts,
        &mut crate::pg::interrupts(),
    )
    .or_raise();
    Some(DocumentDatum::from_document(&doc))
}

/// The stems of a text, in text order. Checks for interrupts every 4,096 words.
#[pg_extern(stable, strict, parallel_safe)]
fn tokens(body: &str, lang: default!(&str, "'auto'")) -> Vec<String> {
    check_size("body", body);
    text::tokens_checked(body, &options(lang), &mut crate::pg::interrupts()).or_raise()
}

/// Body terms with their frequencies, in term order.
#[pg_extern(immutable, strict, parallel_safe)]
fn terms(doc: DocumentDatum) -> TableIterator<'static, (name!(term, String), name!(tf, i32))> {
    let d = doc.decode();
    TableIterator::new(d.terms.into_iter().map(|t| {
        (
            t.term.into_string(),
            t.tf.min(crate::document::MAX_TF) as i32,
        )
    }))
}

/// The numbers of the text, in text order.
#[pg_extern(immutable, strict, parallel_safe)]
fn numbers(doc: DocumentDatum) -> Vec<AnyNumeric> {
    let d = doc.decode();
    d.numbers
        .iter()
        .map(|n| match AnyNumeric::try_from(n.as_str()) {
            Ok(v) => v,
            Err(_) => raise(DedupError::OutOfRange(format!(
                "number {}… does not fit type numeric",
                n.chars().take(20).collect::<String>()
            ))),
        })
        .collect()
}

/// Counts and metadata of a document, as jsonb.
#[pg_extern(immutable, strict, parallel_safe)]
fn summary(doc: DocumentDatum) -> JsonB {
    let bytes = doc.0.len();
    let d = doc.decode();
    JsonB(serde_json::json!({
        "words": d.words,
        "terms": d.terms.len(),
        "sentences": d.sentences.len(),
        "paragraphs": d.paragraphs.len(),
        "images": d.images,
        "links": d.links,
        "numbers": d.numbers.len(),
        "published_at": d.published_at.map(crate::doctext::format_time),
        "source": d.source,
        "bytes": bytes,
    }))
}

/// The exact-duplicate key of a text: equal for texts that differ only in case,
/// punctuation, whitespace or markup. Checks for interrupts every 4,096 words.
#[pg_extern(immutable, strict, parallel_safe)]
fn fingerprint(body: &str) -> Uuid {
    let fp = text::fingerprint_checked(body, &mut crate::pg::interrupts()).or_raise();
    Uuid::from_bytes(fp.to_be_bytes())
}
