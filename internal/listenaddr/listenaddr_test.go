package listenaddr

import (
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, c := range []struct{ v, err string }{
		{"127.0.0.1:2222", ""},
		{"[::1]:0", ""},
		{"127.0.0.1:ssh", ""},
		{"127.0.0.1", `"127.0.0.1": want HOST:PORT (e.g. 127.0.0.1:2222)`},
		{"127.0.0.1:", `"127.0.0.1:": the port is missing (e.g. 127.0.0.1:2222)`},
		{"127.0.0.1:99999", `"127.0.0.1:99999": port 99999 is out of range (0 to 65535; e.g. 127.0.0.1:2222)`},
		{"127.0.0.1:99999999999999999999", `"127.0.0.1:99999999999999999999": port 99999999999999999999 is out of range (0 to 65535; e.g. 127.0.0.1:2222)`},
	} {
		err := Check(c.v, "127.0.0.1:2222")
		if got := fmt.Sprint(err); (c.err == "" && err != nil) || (c.err != "" && got != c.err) {
			t.Errorf("Check(%q) = %v, want %q", c.v, err, c.err)
		}
	}
}

// TestFailed: a real listen on a taken port is worded with what to do.
func TestFailed(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skip(err)
	}
	defer l.Close()
	_, err = net.Listen("tcp", l.Addr().String())
	if err == nil {
		t.Fatal("listened twice on one port")
	}
	if got := Failed(l.Addr().String(), err).Error(); !strings.Contains(got, "the address is in use") || !strings.Contains(got, "ss -ltnp") {
		t.Errorf("taken port: %q", got)
	}
	if got := Failed("10.255.255.1:80", syscall.EADDRNOTAVAIL).Error(); !strings.Contains(got, "no such address") {
		t.Errorf("no such address: %q", got)
	}
}

// TestFailedNames: a host or port name that does not resolve is said in
// fgtop's words, not the resolver's ("lookup nohost on 10.0.0.53:53").
func TestFailedNames(t *testing.T) {
	for _, c := range []struct{ addr, want string }{
		{"no-such-host.invalid:9477", `the host name "no-such-host.invalid" does not resolve here`},
		{"127.0.0.1:no-such-port", `no port is named "no-such-port" on this machine`},
	} {
		l, err := net.Listen("tcp", c.addr)
		if err == nil {
			l.Close()
			t.Skipf("%s resolves here", c.addr)
		}
		got := Failed(c.addr, err).Error()
		if !strings.Contains(got, c.want) || strings.Contains(got, "lookup ") {
			t.Errorf("%s: %q, want %q", c.addr, got, c.want)
		}
	}
}
