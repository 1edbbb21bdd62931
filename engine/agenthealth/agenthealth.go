// Package agenthealth asks a Backend.AI agent whether it is alive: GET
// /health on its service address ([agent] service-addr), which the agent
// answers with JSON naming its status and version.
//
// Every check is bounded: a timeout for the whole exchange and a cap on
// the body read, so a hung or hostile peer costs at most that.
package agenthealth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/fgtop/fgtop/internal/holdread"
	"github.com/fgtop/fgtop/internal/untrusted"
	"github.com/fgtop/fgtop/model"
)

// DefaultTimeout bounds one check, connect to last byte.
const DefaultTimeout = 2 * time.Second

// MaxBody is the most of an answer that is read: Backend.AI's health JSON
// is a few hundred bytes.
const MaxBody = 64 << 10

// maxField caps what is kept of the agent's status and version.
const maxField = 64

// URL is the /health URL for a service address HOST:PORT. An agent bound
// to every address (0.0.0.0, ::, or no host) is asked on loopback.
func URL(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("service address %q: %w", addr, err)
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/health", nil
}

// Answer is what a health JSON says.
type Answer struct {
	Status    string
	Version   string
	Component string
}

// Parse reads the agent's health JSON: an object with a string "status";
// "version" and "component" are optional strings. The strings are cut to
// 64 characters and stripped of control characters: they end up on an
// operator's terminal.
func Parse(b []byte) (Answer, error) {
	if len(b) > MaxBody {
		return Answer{}, fmt.Errorf("answer is %d bytes, more than %d", len(b), MaxBody)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return Answer{}, fmt.Errorf("not a JSON object: %w", err)
	}
	var a Answer
	for key, dst := range map[string]*string{"status": &a.Status, "version": &a.Version, "component": &a.Component} {
		v, ok := raw[key]
		if !ok {
			continue
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return Answer{}, fmt.Errorf("%q is not a string", key)
		}
		*dst = clean(s)
	}
	if _, ok := raw["status"]; !ok {
		return Answer{}, errors.New(`no "status"`)
	}
	return a, nil
}

// clean keeps the printable runes of s, at most maxField of them.
func clean(s string) string {
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n == maxField {
			b.WriteString("…")
			break
		}
		if !unicode.IsPrint(r) {
			continue
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// Checker asks agents for their health. It keeps idle connections between
// checks (the agent's HTTP server keeps them alive), so a check every few
// seconds costs no new connection. Use one per engine.
type Checker struct {
	client  *http.Client
	timeout time.Duration
}

// NewChecker returns a Checker whose checks take at most timeout
// (DefaultTimeout when zero).
func NewChecker(timeout time.Duration) *Checker {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	tr := &http.Transport{
		// The agent is on this host: an HTTP_PROXY in the environment must
		// not capture the check.
		Proxy: nil,
		// A port that speaks first is read as the answer, not logged
		// over the console (package holdread).
		DialContext:            holdread.Dial((&net.Dialer{Timeout: timeout}).DialContext),
		MaxIdleConnsPerHost:    1,
		IdleConnTimeout:        30 * time.Second,
		ResponseHeaderTimeout:  timeout,
		MaxResponseHeaderBytes: 16 << 10,
	}
	return &Checker{
		client: &http.Client{
			Transport: tr,
			Timeout:   timeout,
			// A health endpoint that redirects is not the agent's.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		timeout: timeout,
	}
}

// Close drops the idle connections.
func (c *Checker) Close() { c.client.CloseIdleConnections() }

// Check asks the agent at addr (HOST:PORT) once.
func (c *Checker) Check(ctx context.Context, addr string) model.AgentHealth {
	url, err := URL(addr)
	if err != nil {
		return model.AgentHealth{State: model.AgentUnreachable, Detail: err.Error()}
	}
	h := model.AgentHealth{URL: url}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		h.State, h.Detail = model.AgentUnreachable, err.Error()
		return h
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "fgtop")
	resp, err := c.client.Do(req)
	if err != nil {
		h.State, h.Detail = classify(err, c.timeout)
		return h
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBody+1))
	if err != nil {
		h.State, h.Detail = classify(err, c.timeout)
		return h
	}
	if resp.StatusCode != http.StatusOK {
		h.State, h.Detail = model.AgentUnreachable, fmt.Sprintf("answered HTTP %d, not the agent's health", resp.StatusCode)
		return h
	}
	a, err := Parse(body)
	if err != nil {
		h.State, h.Detail = model.AgentUnreachable, "the answer is not the agent's health JSON: "+err.Error()
		return h
	}
	h.State, h.Status, h.Version = model.AgentUp, a.Status, a.Version
	return h
}

// classify tells a closed port (down: no agent listens) from everything
// else (unreachable: it cannot be told).
func classify(err error, timeout time.Duration) (model.AgentHealthState, string) {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return model.AgentDown, "connection refused: no agent listens there"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return model.AgentUnreachable, fmt.Sprintf("no answer within %s", timeout)
	}
	if _, sent, ok := strings.Cut(err.Error(), "malformed HTTP response "); ok {
		// Another protocol's port, as net/http's "transport connection
		// broken" after the URL.
		return model.AgentUnreachable, "not an HTTP server, so not the agent's health: it sent " + untrusted.Text(sent)
	}
	return model.AgentUnreachable, err.Error()
}
