//go:build integration

package kubeapi

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// BinEnv names the directory .ci/kube-deps builds into.
const BinEnv = "NRIWASM_INTEGRATION_BIN"

type binaries struct {
	apiserver, etcd string
}

// binDir returns $NRIWASM_INTEGRATION_BIN (absolute) or
// $HOME/.cache/nriwasm-integration/bin, as .ci/kube-deps does.
func binDir() (string, error) {
	if d := os.Getenv(BinEnv); d != "" {
		if !filepath.IsAbs(d) {
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
	dir, err := binDir()
	if err != nil {
		return binaries{}, err
	}
	b := binaries{apiserver: filepath.Join(dir, "kube-apiserver"), etcd: filepath.Join(dir, "etcd")}
	var errs []error
	for _, p := range []string{b.apiserver, b.etcd} {
		fi, err := os.Stat(p)
		switch {
		case err != nil:
			errs = append(errs, err)
		case fi.IsDir() || fi.Mode()&0o111 == 0:
			errs = append(errs, fmt.Errorf("%s is not an executable file", p))
		}
	}
	if len(errs) > 0 {
		return binaries{}, fmt.Errorf("kube-apiserver and etcd missing (run .ci/kube-deps): %w", errors.Join(errs...))
	}
	return b, nil
}
