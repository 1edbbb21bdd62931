package sshserve

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	gossh "golang.org/x/crypto/ssh"
)

// LoadOrCreateHostKey returns the PEM of the server's host key at path.
// On first start (no file) it generates an ed25519 key and writes it with
// mode 0600; afterwards it reuses the file, so clients' known_hosts stay
// valid. Like sshd, it refuses a key file that group or others may read or
// write: a leaked host key lets anyone impersonate the server.
func LoadOrCreateHostKey(path string) (pemBytes []byte, created bool, err error) {
	data, err := readHostKey(path)
	if err == nil {
		return data, false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, false, err
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, false, fmt.Errorf("host key: generate: %w", err)
	}
	block, err := gossh.MarshalPrivateKey(priv, "fgtop serve host key")
	if err != nil {
		return nil, false, fmt.Errorf("host key: encode: %w", err)
	}
	data = pem.EncodeToMemory(block)
	// O_EXCL: two servers starting at once must not overwrite each other's
	// key; the loser reads the winner's file instead.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		data, err = readHostKey(path)
		return data, false, err
	}
	if err != nil {
		dir := filepath.Dir(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, false, fmt.Errorf("host key %s: cannot be created: no directory %s (create it, or name a file in one that exists)", path, dir)
		case errors.Is(err, fs.ErrPermission):
			return nil, false, fmt.Errorf("host key %s: cannot be created: permission denied in %s (name a file where this user may write)", path, dir)
		}
		return nil, false, fmt.Errorf("host key %s: %w", path, err)
	}
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		_ = os.Remove(path) // a half-written key would fail every later start
		return nil, false, fmt.Errorf("host key: write %s: %w", path, werr)
	}
	return data, true, nil
}

// readHostKey reads an existing host key, checking its mode and that it
// parses.
func readHostKey(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("host key: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("host key %s: not a regular file", path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("host key: %w", err)
	}
	if _, err := gossh.ParsePrivateKey(data); err != nil {
		// The library's words ("ssh: no key found") did not say what was
		// wrong with the file, nor what to do: a .pub named by mistake
		// is the likely slip.
		var pm *gossh.PassphraseMissingError
		if errors.As(err, &pm) {
			return nil, fmt.Errorf("host key %s: protected by a passphrase, which fgtop serve cannot ask for: remove it (ssh-keygen -p -N '' -f %s), or name a path where no file is to have a key made", path, path)
		}
		return nil, fmt.Errorf("host key %s: not an SSH private key (%w): name a private key file, not its .pub, or a path where no file is to have a key made", path, err)
	}
	// After the parse: a .pub named by mistake (mode 0644, as public keys
	// are) was told to chmod 600 itself, and only then that it is no
	// private key.
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("host key %s: mode %04o lets others read it: chmod 600 %s", path, perm, path)
	}
	return data, nil
}
