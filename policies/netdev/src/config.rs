//! The policy's configuration, a small subset of YAML (JSON included):
//!
//! ```yaml
//! exclude: [eth0, "docker*"]   # interfaces never offered; a trailing * matches a prefix
//! includeVirtual: false        # offer bridges, veths, … too (default false)
//! ```
//!
//! Both keys are optional; the block forms (`exclude:` then `- eth0` lines) and a
//! flow mapping (`{"exclude": ["eth0"]}`) work too. Empty means the defaults.

use nriwasm::{Error, Result};

/// What the configuration selects.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Config {
    /// Interface names or prefixes (ending in '*') never offered.
    pub exclude: Vec<String>,
    /// Offer interfaces without a backing device too.
    pub include_virtual: bool,
}

impl Config {
    /// Reports whether the interface is offered.
    pub fn offers(&self, name: &str, is_virtual: bool) -> bool {
        if is_virtual && !self.include_virtual {
            return false;
        }
        !self.exclude.iter().any(|p| match p.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => name == p,
        })
    }
}

/// A value: a scalar or a sequence of scalars.
enum Value {
    Scalar(String),
    List(Vec<String>),
}

/// Parses the configuration; errors name the field ("config.exclude").
pub fn parse(config: &[u8]) -> Result<Config> {
    let text = std::str::from_utf8(config).map_err(|_| Error::invalid_argument("config", "not UTF-8 text"))?;
    let mut out = Config::default();
    for (key, value) in entries(text)? {
        let field = format!("config.{}", key);
        match (key.as_str(), value) {
            ("exclude", Value::List(items)) => out.exclude = items,
            ("exclude", Value::Scalar(s)) if s.is_empty() => out.exclude.clear(),
            ("exclude", Value::Scalar(_)) => {
                return Err(Error::invalid_argument(field, "must be a list of interface names, e.g. [eth0, \"docker*\"]"))
            }
            ("includeVirtual", Value::Scalar(s)) => {
                out.include_virtual = match s.as_str() {
                    "true" => true,
                    "false" => false,
                    other => return Err(Error::invalid_argument(field, format!("{:?} is not true or false", other))),
                }
            }
            ("includeVirtual", Value::List(_)) => return Err(Error::invalid_argument(field, "must be true or false")),
            (_, _) => {
                return Err(Error::invalid_argument(field, "unknown key (netdev knows exclude and includeVirtual)"))
            }
        }
    }
    Ok(out)
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

    fn config(exclude: &[&str], include_virtual: bool) -> Config {
        Config { exclude: exclude.iter().map(|s| s.to_string()).collect(), include_virtual }
    }

    #[test]
    fn the_forms_users_write() {
        let cases: [(&str, Config); 7] = [
            ("", Config::default()),
            ("{}\n", Config::default()),
            ("# nothing\n", Config::default()),
            ("exclude: [eth0, \"docker*\"]\nincludeVirtual: true\n", config(&["eth0", "docker*"], true)),
            ("exclude:\n  - eth0   # the node's own\n  - 'br-*'\n", config(&["eth0", "br-*"], false)),
            ("{\"exclude\": [\"eth0\"], \"includeVirtual\": false}", config(&["eth0"], false)),
            ("exclude: []\n", config(&[], false)),
        ];
        for (text, want) in cases {
            assert_eq!(parse(text.as_bytes()), Ok(want), "{:?}", text);
        }
    }

    #[test]
    fn errors_name_the_field() {
        let cases = [
            ("exclude: eth0", "config.exclude"),
            ("includeVirtual: yes", "config.includeVirtual"),
            ("interfaces: [eth0]", "config.interfaces"),
            ("exclude: []\nexclude: [x]", "config.exclude"),
            ("exclude: [eth0", "config"),
            ("{exclude: [eth0]", "config"),
            ("just text", "config"),
            ("exclude: [[a]]", "config"),
        ];
        for (text, field) in cases {
            match parse(text.as_bytes()) {
                Ok(c) => panic!("{:?} parsed as {:?}", text, c),
                Err(e) => assert_eq!(e.field(), field, "{:?}: {}", text, e),
            }
        }
    }

    #[test]
    fn offers_applies_exclusions_and_virtual() {
        let c = config(&["eth0", "docker*"], false);
        assert!(c.offers("ens1f0", false));
        assert!(!c.offers("eth0", false));
        assert!(c.offers("eth01", false), "a name without '*' matches exactly");
        assert!(!c.offers("docker0", false));
        assert!(!c.offers("br0", true));
        assert!(config(&[], true).offers("br0", true));
    }
}
