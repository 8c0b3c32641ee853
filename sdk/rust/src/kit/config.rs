//! Decoding a policy's configuration without serde: a small subset of YAML
//! that JSON is part of, enough for flat settings.
//!
//! ```yaml
//! exclude: [eth0, "docker*"]   # a flow list; quotes optional
//! includeVirtual: false
//! reserved:                    # a block list
//!   - 0-1
//! ```
//!
//! Top-level keys map to a scalar or a list of scalars; `{"a": [1]}` (JSON, a
//! flow mapping) works too, and empty means no keys. Every error is
//! `INVALID_ARGUMENT` naming the field ("config.exclude"), so the host and
//! `nriwasm simulate` show which setting is wrong.
//!
//! ```
//! use nriwasm::kit::config::Config;
//! let c = Config::parse(b"cpus: 0-3\nshared: true\n").unwrap();
//! c.only(&["cpus", "shared", "names"]).unwrap();
//! assert_eq!(c.cpuset("cpus").unwrap().unwrap().to_string(), "0-3");
//! assert_eq!(c.bool("shared").unwrap(), Some(true));
//! assert_eq!(c.list("names").unwrap(), None);
//! assert_eq!(c.bool("cpus").unwrap_err().field(), "config.cpus");
//! ```

use crate::error::{Error, Result};
use crate::kit::CpuSet;

/// A value: a scalar or a list of scalars.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// A string, number or boolean, as written (quotes removed).
    Scalar(String),
    /// A list of scalars.
    List(Vec<String>),
}

/// A parsed configuration: its top-level keys in order, each once.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Config {
    entries: Vec<(String, Value)>,
}

/// The field path of a key.
fn field(key: &str) -> String {
    format!("config.{}", key)
}

impl Config {
    /// Parses `config` (UTF-8). A key given twice is refused.
    pub fn parse(config: &[u8]) -> Result<Config> {
        let text = std::str::from_utf8(config).map_err(|_| Error::invalid_argument("config", "not UTF-8 text"))?;
        Ok(Config { entries: entries(text)? })
    }

    /// The keys, in the order written.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(k, _)| k.as_str())
    }

    /// The value of `key`, if given.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Refuses a key that is not in `known`, naming it and the known ones.
    pub fn only(&self, known: &[&str]) -> Result<()> {
        match self.keys().find(|k| !known.contains(k)) {
            Some(k) => Err(Error::invalid_argument(field(k), format!("unknown key (known: {})", known.join(", ")))),
            None => Ok(()),
        }
    }

    /// The scalar of `key`; a list is refused.
    pub fn string(&self, key: &str) -> Result<Option<String>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Scalar(s)) => Ok(Some(s.clone())),
            Some(Value::List(_)) => Err(Error::invalid_argument(field(key), "must be a single value, not a list")),
        }
    }

    /// The list of `key`; an empty value is the empty list, a scalar is refused.
    pub fn list(&self, key: &str) -> Result<Option<Vec<String>>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::List(items)) => Ok(Some(items.clone())),
            Some(Value::Scalar(s)) if s.is_empty() => Ok(Some(Vec::new())),
            Some(Value::Scalar(_)) => Err(Error::invalid_argument(field(key), "must be a list, e.g. [a, b]")),
        }
    }

    /// `key` as true or false.
    pub fn bool(&self, key: &str) -> Result<Option<bool>> {
        match self.string(key)?.as_deref() {
            None => Ok(None),
            Some("true") => Ok(Some(true)),
            Some("false") => Ok(Some(false)),
            Some(other) => Err(Error::invalid_argument(field(key), format!("{:?} is not true or false", other))),
        }
    }

    /// `key` as an unsigned integer.
    pub fn u64(&self, key: &str) -> Result<Option<u64>> {
        match self.string(key)? {
            None => Ok(None),
            Some(s) => s
                .parse()
                .map(Some)
                .map_err(|_| Error::invalid_argument(field(key), format!("{:?} is not a whole number", s))),
        }
    }

    /// `key` as a Linux CPU list ("0-3,8").
    pub fn cpuset(&self, key: &str) -> Result<Option<CpuSet>> {
        match self.string(key)? {
            None => Ok(None),
            Some(s) => CpuSet::parse(&s, &field(key)).map(Some),
        }
    }
}

fn strip_comment(line: &str) -> &str {
    let mut quote = None;
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (None, '"') | (None, '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '#') if i == 0 || line[..i].ends_with(char::is_whitespace) => return &line[..i],
            _ => {}
        }
    }
    line
}

/// The top-level entries, in order; a key given twice is refused.
fn entries(text: &str) -> Result<Vec<(String, Value)>> {
    let lines: Vec<&str> = text.lines().map(|l| strip_comment(l).trim_end()).filter(|l| !l.trim().is_empty()).collect();
    let joined = lines.join(" ");
    let flow = joined.trim();
    let mut out: Vec<(String, Value)> = Vec::new();
    if flow.is_empty() {
        return Ok(out);
    }
    if let Some(inner) = flow.strip_prefix('{') {
        let inner = inner
            .strip_suffix('}')
            .ok_or_else(|| Error::invalid_argument("config", "a flow mapping must end with '}'"))?;
        for part in split_top(inner) {
            if part.trim().is_empty() {
                continue;
            }
            let (k, v) = key_value(part)?;
            push(&mut out, k, value(v)?)?;
        }
        return Ok(out);
    }
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if line.starts_with(char::is_whitespace) {
            return Err(Error::invalid_argument("config", format!("unexpected indented line {:?}", line.trim())));
        }
        let (k, v) = key_value(line)?;
        i += 1;
        let v = v.trim();
        if v.is_empty() {
            let mut items = Vec::new();
            while i < lines.len() && lines[i].trim_start().starts_with('-') {
                items.push(scalar(lines[i].trim_start()[1..].trim())?);
                i += 1;
            }
            push(&mut out, k, if items.is_empty() { Value::Scalar(String::new()) } else { Value::List(items) })?;
        } else {
            push(&mut out, k, value(v)?)?;
        }
    }
    Ok(out)
}

fn push(out: &mut Vec<(String, Value)>, key: String, value: Value) -> Result<()> {
    if out.iter().any(|(k, _)| *k == key) {
        return Err(Error::invalid_argument(format!("config.{}", key), "appears twice"));
    }
    out.push((key, value));
    Ok(())
}

/// Splits at commas outside brackets and quotes.
fn split_top(s: &str) -> Vec<&str> {
    let (mut parts, mut depth, mut quote, mut start) = (Vec::new(), 0, None, 0);
    for (i, c) in s.char_indices() {
        match (quote, c) {
            (None, '"') | (None, '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '[') => depth += 1,
            (None, ']') => depth -= 1,
            (None, ',') if depth == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

fn key_value(s: &str) -> Result<(String, &str)> {
    let s = s.trim();
    let quoted = s.starts_with('"') || s.starts_with('\'');
    let colon = if quoted { s[1..].find(&s[..1]).map(|e| e + 2) } else { Some(0) }
        .and_then(|from| s[from..].find(':').map(|c| c + from))
        .ok_or_else(|| Error::invalid_argument("config", format!("{:?} is not \"key: value\"", s)))?;
    Ok((scalar(&s[..colon])?, &s[colon + 1..]))
}

fn value(s: &str) -> Result<Value> {
    let s = s.trim();
    match s.strip_prefix('[') {
        Some(inner) => {
            let inner = inner
                .strip_suffix(']')
                .ok_or_else(|| Error::invalid_argument("config", format!("{:?}: a list must end with ']'", s)))?;
            let items = split_top(inner).into_iter().filter(|p| !p.trim().is_empty()).map(|p| scalar(p.trim()));
            Ok(Value::List(items.collect::<Result<_>>()?))
        }
        None => Ok(Value::Scalar(scalar(s)?)),
    }
}

fn scalar(s: &str) -> Result<String> {
    let s = s.trim();
    for q in ['"', '\''] {
        if let Some(inner) = s.strip_prefix(q) {
            return inner
                .strip_suffix(q)
                .map(str::to_string)
                .ok_or_else(|| Error::invalid_argument("config", format!("unterminated quote in {:?}", s)));
        }
    }
    if s.contains(['[', ']', '{', '}']) {
        return Err(Error::invalid_argument("config", format!("{:?}: nested values are not supported", s)));
    }
    Ok(s.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(items: &[&str]) -> Value {
        Value::List(items.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn the_forms_users_write() {
        let cases: [(&str, Vec<(&str, Value)>); 7] = [
            ("", vec![]),
            ("{}\n", vec![]),
            ("# nothing\n", vec![]),
            ("exclude: [eth0, \"docker*\"]\nincludeVirtual: true\n", vec![("exclude", list(&["eth0", "docker*"])), ("includeVirtual", Value::Scalar("true".into()))]),
            ("exclude:\n  - eth0   # the node's own\n  - 'br-*'\n", vec![("exclude", list(&["eth0", "br-*"]))]),
            ("{\"exclude\": [\"eth0\"], \"n\": 3}", vec![("exclude", list(&["eth0"])), ("n", Value::Scalar("3".into()))]),
            ("exclude: []\n", vec![("exclude", list(&[]))]),
        ];
        for (text, want) in cases {
            let c = Config::parse(text.as_bytes()).unwrap_or_else(|e| panic!("{:?}: {}", text, e));
            let got: Vec<(&str, Value)> = c.keys().map(|k| (k, c.get(k).unwrap().clone())).collect();
            assert_eq!(got, want, "{:?}", text);
        }
    }

    #[test]
    fn errors_name_the_field() {
        let c = Config::parse(b"a: [x]\nb: yes\nn: -1\ncpus: 0-x\n").unwrap();
        assert_eq!(c.string("a").unwrap_err().field(), "config.a");
        assert_eq!(c.bool("b").unwrap_err().field(), "config.b");
        assert_eq!(c.list("b").unwrap_err().field(), "config.b");
        assert_eq!(c.u64("n").unwrap_err().field(), "config.n");
        assert_eq!(c.cpuset("cpus").unwrap_err().field(), "config.cpus");
        let e = c.only(&["a", "b"]).unwrap_err();
        assert_eq!(e.field(), "config.n");
        assert!(e.to_string().contains("known: a, b"), "{}", e);
        for (text, field) in [("a: []\na: [x]", "config.a"), ("a: [x", "config"), ("{a: [x]", "config"), ("just text", "config"), ("a: [[x]]", "config")] {
            assert_eq!(Config::parse(text.as_bytes()).unwrap_err().field(), field, "{:?}", text);
        }
        assert_eq!(Config::parse(b"\xff").unwrap_err().field(), "config");
    }

    #[test]
    fn typed_values() {
        let c = Config::parse(b"n: 42\ncpus: \"0-2,4\"\nflag: false\nnone:\n").unwrap();
        assert_eq!(c.u64("n").unwrap(), Some(42));
        assert_eq!(c.cpuset("cpus").unwrap().unwrap().to_string(), "0-2,4");
        assert_eq!(c.bool("flag").unwrap(), Some(false));
        assert_eq!(c.list("none").unwrap(), Some(vec![]));
        assert_eq!(c.u64("missing").unwrap(), None);
    }
}
