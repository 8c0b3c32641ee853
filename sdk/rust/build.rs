//! Generates the ABI's messages from abi/v1/*.proto with prost-build.
//!
//! Every map field becomes a BTreeMap: its entries encode in key order, so an
//! answer's bytes are a function of its contents (abi/README.md section 10) and
//! match what the Go SDK's answers decode to.

use std::io;
use std::path::PathBuf;

fn main() -> io::Result<()> {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let root = manifest.join("../..").canonicalize()?;
    let protos = ["abi", "dra", "lifecycle", "pod", "policy", "response", "topology"]
        .iter()
        .map(|name| root.join("abi/v1").join(format!("{}.proto", name)))
        .collect::<Vec<_>>();
    for proto in &protos {
        println!("cargo:rerun-if-changed={}", proto.display());
    }
    let mut config = prost_build::Config::new();
    config.btree_map(["."]);
    config.compile_protos(&protos, &[root])
}
