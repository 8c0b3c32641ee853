// Package policy is the Go SDK for writing nriwasm policies: a Policy value, the
// optional handler interfaces it implements (one per ABI call), Register, the
// Wasm exports and a leveled logger over the host's import.
//
// A policy is a main package built for wasip1 as a reactor:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o my.wasm ./cmd/my
//
// whose init function registers the policy value (main is never run):
//
//	func init() { policy.Register(&myPolicy{}) }
//	func main() {}
//
// Each call the policy does not implement answers an empty response, so a policy
// implements only what it cares about. The same value runs natively, through the
// same encode and decode path, with the sdk/go/native runner.
package policy

import (
	"fmt"
)

// SDKName names this SDK in PolicyMetadata.sdk.
const SDKName = "nriwasm-go/0.1.0"

// Description says who a policy is.
type Description struct {
	// Name is a DNS label ("topology-aware"); it names the policy's DRA driver.
	Name string
	// Version is the policy's own semantic version, without a leading "v".
	Version string
	// Summary is one line that says what the policy does.
	Summary string
}

// Describe returns d, so that a policy type embedding its Description
// answers Describe with it:
//
//	type Policy struct {
//		policy.Description
//		st *state
//	}
//
//	func New() *Policy {
//		return &Policy{Description: policy.Description{Name: "my-policy", Version: "0.1.0", Summary: "..."}}
//	}
func (d Description) Describe() Description { return d }

// Policy is what every policy implements. The handler interfaces in handlers.go
// add the calls it serves.
type Policy interface {
	Describe() Description
}

// isDNSLabel reports whether s is an RFC 1123 label: 1–63 lower-case
// alphanumerics or '-', starting and ending with an alphanumeric. Written out
// rather than as a regexp: package regexp adds ~0.4 MB to every Go guest.
func isDNSLabel(s string) bool {
	if len(s) == 0 || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

// Validate checks a Description's shape.
func (d Description) Validate() error {
	if !isDNSLabel(d.Name) {
		return fmt.Errorf("policy name %q: must be a DNS label (lower-case alphanumerics and '-', at most 63 characters)", d.Name)
	}
	if d.Version == "" {
		return fmt.Errorf("policy %q: version must not be empty", d.Name)
	}
	return nil
}

// registered is the dispatcher the Wasm exports serve.
var registered *Dispatcher

// Register makes p the policy this module serves. Call it from an init function
// of the main package. It panics on an invalid Description, so a misbuilt module
// fails at load time with the reason in its output.
func Register(p Policy) {
	d, err := NewDispatcher(p)
	if err != nil {
		panic(err)
	}
	registered = d
}

// Registered returns the dispatcher Register installed, nil before Register. The
// Wasm exports serve it; a native test of a policy's main package can drive it.
func Registered() *Dispatcher { return registered }
