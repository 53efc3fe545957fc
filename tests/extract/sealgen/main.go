// sealgen writes ChatCLI at-rest payloads (v1 and v2) with Go's own crypto, independently of
// vaultsync's Python reader, so the reader's tests check against a second implementation.
package main

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/crypto/argon2"
	"golang.org/x/crypto/hkdf"
)

func master(secret string, version int) []byte {
	if version == 2 && len(secret) < 32 {
		return argon2.IDKey([]byte(secret), []byte("chatcli-atrest-v2-passphrase"), 3, 64*1024, 4, 32)
	}
	sum := sha256.Sum256([]byte(secret))
	return sum[:]
}

func seal(secret string, version int, aad []byte, nonce []byte, plain []byte) []byte {
	key := make([]byte, 32)
	r := hkdf.New(sha256.New, master(secret, version), nil, []byte("chatcli-session-encryption"))
	if _, err := io.ReadFull(r, key); err != nil {
		panic(err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		panic(err)
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	header := "CHATCLI_ENC_v1\n"
	if version == 2 {
		header = "CHATCLI_ENC_v2\n"
	}
	out := append([]byte(header), nonce...)
	return gcm.Seal(out, nonce, plain, aad)
}

func place(rel, tenant string) []byte {
	return []byte("v2\x00" + rel + "\x00" + tenant)
}

func write(dir, name string, data []byte) {
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		panic(err)
	}
}

func main() {
	dir := os.Args[1]
	long := "0123456789abcdef0123456789abcdef-long-key"
	pass := "correct horse"
	retired := "an-older-secret-that-is-long-enough-32"
	plain := []byte(`[{"id":"f1","content":"sealed fact","category":"note"}]`)
	nonce := []byte("fixednonce12")
	write(dir, "v1-long.bin", seal(long, 1, nil, nonce, plain))
	write(dir, "v2-long-placed.bin", seal(long, 2, place("memory/memory_index.json", ""), nonce, plain))
	write(dir, "v2-long-unplaced.bin", seal(long, 2, nil, nonce, plain))
	write(dir, "v2-passphrase.bin", seal(pass, 2, place("memory/memory_index.json", ""), nonce, plain))
	write(dir, "v2-retired.bin", seal(retired, 2, place("memory/memory_index.json", ""), nonce, plain))
	write(dir, "v2-tenant.bin", seal(long, 2, place("memory/memory_index.json", "alice-0a1b2c3d"), nonce, plain))
	// A hub as the gateway leaves it: a tenant's stores sealed with a retired key and a
	// passphrase, bound to the tenant; a chunked knowledge context at the root.
	bob := "bob-89abcdef"
	session := []byte(`{"version":2,"title":"bob asks","chat_history":[{"role":"user","content":"hi"}]}`)
	context := []byte(`{"id":"ctx-hub","name":"Hub docs","is_chunked":true,"files":[` +
		`{"Path":"docs/guide.md#0001","Content":"# Guide\n\nFirst part.\n","Type":"md"},` +
		`{"Path":"docs/guide.md#part-b","Content":"Second part.\n","Type":"md"}]}`)
	write(dir, "hub-bob-index-retired.bin", seal(retired, 2, place("memory/memory_index.json", bob), nonce, plain))
	write(dir, "hub-bob-session-passphrase.bin", seal(pass, 2, place("sessions/chat.json", bob), nonce, session))
	write(dir, "hub-root-context-long.bin", seal(long, 2, place("contexts/ctx-hub.json", ""), nonce, context))
}
