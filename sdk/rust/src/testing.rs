//! A typed client for a policy's native tests: every call goes through the
//! [`Dispatcher`] as encoded bytes, as the Wasm exports drive it, and comes
//! back as the call's own response or the policy's [`abi::Error`](crate::abi::Error).
//!
//! ```
//! use nriwasm::abi::{CreateContainerRequest, CreateContainerResponse, ErrorCode, InitRequest, InitResponse};
//! use nriwasm::testing::Client;
//! use nriwasm::{Description, Result};
//!
//! #[derive(Default)]
//! struct Echo;
//! nriwasm::policy! {
//!     impl Policy for Echo {
//!         fn describe(&self) -> Description {
//!             Description { name: "echo".into(), version: "0.1.0".into(), summary: "".into() }
//!         }
//!         fn init(&mut self, _: InitRequest) -> Result<InitResponse> { Ok(InitResponse::default()) }
//!     }
//! }
//!
//! let mut client = Client::new(Echo);
//! let refused = client.create_container(CreateContainerRequest::default()).unwrap_err();
//! assert_eq!(refused.code, ErrorCode::FailedPrecondition as i32); // before Init
//! client.init(InitRequest::default()).unwrap();
//! assert_eq!(client.create_container(CreateContainerRequest::default()), Ok(CreateContainerResponse::default()));
//! ```

use prost::Message;

use crate::abi::response::Result as Answer;
use crate::abi::*;
use crate::dispatch::Dispatcher;
use crate::policy::Policy;

/// Drives a policy through its Dispatcher with typed requests and answers.
pub struct Client<P> {
    dispatcher: Dispatcher<P>,
}

/// A call's outcome: its response, or the Error the policy answered.
pub type Answered<T> = std::result::Result<T, crate::abi::Error>;

impl<P: Policy> Client<P> {
    /// A client of `policy`. It panics on an invalid Description, as loading
    /// such a module fails.
    pub fn new(policy: P) -> Self {
        match Dispatcher::new(policy) {
            Ok(dispatcher) => Client { dispatcher },
            Err(e) => panic!("invalid policy: {}", e),
        }
    }

    /// The policy, to look at its state.
    pub fn policy(&self) -> &P {
        self.dispatcher.policy()
    }

    /// The Dispatcher, for what the typed calls do not cover (raw bytes, a
    /// method number the ABI does not know).
    pub fn dispatcher(&mut self) -> &mut Dispatcher<P> {
        &mut self.dispatcher
    }

    fn call(&mut self, method: Method, request: &impl Message) -> Answer {
        let mut out = Vec::new();
        self.dispatcher.dispatch_into(method as i32, &request.encode_to_vec(), &mut out);
        let response = Response::decode(out.as_slice()).expect("the Dispatcher encodes a Response");
        response.result.expect("a Response carries a result")
    }
}

macro_rules! calls {
    ($( $(#[$doc:meta])* $fn:ident($req:ident) -> $resp:ident = $method:ident; )*) => {
        impl<P: Policy> Client<P> {
            $(
                $(#[$doc])*
                pub fn $fn(&mut self, request: $req) -> Answered<$resp> {
                    match self.call(Method::$method, &request) {
                        Answer::$method(r) => Ok(r),
                        Answer::Error(e) => Err(e),
                        other => panic!("{} answered {:?}", stringify!($method), other),
                    }
                }
            )*
        }
    };
}

calls! {
    /// Info: the policy's metadata.
    info(InfoRequest) -> InfoResponse = Info;
    /// Init.
    init(InitRequest) -> InitResponse = Init;
    /// Reconfigure.
    reconfigure(ReconfigureRequest) -> ReconfigureResponse = Reconfigure;
    /// Devices.
    devices(DevicesRequest) -> DevicesResponse = Devices;
    /// Allocate.
    allocate(AllocateRequest) -> AllocateResponse = Allocate;
    /// Release.
    release(ReleaseRequest) -> ReleaseResponse = Release;
    /// Synchronize.
    synchronize(SynchronizeRequest) -> SynchronizeResponse = Synchronize;
    /// RunPodSandbox.
    run_pod_sandbox(RunPodSandboxRequest) -> RunPodSandboxResponse = RunPodSandbox;
    /// CreateContainer.
    create_container(CreateContainerRequest) -> CreateContainerResponse = CreateContainer;
    /// UpdateContainer.
    update_container(UpdateContainerRequest) -> UpdateContainerResponse = UpdateContainer;
    /// StopContainer.
    stop_container(StopContainerRequest) -> StopContainerResponse = StopContainer;
    /// RemoveContainer.
    remove_container(RemoveContainerRequest) -> RemoveContainerResponse = RemoveContainer;
    /// StopPodSandbox.
    stop_pod_sandbox(StopPodSandboxRequest) -> StopPodSandboxResponse = StopPodSandbox;
    /// RemovePodSandbox.
    remove_pod_sandbox(RemovePodSandboxRequest) -> RemovePodSandboxResponse = RemovePodSandbox;
    /// DumpState.
    dump_state(DumpStateRequest) -> DumpStateResponse = DumpState;
}
