//! `codec::decode_model` on arbitrary bytes (stored or imported model bytes):
//! never a panic, every refusal 22P03, and a model that decodes is usable and
//! reads back from its own encoding.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pg_dedup::codec::{decode_model, encode_model, MAGIC};

fuzz_target!(|data: &[u8]| {
    // As given, and behind a valid header so the payload reaches bincode.
    let mut framed = MAGIC.to_vec();
    framed.extend_from_slice(&pg_dedup::codec::FORMAT_VERSION.to_le_bytes());
    framed.extend_from_slice(data);
    for buf in [data, &framed[..]] {
        match decode_model(buf) {
            Ok(m) => {
                assert_eq!(decode_model(&encode_model(&m)).unwrap(), m);
                let x = vec![0.5; 64];
                let _ = m.decision(&x);
                let _ = m.contributions(&x);
            }
            Err(e) => assert_eq!(e.sqlstate(), "22P03"),
        }
    }
});
