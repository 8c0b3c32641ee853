//! The maps a placement needs, built once from Init's topology.

use std::collections::BTreeMap;

use crate::abi::Topology;
use crate::kit::CpuSet;

/// The topology's CPUs grouped as a placement looks them up.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TopologyMaps {
    /// Every CPU of the node.
    pub cpus: CpuSet,
    /// NUMA node → its CPUs.
    pub node_cpus: BTreeMap<u32, CpuSet>,
    /// Package (socket) → its CPUs.
    pub package_cpus: BTreeMap<u32, CpuSet>,
    /// CPU → the CPUs of its core, itself included (its hyperthreads).
    pub siblings: BTreeMap<u32, CpuSet>,
    /// The CPUs the kernel isolates (isolcpus).
    pub isolated: CpuSet,
}

impl TopologyMaps {
    /// Builds the maps. Siblings come from the topology's `thread_siblings`,
    /// or, where sysfs gave none, from the CPUs sharing package and core id.
    pub fn new(topology: &Topology) -> Self {
        let mut m = TopologyMaps::default();
        let mut cores: BTreeMap<(u32, u32), CpuSet> = BTreeMap::new();
        for c in &topology.cpus {
            m.cpus.insert(c.id);
            m.node_cpus.entry(c.numa_node).or_default().insert(c.id);
            m.package_cpus.entry(c.package_id).or_default().insert(c.id);
            cores.entry((c.package_id, c.core_id)).or_default().insert(c.id);
            if c.isolated {
                m.isolated.insert(c.id);
            }
        }
        for c in &topology.cpus {
            let siblings = if c.thread_siblings.is_empty() {
                cores[&(c.package_id, c.core_id)].clone()
            } else {
                let mut s: CpuSet = c.thread_siblings.iter().copied().collect();
                s.insert(c.id);
                s
            };
            m.siblings.insert(c.id, siblings);
        }
        m
    }

    /// The CPUs of the NUMA node, empty for a node the topology lacks.
    pub fn node(&self, node: u32) -> CpuSet {
        self.node_cpus.get(&node).cloned().unwrap_or_default()
    }

    /// The whole cores among `cpus`: the CPUs whose every sibling is in `cpus`.
    pub fn whole_cores(&self, cpus: &CpuSet) -> CpuSet {
        cpus.iter().filter(|c| self.siblings.get(c).map_or(false, |s| s.is_subset(cpus))).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::Cpu;

    /// Two nodes of two cores of two threads; CPU 7 without sysfs siblings.
    fn topology() -> Topology {
        let cpu = |id: u32, core: u32, node: u32, siblings: &[u32]| Cpu {
            id,
            core_id: core,
            numa_node: node,
            package_id: 0,
            thread_siblings: siblings.to_vec(),
            isolated: id == 6,
            ..Default::default()
        };
        Topology {
            cpus: vec![
                cpu(0, 0, 0, &[0, 4]),
                cpu(4, 0, 0, &[0, 4]),
                cpu(1, 1, 0, &[1, 5]),
                cpu(5, 1, 0, &[1, 5]),
                cpu(2, 2, 1, &[2, 6]),
                cpu(6, 2, 1, &[2, 6]),
                cpu(3, 3, 1, &[]),
                cpu(7, 3, 1, &[]),
            ],
            ..Default::default()
        }
    }

    #[test]
    fn maps_follow_the_topology() {
        let m = TopologyMaps::new(&topology());
        assert_eq!(m.cpus.to_string(), "0-7");
        assert_eq!(m.node(0).to_string(), "0-1,4-5");
        assert_eq!(m.node(1).to_string(), "2-3,6-7");
        assert!(m.node(9).is_empty());
        assert_eq!(m.package_cpus[&0].to_string(), "0-7");
        assert_eq!(m.siblings[&4].to_string(), "0,4");
        assert_eq!(m.siblings[&7].to_string(), "3,7", "siblings from package and core id");
        assert_eq!(m.isolated.to_string(), "6");
        assert_eq!(m.whole_cores(&"0-2,4".parse().unwrap()).to_string(), "0,4");
    }
}
