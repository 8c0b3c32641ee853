package guestcodec

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// abiMessages is every message of package abi.v1 (map entries excluded),
// by the name both codecs give its Go type ("Container", "NUMANode_...").
func abiMessages(t *testing.T) map[string]protoreflect.MessageDescriptor {
	t.Helper()
	_ = abi.Response{} // the host's files register abi.v1's descriptors
	out := map[string]protoreflect.MessageDescriptor{}
	var add func(prefix string, ms protoreflect.MessageDescriptors)
	add = func(prefix string, ms protoreflect.MessageDescriptors) {
		for i := range ms.Len() {
			m := ms.Get(i)
			if m.IsMapEntry() {
				continue
			}
			name := prefix + string(m.Name())
			out[name] = m
			add(name+"_", m.Messages())
		}
	}
	protoregistry.GlobalFiles.RangeFilesByPackage("abi.v1", func(fd protoreflect.FileDescriptor) bool {
		add("", fd.Messages())
		return true
	})
	if len(out) < 50 {
		t.Fatalf("found %d abi.v1 messages; the host's descriptors did not register", len(out))
	}
	return out
}

// roundTrip is the test that runs in the package built from the guest's
// generated files (abi/v1/*_lite.pb.go without their wasip1 constraint): for
// every message, random values encoded by the host's codec are decoded by the
// guest's (UnmarshalVT and UnmarshalVTUnsafe), encoded again by the guest's
// (SizeVT, MarshalVT) and decoded by the host's, which must give the value
// it started from; the same bytes with one byte damaged are refused by both
// codecs with the same error, or accepted by both.
const roundTrip = `package v1

import (
	"math/rand/v2"
	"strings"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/abi/internal/guestcodec/wirefill"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

type guestMessage interface {
	UnmarshalVT([]byte) error
	UnmarshalVTUnsafe([]byte) error
	MarshalVT() ([]byte, error)
	SizeVT() int
}

// guestTypes is every message: its full name and its guest type.
var guestTypes = []struct {
	name     protoreflect.FullName
	newGuest func() guestMessage
}{
%s}

// rewritten is an error of the kinds abi/internal/guestcodec rewrites.
func rewritten(err error) bool {
	if err == nil {
		return false
	}
	m := err.Error()
	return strings.HasPrefix(m, "proto: wrong wireType = ") || strings.Contains(m, ": illegal tag ") ||
		strings.HasSuffix(m, ": wiretype end group for non-group")
}

func TestGuestCodecAgreesWithHost(t *testing.T) {
	_ = abi.Response{}
	rng := rand.New(rand.NewPCG(19, 2026))
	damaged := 0
	defer func() {
		if damaged < 100 {
			t.Errorf("only %%d damaged encodings met a rewritten decode error; want 100 or more", damaged)
		}
	}()
	for _, gt := range guestTypes {
		name, newGuest := gt.name, gt.newGuest
		mt, err := protoregistry.GlobalTypes.FindMessageByName(name)
		if err != nil {
			t.Fatalf("%%s: %%v", name, err)
		}
		for i := range %d {
			want := mt.New()
			wirefill.Fill(rng, want, 4)
			wire, err := proto.Marshal(want.Interface())
			if err != nil {
				t.Fatalf("%%s: host encode: %%v", name, err)
			}
			for _, unsafe := range []bool{false, true} {
				g := newGuest()
				decode := g.UnmarshalVT
				if unsafe {
					decode = g.UnmarshalVTUnsafe
				}
				if err := decode(append([]byte(nil), wire...)); err != nil {
					t.Fatalf("%%s #%%d: guest decode (unsafe %%t): %%v", name, i, unsafe, err)
				}
				back, err := g.MarshalVT()
				if err != nil {
					t.Fatalf("%%s #%%d: guest encode: %%v", name, i, err)
				}
				if g.SizeVT() != len(back) {
					t.Errorf("%%s #%%d: guest SizeVT %%d, encoded %%d bytes", name, i, g.SizeVT(), len(back))
				}
				got := mt.New().Interface()
				if err := proto.Unmarshal(back, got); err != nil {
					t.Fatalf("%%s #%%d: host decode of the guest's bytes: %%v", name, i, err)
				}
				if !proto.Equal(got, want.Interface()) {
					t.Fatalf("%%s #%%d (unsafe %%t): the guest's codec changed the message:\n got  %%v\n want %%v", name, i, unsafe, got, want.Interface())
				}
			}
			// Damaged bytes: where either codec refuses them with one of the
			// rewritten decode errors (a wire type, a tag), the other refuses
			// them with the same words. (The two libraries' varint checks
			// differ on a 10-byte varint that overflows: vtprotobuf
			// accepts it, protobuf-go-lite refuses it; not compared.)
			if len(wire) == 0 {
				continue
			}
			bad := append([]byte(nil), wire...)
			bad[rng.IntN(len(bad))] ^= byte(1 + rng.IntN(255))
			hostErr := mt.New().Interface().(interface{ UnmarshalVT([]byte) error }).UnmarshalVT(bad)
			guestErr := newGuest().UnmarshalVT(bad)
			if rewritten(hostErr) || rewritten(guestErr) {
				damaged++
				if hostErr == nil || guestErr == nil || hostErr.Error() != guestErr.Error() {
					t.Errorf("%%s #%%d: damaged bytes %%x: host %%v, guest %%v", name, i, bad, hostErr, guestErr)
				}
			}
		}
	}
}
`

// TestGuestCodecAgreesWithHost builds the guest's generated codec (as `make
// generate` left it, oneofs rewritten) for this machine in a package of its
// own, through `go test -overlay`, and runs roundTrip there for every
// message of the ABI.
func TestGuestCodecAgreesWithHost(t *testing.T) {
	const perMessage = 40
	msgs := abiMessages(t)
	names := make([]string, 0, len(msgs))
	for n := range msgs {
		names = append(names, n)
	}
	sort.Strings(names)
	var table strings.Builder
	for _, n := range names {
		fmt.Fprintf(&table, "\t{%q, func() guestMessage { return new(%s) }},\n", msgs[n].FullName(), n)
	}

	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	generated, err := filepath.Glob(filepath.Join(root, "abi", "v1", "*_lite.pb.go"))
	if err != nil || len(generated) == 0 {
		t.Fatalf("no guest codec files under abi/v1 (%v)", err)
	}
	// The guest-only files beside them (the decode errors' constructors).
	guestOnly, err := filepath.Glob(filepath.Join(root, "abi", "v1", "*_wasip1.go"))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	pkg := filepath.Join(root, "abi", "internal", "guestcodec", "native")
	overlay := map[string]string{}
	for _, f := range append(generated, guestOnly...) {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// A file name's _wasip1 suffix constrains it as the tag does.
		name := strings.Replace(filepath.Base(f), "_wasip1.go", "_guest.go", 1)
		native := strings.Replace(string(src), "//go:build wasip1\n", "", 1)
		if native == string(src) && name == filepath.Base(f) {
			t.Fatalf("%s: no wasip1 build constraint to lift", f)
		}
		copied := filepath.Join(tmp, name)
		if err := os.WriteFile(copied, []byte(native), 0o644); err != nil {
			t.Fatal(err)
		}
		overlay[filepath.Join(pkg, name)] = copied
	}
	test := filepath.Join(tmp, "roundtrip_test.go")
	if err := os.WriteFile(test, fmt.Appendf(nil, roundTrip, table.String(), perMessage), 0o644); err != nil {
		t.Fatal(err)
	}
	overlay[filepath.Join(pkg, "roundtrip_test.go")] = test
	ov, err := json.Marshal(map[string]any{"Replace": overlay})
	if err != nil {
		t.Fatal(err)
	}
	ovPath := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(ovPath, ov, 0o644); err != nil {
		t.Fatal(err)
	}
	// Built with -c and run here: the package's directory exists only in
	// the overlay, and a test binary starts in its package's directory.
	bin := filepath.Join(tmp, "native.test")
	build := exec.Command("go", "test", "-c", "-vet=off", "-o", bin, "-overlay", ovPath, "./abi/internal/guestcodec/native")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the guest codec for this machine: %v\n%s", err, out)
	}
	run := exec.Command(bin, "-test.count=1")
	run.Dir = tmp
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("the guest codec's round trip failed: %v\n%s", err, out)
	}
	t.Logf("%d messages, %d random values each: %s", len(names), perMessage, strings.TrimSpace(string(out)))
}
