package main

import (
	"bytes"
	"github.com/fgtop/fgtop/internal/manpage"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/internal/testfix"
	"github.com/spf13/cobra"
)

// TestExitStatusTable: the one exit-status table is what --help prints,
// what the manual page's EXIT STATUS lists and what the README's "Exit
// status" table says, word for word.
func TestExitStatusTable(t *testing.T) {
	root := newRootCmd()
	var help bytes.Buffer
	root.SetOut(&help)
	root.SetArgs([]string{"--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	flat := strings.Join(strings.Fields(help.String()), " ")
	var man bytes.Buffer
	if err := writeMan(&man, newRootCmd()); err != nil {
		t.Fatal(err)
	}
	mod, err := testfix.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(mod, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for _, r := range exitStatus {
		if !strings.Contains(flat, r.code+" "+r.what) {
			t.Errorf("--help lacks exit status %s: %q", r.code, r.what)
		}
		if !strings.Contains(man.String(), `\fB`+r.code+`\fR`+"\n"+manpage.Escape(r.what)) {
			t.Errorf("the manual page lacks exit status %s", r.code)
		}
		want.WriteString("| " + r.code + " | " + r.what + " |\n")
	}
	if !strings.Contains(string(readme), "| status | meaning |\n|---|---|\n"+want.String()) {
		t.Errorf("README.md's exit-status table differs from cmd/fgtop/exitstatus.go; it should read:\n%s", want.String())
	}
}

// TestPlanSaysItsExitStatus: what plan's help says an invalid plan exits
// with is what it exits with (its one-line summary said 1, the table and
// the command 2).
func TestPlanSaysItsExitStatus(t *testing.T) {
	cfg := filepath.Join("..", "..", "engine", "partition", "testdata", "agent.multi-agent.device-based.toml")
	code, out := runCLIQuiet(t, "plan", "--config", cfg, "--mem", "nobody=4G")
	if code != exitBadUsage || !strings.Contains(out, "invalid") {
		t.Fatalf("an invalid plan: exit %d, want %d (the table's 2)\n%s", code, exitBadUsage, out)
	}
	plan, _, err := newRootCmd().Find([]string{"plan"})
	if err != nil {
		t.Fatal(err)
	}
	said := regexp.MustCompile(`exit (\d) if it is invalid|(\d) invalid`)
	n := 0
	for _, m := range said.FindAllStringSubmatch(plan.Short+"\n"+plan.Long, -1) {
		n++
		if got := m[1] + m[2]; got != strconv.Itoa(code) {
			t.Errorf("plan's help says %q; an invalid plan exits %d", m[0], code)
		}
	}
	if n < 2 {
		t.Errorf("plan's summary and help should both say the exit status of an invalid plan (found %d)", n)
	}
}

// TestCommandsSayTheirExitStatus: each command's own "Exit status:"
// paragraph names exactly the codes of the one table it can exit with
// (snapshot's said 0 and 2 while --at exits 1 where the record lacks the
// moment; plan's summary said 1 for an invalid plan).
func TestCommandsSayTheirExitStatus(t *testing.T) {
	codes := map[string]string{
		"check": "012", "plan": "012", "apply": "0123", "rollback": "0123", "simulate": "012",
		"fleet": "012", "snapshot": "012", "history": "012", "record": "02",
	}
	para := regexp.MustCompile(`(?s)Exit status:(.*?)(\n\n|$)`)
	digit := regexp.MustCompile(`\b[0-9]\b`)
	root := newRootCmd()
	for name, want := range codes {
		c, _, err := root.Find([]string{name})
		if err != nil || c == root {
			t.Fatalf("no command %s", name)
		}
		m := para.FindStringSubmatch(c.Long)
		if m == nil {
			t.Errorf("%s: its help has no Exit status paragraph", name)
			continue
		}
		said := map[string]bool{}
		for _, d := range digit.FindAllString(m[1], -1) {
			said[d] = true
		}
		got := ""
		for _, d := range "0123456789" {
			if said[string(d)] {
				got += string(d)
			}
		}
		if got != want {
			t.Errorf("%s: its Exit status paragraph names %q, the command exits with %q:%s", name, got, want, m[1])
		}
	}
}

// TestExitStatusTableNamesEveryFinding: every command whose own help says
// it exits 1 is named in the table's row for 1, which says it is the same
// for every command (fleet history exits 1 where a node did not answer,
// and fleet --at where a node had no data then: the table named neither).
func TestExitStatusTableNamesEveryFinding(t *testing.T) {
	var one string
	for _, r := range exitStatus {
		if r.code == "1" {
			one = r.what
		}
	}
	para := regexp.MustCompile(`(?s)Exit status:?(.*?)(\n\n|$)`)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		name := strings.TrimPrefix(c.CommandPath(), "fgtop ")
		m := para.FindStringSubmatch(c.Long)
		if c.Parent() == nil || m == nil || !regexp.MustCompile(`\b1\b`).MatchString(m[1]) {
			return
		}
		if !regexp.MustCompile(`(^|[ ;:(])` + regexp.QuoteMeta(name) + `\b`).MatchString(one) {
			t.Errorf("%s says it exits 1 (%s), but the exit-status table's row for 1 does not name it:\n%s", name, strings.TrimSpace(m[1]), one)
		}
	}
	walk(newRootCmd())
	if !strings.Contains(one, "--at") || !strings.Contains(one, "fleet --once and --at") {
		t.Errorf("the row for 1 does not say fleet --at exits 1 without data then:\n%s", one)
	}
}
