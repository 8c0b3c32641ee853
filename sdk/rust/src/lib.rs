//! The Rust SDK for nriwasm resource policies.
//!
//! A policy is a `cdylib` crate built for `wasm32-wasip1` (`wasm32-wasi` before
//! Rust 1.78, as Debian's 1.63): a type implementing [`Policy`] inside
//! [`policy!`], exported with [`export_policy!`], and sealed with `nriwasm
//! policy seal`. The [`kit`] has what most policies need (CPU sets, topology
//! maps, configuration decoding, DumpState JSON) and [`testing`] a typed client
//! for native tests:
//!
//! ```no_run
//! use nriwasm::abi::{CreateContainerRequest, CreateContainerResponse, ContainerAdjustment, InitRequest, InitResponse};
//! use nriwasm::kit::CpuSet;
//! use nriwasm::{Description, Result};
//!
//! #[derive(Default)]
//! struct PinAll { cpus: CpuSet }
//!
//! nriwasm::policy! {
//!     impl Policy for PinAll {
//!         fn describe(&self) -> Description {
//!             Description { name: "pin-all".into(), version: "0.1.0".into(), summary: "every container gets every CPU".into() }
//!         }
//!         fn init(&mut self, r: InitRequest) -> Result<InitResponse> {
//!             self.cpus = r.topology.unwrap_or_default().cpus.iter().map(|c| c.id).collect();
//!             Ok(InitResponse::default())
//!         }
//!         fn create_container(&mut self, _: CreateContainerRequest) -> Result<CreateContainerResponse> {
//!             let adjustment = ContainerAdjustment { cpuset_cpus: self.cpus.to_string(), ..Default::default() };
//!             Ok(CreateContainerResponse { adjustment: Some(adjustment), updates: vec![] })
//!         }
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
pub mod kit;
pub mod testing;
pub mod log;
pub mod method;
mod policy;
mod updates;

pub use abi::{ErrorCode, Method};
pub use dispatch::{Dispatcher, ABI_MAJOR, ABI_MINOR, SDK_NAME};
pub use error::{Error, Result};
pub use policy::{capabilities, is_dns_label, Description, Policy, HANDLERS};
pub use updates::{expand_updates, fold_updates, MINOR_GROUPED_UPDATES};

/// Implements [`Policy`] for a type from an `impl Policy for Type { ... }`
/// block, and records which handlers the block defines: they are the policy's
/// capabilities, so the list can neither miss a handler that is written (a
/// `remove_container` that would never be called) nor name one that is not.
///
/// ```
/// use nriwasm::abi::{RemoveContainerRequest, RemoveContainerResponse};
/// use nriwasm::{Description, Dispatcher, Method, Result};
///
/// #[derive(Default)]
/// struct Quiet;
///
/// nriwasm::policy! {
///     impl Policy for Quiet {
///         fn describe(&self) -> Description {
///             Description { name: "quiet".into(), version: "0.1.0".into(), summary: "frees nothing".into() }
///         }
///         fn remove_container(&mut self, _: RemoveContainerRequest) -> Result<RemoveContainerResponse> {
///             Ok(RemoveContainerResponse::default())
///         }
///     }
/// }
///
/// let d = Dispatcher::new(Quiet).unwrap();
/// assert_eq!(d.metadata().capabilities, vec![Method::RemoveContainer as i32]);
/// ```
#[macro_export]
macro_rules! policy {
    (impl Policy for $ty:ty { $($body:tt)* }) => {
        impl $crate::Policy for $ty {
            $($body)*

            fn implemented(&self) -> ::std::option::Option<&'static [&'static str]> {
                ::std::option::Option::Some($crate::__handler_names!([] $($body)*))
            }
        }
    };
}

/// The names of the functions of an impl block's items, one item per step
/// (so a block of every handler stays far below the recursion limit).
#[doc(hidden)]
#[macro_export]
macro_rules! __handler_names {
    ([$($names:expr,)*]) => { &[$($names,)*] };
    ([$($names:expr,)*] $(#[$meta:meta])* fn $name:ident ($($args:tt)*) $(-> $ret:ty)? $body:block $($rest:tt)*) => {
        $crate::__handler_names!([$($names,)* stringify!($name),] $($rest)*)
    };
}

/// Exports a policy from a `cdylib` crate: the three ABI exports serving the
/// value `$make` builds (once, when the host first enters the module), and
/// [`exports::Allocator`] as the global allocator so that running out of memory
/// is reported as such. An invalid [`Description`] makes the module fail at load
/// time with the reason.
///
/// ```no_run
/// # use nriwasm::Description;
/// # #[derive(Default)]
/// # struct MyPolicy;
/// # nriwasm::policy! { impl Policy for MyPolicy {
/// #     fn describe(&self) -> Description { unimplemented!() }
/// # } }
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
