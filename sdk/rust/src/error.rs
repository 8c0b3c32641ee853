//! Errors a policy answers: the ABI's `Error` message with its code and field.

use std::fmt;

use crate::abi;
use crate::abi::ErrorCode;

/// A policy's refusal of one call. The host applies nothing of a call that
/// answered an Error (abi/README.md section 4).
///
/// ```
/// use nriwasm::{Error, ErrorCode};
/// let err = Error::invalid_argument("config.interfaces", "must be a list of names");
/// assert_eq!(err.code(), ErrorCode::InvalidArgument);
/// assert_eq!(err.to_string(), "config.interfaces: must be a list of names");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    code: ErrorCode,
    message: String,
    field: String,
}

/// The result every handler returns.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// An error with a code, a message and no field.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Error { code, message: message.into(), field: String::new() }
    }

    /// Names the offending input as a dotted path ("config.reservedResources.cpu").
    pub fn with_field(mut self, field: impl Into<String>) -> Self {
        self.field = field.into();
        self
    }

    /// The request or the configuration is invalid; `field` names the input.
    pub fn invalid_argument(field: impl Into<String>, message: impl Into<String>) -> Self {
        Error::new(ErrorCode::InvalidArgument, message).with_field(field)
    }

    /// The call came in the wrong state.
    pub fn failed_precondition(message: impl Into<String>) -> Self {
        Error::new(ErrorCode::FailedPrecondition, message)
    }

    /// The request does not fit in what the policy manages; `field` names what asked.
    pub fn resource_exhausted(field: impl Into<String>, message: impl Into<String>) -> Self {
        Error::new(ErrorCode::ResourceExhausted, message).with_field(field)
    }

    /// The request names a pod, container, claim or device the policy does not know.
    pub fn not_found(field: impl Into<String>, message: impl Into<String>) -> Self {
        Error::new(ErrorCode::NotFound, message).with_field(field)
    }

    /// A bug in the policy.
    pub fn internal(message: impl Into<String>) -> Self {
        Error::new(ErrorCode::Internal, message)
    }

    /// The method is not implemented: what [`Policy`](crate::Policy)'s default
    /// handlers answer.
    pub fn unimplemented(message: impl Into<String>) -> Self {
        Error::new(ErrorCode::Unimplemented, message)
    }

    /// The error's code.
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// The message, without the field.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The offending field's dotted path, empty when no single field is at fault.
    pub fn field(&self) -> &str {
        &self.field
    }

    /// The ABI message this error crosses the boundary as.
    pub fn to_proto(&self) -> abi::Error {
        abi::Error { code: self.code as i32, message: self.message.clone(), field: self.field.clone() }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.field, self.message)
        }
    }
}

impl std::error::Error for Error {}

impl From<Error> for abi::Error {
    fn from(e: Error) -> Self {
        abi::Error { code: e.code as i32, message: e.message, field: e.field }
    }
}
