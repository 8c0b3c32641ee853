//! What most policies need beside the ABI: [`CpuSet`] (the Linux CPU list
//! format), [`TopologyMaps`] (NUMA node → CPUs, CPU → its core's siblings,
//! package → CPUs), [`config`] (decoding a small YAML/JSON configuration
//! without serde, as Debian's crates allow) and [`json`] (DumpState's JSON).
//! It is the Rust counterpart of the Go SDK's `abi/cpuset` and
//! `sdk/go/policyconfig`.

mod cpuset;
pub mod config;
pub mod json;
mod topology;

pub use cpuset::CpuSet;
pub use topology::TopologyMaps;
