// Package cdi writes the Container Device Interface specs of prepared DRA
// claims: one spec file per claim, holding one CDI device per device the
// policy prepared (abi/README.md §10 fixes the names), written atomically with
// the CDI library so the runtime never reads half a spec.
//
//	w, err := cdi.New("/var/run/cdi", "topology-aware.nri.io")
//	ids, err := w.Write(claimUID, resp.GetDevices()) // "topology-aware.nri.io/claim=<uid>-0", ...
//	err = w.Remove(claimUID)                         // on unprepare; a missing spec is fine
package cdi

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	cdiapi "tags.cncf.io/container-device-interface/pkg/cdi"
	cdispec "tags.cncf.io/container-device-interface/specs-go"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// DefaultDir is where runtimes look for dynamic CDI specs.
const DefaultDir = "/var/run/cdi"

// Writer writes and removes one driver's claim specs in one directory.
type Writer struct {
	dir    string
	driver string
	cache  *cdiapi.Cache
}

// New returns a Writer for driver's claims in dir, creating dir if needed.
func New(dir, driver string) (*Writer, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cdi: spec directory: %w", err)
	}
	cache, err := cdiapi.NewCache(cdiapi.WithSpecDirs(dir), cdiapi.WithAutoRefresh(false))
	if err != nil {
		return nil, fmt.Errorf("cdi: %w", err)
	}
	return &Writer{dir: dir, driver: driver, cache: cache}, nil
}

// specName is the claim's spec file name without extension.
func (w *Writer) specName(claimUID string) string {
	return cdiapi.GenerateTransientSpecName(w.driver, abi.CDIClass, claimUID)
}

// Path is the claim's spec file.
func (w *Writer) Path(claimUID string) string {
	return filepath.Join(w.dir, w.specName(claimUID)+".json")
}

// Write writes the claim's spec, replacing any earlier one, and returns the
// fully qualified CDI device of each prepared device, in order. A device whose
// edits are empty gets one environment variable naming it (CDI refuses a
// device without edits, and the container must still carry the device so the
// policy can tie it to the claim).
func (w *Writer) Write(claimUID string, devices []*abi.PreparedDevice) ([]string, error) {
	spec := &cdispec.Spec{Kind: w.driver + "/" + abi.CDIClass}
	ids := make([]string, len(devices))
	for i, d := range devices {
		edits := containerEdits(d.GetContainerEdits())
		if len(edits.Env)+len(edits.DeviceNodes)+len(edits.Mounts)+len(edits.Hooks)+len(edits.AdditionalGIDs) == 0 {
			edits.Env = []string{placeholderEnv(claimUID, i) + "=" + d.GetPool() + "/" + d.GetDevice()}
		}
		spec.Devices = append(spec.Devices, cdispec.Device{Name: abi.CDIDeviceID(claimUID, i), ContainerEdits: edits})
		ids[i] = abi.CDIDeviceName(w.driver, claimUID, i)
	}
	version, err := cdispec.MinimumRequiredVersion(spec)
	if err != nil {
		return nil, fmt.Errorf("cdi: claim %s: %w", claimUID, err)
	}
	spec.Version = version
	if len(spec.Devices) == 0 {
		// A claim with no device of ours needs no spec; drop a stale one.
		return ids, w.Remove(claimUID)
	}
	if err := w.cache.WriteSpec(spec, w.specName(claimUID)+".json"); err != nil {
		return nil, fmt.Errorf("cdi: write the spec of claim %s: %w", claimUID, err)
	}
	return ids, nil
}

// Remove deletes the claim's spec; a spec that is not there is not an error.
func (w *Writer) Remove(claimUID string) error {
	err := os.Remove(w.Path(claimUID))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("cdi: remove the spec of claim %s: %w", claimUID, err)
	}
	return nil
}

// Claims lists the claim uids that have a spec of this driver in the
// directory, for cleaning up specs of claims no longer prepared.
func (w *Writer) Claims() ([]string, error) {
	prefix := cdiapi.GenerateTransientSpecName(w.driver, abi.CDIClass, "")
	entries, err := os.ReadDir(w.dir)
	if err != nil {
		return nil, fmt.Errorf("cdi: list specs: %w", err)
	}
	var uids []string
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if uid, ok2 := strings.CutPrefix(name, prefix); ok && ok2 && uid != "" {
			uids = append(uids, uid)
		}
	}
	return uids, nil
}

// placeholderEnv names device i of a claim: NRIWASM_DEVICE_<uid>_<i>, the
// uid's characters an environment name cannot hold as '_'.
func placeholderEnv(claimUID string, i int) string {
	b := []byte(fmt.Sprintf("NRIWASM_DEVICE_%s_%d", claimUID, i))
	for j, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			b[j] = '_'
		}
	}
	return string(b)
}

func containerEdits(e *abi.CDIContainerEdits) cdispec.ContainerEdits {
	out := cdispec.ContainerEdits{Env: e.GetEnv(), AdditionalGIDs: e.GetAdditionalGids()}
	for _, n := range e.GetDeviceNodes() {
		dn := &cdispec.DeviceNode{
			Path: n.GetPath(), HostPath: n.GetHostPath(), Type: n.GetType(), Major: n.GetMajor(), Minor: n.GetMinor(),
			Permissions: n.GetPermissions(), UID: n.Uid, GID: n.Gid,
		}
		if n.GetFileMode() != 0 {
			mode := os.FileMode(n.GetFileMode())
			dn.FileMode = &mode
		}
		out.DeviceNodes = append(out.DeviceNodes, dn)
	}
	for _, m := range e.GetMounts() {
		out.Mounts = append(out.Mounts, &cdispec.Mount{HostPath: m.GetHostPath(), ContainerPath: m.GetContainerPath(), Options: m.GetOptions(), Type: m.GetType()})
	}
	for _, h := range e.GetHooks() {
		hook := &cdispec.Hook{HookName: h.GetHookName(), Path: h.GetPath(), Args: h.GetArgs(), Env: h.GetEnv()}
		if h.Timeout != nil {
			t := int(h.GetTimeout())
			hook.Timeout = &t
		}
		out.Hooks = append(out.Hooks, hook)
	}
	return out
}
