package agentconfig

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestPluginsDocEtcdAddrForms: every [etcd] addr form docs/plugins.md gives
// loads (fgtop's verdict, checked against Backend.AI main by
// TestHostPortFormsAgainstOracle). The docs listed a bare ["host", port],
// which the agent's loader refuses (TypeError) and fgtop's own check
// flags: "etcd.addr.1: unrecognized value type".
func TestPluginsDocEtcdAddrForms(t *testing.T) {
	raw, err := os.ReadFile("../../docs/plugins.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(raw)), " ")
	i := strings.Index(text, "`addr` (")
	if i < 0 {
		t.Fatal("docs/plugins.md no longer says \"`addr` (\"")
	}
	clause := text[i+len("`addr` ("):]
	clause = clause[:strings.Index(clause, "; default")]
	forms := regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(clause, -1)
	if len(forms) < 3 {
		t.Fatalf("forms %q in %q", forms, clause)
	}
	concrete := strings.NewReplacer(`"host:port"`, `"127.0.0.1:2379"`, `"host"`, `"127.0.0.1"`,
		"host = ...", `host = "127.0.0.1"`, "port = ...", "port = 2379", ", port]", ", 2379]")
	for _, f := range forms {
		form := concrete.Replace(f[1])
		cfg := "[etcd]\nnamespace = \"local\"\naddr = " + form + "\n\n[agent]\nbackend = \"docker\"\nid = \"i-a\"\n\n" +
			"[container]\nscratch-root = \"/tmp/scratches\"\n\n[resource]\nreserved-cpu = 1\nreserved-mem = \"1G\"\n"
		if v := Judge([]byte(cfg)); !v.Main {
			t.Errorf("docs/plugins.md gives addr form %s (as %s): the agent does not load it: %v", f[1], form, v.MainErrors)
		}
	}
}
