//! Writing DumpState's JSON without serde: a [`Json`] value built from the
//! policy's state and rendered compactly, object keys in the order given.
//!
//! ```
//! use nriwasm::kit::json::Json;
//! let state = Json::object()
//!     .field("cpus", "0-3")
//!     .field("claims", Json::Array(vec!["a".into(), "b\"c".into()]))
//!     .field("free", 4u64)
//!     .field("strict", true);
//! assert_eq!(state.to_string(), r#"{"cpus":"0-3","claims":["a","b\"c"],"free":4,"strict":true}"#);
//! ```

use std::collections::BTreeMap;
use std::fmt;

/// A JSON value.
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    /// null
    Null,
    /// true or false
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Json>),
    /// An object; keys are written in this order.
    Object(Vec<(String, Json)>),
}

impl Json {
    /// An empty object, to fill with [`Json::field`].
    pub fn object() -> Json {
        Json::Object(Vec::new())
    }

    /// This object with `key` set to `value` (appended). On a value that is
    /// not an object it is a programming error: it panics.
    pub fn field(mut self, key: impl Into<String>, value: impl Into<Json>) -> Json {
        match &mut self {
            Json::Object(fields) => fields.push((key.into(), value.into())),
            other => panic!("Json::field on {:?}, not an object", other),
        }
        self
    }

    /// Renders the value as a JSON document, as DumpState answers it.
    pub fn into_bytes(self) -> Vec<u8> {
        self.to_string().into_bytes()
    }
}

/// Writes `s` as a JSON string literal.
pub fn write_string(f: &mut impl fmt::Write, s: &str) -> fmt::Result {
    f.write_char('"')?;
    for c in s.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            '\t' => f.write_str("\\t")?,
            c if (c as u32) < 0x20 => write!(f, "\\u{:04x}", c as u32)?,
            c => f.write_char(c)?,
        }
    }
    f.write_char('"')
}

impl fmt::Display for Json {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Json::Null => f.write_str("null"),
            Json::Bool(b) => write!(f, "{}", b),
            Json::Int(n) => write!(f, "{}", n),
            Json::String(s) => write_string(f, s),
            Json::Array(items) => {
                f.write_str("[")?;
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{}", v)?;
                }
                f.write_str("]")
            }
            Json::Object(fields) => {
                f.write_str("{")?;
                for (i, (k, v)) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write_string(f, k)?;
                    write!(f, ":{}", v)?;
                }
                f.write_str("}")
            }
        }
    }
}

impl From<bool> for Json {
    fn from(b: bool) -> Json {
        Json::Bool(b)
    }
}

impl From<i64> for Json {
    fn from(n: i64) -> Json {
        Json::Int(n)
    }
}

impl From<u32> for Json {
    fn from(n: u32) -> Json {
        Json::Int(n.into())
    }
}

impl From<u64> for Json {
    /// Saturates at i64::MAX.
    fn from(n: u64) -> Json {
        Json::Int(i64::try_from(n).unwrap_or(i64::MAX))
    }
}

impl From<usize> for Json {
    /// Saturates at i64::MAX.
    fn from(n: usize) -> Json {
        Json::Int(i64::try_from(n).unwrap_or(i64::MAX))
    }
}

impl From<&str> for Json {
    fn from(s: &str) -> Json {
        Json::String(s.to_string())
    }
}

impl From<String> for Json {
    fn from(s: String) -> Json {
        Json::String(s)
    }
}

impl<T: Into<Json>> From<Vec<T>> for Json {
    fn from(items: Vec<T>) -> Json {
        Json::Array(items.into_iter().map(Into::into).collect())
    }
}

impl<K: Into<String>, V: Into<Json>> From<BTreeMap<K, V>> for Json {
    /// An object with the map's keys in order.
    fn from(m: BTreeMap<K, V>) -> Json {
        Json::Object(m.into_iter().map(|(k, v)| (k.into(), v.into())).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_every_kind_and_escapes() {
        let mut m = BTreeMap::new();
        m.insert("z", vec!["x"]);
        m.insert("a", vec![]);
        let v = Json::object()
            .field("null", Json::Null)
            .field("neg", -3i64)
            .field("big", u64::MAX)
            .field("esc", "q\"b\\n\nt\t\u{1}")
            .field("map", m);
        assert_eq!(
            v.to_string(),
            r#"{"null":null,"neg":-3,"big":9223372036854775807,"esc":"q\"b\\n\nt\t\u0001","map":{"a":[],"z":["x"]}}"#
        );
        assert_eq!(Json::Array(vec![]).into_bytes(), b"[]");
    }
}
