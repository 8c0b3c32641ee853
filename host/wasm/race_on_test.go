//go:build race

package wasm_test

// raceDetector: the tests run under the race detector.
const raceDetector = true
