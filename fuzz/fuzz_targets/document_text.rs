//! `doctext::from_text` (what `document_in` gets) on arbitrary bytes: never a
//! panic, every refusal 22P02, and what it accepts prints and reads back as
//! itself, and decodes from its own binary form.
//!
//! The checks live in `pg_dedup::fuzz_checks`, where the unit tests also run
//! them over this target's seed corpus.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| pg_dedup::fuzz_checks::document_text(data));
