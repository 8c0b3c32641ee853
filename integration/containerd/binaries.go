//go:build integration

package containerd

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// BinEnv names the directory .ci/integration-deps installs into.
const BinEnv = "NRIWASM_INTEGRATION_BIN"

// binaries are the absolute paths of the programs the harness runs.
type binaries struct {
	dir        string // containerd, ctr, containerd-shim-runc-v2 (put first on containerd's PATH)
	containerd string
	ctr        string
	runc       string
	busybox    string
}

// BinDir returns $NRIWASM_INTEGRATION_BIN (absolute) or
// $HOME/.cache/nriwasm-integration/bin.
func BinDir() (string, error) {
	if d := os.Getenv(BinEnv); d != "" {
		if !filepath.IsAbs(d) {
			// go test runs in the package directory: a relative path
			// would not mean what .ci/integration-deps made of it.
			return "", fmt.Errorf("%s=%q must be an absolute path", BinEnv, d)
		}
		return d, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("locating the integration binaries: %w", err)
	}
	return filepath.Join(home, ".cache", "nriwasm-integration", "bin"), nil
}

func findBinaries() (binaries, error) {
	dir, err := BinDir()
	if err != nil {
		return binaries{}, err
	}
	b := binaries{
		dir:        dir,
		containerd: filepath.Join(dir, "containerd"),
		ctr:        filepath.Join(dir, "ctr"),
		busybox:    "/bin/busybox",
	}
	var errs []error
	for _, p := range []string{b.containerd, b.ctr, filepath.Join(dir, "containerd-shim-runc-v2"), b.busybox} {
		if err := executable(p); err != nil {
			errs = append(errs, err)
		}
	}
	if b.runc, err = exec.LookPath("runc"); err != nil {
		errs = append(errs, fmt.Errorf("runc: %w", err))
	}
	if len(errs) > 0 {
		return binaries{}, fmt.Errorf("integration binaries missing (run .ci/integration-deps): %w", errors.Join(errs...))
	}
	return b, nil
}

func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", p)
	}
	return nil
}
