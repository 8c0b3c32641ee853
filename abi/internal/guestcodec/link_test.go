package guestcodec

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/nriwasm/nriwasm/internal/wasmsize"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// reachable adds m and every message its fields hold.
func reachable(m protoreflect.MessageDescriptor, seen map[protoreflect.FullName]bool) {
	if seen[m.FullName()] {
		return
	}
	seen[m.FullName()] = true
	fields := m.Fields()
	for i := range fields.Len() {
		if sub := fields.Get(i).Message(); sub != nil {
			reachable(sub, seen)
		}
	}
}

// TestGuestLinksNoRequestEncoder builds the conformance guest and fails if
// it holds SizeVT or MarshalToSizedBufferVT of a message that only travels
// from the host to the guest (reached from a request, never from Response):
// the SDK only decodes those, and the rewritten oneofs leave the linker no
// dynamic call that would keep their encoders.
func TestGuestLinksNoRequestEncoder(t *testing.T) {
	msgs := abiMessages(t)
	requests, responses := map[protoreflect.FullName]bool{}, map[protoreflect.FullName]bool{}
	for n, d := range msgs {
		switch {
		case n == "Response":
			reachable(d, responses)
		case strings.HasSuffix(n, "Request"):
			reachable(d, requests)
		}
	}
	var requestOnly []string // Go type names
	for n, d := range msgs {
		if requests[d.FullName()] && !responses[d.FullName()] {
			requestOnly = append(requestOnly, n)
		}
	}
	if len(requestOnly) < 20 {
		t.Fatalf("only %d request-only messages (%v): the walk is wrong", len(requestOnly), requestOnly)
	}

	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := wasmsize.BuildGo(root, "./sdk/go/conformance/cmd/conformance", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	linked := map[string]int{}
	for _, f := range rep.FunctionsIn("github.com/nriwasm/nriwasm/abi/v1") {
		linked[f.Name] = f.CodeBytes
	}
	decoders := 0
	for _, n := range requestOnly {
		if _, ok := linked["github.com_nriwasm_nriwasm_abi_v1.__"+n+"_.UnmarshalVTUnsafe"]; ok {
			decoders++
		}
		for _, method := range []string{"SizeVT", "MarshalToSizedBufferVT"} {
			if size, ok := linked["github.com_nriwasm_nriwasm_abi_v1.__"+n+"_."+method]; ok {
				t.Errorf("the guest links (*%s).%s (%d bytes), an encoder of a message it only decodes", n, method, size)
			}
		}
	}
	if decoders == 0 {
		t.Fatalf("no request decoder found in the module: the names are not what the test expects")
	}
}
