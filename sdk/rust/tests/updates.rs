//! Grouped updates through the Dispatcher: folded for a v1.1 host, expanded for
//! a v1.0 host, refused when a group the policy built is malformed.

use prost::Message;

use nriwasm::abi::response::Result as Answer;
use nriwasm::abi::*;
use nriwasm::{Description, Dispatcher, Result};

/// Answers every UpdateContainer with `updates`.
struct Updater {
    updates: Vec<ContainerUpdate>,
}

nriwasm::policy! {
impl Policy for Updater {
    fn describe(&self) -> Description {
        Description { name: "updater".into(), version: "1.0.0".into(), summary: "answers fixed updates".into() }
    }

    fn update_container(&mut self, _: UpdateContainerRequest) -> Result<UpdateContainerResponse> {
        Ok(UpdateContainerResponse { updates: self.updates.clone() })
    }
}
}

fn update(id: &str, cpus: &str, also: &[&str]) -> ContainerUpdate {
    ContainerUpdate {
        container_id: id.into(),
        cpuset_cpus: cpus.into(),
        also_container_ids: also.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    }
}

fn answer(host_minor: u32, updates: Vec<ContainerUpdate>) -> Response {
    let mut d = Dispatcher::new(Updater { updates }).expect("valid description");
    let init = InitRequest { host_abi_minor: host_minor, ..Default::default() }.encode_to_vec();
    assert!(matches!(d.dispatch(Method::Init as i32, &init).result, Some(Answer::Init(_))));
    assert_eq!(d.host_abi_minor(), host_minor);
    d.dispatch(Method::UpdateContainer as i32, &[])
}

fn updates_of(r: Response) -> Vec<ContainerUpdate> {
    match r.result {
        Some(Answer::UpdateContainer(u)) => u.updates,
        other => panic!("answer = {:?}, want an UpdateContainerResponse", other),
    }
}

fn policy_updates() -> Vec<ContainerUpdate> {
    vec![update("a", "0-3", &[]), update("b", "0-3", &[]), update("c", "4", &["d"])]
}

#[test]
fn a_v1_1_host_gets_runs_folded() {
    let got = updates_of(answer(1, policy_updates()));
    assert_eq!(got, vec![update("a", "0-3", &["b"]), update("c", "4", &["d"])]);
}

#[test]
fn a_v1_0_host_gets_every_group_expanded() {
    let got = updates_of(answer(0, policy_updates()));
    assert_eq!(got, vec![update("a", "0-3", &[]), update("b", "0-3", &[]), update("c", "4", &[]), update("d", "4", &[])]);
}

#[test]
fn a_bad_group_is_refused_for_a_v1_0_host() {
    let r = answer(0, vec![update("x", "1", &[]), update("a", "0", &["b", ""])]);
    match r.result {
        Some(Answer::Error(e)) => {
            assert_eq!(e.code, ErrorCode::Internal as i32);
            assert_eq!(e.field, "updates[1].also_container_ids[1]");
            assert_eq!(e.message, "empty container id");
        }
        other => panic!("answer = {:?}, want an error", other),
    }
}

#[test]
fn folding_keeps_groups_and_repeats() {
    let folded = nriwasm::fold_updates(vec![
        update("a", "0", &[]),
        update("b", "0", &[]),
        update("a", "0", &[]),
        update("c", "0", &["d"]),
        update("e", "0", &[]),
        update("", "0", &[]),
        update("f", "1", &[]),
    ]);
    assert_eq!(
        folded,
        vec![update("a", "0", &["b", "a"]), update("c", "0", &["d"]), update("e", "0", &[]), update("", "0", &[]), update("f", "1", &[])]
    );
    let expanded = nriwasm::expand_updates(folded).expect("no empty ids");
    let ids: Vec<&str> = expanded.iter().map(|u| u.container_id.as_str()).collect();
    assert_eq!(ids, ["a", "b", "a", "c", "d", "e", "", "f"]);
}
