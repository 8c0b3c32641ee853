package cli

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-containerregistry/pkg/registry"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/host/oci"
	"github.com/nriwasm/nriwasm/host/resmgr"
	"github.com/nriwasm/nriwasm/host/topology/topologytest"
	"github.com/nriwasm/nriwasm/policies/builtin"
)

// startRegistry serves go-containerregistry's registry in-process and
// returns its host:port.
func startRegistry(t *testing.T) string {
	host, _ := startStoppableRegistry(t)
	return host
}

// startStoppableRegistry is startRegistry that also returns a function that
// takes the registry down.
func startStoppableRegistry(t *testing.T) (string, func()) {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0)), registry.WithReferrersSupport(true)))
	t.Cleanup(srv.Close)
	t.Setenv(oci.EnvDockerConfig, t.TempDir()) // anonymous, whatever the machine's config
	return strings.TrimPrefix(srv.URL, "http://"), srv.Close
}

// writeKeyPair writes a PEM private key (PKCS #8) and its public key, and
// returns their paths.
func writeKeyPair(t *testing.T, dir, name string) (priv, pub string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(k.Public())
	if err != nil {
		t.Fatal(err)
	}
	priv, pub = filepath.Join(dir, name+".key"), filepath.Join(dir, name+".pub")
	if err := os.WriteFile(priv, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pub, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), 0o644); err != nil {
		t.Fatal(err)
	}
	return priv, pub
}

func TestPolicyPushInspectVerifyPull(t *testing.T) {
	host := startRegistry(t)
	dir := t.TempDir()
	priv, pub := writeKeyPair(t, dir, "owner")
	_, strangerPub := writeKeyPair(t, dir, "stranger")
	signed := "oci://" + host + "/policies/conformance:1.0.0"
	// Another repository: in this one the same module (the same digest) is signed.
	unsigned := "oci://" + host + "/policies/unsigned:1.0.0"
	cache := t.TempDir()

	out, errOut, code := run(t, "policy", "push", "conformance", signed, "--plain-http", "--key", priv)
	if code != 0 || !strings.Contains(out, "pushed "+signed+"@sha256:") || !strings.Contains(out, "signed sha256:") {
		t.Fatalf("push: exit %d, out %s, err %s", code, out, errOut)
	}
	if _, errOut, code := run(t, "policy", "push", "conformance", unsigned, "--plain-http"); code != 0 {
		t.Fatalf("push unsigned: exit %d, err %s", code, errOut)
	}

	out, errOut, code = run(t, "policy", "inspect", signed, "--plain-http", "--cache-dir", cache)
	if code != 0 {
		t.Fatalf("inspect: exit %d, err %s", code, errOut)
	}
	var in struct {
		Reference, Digest, MediaType string
		Annotations                  map[string]string
		Metadata                     struct{ Name string }
		Exports                      []struct{ Name, Kind string }
	}
	if err := json.Unmarshal([]byte(out), &in); err != nil {
		t.Fatalf("inspect printed %s: %v", out, err)
	}
	if in.Metadata.Name != "conformance" || in.Annotations[oci.AnnotationABIVersion] != fmt.Sprintf("%d.%d", abi.ABIMajor, abi.ABIMinor) || in.MediaType != oci.LayerMediaType ||
		!strings.HasPrefix(in.Digest, "sha256:") || in.Reference != signed+"@"+in.Digest || len(in.Exports) == 0 {
		t.Fatalf("inspect printed %s", out)
	}
	if !strings.Contains(errOut, "policy reference resolved") || !strings.Contains(errOut, in.Digest) {
		t.Fatalf("the tag's resolution is not logged with its digest:\n%s", errOut)
	}

	if out, errOut, code := run(t, "policy", "verify", signed, "--plain-http", "--key", pub, "--cache-dir", cache); code != 0 || !strings.Contains(out, "verified "+signed+"@"+in.Digest+": signed by key ") {
		t.Fatalf("verify: exit %d, out %s, err %s", code, out, errOut)
	}
	if _, errOut, code := run(t, "policy", "verify", signed, "--plain-http", "--key", strangerPub, "--cache-dir", cache); code == 0 || !strings.Contains(errOut, "no signature verifies") {
		t.Fatalf("verify with another key: exit %d, err %s", code, errOut)
	}
	if _, errOut, code := run(t, "policy", "verify", unsigned, "--plain-http", "--key", pub, "--cache-dir", cache); code == 0 || !strings.Contains(errOut, "no signature") {
		t.Fatalf("verify of an unsigned module: exit %d, err %s", code, errOut)
	}

	file := filepath.Join(dir, "pulled.wasm")
	if out, errOut, code := run(t, "policy", "pull", signed, "--plain-http", "--key", pub, "-o", file, "--cache-dir", ""); code != 0 || !strings.Contains(out, "pulled "+signed+"@"+in.Digest+" (conformance 1.0.0)") {
		t.Fatalf("pull: exit %d, out %s, err %s", code, out, errOut)
	}
	got, err := os.ReadFile(file)
	want, _ := builtin.Module("conformance")
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("pulled %d bytes (%v), want the %d pushed", len(got), err, len(want))
	}
	if _, errOut, code := run(t, "policy", "pull", unsigned, "--plain-http", "--key", pub, "-o", file, "--cache-dir", ""); code == 0 || !strings.Contains(errOut, "refused by signature verification (mode enforce)") {
		t.Fatalf("pull of an unsigned module with --key: exit %d, err %s", code, errOut)
	}
}

// TestCheckRunsASignedOCIPolicy pushes, pulls, verifies, loads and runs a
// policy through `check --policy oci://...`.
func TestCheckRunsASignedOCIPolicy(t *testing.T) {
	host := startRegistry(t)
	priv, pub := writeKeyPair(t, t.TempDir(), "owner")
	r := "oci://" + host + "/policies/conformance:1.0.0"
	if _, errOut, code := run(t, "policy", "push", "conformance", r, "--plain-http", "--key", priv); code != 0 {
		t.Fatalf("push: %s", errOut)
	}
	sysfs := t.TempDir()
	if err := topologytest.Restore(filepath.Join("..", "..", "topology", "testdata", "captured-vm"), sysfs); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := run(t, "check", "--policy", r, "--plain-http", "--key", pub, "--sysfs", sysfs, "--cache-dir", t.TempDir())
	if code != 0 {
		t.Fatalf("check exited %d: %s", code, errOut)
	}
	if !strings.Contains(out, fmt.Sprintf("policy        conformance 1.0.0 (ABI v%d.%d", abi.ABIMajor, abi.ABIMinor)) || !strings.Contains(errOut, "policy signature verified") {
		t.Fatalf("check printed:\n%s\nlogged:\n%s", out, errOut)
	}
}

func TestAgentPolicySource(t *testing.T) {
	host, stop := startStoppableRegistry(t)
	dir := t.TempDir()
	_, pub := writeKeyPair(t, dir, "owner")
	r := "oci://" + host + "/policies/conformance:unsigned"
	if _, errOut, code := run(t, "policy", "push", "conformance", r, "--plain-http"); code != 0 {
		t.Fatalf("push: %s", errOut)
	}
	wasmFile := filepath.Join(dir, "conformance.wasm")
	module, _ := builtin.Module("conformance")
	if err := os.WriteFile(wasmFile, module, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := func(name string, mode config.Verification) *config.Config {
		c := config.Default()
		c.Policy.Name, c.StateDir = name, dir
		if err := c.Complete(dir); err != nil {
			t.Fatal(err)
		}
		c.Registry.PlainHTTP, c.Registry.Verification = []string{host}, mode
		if mode != config.VerifyOff {
			c.Registry.PublicKeys = []string{pub}
		}
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		return c
	}
	ctx := context.Background()
	load := func(c *config.Config) (resmgr.Identity, error) {
		p, err := agentPolicy(ctx, c, c.Policy.Name, logr.Discard())
		return p.Identity, err
	}
	if id, err := load(cfg(r, config.VerifyOff)); err != nil || id.Name != "conformance" || id.Digest != resmgr.ModuleDigest(module) {
		t.Fatalf("off: %+v, %v", id, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "oci", "index.json")); err != nil {
		t.Fatalf("the agent's cache is not in <stateDir>/oci: %v", err)
	}
	if _, err := load(cfg(r, config.VerifyEnforce)); err == nil || !strings.Contains(err.Error(), "no signature") {
		t.Fatalf("enforce on an unsigned module: %v", err)
	}
	if _, err := load(cfg(wasmFile, config.VerifyEnforce)); err == nil || !strings.Contains(err.Error(), "a .wasm file carries no signature") {
		t.Fatalf("enforce on a .wasm file: %v", err)
	}
	if id, err := load(cfg("conformance", config.VerifyEnforce)); err != nil || id.Name != "conformance" {
		t.Fatalf("enforce on a built-in policy: %+v, %v", id, err)
	}
	// The enforce refusal removed the digest from the cache; loaded again
	// without verification, it is cached again.
	if _, err := load(cfg(r, config.VerifyOff)); err != nil {
		t.Fatalf("off, again: %v", err)
	}
	// A restart with the registry down starts from <stateDir>/oci.
	stop()
	offline := cfg(r, config.VerifyOff)
	offline.Registry.Timeout = config.Duration(5 * time.Second)
	if id, err := load(offline); err != nil || id.Name != "conformance" || id.Digest != resmgr.ModuleDigest(module) {
		t.Fatalf("offline: %+v, %v", id, err)
	}
}
