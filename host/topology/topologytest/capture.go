package topologytest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// captureGlobs are the sysfs files Capture copies, relative to the root:
// what topology.Discover reads and little else.
var captureGlobs = []string{
	"devices/system/cpu/{online,offline,possible,present,isolated,kernel_max}",
	"devices/system/cpu/cpu[0-9]*/online",
	"devices/system/cpu/cpu[0-9]*/node[0-9]*",
	"devices/system/cpu/cpu[0-9]*/topology/{physical_package_id,die_id,cluster_id,core_id,thread_siblings_list}",
	"devices/system/cpu/cpu[0-9]*/cache/index[0-9]*/{level,type,size,shared_cpu_list,id}",
	"devices/system/cpu/cpu[0-9]*/cpufreq/{cpuinfo_min_freq,cpuinfo_max_freq,base_frequency,energy_performance_preference}",
	"devices/cpu_{core,atom}/cpus",
	"devices/system/node/{online,possible,has_cpu,has_memory,has_normal_memory}",
	"devices/system/node/node[0-9]*/{cpulist,distance,meminfo}",
	"devices/system/node/node[0-9]*/hugepages/hugepages-*/nr_hugepages",
	"devices/virtual/memory_tiering/memory_tier*/nodelist",
	"bus/pci/devices/*",
	"bus/pci/devices/*/{vendor,device,class,numa_node,local_cpulist,driver}",
	"class/net/*",
	"class/net/*/{address,mtu,flags,device}",
	"bus/{dax,nd,cxl}/devices/*",
	"bus/{dax,nd,cxl}/devices/*/target_node",
}

const (
	// MaxCaptureFiles bounds a capture, which is meant for a small VM.
	MaxCaptureFiles = 200
	maxFileBytes    = 4096
	// SymlinkManifest is the file in a capture that lists its symlinks.
	SymlinkManifest = "symlinks.txt"
)

// Capture copies the part of the sysfs tree at sysRoot that Discover reads
// into dst/sys as regular files (each cut at 4 KiB) and records the
// symlinks among them in dst/symlinks.txt ("link -> target", relative to the
// root) instead of storing links, which module zips and some checkouts
// drop. Files are stored where their links resolve, so Restore rebuilds the
// same shape. Unreadable files are skipped.
func Capture(sysRoot, dst string) error {
	realRoot, err := filepath.EvalSymlinks(sysRoot)
	if err != nil {
		return err
	}
	var links []string
	files := 0
	for _, g := range captureGlobs {
		for _, pattern := range expandBraces(g) {
			matches, err := filepath.Glob(filepath.Join(sysRoot, pattern))
			if err != nil {
				return err
			}
			for _, m := range matches {
				parent, err := filepath.EvalSymlinks(filepath.Dir(m))
				if err != nil {
					continue
				}
				rel, err := filepath.Rel(realRoot, filepath.Join(parent, filepath.Base(m)))
				if err != nil || strings.HasPrefix(rel, "..") {
					continue
				}
				fi, err := os.Lstat(m)
				if err != nil {
					continue
				}
				if fi.Mode()&fs.ModeSymlink != 0 {
					target, err := os.Readlink(m)
					if err != nil {
						return err
					}
					links = append(links, rel+" -> "+target)
					continue
				}
				if !fi.Mode().IsRegular() {
					continue
				}
				data, err := readHead(m, maxFileBytes)
				if err != nil {
					continue // sysfs attributes may refuse reads (EIO, EACCES)
				}
				if files++; files > MaxCaptureFiles {
					return fmt.Errorf("capture: more than %d files; meant for a small VM", MaxCaptureFiles)
				}
				out := filepath.Join(dst, "sys", rel)
				if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
					return err
				}
				if err := os.WriteFile(out, data, 0o644); err != nil {
					return err
				}
			}
		}
	}
	sort.Strings(links)
	links = compactStrings(links)
	return os.WriteFile(filepath.Join(dst, SymlinkManifest), []byte(strings.Join(links, "\n")+"\n"), 0o644)
}

// Restore rebuilds a capture made by Capture as a sysfs tree under dst:
// it copies src/sys and recreates the links of src/symlinks.txt, making
// any missing link target an empty directory.
func Restore(src, dst string) error {
	sys := filepath.Join(src, "sys")
	err := filepath.WalkDir(sys, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(sys, p)
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, data, 0o644)
	})
	if err != nil {
		return err
	}
	f, err := os.Open(filepath.Join(src, SymlinkManifest))
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		link, target, ok := strings.Cut(line, " -> ")
		if !ok || filepath.IsAbs(target) {
			return fmt.Errorf("restore: bad manifest line %q", line)
		}
		at := filepath.Join(dst, link)
		dir := filepath.Join(filepath.Dir(at), target)
		if r, err := filepath.Rel(dst, dir); err != nil || strings.HasPrefix(r, "..") {
			return fmt.Errorf("restore: link %q leads outside the tree", line)
		}
		if err := os.MkdirAll(filepath.Dir(at), 0o755); err != nil {
			return err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := os.Symlink(target, at); err != nil {
			return err
		}
	}
	return sc.Err()
}

func readHead(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, n))
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return data, nil
}

// expandBraces expands one level of "{a,b}" alternatives per group, which
// filepath.Glob lacks.
func expandBraces(p string) []string {
	i := strings.IndexByte(p, '{')
	if i < 0 {
		return []string{p}
	}
	j := strings.IndexByte(p[i:], '}') + i
	var out []string
	for alt := range strings.SplitSeq(p[i+1:j], ",") {
		out = append(out, expandBraces(p[:i]+alt+p[j+1:])...)
	}
	return out
}

func compactStrings(s []string) []string {
	var out []string
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
