package fleet

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// DefaultPort is `fgtop serve`'s default port, taken when a host names
// none.
const DefaultPort = "2222"

// MaxHosts bounds a fleet: far above the hundreds of nodes the SSH
// source is for (Prometheus is the source beyond that).
const MaxHosts = 4096

// ParseHosts reads a --hosts list: "H:P,H:P" on the command line, or a
// file's content (one host per line, or several separated by commas or
// spaces; '#' starts a comment). A host without a port gets DefaultPort;
// an IPv6 address with a port is written [addr]:port. Duplicates are
// dropped, the first keeps its place.
func ParseHosts(text string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for ln, line := range strings.Split(text, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		for _, f := range strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\r' }) {
			addr, err := normalizeHost(f)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", ln+1, err)
			}
			if seen[addr] {
				continue
			}
			seen[addr] = true
			out = append(out, addr)
			if len(out) > MaxHosts {
				return nil, fmt.Errorf("more than %d hosts: use --prometheus for a fleet this large", MaxHosts)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no hosts")
	}
	return out, nil
}

func normalizeHost(h string) (string, error) {
	if len(h) > 270 {
		return "", fmt.Errorf("%q…: not a host", h[:40])
	}
	host, port, err := net.SplitHostPort(h)
	if err != nil {
		// No port: a name, an IPv4 address, or a bare IPv6 address.
		host, port = strings.Trim(h, "[]"), DefaultPort
		if strings.ContainsAny(host, "[]") {
			return "", fmt.Errorf("%q: want HOST or HOST:PORT", h)
		}
	}
	if host == "" {
		return "", fmt.Errorf("%q: no host name", h)
	}
	if len(host) > 253 { // DNS's limit
		return "", fmt.Errorf("%q…: a host name is at most 253 bytes", host[:40])
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return "", fmt.Errorf("%q: port %q is not a number from 1 to 65535", h, port)
	}
	for _, r := range host {
		if r <= ' ' || r == '/' || r == '@' || r == 0x7f {
			return "", fmt.Errorf("%q: not a host name", h)
		}
	}
	return net.JoinHostPort(host, port), nil
}
