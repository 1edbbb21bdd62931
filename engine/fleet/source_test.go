package fleet

import (
	"context"
	"crypto/ed25519"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

func TestLoadHosts(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "fleet.txt")
	if err := os.WriteFile(file, []byte("# the rack\nnode01:2222\nnode02\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		spec     string
		want     []string
		fileErr  bool
		parseErr bool
	}{
		{spec: "node01:2222,node02:2200", want: []string{"node01:2222", "node02:2200"}},
		{spec: "@" + file, want: []string{"node01:2222", "node02:2222"}},
		{spec: "@" + filepath.Join(dir, "none"), fileErr: true},
		{spec: "@" + dir, fileErr: true},
		{spec: "bad host!", parseErr: true},
	} {
		got, err := LoadHosts(c.spec)
		var fe *HostsFileError
		switch {
		case c.fileErr:
			if !errors.As(err, &fe) || fe.Path != strings.TrimPrefix(c.spec, "@") || !strings.HasPrefix(err.Error(), fe.Path+": ") {
				t.Errorf("%s: %v, want a HostsFileError", c.spec, err)
			}
		case c.parseErr:
			if err == nil || errors.As(err, &fe) {
				t.Errorf("%s: %v, want ParseHosts's error", c.spec, err)
			}
		case err != nil || !slices.Equal(got, c.want):
			t.Errorf("%s: %q %v, want %q", c.spec, got, err, c.want)
		}
	}
}

func TestHTTPURL(t *testing.T) {
	for s, want := range map[string]bool{
		"http://prometheus:9090": true, "https://p.example/": true,
		"prometheus:9090": false, "ftp://p:21": false, "http://": false, "": false, "http://[::1": false,
	} {
		if got := HTTPURL(s); got != want {
			t.Errorf("HTTPURL(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestLoadHostsInlineItems: a bad host on the command line is named by its
// place in the list and quoted whole; line numbers and a host part alone
// are for an @FILE.
func TestLoadHostsInlineItems(t *testing.T) {
	for _, c := range []struct{ spec, want string }{
		{"127.0.0.1:abc", `item 1 "127.0.0.1:abc": the port after ':' is not a number from 1 to 65535`},
		{"node01,node02:0", `item 2 "node02:0": the port after ':' is not a number`},
		{"a!,node02,b!", `items 1, 3 are not hosts (want HOST or HOST:PORT, comma-separated); item 1 "a!": not a host name or address`},
		{"op@node01", `item 1 "op@node01": a login name before '@'`},
	} {
		_, err := LoadHosts(c.spec)
		var ie *ItemsError
		if !errors.As(err, &ie) || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "line") {
			t.Errorf("%s: %v, want an ItemsError %q", c.spec, err, c.want)
		}
	}
}

func TestLoginDefaults(t *testing.T) {
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("USER", "op")
	t.Setenv("SSH_AUTH_SOCK", "/run/agent.sock")
	sshDir := filepath.Join(home, ".ssh")
	for _, c := range []struct {
		name       string
		in         SSHOptions
		user, sock string
		sshDir     string
		defaults   bool
	}{
		{name: "all from the environment", user: "op", sock: "/run/agent.sock", sshDir: sshDir, defaults: true},
		{name: "named login and keys", in: SSHOptions{User: "ops", Identities: []string{"/k"}}, user: "ops", sock: "/run/agent.sock"},
		{name: "named agent", in: SSHOptions{AgentSocket: "/other"}, user: "op", sock: "/other", sshDir: sshDir, defaults: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := c.in
			o.LoginDefaults()
			if o.User != c.user || o.AgentSocket != c.sock || o.SSHDir != c.sshDir || (len(o.DefaultIdentities) > 0) != c.defaults {
				t.Errorf("%+v", o)
			}
			if c.defaults && !slices.Equal(o.DefaultIdentities, []string{filepath.Join(sshDir, "id_ed25519")}) {
				t.Errorf("default identities %q", o.DefaultIdentities)
			}
		})
	}
	// Without $USER (cron, systemd, env -i) the login is the OS user's,
	// as ssh's, not a name of fgtop's.
	t.Setenv("USER", "")
	if me, err := user.Current(); err == nil {
		var o SSHOptions
		o.LoginDefaults()
		if o.User != me.Username {
			t.Errorf("without $USER: login %q, want the OS user %q", o.User, me.Username)
		}
	}
	if got := DefaultKnownHostsFiles(); len(got) != 2 || got[0] != filepath.Join(sshDir, "known_hosts") || got[1] != "/etc/ssh/ssh_known_hosts" {
		t.Errorf("DefaultKnownHostsFiles() = %q", got)
	}
}

func TestWaitAtMost(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	for _, c := range []struct {
		name string
		wait func()
		max  time.Duration
	}{
		{"ends at once", func() {}, time.Second},
		{"hangs", func() { <-release }, 2 * time.Second},
	} {
		s := &Source{Wait: c.wait}
		start := time.Now()
		s.WaitAtMost(200 * time.Millisecond)
		if d := time.Since(start); d > c.max {
			t.Errorf("%s: waited %s", c.name, d)
		}
	}
}

// fakeProm answers every query with an empty vector, after delay, or
// fails with status.
func fakeProm(t *testing.T, delay time.Duration, status int) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		if status != 0 {
			http.Error(w, `{"status":"error","errorType":"internal","error":"broken"}`, status)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[]}}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// Read's and AtFunc's findings, each in its words.
func TestReadPrometheusFindings(t *testing.T) {
	at := time.Now().Add(-time.Hour)
	for _, c := range []struct {
		name   string
		delay  time.Duration
		status int
		at     time.Time
		want   string
	}{
		{name: "no series now", want: "fleet: URL has no fgtop series (does it scrape fgtop exporter or serve --metrics-listen?)"},
		{name: "no series then", at: at, want: "fleet: URL has no fgtop series near " + AtStamp(at) + " (within --lookback 15m0s before it, or after it)"},
		{name: "too slow", delay: 2 * time.Second, want: "fleet: URL did not answer within --timeout 300ms"},
		{name: "too slow then", delay: 2 * time.Second, at: at, want: "fleet --at " + AtStamp(at) + ": URL did not answer within --timeout 300ms"},
		{name: "fails", status: http.StatusInternalServerError, want: "fleet: "},
		{name: "fails then", status: http.StatusInternalServerError, at: at, want: "fleet --at " + AtStamp(at) + ": "},
	} {
		t.Run(c.name, func(t *testing.T) {
			url := fakeProm(t, c.delay, c.status)
			po := PromOptions{URL: url, Interval: time.Second, Timeout: 300 * time.Millisecond, Lookback: 15 * time.Minute}
			ctx, cancel := context.WithTimeout(t.Context(), po.Timeout)
			defer cancel()
			src, err := StartPrometheus(ctx, po, Options{StaleAfter: time.Second, UnreachableAfter: 2 * time.Second}, false)
			if err != nil {
				t.Fatal(err)
			}
			if src.Desc != "prometheus: "+url || src.Prom == nil {
				t.Errorf("source %+v", src)
			}
			_, err = src.Read(ctx, po, c.at, time.Minute)
			want := strings.ReplaceAll(c.want, "URL", url)
			if err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("Read: %v, want %q", err, want)
			}
			src.Wait()
		})
	}
	url := fakeProm(t, 0, 0)
	po := PromOptions{URL: url, Interval: time.Second, Timeout: time.Second, Lookback: time.Minute}
	src, err := StartPrometheus(t.Context(), po, Options{StaleAfter: time.Second, UnreachableAfter: 2 * time.Second}, false)
	if err != nil {
		t.Fatal(err)
	}
	_, err = src.AtFunc(t.Context(), po, time.Minute)(t.Context(), at)
	if want := url + " has no fgtop series near " + AtStamp(at) + " (within --lookback 1m0s"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("AtFunc: %v, want %q", err, want)
	}
	// The console's :at against a store that does not answer in time
	// says which and how long, not "context deadline exceeded".
	slow := fakeProm(t, 2*time.Second, 0)
	spo := PromOptions{URL: slow, Interval: time.Second, Timeout: 300 * time.Millisecond, Lookback: time.Minute}
	ssrc, err := StartPrometheus(t.Context(), spo, Options{StaleAfter: time.Second, UnreachableAfter: 2 * time.Second}, false)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ssrc.AtFunc(t.Context(), spo, time.Minute)(t.Context(), at)
	if want := slow + " did not answer within 300ms"; err == nil || err.Error() != want {
		t.Errorf("AtFunc, slow store: %v, want %q", err, want)
	}
	// The caller's deadline before the store's bound: the time it gave.
	atFn := ssrc.AtFunc(t.Context(), spo, time.Minute)
	short, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	_, err = atFn(short, at)
	cancel()
	if want := slow + " did not answer within 100ms"; err == nil || err.Error() != want {
		t.Errorf("AtFunc, the caller's deadline first: %v, want %q", err, want)
	}
	// The live console's refresh against a store that does not answer in
	// time, as every node's reason: the store and the bound.
	if _, err := ssrc.Prom.Refresh(t.Context()); err == nil || err.Error() != slow+" did not answer within 300ms" {
		t.Errorf("Refresh, slow store: %v", err)
	}
	if _, err := StartPrometheus(t.Context(), PromOptions{URL: "::bad"}, Options{}, false); err == nil {
		t.Error("StartPrometheus took a bad URL")
	}
}

// Over SSH with no hosts: a one-shot read now is the tracker's empty
// answer, one at a moment asks nobody.
func TestReadSSHNoHosts(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	dir := t.TempDir()
	_, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	block, err := gossh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	key, known := filepath.Join(dir, "id"), filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(key, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(known, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	o := SSHOptions{User: "op", Identities: []string{key}, KnownHosts: []string{known}}
	for _, follow := range []bool{false, true} {
		src, err := StartSSH(ctx, nil, o, Options{StaleAfter: time.Second, UnreachableAfter: 2 * time.Second}, follow)
		if err != nil {
			t.Fatal(err)
		}
		if (src.Desc == "ssh: 0 hosts") != follow {
			t.Errorf("follow %v: desc %q", follow, src.Desc)
		}
		fl, err := src.Read(ctx, PromOptions{Timeout: time.Second}, time.Now().Add(-time.Hour), time.Minute)
		if err != nil || len(fl.Nodes) != 0 {
			t.Errorf("follow %v: at a moment: %+v %v", follow, fl, err)
		}
		if follow {
			cancel()
		}
		src.Wait()
	}
}
