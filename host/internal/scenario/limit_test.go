package scenario

import (
	"strings"
	"testing"
)

// TestParseTooLarge: a scenario over MaxFileBytes is refused before it is
// decoded, and the error says the limit.
func TestParseTooLarge(t *testing.T) {
	data := []byte("steps:\n- init: {}\n" + strings.Repeat("# padding\n", MaxFileBytes/10+1))
	_, err := Parse(data)
	if err == nil || !strings.Contains(err.Error(), "over the limit of 1048576 bytes") {
		t.Fatalf("Parse error = %v, want the size limit", err)
	}
}
