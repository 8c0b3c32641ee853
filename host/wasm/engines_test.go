package wasm_test

import "github.com/nriwasm/nriwasm/host/wasm"

// testEngines are the engines the conformance suite runs on: both, but under
// the race detector only the compiler. The detector instruments wazero's
// interpreter, which is Go code, and not compiled guest code: interpreted
// under it, a runaway allocation loop meets its deadline before the memory
// limit (MisbehaviourIsContained/oom) and the suite takes most of make
// race's time. The host's side of a call (deadline timer, poll, rebuilds),
// which the detector is for, is checked on both engines under it by
// TestGarbageCollectionDuringARunawayCall and TestStartUpDeadline; make test
// runs the whole suite on the interpreter.
func testEngines() []wasm.Engine {
	if raceDetector {
		return []wasm.Engine{wasm.EngineCompiler}
	}
	return []wasm.Engine{wasm.EngineCompiler, wasm.EngineInterpreter}
}
