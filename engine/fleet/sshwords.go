package fleet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/fgtop/fgtop/internal/untrusted"
	"github.com/fgtop/fgtop/model"
)

// defaultIdentityNames are ssh's IdentityFile defaults, in its order: the
// files looked for and the names the "no key" error lists are one list.
var defaultIdentityNames = []string{"id_rsa", "id_ecdsa", "id_ecdsa_sk", "id_ed25519", "id_ed25519_sk", "id_dsa"}

// DefaultIdentityFiles are the private keys ssh tries when none is named
// (its IdentityFile defaults), under home's .ssh; nil without a home.
func DefaultIdentityFiles(home string) []string {
	if home == "" {
		return nil
	}
	var out []string
	for _, n := range defaultIdentityNames {
		p := filepath.Join(home, ".ssh", n)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			out = append(out, p)
		}
	}
	return out
}

// dialErr words a failed TCP connect to a node: nothing listening, no
// answer at all, a name that does not resolve (with the known_hosts
// files' host names, where one is close), and what to check. The node's
// address is said beside it wherever it is shown.
func dialErr(err error, knownHosts []string) error {
	var dns *net.DNSError
	switch {
	case errors.As(err, &dns) && dns.IsNotFound:
		return fmt.Errorf("no such host %s (the name does not resolve)%s", untrusted.Text(dns.Name), knownNames(dns.Name, knownHostNames(knownHosts)))
	case errors.Is(err, syscall.ECONNREFUSED):
		return errors.New("not listening (connection refused): is fgtop serve running there, on this port? (systemctl status fgtop-serve on the node)")
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return errors.New("cannot be reached (no route to the host): check the address and the network")
	case isTimeout(err):
		return errors.New("no answer (connect timed out): check the address, and that a firewall lets the port through")
	}
	return fmt.Errorf("cannot connect: %w", err)
}

// maxNamesListed is how many known_hosts names a name that matches none
// lists.
const maxNamesListed = 8

// knownNames is what a host name that does not resolve is told of the
// names known_hosts has: the closest, or the list of a few, or what to
// check.
func knownNames(name string, known []string) string {
	if c := model.Closest(name, known); c != "" {
		return "; did you mean " + c + "? (a host in known_hosts)"
	}
	if len(known) == 0 || len(known) > maxNamesListed {
		return ": check the name in --hosts"
	}
	return ": check the name in --hosts (known_hosts has " + strings.Join(known, ", ") + ")"
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// handshakeErr words a failed SSH handshake: the node refused every key
// offered (naming where they came from), or another failure, with the
// library's text kept at the end for whoever debugs it. heard: the node
// sent something before it failed; sent: the first bytes of it.
func handshakeErr(err error, o SSHOptions, heard bool, sent []byte) error {
	msg := err.Error()
	if strings.Contains(msg, "unable to authenticate") {
		var from []string
		from = append(from, o.Identities...)
		from = append(from, o.DefaultIdentities...)
		if o.AgentSocket != "" {
			from = append(from, "ssh-agent")
		}
		return fmt.Errorf("the node refused the key (offered: %s): add the public key to the node's fgtop authorized_keys (fgtop serve --authorized-keys), or log in with another key (--identity FILE)",
			strings.Join(from, ", "))
	}
	if isTimeout(err) {
		if first, ok := notGreeting(sent); ok {
			return fmt.Errorf("sent %s, not an SSH greeting, then nothing more within %s of the connection: is it an SSH server (fgtop serve)?", first, o.DialTimeout)
		}
		if heard {
			return fmt.Errorf("the node began the SSH handshake but did not finish it within %s of the connection: fgtop serve there is stalled or overloaded (stopped by Ctrl-Z or a debugger, swapping, out of CPU)", o.DialTimeout)
		}
		// The kernel accepts for a stopped process: nothing but a
		// silent port tells it from a service that waits to be spoken to.
		return fmt.Errorf("the connection was accepted but nothing answered within %s: the process on this port is stalled (stopped by Ctrl-Z or a debugger, swapping, out of CPU), or it is not fgtop serve but a service that waits for its client to speak first", o.DialTimeout)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) {
		return closedErr(sent)
	}
	// The library says "ssh: handshake failed: ..." itself.
	lib := strings.TrimPrefix(err.Error(), "ssh: handshake failed: ")
	// A peer that speaks something else, or garbles SSH after its
	// greeting, is named by what it sent: "ssh: overflow reading version
	// string" alone does not say the port is not an SSH server. Other
	// failures (no common algorithm, ...) keep the library's words.
	if len(sent) > 0 {
		line, _, _ := bytes.Cut(sent, []byte("\n"))
		first := strconv.Quote(untrusted.Text(strings.TrimSpace(string(line))))
		switch {
		case strings.Contains(lib, "overflow reading version string"):
			return fmt.Errorf("sent %s, not an SSH greeting (%s): is it an SSH server (fgtop serve)?", first, lib)
		case bytes.HasPrefix(sent, []byte("SSH-")) && strings.Contains(lib, "invalid packet length"):
			return fmt.Errorf("the SSH server there (%s) broke the SSH protocol during the handshake (%s): is it fgtop serve, with nothing between that alters the connection?", first, lib)
		}
	}
	return fmt.Errorf("SSH handshake failed: %s", lib)
}

// closedErr words a node that hung up during the handshake, by what it had
// sent (its first bytes): a service of another protocol hangs up on an
// SSH greeting (an HTTP server answers "HTTP/1.1 400 Bad Request" first).
func closedErr(sent []byte) error {
	line, _, _ := bytes.Cut(sent, []byte("\n"))
	first := strconv.Quote(untrusted.Text(strings.TrimSpace(string(line))))
	switch {
	case len(sent) == 0:
		return errors.New("closed the connection during the SSH handshake, having sent nothing: is it an SSH server (fgtop serve)?")
	case bytes.HasPrefix(sent, []byte("SSH-")):
		return fmt.Errorf("the SSH server there (%s) closed the connection during the handshake", first)
	}
	return fmt.Errorf("closed the connection during the SSH handshake, having sent %s, not an SSH greeting: is it an SSH server (fgtop serve)?", first)
}

// handshakeCut words a handshake that the caller's context ended (the
// run's --timeout, or a stop): what the node had done by then tells a
// stopped process from an overloaded one, as handshakeErr does.
func handshakeCut(cerr error, heard bool, sent []byte) error {
	node := "the node had sent nothing: the process on this port is stalled (stopped by Ctrl-Z or a debugger, swapping, out of CPU), or it is not fgtop serve"
	if first, ok := notGreeting(sent); ok {
		node = "the node had sent " + first + ", not an SSH greeting: is it an SSH server (fgtop serve)?"
	} else if heard {
		node = "the node began it but did not finish: fgtop serve there is stalled or overloaded"
	}
	if errors.Is(cerr, context.DeadlineExceeded) {
		return &cutErr{msg: "the time given (--timeout) ran out during the SSH handshake (" + node + ")", cause: cerr}
	}
	return &cutErr{msg: "stopped during the SSH handshake (" + node + ")", cause: cerr}
}

// cutErr says a handshake cut short in fgtop's words and wraps the
// context's error for errors.Is, without "context deadline exceeded"
// after the words.
type cutErr struct {
	msg   string
	cause error
}

func (e *cutErr) Error() string { return e.msg }
func (e *cutErr) Unwrap() error { return e.cause }

// promErr words a Prometheus query that could not reach Prometheus, as
// dialErr does a node: nothing listening, no route, a name that does not
// resolve, and what to check. Other failures keep the query and the
// client's words.
func promErr(url, query string, err error) error {
	var dns *net.DNSError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("nothing listens at %s (connection refused): check --prometheus (e.g. http://prometheus:9090) and that Prometheus runs there", url)
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return fmt.Errorf("%s cannot be reached (no route to the host): check --prometheus and the network", url)
	case errors.As(err, &dns) && dns.IsNotFound:
		return fmt.Errorf("%s: no such host %q: check --prometheus", url, dns.Name)
	case strings.HasPrefix(url, "https://") && strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		// net/http's words, after the whole PromQL query: no hint of
		// what to change.
		return fmt.Errorf("%s answers plain HTTP, not HTTPS: give --prometheus http://%s", url, strings.TrimPrefix(url, "https://"))
	}
	if _, sent, ok := strings.Cut(err.Error(), "malformed HTTP response "); ok {
		// Another protocol's port (fgtop serve's SSH port, said as
		// net/http's "connection broken: malformed HTTP response").
		why := ""
		if strings.HasPrefix(sent, `"SSH-`) {
			why = " (an SSH server, as fgtop serve: the fleet reads those with --hosts H:P)"
		}
		return fmt.Errorf("%s is not an HTTP server: it sent %s%s; give Prometheus's URL, e.g. http://prometheus:9090", url, untrusted.Text(sent), why)
	}
	var api *v1.Error
	if errors.As(err, &api) && api.Type == v1.ErrClient && strings.Contains(api.Msg, "404") {
		// fgtop's exporter, or any server without the query API.
		return fmt.Errorf("%s has no Prometheus query API (/api/v1/query answers 404 Not Found): is it an exporter (fgtop exporter, serve --metrics-listen)? point --prometheus at the Prometheus (or VictoriaMetrics) that scrapes it", url)
	}
	// A server that is not Prometheus's query API, or a proxy in front of
	// one that failed: the client library's "bad_response: invalid
	// character '\x00' ..." or "server_error: server error: 502" names
	// neither the server nor what to check.
	if errors.As(err, &api) {
		switch {
		case api.Type == v1.ErrServer, api.Type == v1.ErrClient:
			return fmt.Errorf("%s answered query %s with HTTP %s%s, not Prometheus's answer: is Prometheus (or VictoriaMetrics) there healthy, and --prometheus its address (not a proxy's error page)?",
				url, query, strings.TrimPrefix(strings.TrimPrefix(api.Msg, "server error: "), "client error: "), bodyStart(api.Detail))
		case api.Type == v1.ErrBadResponse:
			return fmt.Errorf("%s answered query %s with what Prometheus's query API does not send (%s): is --prometheus a Prometheus or VictoriaMetrics (e.g. http://prometheus:9090)?",
				url, query, untrusted.Text(api.Msg))
		}
	}
	return fmt.Errorf("query %s: %w", query, untrusted.Err(err))
}

// bodyStart quotes the first line of an error answer's body, escaped and
// cut to 80 bytes, for the error that names the answer: " (\"<html>...\")".
func bodyStart(body string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(body), "\n")
	if line == "" {
		return ""
	}
	if len(line) > 80 {
		line = line[:80] + "..."
	}
	return " (" + strconv.Quote(untrusted.Text(line)) + ")"
}

// notGreeting quotes the first line a node sent (escaped) when it cannot
// begin an SSH greeting ("SSH-..."): a service of another protocol that
// then waits is not a stalled fgtop serve.
func notGreeting(sent []byte) (string, bool) {
	if len(sent) == 0 || bytes.HasPrefix(sent, []byte("SSH-")) || bytes.HasPrefix([]byte("SSH-"), sent) {
		return "", false
	}
	line, _, _ := bytes.Cut(sent, []byte("\n"))
	return strconv.Quote(untrusted.Text(strings.TrimSpace(string(line)))), true
}

// unanswered words a command the caller's context ended before the node's
// answer did (sent: the bytes of it read by then, -1 when not counted),
// wrapping the context's error for errors.Is: "no answer: context
// deadline exceeded" said neither which bound ran out nor how far the
// node got.
func unanswered(ctx context.Context, sent int) error {
	got := ""
	switch {
	case sent == 0:
		got = " (the node had sent nothing of it)"
	case sent > 0:
		got = fmt.Sprintf(" (the node had sent %d bytes of it, then nothing more)", sent)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &cutErr{msg: "the time given (--timeout) ran out before the answer ended" + got, cause: ctx.Err()}
	}
	return &cutErr{msg: "stopped before the answer ended" + got, cause: ctx.Err()}
}
