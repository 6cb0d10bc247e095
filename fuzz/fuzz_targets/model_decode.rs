//! `codec::decode_model` on arbitrary bytes (stored or imported model bytes):
//! never a panic, every refusal 22P03, and a model that decodes is usable and
//! reads back from its own encoding.
//!
//! The checks live in `pg_dedup::fuzz_checks`, where the unit tests also run
//! them over this target's seed corpus.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| pg_dedup::fuzz_checks::model_decode(data));
