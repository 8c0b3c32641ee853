//! Names of the ABI's methods.

use crate::abi::Method;

/// All calls of ABI v1.2 but Info, in method order.
pub const CALLS: [Method; 15] = [
    Method::Init,
    Method::Reconfigure,
    Method::Devices,
    Method::Allocate,
    Method::Release,
    Method::Synchronize,
    Method::RunPodSandbox,
    Method::CreateContainer,
    Method::UpdateContainer,
    Method::StopContainer,
    Method::RemoveContainer,
    Method::StopPodSandbox,
    Method::RemovePodSandbox,
    Method::DumpState,
    Method::Pools,
];

/// The method's short name as the Go SDK and the host print it ("CreateContainer"),
/// or "Method(N)" for a number this ABI does not know.
pub fn name(method: i32) -> String {
    let known = match method {
        1 => "Info",
        2 => "Init",
        3 => "Reconfigure",
        4 => "Devices",
        5 => "Allocate",
        6 => "Release",
        7 => "Synchronize",
        8 => "RunPodSandbox",
        9 => "CreateContainer",
        10 => "UpdateContainer",
        11 => "StopContainer",
        12 => "RemoveContainer",
        13 => "StopPodSandbox",
        14 => "RemovePodSandbox",
        15 => "DumpState",
        16 => "Pools",
        _ => return format!("Method({})", method),
    };
    known.to_string()
}
