//! The policy's configuration, a small subset of YAML (JSON included):
//!
//! ```yaml
//! exclude: [eth0, "docker*"]   # interfaces never offered; a trailing * matches a prefix
//! includeVirtual: false        # offer bridges, veths, … too (default false)
//! ```
//!
//! Both keys are optional; the block forms (`exclude:` then `- eth0` lines) and a
//! flow mapping (`{"exclude": ["eth0"]}`) work too. Empty means the defaults.

use nriwasm::kit::config as kit;
use nriwasm::Result;

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

/// Parses the configuration (nriwasm's kit decodes it); errors name the field
/// ("config.exclude").
pub fn parse(config: &[u8]) -> Result<Config> {
    let c = kit::Config::parse(config)?;
    c.only(&["exclude", "includeVirtual"])?;
    let mut out = Config::default();
    if let Some(exclude) = c.list("exclude")? {
        out.exclude = exclude;
    }
    out.include_virtual = c.bool("includeVirtual")?.unwrap_or(false);
    Ok(out)
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
