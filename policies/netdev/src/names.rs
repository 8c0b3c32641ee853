//! Device names: interface names normalized to DNS labels, unique on the node.

use std::collections::BTreeSet;

/// The longest DNS label.
const MAX_LABEL: usize = 63;

/// Normalizes an interface name to a DNS label: lower-case, every character
/// other than a-z, 0-9 and '-' becomes '-', runs of '-' collapse, leading and
/// trailing '-' go, and the result is cut to 63 characters. A name with nothing
/// left becomes "netdev".
pub fn normalize(ifname: &str) -> String {
    let mut out = String::with_capacity(ifname.len());
    for c in ifname.chars() {
        let c = c.to_ascii_lowercase();
        let c = if c.is_ascii_lowercase() || c.is_ascii_digit() { c } else { '-' };
        if c == '-' && (out.is_empty() || out.ends_with('-')) {
            continue;
        }
        out.push(c);
    }
    out.truncate(MAX_LABEL);
    while out.ends_with('-') {
        out.pop();
    }
    if out.is_empty() {
        out.push_str("netdev");
    }
    out
}

/// Gives each interface (in the order given, which callers keep sorted) a device
/// name: its normalized name, or, when an earlier interface took that, the
/// normalized name with the first free suffix "-2", "-3", … (cut so that the
/// whole stays a DNS label).
pub fn assign<'a>(ifnames: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut taken = BTreeSet::new();
    let mut names = Vec::new();
    for ifname in ifnames {
        let base = normalize(ifname);
        let mut name = base.clone();
        let mut n = 2u32;
        while taken.contains(&name) {
            let suffix = format!("-{}", n);
            let mut stem = base.clone();
            stem.truncate(MAX_LABEL - suffix.len());
            while stem.ends_with('-') {
                stem.pop();
            }
            name = stem + &suffix;
            n += 1;
        }
        taken.insert(name.clone());
        names.push(name);
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use nriwasm::is_dns_label;

    #[test]
    fn normalize_makes_dns_labels() {
        let cases = [
            ("ens1f0", "ens1f0"),
            ("eth0.100", "eth0-100"),
            ("Wlan_0", "wlan-0"),
            ("--x--", "x"),
            ("a..b", "a-b"),
            ("___", "netdev"),
            ("", "netdev"),
            ("enp0s31f6émoji", "enp0s31f6-moji"),
        ];
        for (ifname, want) in cases {
            let got = normalize(ifname);
            assert_eq!(got, want, "normalize({:?})", ifname);
            assert!(is_dns_label(&got), "{:?} is not a DNS label", got);
        }
        let long = normalize(&"x".repeat(100));
        assert_eq!(long.len(), 63);
        let cut_at_dash = normalize(&format!("{}-{}", "y".repeat(62), "z"));
        assert_eq!(cut_at_dash, "y".repeat(62), "a trailing '-' left by the cut must go");
    }

    #[test]
    fn assign_resolves_collisions_deterministically() {
        let long = "q".repeat(70);
        let names = assign(["eth0.100", "eth0_100", "eth0-100", "eth0-100-2", &long, &long.to_uppercase()]);
        assert_eq!(
            names,
            vec![
                "eth0-100".to_string(),
                "eth0-100-2".to_string(),
                "eth0-100-3".to_string(),
                "eth0-100-2-2".to_string(),
                "q".repeat(63),
                format!("{}-2", "q".repeat(61)),
            ]
        );
        let unique: BTreeSet<_> = names.iter().collect();
        assert_eq!(unique.len(), names.len());
        assert!(names.iter().all(|n| is_dns_label(n)));
    }
}
