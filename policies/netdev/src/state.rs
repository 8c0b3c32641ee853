//! The policy: interfaces, their device names and which claim holds which.

use std::collections::BTreeMap;

use nriwasm::abi::*;
use nriwasm::kit::json::Json;
use nriwasm::{Description, Error, Result};

use crate::config::{self, Config};
use crate::names;

/// The attribute name Kubernetes standardized for PCIe root alignment.
pub const PCIE_ROOT_ATTRIBUTE: &str = "resource.kubernetes.io/pcieRoot";
/// The longest string attribute value the API accepts.
const MAX_ATTRIBUTE_VALUE: usize = 64;
/// The most IPs KEP-4817 network data may list.
const MAX_IPS: usize = 16;

/// One interface and its device name.
#[derive(Clone)]
struct Nic {
    device: String,
    iface: NetworkInterface,
}

/// The netdev policy.
#[derive(Default)]
pub struct NetDev {
    /// Every interface of the topology with its device name, sorted by interface
    /// name. Names are assigned over all of them, so a configuration change never
    /// renames a device.
    all: Vec<Nic>,
    config: Config,
    /// The offered interfaces: those of all the configuration selects.
    nics: Vec<Nic>,
    /// Claim UID → the devices allocated to it.
    claims: BTreeMap<String, Vec<String>>,
    /// Device → the UID of the claim holding it exclusively.
    holders: BTreeMap<String, String>,
}

fn string(v: &str) -> DeviceAttribute {
    DeviceAttribute { value: Some(device_attribute::Value::StringValue(v.to_string())) }
}

fn int(v: i64) -> DeviceAttribute {
    DeviceAttribute { value: Some(device_attribute::Value::IntValue(v)) }
}

/// An environment variable name for a request: upper case, every character
/// other than A-Z, 0-9 and '_' (a subrequest's '/', a '-') becomes '_'.
fn env_name(request: &str) -> String {
    let req: String = request
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' })
        .collect();
    format!("NETDEV_{}_INTERFACE", req)
}

impl NetDev {
    /// Applies a configuration: the offered interfaces become those it selects.
    fn configure(&mut self, config: Config) {
        self.nics = self.all.iter().filter(|n| config.offers(&n.iface.name, n.iface.r#virtual)).cloned().collect();
        self.config = config;
    }

    fn nic(&self, device: &str) -> Option<&Nic> {
        self.nics.iter().find(|n| n.device == device)
    }

    fn device(nic: &Nic) -> Device {
        let i = &nic.iface;
        let mut attributes = BTreeMap::new();
        let mut put_string = |name: &str, value: &str| {
            if value.is_empty() {
                return;
            }
            if value.len() > MAX_ATTRIBUTE_VALUE {
                nriwasm::warn!(
                    "interface {}: attribute {} is {} characters, over the API's {}: left out",
                    i.name,
                    name,
                    value.len(),
                    MAX_ATTRIBUTE_VALUE
                );
                return;
            }
            attributes.insert(name.to_string(), string(value));
        };
        put_string("interfaceName", &i.name);
        put_string("macAddress", &i.mac);
        put_string("pciAddress", &i.pci_address);
        put_string(PCIE_ROOT_ATTRIBUTE, &i.pcie_root);
        if let Some(node) = i.numa_node {
            attributes.insert("numaNode".to_string(), int(i64::from(node)));
        }
        if i.mtu > 0 {
            attributes.insert("mtu".to_string(), int(i64::from(i.mtu)));
        }
        Device { name: nic.device.clone(), attributes, ..Default::default() }
    }

    fn prepared(nic: &Nic, result: &DeviceAllocation) -> PreparedDevice {
        let i = &nic.iface;
        if i.addresses.len() > MAX_IPS {
            nriwasm::warn!(
                "interface {} has {} addresses; the claim status lists the first {}",
                i.name,
                i.addresses.len(),
                MAX_IPS
            );
        }
        let ready = if i.up {
            Condition {
                r#type: "Ready".into(),
                status: "True".into(),
                reason: "InterfaceUp".into(),
                message: format!("interface {} is up", i.name),
            }
        } else {
            Condition {
                r#type: "Ready".into(),
                status: "False".into(),
                reason: "InterfaceDown".into(),
                message: format!("interface {} is down", i.name),
            }
        };
        PreparedDevice {
            request: result.request.clone(),
            pool: result.pool.clone(),
            device: result.device.clone(),
            share_id: result.share_id.clone(),
            container_edits: Some(CdiContainerEdits {
                env: vec![format!("{}={}", env_name(&result.request), i.name)],
                ..Default::default()
            }),
            status: Some(DeviceStatus {
                conditions: vec![ready],
                data: Vec::new(),
                network_data: Some(NetworkDeviceData {
                    interface_name: i.name.clone(),
                    ips: i.addresses.iter().take(MAX_IPS).cloned().collect(),
                    hardware_address: i.mac.clone(),
                }),
            }),
        }
    }

    /// Records that claim holds the devices of its exclusive results.
    fn hold(&mut self, uid: &str, results: &[DeviceAllocation]) {
        let devices: Vec<String> = results.iter().map(|r| r.device.clone()).collect();
        for r in results.iter().filter(|r| !r.admin_access) {
            self.holders.insert(r.device.clone(), uid.to_string());
        }
        self.claims.insert(uid.to_string(), devices);
    }

    fn free(&mut self, uid: &str) {
        if let Some(devices) = self.claims.remove(uid) {
            for d in devices {
                if self.holders.get(&d).map(String::as_str) == Some(uid) {
                    self.holders.remove(&d);
                }
            }
        }
    }
}

nriwasm::policy! {
impl Policy for NetDev {
    fn describe(&self) -> Description {
        Description {
            name: "netdev".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            summary: "offers the node's network interfaces as DRA devices".into(),
        }
    }

    fn init(&mut self, r: InitRequest) -> Result<InitResponse> {
        let config = config::parse(&r.config)?;
        let mut ifaces = r.topology.unwrap_or_default().network_interfaces;
        ifaces.sort_by(|a, b| a.name.cmp(&b.name));
        let devices = names::assign(ifaces.iter().map(|i| i.name.as_str()));
        self.all = devices.into_iter().zip(ifaces).map(|(device, iface)| Nic { device, iface }).collect();
        self.configure(config);
        self.claims.clear();
        self.holders.clear();
        for prepared in r.restore.unwrap_or_default().claims {
            let claim = prepared.claim.unwrap_or_default();
            let known: Vec<DeviceAllocation> = claim
                .results
                .into_iter()
                .filter(|res| {
                    let ok = self.nic(&res.device).is_some();
                    if !ok {
                        nriwasm::warn!(
                            "restored claim {}/{} holds device {}, which this node no longer has",
                            claim.namespace,
                            claim.name,
                            res.device
                        );
                    }
                    ok
                })
                .collect();
            self.hold(&claim.uid, &known);
        }
        nriwasm::info!(
            "netdev: {} interfaces offered, {} claims restored",
            self.nics.len(),
            self.claims.len()
        );
        Ok(InitResponse { wants_dra: true })
    }

    fn reconfigure(&mut self, r: ReconfigureRequest) -> Result<ReconfigureResponse> {
        // Claims keep what they were given; an interface no longer offered is
        // only refused to new claims.
        self.configure(config::parse(&r.config)?);
        nriwasm::info!("netdev: reconfigured, {} interfaces offered", self.nics.len());
        Ok(ReconfigureResponse { wants_dra: true, updates: vec![] })
    }

    fn devices(&mut self, _: DevicesRequest) -> Result<DevicesResponse> {
        Ok(DevicesResponse { devices: self.nics.iter().map(NetDev::device).collect(), shared_counters: vec![] })
    }

    fn allocate(&mut self, r: AllocateRequest) -> Result<AllocateResponse> {
        let claim = r.claim.unwrap_or_default();
        let mut devices = Vec::with_capacity(claim.results.len());
        for (i, res) in claim.results.iter().enumerate() {
            let field = format!("claim.results[{}].device", i);
            let nic = self.nic(&res.device).ok_or_else(|| {
                Error::not_found(field.clone(), format!("{:?} is not a network interface this node offers", res.device))
            })?;
            if let Some(holder) = self.holders.get(&res.device) {
                if holder != &claim.uid && !res.admin_access {
                    return Err(Error::failed_precondition(format!(
                        "device {:?} is allocated to claim {}",
                        res.device, holder
                    ))
                    .with_field(field));
                }
            }
            devices.push(NetDev::prepared(nic, res));
        }
        self.free(&claim.uid);
        self.hold(&claim.uid, &claim.results);
        Ok(AllocateResponse { devices, updates: vec![] })
    }

    fn release(&mut self, r: ReleaseRequest) -> Result<ReleaseResponse> {
        // Releasing an unknown claim succeeds: kubelet may unprepare twice.
        self.free(&r.claim.unwrap_or_default().uid);
        Ok(ReleaseResponse::default())
    }

    fn dump_state(&mut self, _: DumpStateRequest) -> Result<DumpStateResponse> {
        let devices = self.nics.iter().fold(Json::object(), |o, n| o.field(n.device.as_str(), n.iface.name.as_str()));
        let claims = self.claims.iter().fold(Json::object(), |o, (uid, devs)| o.field(uid.as_str(), devs.clone()));
        let state = Json::object().field("devices", devices).field("claims", claims);
        Ok(DumpStateResponse { json: state.into_bytes() })
    }
}
}

#[cfg(test)]
mod tests {
    use super::*;
    use nriwasm::testing::Client;

    fn initialized() -> Client<NetDev> {
        let mut client = Client::new(NetDev::default());
        let nic = NetworkInterface { name: "eth1".into(), pci_address: "0000:01:00.0".into(), ..Default::default() };
        let topology = Topology { network_interfaces: vec![nic], ..Default::default() };
        assert!(client.init(InitRequest { topology: Some(topology), ..Default::default() }).unwrap().wants_dra);
        client
    }

    fn claim(uid: &str, device: &str) -> AllocateRequest {
        let result = DeviceAllocation { request: "nic".into(), device: device.into(), ..Default::default() };
        AllocateRequest { claim: Some(Claim { uid: uid.into(), results: vec![result], ..Default::default() }) }
    }

    #[test]
    fn a_device_holds_one_claim_until_released() {
        let mut client = initialized();
        let device = client.devices(DevicesRequest::default()).unwrap().devices[0].name.clone();
        client.allocate(claim("a", &device)).unwrap();
        let refused = client.allocate(claim("b", &device)).unwrap_err();
        assert_eq!((refused.code, refused.field.as_str()), (ErrorCode::FailedPrecondition as i32, "claim.results[0].device"));
        client.release(ReleaseRequest { claim: Some(Claim { uid: "a".into(), ..Default::default() }) }).unwrap();
        client.allocate(claim("b", &device)).unwrap();
        let dump = String::from_utf8(client.dump_state(DumpStateRequest::default()).unwrap().json).unwrap();
        assert_eq!(dump, format!(r#"{{"devices":{{"{}":"eth1"}},"claims":{{"b":["{}"]}}}}"#, device, device));
    }

    #[test]
    fn unknown_devices_and_configuration_name_their_field() {
        let mut client = initialized();
        assert_eq!(client.allocate(claim("a", "nope")).unwrap_err().field, "claim.results[0].device");
        let bad = ReconfigureRequest { config: b"includeVirtual: maybe".to_vec() };
        assert_eq!(client.reconfigure(bad).unwrap_err().field, "config.includeVirtual");
    }

    #[test]
    fn env_names_are_valid() {
        assert_eq!(env_name("nic"), "NETDEV_NIC_INTERFACE");
        assert_eq!(env_name("fast-nic/sub-1"), "NETDEV_FAST_NIC_SUB_1_INTERFACE");
    }
}
