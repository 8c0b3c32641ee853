//! The conformance reference policy of `sdk/go/conformance`, written with the
//! Rust SDK. Its rules (that package's documentation) fix every answer, so the
//! host's conformance suite runs the Go and the Rust module through the same
//! checks and requires the same responses. The container's name selects a
//! misbehaviour: "panic", "loop", "oom", "print", "refuse" or "log".

use std::collections::BTreeMap;
use std::io::Write;

use nriwasm::abi::*;
use nriwasm::{Description, Error, Result};

/// Annotations the policy reads and writes.
pub const CPUSET_ANNOTATION: &str = "conformance.nriwasm.io/cpuset";
pub const SEEN_ANNOTATION: &str = "conformance.nriwasm.io/seen";
pub const FIRST_ANNOTATION: &str = "conformance.nriwasm.io/first";
/// The containers UpdateContainer updates one by one.
pub const EACH_ANNOTATION: &str = "conformance.nriwasm.io/each";
/// The containers UpdateContainer updates as one group.
pub const GROUP_ANNOTATION: &str = "conformance.nriwasm.io/group";

/// The conformance policy.
#[derive(Default)]
pub struct Conformance {
    created: u64,
    first: String,
    events: Vec<&'static str>,
    sink: Vec<Vec<u8>>,
}

fn check_config(config: &[u8]) -> Result<bool> {
    match config {
        b"reject" => Err(Error::invalid_argument("config", "config \"reject\" is rejected by design")),
        b"dra" => Ok(true),
        _ => Ok(false),
    }
}

impl Conformance {
    /// Counts a created (or restored) container and keeps the first one's name.
    fn count(&mut self, name: &str) {
        self.created += 1;
        if self.created == 1 {
            self.first = name.to_string();
        }
    }

    fn record(&mut self, method: &'static str) {
        self.events.push(method);
    }
}

nriwasm::policy! {
impl Policy for Conformance {
    fn describe(&self) -> Description {
        Description {
            name: "conformance".into(),
            version: "1.0.0".into(),
            summary: "the ABI conformance reference policy".into(),
        }
    }

    fn init(&mut self, r: InitRequest) -> Result<InitResponse> {
        let wants_dra = check_config(&r.config)?;
        // Answers depend only on what came since Init: the state starts over
        // from the restore journal.
        *self = Conformance::default();
        self.record("Init");
        if let Some(restore) = &r.restore {
            for c in &restore.containers {
                self.count(&c.name);
            }
        }
        Ok(InitResponse { wants_dra })
    }

    fn reconfigure(&mut self, r: ReconfigureRequest) -> Result<ReconfigureResponse> {
        let wants_dra = check_config(&r.config)?;
        self.record("Reconfigure");
        Ok(ReconfigureResponse { wants_dra, updates: vec![] })
    }

    fn devices(&mut self, _: DevicesRequest) -> Result<DevicesResponse> {
        self.record("Devices");
        let index = DeviceAttribute { value: Some(device_attribute::Value::IntValue(0)) };
        let units = DeviceCapacity { value: "4".into(), request_policy: None };
        Ok(DevicesResponse {
            devices: vec![Device {
                name: "dev0".into(),
                attributes: BTreeMap::from([("conformance.nriwasm.io/index".to_string(), index)]),
                capacities: BTreeMap::from([("units".to_string(), units)]),
                ..Default::default()
            }],
            shared_counters: vec![],
        })
    }

    fn allocate(&mut self, r: AllocateRequest) -> Result<AllocateResponse> {
        self.record("Allocate");
        let results = r.claim.map(|c| c.results).unwrap_or_default();
        let devices = results
            .into_iter()
            .map(|res| PreparedDevice {
                container_edits: Some(CdiContainerEdits {
                    env: vec![format!("CONFORMANCE_{}={}", res.request.to_uppercase(), res.device)],
                    ..Default::default()
                }),
                status: Some(DeviceStatus {
                    conditions: vec![Condition {
                        r#type: "Ready".into(),
                        status: "True".into(),
                        reason: "Prepared".into(),
                        message: String::new(),
                    }],
                    ..Default::default()
                }),
                request: res.request,
                pool: res.pool,
                device: res.device,
                share_id: res.share_id,
            })
            .collect();
        Ok(AllocateResponse { devices, updates: vec![] })
    }

    fn create_container(&mut self, r: CreateContainerRequest) -> Result<CreateContainerResponse> {
        let c = r.container.unwrap_or_default();
        match c.name.as_str() {
            "panic" => panic!("conformance: panic requested"),
            "loop" => loop {
                // A volatile write the optimizer must keep: the loop never ends.
                unsafe { std::ptr::write_volatile(&mut self.created, self.created.wrapping_add(1)) }
            },
            "oom" => loop {
                // Reserved, not written: the allocator alone must hit the cap.
                self.sink.push(Vec::with_capacity(1 << 20));
            },
            "print" => {
                let _ = writeln!(std::io::stdout(), "conformance: to stdout");
                let _ = writeln!(std::io::stderr(), "conformance: to stderr");
                panic!("conformance: panic after printing");
            }
            "refuse" => return Err(Error::resource_exhausted("container.name", "refused by design")),
            "log" => {
                nriwasm::log::debug("conformance: debug");
                nriwasm::log::info("conformance: info");
                nriwasm::log::warn("conformance: warn");
                nriwasm::log::error("conformance: error");
            }
            _ => {}
        }
        self.count(&c.name);
        let mut env = c.env;
        env.reverse();
        Ok(CreateContainerResponse {
            adjustment: Some(ContainerAdjustment {
                cpuset_cpus: c.annotations.get(CPUSET_ANNOTATION).cloned().unwrap_or_default(),
                env,
                annotations: BTreeMap::from([
                    (SEEN_ANNOTATION.to_string(), self.created.to_string()),
                    (FIRST_ANNOTATION.to_string(), self.first.clone()),
                ]),
                ..Default::default()
            }),
            updates: vec![],
        })
    }

    fn release(&mut self, _: ReleaseRequest) -> Result<ReleaseResponse> {
        self.record("Release");
        Ok(ReleaseResponse::default())
    }

    fn synchronize(&mut self, _: SynchronizeRequest) -> Result<SynchronizeResponse> {
        self.record("Synchronize");
        Ok(SynchronizeResponse::default())
    }

    fn run_pod_sandbox(&mut self, _: RunPodSandboxRequest) -> Result<RunPodSandboxResponse> {
        Ok(RunPodSandboxResponse::default())
    }

    fn update_container(&mut self, r: UpdateContainerRequest) -> Result<UpdateContainerResponse> {
        self.record("UpdateContainer");
        let annotations = r.container.unwrap_or_default().annotations;
        let mut updates = Vec::new();
        if let Some(ids) = annotations.get(EACH_ANNOTATION).filter(|ids| !ids.is_empty()) {
            for id in ids.split(',') {
                updates.push(ContainerUpdate {
                    container_id: id.to_string(),
                    cpuset_cpus: "0-1".into(),
                    cpuset_mems: "0".into(),
                    ..Default::default()
                });
            }
        }
        if let Some(ids) = annotations.get(GROUP_ANNOTATION).filter(|ids| !ids.is_empty()) {
            let mut all = ids.split(',').map(String::from);
            updates.push(ContainerUpdate {
                container_id: all.next().unwrap_or_default(),
                also_container_ids: all.collect(),
                cpuset_cpus: "2-3".into(),
                ..Default::default()
            });
        }
        Ok(UpdateContainerResponse { updates })
    }

    fn stop_container(&mut self, _: StopContainerRequest) -> Result<StopContainerResponse> {
        self.record("StopContainer");
        Ok(StopContainerResponse::default())
    }

    fn remove_container(&mut self, _: RemoveContainerRequest) -> Result<RemoveContainerResponse> {
        self.record("RemoveContainer");
        Ok(RemoveContainerResponse::default())
    }

    fn stop_pod_sandbox(&mut self, _: StopPodSandboxRequest) -> Result<StopPodSandboxResponse> {
        self.record("StopPodSandbox");
        Ok(StopPodSandboxResponse::default())
    }

    fn remove_pod_sandbox(&mut self, _: RemovePodSandboxRequest) -> Result<RemovePodSandboxResponse> {
        self.record("RemovePodSandbox");
        Ok(RemovePodSandboxResponse::default())
    }

    fn pools(&mut self, _: PoolsRequest) -> Result<PoolsResponse> {
        let pool = Pool {
            name: "all".into(),
            cpus: "0-3".into(),
            shared_cpus: "2-3".into(),
            capacity_milli_cpu: 4000,
            allocated_milli_cpu: 100 * self.created,
            container_ids: if self.created > 0 { vec![self.first.clone()] } else { vec![] },
            memory_nodes: "0".into(),
        };
        Ok(PoolsResponse { pools: vec![pool] })
    }

    fn dump_state(&mut self, _: DumpStateRequest) -> Result<DumpStateResponse> {
        // The events are fixed method names: no JSON escaping is needed.
        let names: Vec<String> = self.events.iter().map(|e| format!("\"{}\"", e)).collect();
        Ok(DumpStateResponse { json: format!("[{}]", names.join(",")).into_bytes() })
    }
}
}

nriwasm::export_policy!(Conformance::default());
