// Package listenaddr words what is wrong with an address a server flag
// names (--listen, --metrics-listen) for an operator: before listening,
// its form; after, why the listen failed, with what to do.
package listenaddr

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"syscall"
)

// Check validates a HOST:PORT value; eg is an example of one, given in
// the error. An empty port made a server listen on one the kernel
// picked, and a port past 65535 was refused in Go's words ("address
// 99999: invalid port"); a service name (127.0.0.1:ssh) is left to the
// listener.
func Check(v, eg string) error {
	_, port, err := net.SplitHostPort(v)
	switch {
	case err != nil:
		return fmt.Errorf("%q: want HOST:PORT (e.g. %s)", v, eg)
	case port == "":
		return fmt.Errorf("%q: the port is missing (e.g. %s)", v, eg)
	}
	// Digits only: a service name (ssh) is the listener's to look up.
	if strings.Trim(port, "0123456789") == "" {
		if n, err := strconv.Atoi(port); err != nil || n > 65535 {
			return fmt.Errorf("%q: port %s is out of range (0 to 65535; e.g. %s)", v, port, eg)
		}
	}
	return nil
}

// Failed words a failure to listen on addr: the port taken, a port that
// needs root, an address this machine does not have, each with what to
// do; any other error as it is.
func Failed(addr string, err error) error {
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return fmt.Errorf("%s: the address is in use (another program listens there): pick another port, or stop that program (ss -ltnp shows which)", addr)
	case errors.Is(err, syscall.EACCES):
		return fmt.Errorf("%s: permission denied: ports below 1024 need root; pick a port above 1024", addr)
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return fmt.Errorf("%s: this machine has no such address: use 127.0.0.1, 0.0.0.0 (every interface) or one of its own addresses", addr)
	}
	// A host or service name that does not resolve was said in the
	// resolver's words ("listen tcp: lookup nohost on 10.0.0.53:53: no
	// such host"), naming a DNS server the operator did not ask about.
	var dns *net.DNSError
	if errors.As(err, &dns) {
		if _, service, ok := strings.Cut(dns.Name, "/"); ok && strings.HasPrefix(dns.Name, "tcp") {
			return fmt.Errorf("%s: no port is named %q on this machine (/etc/services): give the port as a number", addr, service)
		}
		return fmt.Errorf("%s: the host name %q does not resolve here (%s): use 127.0.0.1, 0.0.0.0 (every interface) or one of this machine's own addresses", addr, dns.Name, dns.Err)
	}
	return fmt.Errorf("%s: %w", addr, err)
}
