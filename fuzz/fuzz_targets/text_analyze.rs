//! `text::analyze` on arbitrary bytes read as UTF-8 (lossily), under options
//! picked by the first byte: never a panic, and every analysed document keeps the
//! invariants the decoders check (it encodes, decodes and prints back as itself).
//!
//! The checks live in `pg_dedup::fuzz_checks`, where the unit tests also run
//! them over this target's seed corpus.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| pg_dedup::fuzz_checks::text_analyze(data));
