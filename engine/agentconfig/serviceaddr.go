package agentconfig

import (
	"net"
	"strconv"
)

// DefaultServiceAddr is the agent's service address (its HTTP service:
// /health, /metrics) when agent.toml sets none.
const DefaultServiceAddr = "0.0.0.0:6003"

// serviceAddrKeys are [agent] service-addr and its aliases, in the order
// they are tried.
var serviceAddrKeys = []string{"service-addr", "service_addr", "internal-addr", "internal_addr"}

// serviceAddr is an agent's service address as HOST:PORT: from own (an
// [[agents]] entry's agent table), else from global ([agent]), else the
// default. A value that is not a HostPortPair counts as unset: the schema
// check reports it.
func serviceAddr(own, global map[string]any) string {
	for _, t := range []map[string]any{own, global} {
		v, ok := get(t, serviceAddrKeys...)
		if !ok {
			continue
		}
		host, port, err := hostPortPair(v)
		if err != nil {
			continue
		}
		return net.JoinHostPort(host, strconv.FormatInt(port, 10))
	}
	return DefaultServiceAddr
}
