package config

import (
	"os"
	"strings"
	"testing"
)

// TestREADMECoversEveryField keeps the reference in README.md in step with Config.
func TestREADMECoversEveryField(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range allFields() {
		t.Run(f, func(t *testing.T) {
			if !strings.Contains(string(readme), "`"+f+"`") {
				t.Fatalf("README.md does not document `%s`", f)
			}
		})
	}
}
