package guestcodec

import (
	"strings"
	"testing"
)

// generated is the shape protoc-gen-go-lite writes for a message with one
// oneof of two members (and a plain message beside it).
const generated = `package v1

import (
	fmt "fmt"
	io "io"
)

var _ = io.EOF

type Msg struct {
	unknownFields []byte
	Choice isMsg_Choice
	Plain  *Other
}

type isMsg_Choice interface {
	isMsg_Choice()
}

type Msg_A struct{ A *Other }
type Msg_B struct{ B string }

func (*Msg_B) isMsg_Choice() {}
func (*Msg_A) isMsg_Choice() {}

type Other struct{}

func (m *Other) SizeVT() int { return 0 }
func (m *Msg_A) SizeVT() int { return 1 }
func (m *Msg_B) SizeVT() int { return 2 }

func (m *Msg) SizeVT() (n int) {
	if vtmsg, ok := m.Choice.(interface{ SizeVT() int }); ok {
		n += vtmsg.SizeVT()
	}
	n += m.Plain.SizeVT()
	return n
}

func (m *Msg) MarshalToSizedBufferVT(dAtA []byte) (int, error) {
	i := len(dAtA)
	if vtmsg, ok := m.Choice.(interface {
		MarshalToSizedBufferVT([]byte) (int, error)
	}); ok {
		size, err := vtmsg.MarshalToSizedBufferVT(dAtA[:i])
		if err != nil {
			return 0, err
		}
		i -= size
	}
	return len(dAtA) - i, nil
}

func (m *Msg) UnmarshalVT(dAtA []byte) error {
	var wire uint64
	fieldNum := int32(wire >> 3)
	wireType := int(wire & 0x7)
	if wireType == 4 {
		return fmt.Errorf("proto: Msg: wiretype end group for non-group")
	}
	if fieldNum <= 0 {
		return fmt.Errorf("proto: Msg: illegal tag %d (wire type %d)", fieldNum, wire)
	}
	if wireType != 2 {
		return fmt.Errorf("proto: wrong wireType = %d for field Plain", wireType)
	}
	return nil
}

func helper(x any) int {
	if v, ok := x.(interface{ SizeVT() int }); ok {
		return v.SizeVT()
	}
	return 0
}
`

func TestRewriteTurnsOneofAssertionsIntoSwitches(t *testing.T) {
	out, n, err := Rewrite("msg_lite.pb.go", []byte(generated))
	if err != nil {
		t.Fatal(err)
	}
	if n != 5 {
		t.Errorf("rewrote %d statements and calls, want 5 (SizeVT, MarshalToSizedBufferVT, three errors)", n)
	}
	got := string(out)
	for _, want := range []string{
		"switch vtmsg := m.Choice.(type) {\n\tcase *Msg_A:\n\t\tn += vtmsg.SizeVT()\n\tcase *Msg_B:\n\t\tn += vtmsg.SizeVT()\n\t}",
		"case *Msg_B:\n\t\tsize, err := vtmsg.MarshalToSizedBufferVT(dAtA[:i])",
		// Not a method of a message: left as written.
		"if v, ok := x.(interface{ SizeVT() int }); ok {",
		`return errEndGroup("Msg")`,
		`return errIllegalTag("Msg", fieldNum, wire)`,
		`return errWrongWireType("Plain", wireType)`,
		"import (\n\tio \"io\"\n)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("rewritten source lacks\n%s\n--- got:\n%s", want, got)
		}
	}
	if strings.Contains(got, "fmt") {
		t.Errorf("fmt is left, though nothing uses it now:\n%s", got)
	}
	if strings.Count(got, "m.Choice.(interface") != 0 {
		t.Errorf("an interface assertion on the oneof is left:\n%s", got)
	}
	again, n, err := Rewrite("msg_lite.pb.go", out)
	if err != nil || n != 0 || string(again) != got {
		t.Errorf("a second Rewrite changed %d statements (err %v); want none", n, err)
	}
}

func TestRewriteRefusesWhatItCannotDispatch(t *testing.T) {
	for name, src := range map[string]string{
		"not a oneof field": strings.Replace(generated, "m.Choice.(interface{ SizeVT", "m.Plain2.(interface{ SizeVT", 1),
		"no member types": strings.NewReplacer("func (*Msg_B) isMsg_Choice() {}", "",
			"func (*Msg_A) isMsg_Choice() {}", "").Replace(generated),
		"not Go": "package v1\nfunc (",
	} {
		t.Run(name, func(t *testing.T) {
			if _, _, err := Rewrite("msg_lite.pb.go", []byte(src)); err == nil {
				t.Error("Rewrite accepted it")
			}
		})
	}
}

func TestRewriteKeepsFmtWhileUsed(t *testing.T) {
	src := generated + "\nfunc other() error { return fmt.Errorf(\"proto: something else %d\", 1) }\n"
	out, n, err := Rewrite("msg_lite.pb.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	if n != 5 || !strings.Contains(got, `fmt "fmt"`) || !strings.Contains(got, `fmt.Errorf("proto: something else %d", 1)`) {
		t.Errorf("rewrote %d (want 5) and lost the fmt import or the other error:\n%s", n, got)
	}
}
