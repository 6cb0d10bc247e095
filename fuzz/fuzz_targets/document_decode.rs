//! `Document::decode` on arbitrary bytes (what binary COPY hands `document_recv`).
//! Besides not panicking: every refusal is 22P03, and what decodes stays within
//! the documented size, reads back from its own encoding and from its text form,
//! and skims as it decodes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pg_dedup::doctext::{from_text, to_text};
use pg_dedup::document::{Document, Skim, FORMAT_VERSION, MAX_DECODE_EXPANSION};

fuzz_target!(|data: &[u8]| {
    // As given (a leading 1 is version 1, without a content hash, so every byte
    // reaches the parser), and as version 2 with the hash of the rest filled in.
    let body = data.get(1..).unwrap_or(&[]);
    let mut v2 = vec![FORMAT_VERSION];
    v2.extend_from_slice(&xxhash_rust::xxh3::xxh3_128(body).to_le_bytes());
    v2.extend_from_slice(body);
    for buf in [data, &v2[..]] {
        match Document::decode(buf) {
            Ok(d) => {
                assert!(d.heap_bytes() <= MAX_DECODE_EXPANSION * buf.len());
                assert_eq!(Document::decode(&d.encode()).unwrap(), d);
                assert_eq!(from_text(&to_text(&d)).unwrap(), d);
                assert_eq!(Document::skim(buf).unwrap(), Skim::of(&d));
            }
            Err(e) => assert_eq!(e.sqlstate(), "22P03"),
        }
    }
});
