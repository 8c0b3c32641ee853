package cdi_test

import (
	"os"
	"slices"
	"testing"

	oci "github.com/opencontainers/runtime-spec/specs-go"
	cdiapi "tags.cncf.io/container-device-interface/pkg/cdi"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/cdi"
)

const driver = "topology-aware.nri.io"

// inject applies CDI devices to an empty OCI spec the way a runtime does,
// with a fresh cache reading the directory.
func inject(t *testing.T, dir string, devices ...string) (*oci.Spec, error) {
	t.Helper()
	cache, err := cdiapi.NewCache(cdiapi.WithSpecDirs(dir), cdiapi.WithAutoRefresh(false))
	if err != nil {
		t.Fatal(err)
	}
	spec := &oci.Spec{Process: &oci.Process{}}
	_, err = cache.InjectDevices(spec, devices...)
	return spec, err
}

func TestWriteInjectRemove(t *testing.T) {
	dir := t.TempDir()
	w, err := cdi.New(dir, driver)
	if err != nil {
		t.Fatal(err)
	}
	uid := "0b6f3e1c-8a54-4f7e-9c1d-2a3b4c5d6e7f"
	ids, err := w.Write(uid, []*abi.PreparedDevice{
		{Pool: "node-a", Device: "cpudevnuma000", ContainerEdits: &abi.CDIContainerEdits{Env: []string{"DRA_CPUSET_X=0-3"}}},
		{Pool: "node-a", Device: "cpudevnuma001"},
	})
	if err != nil {
		t.Fatalf("Write: %v", err)
	}
	want := []string{abi.CDIDeviceName(driver, uid, 0), abi.CDIDeviceName(driver, uid, 1)}
	if !slices.Equal(ids, want) {
		t.Fatalf("ids = %q, want %q", ids, want)
	}
	spec, err := inject(t, dir, ids...)
	if err != nil {
		t.Fatalf("a runtime could not inject the devices: %v", err)
	}
	env := spec.Process.Env
	if !slices.Contains(env, "DRA_CPUSET_X=0-3") {
		t.Errorf("env %q lacks the policy's variable", env)
	}
	if !slices.Contains(env, "NRIWASM_DEVICE_0b6f3e1c_8a54_4f7e_9c1d_2a3b4c5d6e7f_1=node-a/cpudevnuma001") {
		t.Errorf("env %q lacks the placeholder of the device without edits", env)
	}
	if got, err := w.Claims(); err != nil || !slices.Equal(got, []string{uid}) {
		t.Errorf("Claims() = %q, %v; want [%s]", got, err, uid)
	}

	// Rewriting is idempotent; removing twice is fine.
	if _, err := w.Write(uid, []*abi.PreparedDevice{{Pool: "node-a", Device: "cpudevnuma000"}}); err != nil {
		t.Fatalf("second Write: %v", err)
	}
	if _, err := inject(t, dir, want[1]); err == nil {
		t.Errorf("device %s still injectable after the spec was rewritten without it", want[1])
	}
	for range 2 {
		if err := w.Remove(uid); err != nil {
			t.Fatalf("Remove: %v", err)
		}
	}
	if _, err := os.Stat(w.Path(uid)); !os.IsNotExist(err) {
		t.Errorf("spec still there after Remove: %v", err)
	}
	if _, err := inject(t, dir, want[0]); err == nil {
		t.Error("device injectable after Remove")
	}
}

func TestWriteRefusesWhatCDIRefuses(t *testing.T) {
	dir := t.TempDir()
	w, err := cdi.New(dir, driver)
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.Write("u1", []*abi.PreparedDevice{{Pool: "p", Device: "d",
		ContainerEdits: &abi.CDIContainerEdits{Hooks: []*abi.CDIHook{{HookName: "onBoot", Path: "/bin/true"}}}}})
	if err == nil {
		t.Fatal("Write accepted a hook CDI does not know")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a refused spec left files behind: %v", entries)
	}
}

func TestEveryEditKindReachesTheContainer(t *testing.T) {
	dir := t.TempDir()
	w, err := cdi.New(dir, driver)
	if err != nil {
		t.Fatal(err)
	}
	uid, gid, timeout := uint32(10), uint32(20), int32(5)
	ids, err := w.Write("u2", []*abi.PreparedDevice{{Pool: "p", Device: "d", ContainerEdits: &abi.CDIContainerEdits{
		Env:            []string{"A=1"},
		DeviceNodes:    []*abi.CDIDeviceNode{{Path: "/dev/null", Type: "c", Major: 1, Minor: 3, FileMode: 0o666, Uid: &uid, Gid: &gid}},
		Mounts:         []*abi.CDIMount{{HostPath: "/tmp", ContainerPath: "/data", Options: []string{"ro", "bind"}, Type: "bind"}},
		Hooks:          []*abi.CDIHook{{HookName: "createContainer", Path: "/bin/true", Args: []string{"true"}, Timeout: &timeout}},
		AdditionalGids: []uint32{42},
	}}})
	if err != nil {
		t.Fatalf("Write: %v", err)
	}
	spec, err := inject(t, dir, ids...)
	if err != nil {
		t.Fatalf("inject: %v", err)
	}
	if len(spec.Mounts) != 1 || spec.Mounts[0].Destination != "/data" {
		t.Errorf("mounts = %+v", spec.Mounts)
	}
	if spec.Hooks == nil || len(spec.Hooks.CreateContainer) != 1 || *spec.Hooks.CreateContainer[0].Timeout != 5 {
		t.Errorf("hooks = %+v", spec.Hooks)
	}
	if !slices.Contains(spec.Process.User.AdditionalGids, 42) {
		t.Errorf("additional gids = %v", spec.Process.User.AdditionalGids)
	}
	if spec.Linux == nil || len(spec.Linux.Devices) != 1 || spec.Linux.Devices[0].Path != "/dev/null" || *spec.Linux.Devices[0].UID != 10 {
		t.Errorf("devices = %+v", spec.Linux)
	}
}
