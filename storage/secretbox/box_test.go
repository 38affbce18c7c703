package secretbox_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/switchboard-chat/switchboard/storage/secretbox"
)

func key(t *testing.T) []byte {
	k := make([]byte, secretbox.KeySize)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return k
}

func TestSealOpen(t *testing.T) {
	k := key(t)
	box, err := secretbox.New(k)
	if err != nil {
		t.Fatal(err)
	}
	secret := []byte("ghp_0123456789abcdef")
	a, b := box.Seal(secret), box.Seal(secret)
	if bytes.Equal(a, b) {
		t.Fatal("two seals of one value are equal: the nonce is not random")
	}
	if bytes.Contains(a, secret) {
		t.Fatal("the sealed value contains the plaintext")
	}
	for _, s := range [][]byte{a, b} {
		if got, err := box.Open(s); err != nil || !bytes.Equal(got, secret) {
			t.Fatalf("Open = %q, %v", got, err)
		}
	}
	other, _ := secretbox.New(key(t))
	if _, err := other.Open(a); !errors.Is(err, secretbox.ErrWrongKey) {
		t.Fatalf("Open with another key = %v, want ErrWrongKey", err)
	}
	damaged := append([]byte(nil), a...)
	damaged[len(damaged)-1] ^= 1
	if _, err := box.Open(damaged); !errors.Is(err, secretbox.ErrCorrupt) {
		t.Fatalf("Open of a damaged value = %v, want ErrCorrupt", err)
	}
	if _, err := box.Open(a[:10]); !errors.Is(err, secretbox.ErrCorrupt) {
		t.Fatalf("Open of a short value = %v", err)
	}
}

func TestParseKey(t *testing.T) {
	k := key(t)
	for name, raw := range map[string][]byte{
		"raw": k, "hex": []byte(hex.EncodeToString(k) + "\n"), "base64": []byte(base64.StdEncoding.EncodeToString(k)),
	} {
		got, err := secretbox.ParseKey(raw)
		if err != nil || !bytes.Equal(got, k) {
			t.Errorf("%s: ParseKey = %x, %v", name, got, err)
		}
	}
	if _, err := secretbox.ParseKey([]byte("too short")); err == nil {
		t.Error("a short key was accepted")
	}
	if b, err := secretbox.Load("", ""); b != nil || err != nil {
		t.Errorf("Load without a key = %v, %v; want none", b, err)
	}
}
