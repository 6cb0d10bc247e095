//! `doctext::from_text` (what `document_in` gets) on arbitrary bytes: never a
//! panic, every refusal 22P02, and what it accepts prints and reads back as
//! itself, and decodes from its own binary form.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pg_dedup::doctext::{from_text, to_text};
use pg_dedup::document::Document;

fuzz_target!(|data: &[u8]| {
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
});
