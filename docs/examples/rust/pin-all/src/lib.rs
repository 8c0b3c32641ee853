//! The Rust policy of docs/writing-policies.md: every container gets the
//! node's CPUs but those the configuration reserves, and the memory nodes of
//! the CPUs it gets.

use nriwasm::abi::*;
use nriwasm::kit::config::Config;
use nriwasm::kit::{CpuSet, TopologyMaps};
use nriwasm::{Description, Error, Result};

/// The policy. Its answers depend only on Init (configuration and topology),
/// so restoring after a rebuild needs nothing from the journal.
#[derive(Default)]
pub struct PinAll {
    cpus: CpuSet,
    mems: CpuSet,
}

nriwasm::policy! {
    impl Policy for PinAll {
        fn describe(&self) -> Description {
            Description {
                name: "pin-all".into(),
                version: env!("CARGO_PKG_VERSION").into(),
                summary: "every container gets every unreserved CPU".into(),
            }
        }

        fn init(&mut self, r: InitRequest) -> Result<InitResponse> {
            let config = Config::parse(&r.config)?;
            config.only(&["reserved"])?;
            let reserved = config.cpuset("reserved")?.unwrap_or_default();
            let maps = TopologyMaps::new(&r.topology.unwrap_or_default());
            self.cpus = maps.cpus.difference(&reserved);
            if self.cpus.is_empty() {
                return Err(Error::invalid_argument("config.reserved", format!("reserves every CPU of the node ({})", reserved)));
            }
            self.mems = maps.node_cpus.iter().filter(|(_, cpus)| !cpus.intersection(&self.cpus).is_empty()).map(|(node, _)| *node).collect();
            nriwasm::info!("pin-all: containers get CPUs {}, memory nodes {}", self.cpus, self.mems);
            Ok(InitResponse::default())
        }

        fn create_container(&mut self, _: CreateContainerRequest) -> Result<CreateContainerResponse> {
            let adjustment = ContainerAdjustment { cpuset_cpus: self.cpus.to_string(), cpuset_mems: self.mems.to_string(), ..Default::default() };
            Ok(CreateContainerResponse { adjustment: Some(adjustment), updates: vec![] })
        }
    }
}

nriwasm::export_policy!(PinAll::default());

#[cfg(test)]
mod tests {
    use super::*;
    use nriwasm::testing::Client;

    fn topology() -> Topology {
        let cpu = |id, numa_node| Cpu { id, numa_node, ..Default::default() };
        Topology { cpus: vec![cpu(0, 0), cpu(1, 0), cpu(2, 1), cpu(3, 1)], ..Default::default() }
    }

    #[test]
    fn containers_get_the_unreserved_cpus_and_their_nodes() {
        let mut client = Client::new(PinAll::default());
        let init = InitRequest { topology: Some(topology()), config: b"reserved: 0-1".to_vec(), ..Default::default() };
        client.init(init).unwrap();
        let adj = client.create_container(CreateContainerRequest::default()).unwrap().adjustment.unwrap();
        assert_eq!((adj.cpuset_cpus.as_str(), adj.cpuset_mems.as_str()), ("2-3", "1"));
    }

    #[test]
    fn reserving_every_cpu_is_refused() {
        let mut client = Client::new(PinAll::default());
        let init = InitRequest { topology: Some(topology()), config: b"reserved: 0-3".to_vec(), ..Default::default() };
        assert_eq!(client.init(init).unwrap_err().field, "config.reserved");
    }
}
