//go:build integration

package kubeapi

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki is what the API server and its clients need: a CA, the API server's
// serving certificate, the admin's client certificate (group
// system:masters), and the service-account signing key pair. Everything is
// generated per server, in its directory.
type pki struct {
	caPEM                  []byte
	adminCert, adminKey    []byte // PEM
	caFile                 string
	serveCert, serveKey    string // files
	saPublic, saPrivate    string // files
	clientCAFile           string // = caFile: the same CA signs client certificates
	serviceAccountIssuerID string
}

func newPKI(dir string) (*pki, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating the CA key: %w", err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "nriwasm-integration-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("creating the CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, fmt.Errorf("parsing the CA certificate: %w", err)
	}
	p := &pki{
		caPEM:                  pemBlock("CERTIFICATE", caDER),
		caFile:                 filepath.Join(dir, "ca.crt"),
		serveCert:              filepath.Join(dir, "apiserver.crt"),
		serveKey:               filepath.Join(dir, "apiserver.key"),
		saPublic:               filepath.Join(dir, "sa.pub"),
		saPrivate:              filepath.Join(dir, "sa.key"),
		serviceAccountIssuerID: "https://kubernetes.default.svc.cluster.local",
	}
	p.clientCAFile = p.caFile

	serveCert, serveKey, err := leaf(ca, caKey, &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		DNSNames:     []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	if err != nil {
		return nil, err
	}
	if p.adminCert, p.adminKey, err = leaf(ca, caKey, &x509.Certificate{
		SerialNumber: big.NewInt(3),
		Subject:      pkix.Name{CommonName: "nriwasm-admin", Organization: []string{"system:masters"}},
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}); err != nil {
		return nil, err
	}

	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating the service-account key: %w", err)
	}
	saPriv, err := x509.MarshalPKCS8PrivateKey(saKey)
	if err != nil {
		return nil, fmt.Errorf("encoding the service-account key: %w", err)
	}
	saPub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("encoding the service-account public key: %w", err)
	}
	for file, data := range map[string][]byte{
		p.caFile:    p.caPEM,
		p.serveCert: serveCert,
		p.serveKey:  serveKey,
		p.saPrivate: pemBlock("PRIVATE KEY", saPriv),
		p.saPublic:  pemBlock("PUBLIC KEY", saPub),
	} {
		if err := os.WriteFile(file, data, 0o600); err != nil {
			return nil, fmt.Errorf("writing %s: %w", file, err)
		}
	}
	return p, nil
}

// leaf signs tmpl with the CA and returns the certificate and key as PEM.
func leaf(ca *x509.Certificate, caKey *ecdsa.PrivateKey, tmpl *x509.Certificate) (cert, key []byte, err error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generating a key for %s: %w", tmpl.Subject.CommonName, err)
	}
	tmpl.NotBefore = ca.NotBefore
	tmpl.NotAfter = ca.NotAfter
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("creating the certificate of %s: %w", tmpl.Subject.CommonName, err)
	}
	kd, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		return nil, nil, fmt.Errorf("encoding the key of %s: %w", tmpl.Subject.CommonName, err)
	}
	return pemBlock("CERTIFICATE", der), pemBlock("EC PRIVATE KEY", kd), nil
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}
