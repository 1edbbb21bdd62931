package nodeopen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine/scratch"
)

// TestRootsRuleDocumented: a missing scratch root of agent.toml's is a
// warning with exit 0, an unreadable one or a missing --scratch-root exit
// 2 (RefuseBlind); docs/reliability.md and docs/console.md said nothing of
// it, so the two exits read as an inconsistency. Both now state the rule
// this test checks RefuseBlind against.
func TestRootsRuleDocumented(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if RefuseBlind([]scratch.Root{{Path: missing}}, false) != nil || RefuseBlind([]scratch.Root{{Path: missing}}, true) == nil ||
		RefuseBlind([]scratch.Root{{Path: file}}, false) == nil {
		t.Fatal("RefuseBlind no longer follows the documented rule")
	}
	for _, doc := range []string{"reliability.md", "console.md"} {
		raw, err := os.ReadFile(filepath.Join("../../docs", doc))
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(strings.Fields(string(raw)), " ")
		for _, want := range []string{"refuses", "exit 2", "a root it cannot read", "a `--scratch-root` that does not exist", "a root of agent.toml's that does not exist yet holds no kernels"} {
			if !strings.Contains(text, want) {
				t.Errorf("docs/%s does not say %q", doc, want)
			}
		}
	}
}
