package agentconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzJournal: whoever may write the config's directory writes the
// journal's content. Reading it, and replaying it for a rollback, never
// panics, every name read is fit to print, and what rollback would undo
// is an apply.
func FuzzJournal(f *testing.F) {
	f.Add([]byte(`{"time":"2026-11-21T10:15:01Z","action":"intent","intends":"apply","actor":"a","config":"CONFIG","old_hash":"x","new_hash":"y"}` + "\n" +
		`{"time":"2026-11-21T10:15:01Z","action":"apply","actor":"a\u001b[2J","config":"CONFIG","old_hash":"x","new_hash":"y","result":"ok"}` + "\n"))
	f.Add([]byte(`{"action":"rollback","config":"CONFIG"}` + "\n" + `{"action":"intent","intends":"rollback","config":"CONFIG"}`))
	f.Add([]byte("not json\n{\"action\":\n"))
	f.Add([]byte(`{"time":"2026-11-21T10:15:01Z","action":"apply","config":"CONFIG","old_hash":"w","new_hash":"x","result":"ok"}` + "\n" +
		`{"time":"2026-11-21T10:15:02Z","action":"intent","intends":"apply","config":"CONFIG","old_hash":"x","new_hash":"y","result":"pending"}` + "\n" +
		`{"time":"2026-11-21T10:15:02Z","action":"failed","intends":"apply","config":"CONFIG","old_hash":"x","new_hash":"y","result":"failed","failure":"rename"}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		config := filepath.Join(dir, "agent.toml")
		if err := os.WriteFile(config, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		journal := JournalPath(config)
		if err := os.WriteFile(journal, []byte(strings.ReplaceAll(string(data), "CONFIG", config)), 0o600); err != nil {
			t.Fatal(err)
		}
		recs, _, _ := ReadJournal(journal)
		for _, r := range recs {
			for _, s := range []string{r.Actor, r.Origin, r.Key} {
				if !utf8.ValidString(s) || strings.ContainsFunc(s, unprintable) {
					t.Fatalf("unclean name %q", s)
				}
			}
		}
		// Only an apply is undone: never a failed write, nor anything
		// else a planted line names.
		if top, err := Undoable(config, journal); err == nil && top.Action != ActionApply {
			t.Fatalf("Undoable returned a %q record", top.Action)
		}
	})
}

func FuzzCleanName(f *testing.F) {
	f.Add("alice")
	f.Add("a\x1b]0;x\x07\u202e\xff")
	f.Fuzz(func(t *testing.T, s string) {
		out := CleanName(s)
		if !utf8.ValidString(out) || strings.ContainsFunc(out, unprintable) || utf8.RuneCountInString(out) > maxNameRunes+1 {
			t.Fatalf("CleanName(%q) = %q", s, out)
		}
	})
}
