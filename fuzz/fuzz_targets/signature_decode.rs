//! `Signature::decode` on arbitrary bytes (what `signature_recv` gets): never a
//! panic, every refusal 22P03, and what decodes reads back from its encoding and
//! (within the text form's key limit) from its text form.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pg_dedup::signature::{Signature, MAX_TEXT_KEYS};

fuzz_target!(|data: &[u8]| {
    match Signature::decode(data) {
        Ok(s) => {
            assert_eq!(s.encode(), data);
            if s.keys.len() <= MAX_TEXT_KEYS {
                assert_eq!(Signature::from_text(&s.to_text()).unwrap(), s);
            }
            assert_eq!(s.shared_keys(&s), s.keys.len());
        }
        Err(e) => assert_eq!(e.sqlstate(), "22P03"),
    }
});
