package fleet

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fgtop/fgtop/internal/safefile"
	gossh "golang.org/x/crypto/ssh"
)

// Source is a started fleet: its tracker, fed until the context it was
// started with ends, and what asks the nodes at a moment.
type Source struct {
	Tracker  *Tracker
	Settings Settings
	// Wait waits for the source's goroutines to end (after its context
	// did) and lets go of ssh-agent.
	Wait func()
	// Prom is the Prometheus source, nil over SSH.
	Prom *PromClient
	// Hosts, SSHConfig and SSH ask each node's own record (HostsAt,
	// HistoryHosts), over SSH only.
	Hosts     []string
	SSHConfig *gossh.ClientConfig
	SSH       SSHOptions
	// Desc names the source in the console ("ssh: 3 hosts",
	// "prometheus: URL"); "" for a source that follows nothing.
	Desc string
}

// StartSSH logs in to hosts as o says. With follow it follows each one's
// snapshot stream into the tracker; without, it dials nothing until asked
// (a one-shot question at a moment, fleet history). An error is o's
// (a key, a known_hosts file, ssh-agent).
func StartSSH(ctx context.Context, hosts []string, o SSHOptions, to Options, follow bool) (*Source, error) {
	cfg, closeAgent, err := ClientConfig(o)
	if err != nil {
		return nil, err
	}
	t := NewTracker(hosts, "ssh", to)
	src := &Source{Tracker: t, Settings: o.Settings, Wait: closeAgent, Hosts: hosts, SSHConfig: cfg, SSH: o}
	if !follow {
		return src, nil
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = t.Run(ctx) }()
	for _, h := range hosts {
		wg.Add(1)
		go func() { defer wg.Done(); FollowSSH(ctx, t, h, cfg, o) }()
	}
	src.Wait = func() { wg.Wait(); closeAgent() }
	src.Desc = fmt.Sprintf("ssh: %d hosts", len(hosts))
	return src, nil
}

// StartPrometheus reads the fleet through Prometheus's HTTP API: the
// nodes are whatever fgtop exporters it scrapes, so the tracker's nodes
// come and go with its answers. With follow it queries every
// po.Interval; without, it queries only when asked. An error is po's.
func StartPrometheus(ctx context.Context, po PromOptions, to Options, follow bool) (*Source, error) {
	c, err := NewPromClient(po)
	if err != nil {
		return nil, err
	}
	to.Dynamic = true
	t := NewTracker(nil, "prometheus", to)
	src := &Source{Tracker: t, Settings: po.Settings, Prom: c, Desc: "prometheus: " + po.URL, Wait: func() {}}
	if !follow {
		return src, nil
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = t.Run(ctx) }()
	go func() { defer wg.Done(); FollowPrometheus(ctx, t, c) }()
	src.Wait = wg.Wait
	return src, nil
}

// SourceGrace is how long a fleet waits for its sources to end once it
// is done with them (WaitAtMost).
const SourceGrace = time.Second

// WaitAtMost waits for the source to end for at most d: one busy with a
// node's answer gets a moment, not the process's life.
func (s *Source) WaitAtMost(d time.Duration) {
	done := make(chan struct{})
	go func() {
		s.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(d):
	}
}

// noSeriesNear says Prometheus had no fgtop series near at.
func noSeriesNear(po PromOptions, at time.Time) error {
	return fmt.Errorf("%s has no fgtop series near %s (within --lookback %s before it, or after it)", po.URL, AtStamp(at), po.Lookback)
}

// AtFunc is the console's :at, [ and ]: the fleet at a moment, read as a
// one-shot run reads it (with po's client, or over SSH from each node's
// record), each read bounded by po.Timeout and ended with ctx (the
// console) or with its own context (a newer read replaces it).
func (s *Source) AtFunc(ctx context.Context, po PromOptions, unreachableAfter time.Duration) func(context.Context, time.Time) (*Fleet, error) {
	var prom *PromClient
	if s.Prom != nil {
		// A client of its own: the live one's cache of down nodes is the
		// present's, and its lock is held across the live refresh.
		var err error
		if prom, err = NewPromClient(po); err != nil {
			prom = s.Prom
		}
	}
	return func(rctx context.Context, at time.Time) (*Fleet, error) {
		start := time.Now()
		rctx, cancel := context.WithTimeout(rctx, po.Timeout)
		defer cancel()
		defer context.AfterFunc(ctx, cancel)()
		if prom != nil {
			fl, err := prom.At(rctx, at, unreachableAfter)
			if err != nil && errors.Is(rctx.Err(), context.DeadlineExceeded) {
				// The time it was given: the caller's own deadline may
				// have come before po.Timeout.
				given := po.Timeout
				if dl, ok := rctx.Deadline(); ok && dl.Sub(start) < given {
					given = dl.Sub(start).Round(10 * time.Millisecond)
				}
				return nil, fmt.Errorf("%s did not answer within %s", po.URL, given)
			}
			if err != nil {
				return nil, err
			}
			if len(fl.Nodes) == 0 {
				return nil, noSeriesNear(po, at)
			}
			return fl, nil
		}
		return HostsAt(rctx, s.Hosts, s.SSHConfig, s.SSH, at), nil
	}
}

// Read is a one-shot run's fleet (--once, --fit, --at): at a moment when
// at is not zero (from Prometheus, or each node's record over SSH), else
// now: Prometheus's answer once its nodes have a snapshot, or the nodes'
// first snapshots over SSH, waiting at most po.Timeout either way. po are
// the options the source was started with. Every error is a finding
// about the fleet, not the caller's usage.
func (s *Source) Read(ctx context.Context, po PromOptions, at time.Time, unreachableAfter time.Duration) (*Fleet, error) {
	switch {
	case s.Prom != nil && !at.IsZero():
		fl, err := s.Prom.At(ctx, at, unreachableAfter)
		switch {
		// As a read now says it: "context deadline exceeded" names
		// neither the store nor the flag that bounds it.
		case err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
			return nil, fmt.Errorf("fleet --at %s: %s did not answer within --timeout %s", AtStamp(at), po.URL, po.Timeout)
		case err != nil && ctx.Err() != nil:
			return nil, fmt.Errorf("fleet --at %s: stopped before %s answered", AtStamp(at), po.URL)
		case err != nil:
			return nil, fmt.Errorf("fleet --at %s: %w", AtStamp(at), err)
		}
		if len(fl.Nodes) == 0 {
			return nil, fmt.Errorf("fleet: %w", noSeriesNear(po, at))
		}
		return fl, nil
	case !at.IsZero():
		return HostsAt(ctx, s.Hosts, s.SSHConfig, s.SSH, at), nil
	case s.Prom != nil:
		// Nodes whose exporter has published no snapshot yet are given
		// the timeout for it, as over SSH the first snapshots are awaited.
		nodes, err := s.Prom.RefreshAnswered(ctx, po.Timeout)
		switch {
		case err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
			return nil, fmt.Errorf("fleet: %s did not answer within --timeout %s", po.URL, po.Timeout)
		case err != nil && ctx.Err() != nil:
			return nil, fmt.Errorf("fleet: stopped before %s answered", po.URL)
		case err != nil:
			return nil, fmt.Errorf("fleet: %w", err)
		case len(nodes) == 0:
			return nil, fmt.Errorf("fleet: %s has no fgtop series (does it scrape fgtop exporter or serve --metrics-listen?)", po.URL)
		}
		return PromFleet(nodes, time.Now(), unreachableAfter), nil
	}
	return WaitAnswered(ctx, s.Tracker, po.Timeout), nil
}

// HostsFileError is an @FILE of --hosts that cannot be read.
type HostsFileError struct {
	Path string
	Err  error
}

func (e *HostsFileError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *HostsFileError) Unwrap() error { return e.Err }

// LoadHosts reads the nodes of --hosts: H:P,H:P, or @FILE with one host a
// line (at most 1 MiB, a regular file). A file that cannot be read is a
// *HostsFileError; a file that does not parse is ParseHosts's error, and an
// inline list's bad items an *ItemsError.
func LoadHosts(spec string) ([]string, error) {
	text := spec
	if path, ok := strings.CutPrefix(text, "@"); ok {
		data, err := safefile.ReadFile(path, 1<<20)
		if err != nil {
			return nil, &HostsFileError{Path: path, Err: err}
		}
		return ParseHosts(string(data))
	}
	return parseHosts(text, true)
}

// DefaultKnownHostsFiles are the known_hosts files ssh reads when none is
// named: the user's, then the system's.
func DefaultKnownHostsFiles() []string {
	return []string{DefaultKnownHosts(), "/etc/ssh/ssh_known_hosts"}
}

// LoginDefaults fills in what ssh takes from the environment where o
// leaves it empty: the login ($USER, else the OS user name, as ssh logs
// in), ssh-agent (SSH_AUTH_SOCK), and,
// when no key is named, ~/.ssh/id_* and ~/.ssh (for the words when none
// of them is a key).
func (o *SSHOptions) LoginDefaults() {
	if o.User == "" {
		o.User = loginName()
	}
	if o.AgentSocket == "" {
		o.AgentSocket = os.Getenv("SSH_AUTH_SOCK")
	}
	if len(o.Identities) == 0 {
		home, _ := os.UserHomeDir()
		o.DefaultIdentities = DefaultIdentityFiles(home)
		if home != "" {
			o.SSHDir = filepath.Join(home, ".ssh")
		}
	}
}

// loginName is $USER, else the OS user name: $USER is unset under cron,
// systemd units and env -i, and ssh logs in as the OS user there ("" only
// when the OS has no name for the process either).
func loginName() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return ""
}

// HTTPURL reports whether s is an http or https URL with a host, as
// --prometheus wants (the client would say "unsupported protocol scheme").
func HTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}
