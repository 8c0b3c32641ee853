package wasmtest

import (
	"fmt"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/wasm/internal/wasmbin"
)

// Entry points of a policy module's start-up, for LoopingModule.
const (
	// EntryStart is the module's start function (the start section).
	EntryStart = "start"
	// EntryInitialize is the WASI reactor initializer, abi.ExportInitialize.
	EntryInitialize = abi.ExportInitialize
	// EntryVersion is the ABI handshake, abi.ExportABIVersion.
	EntryVersion = abi.ExportABIVersion
)

// Function bodies of the hand-assembled modules (locals count, code, end).
var (
	bodyNop      = []byte{0x00, 0x0b}
	bodyLoop     = []byte{0x00, 0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b}       // loop br 0 end
	bodyLoopI32  = []byte{0x00, 0x03, 0x40, 0x0c, 0x00, 0x0b, 0x00, 0x0b} // loop br 0 end unreachable
	answerOffset = uint32(8)
)

// LoopingModule returns a hand-assembled policy module, a few hundred bytes,
// that loops forever in entry (EntryStart, EntryInitialize or EntryVersion)
// and otherwise follows the calling convention: its call answers an empty
// InitResponse.
func LoopingModule(entry string) []byte {
	m := rawModule{answer: mustMarshal(&abi.Response{Result: &abi.Response_Init{Init: &abi.InitResponse{}}})}
	switch entry {
	case EntryStart:
		m.start = true
		m.init = bodyLoop
	case EntryInitialize:
		m.init = bodyLoop
	case EntryVersion:
		m.version = bodyLoopI32
	default:
		panic(fmt.Sprintf("wasmtest: unknown entry point %q", entry))
	}
	return m.encode()
}

// AnsweringModule returns a hand-assembled policy module whose every call
// answers the bytes answer (meant to be an encoded abi.Response), whatever
// the request; its memory is sized to hold answer and a request buffer of
// requestRoom bytes.
func AnsweringModule(answer []byte, requestRoom uint32) []byte {
	return rawModule{answer: answer, requestRoom: requestRoom}.encode()
}

// WrongIdleModule returns a hand-assembled policy module that answers
// answer and exports nriwasm_idle with the signature () -> i32, which the
// host must refuse.
func WrongIdleModule(answer []byte) []byte {
	return rawModule{answer: answer, wrongIdle: true}.encode()
}

// LoggingModule returns a hand-assembled policy module whose every call
// logs message n times at info level through the host's log import, then
// answers answer.
func LoggingModule(n int32, message, answer []byte) []byte {
	return rawModule{answer: answer, logs: n, message: message}.encode()
}

func mustMarshal(m interface{ MarshalVT() ([]byte, error) }) []byte {
	b, err := m.MarshalVT()
	if err != nil {
		panic(err)
	}
	return b
}

// rawModule describes a minimal policy module: function 0 is _initialize
// (and the start function if start), 1 the ABI version, 2 the request buffer
// and 3 the call, which answers answer from offset answerOffset.
type rawModule struct {
	start       bool
	init        []byte
	version     []byte
	answer      []byte
	requestRoom uint32
	// logs is how many times the call logs message (then the log import is
	// function 0 and every other function moves up by one).
	logs    int32
	message []byte
	// wrongIdle exports the version function as nriwasm_idle too.
	wrongIdle bool
}

func (m rawModule) encode() []byte {
	if m.init == nil {
		m.init = bodyNop
	}
	if m.version == nil {
		m.version = append(appendS64([]byte{0x00, 0x41}, int64(int32(uint32(abi.ABIMajor)<<16|uint32(abi.ABIMinor)))), 0x0b)
	}
	if m.requestRoom == 0 {
		m.requestRoom = 1 << 20
	}
	msgOffset := answerOffset + uint32(len(m.answer))
	reqBuf := (msgOffset + uint32(len(m.message)) + 7) &^ 7
	pages := (uint64(reqBuf) + uint64(m.requestRoom) + 0xffff) >> 16
	reqBody := append(appendS64([]byte{0x00, 0x41}, int64(int32(reqBuf))), 0x0b)
	callBody := []byte{0x00}
	first := uint32(0) // index of the first defined function
	if m.logs > 0 {
		first = 1
		// local i32 $i (index 2, after the two parameters); loop: log(info, msg, len); $i++; br_if $i < logs
		callBody = []byte{0x01, 0x01, 0x7f, 0x03, 0x40}
		callBody = appendS64(append(callBody, 0x41), int64(3))
		callBody = appendS64(append(callBody, 0x41), int64(int32(msgOffset)))
		callBody = appendS64(append(callBody, 0x41), int64(len(m.message)))
		callBody = append(callBody, 0x10, 0x00, 0x20, 0x02, 0x41, 0x01, 0x6a, 0x22, 0x02, 0x41)
		callBody = append(appendS64(callBody, int64(m.logs)), 0x48, 0x0d, 0x00, 0x0b)
	}
	callBody = append(appendS64(append(callBody, 0x42), int64(uint64(answerOffset)<<32|uint64(len(m.answer)))), 0x0b)

	export := func(dst []byte, name string, kind byte, idx uint32) []byte {
		return wasmbin.AppendU32(append(wasmbin.AppendName(dst, name), kind), idx)
	}
	exports := []byte{5}
	if m.wrongIdle {
		exports = []byte{6}
		exports = export(exports, abi.ExportIdle, 0x00, first+1)
	}
	exports = export(exports, abi.ExportMemory, 0x02, 0)
	exports = export(exports, abi.ExportInitialize, 0x00, first)
	exports = export(exports, abi.ExportABIVersion, 0x00, first+1)
	exports = export(exports, abi.ExportRequestBuffer, 0x00, first+2)
	exports = export(exports, abi.ExportCall, 0x00, first+3)

	code := []byte{4}
	for _, body := range [][]byte{m.init, m.version, reqBody, callBody} {
		code = append(wasmbin.AppendU32(code, uint32(len(body))), body...)
	}
	data := append(appendS64([]byte{1, 0x00, 0x41}, int64(answerOffset)), 0x0b)
	data = append(wasmbin.AppendU32(data, uint32(len(m.answer)+len(m.message))), m.answer...)
	data = append(data, m.message...)

	sections := []wasmbin.Section{
		// () -> (), () -> i32, (i32) -> i32, (i32, i32) -> i64, (i32, i32, i32) -> ()
		{ID: wasmbin.SectionType, Payload: []byte{5, 0x60, 0, 0, 0x60, 0, 1, 0x7f, 0x60, 1, 0x7f, 1, 0x7f, 0x60, 2, 0x7f, 0x7f, 1, 0x7e, 0x60, 3, 0x7f, 0x7f, 0x7f, 0}},
	}
	if m.logs > 0 {
		imp := wasmbin.AppendName(wasmbin.AppendName([]byte{1}, abi.HostModule), abi.HostLog)
		sections = append(sections, wasmbin.Section{ID: wasmbin.SectionImport, Payload: append(imp, 0x00, 4)})
	}
	sections = append(sections,
		wasmbin.Section{ID: wasmbin.SectionFunction, Payload: []byte{4, 0, 1, 2, 3}},
		wasmbin.Section{ID: wasmbin.SectionMemory, Payload: wasmbin.AppendU32([]byte{1, 0x00}, uint32(pages))},
		wasmbin.Section{ID: wasmbin.SectionExport, Payload: exports})
	if m.start {
		sections = append(sections, wasmbin.Section{ID: wasmbin.SectionStart, Payload: []byte{byte(first)}})
	}
	sections = append(sections,
		wasmbin.Section{ID: wasmbin.SectionCode, Payload: code},
		wasmbin.Section{ID: wasmbin.SectionData, Payload: data})
	return wasmbin.Encode(sections, len(m.answer)+512)
}

// appendS64 appends v in signed LEB128.
func appendS64(dst []byte, v int64) []byte {
	for {
		b := byte(v & 0x7f)
		v >>= 7
		if v == 0 && b&0x40 == 0 || v == -1 && b&0x40 != 0 {
			return append(dst, b)
		}
		dst = append(dst, b|0x80)
	}
}
