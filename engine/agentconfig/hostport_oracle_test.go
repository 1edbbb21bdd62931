package agentconfig

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/internal/testfix"
)

// hostPortForms are values of a HostPortPair field (rpc-listen-addr) and of
// a HostPortPair | list[HostPortPair] field ([etcd] addr). The union tries
// the list form too, and HostPortPair's parser raises TypeError (not a
// validation error: the loader crashes) on an item that is neither a string,
// an array nor a table: ["127.0.0.1", 2379] is a pair for rpc-listen-addr
// but stops the agent as an etcd addr.
var hostPortForms = []string{
	`["127.0.0.1", 2379]`,
	`["127.0.0.1", "2379"]`,
	`["127.0.0.1", 2379.0]`,
	`["h", true]`,
	`[1]`,
	`[true]`,
	`["a", "b"]`,
	`["a:1", "b:2"]`,
	`[["127.0.0.1", 2379]]`,
	`[["127.0.0.1", 2379], "b:2"]`,
	`[{ host = "127.0.0.1", port = 2379 }]`,
	`[{ host = "127.0.0.1", port = 2379 }, 5]`,
	`[]`,
	`"127.0.0.1:2379"`,
	`{ host = "127.0.0.1", port = 2379 }`,
	`2379`,
	`1979-05-27`,
	`["127.0.0.1", 1979-05-27]`,
}

// TestHostPortFormsAgainstOracle: fgtop's verdict on every form above, as
// the etcd address and as the RPC listen address, is main's.
func TestHostPortFormsAgainstOracle(t *testing.T) {
	oracle := testfix.Oracle(t)
	base := ""
	for _, c := range loadConfigCases(t) {
		if c.Main.OK && strings.Contains(c.Input, "\n[etcd]\n") && strings.Contains(c.Input, "\nrpc-listen-addr = ") {
			base = c.Input
			break
		}
	}
	if base == "" {
		t.Fatal("no accepted case with [etcd] and rpc-listen-addr")
	}
	lines := strings.Split(base, "\n")
	set := func(key, section, value string) string {
		out := make([]string, 0, len(lines)+1)
		in, done := "", false
		for _, l := range lines {
			if strings.HasPrefix(l, "[") {
				if in == section && !done {
					out = append(out, key+" = "+value)
					done = true
				}
				in = strings.Trim(strings.TrimSpace(l), "[]")
			}
			if in == section && strings.HasPrefix(strings.TrimSpace(l), key+" ") {
				if !done {
					out = append(out, key+" = "+value)
					done = true
				}
				continue
			}
			out = append(out, l)
		}
		if !done {
			t.Fatalf("no [%s] section", section)
		}
		return strings.Join(out, "\n")
	}
	dir := t.TempDir()
	var files []string
	texts := map[string]string{}
	for i, form := range hostPortForms {
		for _, kv := range [][2]string{{"addr", "etcd"}, {"rpc-listen-addr", "agent"}} {
			text := set(kv[0], kv[1], form)
			p := filepath.Join(dir, fmt.Sprintf("%02d-%s.toml", i, kv[0]))
			if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			files = append(files, p)
			texts[p] = kv[0] + " = " + form
		}
	}
	mainV := runOracle(t, oracle, "main", files)
	for _, p := range files {
		raw, _ := os.ReadFile(p)
		v := Judge(raw)
		if v.Main != mainV[p].OK {
			t.Errorf("%s: fgtop main ok=%v (%v), Backend.AI main ok=%v %+v", texts[p], v.Main, v.MainErrors, mainV[p].OK, mainV[p].Errors)
		}
	}
}
