//! What a collection enforces: the settings that decide whether the trigger
//! checks a row and what it finds, stored with the collection (in
//! `dedup.collections.options`) rather than read from the writer's session, so a
//! `SET` in the writer's session cannot turn `'skip'` or `'error'` off.
//!
//! | option | default | range | what |
//! |---|---|---|---|
//! | `max_document_bytes` | 10485760 | 1024 .. 1073741824 (1 GB, as the setting) | a longer text is stored unchecked, with a WARNING (refused under action `'error'`); a longer title is left out of the check |
//! | `min_word_length` | 3 | 1 .. 64 | shorter words (in characters) are not terms |
//! | `min_shared_keys` | 4 | 1 .. 256 | `topwords` signatures are candidates when they share this many keys |
//! | `similarity_threshold` | 0.8 | 0 .. 1 | `longest` signatures are candidates at this similarity |
//!
//! The session settings of the same names (`dedup.*`, src/gucs.rs) still govern
//! the functions a user calls directly (`to_document`, the `%` operator).

use crate::error::{DedupError, Result};

/// A collection's enforced settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limits {
    pub max_document_bytes: usize,
    pub min_word_length: usize,
    pub min_shared_keys: usize,
    pub similarity_threshold: f64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_document_bytes: 10 * 1024 * 1024,
            min_word_length: 3,
            min_shared_keys: 4,
            similarity_threshold: 0.8,
        }
    }
}

/// The option names this module reads.
pub const KEYS: [&str; 4] = [
    "max_document_bytes",
    "min_word_length",
    "min_shared_keys",
    "similarity_threshold",
];

fn int(
    map: &serde_json::Map<String, serde_json::Value>,
    key: &str,
    lo: u64,
    hi: u64,
) -> Result<Option<usize>> {
    let Some(v) = map.get(key).filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    v.as_u64()
        .filter(|n| (lo..=hi).contains(n))
        .map(|n| Some(n as usize))
        .ok_or_else(|| {
            DedupError::invalid_parameter(format!(
                "{key} must be an integer from {lo} to {hi}, got {}",
                crate::error::json_excerpt(v)
            ))
        })
}

impl Limits {
    /// The limits in a collection's options (missing keys take their defaults).
    pub fn from_json(v: &serde_json::Value) -> Result<Limits> {
        let mut l = Limits::default();
        let map = match v {
            serde_json::Value::Null => return Ok(l),
            serde_json::Value::Object(m) => m,
            _ => {
                return Err(DedupError::invalid_parameter(
                    "options must be a jsonb object",
                ))
            }
        };
        if let Some(n) = int(map, "max_document_bytes", 1024, 1024 * 1024 * 1024)? {
            l.max_document_bytes = n;
        }
        if let Some(n) = int(map, "min_word_length", 1, 64)? {
            l.min_word_length = n;
        }
        if let Some(n) = int(map, "min_shared_keys", 1, 256)? {
            l.min_shared_keys = n;
        }
        if let Some(v) = map.get("similarity_threshold").filter(|v| !v.is_null()) {
            l.similarity_threshold =
                v.as_f64()
                    .filter(|x| (0.0..=1.0).contains(x))
                    .ok_or_else(|| {
                        DedupError::invalid_parameter(format!(
                            "similarity_threshold must be a number from 0 to 1, got {}",
                            crate::error::json_excerpt(v)
                        ))
                    })?;
        }
        Ok(l)
    }

    /// The body over `max_document_bytes`, if it is: the row is then stored
    /// unchecked (the text is what is compared).
    pub fn body_over(&self, body: &str) -> Option<Over> {
        (body.len() > self.max_document_bytes).then_some(Over {
            what: "text",
            bytes: body.len(),
            limit: self.max_document_bytes,
        })
    }

    /// The title and source a text is checked with: one over its limit (the title
    /// over `max_document_bytes`, the source over [`MAX_SOURCE_BYTES`]) is left
    /// out, and listed, so that padding them cannot take a text past its check.
    pub fn side_fields<'a>(
        &self,
        title: Option<&'a str>,
        source: Option<&'a str>,
    ) -> (Option<&'a str>, Option<&'a str>, Vec<Over>) {
        let mut left_out = Vec::new();
        let mut keep = |what, s: Option<&'a str>, limit: usize| match s {
            Some(s) if s.len() > limit => {
                left_out.push(Over {
                    what,
                    bytes: s.len(),
                    limit,
                });
                None
            }
            s => s,
        };
        let title = keep("title", title, self.max_document_bytes);
        let source = keep("source", source, MAX_SOURCE_BYTES);
        (title, source, left_out)
    }
}

/// The longest source a document keeps, in bytes: a source names where a text
/// came from (a name, an address), and its authority is learnt per source.
pub const MAX_SOURCE_BYTES: usize = 4096;

/// The longest collection or model name, in bytes: names are keys of the
/// extension's tables (a btree entry holds about 2,700 bytes at most).
pub const MAX_NAME_BYTES: usize = 200;

/// Refuses a collection or model name (`what`) of only whitespace, which no one
/// could tell from another, or longer than [`MAX_NAME_BYTES`].
pub fn check_name(what: &str, name: &str) -> crate::error::Result<()> {
    if !name.is_empty() && name.trim().is_empty() {
        return Err(crate::error::DedupError::invalid_parameter(format!(
            "{what} name must not be blank"
        )));
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(crate::error::DedupError::invalid_parameter(format!(
            "{what} name is {} bytes, over the limit of {MAX_NAME_BYTES}",
            name.len()
        )));
    }
    Ok(())
}

/// A part of a text over its limit (see [`Limits::over`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Over {
    /// "text", "title" or "source".
    pub what: &'static str,
    pub bytes: usize,
    pub limit: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn blank_names_are_refused() {
        assert!(check_name("model", "   ").is_err());
        assert!(check_name("model", "\t").is_err());
        assert!(check_name("model", " a ").is_ok());
        assert!(check_name("model", "").is_ok());
    }

    #[test]
    fn defaults_and_overrides() {
        assert_eq!(Limits::from_json(&json!({})).ok(), Some(Limits::default()));
        assert_eq!(
            Limits::from_json(&serde_json::Value::Null).ok(),
            Some(Limits::default())
        );
        let l = Limits::from_json(&json!({"max_document_bytes": 2048, "min_word_length": 4,
                                          "min_shared_keys": 3, "similarity_threshold": 0.5,
                                          "signature_scheme": "topwords"}))
        .unwrap_or_default();
        assert_eq!(l.max_document_bytes, 2048);
        assert_eq!(l.min_word_length, 4);
        assert_eq!(l.min_shared_keys, 3);
        assert_eq!(l.similarity_threshold, 0.5);
        assert_eq!(l.body_over(&"x".repeat(2049)).map(|o| o.what), Some("text"));
        assert!(l.body_over("x").is_none());
        assert_eq!(
            l.side_fields(Some("y"), Some("z")),
            (Some("y"), Some("z"), vec![])
        );
        let long_title = "y".repeat(2049);
        let long_source = "s".repeat(MAX_SOURCE_BYTES + 1);
        let (t, s, out) = l.side_fields(Some(&long_title), Some(&long_source));
        assert_eq!((t, s), (None, None));
        assert_eq!(
            out,
            vec![
                Over {
                    what: "title",
                    bytes: 2049,
                    limit: 2048
                },
                Over {
                    what: "source",
                    bytes: MAX_SOURCE_BYTES + 1,
                    limit: MAX_SOURCE_BYTES
                }
            ]
        );
    }

    #[test]
    fn out_of_range_is_refused() {
        for bad in [
            json!({"max_document_bytes": 10}),
            json!({"min_word_length": 0}),
            json!({"min_word_length": "3"}),
            json!({"min_shared_keys": 257}),
            json!({"similarity_threshold": 1.5}),
            json!({"similarity_threshold": "high"}),
            json!([1]),
        ] {
            assert!(Limits::from_json(&bad).is_err(), "{bad}");
        }
    }
}
