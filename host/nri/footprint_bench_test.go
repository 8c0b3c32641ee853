package nri_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"testing"
	"time"
)

// BenchmarkAgentFootprint starts the agent in process with the built-in
// topology-aware policy on the 256-CPU fixture, as `nriwasm run` does, and runs
// 1,000 containers through it. It reports start to ready (the policy loaded
// and the runtime's first Synchronize answered) and, with the 1,000
// containers live, the process's resident set (VmRSS, the agent plus this
// test's fake runtime) and the Go heap in use, after returning the start-up
// garbage to the OS as `nriwasm run` does once the policy is loaded.
//
// cold compiles the policy into an empty compilation cache; warm loads it from
// a cache that a cold start in a child process filled. Run each alone, in a process of
// its own, for an RSS that no earlier benchmark inflated:
//
//	go test -run '^$' -bench 'AgentFootprint/cold' -benchtime 1x ./host/nri/
//	go test -run '^$' -bench 'AgentFootprint/warm' -benchtime 1x ./host/nri/
func BenchmarkAgentFootprint(b *testing.B) {
	topo := machineTopology(b, "server256", server256())
	run := func(b *testing.B, cache func() string) {
		var ready time.Duration
		for b.Loop() {
			dir := cache()
			rt := newRuntime(b)
			rt.start()
			start := time.Now()
			a := startAgent(b, rt, agentOpts{topo: topo, cacheDir: dir})
			rt.waitSync()
			ready = time.Since(start)
			debug.FreeOSMemory() // what `nriwasm run` does after the load
			rt.runLive(b, liveContainers)
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(vmRSS(b))/(1<<20), "rss-MiB")
			b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")
			a.stop()
			rt.stop()
		}
		b.ReportMetric(float64(ready.Microseconds())/1000, "ready-ms")
	}
	b.Run("cold", func(b *testing.B) {
		cache := b.TempDir // a new, empty cache for every start: each one compiles
		if dir := os.Getenv(footprintCacheEnv); dir != "" {
			cache = func() string { return dir } // filling warm's cache
		}
		run(b, cache)
	})
	b.Run("warm", func(b *testing.B) {
		// Another process fills the cache, as the agent's previous run did: a
		// start in this one would leave its compile behind in the RSS.
		dir := b.TempDir()
		fill := exec.Command(os.Args[0], "-test.run=^$", "-test.bench=^BenchmarkAgentFootprint$/^cold$", "-test.benchtime=1x")
		fill.Env = append(os.Environ(), footprintCacheEnv+"="+dir)
		if out, err := fill.CombinedOutput(); err != nil {
			b.Fatalf("filling the compilation cache: %v\n%s", err, out)
		}
		run(b, func() string { return dir })
	})
}

// footprintCacheEnv names the compilation cache BenchmarkAgentFootprint/cold
// compiles into when BenchmarkAgentFootprint/warm runs it to fill one.
const footprintCacheEnv = "NRIWASM_FOOTPRINT_CACHE"

// vmRSS is this process's resident set size, in bytes.
func vmRSS(b *testing.B) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if v, ok := bytes.CutPrefix(sc.Bytes(), []byte("VmRSS:")); ok {
			kb, err := strconv.ParseInt(string(bytes.TrimSuffix(bytes.TrimSpace(v), []byte(" kB"))), 10, 64)
			if err != nil {
				b.Fatalf("VmRSS %q: %v", v, err)
			}
			return kb << 10
		}
	}
	b.Fatal("no VmRSS in /proc/self/status")
	return 0
}
