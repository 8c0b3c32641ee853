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
}

impl Description {
    /// Checks the Description's shape: a DNS label name and a version.
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
        Ok(())
    }
}

/// The handler each call of the ABI is served by, in method order: what
/// [`policy!`](crate::policy!) matches the functions of an `impl Policy` block
/// against.
pub const HANDLERS: [(&str, Method); 15] = [
    ("init", Method::Init),
    ("reconfigure", Method::Reconfigure),
    ("devices", Method::Devices),
    ("allocate", Method::Allocate),
    ("release", Method::Release),
    ("synchronize", Method::Synchronize),
    ("run_pod_sandbox", Method::RunPodSandbox),
    ("create_container", Method::CreateContainer),
    ("update_container", Method::UpdateContainer),
    ("stop_container", Method::StopContainer),
    ("remove_container", Method::RemoveContainer),
    ("stop_pod_sandbox", Method::StopPodSandbox),
    ("remove_pod_sandbox", Method::RemovePodSandbox),
    ("dump_state", Method::DumpState),
    ("pools", Method::Pools),
];

/// The calls a policy implements, from the names of the functions its
/// `impl Policy` block defines ([`Policy::implemented`]), in method order.
pub fn capabilities(implemented: &[&str]) -> std::result::Result<Vec<Method>, String> {
    for f in implemented {
        if *f != "describe" && *f != "implemented" && !HANDLERS.iter().any(|(h, _)| h == f) {
            return Err(format!("fn {} is not a handler of the Policy trait", f));
        }
    }
    Ok(HANDLERS.iter().filter(|(h, _)| implemented.contains(h)).map(|(_, m)| *m).collect())
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
        /// A policy: its Description and one handler per ABI call. Implement it
        /// inside [`policy!`](crate::policy!), which lists the handlers the
        /// block defines: those are the policy's capabilities (in `Info` and
        /// the metadata section), and every other call answers its empty
        /// response without reaching the policy, as the ABI allows. So a
        /// handler written is a handler served, and leaving one out is seen in
        /// `nriwasm policy inspect`. Calls are strictly sequential, so handlers
        /// take `&mut self`. Requests arrive owned: keep what you need.
        ///
        /// Until `init` has succeeded every call but `Info` and `Init` answers
        /// `ERROR_CODE_FAILED_PRECONDITION` without reaching the policy.
        pub trait Policy {
            /// Who the policy is. Called once, when the module is loaded.
            fn describe(&self) -> Description;
            /// The names of the functions the `impl Policy` block defines,
            /// written by [`policy!`](crate::policy!); `None` (the default)
            /// for a block written without it, which the Dispatcher refuses.
            #[doc(hidden)]
            fn implemented(&self) -> Option<&'static [&'static str]> {
                None
            }
            $(
                $(#[$doc])*
                fn $fn(&mut self, request: $req) -> Result<$resp> {
                    let _ = request;
                    Err(Error::unimplemented(format!(
                        "{} is not implemented",
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
    /// Replaces the configuration; an Error keeps the old one in force. Its code
    /// tells the host what to do next: `INVALID_ARGUMENT` (the configuration is
    /// wrong) is reported as invalid; `FAILED_PRECONDITION` or
    /// `RESOURCE_EXHAUSTED` (valid, but the running containers or claims keep it
    /// from applying in place) lets the host apply it by a swap, a new instance
    /// initialized with it and restored from the journal; so does
    /// `UNIMPLEMENTED`, the answer of a policy without this handler.
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
