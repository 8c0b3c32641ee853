//go:build integration

package containerd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Cpusets reads a container's real cgroup cpuset: cpuset.cpus and
// cpuset.mems (cgroup v1), or their effective values (cgroup v2).
func (c *Containerd) Cpusets(ctx context.Context, containerID string) (cpus, mems string, err error) {
	info, err := c.containerInfo(ctx, containerID)
	if err != nil {
		return "", "", err
	}
	path := info.RuntimeSpec.Linux.CgroupsPath
	if path == "" || strings.Contains(path, ":") {
		return "", "", fmt.Errorf("container %s: unsupported cgroupsPath %q (the harness uses cgroupfs)", containerID, path)
	}
	dir, suffix := filepath.Join(cgroupMount, "cpuset", path), ""
	if CgroupV2() {
		dir, suffix = filepath.Join(cgroupMount, path), ".effective"
	}
	read := func(name string) (string, error) {
		b, err := os.ReadFile(filepath.Join(dir, name+suffix))
		if err != nil {
			return "", fmt.Errorf("reading container %s %s: %w", containerID, name, err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	if cpus, err = read("cpuset.cpus"); err != nil {
		return "", "", err
	}
	if mems, err = read("cpuset.mems"); err != nil {
		return "", "", err
	}
	return cpus, mems, nil
}

// Recorded is containerd's record of a container's cpuset (the OCI spec it
// keeps for the container, which NRI adjustments and updates change): what
// the runtime believes it applied.
func (c *Containerd) Recorded(ctx context.Context, containerID string) (cpus, mems string, err error) {
	info, err := c.containerInfo(ctx, containerID)
	if err != nil {
		return "", "", err
	}
	r := info.RuntimeSpec.Linux.Resources.CPU
	return r.Cpus, r.Mems, nil
}
