package wasm_test

import "github.com/nriwasm/nriwasm/host/wasm"

// testEngines are the engines the engine-wide checks (conformance, start-up
// deadline, GC during a runaway call) run on: both, but under the race
// detector only the compiler. wazero's interpreter is Go code, which the
// detector instruments (many times slower again there, on top of the
// interpreter's own 25–45×), while compiled guest code is not; the host's
// concurrency that the detector is for is the same on both engines, and
// make test runs every check on the interpreter.
func testEngines() []wasm.Engine {
	if raceDetector {
		return []wasm.Engine{wasm.EngineCompiler}
	}
	return []wasm.Engine{wasm.EngineCompiler, wasm.EngineInterpreter}
}
