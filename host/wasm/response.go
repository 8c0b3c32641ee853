package wasm

import (
	"fmt"
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
func checkResponse(resp *abi.Response) error {
	return checkMessage(resp.ProtoReflect(), "response", 0)
}

func checkMessage(m protoreflect.Message, path string, depth int) error {
	if depth > maxResponseDepth {
		return fmt.Errorf("%s: nested deeper than %d messages", path, maxResponseDepth)
	}
	var err error
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		field := path + "." + string(fd.Name())
		switch {
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len() && err == nil; i++ {
				err = checkValue(fd, l.Get(i), fmt.Sprintf("%s[%d]", field, i), depth)
			}
		case fd.IsMap():
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				at := fmt.Sprintf("%s[%q]", field, truncate(k.String()))
				if err = checkValue(fd.MapKey(), k.Value(), at+" (key)", depth); err == nil {
					err = checkValue(fd.MapValue(), mv, at, depth)
				}
				return err == nil
			})
		default:
			err = checkValue(fd, v, field, depth)
		}
		return err == nil
	})
	return err
}

func checkValue(fd protoreflect.FieldDescriptor, v protoreflect.Value, field string, depth int) error {
	switch fd.Kind() {
	case protoreflect.StringKind:
		s := v.String()
		if len(s) > MaxResponseString {
			return fmt.Errorf("%s: %d bytes, more than the limit of %d", field, len(s), MaxResponseString)
		}
		if !utf8.ValidString(s) {
			return fmt.Errorf("%s: %q is not valid UTF-8", field, truncate(s))
		}
	case protoreflect.EnumKind:
		if fd.Enum().Values().ByNumber(v.Enum()) == nil {
			return fmt.Errorf("%s: %d is not a value of %s", field, v.Enum(), fd.Enum().FullName())
		}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return checkMessage(v.Message(), field, depth+1)
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
