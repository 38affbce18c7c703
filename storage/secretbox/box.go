// Package secretbox encrypts secrets kept at rest (custom tools'
// environment values) with AES-256-GCM: a random nonce per value, and the
// key's id in front of each sealed value, so a wrong key is recognised as
// such instead of yielding garbage, and a rotation knows what it re-seals.
package secretbox

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
)

// KeySize is the key length: 32 bytes (AES-256).
const KeySize = 32

// idSize is how many bytes of the key's SHA-256 name it in sealed values.
const idSize = 4

// Errors of Open.
var (
	ErrWrongKey = errors.New("sealed with another key (secrets.key_file / SWITCHBOARD_SECRETS_KEY is not the key it was stored with)")
	ErrCorrupt  = errors.New("the sealed value is damaged")
)

// Box seals and opens values under one key.
type Box struct {
	aead cipher.AEAD
	id   [idSize]byte
}

// New returns a Box for a 32-byte key.
func New(key []byte) (*Box, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("the secrets key must be %d bytes (got %d)", KeySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	b := &Box{aead: aead}
	sum := sha256.Sum256(key)
	copy(b.id[:], sum[:idSize])
	return b, nil
}

// ParseKey reads a key written as 32 raw bytes, 64 hex digits or base64.
func ParseKey(raw []byte) ([]byte, error) {
	if len(raw) == KeySize {
		return raw, nil
	}
	s := strings.TrimSpace(string(raw))
	if k, err := hex.DecodeString(s); err == nil && len(k) == KeySize {
		return k, nil
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(s); err == nil && len(k) == KeySize {
			return k, nil
		}
	}
	return nil, fmt.Errorf("a secrets key is %d bytes: raw, 64 hex digits or base64 (make one with: head -c 32 /dev/urandom | base64)", KeySize)
}

// Load returns the Box for the key in env (SWITCHBOARD_SECRETS_KEY's value)
// or else in file; nil when neither is set.
func Load(env, file string) (*Box, error) {
	var raw []byte
	switch {
	case env != "":
		raw = []byte(env)
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("secrets.key_file: %w", err)
		}
		raw = b
	default:
		return nil, nil
	}
	key, err := ParseKey(raw)
	if err != nil {
		return nil, err
	}
	return New(key)
}

// Seal encrypts plaintext: key id, nonce, ciphertext and tag.
func (b *Box) Seal(plaintext []byte) []byte {
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		panic("secretbox: no randomness: " + err.Error()) // crypto/rand never fails on Linux
	}
	out := append(b.id[:len(b.id):len(b.id)], nonce...)
	return b.aead.Seal(out, nonce, plaintext, b.id[:])
}

// Open decrypts a value Seal made with the same key.
func (b *Box) Open(sealed []byte) ([]byte, error) {
	ns := b.aead.NonceSize()
	if len(sealed) < idSize+ns+b.aead.Overhead() {
		return nil, ErrCorrupt
	}
	if string(sealed[:idSize]) != string(b.id[:]) {
		return nil, ErrWrongKey
	}
	nonce, ct := sealed[idSize:idSize+ns], sealed[idSize+ns:]
	pt, err := b.aead.Open(nil, nonce, ct, b.id[:])
	if err != nil {
		return nil, ErrCorrupt
	}
	return pt, nil
}
