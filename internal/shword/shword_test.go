package shword

import (
	"os/exec"
	"testing"
)

// TestJoinPastes: what Join writes, read back by a real shell, is the
// words given.
func TestJoinPastes(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	words := []string{"--config", "/tmp/a b/agent.toml", "it's", "", "$HOME", "a;b", "--host-cpus", "0-31", "x=y,z"}
	out, err := exec.Command(sh, "-c", `for w in `+Join(words)+`; do printf '%s\n' "[$w]"; done`).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := ""
	for _, w := range words {
		want += "[" + w + "]\n"
	}
	if string(out) != want {
		t.Errorf("the shell read %q, want %q", out, want)
	}
	if got := Word("/tmp/fgtop-demo-1/agent.toml"); got != "/tmp/fgtop-demo-1/agent.toml" {
		t.Errorf("a plain path quoted: %s", got)
	}
}
