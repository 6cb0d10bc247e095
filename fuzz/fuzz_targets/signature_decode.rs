//! `Signature::decode` on arbitrary bytes (what `signature_recv` gets): never a
//! panic, every refusal 22P03, and what decodes reads back from its encoding and
//! (within the text form's key limit) from its text form.
//!
//! The checks live in `pg_dedup::fuzz_checks`, where the unit tests also run
//! them over this target's seed corpus.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| pg_dedup::fuzz_checks::signature_decode(data));
