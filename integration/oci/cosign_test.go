//go:build integration

package oci

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/nriwasm/nriwasm/host/oci"
	"github.com/nriwasm/nriwasm/host/oci/signature"
)

// cosign runs cosign v3 in dir with an empty key password, offline (no
// transparency log, no signing config, plain HTTP to the registry).
func cosign(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command(tool(t, "cosign"), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "COSIGN_PASSWORD=", "DOCKER_CONFIG="+t.TempDir(), "HOME="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cosign %v: %v\n%s", args, err, out)
	}
}

// TestCosignRoundTrip: nriwasm verifies what cosign signed (a bundle
// referrer, and the classic .sig tag), and cosign verifies what nriwasm
// signed, with the recipes of docs/oci.md.
func TestCosignRoundTrip(t *testing.T) {
	reg := startRegistry(t)
	dir := t.TempDir()

	signedByCosign := reg.ref(t, "policies/cosigned:v1")
	desc := pushSigned(t, reg, signedByCosign, nil)
	cosign(t, dir, "generate-key-pair")
	cosign(t, dir, "sign", "--key", "cosign.key", "--tlog-upload=false", "--use-signing-config=false",
		"--allow-http-registry", "--allow-insecure-registry", "-y", reg.host+"/policies/cosigned@"+desc.Digest.String())
	pubPEM, err := os.ReadFile(filepath.Join(dir, "cosign.pub"))
	if err != nil {
		t.Fatal(err)
	}
	pub, err := signature.ParsePublicKey(pubPEM)
	if err != nil {
		t.Fatal(err)
	}
	v, err := signature.NewVerifier(pub)
	if err != nil {
		t.Fatal(err)
	}
	m, err := load(t, []oci.Option{oci.WithRemote(reg.remote()), oci.WithCacheDir(t.TempDir()), oci.WithVerification(signature.Enforce, v)}, signedByCosign)
	if err != nil || m.KeyHint == "" {
		t.Fatalf("nriwasm verifying cosign's signature: %+v, %v", m, err)
	}

	// cosign's classic format (the sha256-<digest>.sig tag), as cosign 2.x
	// writes by default.
	classic := reg.ref(t, "policies/classic:v1")
	desc = pushSigned(t, reg, classic, nil)
	cosign(t, dir, "sign", "--key", "cosign.key", "--tlog-upload=false", "--use-signing-config=false", "--new-bundle-format=false",
		"--allow-http-registry", "--allow-insecure-registry", "-y", reg.host+"/policies/classic@"+desc.Digest.String())
	run(t, "crane", "digest", "--insecure", reg.host+"/policies/classic:"+signature.ClassicTag(desc.Digest))
	m, err = load(t, []oci.Option{oci.WithRemote(reg.remote()), oci.WithCacheDir(t.TempDir()), oci.WithVerification(signature.Enforce, v)}, classic)
	if err != nil || m.KeyHint == "" {
		t.Fatalf("nriwasm verifying cosign's classic signature: %+v, %v", m, err)
	}

	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := signature.NewSigner(k)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(k.Public())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "nriwasm.pub"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	signedByNriwasm := reg.ref(t, "policies/nriwasm-signed:v1")
	desc = pushSigned(t, reg, signedByNriwasm, s)
	cosign(t, dir, "verify", "--key", "nriwasm.pub", "--insecure-ignore-tlog=true",
		"--allow-http-registry", "--allow-insecure-registry", reg.host+"/policies/nriwasm-signed@"+desc.Digest.String())
}
