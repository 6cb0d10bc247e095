//! `Document::decode` on arbitrary bytes (what binary COPY hands `document_recv`).
//! Besides not panicking: every refusal is 22P03, and what decodes stays within
//! the documented size, reads back from its own encoding and from its text form,
//! and skims as it decodes.
//!
//! The checks live in `pg_dedup::fuzz_checks`, where the unit tests also run
//! them over this target's seed corpus.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| pg_dedup::fuzz_checks::document_decode(data));
