//! The Dispatcher: decodes a request, applies the Init gate and the declared
//! capabilities, calls the policy and wraps its answer in the Response envelope.

use prost::Message;

use crate::abi::response::Result as Answer;
use crate::abi::*;
use crate::error::Error;
use crate::method::name;
use crate::policy::Policy;
use crate::updates::{expand_updates, fold_updates, updates_of, MINOR_GROUPED_UPDATES};

/// The SDK's name and version in `PolicyMetadata.sdk`.
pub const SDK_NAME: &str = concat!("nriwasm-rust/", env!("CARGO_PKG_VERSION"));

/// The ABI version this crate implements: `major << 16 | minor`.
pub const ABI_MAJOR: u32 = 1;
/// The ABI minor version this crate implements.
pub const ABI_MINOR: u32 = 5;

/// Routes encoded requests to a policy's handlers. The Wasm exports drive it;
/// tests drive it natively through the same bytes.
pub struct Dispatcher<P> {
    policy: P,
    metadata: PolicyMetadata,
    initialized: bool,
    /// The last Init's `host_abi_minor`: which additions of v1 the host reads.
    host_minor: u32,
}

impl<P: Policy> Dispatcher<P> {
    /// Validates the policy's Description and binds it.
    pub fn new(policy: P) -> std::result::Result<Self, String> {
        let desc = policy.describe();
        desc.validate()?;
        let implemented = policy.implemented().ok_or_else(|| {
            format!(
                "policy {:?}: write its impl Policy block inside nriwasm::policy! {{ ... }}, which lists the calls it implements",
                desc.name
            )
        })?;
        let capabilities = crate::policy::capabilities(implemented)
            .map_err(|e| format!("policy {:?}: {}", desc.name, e))?
            .into_iter()
            .map(|m| m as i32)
            .collect();
        let metadata = PolicyMetadata {
            name: desc.name,
            version: desc.version,
            abi_major: ABI_MAJOR,
            abi_minor: ABI_MINOR,
            capabilities,
            description: desc.summary,
            sdk: SDK_NAME.to_string(),
            // A Rust policy gets its configuration as the user wrote it.
            config_format: ConfigFormat::Unspecified as i32,
        };
        Ok(Dispatcher { policy, metadata, initialized: false, host_minor: 0 })
    }

    /// What Info answers.
    pub fn metadata(&self) -> &PolicyMetadata {
        &self.metadata
    }

    /// The ABI minor version the host announced in the last Init
    /// (`InitRequest.host_abi_minor`): 0 for a v1.0 host, or before Init.
    pub fn host_abi_minor(&self) -> u32 {
        self.host_minor
    }

    /// The policy, for tests that look at its state.
    pub fn policy(&self) -> &P {
        &self.policy
    }

    /// Serves one call and encodes the Response into `out` (cleared first).
    pub fn dispatch_into(&mut self, method: i32, request: &[u8], out: &mut Vec<u8>) {
        let response = self.dispatch(method, request);
        out.clear();
        out.reserve(response.encoded_len());
        response.encode(out).expect("a Vec grows to fit any message");
    }

    /// Serves one call. It never panics on bad input: an unknown method answers
    /// `ERROR_CODE_UNIMPLEMENTED`, an undecodable request
    /// `ERROR_CODE_INVALID_ARGUMENT`. A panic in the policy itself propagates.
    pub fn dispatch(&mut self, method: i32, request: &[u8]) -> Response {
        if method < Method::Info as i32 || method > Method::Pools as i32 {
            return error(Error::unimplemented(format!(
                "method {} is not part of ABI v{}.{}",
                method, ABI_MAJOR, ABI_MINOR
            )));
        }
        if !self.initialized && method != Method::Info as i32 && method != Method::Init as i32 {
            return error(Error::failed_precondition(format!("{} before Init", name(method))));
        }
        let mut answer = match self.serve(method, request) {
            Ok(answer) => answer,
            Err(e) => return error(e),
        };
        // The updates in the form the host reads: folded for a host that
        // expands groups (v1.1), every group expanded for an older one.
        if let Some(us) = updates_of(&mut answer) {
            if !us.is_empty() {
                let taken = std::mem::take(us);
                if self.host_minor >= MINOR_GROUPED_UPDATES {
                    *us = fold_updates(taken);
                } else {
                    match expand_updates(taken) {
                        Ok(expanded) => *us = expanded,
                        Err(e) => return error(e),
                    }
                }
            }
        }
        if method == Method::Init as i32 {
            self.initialized = true;
        }
        Response { result: Some(answer) }
    }

    fn declared(&self, method: i32) -> bool {
        self.metadata.capabilities.contains(&method)
    }
}

/// What the Dispatcher keeps of a request: the host's ABI minor from Init.
trait Seen {
    fn host_abi_minor(&self) -> Option<u32> {
        None
    }
}

impl Seen for InitRequest {
    fn host_abi_minor(&self) -> Option<u32> {
        Some(self.host_abi_minor)
    }
}

macro_rules! unseen {
    ($($req:ident),*) => { $(impl Seen for $req {})* };
}

unseen!(ReconfigureRequest, DevicesRequest, AllocateRequest, ReleaseRequest, SynchronizeRequest, RunPodSandboxRequest,
    CreateContainerRequest, UpdateContainerRequest, StopContainerRequest, RemoveContainerRequest, StopPodSandboxRequest,
    RemovePodSandboxRequest, DumpStateRequest, PoolsRequest);

impl<P> Dispatcher<P> {
    fn saw(&mut self, req: &impl Seen) {
        if let Some(minor) = req.host_abi_minor() {
            self.host_minor = minor;
        }
    }
}

fn error(e: Error) -> Response {
    Response { result: Some(Answer::Error(e.into())) }
}

fn decode<T: Message + Default>(request: &[u8]) -> Result<T, Error> {
    T::decode(request).map_err(|e| Error::invalid_argument("", format!("decode request: {}", e)))
}

macro_rules! serve {
    ($( $method:ident => $fn:ident($req:ident) -> $variant:ident; )*) => {
        impl<P: Policy> Dispatcher<P> {
            fn serve(&mut self, method: i32, request: &[u8]) -> Result<Answer, Error> {
                if method == Method::Info as i32 {
                    let _: InfoRequest = decode(request)?;
                    return Ok(Answer::Info(InfoResponse { metadata: Some(self.metadata.clone()) }));
                }
                $(
                    if method == Method::$method as i32 {
                        let req: $req = decode(request)?;
                        self.saw(&req);
                        if !self.declared(method) {
                            return Ok(Answer::$variant(Default::default()));
                        }
                        return self.policy.$fn(req).map(Answer::$variant);
                    }
                )*
                unreachable!("method {} was checked against the ABI's range", method)
            }
        }
    };
}

serve! {
    Init => init(InitRequest) -> Init;
    Reconfigure => reconfigure(ReconfigureRequest) -> Reconfigure;
    Devices => devices(DevicesRequest) -> Devices;
    Allocate => allocate(AllocateRequest) -> Allocate;
    Release => release(ReleaseRequest) -> Release;
    Synchronize => synchronize(SynchronizeRequest) -> Synchronize;
    RunPodSandbox => run_pod_sandbox(RunPodSandboxRequest) -> RunPodSandbox;
    CreateContainer => create_container(CreateContainerRequest) -> CreateContainer;
    UpdateContainer => update_container(UpdateContainerRequest) -> UpdateContainer;
    StopContainer => stop_container(StopContainerRequest) -> StopContainer;
    RemoveContainer => remove_container(RemoveContainerRequest) -> RemoveContainer;
    StopPodSandbox => stop_pod_sandbox(StopPodSandboxRequest) -> StopPodSandbox;
    RemovePodSandbox => remove_pod_sandbox(RemovePodSandboxRequest) -> RemovePodSandbox;
    DumpState => dump_state(DumpStateRequest) -> DumpState;
    Pools => pools(PoolsRequest) -> Pools;
}
