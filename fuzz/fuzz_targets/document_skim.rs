//! `Document::skim` (the trigger's read of stored candidates) on arbitrary bytes:
//! never a panic, every refusal 22P03, and on whatever decodes it reads what
//! decode reads.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pg_dedup::document::{Document, Skim, FORMAT_VERSION};

fuzz_target!(|data: &[u8]| {
    let body = data.get(1..).unwrap_or(&[]);
    let mut v2 = vec![FORMAT_VERSION];
    v2.extend_from_slice(&xxhash_rust::xxh3::xxh3_128(body).to_le_bytes());
    v2.extend_from_slice(body);
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
});
