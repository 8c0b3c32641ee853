package policy_test

import (
	"strings"
	"testing"

	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

func TestDescriptionValidate(t *testing.T) {
	tests := []struct {
		name    string
		desc    policy.Description
		wantErr string // "" means valid
	}{
		{"simple", policy.Description{Name: "conformance", Version: "1.0.0"}, ""},
		{"with dash and digits", policy.Description{Name: "topology-aware2", Version: "0.1.0"}, ""},
		{"single char", policy.Description{Name: "a", Version: "1"}, ""},
		{"leading digit", policy.Description{Name: "0x", Version: "1"}, ""},
		{"63 chars", policy.Description{Name: strings.Repeat("a", 63), Version: "1"}, ""},
		{"empty summary allowed", policy.Description{Name: "p", Version: "1", Summary: ""}, ""},
		{"empty name", policy.Description{Name: "", Version: "1"}, "DNS label"},
		{"uppercase", policy.Description{Name: "Topology", Version: "1"}, "DNS label"},
		{"64 chars", policy.Description{Name: strings.Repeat("a", 64), Version: "1"}, "DNS label"},
		{"leading dash", policy.Description{Name: "-p", Version: "1"}, "DNS label"},
		{"trailing dash", policy.Description{Name: "p-", Version: "1"}, "DNS label"},
		{"dot", policy.Description{Name: "a.b", Version: "1"}, "DNS label"},
		{"underscore", policy.Description{Name: "a_b", Version: "1"}, "DNS label"},
		{"space", policy.Description{Name: "a b", Version: "1"}, "DNS label"},
		{"lone dash", policy.Description{Name: "-", Version: "1"}, "DNS label"},
		{"non-ASCII", policy.Description{Name: "pé", Version: "1"}, "DNS label"},
		{"inner dashes", policy.Description{Name: "a--b", Version: "1"}, ""},
		{"empty version", policy.Description{Name: "p", Version: ""}, "version must not be empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.desc.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tt.wantErr != "" && err == nil:
				t.Errorf("Validate() = nil, want an error containing %q", tt.wantErr)
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Errorf("Validate() = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

// TestEmbeddedDescription: a type embedding its Description is a Policy
// that describes itself with it.
func TestEmbeddedDescription(t *testing.T) {
	want := policy.Description{Name: "embedded", Version: "0.1.0", Summary: "describes itself"}
	var p policy.Policy = struct{ policy.Description }{want}
	if got := p.Describe(); got != want {
		t.Errorf("Describe() = %+v, want %+v", got, want)
	}
}
