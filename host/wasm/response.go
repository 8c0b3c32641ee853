package wasm

import (
	"fmt"
	"strconv"
	"unicode/utf8"

	"google.golang.org/protobuf/reflect/protoreflect"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// Bounds every answer is held to before anything reads it (see
// docs/security.md). What a field may hold beyond them (a cpuset within the
// node, an annotation key the API server takes) is host/validate's concern.
const (
	// DefaultResponseLimit caps the encoded size of one Response. The largest
	// real answers (Synchronize or Init on a node with thousands of
	// containers) stay well under 1 MiB.
	DefaultResponseLimit = 4 << 20
	// MaxResponseString caps every string of a Response, a map key or value
	// included: the Kubernetes API takes at most 256 KiB of annotations per
	// object, the largest string the host passes on.
	MaxResponseString = 256 << 10
	// maxResponseDepth caps message nesting; the ABI nests a few levels.
	maxResponseDepth = 32
)

// checkResponse refuses a decoded Response whose strings are not valid UTF-8
// or longer than MaxResponseString, or whose enum fields hold a number the
// ABI does not define; the error names the field by its path.
//
// It walks the answer by reflection, except for ContainerUpdate, the message
// an answer holds hundreds of (checkUpdate), and builds a field's path only
// for an error: a check that passes allocates per message, not per string.
func checkResponse(resp *abi.Response) error {
	return checkMessage(resp.ProtoReflect(), "response", 0)
}

func checkMessage(m protoreflect.Message, path string, depth int) error {
	if depth > maxResponseDepth {
		return fmt.Errorf("%s: nested deeper than %d messages", path, maxResponseDepth)
	}
	if u, ok := m.Interface().(*abi.ContainerUpdate); ok {
		return checkUpdate(u, path)
	}
	var err error
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len() && err == nil; i++ {
				err = checkValue(fd, l.Get(i), fieldAt{path, fd.Name(), i}, depth)
			}
		case fd.IsMap():
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				at := fmt.Sprintf("%s.%s[%q]", path, fd.Name(), truncate(k.String()))
				if err = checkValue(fd.MapKey(), k.Value(), fieldAt{path: at + " (key)", index: -1}, depth); err == nil {
					err = checkValue(fd.MapValue(), mv, fieldAt{path: at, index: -1}, depth)
				}
				return err == nil
			})
		default:
			err = checkValue(fd, v, fieldAt{path, fd.Name(), -1}, depth)
		}
		return err == nil
	})
	return err
}

// fieldAt is a field's place in the answer: the path of its message, its
// name (none for a map value, whose path is complete), and its index in a
// list (-1 if none). String renders it, for an error or a nested message.
type fieldAt struct {
	path  string
	name  protoreflect.Name
	index int
}

func (f fieldAt) String() string {
	s := f.path
	if f.name != "" {
		s += "." + string(f.name)
	}
	if f.index >= 0 {
		s += "[" + strconv.Itoa(f.index) + "]"
	}
	return s
}

func checkValue(fd protoreflect.FieldDescriptor, v protoreflect.Value, at fieldAt, depth int) error {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return checkString(v.String(), at)
	case protoreflect.EnumKind:
		if fd.Enum().Values().ByNumber(v.Enum()) == nil {
			return fmt.Errorf("%s: %d is not a value of %s", at, v.Enum(), fd.Enum().FullName())
		}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return checkMessage(v.Message(), at.String(), depth+1)
	}
	return nil
}

// checkString holds s to MaxResponseString and UTF-8; at names it in the
// error, rendered only then.
func checkString(s string, at fieldAt) error {
	if len(s) > MaxResponseString {
		return fmt.Errorf("%s: %d bytes, more than the limit of %d", at, len(s), MaxResponseString)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s: %q is not valid UTF-8", at, truncate(s))
	}
	return nil
}

// checkUpdate is checkMessage for a ContainerUpdate, without reflection:
// reading a string through protoreflect allocates, and a grouped answer for a
// large balloon holds hundreds of ids. Every field of ContainerUpdate is a
// string (TestCheckUpdateCoversEveryField keeps this in step with the ABI).
func checkUpdate(u *abi.ContainerUpdate, path string) error {
	for _, f := range [...]struct {
		name protoreflect.Name
		s    string
	}{
		{"container_id", u.ContainerId}, {"cpuset_cpus", u.CpusetCpus}, {"cpuset_mems", u.CpusetMems},
		{"rdt_class", u.RdtClass}, {"blockio_class", u.BlockioClass},
	} {
		if err := checkString(f.s, fieldAt{path, f.name, -1}); err != nil {
			return err
		}
	}
	for i, id := range u.AlsoContainerIds {
		if err := checkString(id, fieldAt{path, "also_container_ids", i}); err != nil {
			return err
		}
	}
	return nil
}

// truncate shortens s for an error message.
func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
