//go:build integration && e2e

package e2e

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// AgentPackage is the agent's main package.
const AgentPackage = "github.com/nriwasm/nriwasm/host/cmd/nriwasm"

// BuildAgent compiles nriwasm as the Dockerfile does (static: CGO_ENABLED=0,
// trimmed paths, stripped) into dir and returns its path.
func BuildAgent(dir string) (string, error) {
	bin := filepath.Join(dir, "nriwasm")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, AgentPackage)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", AgentPackage, err, out)
	}
	return bin, nil
}

// SeedDir is where the agent's image carries the built-in policies' compiled
// code (nriwasm policy precompile; policy.seedDir's default).
const SeedDir = "usr/lib/nriwasm/seed"

// BuildAgentImage writes the agent's image as a docker-save tarball at out,
// named ref: the Dockerfile's layout (/usr/bin/nriwasm, the built-in
// policies' compiled-code seed in /usr/lib/nriwasm/seed written by the binary
// itself, user 0:0, entrypoint /usr/bin/nriwasm, command run) on an empty
// base instead of distroless/static — the static binary needs nothing else,
// and no registry is reachable here to pull the base from.
func BuildAgentImage(binary, ref, out string) error {
	data, err := os.ReadFile(binary)
	if err != nil {
		return fmt.Errorf("agent image: %w", err)
	}
	seed, err := os.MkdirTemp("", "nriwasm-seed-")
	if err != nil {
		return fmt.Errorf("agent image: %w", err)
	}
	defer os.RemoveAll(seed)
	if msg, err := exec.Command(binary, "policy", "precompile", "--out", seed).CombinedOutput(); err != nil {
		return fmt.Errorf("agent image: nriwasm policy precompile: %w\n%s", err, msg)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	mtime := time.Unix(0, 0)
	for _, d := range []string{"usr/", "usr/bin/", "usr/lib/", "usr/lib/nriwasm/", "tmp/"} {
		mode := int64(0o755)
		if d == "tmp/" {
			mode = 0o1777
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: mode, ModTime: mtime}); err != nil {
			return fmt.Errorf("agent image layer: %w", err)
		}
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "usr/bin/nriwasm", Mode: 0o755, Size: int64(len(data)), ModTime: mtime}); err != nil {
		return fmt.Errorf("agent image layer: %w", err)
	}
	if _, err := tw.Write(data); err != nil {
		return fmt.Errorf("agent image layer: %w", err)
	}
	// The seed is read-only in the image (files 0444): the agent copies from
	// it into its writable cache in the state directory.
	err = filepath.WalkDir(seed, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(seed, path)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(filepath.Join(SeedDir, rel))
		if d.IsDir() {
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: 0o555, ModTime: mtime})
		}
		content, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o444, Size: int64(len(content)), ModTime: mtime}); err != nil {
			return err
		}
		_, err = tw.Write(content)
		return err
	})
	if err != nil {
		return fmt.Errorf("agent image layer: seed: %w", err)
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("agent image layer: %w", err)
	}
	layerBytes := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerBytes)), nil
	})
	if err != nil {
		return fmt.Errorf("agent image layer: %w", err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return fmt.Errorf("agent image: %w", err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return fmt.Errorf("agent image config: %w", err)
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", runtime.GOARCH
	cfg.Config = v1.Config{
		User:       "0:0",
		Entrypoint: []string{"/usr/bin/nriwasm"},
		Cmd:        []string{"run"},
		Env:        []string{"PATH=/usr/bin"},
	}
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return fmt.Errorf("agent image config: %w", err)
	}
	tag, err := name.NewTag(ref)
	if err != nil {
		return fmt.Errorf("agent image reference %q: %w", ref, err)
	}
	if err := tarball.WriteToFile(out, tag, img); err != nil {
		return fmt.Errorf("writing the agent image %s: %w", out, err)
	}
	return nil
}
