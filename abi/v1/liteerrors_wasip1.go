package v1

import "fmt"

// The decode errors of the guest's codec (*_lite.pb.go), one constructor per
// kind: abi/internal/guestcodec rewrites protoc-gen-go-lite's in-place
// fmt.Errorf calls into these, which format the same text, so that each of
// the decoders' 850 error sites is a call with a constant rather than its own
// boxing and formatting code (abi/RATIONALE.md, "Why is the guest's codec
// rewritten?").

// errWrongWireType is a field of message's decoder read with another wire
// type than its own.
func errWrongWireType(field string, wireType int) error {
	return fmt.Errorf("proto: wrong wireType = %d for field %s", wireType, field)
}

// errEndGroup is an end-group tag, which proto3 has no use for.
func errEndGroup(message string) error {
	return fmt.Errorf("proto: %s: wiretype end group for non-group", message)
}

// errIllegalTag is a field number of 0 or less.
func errIllegalTag(message string, fieldNum int32, wire uint64) error {
	return fmt.Errorf("proto: %s: illegal tag %d (wire type %d)", message, fieldNum, wire)
}
