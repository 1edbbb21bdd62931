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
	// A file saved with a byte-order mark (Windows editors): its first
	// line was "not a host name or address", quoted as `""…`.
	return parseHosts(strings.TrimPrefix(text, "\uFEFF"), false)
}

// ItemsError is an inline --hosts list's bad items, named by their place
// in the list and quoted whole (the operator typed them; line numbers and
// the host part alone are a file's).
type ItemsError struct{ msg string }

func (e *ItemsError) Error() string { return e.msg }

// parseHosts is ParseHosts; inline: text is the command line's list, whose
// bad items are an *ItemsError.
func parseHosts(text string, inline bool) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	var bad []int
	var first string
	item := 0
	for ln, line := range strings.Split(text, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		for _, f := range strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\r' }) {
			item++
			addr, err := normalizeHost(f)
			if err != nil {
				at := ln + 1
				if inline {
					at = item
				}
				if len(bad) == 0 {
					first = badHost(f, err, at, inline)
				}
				if len(bad) == 0 || bad[len(bad)-1] != at {
					bad = append(bad, at)
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
	case len(bad) == 1 && inline:
		return nil, &ItemsError{first}
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
		if inline {
			return nil, &ItemsError{fmt.Sprintf("items %s%s are not hosts (want HOST or HOST:PORT, comma-separated); %s", strings.Join(nums, ", "), more, first)}
		}
		return nil, fmt.Errorf("%d lines are not hosts (want HOST or HOST:PORT, one per line, # comments): lines %s%s; %s",
			len(bad), strings.Join(nums, ", "), more, first)
	case len(out) == 0:
		return nil, fmt.Errorf("no hosts")
	}
	return out, nil
}

// badHost words a bad host at line or item at: a file's line quotes at
// most its host part (hostPart), an inline item is quoted whole.
func badHost(h string, err error, at int, inline bool) string {
	if inline {
		return fmt.Sprintf("item %d %s: %v", at, quoteItem(h), err)
	}
	if errors.Is(err, errLoginName) {
		return fmt.Sprintf("line %d: %v", at, err)
	}
	return fmt.Sprintf("line %d: %s: %v", at, hostPart(h), err)
}

// quoteItem quotes an item of an inline list, at most 80 bytes of it.
func quoteItem(h string) string {
	if len(h) > 80 {
		return strconv.Quote(h[:80]) + "…"
	}
	return strconv.Quote(h)
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

// errLoginName is a host given as ssh's USER@HOST.
var errLoginName = errors.New("a login name before '@' is not taken in --hosts: give it once for every node with --user NAME")

// normalizeHost is h as HOST:PORT; its error says what is wrong, without
// h (its caller says how much of h to quote).
func normalizeHost(h string) (string, error) {
	if len(h) > 270 {
		return "", errors.New("not a host (longer than a host name and port can be)")
	}
	host, port, err := net.SplitHostPort(h)
	if err != nil {
		// No port: a name, an IPv4 address, or a bare IPv6 address.
		host, port = strings.Trim(h, "[]"), DefaultPort
		if strings.ContainsAny(host, "[]") {
			return "", errors.New("want HOST or HOST:PORT")
		}
	}
	if host == "" {
		return "", errors.New("no host name")
	}
	if len(host) > 253 { // DNS's limit
		return "", errors.New("a host name is at most 253 bytes")
	}
	if !validHost(host) {
		if strings.Contains(host, "@") {
			// ssh's USER@HOST: the login name is one for the whole
			// fleet, and the part before '@' is not quoted (it may be
			// anything the file holds).
			return "", errLoginName
		}
		return "", errors.New("not a host name or address")
	}
	if strings.Trim(host, "0123456789") == "" {
		// "node01 2222" (a port after a space) read as a second host
		// "2222", dialled at 2222:2222, and node01 at port 2222.
		return "", errors.New("a number, not a host name: a port follows its host after ':' (node01:2222), not a space")
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return "", errors.New("the port after ':' is not a number from 1 to 65535")
	}
	return net.JoinHostPort(host, port), nil
}
