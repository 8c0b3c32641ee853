//! The Dispatcher driven natively through encoded bytes, as the Wasm exports do.

use prost::Message;

use nriwasm::abi::response::Result as Answer;
use nriwasm::abi::*;
use nriwasm::{Description, Dispatcher, Error, Policy, Result, SDK_NAME};

/// Implements Init and CreateContainer: its capabilities.
#[derive(Default)]
struct TestPolicy {
    fail_init: bool,
    inits: u32,
    created: Vec<CreateContainerRequest>,
    create_error: Option<Error>,
}

nriwasm::policy! {
impl Policy for TestPolicy {
    fn describe(&self) -> Description {
        Description { name: "test-policy".into(), version: "1.2.3".into(), summary: "a test policy".into() }
    }

    fn init(&mut self, r: InitRequest) -> Result<InitResponse> {
        self.inits += 1;
        if self.fail_init {
            return Err(Error::invalid_argument("config", format!("bad config {:?}", String::from_utf8_lossy(&r.config))));
        }
        Ok(InitResponse { wants_dra: r.config == b"dra" })
    }

    fn create_container(&mut self, r: CreateContainerRequest) -> Result<CreateContainerResponse> {
        self.created.push(r);
        match &self.create_error {
            Some(e) => Err(e.clone()),
            None => Ok(CreateContainerResponse { adjustment: Some(ContainerAdjustment::default()), updates: vec![] }),
        }
    }
}
}

fn dispatcher(p: TestPolicy) -> Dispatcher<TestPolicy> {
    Dispatcher::new(p).expect("valid description")
}

fn initialized() -> Dispatcher<TestPolicy> {
    let mut d = dispatcher(TestPolicy::default());
    assert!(matches!(d.dispatch(Method::Init as i32, &[]).result, Some(Answer::Init(_))));
    d
}

fn error_of(r: Response) -> nriwasm::abi::Error {
    match r.result {
        Some(Answer::Error(e)) => e,
        other => panic!("answer {:?}, want an Error", other),
    }
}

fn expect_error(r: Response, code: ErrorCode, field: &str, message: &str) {
    let e = error_of(r);
    assert_eq!(e.code, code as i32, "code of {:?}", e);
    assert_eq!(e.field, field, "field of {:?}", e);
    assert_eq!(e.message, message, "message of {:?}", e);
}

#[test]
fn info_answers_the_metadata_before_init() {
    let mut d = dispatcher(TestPolicy::default());
    let req = InfoRequest { host_abi_minor: 7 }.encode_to_vec();
    let md = match d.dispatch(Method::Info as i32, &req).result {
        Some(Answer::Info(i)) => i.metadata.expect("metadata"),
        other => panic!("Info answered {:?}", other),
    };
    assert_eq!(
        md,
        PolicyMetadata {
            name: "test-policy".into(),
            version: "1.2.3".into(),
            abi_major: 1,
            abi_minor: nriwasm::ABI_MINOR,
            // The handlers written, in method order.
            capabilities: vec![Method::Init as i32, Method::CreateContainer as i32],
            description: "a test policy".into(),
            sdk: SDK_NAME.into(),
            // The configuration as the user wrote it: no conversion asked.
            config_format: ConfigFormat::Unspecified as i32,
        }
    );
    assert!(SDK_NAME.starts_with("nriwasm-rust/"));
}

#[test]
fn calls_before_init_fail_their_precondition() {
    for method in nriwasm::method::CALLS.iter().filter(|m| **m != Method::Init) {
        let mut d = dispatcher(TestPolicy::default());
        let name = nriwasm::method::name(*method as i32);
        expect_error(d.dispatch(*method as i32, &[]), ErrorCode::FailedPrecondition, "", &format!("{} before Init", name));
        assert!(d.policy().created.is_empty());
    }
}

#[test]
fn a_failed_init_keeps_the_gate_closed() {
    let mut d = dispatcher(TestPolicy { fail_init: true, ..Default::default() });
    let init = InitRequest { config: b"x".to_vec(), ..Default::default() }.encode_to_vec();
    expect_error(d.dispatch(Method::Init as i32, &init), ErrorCode::InvalidArgument, "config", "bad config \"x\"");
    expect_error(d.dispatch(Method::CreateContainer as i32, &[]), ErrorCode::FailedPrecondition, "", "CreateContainer before Init");
    let undecodable = [0x0a, 0xff];
    let e = error_of(d.dispatch(Method::Init as i32, &undecodable));
    assert_eq!(e.code, ErrorCode::InvalidArgument as i32);
    assert!(e.message.starts_with("decode request: "), "{:?}", e);
    assert_eq!(d.policy().inits, 1, "an undecodable Init reached the policy");
}

#[test]
fn init_opens_the_gate() {
    let mut d = dispatcher(TestPolicy::default());
    let init = InitRequest { config: b"dra".to_vec(), ..Default::default() }.encode_to_vec();
    match d.dispatch(Method::Init as i32, &init).result {
        Some(Answer::Init(r)) => assert!(r.wants_dra),
        other => panic!("Init answered {:?}", other),
    }
    let req = CreateContainerRequest {
        container: Some(Container { name: "c".into(), ..Default::default() }),
        ..Default::default()
    };
    let resp = d.dispatch(Method::CreateContainer as i32, &req.encode_to_vec());
    assert!(matches!(resp.result, Some(Answer::CreateContainer(_))), "{:?}", resp);
    assert_eq!(d.policy().created, vec![req]);
}

#[test]
fn unknown_methods_are_unimplemented() {
    for method in [0, 17, 99, -1] {
        for mut d in [dispatcher(TestPolicy::default()), initialized()] {
            expect_error(
                d.dispatch(method, &[]),
                ErrorCode::Unimplemented,
                "",
                &format!("method {} is not part of ABI v1.{}", method, nriwasm::ABI_MINOR),
            );
        }
    }
}

#[test]
fn undecodable_requests_are_invalid_arguments() {
    for method in 1..=16 {
        let mut d = initialized();
        let e = error_of(d.dispatch(method, &[0x0a, 0xff]));
        assert_eq!(e.code, ErrorCode::InvalidArgument as i32, "method {}: {:?}", method, e);
        assert!(e.message.starts_with("decode request: "), "method {}: {:?}", method, e);
    }
}

#[test]
fn undeclared_calls_answer_empty_without_reaching_the_policy() {
    let mut d = initialized();
    for method in nriwasm::method::CALLS {
        if matches!(method, Method::Init | Method::CreateContainer) {
            continue;
        }
        // A valid, non-empty request must not matter.
        let resp = d.dispatch(method as i32, &[0x0a, 0x00]);
        let bytes = resp.encode_to_vec();
        // The field numbered like the method, holding an empty message (the
        // tag is a varint: two bytes from field 16 on).
        let mut want = Vec::new();
        prost::encoding::encode_key(method as u32, prost::encoding::WireType::LengthDelimited, &mut want);
        want.push(0);
        assert_eq!(bytes, want, "{:?} answered {:?}", method, resp);
    }
}

/// Frees what it placed: RemoveContainer is written, so it is served.
#[derive(Default)]
struct Frees {
    removed: Vec<String>,
}

nriwasm::policy! {
impl Policy for Frees {
    fn describe(&self) -> Description {
        Description { name: "frees".into(), version: "0.1.0".into(), summary: String::new() }
    }

    /// Doc comments and attributes on handlers are fine.
    #[allow(clippy::needless_pass_by_value)]
    fn remove_container(&mut self, r: RemoveContainerRequest) -> Result<RemoveContainerResponse> {
        self.removed.push(r.container.unwrap_or_default().id);
        Ok(RemoveContainerResponse::default())
    }

    fn create_container(&mut self, _: CreateContainerRequest) -> Result<CreateContainerResponse> {
        Ok(CreateContainerResponse::default())
    }
}
}

#[test]
fn capabilities_are_the_handlers_written() {
    let mut d = Dispatcher::new(Frees::default()).expect("valid");
    assert_eq!(d.metadata().capabilities, vec![Method::CreateContainer as i32, Method::RemoveContainer as i32]);
    d.dispatch(Method::Init as i32, &[]);
    let req = RemoveContainerRequest { container: Some(Container { id: "c1".into(), ..Default::default() }), ..Default::default() };
    assert!(matches!(d.dispatch(Method::RemoveContainer as i32, &req.encode_to_vec()).result, Some(Answer::RemoveContainer(_))));
    assert_eq!(d.policy().removed, vec!["c1".to_string()], "RemoveContainer did not reach the policy");
}

/// Implements Policy by hand, outside nriwasm::policy!.
struct ByHand;

impl Policy for ByHand {
    fn describe(&self) -> Description {
        Description { name: "by-hand".into(), version: "0.1.0".into(), summary: String::new() }
    }

    fn remove_container(&mut self, _: RemoveContainerRequest) -> Result<RemoveContainerResponse> {
        Ok(RemoveContainerResponse::default())
    }
}

#[test]
fn a_policy_outside_the_macro_is_refused() {
    match Dispatcher::new(ByHand) {
        Ok(_) => panic!("a policy whose handlers the SDK cannot see was accepted"),
        Err(e) => assert!(e.contains("policy \"by-hand\": write its impl Policy block inside nriwasm::policy!"), "{}", e),
    }
}

#[test]
fn capabilities_refuse_a_function_that_is_no_handler() {
    assert_eq!(nriwasm::capabilities(&["describe", "dump_state", "init"]), Ok(vec![Method::Init, Method::DumpState]));
    let e = nriwasm::capabilities(&["remove_containers"]).unwrap_err();
    assert!(e.contains("fn remove_containers is not a handler"), "{}", e);
}

#[test]
fn handler_errors_keep_code_field_and_message() {
    let mut d = dispatcher(TestPolicy {
        create_error: Some(Error::resource_exhausted("container.resources", "no cpus left")),
        ..Default::default()
    });
    d.dispatch(Method::Init as i32, &[]);
    expect_error(
        d.dispatch(Method::CreateContainer as i32, &[]),
        ErrorCode::ResourceExhausted,
        "container.resources",
        "no cpus left",
    );
}

/// abi/README.md section 3's example, byte for byte.
#[test]
fn the_readme_example_bytes() {
    let request = [0x0a, 0x03, 0x0a, 0x01, 0x70, 0x12, 0x07, 0x0a, 0x01, 0x78, 0x1a, 0x02, 0x63, 0x31];
    let mut d = initialized();
    let mut out = vec![0xee; 3];
    d.dispatch_into(Method::CreateContainer as i32, &request, &mut out);
    assert_eq!(out, vec![0x4a, 0x02, 0x0a, 0x00]);
    let seen = &d.policy().created[0];
    assert_eq!(seen.pod.as_ref().map(|p| p.id.as_str()), Some("p"));
    let c = seen.container.as_ref().expect("container");
    assert_eq!((c.id.as_str(), c.name.as_str()), ("x", "c1"));
}

/// abi/README.md section 17's CPU (v1.4): its energy-performance preference
/// as sysfs prints it, byte for byte both ways.
#[test]
fn the_readme_energy_performance_preference_bytes() {
    let bytes = [
        0x08, 0x03, 0x72, 0x0d, 0x62, 0x61, 0x6c, 0x61, 0x6e, 0x63, 0x65, 0x5f, 0x70, 0x6f, 0x77, 0x65, 0x72,
    ];
    let cpu = Cpu::decode(&bytes[..]).expect("decode");
    assert_eq!((cpu.id, cpu.energy_performance_preference.as_str()), (3, "balance_power"));
    assert_eq!(cpu.encode_to_vec(), bytes);
}

/// abi/README.md section 18's PCI function (v1.5): its class devices as
/// CLASS/NAME, byte for byte both ways.
#[test]
fn the_readme_class_devices_bytes() {
    let bytes = [
        0x0a, 0x0c, 0x30, 0x30, 0x30, 0x30, 0x3a, 0x30, 0x31, 0x3a, 0x30, 0x30, 0x2e, 0x30, 0x4a, 0x09, 0x64, 0x72,
        0x6d, 0x2f, 0x63, 0x61, 0x72, 0x64, 0x30, 0x4a, 0x0e, 0x64, 0x72, 0x6d, 0x2f, 0x72, 0x65, 0x6e, 0x64, 0x65,
        0x72, 0x44, 0x31, 0x32, 0x38,
    ];
    let dev = PciDevice::decode(&bytes[..]).expect("decode");
    assert_eq!(dev.address, "0000:01:00.0");
    assert_eq!(dev.class_devices, ["drm/card0", "drm/renderD128"]);
    assert_eq!(dev.encode_to_vec(), bytes);
}

struct Described(Description);

nriwasm::policy! {
impl Policy for Described {
    fn describe(&self) -> Description {
        self.0.clone()
    }
}
}

#[test]
fn invalid_descriptions_are_refused() {
    let good = Description { name: "ok".into(), version: "1.0.0".into(), summary: String::new() };
    let cases = [
        (Description { name: "Bad".into(), ..good.clone() }, "must be a DNS label"),
        (Description { name: "".into(), ..good.clone() }, "must be a DNS label"),
        (Description { name: "-x".into(), ..good.clone() }, "must be a DNS label"),
        (Description { name: "x".repeat(64), ..good.clone() }, "must be a DNS label"),
        (Description { version: "".into(), ..good.clone() }, "version must not be empty"),
        (Description { version: "v1.0.0".into(), ..good.clone() }, "must not start with \"v\""),
    ];
    for (desc, want) in cases {
        match Dispatcher::new(Described(desc.clone())) {
            Ok(_) => panic!("{:?} was accepted", desc),
            Err(e) => assert!(e.contains(want), "error {:?} for {:?} lacks {:?}", e, desc, want),
        }
    }
    assert!(Dispatcher::new(Described(good)).is_ok());
}

#[test]
fn map_fields_encode_in_key_order() {
    let adj = ContainerAdjustment {
        annotations: [("b", "2"), ("a", "1"), ("c", "3")].iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        ..Default::default()
    };
    let bytes = adj.encode_to_vec();
    let pos = |k: &[u8]| bytes.windows(k.len()).position(|w| w == k).expect("key encoded");
    assert!(pos(b"\x0a\x01a") < pos(b"\x0a\x01b") && pos(b"\x0a\x01b") < pos(b"\x0a\x01c"));
}
