//! Grouped updates (ABI v1.1): `ContainerUpdate.also_container_ids` names more
//! containers that get the same change. The Dispatcher folds an answer's updates
//! for a host that expands them and expands them for an older host, so a policy
//! builds its updates one way for both.

use crate::abi::response::Result as Answer;
use crate::abi::ContainerUpdate;
use crate::error::Error;

/// The first ABI minor version whose hosts expand `also_container_ids`.
pub const MINOR_GROUPED_UPDATES: u32 = 1;

/// The updates of an answer, `None` for a method without them.
pub(crate) fn updates_of(answer: &mut Answer) -> Option<&mut Vec<ContainerUpdate>> {
    match answer {
        Answer::Reconfigure(r) => Some(&mut r.updates),
        Answer::Allocate(r) => Some(&mut r.updates),
        Answer::Release(r) => Some(&mut r.updates),
        Answer::Synchronize(r) => Some(&mut r.updates),
        Answer::RunPodSandbox(r) => Some(&mut r.updates),
        Answer::CreateContainer(r) => Some(&mut r.updates),
        Answer::UpdateContainer(r) => Some(&mut r.updates),
        Answer::StopContainer(r) => Some(&mut r.updates),
        Answer::RemoveContainer(r) => Some(&mut r.updates),
        Answer::StopPodSandbox(r) => Some(&mut r.updates),
        Answer::RemovePodSandbox(r) => Some(&mut r.updates),
        _ => None,
    }
}

fn groupable(u: &ContainerUpdate) -> bool {
    !u.container_id.is_empty() && u.also_container_ids.is_empty()
}

fn same_change(u: &ContainerUpdate, v: &ContainerUpdate) -> bool {
    u.cpuset_cpus == v.cpuset_cpus
        && u.cpuset_mems == v.cpuset_mems
        && u.rdt_class == v.rdt_class
        && u.blockio_class == v.blockio_class
}

/// Folds every run of consecutive updates that make the same change into one:
/// the first one's `container_id`, the others in `also_container_ids`.
/// Expanding the result gives back `us` in order; updates that already carry
/// `also_container_ids`, or have no `container_id`, are kept. Send the result
/// only to a host whose `InitRequest.host_abi_minor` is at least
/// [`MINOR_GROUPED_UPDATES`].
///
/// ```
/// use nriwasm::abi::ContainerUpdate;
/// let u = |id: &str| ContainerUpdate { container_id: id.into(), cpuset_cpus: "0-3".into(), ..Default::default() };
/// let folded = nriwasm::fold_updates(vec![u("a"), u("b"), u("c")]);
/// assert_eq!(folded.len(), 1);
/// assert_eq!(folded[0].also_container_ids, ["b", "c"]);
/// ```
pub fn fold_updates(us: Vec<ContainerUpdate>) -> Vec<ContainerUpdate> {
    let mut out: Vec<ContainerUpdate> = Vec::with_capacity(us.len());
    // Whether out's last update heads a run folded here (and may take more).
    let mut open = false;
    for u in us {
        if open && groupable(&u) {
            let head = out.last_mut().expect("an open run has a head");
            if same_change(head, &u) {
                head.also_container_ids.push(u.container_id);
                continue;
            }
        }
        open = groupable(&u);
        out.push(u);
    }
    out
}

/// Expands grouped updates into one update per container, each in place: its
/// `container_id` first, then one for each of its `also_container_ids`, in
/// order. An empty id in a group is an error naming
/// `updates[i].also_container_ids[j]`; an id may repeat (every update applies in
/// order, as plain updates do).
///
/// ```
/// use nriwasm::abi::ContainerUpdate;
/// let g = ContainerUpdate { container_id: "a".into(), cpuset_cpus: "0-3".into(), also_container_ids: vec!["b".into()], ..Default::default() };
/// let ids: Vec<String> = nriwasm::expand_updates(vec![g]).unwrap().into_iter().map(|u| u.container_id).collect();
/// assert_eq!(ids, ["a", "b"]);
/// ```
pub fn expand_updates(us: Vec<ContainerUpdate>) -> Result<Vec<ContainerUpdate>, Error> {
    let mut n = 0;
    for (i, u) in us.iter().enumerate() {
        n += u.also_container_ids.len();
        if let Some(j) = u.also_container_ids.iter().position(|id| id.is_empty()) {
            return Err(Error::internal("empty container id").with_field(format!("updates[{}].also_container_ids[{}]", i, j)));
        }
    }
    if n == 0 {
        return Ok(us);
    }
    let mut out = Vec::with_capacity(us.len() + n);
    for mut u in us {
        let also = std::mem::take(&mut u.also_container_ids);
        let copies: Vec<ContainerUpdate> = also.into_iter().map(|id| ContainerUpdate { container_id: id, ..u.clone() }).collect();
        out.push(u);
        out.extend(copies);
    }
    Ok(out)
}
