//go:build integration

package containerd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

const cgroupMount = "/sys/fs/cgroup"

// CgroupV2 reports whether the host runs the unified hierarchy only.
func CgroupV2() bool {
	_, err := os.Stat(filepath.Join(cgroupMount, "cgroup.controllers"))
	return err == nil
}

// hierarchies lists the mounted cgroup hierarchies (symlinks such as
// cpu,cpuacct skipped).
func hierarchies() []string {
	if CgroupV2() {
		return []string{cgroupMount}
	}
	entries, err := os.ReadDir(cgroupMount)
	if err != nil {
		return nil
	}
	var hs []string
	for _, e := range entries {
		if e.IsDir() {
			hs = append(hs, filepath.Join(cgroupMount, e.Name()))
		}
	}
	return hs
}

// CPUSet returns the container's cpuset as the kernel applies it:
// cpuset.cpus in the cgroup v1 cpuset hierarchy, or cpuset.cpus.effective
// on cgroup v2.
func (c *Containerd) CPUSet(ctx context.Context, containerID string) (string, error) {
	return c.cpusetFile(ctx, containerID, "cpus")
}

// MemSet returns the container's memory nodes as the kernel applies them:
// cpuset.mems (cgroup v1) or cpuset.mems.effective (v2).
func (c *Containerd) MemSet(ctx context.Context, containerID string) (string, error) {
	return c.cpusetFile(ctx, containerID, "mems")
}

// cpusetFile reads the container's cpuset.<kind> (v1) or
// cpuset.<kind>.effective (v2).
func (c *Containerd) cpusetFile(ctx context.Context, containerID, kind string) (string, error) {
	info, err := c.containerInfo(ctx, containerID)
	if err != nil {
		return "", err
	}
	path := info.RuntimeSpec.Linux.CgroupsPath
	if path == "" || strings.Contains(path, ":") {
		return "", fmt.Errorf("container %s: unsupported cgroupsPath %q (the harness uses cgroupfs)", containerID, path)
	}
	file := filepath.Join(cgroupMount, "cpuset", path, "cpuset."+kind)
	if CgroupV2() {
		file = filepath.Join(cgroupMount, path, "cpuset."+kind+".effective")
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("reading container %s cpuset.%s: %w", containerID, kind, err)
	}
	return strings.TrimSpace(string(b)), nil
}

// CpusAllowed returns Cpus_allowed_list from /proc/<pid>/status.
func CpusAllowed(pid int) (string, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "", fmt.Errorf("reading the status of process %d: %w", pid, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("reading the status of process %d: %w", pid, err)
	}
	return "", fmt.Errorf("process %d: no Cpus_allowed_list in its status", pid)
}

// OnlineCPUs returns /sys/devices/system/cpu/online, e.g. "0-3".
func OnlineCPUs() (string, error) {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return "", fmt.Errorf("reading the online CPUs: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// cgroupPids lists the processes in cgroup and below (cpuset hierarchy on
// cgroup v1, which every runc container joins; the unified one on v2).
func cgroupPids(cgroup string) ([]int, error) {
	top := filepath.Join(cgroupMount, "cpuset", cgroup)
	if CgroupV2() {
		top = filepath.Join(cgroupMount, cgroup)
	}
	var pids []int
	err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(filepath.Join(p, "cgroup.procs"))
		if err != nil {
			return err
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				pids = append(pids, pid)
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("listing the processes in cgroup %s: %w", cgroup, err)
	}
	return pids, nil
}

// Affinity returns where the container really runs: its cgroup's cpuset
// (CPUSet) and its init process's Cpus_allowed_list.
func (c *Containerd) Affinity(ctx context.Context, containerID string) (cpuset, allowed string, err error) {
	if cpuset, err = c.CPUSet(ctx, containerID); err != nil {
		return "", "", err
	}
	pid, err := c.PID(ctx, containerID)
	if err != nil {
		return "", "", err
	}
	if allowed, err = CpusAllowed(pid); err != nil {
		return "", "", err
	}
	return cpuset, allowed, nil
}
