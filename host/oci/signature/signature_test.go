package signature

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"strings"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/memory"
)

// pushSubject pushes a stand-in manifest to a memory store.
func pushSubject(t *testing.T, s *memory.Store, body string) ocispec.Descriptor {
	t.Helper()
	data := []byte(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.empty.v1+json","digest":"sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a","size":2},"layers":[],"annotations":{"x":"` + body + `"}}`)
	d := content.NewDescriptorFromBytes(ocispec.MediaTypeImageManifest, data)
	if err := s.Push(context.Background(), d, bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	return d
}

func keys(t *testing.T) map[string]crypto.Signer {
	t.Helper()
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	return map[string]crypto.Signer{"P-256": p256, "P-384": p384, "Ed25519": ed}
}

func TestSignAndVerify(t *testing.T) {
	ctx := context.Background()
	for name, key := range keys(t) {
		t.Run(name, func(t *testing.T) {
			store := memory.New()
			m := pushSubject(t, store, name)
			s, err := NewSigner(key)
			if err != nil {
				t.Fatal(err)
			}
			v, err := NewVerifier(key.Public())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := v.Verify(ctx, store, m); !errors.Is(err, ErrUnsigned) {
				t.Fatalf("Verify before signing = %v, want ErrUnsigned", err)
			}
			if _, err := s.Attach(ctx, store, "example/policy", m); err != nil {
				t.Fatal(err)
			}
			res, err := v.Verify(ctx, store, m)
			if err != nil {
				t.Fatal(err)
			}
			if res.KeyHint != s.KeyHint() {
				t.Fatalf("verified by %q, want %q", res.KeyHint, s.KeyHint())
			}
			// The signature covers m only.
			other := pushSubject(t, store, name+"-other")
			if _, err := v.Verify(ctx, store, other); !errors.Is(err, ErrUnsigned) {
				t.Fatalf("Verify of another manifest = %v, want ErrUnsigned", err)
			}
		})
	}
}

// TestVerifyRefusesAnAlteredBundle moves a signature to another manifest by
// rewriting its statement: the envelope no longer verifies.
func TestVerifyRefusesAnAlteredBundle(t *testing.T) {
	ctx := context.Background()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	s, _ := NewSigner(key)
	v, _ := NewVerifier(key.Public())
	store := memory.New()
	signed, target := pushSubject(t, store, "signed"), pushSubject(t, store, "target")
	b, err := s.Bundle(ctx, "example/policy", signed)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	env := doc["dsseEnvelope"].(map[string]any)
	payload := env["payload"].(string) // base64 of the statement
	forged := strings.Replace(mustDecode(t, payload), signed.Digest.Encoded(), target.Digest.Encoded(), 1)
	env["payload"] = encode(forged)
	altered, _ := json.Marshal(doc)
	layer := content.NewDescriptorFromBytes(BundleMediaType, altered)
	if err := store.Push(ctx, layer, bytes.NewReader(altered)); err != nil {
		t.Fatal(err)
	}
	man := ocispec.Manifest{MediaType: ocispec.MediaTypeImageManifest, ArtifactType: BundleMediaType, Config: ocispec.DescriptorEmptyJSON,
		Layers: []ocispec.Descriptor{layer}, Subject: &target}
	man.SchemaVersion = 2
	data, _ := json.Marshal(man)
	if err := store.Push(ctx, ocispec.DescriptorEmptyJSON, bytes.NewReader(ocispec.DescriptorEmptyJSON.Data)); err != nil {
		t.Fatal(err)
	}
	if err := store.Push(ctx, content.NewDescriptorFromBytes(ocispec.MediaTypeImageManifest, data), bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(ctx, store, target); !errors.Is(err, ErrMismatch) {
		t.Fatalf("Verify of a forged statement = %v, want ErrMismatch", err)
	}
}

func TestParseKeys(t *testing.T) {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	pkcs8, _ := x509.MarshalPKCS8PrivateKey(ec)
	sec1, _ := x509.MarshalECPrivateKey(ec)
	pub, _ := x509.MarshalPKIXPublicKey(ec.Public())
	p224, _ := ecdsa.GenerateKey(elliptic.P224(), rand.Reader)
	p224der, _ := x509.MarshalPKCS8PrivateKey(p224)
	enc := func(typ string, der []byte) []byte { return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}) }
	for _, data := range [][]byte{enc("PRIVATE KEY", pkcs8), enc("EC PRIVATE KEY", sec1)} {
		if _, err := ParsePrivateKey(data); err != nil {
			t.Fatal(err)
		}
	}
	for data, want := range map[string]string{
		string(enc("ENCRYPTED SIGSTORE PRIVATE KEY", pkcs8)): `PEM block "ENCRYPTED SIGSTORE PRIVATE KEY": want an unencrypted`,
		string(enc("PRIVATE KEY", p224der)):                  "ECDSA curve P-224: want P-256 or P-384",
		"not PEM":                                            "no PEM block",
	} {
		if _, err := ParsePrivateKey([]byte(data)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParsePrivateKey = %v, want %q", err, want)
		}
	}
	if _, err := ParsePublicKey(enc("PUBLIC KEY", pub)); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseMode("strict"); err == nil || !strings.Contains(err.Error(), `want "off", "warn" or "enforce"`) {
		t.Fatalf("ParseMode = %v", err)
	}
}
func mustDecode(t *testing.T, s string) string {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func encode(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
