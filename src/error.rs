//! One error type for the whole extension.
//!
//! Pure modules return `Result<_, DedupError>`; the pgrx layer turns each variant
//! into an `ereport!` with the SQLSTATE given by [`DedupError::sqlstate`]
//! (see `pg::report`). Messages are lower-case with no trailing period.

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
    /// decode (a stored value read back). The pgrx layer turns a decoder's
    /// [`DedupError::InvalidBinary`] into this for values read from tables or
    /// handed over as arguments (see `pg::OrRaise::or_raise_stored`).
    #[error("{0}")]
    Corrupted(String),
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

    /// The five-character SQLSTATE this error is reported with.
    pub fn sqlstate(&self) -> &'static str {
        match self {
            DedupError::InvalidParameter { .. } => "22023",
            DedupError::InvalidInput(_) => "22P02",
            DedupError::TooLarge { .. } => "54000",
            DedupError::UndefinedObject { .. } => "42704",
            DedupError::InvalidBinary(_) => "22P03",
            DedupError::Corrupted(_) => "XX001",
        }
    }

    pub fn hint(&self) -> Option<&str> {
        match self {
            DedupError::InvalidParameter { hint, .. }
            | DedupError::TooLarge { hint, .. }
            | DedupError::UndefinedObject { hint, .. } => hint.as_deref(),
            _ => None,
        }
    }
}

pub type Result<T> = std::result::Result<T, DedupError>;
