//! One error type for the whole extension.
//!
//! Pure modules return `Result<_, DedupError>`; the pgrx layer turns each variant
//! into an `ereport!` with the SQLSTATE given by [`DedupError::sqlstate`]
//! (see `pg::raise`). Messages are lower-case with no trailing period.

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DedupError {
    /// 22023 invalid_parameter_value: a bad option, scheme, k1, b, threshold…
    #[error("{msg}")]
    InvalidParameter { msg: String, hint: Option<String> },
    /// 22P02 invalid_text_representation: malformed literal or input text.
    #[error("{0}")]
    InvalidInput(String),
    /// 54000 program_limit_exceeded: input over a size limit.
    #[error("{msg}")]
    TooLarge { msg: String, hint: Option<String> },
    /// 42704 undefined_object: unknown collection or model.
    #[error("{msg}")]
    UndefinedObject { msg: String, hint: Option<String> },
    /// 22P03 invalid_binary_representation: bytes that do not decode (a
    /// `dedup.document`, `dedup.signature` or model as it arrives: binary COPY, a
    /// receive function, imported model bytes). Every binary decoder says this.
    #[error("{0}")]
    InvalidBinary(String),
    /// XX001 data_corrupted: bytes that were checked when they came in and no longer
    /// decode (a stored value read back), or a row of the extension's own catalog
    /// whose value is missing or of the wrong type. The pgrx layer turns a decoder's
    /// [`DedupError::InvalidBinary`] into this for values read from tables or
    /// handed over as arguments (see `pg::OrRaise::or_raise_stored`).
    #[error("{0}")]
    Corrupted(String),
    /// 42P01 undefined_table: no relation has the OID given.
    #[error("{0}")]
    UndefinedTable(String),
    /// 42703 undefined_column: a configured or named column is gone.
    #[error("{msg}")]
    UndefinedColumn { msg: String, hint: Option<String> },
    /// 42804 datatype_mismatch: a column is not of the type it must have.
    #[error("{msg}")]
    DatatypeMismatch { msg: String, hint: Option<String> },
    /// 42710 duplicate_object: a collection of that name exists.
    #[error("{msg}")]
    DuplicateObject { msg: String, hint: Option<String> },
    /// 55006 object_in_use: a collection still used by an enabled table.
    #[error("{msg}")]
    ObjectInUse { msg: String, hint: Option<String> },
    /// 55000 object_not_in_prerequisite_state: a table that is not enabled.
    #[error("{msg}")]
    NotEnabled { msg: String, hint: Option<String> },
    /// 42501 insufficient_privilege.
    #[error("{msg}")]
    InsufficientPrivilege { msg: String, hint: Option<String> },
    /// 39P01 trigger_protocol_violated: the trigger fired in a way `dedup.enable`
    /// does not install it.
    #[error("{msg}")]
    TriggerProtocol { msg: String, hint: Option<String> },
    /// 22003 numeric_value_out_of_range.
    #[error("{0}")]
    OutOfRange(String),
    /// 22004 null_value_not_allowed.
    #[error("{0}")]
    NullNotAllowed(String),
    /// 23505 unique_violation: a duplicate text under action `'error'`, reported
    /// as a unique index reports a duplicate key.
    #[error("{msg}")]
    DuplicateText {
        msg: String,
        detail: String,
        hint: Option<String>,
    },
    /// 40P01 deadlock_detected: two open transactions each inserted a near-copy of
    /// the other's uncommitted text.
    #[error("{msg}")]
    Deadlock {
        msg: String,
        detail: Option<String>,
        hint: Option<String>,
    },
    /// 40001 serialization_failure: a REPEATABLE READ or SERIALIZABLE transaction
    /// writes a table that was enabled after its snapshot (it cannot see the
    /// registration the trigger it fires belongs to).
    #[error("{msg}")]
    SerializationFailure { msg: String, hint: Option<String> },
    /// 42809 wrong_object_type: a relation of the wrong kind (a view or a
    /// temporary table where a table that outlives the session is needed).
    #[error("{msg}")]
    WrongObjectType { msg: String, hint: Option<String> },
    /// 0A000 feature_not_supported: a combination pg_dedup does not handle (on
    /// Citus, a transaction that writes an enabled table on several workers).
    #[error("{msg}")]
    FeatureNotSupported { msg: String, hint: Option<String> },
    /// 42939 reserved_name: a name the extension keeps for itself (the collection
    /// name `default`, which the built-in model's export names).
    #[error("{msg}")]
    ReservedName { msg: String, hint: Option<String> },
    /// XX000 internal_error: a state the code does not reach on any input (a bug).
    #[error("{0}")]
    Internal(String),
}

impl DedupError {
    pub fn invalid_parameter(msg: impl Into<String>) -> Self {
        DedupError::InvalidParameter {
            msg: msg.into(),
            hint: None,
        }
    }
    pub fn invalid_input(msg: impl Into<String>) -> Self {
        DedupError::InvalidInput(msg.into())
    }
    pub fn invalid_binary(msg: impl Into<String>) -> Self {
        DedupError::InvalidBinary(msg.into())
    }
    pub fn corrupted(msg: impl Into<String>) -> Self {
        DedupError::Corrupted(msg.into())
    }

    /// The five-character SQLSTATE this error is reported with: the one table of
    /// codes (the pgrx layer derives its error code from this string).
    pub fn sqlstate(&self) -> &'static str {
        match self {
            DedupError::InvalidParameter { .. } => "22023",
            DedupError::InvalidInput(_) => "22P02",
            DedupError::TooLarge { .. } => "54000",
            DedupError::UndefinedObject { .. } => "42704",
            DedupError::InvalidBinary(_) => "22P03",
            DedupError::Corrupted(_) => "XX001",
            DedupError::UndefinedTable(_) => "42P01",
            DedupError::UndefinedColumn { .. } => "42703",
            DedupError::DatatypeMismatch { .. } => "42804",
            DedupError::DuplicateObject { .. } => "42710",
            DedupError::ObjectInUse { .. } => "55006",
            DedupError::NotEnabled { .. } => "55000",
            DedupError::InsufficientPrivilege { .. } => "42501",
            DedupError::TriggerProtocol { .. } => "39P01",
            DedupError::OutOfRange(_) => "22003",
            DedupError::NullNotAllowed(_) => "22004",
            DedupError::DuplicateText { .. } => "23505",
            DedupError::Deadlock { .. } => "40P01",
            DedupError::SerializationFailure { .. } => "40001",
            DedupError::WrongObjectType { .. } => "42809",
            DedupError::FeatureNotSupported { .. } => "0A000",
            DedupError::ReservedName { .. } => "42939",
            DedupError::Internal(_) => "XX000",
        }
    }

    pub fn hint(&self) -> Option<&str> {
        match self {
            DedupError::InvalidParameter { hint, .. }
            | DedupError::TooLarge { hint, .. }
            | DedupError::UndefinedObject { hint, .. }
            | DedupError::UndefinedColumn { hint, .. }
            | DedupError::DatatypeMismatch { hint, .. }
            | DedupError::DuplicateObject { hint, .. }
            | DedupError::ObjectInUse { hint, .. }
            | DedupError::NotEnabled { hint, .. }
            | DedupError::InsufficientPrivilege { hint, .. }
            | DedupError::TriggerProtocol { hint, .. }
            | DedupError::DuplicateText { hint, .. }
            | DedupError::Deadlock { hint, .. }
            | DedupError::SerializationFailure { hint, .. }
            | DedupError::WrongObjectType { hint, .. }
            | DedupError::FeatureNotSupported { hint, .. }
            | DedupError::ReservedName { hint, .. } => hint.as_deref(),
            _ => None,
        }
    }

    pub fn detail(&self) -> Option<&str> {
        match self {
            DedupError::DuplicateText { detail, .. } => Some(detail),
            DedupError::Deadlock { detail, .. } => detail.as_deref(),
            _ => None,
        }
    }
}

/// SQLSTATE → PostgreSQL's integer error code (`MAKE_SQLSTATE`): six bits per
/// character, the first character lowest.
pub fn sqlstate_code(state: &str) -> i32 {
    state
        .bytes()
        .take(5)
        .enumerate()
        .map(|(i, c)| ((i32::from(c) - i32::from(b'0')) & 0x3f) << (6 * i))
        .sum()
}

pub type Result<T> = std::result::Result<T, DedupError>;

/// A number for an error message: in exponent form when very large or small
/// (`1e308`, not its 309 digits).
pub fn number(x: f64) -> String {
    if x.is_finite() && x != 0.0 && !(1e-4..1e6).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// At most 40 characters of `s`, for error messages that quote what they refuse
/// (a name or a value may be megabytes long).
pub fn excerpt(s: &str) -> String {
    match s.char_indices().nth(40) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_owned(),
    }
}

/// [`excerpt`] of a JSON value's text, for a message that quotes a refused
/// option's value.
pub fn json_excerpt(v: &serde_json::Value) -> String {
    excerpt(&v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_has_a_five_character_sqlstate() {
        let all = [
            DedupError::invalid_parameter("x"),
            DedupError::invalid_input("x"),
            DedupError::invalid_binary("x"),
            DedupError::corrupted("x"),
            DedupError::OutOfRange("x".into()),
            DedupError::NullNotAllowed("x".into()),
            DedupError::UndefinedTable("x".into()),
            DedupError::Internal("x".into()),
        ];
        for e in all {
            let s = e.sqlstate();
            assert_eq!(s.len(), 5);
            assert!(s
                .bytes()
                .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase()));
        }
        // MAKE_SQLSTATE('2','3','5','0','5') and ('4','0','P','0','1').
        assert_eq!(sqlstate_code("23505"), 2 | (3 << 6) | (5 << 12) | (5 << 24));
        assert_eq!(sqlstate_code("40P01"), 4 | (32 << 12) | (1 << 24));
    }
}
