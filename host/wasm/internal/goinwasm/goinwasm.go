// Package goinwasm holds plain Go workloads typical of a resource policy's hot
// path (sorting structs, a string-keyed map, bit arithmetic over CPU masks,
// formatting a CPU list), so that the same code can be timed natively and
// compiled to Wasm with nothing around it: no ABI, no protobuf, no deadline
// instrumentation, no memory cap. host/wasm's BenchmarkGoInWasm runs it both
// ways; the ratio is the floor under any Go-built policy's Wasm-versus-native
// ratio, set by Go's Wasm code generation and wazero's compiler alone.
//
// testdata/goinwasm (a wasip1 reactor) exports each workload; every function
// here runs its workload n times on Size elements and returns a checksum, so
// that neither compiler can drop the work. Everything is deterministic.
package goinwasm

import (
	"math/bits"
	"slices"
	"strconv"
	"strings"
)

// Size is the number of elements every workload works on.
const Size = 256

// entry is what Sort builds and sorts: a container as a policy sees it.
type entry struct {
	id       int
	name     string
	cpu, mem int
	prio     int
}

var (
	// names are Size names with duplicates (pairs of ids share a name), in a
	// shuffled order, so that sorting has work to do and the id breaks ties.
	names [Size]string
	// keys are Size distinct map keys, none of them equal to a name.
	keys [Size]string
	// words are Size pseudo-random CPU masks.
	words [Size]uint32
	// cpus are Size sorted CPU ids out of 0..2*Size, with runs and gaps.
	cpus [Size]uint64
)

func init() {
	x := uint32(2463534242)
	next := func() uint32 { // xorshift32
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		return x
	}
	for i := range names {
		names[i] = "pod-" + strconv.Itoa((i*97%Size)/2) + "/ctr"
		keys[i] = names[i] + "-" + strconv.Itoa(i)
	}
	for i := range words {
		words[i] = next()
	}
	for cpu, i := uint64(0), 0; i < Size; cpu++ {
		if next()%4 != 0 { // three CPUs in four: runs broken by gaps
			cpus[i] = cpu
			i++
		}
	}
}

// Sort n times builds a slice of Size entries by appending and sorts it with
// slices.SortFunc by name, then id.
func Sort(n int) uint64 {
	var sum uint64
	for range n {
		var list []entry
		for i, name := range names {
			list = append(list, entry{id: i, name: name, cpu: i * 100, mem: i << 20, prio: i % 3})
		}
		slices.SortFunc(list, func(a, b entry) int {
			if c := strings.Compare(a.name, b.name); c != 0 {
				return c
			}
			return a.id - b.id
		})
		for _, e := range list {
			sum = sum*31 + uint64(e.id+e.prio)
		}
	}
	return sum
}

// Map n times inserts Size string keys into a fresh map, looks every key up
// (and as many misses), deletes half of them and looks them all up again.
func Map(n int) uint64 {
	var sum uint64
	for range n {
		m := make(map[string]int)
		for i, key := range keys {
			m[key] = i
		}
		for i, key := range keys {
			if v, ok := m[key]; ok {
				sum += uint64(v)
			}
			if _, ok := m[names[i]]; ok {
				sum++
			}
		}
		for i := 0; i < Size; i += 2 {
			delete(m, keys[i])
		}
		for _, key := range keys {
			if v, ok := m[key]; ok {
				sum = sum*31 + uint64(v)
			}
		}
		sum += uint64(len(m))
	}
	return sum
}

// Bits n times runs over Size CPU masks: population counts, masks against the
// neighbouring word and a walk over every set bit, as cpuset code does.
func Bits(n int) uint64 {
	var sum uint64
	for range n {
		for i, w := range words {
			sum += uint64(bits.OnesCount32(w))
			sum ^= uint64(w&^words[(i+1)%Size]) << (i % 32)
			for m := w; m != 0; m &= m - 1 {
				sum += uint64(i*32 + bits.TrailingZeros32(m))
			}
		}
	}
	return sum
}

// Format n times formats Size sorted CPU ids as a cpuset list ("0-3,8,10-12")
// into a []byte with strconv.AppendUint.
func Format(n int) uint64 {
	var sum uint64
	for range n {
		var buf []byte
		for i := 0; i < len(cpus); {
			j := i
			for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
				j++
			}
			if len(buf) > 0 {
				buf = append(buf, ',')
			}
			buf = strconv.AppendUint(buf, cpus[i], 10)
			if j > i {
				buf = append(buf, '-')
				buf = strconv.AppendUint(buf, cpus[j], 10)
			}
			i = j + 1
		}
		for _, c := range buf {
			sum = sum*31 + uint64(c)
		}
	}
	return sum
}
