package agentconfig

import "testing"

func TestServiceAddr(t *testing.T) {
	for _, tc := range []struct {
		name, toml string
		want       []string
	}{
		{"default", "[agent]\nid = \"a\"\n", []string{"0.0.0.0:6003"}},
		{"string", "[agent]\nid = \"a\"\nservice-addr = \"127.0.0.1:7003\"\n", []string{"127.0.0.1:7003"}},
		{"table", "[agent]\nid = \"a\"\nservice-addr = { host = \"10.0.0.5\", port = 6011 }\n", []string{"10.0.0.5:6011"}},
		{"alias internal-addr", "[agent]\nid = \"a\"\ninternal-addr = \"0.0.0.0:6100\"\n", []string{"0.0.0.0:6100"}},
		{"alias service_addr", "[agent]\nid = \"a\"\nservice_addr = { host = \"::\", port = 6003 }\n", []string{"[::]:6003"}},
		{"bad value falls back", "[agent]\nid = \"a\"\nservice-addr = \"nope\"\n", []string{"0.0.0.0:6003"}},
		{"multi-agent: own over global", "[agent]\nservice-addr = \"0.0.0.0:6003\"\n" +
			"[[agents]]\n[agents.agent]\nid = \"a1\"\nservice-addr = \"0.0.0.0:6013\"\n" +
			"[[agents]]\n[agents.agent]\nid = \"a2\"\n",
			[]string{"0.0.0.0:6013", "0.0.0.0:6003"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := Parse("agent.toml", []byte(tc.toml))
			if c == nil {
				t.Fatal("no config")
			}
			if len(c.Agents) != len(tc.want) {
				t.Fatalf("%d agents, want %d", len(c.Agents), len(tc.want))
			}
			for i, w := range tc.want {
				if c.Agents[i].ServiceAddr != w {
					t.Errorf("agent %d: service addr %q, want %q", i, c.Agents[i].ServiceAddr, w)
				}
			}
		})
	}
}
