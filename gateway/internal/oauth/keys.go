package oauth

import (
	"context"
	"crypto"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"

	"github.com/svcplatform/svc/gateway/internal/coredb"
)

const (
	algRS256   = "RS256"
	rsaKeyBits = 2048
)

// signingKey is one RSA key of the JWKS.
type signingKey struct {
	kid     string
	private *rsa.PrivateKey
}

// keySet holds the active signing key and every published one.
type keySet struct {
	active    signingKey
	published []signingKey
}

// loadKeys reads the signing keys, generating the first one if there is
// none. Two gateways starting together may both generate one: the unique
// index on the active key lets one insert win, and both then read it.
func loadKeys(ctx context.Context, q *coredb.Queries, secret []byte) (*keySet, error) {
	rows, err := q.ListSigningKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("read signing keys: %w", err)
	}
	if len(rows) == 0 {
		if err := generateKey(ctx, q, secret); err != nil {
			return nil, err
		}
		if rows, err = q.ListSigningKeys(ctx); err != nil {
			return nil, fmt.Errorf("read signing keys: %w", err)
		}
	}
	ks := &keySet{}
	for _, r := range rows {
		der := r.PrivateKey
		if r.Sealed {
			if len(secret) == 0 {
				return nil, fmt.Errorf("signing key %s is sealed and no key secret is configured", r.Kid)
			}
			if der, err = unseal(secret, der); err != nil {
				return nil, fmt.Errorf("unseal signing key %s: %w", r.Kid, err)
			}
		}
		k, err := x509.ParsePKCS8PrivateKey(der)
		if err != nil {
			return nil, fmt.Errorf("parse signing key %s: %w", r.Kid, err)
		}
		rk, ok := k.(*rsa.PrivateKey)
		if !ok || r.Algorithm != algRS256 {
			return nil, fmt.Errorf("signing key %s: unsupported algorithm %s", r.Kid, r.Algorithm)
		}
		sk := signingKey{kid: r.Kid, private: rk}
		ks.published = append(ks.published, sk)
		if r.Active && ks.active.private == nil {
			ks.active = sk
		}
	}
	if ks.active.private == nil {
		return nil, errors.New("no active signing key")
	}
	return ks, nil
}

func generateKey(ctx context.Context, q *coredb.Queries, secret []byte) error {
	k, err := rsa.GenerateKey(rand.Reader, rsaKeyBits)
	if err != nil {
		return fmt.Errorf("generate signing key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return fmt.Errorf("encode signing key: %w", err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		return fmt.Errorf("encode public key: %w", err)
	}
	sum := sha256.Sum256(pub)
	kid := base64.RawURLEncoding.EncodeToString(sum[:12])
	sealed := len(secret) > 0
	if sealed {
		if der, err = seal(secret, der); err != nil {
			return err
		}
	}
	if err := q.InsertSigningKey(ctx, coredb.InsertSigningKeyParams{Kid: kid, Algorithm: algRS256,
		PrivateKey: der, Sealed: sealed}); err != nil {
		return fmt.Errorf("store signing key: %w", err)
	}
	return nil
}

// seal encrypts with AES-256-GCM under SHA-256(secret): nonce ‖ ciphertext.
func seal(secret, plain []byte) ([]byte, error) {
	aead, err := keyAEAD(secret)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, aead.NonceSize())
	_, _ = rand.Read(nonce)
	return aead.Seal(nonce, nonce, plain, []byte("svc signing key")), nil
}

func unseal(secret, sealed []byte) ([]byte, error) {
	aead, err := keyAEAD(secret)
	if err != nil {
		return nil, err
	}
	if len(sealed) < aead.NonceSize() {
		return nil, errors.New("sealed key too short")
	}
	return aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], []byte("svc signing key"))
}

func keyAEAD(secret []byte) (cipher.AEAD, error) {
	key := sha256.Sum256(secret)
	block, err := aes.NewCipher(key[:])
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// jwk is the public half of a signing key (RFC 7517).
type jwk struct {
	Kty string `json:"kty"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	Kid string `json:"kid"`
	N   string `json:"n"`
	E   string `json:"e"`
}

func (ks *keySet) jwks() map[string][]jwk {
	keys := make([]jwk, 0, len(ks.published))
	for _, k := range ks.published {
		pub := k.private.PublicKey
		keys = append(keys, jwk{Kty: "RSA", Use: "sig", Alg: algRS256, Kid: k.kid,
			N: base64.RawURLEncoding.EncodeToString(pub.N.Bytes()),
			E: base64.RawURLEncoding.EncodeToString(big.NewInt(int64(pub.E)).Bytes())})
	}
	return map[string][]jwk{"keys": keys}
}

// sign returns the compact JWS (RS256) of claims with the active key.
func (ks *keySet) sign(claims any) (string, error) {
	header, err := json.Marshal(map[string]string{"alg": algRS256, "typ": "JWT", "kid": ks.active.kid})
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	signingInput := base64.RawURLEncoding.EncodeToString(header) + "." + base64.RawURLEncoding.EncodeToString(payload)
	digest := sha256.Sum256([]byte(signingInput))
	sig, err := rsa.SignPKCS1v15(nil, ks.active.private, crypto.SHA256, digest[:])
	if err != nil {
		return "", fmt.Errorf("sign id_token: %w", err)
	}
	return signingInput + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}
