//! netdev: an nriwasm policy, written with the Rust SDK, that offers the node's
//! network interfaces as DRA devices.
//!
//! - `Init` takes the interfaces from the topology the host discovered; every
//!   interface with a backing device (not a bridge, veth, loopback, …) becomes a
//!   device named after it, normalized to a DNS label (collisions get "-2", "-3").
//!   The configuration (config.rs) excludes interfaces by name or prefix and can
//!   include virtual ones; `Reconfigure` changes it. The policy always wants DRA.
//! - `Devices` offers them with the attributes `interfaceName`, `macAddress`,
//!   `pciAddress`, `numaNode`, `mtu` and `resource.kubernetes.io/pcieRoot`
//!   (each where the topology knows it).
//! - `Allocate` answers, per allocation result, the CDI env
//!   `NETDEV_<REQUEST>_INTERFACE=<interface>` and the KEP-4817 status: a Ready
//!   condition (True when the interface is up) and network data (interface name,
//!   its addresses in canonical CIDR form, MAC). A device another claim holds is
//!   refused; `Init`'s restore state brings back what was allocated.
//! - `Release` frees the claim's devices; `DumpState` shows devices and holders.

mod config;
mod names;
mod state;

pub use config::Config;
pub use names::{assign, normalize};
pub use state::NetDev;

nriwasm::export_policy!(NetDev::default());
