//! The Rust SDK for nriwasm resource policies.
//!
//! A policy is a `cdylib` crate built for `wasm32-wasi` (or
//! `wasm32-unknown-unknown`): a type implementing [`Policy`], exported with
//! [`export_policy!`], and sealed with `nriwasm policy seal`:
//!
//! ```no_run
//! use nriwasm::abi::{CreateContainerRequest, CreateContainerResponse, ContainerAdjustment, InitRequest, InitResponse, Method};
//! use nriwasm::{Description, Policy, Result};
//!
//! #[derive(Default)]
//! struct PinAll { cpus: String }
//!
//! impl Policy for PinAll {
//!     fn describe(&self) -> Description {
//!         Description {
//!             name: "pin-all".into(),
//!             version: "0.1.0".into(),
//!             summary: "every container gets every CPU".into(),
//!             capabilities: vec![Method::Init, Method::CreateContainer],
//!         }
//!     }
//!     fn init(&mut self, r: InitRequest) -> Result<InitResponse> {
//!         let cpus = r.topology.unwrap_or_default().cpus;
//!         self.cpus = cpus.iter().map(|c| c.id.to_string()).collect::<Vec<_>>().join(",");
//!         Ok(InitResponse::default())
//!     }
//!     fn create_container(&mut self, _: CreateContainerRequest) -> Result<CreateContainerResponse> {
//!         let adjustment = ContainerAdjustment { cpuset_cpus: self.cpus.clone(), ..Default::default() };
//!         Ok(CreateContainerResponse { adjustment: Some(adjustment), updates: vec![] })
//!     }
//! }
//!
//! nriwasm::export_policy!(PinAll::default());
//! ```
//!
//! The crate implements abi/README.md: the exports `nriwasm_abi_version`,
//! `nriwasm_request_buffer` and `nriwasm_call`, a request buffer that only grows,
//! the `Response` envelope, the Init-first rule, `ERROR_CODE_UNIMPLEMENTED` for
//! unknown methods, and logging over the `nriwasm.log` import. The messages in
//! [`abi`] are generated from `abi/v1/*.proto` by prost-build; map fields are
//! `BTreeMap`s, so answers encode deterministically.

pub mod abi {
    //! The ABI v1 messages, generated from `abi/v1/*.proto`.
    #![allow(missing_docs, clippy::all)]
    include!(concat!(env!("OUT_DIR"), "/abi.v1.rs"));
}

mod dispatch;
mod error;
#[doc(hidden)]
pub mod exports;
pub mod log;
pub mod method;
mod policy;
mod updates;

pub use abi::{ErrorCode, Method};
pub use dispatch::{Dispatcher, ABI_MAJOR, ABI_MINOR, SDK_NAME};
pub use error::{Error, Result};
pub use policy::{is_dns_label, Description, Policy};
pub use updates::{expand_updates, fold_updates, MINOR_GROUPED_UPDATES};

/// Exports a policy from a `cdylib` crate: the three ABI exports serving the
/// value `$make` builds (once, when the host first enters the module), and
/// [`exports::Allocator`] as the global allocator so that running out of memory
/// is reported as such. An invalid [`Description`] makes the module fail at load
/// time with the reason.
///
/// ```no_run
/// # use nriwasm::{Description, Policy};
/// # #[derive(Default)]
/// # struct MyPolicy;
/// # impl Policy for MyPolicy {
/// #     fn describe(&self) -> Description { unimplemented!() }
/// # }
/// nriwasm::export_policy!(MyPolicy::default());
/// ```
#[macro_export]
macro_rules! export_policy {
    ($make:expr) => {
        #[doc(hidden)]
        fn __nriwasm_server() -> ::std::boxed::Box<dyn $crate::exports::Serve> {
            $crate::exports::server(|| $make)
        }

        /// ABI export: `major << 16 | minor`.
        #[no_mangle]
        pub extern "C" fn nriwasm_abi_version() -> u32 {
            $crate::exports::abi_version(__nriwasm_server)
        }

        /// ABI export: a pointer to a request buffer of at least `size` bytes.
        #[no_mangle]
        pub extern "C" fn nriwasm_request_buffer(size: u32) -> u32 {
            $crate::exports::request_buffer(__nriwasm_server, size)
        }

        /// ABI export: serve one call; the Response's `pointer << 32 | length`.
        #[no_mangle]
        pub extern "C" fn nriwasm_call(method: u32, length: u32) -> u64 {
            $crate::exports::call(__nriwasm_server, method, length)
        }

        #[global_allocator]
        static __NRIWASM_ALLOCATOR: $crate::exports::Allocator = $crate::exports::Allocator;
    };
}
