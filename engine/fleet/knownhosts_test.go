//go:build unix

package fleet

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/fgtop/fgtop/internal/sshtest"
)

// TestKnownHostsSkipsUnreadableLines: a known_hosts line no ssh can read
// (the operator tour's "garbage line here", a key cut short, ...) is left
// out with a warning naming the file and the line, as OpenSSH skips it,
// and the file's other lines still let the fleet log in to a real SSH
// server on loopback. Before, knownhosts refused the whole file and every
// fleet command stopped ("knownhosts: KH:6: ssh: short read").
func TestKnownHostsSkipsUnreadableLines(t *testing.T) {
	addr, host := sshtest.ExecPeer(t, func(ch gossh.Channel) { _ = ch.Close() })
	good := strings.TrimSuffix(sshtest.KnownHosts(addr, host.PublicKey()), "\n")
	hostPart, typ, blob := splitKnownHostsLine(t, good)
	for _, tc := range []struct {
		name, bad, why string
	}{
		{"the tour's garbage", "garbage line here", "the key is not a public key"},
		{"a key cut short", hostPart + " " + typ + " " + blob[:len(blob)-4], "the key is not a public key"},
		{"a key that is not base64", hostPart + " " + typ + " " + blob[:64] + "!" + blob[65:], "the key is not base64"},
		{"a host alone", "node01", "no key type and key"},
		{"no key", "node01 ssh-ed25519", "no key after the key type"},
		{"a type that is not the key's", "node01 ssh-rsa " + blob, "the key is not of the type the line names"},
		{"an unknown marker", "@trusted node01 " + typ + " " + blob, "a marker ssh does not know"},
		{"a bad hashed host", "|1|bm90|x! " + typ + " " + blob, "a hashed host name whose hash is not base64"},
		{"a hashed host of another kind", "|2|bm90|bm90 " + typ + " " + blob, "a hashed host name of a kind ssh does not write"},
		{"a negation alone", "node01,! " + typ + " " + blob, "a ! with no host name"},
		{"a bracket without a port", "[node01 " + typ + " " + blob, "a [host]:port that is not one"},
		{"a line too long", "node01 " + typ + " " + blob + " " + strings.Repeat("x", maxKnownHostsLine), "longer than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kh := filepath.Join(t.TempDir(), "known_hosts")
			// The bad line is line 2, between a comment and the good line,
			// in a file with CRLF endings on the good line.
			writeFile(t, kh, "# nodes\n"+tc.bad+"\n"+good+"\r\n")
			var warned []string
			cfg := knownHostsClient(t, kh, func(s string) { warned = append(warned, s) })
			c, err := gossh.Dial("tcp", addr, cfg)
			if err != nil {
				t.Fatalf("dial with the good line on line 3: %v", err)
			}
			_ = c.Close()
			want := fmt.Sprintf("known_hosts %s: left out 1 line that is no host key (ssh skips them too): line 2 (%s", kh, tc.why)
			if len(warned) != 1 || !strings.Contains(warned[0], want) {
				t.Errorf("warnings %q\nwant one holding %q", warned, want)
			}
		})
	}
}

// TestKnownHostsStillRefuses: skipping unreadable lines changes nothing
// for the readable ones: a changed key is refused naming the line of the
// key on file in the operator's file (not fgtop's copy), an unknown host
// is refused, a revoked key is refused, and a file of nothing but junk
// vouches for no one.
func TestKnownHostsStillRefuses(t *testing.T) {
	addr, host := sshtest.ExecPeer(t, func(ch gossh.Channel) { _ = ch.Close() })
	other := sshtest.NewKey(t).PublicKey()
	junk := "garbage line here\n"
	for _, tc := range []struct {
		name, file string
		changed    bool
		where      int // the line a changed key is on
		revoked    bool
	}{
		{"a changed key after junk", junk + junk + sshtest.KnownHosts(addr, other), true, 3, false},
		{"an unknown host", junk + sshtest.KnownHosts("10.9.9.9:2222", host.PublicKey()), false, 0, false},
		{"only junk", junk + "\n" + junk, false, 0, false},
		{"a revoked key", junk + "@revoked * " + string(gossh.MarshalAuthorizedKey(host.PublicKey())) + sshtest.KnownHosts(addr, host.PublicKey()), false, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kh := filepath.Join(t.TempDir(), "known_hosts")
			writeFile(t, kh, tc.file)
			c, err := gossh.Dial("tcp", addr, knownHostsClient(t, kh, nil))
			if err == nil {
				_ = c.Close()
				t.Fatal("the host was accepted")
			}
			var he *HostKeyError
			var re *knownhosts.RevokedError
			switch {
			case tc.revoked:
				if !errors.As(err, &re) || re.Revoked.Filename != kh {
					t.Errorf("revoked: %v (%+v), want a RevokedError naming %s", err, re, kh)
				}
			case !errors.As(err, &he):
				t.Errorf("%v: not a HostKeyError", err)
			case he.Changed != tc.changed:
				t.Errorf("changed %v, want %v: %v", he.Changed, tc.changed, err)
			case tc.changed && he.Where != fmt.Sprintf("%s:%d", kh, tc.where):
				t.Errorf("the key on file is at %q, want %s:%d", he.Where, kh, tc.where)
			}
		})
	}
}

// TestKnownHostsFileIsBounded: a known_hosts file over the bound is
// refused, unread, with the bound said.
func TestKnownHostsFileIsBounded(t *testing.T) {
	kh := filepath.Join(t.TempDir(), "known_hosts")
	f, err := os.Create(kh)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(maxKnownHostsFile + 1); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	id := filepath.Join(t.TempDir(), "id")
	sshtest.NewKey(t).WritePrivate(t, id)
	_, closeFn, err := ClientConfig(SSHOptions{Identities: []string{id}, KnownHosts: []string{kh}})
	closeFn()
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("file too large (%d bytes; the limit is %d)", maxKnownHostsFile+1, maxKnownHostsFile)) {
		t.Fatalf("a sparse known_hosts of 64 MiB and a byte: %v", err)
	}
}

// FuzzKnownHostsLine checks fgtop's reading of known_hosts lines against
// the knownhosts package's own on arbitrary input: a line is left out
// exactly when knownhosts would refuse it alone (so no readable line is
// lost and none that would stop knownhosts is kept), and whatever the
// file, knownhosts takes what is kept, with the line count unchanged.
func FuzzKnownHostsLine(f *testing.F) {
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, ed25519.SeedSize))
	pub, err := gossh.NewPublicKey(priv.Public())
	if err != nil {
		f.Fatal(err)
	}
	key := strings.TrimSpace(string(gossh.MarshalAuthorizedKey(pub)))
	for _, seed := range []string{
		"",
		"# a comment",
		"node01 " + key,
		"[10.0.0.1]:2222,node01 " + key + " comment\r",
		"@cert-authority *.example " + key,
		"@revoked * " + key,
		"@revoked",
		"@cert-authority @revoked x " + key,
		"|1|c2FsdA==|aGFzaA== " + key,
		"|1|c2FsdA==|aGFzaA==,x " + key,
		"|2|c2FsdA==|aGFzaA== " + key,
		"!node01,node02 " + key,
		"node01,!,x " + key,
		"[node01 " + key,
		"[node01]:22 " + key,
		"garbage line here",
		"node01 ssh-rsa " + strings.Fields(key)[1],
		"node01 " + key[:len(key)-3],
		"node01\t \tssh-ed25519\t" + strings.Fields(key)[1],
		"garbage line here\nnode01 " + key + "\n\n#\n@x y z\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		kept, skipped := filterKnownHosts(data)
		if got, want := bytes.Count(kept, []byte("\n")), len(bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))); len(data) > 0 && got != want {
			t.Fatalf("%d lines kept or blanked, the file has %d", got, want)
		}
		for _, s := range skipped {
			if s.Why == "" || s.Line < 1 {
				t.Fatalf("skipped %+v", s)
			}
		}
		all := filepath.Join(dir, "all")
		writeFile(t, all, string(kept))
		if _, err := knownhosts.New(all); err != nil {
			t.Fatalf("knownhosts refuses what fgtop kept: %v", err)
		}
		line, _, _ := bytes.Cut(data, []byte("\n"))
		if len(line) > maxKnownHostsLine {
			return
		}
		one := filepath.Join(dir, "one")
		writeFile(t, one, string(line))
		_, kerr := knownhosts.New(one)
		why := knownHostsLineProblem(line)
		if (kerr == nil) != (why == "") {
			t.Fatalf("line %q: knownhosts says %v, fgtop says %q", line, kerr, why)
		}
	})
}

// knownHostsClient is the fleet's client configuration with kh as its
// known_hosts and a fresh key to log in with.
func knownHostsClient(t *testing.T, kh string, warn func(string)) *gossh.ClientConfig {
	t.Helper()
	id := filepath.Join(t.TempDir(), "id")
	sshtest.NewKey(t).WritePrivate(t, id)
	cfg, closeFn, err := ClientConfig(SSHOptions{User: "t", Identities: []string{id}, KnownHosts: []string{kh}, Warn: warn, DialTimeout: 5 * time.Second})
	t.Cleanup(closeFn)
	if err != nil {
		t.Fatalf("known_hosts with junk in it: %v", err)
	}
	return cfg
}

// splitKnownHostsLine is a known_hosts line's host names, key type and
// key.
func splitKnownHostsLine(t *testing.T, line string) (string, string, string) {
	t.Helper()
	f := strings.Fields(line)
	if len(f) != 3 || len(f[2]) < 66 {
		t.Fatalf("known_hosts line %q", line)
	}
	return f[0], f[1], f[2]
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}
