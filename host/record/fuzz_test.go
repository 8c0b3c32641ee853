package record

import (
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// FuzzParseFile feeds arbitrary bytes to the record file reader (simulate
// --replay reads files a user hands it): it must return a File or an error,
// never panic, and what it reads must encode and read back the same.
func FuzzParseFile(f *testing.F) {
	header, err := encodeHeader(&Header{
		NodeName: "node-1", Policy: "topology-aware", Config: []byte("reservedResources: {cpu: 750m}"),
		Topology: &abi.Topology{Cpus: []*abi.CPU{{Id: 0}, {Id: 1, CoreId: 1}}},
		Restore:  &abi.RestoreState{}, Seq: 3, DriverName: "cpu.nriwasm.io",
	})
	if err != nil {
		f.Fatal(err)
	}
	exchange, err := encodeExchange(&Exchange{
		Seq: 4, Method: abi.Method_METHOD_CREATE_CONTAINER, Request: []byte{0x0a, 0x00},
		Response: &abi.Response{},
	})
	if err != nil {
		f.Fatal(err)
	}
	failed, err := encodeExchange(&Exchange{Seq: 5, Method: abi.Method_METHOD_STOP_CONTAINER, Error: "deadline exceeded"})
	if err != nil {
		f.Fatal(err)
	}
	whole := append(append(append([]byte(nil), header...), exchange...), failed...)
	f.Add(whole)
	f.Add(whole[:len(whole)-3])
	f.Add(header)
	f.Add(exchange)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := parseFile("fuzz.nrr", data)
		if err != nil {
			return
		}
		again := encodeFile(t, got)
		back, err := parseFile("again.nrr", again)
		if err != nil {
			t.Fatalf("a file read back does not read again: %v", err)
		}
		if len(back.Exchanges) != len(got.Exchanges) || back.Header.Seq != got.Header.Seq || back.Header.Policy != got.Header.Policy {
			t.Fatalf("read back %d exchanges (header seq %d, policy %q), first read %d (seq %d, policy %q)",
				len(back.Exchanges), back.Header.Seq, back.Header.Policy, len(got.Exchanges), got.Header.Seq, got.Header.Policy)
		}
	})
}

func encodeFile(t *testing.T, f *File) []byte {
	t.Helper()
	out, err := encodeHeader(f.Header)
	if err != nil {
		t.Fatalf("encode header: %v", err)
	}
	for _, x := range f.Exchanges {
		b, err := encodeExchange(x)
		if err != nil {
			t.Fatalf("encode exchange %d: %v", x.Seq, err)
		}
		out = append(out, b...)
	}
	return out
}
