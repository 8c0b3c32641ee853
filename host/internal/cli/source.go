package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/nriwasm/nriwasm/policies/builtin"
)

// readPolicy returns a policy module named by a built-in name or a .wasm path,
// and the name to call it by.
func readPolicy(ref string) (name string, module []byte, err error) {
	if !strings.HasSuffix(ref, ".wasm") && !strings.ContainsRune(ref, os.PathSeparator) {
		module, ok := builtin.Module(ref)
		if !ok {
			return "", nil, fmt.Errorf("policy %q: not a built-in policy (built in: %s) nor a .wasm path", ref, strings.Join(builtin.Names(), ", "))
		}
		return ref, module, nil
	}
	module, err = os.ReadFile(ref)
	if err != nil {
		return "", nil, fmt.Errorf("read policy: %w", err)
	}
	return strings.TrimSuffix(ref[strings.LastIndexByte(ref, os.PathSeparator)+1:], ".wasm"), module, nil
}
