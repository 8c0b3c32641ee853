package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/internal/scenario"
	"github.com/nriwasm/nriwasm/host/topology"
	"github.com/nriwasm/nriwasm/host/wasm"
)

func newCheck() *cobra.Command {
	var f policyFlags
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Load a policy against this node's topology and report what it decides",
		Long: `check loads a policy (the built-in default unless --policy names another),
discovers the topology of a node (the built-in reference 2-socket server unless
--sysfs names a sysfs tree: --sysfs /sys for this machine), initializes the
policy with it, asks it to place one probe container, and prints what it
answered and how long each step took. Nothing on the node is changed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runCheck(cmd, f) },
	}
	f.register(cmd.Flags())
	return cmd
}

func defaultCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "nriwasm")
}

func runCheck(cmd *cobra.Command, f policyFlags) error {
	ctx := cmd.Context()
	out := cmd.OutOrStdout()
	logger, name, module, err := f.loadLogged(cmd)
	if err != nil {
		return err
	}
	start := time.Now()
	config, topo, err := f.inputs()
	if err != nil {
		return err
	}
	discovered := time.Since(start)
	node := scenario.NodeName
	if f.sysfs != "" {
		node, _ = os.Hostname()
	}

	start = time.Now()
	p, err := wasm.Load(ctx, name, module, f.wasmOptions(wasm.WithLogger(logger))...)
	if err != nil {
		return err
	}
	defer p.Close(ctx)
	loaded := time.Since(start)
	client := abi.NewClient(p, abi.KeepGroups()) // as the agent reads answers, so the probe times what it pays

	info, err := client.Info(ctx, &abi.InfoRequest{HostAbiMinor: abi.ABIMinor})
	if err != nil {
		return err
	}
	start = time.Now()
	if _, err := client.Init(ctx, &abi.InitRequest{Config: config, NodeName: node, Topology: topo}); err != nil {
		return fmt.Errorf("policy %q failed to start: %w", name, err)
	}
	initialized := time.Since(start)

	start = time.Now()
	probe := probeRequest(topo)
	resp, err := client.CreateContainer(ctx, probe)
	if err != nil {
		return err
	}
	placed := time.Since(start)

	md := info.GetMetadata()
	sealed := "unsealed"
	if p.Metadata() != nil {
		sealed = "sealed"
	}
	fmt.Fprintf(out, "policy        %s %s (ABI v%d.%d, %s, %s)\n", md.Name, md.Version, md.AbiMajor, md.AbiMinor, md.Sdk, sealed)
	fmt.Fprintf(out, "capabilities  %s\n", capabilityNames(md.Capabilities))
	describeNode(out, node, f.machine(), topo, discovered)
	fmt.Fprintf(out, "load          %v (cache %q)\n", loaded.Round(time.Millisecond), f.cacheDir)
	fmt.Fprintf(out, "init          %v\n", initialized.Round(time.Microsecond))
	adj := resp.GetAdjustment()
	fmt.Fprintf(out, "probe         CreateContainer %s/%s → cpus %q mems %q, %d env, %d updates (%v)\n",
		probe.Pod.Namespace, probe.Container.Name, adj.GetCpusetCpus(), adj.GetCpusetMems(), len(adj.GetEnv()), abi.CountContainers(resp.GetUpdates()), placed.Round(time.Microsecond))
	return nil
}

// probeRequest is a best-effort container that asks the conformance policy, via
// its annotation, for every online CPU.
func probeRequest(topo *abi.Topology) *abi.CreateContainerRequest {
	var cpus []uint32
	for _, c := range topo.GetCpus() {
		cpus = append(cpus, c.Id)
	}
	pod := &abi.PodSandbox{Id: "probe", Uid: "00000000-0000-0000-0000-000000000000", Name: "probe", Namespace: "default", QosClass: abi.QOSClass_QOS_CLASS_BEST_EFFORT}
	return &abi.CreateContainerRequest{
		Pod: pod,
		Container: &abi.Container{
			Id: "probe", PodSandboxId: pod.Id, Name: "probe", Namespace: pod.Namespace, QosClass: pod.QosClass,
			Annotations: map[string]string{"conformance.nriwasm.io/cpuset": topology.FormatList(cpus)},
			Resources:   &abi.Resources{},
		},
	}
}

func capabilityNames(ms []abi.Method) string {
	var names []string
	for _, m := range ms {
		names = append(names, m.Short())
	}
	return strings.Join(names, ", ")
}

func describeNode(out io.Writer, node, machine string, t *abi.Topology, took time.Duration) {
	fmt.Fprintf(out, "node          %s: %d CPUs, %d NUMA nodes, %d caches, %d PCI devices, %d network interfaces (from %s in %v)\n",
		node, len(t.GetCpus()), len(t.GetNumaNodes()), len(t.GetCaches()), len(t.GetPciDevices()), len(t.GetNetworkInterfaces()), machine, took.Round(time.Microsecond))
}
