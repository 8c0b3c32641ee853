package signature

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"
)

// TestRSAKeyMessage: an RSA key is refused in words, not by its Go type.
func TestRSAKeyMessage(t *testing.T) {
	k, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ParsePrivateKey(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	if err == nil || !strings.Contains(err.Error(), "an RSA key of 1024 bits: want an ECDSA P-256 or P-384 key or an Ed25519 key") || strings.Contains(err.Error(), "*rsa") {
		t.Fatalf("ParsePrivateKey(RSA) error = %v", err)
	}
}
