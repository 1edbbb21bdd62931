package agentconfig

import (
	"fmt"
	"net"
	"strconv"
)

// Etcd is agent.toml's [etcd] table as the agent connects with it
// (EtcdConfig; etcd_ctx in the agent's server.py).
type Etcd struct {
	// Namespace is [etcd] namespace ("local" when unset): keys live under
	// /sorna/<namespace>/.
	Namespace string
	// Addrs are the endpoints as "host:port", in the file's order
	// (127.0.0.1:2379 when unset).
	Addrs []string
	// User and Password are [etcd] user and password ("" when unset).
	User, Password string
	// AddrErr says why addr could not be read (the agent would not start
	// either); Addrs is then empty.
	AddrErr error
}

// Etcd defaults of the agent's EtcdConfig.
const (
	DefaultEtcdNamespace = "local"
	DefaultEtcdAddr      = "127.0.0.1:2379"
)

// etcdOf reads [etcd] from a decoded agent.toml.
func etcdOf(doc map[string]any) Etcd {
	t := table(doc, "etcd")
	e := Etcd{Namespace: DefaultEtcdNamespace, Addrs: []string{DefaultEtcdAddr}}
	if s, ok := str(t, "namespace"); ok {
		e.Namespace = s
	}
	e.User, _ = str(t, "user")
	e.Password, _ = str(t, "password")
	if v, ok := t["addr"]; ok {
		e.Addrs, e.AddrErr = EtcdAddrs(v)
	}
	return e
}

// EtcdAddrs reads an [etcd] addr value in every form the agent accepts
// (HostPortPair | list[HostPortPair]): "host:port", [host, port],
// { host, port }, or a list of those. It returns "host:port" endpoints
// (IPv6 hosts bracketed).
func EtcdAddrs(v any) ([]string, error) {
	if list, ok := v.([]any); ok && len(list) > 0 {
		out := make([]string, 0, len(list))
		allPairs := true
		for _, x := range list {
			switch x.(type) {
			case string, []any, map[string]any:
			default:
				allPairs = false
			}
			if !allPairs {
				break
			}
			ep, err := endpoint(x)
			if err != nil {
				allPairs = false
				break
			}
			out = append(out, ep)
		}
		if allPairs {
			return out, nil
		}
	}
	ep, err := endpoint(v)
	if err != nil {
		return nil, fmt.Errorf("[etcd] addr: %w", err)
	}
	return []string{ep}, nil
}

// endpoint is one HostPortPair as "host:port".
func endpoint(v any) (string, error) {
	host, err := hostPort(v)
	if err != nil {
		return "", err
	}
	var port any
	switch x := v.(type) {
	case string:
		i := len(x) - 1
		for i >= 0 && x[i] != ':' {
			i--
		}
		port = x[i+1:]
	case []any:
		port = x[1]
	case map[string]any:
		port = x["port"]
	}
	n, err := pyInt(port)
	if err != nil {
		return "", err
	}
	if host == "" {
		return "", fmt.Errorf("no host")
	}
	return net.JoinHostPort(host, strconv.FormatInt(n, 10)), nil
}

// computePluginsOf reads [agent] allow-compute-plugins and
// block-compute-plugins (also snake_case). nil means unset.
func computePluginsOf(doc map[string]any) (allow, block []string, allowSet bool) {
	t := table(doc, "agent")
	list := func(keys ...string) ([]string, bool) {
		v, ok := get(t, keys...)
		if !ok || v == nil {
			return nil, false
		}
		items, _ := v.([]any)
		out := []string{}
		for _, x := range items {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out, true
	}
	allow, allowSet = list("allow-compute-plugins", "allow_compute_plugins")
	block, _ = list("block-compute-plugins", "block_compute_plugins")
	return allow, block, allowSet
}
