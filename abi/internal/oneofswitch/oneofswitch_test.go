package oneofswitch

import (
	"strings"
	"testing"
)

// generated is the shape protoc-gen-go-lite writes for a message with one
// oneof of two members (and a plain message beside it).
const generated = `package v1

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
	if n != 2 {
		t.Errorf("rewrote %d statements, want 2 (SizeVT and MarshalToSizedBufferVT)", n)
	}
	got := string(out)
	for _, want := range []string{
		"switch vtmsg := m.Choice.(type) {\n\tcase *Msg_A:\n\t\tn += vtmsg.SizeVT()\n\tcase *Msg_B:\n\t\tn += vtmsg.SizeVT()\n\t}",
		"case *Msg_B:\n\t\tsize, err := vtmsg.MarshalToSizedBufferVT(dAtA[:i])",
		// Not a method of a message: left as written.
		"if v, ok := x.(interface{ SizeVT() int }); ok {",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("rewritten source lacks\n%s\n--- got:\n%s", want, got)
		}
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
