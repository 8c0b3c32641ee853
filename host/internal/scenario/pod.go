package scenario

import (
	"github.com/nriwasm/nriwasm/host/internal/strictjson"

	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"maps"
)

var qosClasses = map[string]abi.QOSClass{
	"Guaranteed": abi.QOSClass_QOS_CLASS_GUARANTEED,
	"Burstable":  abi.QOSClass_QOS_CLASS_BURSTABLE,
	"BestEffort": abi.QOSClass_QOS_CLASS_BEST_EFFORT,
}

// parsePod builds the PodSandbox and Containers a pod step sends.
func parsePod(value json.RawMessage, path string, n *liveNames) (*Pod, error) {
	var s podSpec
	if err := strictjson.Decode(value, &s, path); err != nil {
		return nil, err
	}
	if err := checkName(s.Name, path+".name"); err != nil {
		return nil, err
	}
	if _, ok := n.pods[s.Name]; ok {
		return nil, fmt.Errorf("%s.name: pod %q already exists", path, s.Name)
	}
	if s.Namespace == "" {
		s.Namespace = "default"
	}
	if s.UID == "" {
		s.UID = derivedUID("pod", s.Namespace, s.Name)
	}
	pod := &Pod{Sandbox: &abi.PodSandbox{
		Id: s.Name, Uid: s.UID, Name: s.Name, Namespace: s.Namespace,
		Labels: s.Labels, Annotations: s.Annotations,
	}}
	seen := map[string]bool{}
	for _, list := range []struct {
		field string
		specs []containerSpec
		dst   *[]*abi.Container
	}{{"initContainers", s.InitContainers, &pod.InitContainers}, {"containers", s.Containers, &pod.Containers}} {
		for i, cs := range list.specs {
			cpath := fmt.Sprintf("%s.%s[%d]", path, list.field, i)
			c, err := buildContainer(cs, pod.Sandbox, cpath)
			if err != nil {
				return nil, err
			}
			if seen[c.Name] {
				return nil, fmt.Errorf("%s.name: container %q appears twice", cpath, c.Name)
			}
			if n.ids[c.Id] {
				return nil, fmt.Errorf("%s.name: container id %q is already in use", cpath, c.Id)
			}
			claims, err := n.claimKeys(cs.Claims, s.Namespace, cpath+".claims")
			if err != nil {
				return nil, err
			}
			if claims != nil {
				if pod.Claims == nil {
					pod.Claims = map[string][]string{}
				}
				pod.Claims[c.Name] = claims
			}
			seen[c.Name] = true
			*list.dst = append(*list.dst, c)
		}
	}
	// Kubernetes derives the QoS class from init containers too.
	qos := derivedQOS(append(slices.Clone(pod.InitContainers), pod.Containers...))
	if s.QOSClass != "" {
		var ok bool
		if qos, ok = qosClasses[s.QOSClass]; !ok {
			return nil, fmt.Errorf("%s.qosClass: %q: want Guaranteed, Burstable or BestEffort", path, s.QOSClass)
		}
	}
	pod.Sandbox.QosClass = qos
	pod.Sandbox.CgroupParent = cgroupParent(qos, s.UID)
	for _, c := range pod.InitContainers {
		c.QosClass = qos
	}
	for _, c := range pod.Containers {
		c.QosClass = qos
	}
	n.addPod(pod)
	return pod, nil
}

// parseNewContainer reads a container step: a container added to a live pod
// (kubelet creating it anew after the old one exited, say). It takes the
// pod's QoS class, which Kubernetes fixes when the pod is created.
func parseNewContainer(value json.RawMessage, path string, n *liveNames) (Target, *abi.Container, []string, error) {
	var s newContainerSpec
	if err := strictjson.Decode(value, &s, path); err != nil {
		return Target{}, nil, nil, err
	}
	sb, ok := n.sandboxes[s.Pod]
	if !ok {
		return Target{}, nil, nil, fmt.Errorf("%s.pod: no pod %q (live: %s)", path, s.Pod, orNone(slices.Sorted(maps.Keys(n.pods))))
	}
	c, err := buildContainer(s.containerSpec, sb, path)
	if err != nil {
		return Target{}, nil, nil, err
	}
	if n.ids[c.Id] {
		return Target{}, nil, nil, fmt.Errorf("%s.name: pod %q already has a container %q", path, s.Pod, c.Name)
	}
	claims, err := n.claimKeys(s.Claims, sb.Namespace, path+".claims")
	if err != nil {
		return Target{}, nil, nil, err
	}
	c.QosClass = sb.QosClass
	n.addContainer(s.Pod, c)
	return Target{Pod: s.Pod, Container: c.Name}, c, claims, nil
}

// parseUpdate reads an update step: a live "pod/container" and its new resources.
func parseUpdate(value json.RawMessage, path string, n *liveNames) (Target, *abi.Resources, error) {
	var s updateSpec
	if err := strictjson.Decode(value, &s, path); err != nil {
		return Target{}, nil, err
	}
	t, err := n.target(s.Container, path+".container")
	if err != nil {
		return Target{}, nil, err
	}
	if t.Container == "" {
		return Target{}, nil, fmt.Errorf(`%s.container: want "pod/container", got %q`, path, s.Container)
	}
	res, err := buildResources(s.Resources, path+".resources")
	if err != nil {
		return Target{}, nil, err
	}
	return t, res, nil
}

func buildContainer(s containerSpec, pod *abi.PodSandbox, path string) (*abi.Container, error) {
	if err := checkName(s.Name, path+".name"); err != nil {
		return nil, err
	}
	res, err := buildResources(s.Resources, path+".resources")
	if err != nil {
		return nil, err
	}
	c := &abi.Container{
		Id: containerID(pod.Name, s.Name), PodSandboxId: pod.Id, Name: s.Name,
		State: abi.ContainerState_CONTAINER_STATE_CREATED, Annotations: s.Annotations,
		Resources: res, CdiDevices: s.CDIDevices, Namespace: pod.Namespace,
	}
	for i, e := range s.Env {
		if e.Name == "" || strings.ContainsAny(e.Name, "=\x00") {
			return nil, fmt.Errorf("%s.env[%d].name: %q is not a valid variable name", path, i, e.Name)
		}
		c.Env = append(c.Env, &abi.KeyValue{Key: e.Name, Value: e.Value})
	}
	for i, m := range s.Mounts {
		at := fmt.Sprintf("%s.mounts[%d]", path, i)
		if m.Destination == "" {
			return nil, fmt.Errorf("%s.destination: required", at)
		}
		hs, err := buildHints(m.Hints, at+".hints")
		if err != nil {
			return nil, err
		}
		c.Mounts = append(c.Mounts, &abi.Mount{Source: m.Source, Destination: m.Destination, Type: m.Type, Options: m.Options, Hints: hs})
	}
	for i, d := range s.Devices {
		at := fmt.Sprintf("%s.devices[%d]", path, i)
		if d.Path == "" {
			return nil, fmt.Errorf("%s.path: required", at)
		}
		if d.Type != "b" && d.Type != "c" && d.Type != "p" {
			return nil, fmt.Errorf("%s.type: %q: want b, c or p", at, d.Type)
		}
		if d.Major < 0 || d.Minor < 0 {
			return nil, fmt.Errorf("%s: major %d, minor %d: want 0 or more", at, d.Major, d.Minor)
		}
		hs, err := buildHints(d.Hints, at+".hints")
		if err != nil {
			return nil, err
		}
		c.Devices = append(c.Devices, &abi.LinuxDevice{Path: d.Path, Type: d.Type, Major: d.Major, Minor: d.Minor, ReadOnly: d.ReadOnly, Hints: hs})
	}
	return c, nil
}

// buildHints checks topology hints: each names CPUs, NUMA nodes or
// sockets, in Linux list form.
func buildHints(hs []hintSpec, path string) ([]*abi.TopologyHint, error) {
	var out []*abi.TopologyHint
	for i, h := range hs {
		for _, f := range []struct{ name, v string }{{"cpus", h.CPUs}, {"numas", h.NUMAs}, {"sockets", h.Sockets}} {
			if _, err := cpuset.Parse(f.v); err != nil {
				return nil, fmt.Errorf("%s[%d].%s: %w", path, i, f.name, err)
			}
		}
		if h.CPUs == "" && h.NUMAs == "" && h.Sockets == "" {
			return nil, fmt.Errorf("%s[%d]: names no cpus, numas or sockets", path, i)
		}
		provider := h.Provider
		if provider == "" {
			provider = fmt.Sprintf("%s[%d]", path, i)
		}
		out = append(out, &abi.TopologyHint{Provider: provider, Cpus: h.CPUs, Numas: h.NUMAs, Sockets: h.Sockets})
	}
	return out, nil
}

// buildResources normalizes requests and limits; like the API server, an
// unset request defaults to its limit.
func buildResources(s resourcesSpec, path string) (*abi.Resources, error) {
	r := &abi.Resources{}
	for _, q := range []struct {
		q     *Quantity
		field string
		conv  func(Quantity) (int64, error)
		dst   *int64
	}{
		{s.Requests.CPU, "requests.cpu", milliCPU, &r.CpuRequestMilli},
		{s.Limits.CPU, "limits.cpu", milliCPU, &r.CpuLimitMilli},
		{s.Requests.Memory, "requests.memory", bytesOf, &r.MemoryRequestBytes},
		{s.Limits.Memory, "limits.memory", bytesOf, &r.MemoryLimitBytes},
	} {
		if q.q == nil {
			continue
		}
		v, err := q.conv(*q.q)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", path, q.field, err)
		}
		*q.dst = v
	}
	if s.Requests.CPU == nil {
		r.CpuRequestMilli = r.CpuLimitMilli
	}
	if s.Requests.Memory == nil {
		r.MemoryRequestBytes = r.MemoryLimitBytes
	}
	if r.CpuLimitMilli > 0 && r.CpuRequestMilli > r.CpuLimitMilli {
		return nil, fmt.Errorf("%s.requests.cpu: must not exceed limits.cpu", path)
	}
	if r.MemoryLimitBytes > 0 && r.MemoryRequestBytes > r.MemoryLimitBytes {
		return nil, fmt.Errorf("%s.requests.memory: must not exceed limits.memory", path)
	}
	return r, nil
}

// derivedQOS classes a pod as Kubernetes does: BestEffort without any CPU or
// memory request or limit, Guaranteed when every container's limits are set and
// equal its requests, Burstable otherwise.
func derivedQOS(containers []*abi.Container) abi.QOSClass {
	some, guaranteed := false, len(containers) > 0
	for _, c := range containers {
		r := c.Resources
		if r.CpuRequestMilli != 0 || r.CpuLimitMilli != 0 || r.MemoryRequestBytes != 0 || r.MemoryLimitBytes != 0 {
			some = true
		}
		if r.CpuLimitMilli == 0 || r.MemoryLimitBytes == 0 || r.CpuRequestMilli != r.CpuLimitMilli || r.MemoryRequestBytes != r.MemoryLimitBytes {
			guaranteed = false
		}
	}
	switch {
	case !some:
		return abi.QOSClass_QOS_CLASS_BEST_EFFORT
	case guaranteed:
		return abi.QOSClass_QOS_CLASS_GUARANTEED
	}
	return abi.QOSClass_QOS_CLASS_BURSTABLE
}

// cgroupParent is the pod cgroup the kubelet's systemd driver would create.
func cgroupParent(qos abi.QOSClass, uid string) string {
	u := strings.ReplaceAll(uid, "-", "_")
	switch qos {
	case abi.QOSClass_QOS_CLASS_BURSTABLE:
		return "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + u + ".slice"
	case abi.QOSClass_QOS_CLASS_BEST_EFFORT:
		return "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + u + ".slice"
	}
	return "/kubepods.slice/kubepods-pod" + u + ".slice"
}

// derivedUID is a stable UUID (version 5 layout) for an object without one.
func derivedUID(kind, namespace, name string) string {
	h := sha256.Sum256([]byte("nriwasm-simulate/" + kind + "/" + namespace + "/" + name))
	h[6] = h[6]&0x0f | 0x50
	h[8] = h[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}
