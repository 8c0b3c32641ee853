//! The Policy trait and the Description every policy gives of itself.

use crate::abi::*;
use crate::error::{Error, Result};
use crate::method::name;

/// Who a policy is and which calls it serves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Description {
    /// A DNS label ("netdev"); it names the policy's DRA driver.
    pub name: String,
    /// The policy's own semantic version, without a leading "v".
    pub version: String,
    /// One line that says what the policy does.
    pub summary: String,
    /// The calls the policy implements, listed in `Info` and in the module's
    /// metadata section. Every other call answers its empty response without
    /// reaching the policy, as the ABI allows; a listed call the policy does not
    /// implement answers `ERROR_CODE_UNIMPLEMENTED`. `Info` is always served and
    /// must not be listed.
    pub capabilities: Vec<Method>,
}

impl Description {
    /// Checks the Description's shape: a DNS label name, a version, and
    /// capabilities that are calls of this ABI.
    pub fn validate(&self) -> std::result::Result<(), String> {
        if !is_dns_label(&self.name) {
            return Err(format!(
                "policy name {:?}: must be a DNS label (lower-case alphanumerics and '-', at most 63 characters)",
                self.name
            ));
        }
        if self.version.is_empty() {
            return Err(format!("policy {:?}: version must not be empty", self.name));
        }
        if self.version.starts_with('v') {
            return Err(format!("policy {:?}: version {:?} must not start with \"v\"", self.name, self.version));
        }
        for m in &self.capabilities {
            if *m == Method::Unspecified || *m == Method::Info {
                return Err(format!(
                    "policy {:?}: capability {} is not a call a policy implements (Info is always served)",
                    self.name,
                    name(*m as i32)
                ));
            }
        }
        Ok(())
    }
}

/// Reports whether s is a DNS label (RFC 1123): 1–63 characters, lower-case
/// alphanumerics and '-', starting and ending with an alphanumeric.
pub fn is_dns_label(s: &str) -> bool {
    let b = s.as_bytes();
    let alnum = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    !b.is_empty()
        && b.len() <= 63
        && alnum(&b[0])
        && alnum(&b[b.len() - 1])
        && b.iter().all(|c| alnum(c) || *c == b'-')
}

macro_rules! handlers {
    ($( $(#[$doc:meta])* $fn:ident($req:ident) -> $resp:ident = $method:ident; )*) => {
        /// A policy: its Description and one handler per ABI call. Every handler
        /// has a default that answers `ERROR_CODE_UNIMPLEMENTED`; implement those
        /// listed in [`Description::capabilities`]. Calls are strictly sequential,
        /// so handlers take `&mut self`. Requests arrive owned: keep what you need.
        ///
        /// Until `init` has succeeded every call but `Info` and `Init` answers
        /// `ERROR_CODE_FAILED_PRECONDITION` without reaching the policy.
        pub trait Policy {
            /// Who the policy is. Called once, when the module is loaded.
            fn describe(&self) -> Description;
            $(
                $(#[$doc])*
                fn $fn(&mut self, request: $req) -> Result<$resp> {
                    let _ = request;
                    Err(Error::unimplemented(format!(
                        "the policy lists {} as a capability but does not implement it",
                        name(Method::$method as i32)
                    )))
                }
            )*
        }
    };
}

handlers! {
    /// Receives the configuration, node, topology and restore state once per
    /// instance. The policy must honour the assignments in `request.restore`.
    init(InitRequest) -> InitResponse = Init;
    /// Replaces the configuration; an Error keeps the old one in force.
    reconfigure(ReconfigureRequest) -> ReconfigureResponse = Reconfigure;
    /// Lists the DRA devices this node offers.
    devices(DevicesRequest) -> DevicesResponse = Devices;
    /// Prepares a claim: one PreparedDevice per allocation result.
    allocate(AllocateRequest) -> AllocateResponse = Allocate;
    /// Unprepares a claim.
    release(ReleaseRequest) -> ReleaseResponse = Release;
    /// Everything the runtime runs, after a (re)connect.
    synchronize(SynchronizeRequest) -> SynchronizeResponse = Synchronize;
    /// A pod sandbox starts.
    run_pod_sandbox(RunPodSandboxRequest) -> RunPodSandboxResponse = RunPodSandbox;
    /// A container is created: its adjustment and updates to others.
    create_container(CreateContainerRequest) -> CreateContainerResponse = CreateContainer;
    /// A container's resources change.
    update_container(UpdateContainerRequest) -> UpdateContainerResponse = UpdateContainer;
    /// A container stops.
    stop_container(StopContainerRequest) -> StopContainerResponse = StopContainer;
    /// A container is removed.
    remove_container(RemoveContainerRequest) -> RemoveContainerResponse = RemoveContainer;
    /// A pod sandbox stops.
    stop_pod_sandbox(StopPodSandboxRequest) -> StopPodSandboxResponse = StopPodSandbox;
    /// A pod sandbox is removed.
    remove_pod_sandbox(RemovePodSandboxRequest) -> RemovePodSandboxResponse = RemovePodSandbox;
    /// The policy's state as JSON, for debugging.
    dump_state(DumpStateRequest) -> DumpStateResponse = DumpState;
    /// The policy's pools of CPUs (ABI v1.2), which the host exports as
    /// `nriwasm_pool_*` metrics. Optional: the host asks only a policy that
    /// lists `Method::Pools` in its capabilities.
    pools(PoolsRequest) -> PoolsResponse = Pools;
}
