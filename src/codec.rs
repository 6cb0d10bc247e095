//! The one place that knows the layout of stored model bytes.
//!
//! Layout: `b"PGDM"` | format version (u16, little-endian) | payload.
//! Format 1's payload is bincode 1.3 of [`Model`] with `bincode::DefaultOptions`
//! (varint integers, little-endian, trailing bytes rejected), used the same way in
//! both directions. A later format (say postcard) gets a new version number and a
//! new arm in [`decode_model`]; bytes already stored keep decoding.
//!
//! Anything that does not decode to a consistent model is
//! [`DedupError::InvalidBinary`] (22P03), never a panic; the callers say what it
//! means where they are (a stored model that no longer reads is XX001, an imported
//! one 22P02). The payload is read under bincode's byte limit equal to its own
//! length (`Options::with_limit`), so a forged length prefix fails as soon as the
//! bytes behind it run out, and serde reserves at most 1 MiB ahead for a sequence
//! whatever length it claims (`serde::de::size_hint::cautious`). A decoded model
//! holds at most [`MAX_MODEL_EXPANSION`] bytes per payload byte, plus that 1 MiB.

use crate::error::{DedupError, Result};
use crate::svm::Model;
use bincode::Options;

/// First four bytes of every stored model.
pub const MAGIC: [u8; 4] = *b"PGDM";
/// The format this build writes. Bump it whenever the payload layout changes.
pub const FORMAT_VERSION: u16 = 1;
const HEADER_LEN: usize = MAGIC.len() + 2;

/// A decoded [`Model`] holds at most this many heap bytes per payload byte (plus
/// up to 1 MiB serde reserves ahead for a sequence that then fails): the dearest
/// item is an empty support vector, one byte for a 24-byte `Vec`; an `f64` is 8
/// bytes for 8, a feature index at least 1 byte for 8.
pub const MAX_MODEL_EXPANSION: usize = 24;

fn bincode_v1() -> impl Options {
    bincode::DefaultOptions::new()
        .with_varint_encoding()
        .with_little_endian()
        .reject_trailing_bytes()
}

/// Serialises `m` as header + payload in the current format.
pub fn encode_model(m: &Model) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + 64 + 8 * m.weights.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    // Writing plain structs of f64/usize/Vec into a Vec<u8> has no failure path
    // in bincode 1.3 (no size limit is set here, no I/O errors from Vec).
    bincode_v1()
        .serialize_into(&mut out, m)
        .expect("bincode serialisation of Model into a Vec cannot fail");
    out
}

/// Parses stored model bytes; every failure is [`DedupError::InvalidBinary`].
/// What went wrong decoding a model's payload, in the extension's words (bincode's
/// own messages are capitalised, some span lines and name its internals).
fn decode_failure(e: &bincode::Error) -> String {
    let what = match e.as_ref() {
        bincode::ErrorKind::Io(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => {
            "is truncated"
        }
        bincode::ErrorKind::SizeLimit => "is truncated",
        bincode::ErrorKind::InvalidUtf8Encoding(_) => "holds a string that is not utf-8",
        bincode::ErrorKind::InvalidBoolEncoding(_) => "holds an invalid boolean",
        bincode::ErrorKind::InvalidCharEncoding => "holds an invalid character",
        bincode::ErrorKind::InvalidTagEncoding(_) => "holds an unknown variant",
        bincode::ErrorKind::Custom(m) if m.contains("remaining") => "has trailing bytes",
        _ => "is corrupt",
    };
    format!("svm model does not decode: its payload {what}")
}

pub fn decode_model(bytes: &[u8]) -> Result<Model> {
    if bytes.len() < HEADER_LEN {
        return Err(DedupError::invalid_binary(format!(
            "svm model is truncated: {} bytes, the header alone needs {HEADER_LEN}",
            bytes.len()
        )));
    }
    let (header, payload) = bytes.split_at(HEADER_LEN);
    if header[..4] != MAGIC {
        return Err(DedupError::invalid_binary(
            "stored bytes are not a pg_dedup svm model (bad magic)",
        ));
    }
    let version = u16::from_le_bytes([header[4], header[5]]);
    let model: Model = match version {
        1 => bincode_v1()
            .with_limit(payload.len() as u64)
            .deserialize(payload)
            .map_err(|e| DedupError::invalid_binary(decode_failure(&e)))?,
        v if v > FORMAT_VERSION => {
            return Err(DedupError::invalid_binary(format!(
                "svm model has format {v}, newer than this build reads ({FORMAT_VERSION})"
            )))
        }
        v => {
            return Err(DedupError::invalid_binary(format!(
                "svm model has unknown format {v}"
            )))
        }
    };
    model.check_consistent()?;
    Ok(model)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::svm::{train, Example, Kernel, TrainOptions};

    fn trained(kernel: Kernel) -> Model {
        let examples: Vec<Example> = (0..60)
            .map(|i| {
                let y = i % 2 == 0;
                let t = (i as f64 * 0.37).sin() * 0.2;
                Example {
                    x: vec![if y { 0.8 } else { 0.3 } + t, 0.5 - t, (i % 7) as f64 / 7.0],
                    y,
                }
            })
            .collect();
        let opts = TrainOptions {
            kernel,
            folds: 0,
            features: vec![0, 2],
            ..TrainOptions::default()
        };
        train(&examples, &opts).unwrap().model
    }

    fn assert_corrupted(bytes: &[u8]) {
        match decode_model(bytes) {
            Err(e @ DedupError::InvalidBinary(_)) => assert_eq!(e.sqlstate(), "22P03"),
            other => panic!("expected InvalidBinary, got {other:?}"),
        }
    }

    #[test]
    fn round_trip_linear_and_rbf() {
        for kernel in [Kernel::Linear, Kernel::Rbf { gamma: 0.7 }] {
            let m = trained(kernel);
            let bytes = encode_model(&m);
            assert_eq!(&bytes[..4], b"PGDM");
            assert_eq!(u16::from_le_bytes([bytes[4], bytes[5]]), FORMAT_VERSION);
            let back = decode_model(&bytes).unwrap();
            assert_eq!(back, m);
            let x = [0.6, 0.1, 0.4];
            assert_eq!(back.decision(&x).to_bits(), m.decision(&x).to_bits());
        }
    }

    #[test]
    fn rejects_every_truncation() {
        for kernel in [Kernel::Linear, Kernel::Rbf { gamma: 0.7 }] {
            let bytes = encode_model(&trained(kernel));
            for len in 0..bytes.len() {
                assert_corrupted(&bytes[..len]);
            }
        }
    }

    #[test]
    fn rejects_trailing_bytes_magic_and_versions() {
        let bytes = encode_model(&trained(Kernel::Linear));
        let mut longer = bytes.clone();
        longer.push(0);
        assert_corrupted(&longer);
        let mut magic = bytes.clone();
        magic[0] = b'X';
        assert_corrupted(&magic);
        for v in [0u16, FORMAT_VERSION + 1, u16::MAX] {
            let mut other = bytes.clone();
            other[4..6].copy_from_slice(&v.to_le_bytes());
            assert_corrupted(&other);
        }
        let msg = {
            let mut future = bytes.clone();
            future[4..6].copy_from_slice(&(FORMAT_VERSION + 1).to_le_bytes());
            decode_model(&future).unwrap_err().to_string()
        };
        assert!(msg.contains("newer than this build"), "{msg}");
    }

    #[test]
    fn rejects_random_and_bit_flipped_bytes() {
        let mut s = 0x1234_5678_9abc_def0u64;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        for len in [0usize, 1, 5, 6, 7, 16, 64, 300, 5000] {
            for _ in 0..50 {
                let mut b: Vec<u8> = (0..len).map(|_| next() as u8).collect();
                assert_corrupted(&b);
                // random payload behind a valid header: may decode only if consistent
                if b.len() >= 6 {
                    b[..4].copy_from_slice(&MAGIC);
                    b[4..6].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
                    if let Ok(m) = decode_model(&b) {
                        let _ = m.decision(&[0.0; 4]);
                        let _ = m.contributions(&[0.0; 4]);
                    }
                }
            }
        }
        // every single-byte corruption of a real model: no panic, and a success
        // is a model that passed the consistency check
        let bytes = encode_model(&trained(Kernel::Rbf { gamma: 0.7 }));
        for i in 0..bytes.len() {
            for flip in [0x01u8, 0x80, 0xff] {
                let mut b = bytes.clone();
                b[i] ^= flip;
                match decode_model(&b) {
                    Ok(m) => m.check_consistent().unwrap(),
                    // the extension's own words: lower case, one line
                    Err(e) => {
                        let msg = e.to_string();
                        assert!(!msg.contains('\n'), "{msg}");
                        assert!(!msg.chars().any(|c| c.is_uppercase()), "{msg}");
                    }
                }
            }
        }
    }

    #[test]
    fn huge_length_prefix_does_not_allocate() {
        // header, then features.len() = u64::MAX as a varint (253 = "u64 follows")
        let mut b = MAGIC.to_vec();
        b.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        b.push(253);
        b.extend_from_slice(&u64::MAX.to_le_bytes());
        assert_corrupted(&b);
    }

    #[test]
    fn nested_length_prefixes_do_not_allocate() {
        // A linear model's fields, then support_vectors claiming 2^32 vectors, the
        // first claiming 2^40 numbers, and no bytes behind either claim.
        let mut b = MAGIC.to_vec();
        b.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        b.extend_from_slice(&[1, 0]); // features [0]
        b.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0, 0]); // scaler.mean [0.0]
        b.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f]); // scaler.std [1.0]
        b.push(0); // kernel: linear
        b.extend_from_slice(&[0u8; 8]); // bias
        b.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0, 0]); // weights [0.0]
        let start = std::time::Instant::now();
        for (outer, inner) in [(1u64 << 32, 1u64 << 40), (u64::MAX, u64::MAX)] {
            let mut x = b.clone();
            x.push(253);
            x.extend_from_slice(&outer.to_le_bytes());
            x.push(253);
            x.extend_from_slice(&inner.to_le_bytes());
            assert_corrupted(&x);
        }
        // Many empty support vectors: decoded (linearly), then refused as inconsistent.
        let mut x = b.clone();
        x.push(252);
        x.extend_from_slice(&100_000u32.to_le_bytes());
        x.extend(std::iter::repeat_n(0u8, 100_000));
        x.push(0); // coefficients []
        assert_corrupted(&x);
        assert!(start.elapsed() < std::time::Duration::from_secs(2));
    }

    #[test]
    fn inconsistent_model_is_corrupted() {
        let mut m = trained(Kernel::Linear);
        m.weights.pop();
        assert_corrupted(&encode_model(&m));
        let mut m = trained(Kernel::Rbf { gamma: 0.7 });
        m.coefficients.push(1.0);
        assert_corrupted(&encode_model(&m));
        let mut m = trained(Kernel::Linear);
        m.scaler.std[0] = 0.0;
        assert_corrupted(&encode_model(&m));
    }
}
