package wasm

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// groupedAnswer is a CreateContainer answer as a large balloon's resize gives
// it: a plain update, then one grouped update for n more containers.
func groupedAnswer(n int) *abi.Response {
	also := make([]string, n)
	for i := range also {
		also[i] = strings.Repeat("c", 60) + string(rune('a'+i%26))
	}
	return &abi.Response{Result: &abi.Response_CreateContainer{CreateContainer: &abi.CreateContainerResponse{
		Adjustment: &abi.ContainerAdjustment{CpusetCpus: "0-3", CpusetMems: "0"},
		Updates: []*abi.ContainerUpdate{
			{ContainerId: "first", CpusetCpus: "4-7"},
			{ContainerId: "head", CpusetCpus: "0-1000", CpusetMems: "0-3", AlsoContainerIds: also},
		},
	}}}
}

// TestCheckUpdateCoversEveryField: checkUpdate reads ContainerUpdate's fields
// without reflection, so a field the ABI adds must be added there too. For
// every field the descriptor lists, an invalid value in the second update is
// refused with the field's path.
func TestCheckUpdateCoversEveryField(t *testing.T) {
	fields := (*abi.ContainerUpdate)(nil).ProtoReflect().Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		t.Run(string(fd.Name()), func(t *testing.T) {
			if fd.Kind() != protoreflect.StringKind {
				t.Fatalf("field %s is a %v: checkUpdate checks strings only", fd.Name(), fd.Kind())
			}
			resp := groupedAnswer(3)
			u := resp.GetCreateContainer().Updates[1].ProtoReflect()
			want := "response.create_container.updates[1]." + string(fd.Name())
			if fd.IsList() {
				u.Mutable(fd).List().Set(2, protoreflect.ValueOfString("bad\xff"))
				want += "[2]"
			} else {
				u.Set(fd, protoreflect.ValueOfString("bad\xff"))
			}
			err := checkResponse(resp)
			if err == nil || !strings.Contains(err.Error(), want+`: "bad\xff" is not valid UTF-8`) {
				t.Fatalf("checkResponse = %v, want the invalid UTF-8 of %s", err, want)
			}
			if fd.IsList() {
				u.Mutable(fd).List().Set(2, protoreflect.ValueOfString(strings.Repeat("x", MaxResponseString+1)))
			} else {
				u.Set(fd, protoreflect.ValueOfString(strings.Repeat("x", MaxResponseString+1)))
			}
			if err := checkResponse(resp); err == nil || !strings.Contains(err.Error(), want+": 262145 bytes, more than the limit") {
				t.Fatalf("checkResponse = %v, want %s over the limit", err, want)
			}
		})
	}
}

// TestCheckResponseAllocations: checking an answer allocates per message it
// walks by reflection, not per update or id: a group of 400 ids costs what
// a group of 4 does. (Every string read through protoreflect, and every path
// built before it was needed, used to allocate: ~1,400 allocations for the
// default balloon's create and remove.)
func TestCheckResponseAllocations(t *testing.T) {
	small, large := groupedAnswer(4), groupedAnswer(400)
	for _, r := range []*abi.Response{small, large} {
		if err := checkResponse(r); err != nil {
			t.Fatal(err)
		}
	}
	a := testing.AllocsPerRun(20, func() { _ = checkResponse(small) })
	b := testing.AllocsPerRun(20, func() { _ = checkResponse(large) })
	if b != a || b > 16 {
		t.Fatalf("checkResponse allocates %v times for 4 grouped ids and %v for 400, want the same few", a, b)
	}
}

// BenchmarkCheckResponse checks an answer with a group of 200 ids, the
// default balloon's size in BenchmarkCreateRemove4096.
func BenchmarkCheckResponse(b *testing.B) {
	r := groupedAnswer(200)
	b.ReportAllocs()
	for range b.N {
		if err := checkResponse(r); err != nil {
			b.Fatal(err)
		}
	}
}
