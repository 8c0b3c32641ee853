package topology

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

var cacheTypes = map[string]abi.CacheType{
	"Data":        abi.CacheType_CACHE_TYPE_DATA,
	"Instruction": abi.CacheType_CACHE_TYPE_INSTRUCTION,
	"Unified":     abi.CacheType_CACHE_TYPE_UNIFIED,
}

// cacheKey identifies a cache instance: every CPU that uses it reports the
// same level, type and shared_cpu_list.
type cacheKey struct {
	level uint32
	typ   abi.CacheType
	cpus  string // shared_cpu_list as sysfs prints it
}

// cacheRef is one cpuN/cache/indexK as read in the parallel per-CPU phase.
type cacheRef struct {
	dir string
	key cacheKey
}

// readCacheRefs reads a CPU's cache/index0, index1, ... (the kernel numbers
// them without gaps) up to the first without a level file.
func (s *sysfs) readCacheRefs(cpu uint32) ([]cacheRef, error) {
	var refs []cacheRef
	for k := 0; ; k++ {
		dir := fmt.Sprintf("%s/cpu%d/cache/index%d", cpuDir, cpu, k)
		level, ok, err := s.readUint(dir+"/level", 32)
		if err != nil || !ok {
			return refs, err
		}
		ref := cacheRef{dir: dir, key: cacheKey{level: uint32(level)}}
		typ, ok, err := s.read(dir + "/type")
		if err != nil {
			return nil, err
		}
		if ok {
			if ref.key.typ, ok = cacheTypes[typ]; !ok {
				return nil, s.badContent(dir+"/type", typ, fmt.Errorf("unknown cache type"))
			}
		}
		shared, ok, err := s.read(dir + "/shared_cpu_list")
		if err != nil {
			return nil, err
		}
		if !ok {
			// Private to this CPU as far as sysfs tells.
			shared = strconv.FormatUint(uint64(cpu), 10)
		}
		ref.key.cpus = shared
		refs = append(refs, ref)
	}
}

// discoverCaches merges the CPUs' cache refs into cache instances, numbers
// them (sorted by level, type and first CPU; see RATIONALE.md) and fills
// CPU.cache_ids.
func (s *sysfs) discoverCaches(cpus *cpuSet) ([]*abi.Cache, error) {
	byKey := make(map[cacheKey]*abi.Cache)
	uses := make([][]*abi.Cache, len(cpus.list))
	for i, c := range cpus.list {
		for _, ref := range cpus.cacheRefs[i] {
			cache := byKey[ref.key]
			if cache == nil {
				var err error
				if cache, err = s.newCache(ref, cpus.online); err != nil {
					return nil, err
				}
				byKey[ref.key] = cache
			}
			if _, found := slices.BinarySearch(cache.Cpus, c.Id); !found {
				cache.Cpus = sortedUnique(append(cache.Cpus, c.Id))
			}
			uses[i] = append(uses[i], cache)
		}
	}

	caches := make([]*abi.Cache, 0, len(byKey))
	for _, cache := range byKey {
		caches = append(caches, cache)
	}
	slices.SortFunc(caches, compareCaches)
	for i, cache := range caches {
		cache.Id = uint32(i)
	}
	for i, c := range cpus.list {
		slices.SortFunc(uses[i], compareCaches)
		for _, cache := range uses[i] {
			c.CacheIds = append(c.CacheIds, cache.Id)
		}
	}
	return caches, nil
}

// compareCaches orders caches innermost first: by level, type (data,
// instruction, unified), first CPU, then the whole CPU list.
func compareCaches(a, b *abi.Cache) int {
	if c := cmp.Compare(a.Level, b.Level); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Type, b.Type); c != 0 {
		return c
	}
	return slices.Compare(a.Cpus, b.Cpus)
}

// newCache makes the instance a ref describes the first time a CPU
// reports it, reading its size and sysfs id.
func (s *sysfs) newCache(ref cacheRef, online idSet) (*abi.Cache, error) {
	ids, err := ParseList(ref.key.cpus)
	if err != nil {
		return nil, s.badContent(ref.dir+"/shared_cpu_list", ref.key.cpus, err)
	}
	cache := &abi.Cache{Level: ref.key.level, Type: ref.key.typ, Cpus: online.filter(ids)}
	size, ok, err := s.read(ref.dir + "/size")
	if err != nil {
		return nil, err
	}
	if ok {
		if cache.SizeBytes, err = parseSize(size); err != nil {
			return nil, s.badContent(ref.dir+"/size", size, err)
		}
	}
	if cache.SysfsId, _, err = s.readID(ref.dir + "/id"); err != nil {
		return nil, err
	}
	return cache, nil
}

// parseSize parses a cache size as sysfs prints it: a number with an
// optional K, M or G suffix ("48K", "32M"); without one it is bytes.
func parseSize(s string) (uint64, error) {
	mult := uint64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mult = 1 << 10
	case strings.HasSuffix(s, "M"):
		mult = 1 << 20
	case strings.HasSuffix(s, "G"):
		mult = 1 << 30
	}
	digits := s
	if mult != 1 {
		digits = s[:len(s)-1]
	}
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return 0, fmt.Errorf("bad size %q", s)
	}
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("bad size %q: %w", s, err)
	}
	if n > (1<<64-1)/mult {
		return 0, fmt.Errorf("size %q overflows", s)
	}
	return n * mult, nil
}
