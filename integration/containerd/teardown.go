//go:build integration

package containerd

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// cleanup tears everything down, reporting (not stopping at) each failure:
// pods through CRI, containerd, leftover shims and container processes,
// mounts, cgroups, the root. On failure it logs the tail of containerd's log.
func (c *Containerd) cleanup(t testing.TB) {
	var errs []error
	if c.running() && c.rt != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		errs = append(errs, c.removeAllPods(ctx))
		cancel()
	}
	errs = append(errs, c.stop())
	errs = append(errs, c.killLeftovers())
	errs = append(errs, unmountUnder(c.Root))
	errs = append(errs, removeCgroups(c.CgroupRoot))
	err := errors.Join(errs...)
	if err != nil {
		t.Errorf("containerd teardown: %v", err)
	}
	if t.Failed() {
		t.Logf("containerd log (%s), last 64 KiB:\n%s", c.LogPath, c.logTail(64<<10))
	}
	if err == nil {
		if err := os.RemoveAll(c.Root); err != nil {
			t.Errorf("removing the containerd root: %v", err)
		}
	} else {
		t.Logf("kept %s for inspection", c.Root)
	}
}

// removeAllPods stops and removes every pod sandbox (and so its containers).
func (c *Containerd) removeAllPods(ctx context.Context) error {
	list, err := c.rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return fmt.Errorf("teardown: CRI ListPodSandbox: %w", err)
	}
	var errs []error
	for _, p := range list.GetItems() {
		if _, err := c.rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: p.Id}); err != nil {
			errs = append(errs, fmt.Errorf("teardown: CRI StopPodSandbox %s: %w", p.Id, err))
		}
		if _, err := c.rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: p.Id}); err != nil {
			errs = append(errs, fmt.Errorf("teardown: CRI RemovePodSandbox %s: %w", p.Id, err))
		}
	}
	return errors.Join(errs...)
}

// killLeftovers SIGKILLs the processes in the test's cgroups and the shims
// serving this containerd (their command line names its address), then
// waits for them to disappear.
func (c *Containerd) killLeftovers() error {
	pids, err := cgroupPids(c.CgroupRoot)
	if err != nil {
		return err
	}
	shims, err := shimPids(c.Address)
	if err != nil {
		return err
	}
	pids = append(pids, shims...)
	for _, pid := range pids {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("teardown: killing leftover process %d: %w", pid, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = poll(ctx, nil, func() (bool, error) {
		for _, pid := range pids {
			if alive(pid) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("teardown: waiting for leftover processes %v to exit: %w", pids, err)
	}
	return nil
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses.
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}

// shimPids finds containerd-shim-runc-v2 processes started with -address addr.
func shimPids(addr string) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("teardown: listing /proc: %w", err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue // exited meanwhile
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if filepath.Base(args[0]) != "containerd-shim-runc-v2" {
			continue
		}
		for i := 1; i+1 < len(args); i++ {
			if args[i] == "-address" && args[i+1] == addr {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids, nil
}

// unmountUnder lazily unmounts every mount point at or below dir, deepest first.
func unmountUnder(dir string) error {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return fmt.Errorf("teardown: reading mountinfo: %w", err)
	}
	defer f.Close()
	var points []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		mp := unescapeMountinfo(fields[4])
		if mp == dir || strings.HasPrefix(mp, dir+"/") {
			points = append(points, mp)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("teardown: reading mountinfo: %w", err)
	}
	sort.Slice(points, func(i, j int) bool { return len(points[i]) > len(points[j]) })
	var errs []error
	for _, mp := range points {
		if err := syscall.Unmount(mp, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, fmt.Errorf("teardown: unmounting %s: %w", mp, err))
		}
	}
	return errors.Join(errs...)
}

// unescapeMountinfo undoes mountinfo's octal escapes (\040 for a space).
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// removeCgroups removes cgroup (e.g. /nriwasm-123) and everything below it
// in every hierarchy, deepest first, retrying while exiting tasks keep a
// cgroup busy.
func removeCgroups(cgroup string) error {
	var dirs []string
	for _, h := range hierarchies() {
		top := filepath.Join(h, cgroup)
		err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("teardown: walking %s: %w", top, err)
		}
	}
	sort.Slice(dirs, func(i, j int) bool { return strings.Count(dirs[i], "/") > strings.Count(dirs[j], "/") })
	var errs []error
	for _, d := range dirs {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		var last error
		err := poll(ctx, nil, func() (bool, error) {
			last = syscall.Rmdir(d)
			return last == nil || errors.Is(last, syscall.ENOENT), nil
		})
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("teardown: removing cgroup %s: %w", d, last))
		}
	}
	return errors.Join(errs...)
}

// UnmountUnder lazily unmounts every mount point at or below dir, deepest
// first: for harnesses that share this machine's cleanup (a kubelet's root
// directory and pod volumes).
func UnmountUnder(dir string) error { return unmountUnder(dir) }
