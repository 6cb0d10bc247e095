//! `Document::skim` (the trigger's read of stored candidates) on arbitrary bytes:
//! never a panic, every refusal 22P03, and on whatever decodes it reads what
//! decode reads.
//!
//! The checks live in `pg_dedup::fuzz_checks`, where the unit tests also run
//! them over this target's seed corpus.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| pg_dedup::fuzz_checks::document_skim(data));
