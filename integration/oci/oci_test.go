//go:build integration

// Package oci tests policy artifacts against the field's own tools: a real
// registry (distribution's `registry`, which has no referrers API, so
// signatures go through the referrers tag schema), oras, crane and cosign,
// all installed by .ci/oci-deps into $NRIWASM_INTEGRATION_BIN.
package oci

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/nriwasm/nriwasm/host/oci"
	"github.com/nriwasm/nriwasm/host/oci/ref"
	"github.com/nriwasm/nriwasm/host/oci/signature"
	"github.com/nriwasm/nriwasm/policies/builtin"
)

// binEnv names the directory .ci/oci-deps installs into.
const binEnv = "NRIWASM_INTEGRATION_BIN"

// tool returns the path of an installed tool, failing the test when it is
// missing.
func tool(t *testing.T, name string) string {
	t.Helper()
	dir := os.Getenv(binEnv)
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(home, ".cache", "nriwasm-integration", "bin")
	}
	p := filepath.Join(dir, name)
	if fi, err := os.Stat(p); err != nil || fi.Mode()&0o111 == 0 {
		t.Fatalf("%s missing (run .ci/oci-deps): %v", p, err)
	}
	return p
}

// realRegistry is distribution's registry on a free local port, storing in
// a directory the test can reach into.
type realRegistry struct {
	host    string
	storage string
	cmd     *exec.Cmd
}

func startRegistry(t *testing.T) *realRegistry {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host := l.Addr().String()
	l.Close()
	dir := t.TempDir()
	storage := filepath.Join(dir, "storage")
	cfg := fmt.Sprintf("version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: %s\n  delete:\n    enabled: true\nhttp:\n  addr: %s\n", storage, host)
	cfgPath := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(tool(t, "registry"), "serve", cfgPath)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &realRegistry{host: host, storage: storage, cmd: cmd}
	t.Cleanup(func() {
		r.stop()
		if t.Failed() {
			t.Logf("registry output:\n%s", out.String())
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + host + "/v2/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return r
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("registry on %s not ready after 30 s: %v\n%s", host, err, out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stop takes the registry down (the node is cut off from it).
func (r *realRegistry) stop() {
	if r.cmd.Process != nil && r.cmd.ProcessState == nil {
		r.cmd.Process.Kill()
		r.cmd.Wait()
	}
}

func (r *realRegistry) remote() oci.Remote { return oci.Remote{PlainHTTP: []string{r.host}} }

func (r *realRegistry) ref(t *testing.T, repoTag string) ref.Reference {
	t.Helper()
	x, err := ref.Parse("oci://" + r.host + "/" + repoTag)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// run runs a tool and returns its stdout.
func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(tool(t, name), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = append(os.Environ(), "DOCKER_CONFIG="+t.TempDir())
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

func module(t *testing.T) []byte {
	t.Helper()
	m, ok := builtin.Module("conformance")
	if !ok {
		t.Fatal("no built-in conformance policy")
	}
	return m
}

// pushSigned pushes the conformance module to r with nriwasm, signed by s
// unless s is nil, and returns the manifest.
func pushSigned(t *testing.T, reg *realRegistry, r ref.Reference, s *signature.Signer) ocispec.Descriptor {
	t.Helper()
	ctx := context.Background()
	target, err := reg.remote().Open(ctx, r, true)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := oci.Push(ctx, target, r.Tag, module(t))
	if err != nil {
		t.Fatal(err)
	}
	if s != nil {
		if _, err := s.Attach(ctx, target, r.Name(), desc); err != nil {
			t.Fatal(err)
		}
	}
	return desc
}

func newSigner(t *testing.T) (*signature.Signer, *signature.Verifier) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := signature.NewSigner(k)
	if err != nil {
		t.Fatal(err)
	}
	v, err := signature.NewVerifier(k.Public())
	if err != nil {
		t.Fatal(err)
	}
	return s, v
}

func load(t *testing.T, o []oci.Option, r ref.Reference) (*oci.Module, error) {
	t.Helper()
	f, err := oci.NewFetcher(context.Background(), o...)
	if err != nil {
		t.Fatal(err)
	}
	return f.Load(context.Background(), r)
}

// TestToolsReadWhatNriwasmPushes pushes with nriwasm, then reads the
// artifact with crane and oras.
func TestToolsReadWhatNriwasmPushes(t *testing.T) {
	reg := startRegistry(t)
	r := reg.ref(t, "policies/conformance:1.0.0")
	desc := pushSigned(t, reg, r, nil)

	var man ocispec.Manifest
	if err := json.Unmarshal([]byte(run(t, "crane", "manifest", "--insecure", reg.host+"/policies/conformance:1.0.0")), &man); err != nil {
		t.Fatal(err)
	}
	if man.Config.MediaType != oci.ConfigMediaType || len(man.Layers) != 1 || man.Layers[0].MediaType != oci.LayerMediaType {
		t.Fatalf("crane reads config %q and layers %+v, want %s and one %s", man.Config.MediaType, man.Layers, oci.ConfigMediaType, oci.LayerMediaType)
	}
	if d := strings.TrimSpace(run(t, "crane", "digest", "--insecure", reg.host+"/policies/conformance:1.0.0")); d != desc.Digest.String() {
		t.Fatalf("crane digest %s, nriwasm pushed %s", d, desc.Digest)
	}
	out := t.TempDir()
	run(t, "oras", "pull", "--plain-http", "-o", out, reg.host+"/policies/conformance@"+desc.Digest.String())
	got, err := os.ReadFile(filepath.Join(out, "conformance.wasm"))
	if err != nil || !bytes.Equal(got, module(t)) {
		t.Fatalf("oras pulled %d bytes (%v), want the module nriwasm pushed", len(got), err)
	}
}

// TestNriwasmLoadsWhatOrasPushes pushes a sealed module with oras (no
// annotations) and loads it, its version read from the module.
func TestNriwasmLoadsWhatOrasPushes(t *testing.T) {
	reg := startRegistry(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "conformance.wasm"), module(t), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(tool(t, "oras"), "push", "--plain-http", reg.host+"/policies/oras:1.0.0",
		"--config", "config.json:"+oci.ConfigMediaType, "conformance.wasm:"+oci.LayerMediaType)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DOCKER_CONFIG="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("oras push: %v\n%s", err, out)
	}
	m, err := load(t, []oci.Option{oci.WithRemote(reg.remote()), oci.WithCacheDir(t.TempDir())}, reg.ref(t, "policies/oras:1.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(m.Bytes, module(t)) || m.Name != "conformance" || m.Version == "" {
		t.Fatalf("loaded %s %q version %q (%d bytes), want the conformance module with its version", m.Digest, m.Name, m.Version, len(m.Bytes))
	}
}

// TestTrustAgainstARealRegistry: a withdrawn signature stays withdrawn
// offline, a digest-pinned reference loads offline, and a blob the registry
// serves corrupted is an integrity failure.
func TestTrustAgainstARealRegistry(t *testing.T) {
	ctx := context.Background()
	reg := startRegistry(t)
	s, v := newSigner(t)
	withdrawn := reg.ref(t, "policies/withdrawn:v1")
	wdesc := pushSigned(t, reg, withdrawn, s)
	pinned := reg.ref(t, "policies/pinned:v1")
	pdesc := pushSigned(t, reg, pinned, s)
	cache := t.TempDir()
	o := []oci.Option{oci.WithRemote(reg.remote()), oci.WithCacheDir(cache), oci.WithVerification(signature.Enforce, v), oci.WithTimeout(5 * time.Second)}
	for _, r := range []ref.Reference{withdrawn, pinned} {
		if _, err := load(t, o, r); err != nil {
			t.Fatal(err)
		}
	}

	// Withdraw the signature at the registry.
	repo, err := remote.NewRepository(withdrawn.Name())
	if err != nil {
		t.Fatal(err)
	}
	repo.PlainHTTP = true
	sigs, err := signature.Referrers(ctx, repo, wdesc)
	if err != nil || len(sigs) != 1 {
		t.Fatalf("signatures at the registry: %v, %v; want one", sigs, err)
	}
	if err := repo.Delete(ctx, sigs[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := load(t, o, withdrawn); !errors.Is(err, signature.ErrUnsigned) {
		t.Fatalf("online load after the withdrawal = %v, want ErrUnsigned", err)
	}

	// A corrupted blob (the registry's own storage altered) of another
	// repository is an integrity failure, not an unreachable registry.
	corrupt := reg.ref(t, "policies/corrupt:v1")
	cdesc := pushSigned(t, reg, corrupt, s)
	var man ocispec.Manifest
	if err := json.Unmarshal([]byte(run(t, "crane", "manifest", "--insecure", reg.host+"/policies/corrupt@"+cdesc.Digest.String())), &man); err != nil {
		t.Fatal(err)
	}
	layer := man.Layers[0].Digest
	blob := filepath.Join(reg.storage, "docker", "registry", "v2", "blobs", "sha256", layer.Encoded()[:2], layer.Encoded(), "data")
	data, err := os.ReadFile(blob)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0xff
	if err := os.WriteFile(blob, data, 0o644); err != nil {
		t.Fatal(err)
	}
	fresh := append(o[:len(o):len(o)], oci.WithCacheDir(t.TempDir())) // a copy: o keeps its cache
	if _, err := load(t, fresh, corrupt); !errors.Is(err, oci.ErrIntegrity) || !strings.Contains(err.Error(), layer.String()) {
		t.Fatalf("load of a corrupted blob = %v, want ErrIntegrity naming %s", err, layer)
	}

	// Cut off from the registry.
	reg.stop()
	byDigest := withdrawn.WithDigest(wdesc.Digest)
	byDigest.Tag = ""
	for _, r := range []ref.Reference{withdrawn, byDigest} {
		if m, err := load(t, o, r); err == nil {
			t.Fatalf("offline load of %s after the withdrawal loaded %s, want a refusal", r, m.Digest)
		}
	}
	pinnedByDigest := pinned.WithDigest(pdesc.Digest)
	pinnedByDigest.Tag = ""
	m, err := load(t, o, pinnedByDigest)
	if err != nil || !m.Offline || m.KeyHint == "" {
		t.Fatalf("offline load of %s = %+v, %v; want the cached digest, verified", pinnedByDigest, m, err)
	}
}
