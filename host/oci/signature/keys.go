package signature

import (
	"context"
	"crypto"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"

	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	sigsig "github.com/sigstore/sigstore/pkg/signature"
)

// KeyHint is how a bundle names the key that made it: the base64 SHA-256 of
// the public key's PKIX encoding (sigstore-go's default hint).
func KeyHint(pub crypto.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", fmt.Errorf("encode public key: %w", err)
	}
	sum := sha256.Sum256(der)
	return base64.StdEncoding.EncodeToString(sum[:]), nil
}

// algorithm is the signing algorithm for a key: ECDSA P-256 or P-384 with
// SHA-256 or SHA-384, or Ed25519.
func algorithm(pub crypto.PublicKey) (sigsig.AlgorithmDetails, error) {
	var d protocommon.PublicKeyDetails
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			d = protocommon.PublicKeyDetails_PKIX_ECDSA_P256_SHA_256
		case elliptic.P384():
			d = protocommon.PublicKeyDetails_PKIX_ECDSA_P384_SHA_384
		default:
			return sigsig.AlgorithmDetails{}, fmt.Errorf("ECDSA curve %s: want P-256 or P-384", k.Curve.Params().Name)
		}
	case ed25519.PublicKey:
		d = protocommon.PublicKeyDetails_PKIX_ED25519
	default:
		return sigsig.AlgorithmDetails{}, fmt.Errorf("%s: want an ECDSA P-256 or P-384 key or an Ed25519 key", keyKind(pub))
	}
	return sigsig.GetAlgorithmDetails(d)
}

// keyKind names a key's algorithm for a message: "an RSA key of 2048 bits".
func keyKind(key any) string {
	switch k := key.(type) {
	case *rsa.PublicKey:
		return fmt.Sprintf("an RSA key of %d bits", k.N.BitLen())
	case *rsa.PrivateKey:
		return fmt.Sprintf("an RSA key of %d bits", k.N.BitLen())
	case *ecdh.PublicKey, *ecdh.PrivateKey:
		return "an X25519 or ECDH key (key agreement, not signing)"
	case *ecdsa.PublicKey:
		return "an ECDSA key on " + k.Curve.Params().Name
	default:
		return "a key of an unsupported algorithm"
	}
}

// ParsePrivateKey reads a PEM private key: PKCS #8 ("PRIVATE KEY") or SEC 1
// ("EC PRIVATE KEY"), unencrypted. `openssl genpkey -algorithm EC -pkeyopt
// ec_paramgen_curve:P-256` writes one.
func ParsePrivateKey(data []byte) (crypto.Signer, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("private key: no PEM block")
	}
	var key any
	var err error
	switch block.Type {
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	default:
		return nil, fmt.Errorf("private key: PEM block %q: want an unencrypted \"PRIVATE KEY\" (PKCS #8) or \"EC PRIVATE KEY\"", block.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("private key: %w", err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("private key: %s cannot sign", keyKind(key))
	}
	if _, err := algorithm(signer.Public()); err != nil {
		return nil, fmt.Errorf("private key: %w", err)
	}
	return signer, nil
}

// ParsePublicKey reads a PEM public key ("PUBLIC KEY", PKIX), as `cosign
// generate-key-pair` or `openssl pkey -pubout` write it.
func ParsePublicKey(data []byte) (crypto.PublicKey, error) {
	pub, err := cryptoutils.UnmarshalPEMToPublicKey(data)
	if err != nil {
		return nil, fmt.Errorf("public key: %w", err)
	}
	if _, err := algorithm(pub); err != nil {
		return nil, fmt.Errorf("public key: %w", err)
	}
	return pub, nil
}

// keypair adapts a crypto.Signer to sigstore-go's sign.Keypair.
type keypair struct {
	signer crypto.Signer
	alg    sigsig.AlgorithmDetails
	hint   string
}

func newKeypair(signer crypto.Signer) (*keypair, error) {
	alg, err := algorithm(signer.Public())
	if err != nil {
		return nil, err
	}
	hint, err := KeyHint(signer.Public())
	if err != nil {
		return nil, err
	}
	return &keypair{signer: signer, alg: alg, hint: hint}, nil
}

func (k *keypair) GetHashAlgorithm() protocommon.HashAlgorithm { return k.alg.GetProtoHashType() }
func (k *keypair) GetSigningAlgorithm() protocommon.PublicKeyDetails {
	return k.alg.GetSignatureAlgorithm()
}
func (k *keypair) GetHint() []byte                { return []byte(k.hint) }
func (k *keypair) GetPublicKey() crypto.PublicKey { return k.signer.Public() }

func (k *keypair) GetKeyAlgorithm() string {
	if _, ok := k.signer.Public().(ed25519.PublicKey); ok {
		return "ED25519"
	}
	return "ECDSA"
}

func (k *keypair) GetPublicKeyPem() (string, error) {
	data, err := cryptoutils.MarshalPublicKeyToPEM(k.signer.Public())
	return string(data), err
}

// SignData signs data (hashed first, except with Ed25519) and returns the
// signature and what was signed.
func (k *keypair) SignData(_ context.Context, data []byte) ([]byte, []byte, error) {
	h := k.alg.GetHashType()
	signed := data
	if h != crypto.Hash(0) {
		hasher := h.New()
		hasher.Write(data)
		signed = hasher.Sum(nil)
	}
	sig, err := k.signer.Sign(rand.Reader, signed, h)
	if err != nil {
		return nil, nil, fmt.Errorf("sign: %w", err)
	}
	return sig, signed, nil
}
