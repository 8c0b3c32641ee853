//go:build integration

package soak

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	"github.com/nriwasm/nriwasm/host/dra/kubelettest"
	"github.com/nriwasm/nriwasm/integration/containerd"
	"github.com/nriwasm/nriwasm/integration/kubeapi"
)

// driver is the DRA driver of the topology-aware policy (and of the soak's
// trapping build of it, which keeps its name).
const driver = "topology-aware.nri.io"

// draSoak is the soak's DRA side: the agent is the driver of a node on a
// real kube-apiserver, the kubelet stand-in prepares and unprepares claims of
// one CPU, allocated by the scheduler's allocator from the agent's slices,
// and containers run with the claim's CDI devices.
type draSoak struct {
	s                    *kubeapi.Server
	node, ns, class      string
	agent                kubeapi.AgentDRA
	plugin               *kubelettest.Plugin
	n                    int
	prepared, unprepared int
	refused              int
	claims               map[string]*soakClaim // by the container id using it
}

// soakClaim is a prepared claim and the CPUs its status says it holds.
type soakClaim struct {
	ref  kubelettest.Claim
	cpus string
}

// newDRASoak starts (or joins) the API server, creates the node, installs
// the driver's RBAC and admission policy and a DeviceClass of its devices.
func newDRASoak(s *soak) *draSoak {
	t := s.t
	d := &draSoak{s: kubeapi.Shared(t), claims: map[string]*soakClaim{}}
	d.node = d.s.UniqueName("soak")
	d.s.CreateNode(t, d.node)
	d.s.InstallDriver(t, driver)
	d.ns = d.s.Namespace(t)
	d.agent = d.s.NewAgentDRA(t, d.node, driver)
	d.class = d.s.CreateDeviceClass(t, "soak-cpu", driver)
	t.Setenv("NODE_NAME", d.node) // the agent's node, as the downward API sets it
	return d
}

// containerdOptions are containerd's options with the CDI directory.
func (d *draSoak) containerdOptions() containerd.Options {
	return containerd.Options{CDISpecDirs: []string{d.agent.CDIDir}}
}

// config is the agent configuration's DRA part; policyConfig the policy's.
func (d *draSoak) config() string {
	return d.agent.Config()
}

const policyConfig = "    dra: {enabled: true}\n"

// register registers the agent's plugin with the stand-in, again after the
// agent restarted: a killed agent's socket may linger until the new one
// replaces it, so it retries for settle.
func (d *draSoak) register(s *soak) {
	if d.plugin != nil {
		d.plugin.Close()
		d.plugin = nil
	}
	deadline := time.Now().Add(settle)
	for {
		ctx, cancel := context.WithTimeout(s.ctx, 5*time.Second)
		p, err := kubelettest.Register(ctx, d.agent.RegistrarDir)
		cancel()
		if err == nil {
			d.plugin = p
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("registering the agent's DRA plugin: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitForSlices waits until the agent published its devices.
func (d *draSoak) waitForSlices(s *soak) {
	s.a.Eventually(s.t, settle, func() string {
		list, err := d.s.Client().ResourceV1().ResourceSlices().List(s.ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + d.node})
		if err != nil || len(list.Items) == 0 || len(list.Items[0].Spec.Devices) == 0 {
			return fmt.Sprintf("waiting for the agent's ResourceSlices (%v)", err)
		}
		return ""
	})
}

// prepare creates a claim for one CPU, allocates it, has the stand-in prepare
// it and runs a container with its CDI devices. A claim nothing can be
// allocated to, or that the policy refuses (every unreserved CPU taken), is
// deleted and counted as refused.
func (d *draSoak) prepare(s *soak) {
	d.n++
	ctx := s.ctx
	claims := d.s.Client().ResourceV1().ResourceClaims(d.ns)
	claim, err := claims.Create(ctx, kubeapi.CPUClaim(d.ns, fmt.Sprintf("claim%d", d.n), d.class), metav1.CreateOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	refuse := func(why string, err error) {
		d.refused++
		s.t.Logf("event %d: claim %s not prepared (%s): %v", s.events, claim.Name, why, err)
		_ = claims.Delete(ctx, claim.Name, metav1.DeleteOptions{})
	}
	if claim, err = d.s.TryAllocate(ctx, claim, d.node); err != nil {
		refuse("no allocation", err)
		return
	}
	ref := kubelettest.Claim{Namespace: d.ns, Name: claim.Name, UID: string(claim.UID)}
	resp, err := d.plugin.Prepare(ctx, ref)
	if err != nil {
		refuse("prepare failed", err)
		return
	}
	devices := resp[string(claim.UID)].GetDevices()
	if len(devices) == 0 {
		refuse("prepare answered no device", fmt.Errorf("%v", resp[string(claim.UID)].GetError()))
		return
	}
	var cpus string
	s.a.Eventually(s.t, settle, func() string {
		c, err := claims.Get(ctx, claim.Name, metav1.GetOptions{})
		if err != nil {
			return fmt.Sprintf("waiting for claim %s's status (%v)", claim.Name, err)
		}
		if cpus = kubeapi.ClaimCPUSet(c); cpus == "" {
			return fmt.Sprintf("waiting for claim %s's status", claim.Name)
		}
		return ""
	})
	pod, err := s.c.RunPodSandbox(ctx, containerd.PodOptions{Name: fmt.Sprintf("dra%d", d.n), Namespace: d.ns, QOS: containerd.BestEffort})
	if err != nil {
		s.t.Fatal(err)
	}
	id, err := s.c.RunContainer(ctx, pod, containerd.ContainerOptions{Name: "c", CPUShares: 2, CDIDevices: devices[0].GetCdiDeviceIds()})
	if err != nil {
		s.t.Fatal(err)
	}
	s.ctrs[id] = live{pod: pod, qos: containerd.BestEffort}
	d.claims[id] = &soakClaim{ref: ref, cpus: cpus}
	d.prepared++
	s.t.Logf("event %d: claim %s prepared on CPUs %s, container %s uses it", s.events, claim.Name, cpus, id)
}

// unprepare removes a claim's container, has the stand-in unprepare the
// claim, and requires its CDI spec gone; then deletes the claim.
func (d *draSoak) unprepare(s *soak) {
	for id, c := range d.claims {
		s.removeContainer(id)
		delete(d.claims, id)
		if err := d.plugin.Unprepare(s.ctx, c.ref); err != nil {
			s.violations++
			s.t.Errorf("event %d: VIOLATION: unprepare of claim %s: %v", s.events, c.ref.Name, err)
		}
		spec := filepath.Join(d.agent.CDIDir, driver+"-claim_"+c.ref.UID+".json") // abi/README.md section 10
		if _, err := os.Stat(spec); !os.IsNotExist(err) {
			s.violations++
			s.t.Errorf("event %d: VIOLATION: claim %s's CDI spec %s left after unprepare (%v)", s.events, c.ref.Name, spec, err)
		}
		_ = d.s.Client().ResourceV1().ResourceClaims(d.ns).Delete(s.ctx, c.ref.Name, metav1.DeleteOptions{})
		d.unprepared++
		s.t.Logf("event %d: claim %s unprepared", s.events, c.ref.Name)
		return
	}
}

// verify checks what a prepared claim promises: its container runs on the
// claim's CPUs, and no other pinned container runs on them.
func (d *draSoak) verify(sets map[string]cpuset.Set) []string {
	var bad []string
	for id, c := range d.claims {
		set, ok := sets[id]
		if !ok {
			continue // reported by the general checks (unpinned without a fail-open)
		}
		want, err := cpuset.Parse(c.cpus)
		if err != nil || !set.Equal(want) {
			bad = append(bad, fmt.Sprintf("%s: runs on %v, its claim %s holds %q", id, set, c.ref.Name, c.cpus))
			continue
		}
		for other, o := range sets {
			if other != id && o.Intersects(want) {
				bad = append(bad, fmt.Sprintf("%s (claim %s, CPUs %v) overlaps %s (%v)", id, c.ref.Name, want, other, o))
			}
		}
	}
	return bad
}
