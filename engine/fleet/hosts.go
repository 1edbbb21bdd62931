package fleet

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// DefaultPort is `fgtop serve`'s default port, taken when a host names
// none.
const DefaultPort = "2222"

// MaxHosts bounds a fleet: far above the hundreds of nodes the SSH
// source is for (Prometheus is the source beyond that).
const MaxHosts = 4096

// maxBadLines is how many bad lines' numbers an error lists.
const maxBadLines = 5

// ParseHosts reads a --hosts list: "H:P,H:P" on the command line, or a
// file's content (one host per line, or several separated by commas or
// spaces; '#' starts a comment). A host without a port gets DefaultPort;
// an IPv6 address with a port is written [addr]:port. Duplicates are
// dropped, the first keeps its place.
//
// A host is a DNS name (letters, digits, '-', '_' and dots) or an IP
// address; a file with any other line is refused whole, naming the bad
// lines. An error quotes at most the host part of a bad line (what comes
// before its first ':' or other character no host name has): `--hosts
// @/etc/shadow` printed each line, password hash and all, as a node name.
func ParseHosts(text string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	var bad []int
	var first string
	for ln, line := range strings.Split(text, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		for _, f := range strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\r' }) {
			addr, err := normalizeHost(f)
			if err != nil {
				if len(bad) == 0 {
					first = fmt.Sprintf("line %d: %v", ln+1, err)
				}
				if len(bad) == 0 || bad[len(bad)-1] != ln+1 {
					bad = append(bad, ln+1)
				}
				continue
			}
			if len(bad) > 0 || seen[addr] {
				continue
			}
			seen[addr] = true
			out = append(out, addr)
			if len(out) > MaxHosts {
				return nil, fmt.Errorf("more than %d hosts: use --prometheus for a fleet this large", MaxHosts)
			}
		}
	}
	switch {
	case len(bad) == 1:
		return nil, fmt.Errorf("%s", first)
	case len(bad) > 1:
		nums := make([]string, 0, maxBadLines)
		for _, n := range bad[:min(len(bad), maxBadLines)] {
			nums = append(nums, strconv.Itoa(n))
		}
		more := ""
		if len(bad) > maxBadLines {
			more = fmt.Sprintf(" and %d more", len(bad)-maxBadLines)
		}
		return nil, fmt.Errorf("%d lines are not hosts (want HOST or HOST:PORT, one per line, # comments): lines %s%s; %s",
			len(bad), strings.Join(nums, ", "), more, first)
	case len(out) == 0:
		return nil, fmt.Errorf("no hosts")
	}
	return out, nil
}

// hostPart is what an error may quote of a bad host: the leading
// characters a host name or address can have, before any ':' (an address
// in brackets whole), at most 40 of them.
func hostPart(h string) string {
	end := 0
	if i := strings.IndexByte(h, ']'); strings.HasPrefix(h, "[") && i > 0 && validAddr(h[1:i]) {
		end = i + 1
	} else {
		for end < len(h) && isHostByte(h[end]) {
			end++
		}
	}
	if end > 40 {
		return strconv.Quote(h[:40]) + "…"
	}
	if end < len(h) {
		return strconv.Quote(h[:end]) + "…"
	}
	return strconv.Quote(h)
}

func isHostByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
}

func validAddr(s string) bool {
	_, err := netip.ParseAddr(s)
	return err == nil
}

// validHost reports whether host is an IP address or a DNS name.
func validHost(host string) bool {
	if validAddr(host) {
		return true
	}
	name := strings.TrimSuffix(host, ".")
	if name == "" || len(name) > 253 {
		return false
	}
	for _, label := range strings.Split(name, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			if !isHostByte(label[i]) || label[i] == '.' {
				return false
			}
		}
	}
	return true
}

func normalizeHost(h string) (string, error) {
	if len(h) > 270 {
		return "", fmt.Errorf("%s: not a host (longer than a host name and port can be)", hostPart(h))
	}
	host, port, err := net.SplitHostPort(h)
	if err != nil {
		// No port: a name, an IPv4 address, or a bare IPv6 address.
		host, port = strings.Trim(h, "[]"), DefaultPort
		if strings.ContainsAny(host, "[]") {
			return "", fmt.Errorf("%s: want HOST or HOST:PORT", hostPart(h))
		}
	}
	if host == "" {
		return "", fmt.Errorf("%s: no host name", hostPart(h))
	}
	if len(host) > 253 { // DNS's limit
		return "", fmt.Errorf("%s: a host name is at most 253 bytes", hostPart(h))
	}
	if !validHost(host) {
		if strings.Contains(host, "@") {
			// ssh's USER@HOST: the login name is one for the whole
			// fleet, and the part before '@' is not quoted (it may be
			// anything the file holds).
			return "", errors.New("a login name before '@' is not taken in --hosts: give it once for every node with --user NAME")
		}
		return "", fmt.Errorf("%s: not a host name or address", hostPart(h))
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return "", fmt.Errorf("%s: the port after ':' is not a number from 1 to 65535", hostPart(h))
	}
	return net.JoinHostPort(host, port), nil
}
