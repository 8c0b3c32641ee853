package state

import (
	"fmt"
	"testing"
)

// BenchmarkSaveLocked is what the agent's background saver does under the
// manager's lock (host/resmgr save.go): encode the journal and note the
// decision log's length. Every decision waits for it. The journals hold n
// containers, 20 to a pod, and a claim per pod.
func BenchmarkSaveLocked(b *testing.B) {
	for _, n := range []int{200, 1000, 4000} {
		b.Run(fmt.Sprintf("containers=%d", n), func(b *testing.B) {
			j := journal(n/20, n, n/20)
			ck := NewCheckpoint(b.TempDir())
			buf, err := Marshal(nil, j)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if buf, err = Marshal(buf[:0], j); err != nil {
					b.Fatal(err)
				}
				_ = ck.LogMark()
			}
			b.ReportMetric(float64(len(buf)), "file-bytes")
		})
	}
}
