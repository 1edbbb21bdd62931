// Package sshtest holds the fixtures the tests of fgtop serve and the
// fleet share: key pairs, authorized_keys lines with roles, the server's
// host key as a client pins it, a client dial that checks it, and a fake
// peer that answers exec requests as a test says. It is for tests only
// (like net/http/httptest) and fails the test on any setup error.
package sshtest

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/fgtop/fgtop/engine/report"
)

// OperatorOption is the authorized_keys option that makes a key an
// operator.
const OperatorOption = `environment="FGTOP_ROLE=operator"`

// Key is a fresh ed25519 key pair.
type Key struct {
	gossh.Signer
	Priv ed25519.PrivateKey
}

// NewKey generates a key pair.
func NewKey(t testing.TB) Key {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return Key{Signer: s, Priv: priv}
}

// Fingerprint is the key's OpenSSH SHA256 fingerprint.
func (k Key) Fingerprint() string { return gossh.FingerprintSHA256(k.PublicKey()) }

// AuthLine is the key's authorized_keys line, with options (may be "")
// and a comment.
func (k Key) AuthLine(opts, comment string) string {
	line := strings.TrimSpace(string(gossh.MarshalAuthorizedKey(k.PublicKey())))
	if opts != "" {
		line = opts + " " + line
	}
	return line + " " + comment + "\n"
}

// WritePrivate writes the private key in OpenSSH's format, mode 0600, for
// the real ssh client's -i.
func (k Key) WritePrivate(t testing.TB, path string) {
	t.Helper()
	block, err := gossh.MarshalPrivateKey(k.Priv, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Keys are the three people of a serve test: an operator, a viewer and
// a stranger nobody authorized.
type Keys struct {
	Operator, Viewer, Stranger Key
}

// NewKeys generates the three key pairs.
func NewKeys(t testing.TB) Keys {
	t.Helper()
	return Keys{Operator: NewKey(t), Viewer: NewKey(t), Stranger: NewKey(t)}
}

// AuthorizedKeys is an authorized_keys file that makes Operator an
// operator (olga@ops) and Viewer a viewer (victor@watch).
func (k Keys) AuthorizedKeys() string {
	return "# fgtop serve keys\n" + k.Operator.AuthLine(OperatorOption, "olga@ops") + k.Viewer.AuthLine("", "victor@watch")
}

// WriteAtomic replaces a file the way a careful operator does (a temp
// file renamed over it), so a reader never sees half of it.
func WriteAtomic(t testing.TB, path, data string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// HostKey reads the public half of the server's host key file, for a
// client to pin.
func HostKey(t testing.TB, path string) gossh.PublicKey {
	t.Helper()
	pemBytes, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	hk, err := gossh.ParsePrivateKey(pemBytes)
	if err != nil {
		t.Fatal(err)
	}
	return hk.PublicKey()
}

// KnownHosts is the known_hosts line of a server on addr (HOST:PORT), for
// the real ssh client's UserKnownHostsFile.
func KnownHosts(addr string, hostKey gossh.PublicKey) string {
	host, port, _ := net.SplitHostPort(addr)
	return fmt.Sprintf("[%s]:%s %s", host, port, gossh.MarshalAuthorizedKey(hostKey))
}

// Dial connects to addr as user with key, accepting only hostKey.
func Dial(addr, user string, key gossh.Signer, hostKey gossh.PublicKey, timeout time.Duration) (*gossh.Client, error) {
	c, err := gossh.Dial("tcp", addr, &gossh.ClientConfig{
		User: user, Auth: []gossh.AuthMethod{gossh.PublicKeys(key)},
		HostKeyCallback: gossh.FixedHostKey(hostKey), Timeout: timeout,
	})
	if err != nil {
		return nil, fmt.Errorf("dial %s as %s: %w", addr, user, err)
	}
	return c, nil
}

// Buffer is a writer a test reads while another goroutine writes to it
// (a server's log, a session's output).
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p) //nolint:wrapcheck // bytes.Buffer never fails
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// ExecPeer is a fake `fgtop serve` on a loopback port that lets any key
// in and answers every exec request with serve, run on its own goroutine
// with the session's channel (which it closes when done, or leaves to
// the peer). The listener closes when the test ends. It returns the
// address and the host key the client should pin.
func ExecPeer(t testing.TB, serve func(ch gossh.Channel)) (addr string, host Key) {
	t.Helper()
	host = NewKey(t)
	cfg := &gossh.ServerConfig{PublicKeyCallback: func(gossh.ConnMetadata, gossh.PublicKey) (*gossh.Permissions, error) { return nil, nil }}
	cfg.AddHostKey(host.Signer)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serveExec(c, cfg, serve)
		}
	}()
	return ln.Addr().String(), host
}

func serveExec(c net.Conn, cfg *gossh.ServerConfig, serve func(ch gossh.Channel)) {
	defer c.Close()
	sc, chans, reqs, err := gossh.NewServerConn(c, cfg)
	if err != nil {
		return
	}
	defer sc.Close()
	go gossh.DiscardRequests(reqs)
	for nc := range chans {
		ch, creqs, err := nc.Accept()
		if err != nil {
			return
		}
		go func() {
			for r := range creqs {
				_ = r.Reply(r.Type == "exec", nil)
				if r.Type == "exec" {
					go serve(ch)
				}
			}
		}()
	}
}

// StreamPeer is an ExecPeer whose exec answer is a `snapshot --follow`
// stream: first, then heartbeats every gap (0: as fast as the client
// takes them, a flood), until the client goes.
func StreamPeer(t testing.TB, first []byte, gap time.Duration) (addr string, host Key) {
	t.Helper()
	return CountedStreamPeer(t, first, gap, nil)
}

// CountedStreamPeer is StreamPeer counting in sent, when not nil, the
// heartbeats the client's window let it write (how far a flood got).
func CountedStreamPeer(t testing.TB, first []byte, gap time.Duration, sent *atomic.Int64) (addr string, host Key) {
	t.Helper()
	return ExecPeer(t, func(ch gossh.Channel) {
		defer ch.Close()
		if _, err := ch.Write(first); err != nil {
			return
		}
		var f report.Follower
		for {
			hb, _ := f.Heartbeat(time.Now())
			if _, err := ch.Write(hb); err != nil {
				return
			}
			if sent != nil {
				sent.Add(1)
			}
			if gap > 0 {
				time.Sleep(gap)
			}
		}
	})
}
