//go:build wasip1

// Command spin is a test guest for package interrupt: a wasip1 reactor whose
// spin export runs a loop that only the interrupt check can stop.
//
// Rebuild testdata/spin.wasm from host/wasm/internal/interrupt with:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o testdata/spin.wasm ./testdata/spin
package main

func main() {}

// spin runs n iterations of a small hash mix and returns the result; a
// negative n loops forever.
//
//go:wasmexport spin
func spin(n int32) int32 {
	acc := uint32(2166136261)
	for i := int32(0); n < 0 || i < n; i++ {
		acc ^= uint32(i)
		acc *= 16777619
		acc ^= acc >> 15
	}
	return int32(acc)
}

// add returns a+b.
//
//go:wasmexport add
func add(a, b int32) int32 {
	return a + b
}
