package agentconfig

import (
	"strings"
	"testing"
)

// TestEtcdAddrForms: [etcd] addr in every form the agent accepts becomes
// the endpoints the agent connects to.
func TestEtcdAddrForms(t *testing.T) {
	for _, tc := range []struct{ toml, want string }{
		{`"127.0.0.1:2379"`, "127.0.0.1:2379"},
		{`"[::1]:2379"`, "[::1]:2379"},
		{`"etcd.example:12379"`, "etcd.example:12379"},
		{`["127.0.0.1", "2379"]`, "127.0.0.1:2379"},
		{`{ host = "10.0.0.1", port = 2379 }`, "10.0.0.1:2379"},
		{`["a:1", "b:2"]`, "a:1,b:2"},
		{`[["a", 1], { host = "b", port = 2 }]`, "a:1,b:2"},
		{`[{ host = "127.0.0.1", port = 2379 }]`, "127.0.0.1:2379"},
		{"", DefaultEtcdAddr},
	} {
		t.Run(tc.toml, func(t *testing.T) {
			text := "[etcd]\nnamespace = \"ns1\"\nuser = \"u\"\npassword = \"p\"\n"
			if tc.toml != "" {
				text += "addr = " + tc.toml + "\n"
			}
			c, err := Parse("agent.toml", []byte(text+"[agent]\nid = \"i-a\"\n"))
			if c == nil {
				t.Fatal(err)
			}
			if c.Etcd.AddrErr != nil || strings.Join(c.Etcd.Addrs, ",") != tc.want {
				t.Fatalf("addrs %v (%v), want %s", c.Etcd.Addrs, c.Etcd.AddrErr, tc.want)
			}
			if c.Etcd.Namespace != "ns1" || c.Etcd.User != "u" || c.Etcd.Password != "p" {
				t.Fatalf("%+v", c.Etcd)
			}
		})
	}
	for _, bad := range []string{`"nocolon"`, `2379`, `["h", 1, 2]`, `{ host = "h" }`, `"h:99999"`} {
		c, _ := Parse("agent.toml", []byte("[etcd]\naddr = "+bad+"\n[agent]\nid = \"i-a\"\n"))
		if c == nil {
			continue
		}
		if c.Etcd.AddrErr == nil {
			t.Errorf("%s: read as %v", bad, c.Etcd.Addrs)
		}
	}
}

// TestComputePluginLists: [agent] allow/block-compute-plugins, both
// spellings; unset is nil, not empty.
func TestComputePluginLists(t *testing.T) {
	c, _ := Parse("a.toml", []byte("[agent]\nid = \"x\"\nallow_compute_plugins = [\"ai.backend.accelerator.cuda_open\"]\nblock-compute-plugins = [\"ai.backend.accelerator.mock\"]\n"))
	if c == nil || strings.Join(c.AllowComputePlugins, ",") != "ai.backend.accelerator.cuda_open" || strings.Join(c.BlockComputePlugins, ",") != "ai.backend.accelerator.mock" {
		t.Fatalf("%+v", c)
	}
	c, _ = Parse("a.toml", []byte("[agent]\nid = \"x\"\n"))
	if c == nil || c.AllowComputePlugins != nil {
		t.Fatalf("unset allowlist read as %v", c.AllowComputePlugins)
	}
}

// FuzzEtcdAddrs: any string form of addr is read without panic, and an
// accepted one gives host:port endpoints.
func FuzzEtcdAddrs(f *testing.F) {
	f.Add("127.0.0.1:2379", "h", int64(1))
	f.Add("[::1]:0", "", int64(-5))
	f.Fuzz(func(t *testing.T, s, host string, port int64) {
		for _, v := range []any{s, []any{host, port}, map[string]any{"host": host, "port": port}, []any{s, s}} {
			addrs, err := EtcdAddrs(v)
			if err == nil {
				for _, a := range addrs {
					if !strings.Contains(a, ":") {
						t.Fatalf("%v -> %q", v, a)
					}
				}
			}
		}
	})
}
