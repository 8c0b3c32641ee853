//! A set of CPU ids in the Linux list format ("0-3,8,10-11").

use std::collections::BTreeSet;
use std::fmt;
use std::iter::FromIterator;
use std::str::FromStr;

use crate::error::Error;

/// The largest CPU id a list may name: Linux's NR_CPUS ceiling, so a typo
/// ("0-40960") is refused instead of allocating a huge set.
pub const MAX_CPU: u32 = 8191;

/// A set of CPU ids, ordered. `to_string` gives the canonical Linux list, a
/// range for every run of two or more ("0-3,5,7-8"), as the host prints it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct CpuSet(BTreeSet<u32>);

impl CpuSet {
    /// The empty set.
    pub fn new() -> Self {
        CpuSet(BTreeSet::new())
    }

    /// Parses a Linux CPU list: comma-separated ids and inclusive ranges
    /// "a-b", spaces around items allowed, "" for the empty set. Errors are
    /// `INVALID_ARGUMENT` naming `field` and the bad item.
    pub fn parse(list: &str, field: &str) -> Result<Self, Error> {
        let mut set = BTreeSet::new();
        let list = list.trim();
        if list.is_empty() {
            return Ok(CpuSet(set));
        }
        for item in list.split(',') {
            let item = item.trim();
            let id = |s: &str| -> Result<u32, Error> {
                let n: u32 = s.trim().parse().map_err(|_| {
                    Error::invalid_argument(field, format!("{:?} in {:?} is not a CPU id or range", item, list))
                })?;
                if n > MAX_CPU {
                    return Err(Error::invalid_argument(field, format!("CPU {} in {:?} is over the limit of {}", n, list, MAX_CPU)));
                }
                Ok(n)
            };
            match item.split_once('-') {
                Some((a, b)) => {
                    let (a, b) = (id(a)?, id(b)?);
                    if a > b {
                        return Err(Error::invalid_argument(field, format!("range {:?} in {:?} runs backwards", item, list)));
                    }
                    set.extend(a..=b);
                }
                None => {
                    set.insert(id(item)?);
                }
            }
        }
        Ok(CpuSet(set))
    }

    /// The number of CPUs.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Reports whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Reports whether the set holds `cpu`.
    pub fn contains(&self, cpu: u32) -> bool {
        self.0.contains(&cpu)
    }

    /// Adds `cpu`; reports whether it was new.
    pub fn insert(&mut self, cpu: u32) -> bool {
        self.0.insert(cpu)
    }

    /// Removes `cpu`; reports whether it was there.
    pub fn remove(&mut self, cpu: u32) -> bool {
        self.0.remove(&cpu)
    }

    /// The CPUs in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.0.iter().copied()
    }

    /// The lowest CPU, if any.
    pub fn first(&self) -> Option<u32> {
        self.0.iter().next().copied()
    }

    /// The CPUs in either set.
    pub fn union(&self, other: &CpuSet) -> CpuSet {
        CpuSet(self.0.union(&other.0).copied().collect())
    }

    /// The CPUs in both sets.
    pub fn intersection(&self, other: &CpuSet) -> CpuSet {
        CpuSet(self.0.intersection(&other.0).copied().collect())
    }

    /// The CPUs of this set not in `other`.
    pub fn difference(&self, other: &CpuSet) -> CpuSet {
        CpuSet(self.0.difference(&other.0).copied().collect())
    }

    /// Reports whether every CPU of this set is in `other`.
    pub fn is_subset(&self, other: &CpuSet) -> bool {
        self.0.is_subset(&other.0)
    }
}

impl fmt::Display for CpuSet {
    /// The canonical Linux list: ascending, runs of two or more as "a-b".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut ids = self.0.iter().copied().peekable();
        let mut first = true;
        while let Some(start) = ids.next() {
            let mut end = start;
            while ids.peek() == Some(&(end + 1)) {
                end = ids.next().unwrap_or(end);
            }
            if !first {
                f.write_str(",")?;
            }
            first = false;
            if end == start {
                write!(f, "{}", start)?;
            } else {
                write!(f, "{}-{}", start, end)?;
            }
        }
        Ok(())
    }
}

impl FromStr for CpuSet {
    type Err = Error;

    /// [`CpuSet::parse`] with the field "cpuset".
    fn from_str(s: &str) -> Result<Self, Error> {
        CpuSet::parse(s, "cpuset")
    }
}

impl FromIterator<u32> for CpuSet {
    fn from_iter<I: IntoIterator<Item = u32>>(iter: I) -> Self {
        CpuSet(iter.into_iter().collect())
    }
}

impl Extend<u32> for CpuSet {
    fn extend<I: IntoIterator<Item = u32>>(&mut self, iter: I) {
        self.0.extend(iter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_format_round_trip() {
        for (list, want, len) in [
            ("", "", 0),
            ("0", "0", 1),
            ("0-3", "0-3", 4),
            ("3,1,2,0", "0-3", 4),
            ("0-1,3", "0-1,3", 3),
            (" 8 , 0-2 ,4", "0-2,4,8", 5),
            ("5-5,7", "5,7", 2),
        ] {
            let set = CpuSet::parse(list, "cpus").unwrap();
            assert_eq!(set.to_string(), want, "{:?}", list);
            assert_eq!(set.len(), len, "{:?}", list);
        }
    }

    #[test]
    fn errors_name_the_field_and_the_item() {
        for (list, want) in [
            ("0-x", "\"0-x\""),
            ("a", "\"a\""),
            ("3-1", "runs backwards"),
            ("0,,1", "\"\""),
            ("8192", "over the limit of 8191"),
        ] {
            let e = CpuSet::parse(list, "config.cpus").unwrap_err();
            assert_eq!(e.field(), "config.cpus", "{:?}", list);
            assert!(e.to_string().contains(want), "{:?}: {}", list, e);
        }
    }

    #[test]
    fn set_operations() {
        let a: CpuSet = "0-5".parse().unwrap();
        let b: CpuSet = "4-7".parse().unwrap();
        assert_eq!(a.union(&b).to_string(), "0-7");
        assert_eq!(a.intersection(&b).to_string(), "4-5");
        assert_eq!(a.difference(&b).to_string(), "0-3");
        assert!(a.intersection(&b).is_subset(&a));
        assert_eq!(b.first(), Some(4));
        let mut c = CpuSet::new();
        assert!(c.insert(2) && !c.insert(2) && c.contains(2) && c.remove(2) && c.is_empty());
    }
}
