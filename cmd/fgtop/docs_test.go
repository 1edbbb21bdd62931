package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/fgtop/fgtop/internal/testfix"
)

// TestDocsCiteOnlyTheRepository: the README and docs/ are for users of a
// clone: every relative link points at a file of the repository, and no
// text sends the reader to a path outside it (the README once cited a
// DESIGN.md the repository did not have, and ../shared/oracle, which only
// the CI machine has).
func TestDocsCiteOnlyTheRepository(t *testing.T) {
	mod, files := userDocs(t)
	if len(files) < 5 {
		t.Fatalf("only %d documents found", len(files))
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	outside := regexp.MustCompile("(^|[\\s`(\"])\\.\\./[A-Za-z]")
	links := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel(mod, f)
		for i, line := range strings.Split(string(raw), "\n") {
			if outside.MatchString(line) {
				t.Errorf("%s:%d: a path outside the repository: %s", name, i+1, strings.TrimSpace(line))
			}
			for _, m := range link.FindAllStringSubmatch(line, -1) {
				target, _, _ := strings.Cut(m[1], "#")
				if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				links++
				p := filepath.Join(filepath.Dir(f), target)
				if rel, err := filepath.Rel(mod, p); err != nil || strings.HasPrefix(rel, "..") {
					t.Errorf("%s:%d: link %s leaves the repository", name, i+1, m[1])
					continue
				}
				if _, err := os.Stat(p); err != nil {
					t.Errorf("%s:%d: link %s: no such file in the repository", name, i+1, m[1])
				}
			}
		}
	}
	if links < 10 {
		t.Errorf("only %d relative links checked: the pattern no longer finds them", links)
	}
}

// TestDocsCommandLinesUseRealFlags: every command line the README and
// docs/ show (code blocks, and `fgtop ...` in inline code) names only
// flags its command has, so an operator who copies one never meets
// "unknown flag". A flag renamed or removed in the binary fails here until
// the docs follow.
func TestDocsCommandLinesUseRealFlags(t *testing.T) {
	mod, files := userDocs(t)
	root := newRootCmd()
	checked := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel(mod, f)
		for _, l := range docCommandLines(string(raw)) {
			bad, n := undefinedFlags(root, l.text)
			for _, flag := range bad {
				t.Errorf("%s:%d: %s: no such flag: %s", name, l.line, flag, l.text)
			}
			checked += n
		}
	}
	if checked < 100 {
		t.Errorf("only %d fgtop command lines checked: the patterns no longer find them", checked)
	}
}

// docLine is a piece of a document that may hold a command line.
type docLine struct {
	line int
	text string
}

// docCommandLines returns the lines of fenced and indented code blocks
// (a line ending in a backslash joined with the next, a shell comment cut
// off) and every inline code span of the prose.
func docCommandLines(doc string) []docLine {
	var out []docLine
	span := regexp.MustCompile("`([^`]+)`")
	lines := strings.Split(doc, "\n")
	fenced := false
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			continue
		}
		if !fenced && !strings.HasPrefix(l, "    ") {
			for _, m := range span.FindAllStringSubmatch(l, -1) {
				out = append(out, docLine{i + 1, m[1]})
			}
			continue
		}
		start := i
		for strings.HasSuffix(l, `\`) && i+1 < len(lines) {
			i++
			l = strings.TrimSuffix(l, `\`) + " " + strings.TrimSpace(lines[i])
		}
		if c := strings.Index(l, " #"); c >= 0 {
			l = l[:c]
		}
		out = append(out, docLine{start + 1, strings.TrimSpace(l)})
	}
	return out
}

// undefinedFlags returns the --flags of each `fgtop [command...]` in text
// that the command does not define, and how many commands it checked. A
// word after fgtop that is no command (`fgtop chek`, prose) leaves that
// one unchecked.
func undefinedFlags(root *cobra.Command, text string) (bad []string, checked int) {
	flagName := regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	words := strings.Fields(text)
	for i, w := range words {
		if w != "fgtop" {
			continue
		}
		cmd := root
		j := i + 1
		for ; j < len(words); j++ {
			sub, _, err := cmd.Find([]string{words[j]})
			if err != nil || sub == cmd || strings.HasPrefix(words[j], "-") {
				break
			}
			cmd = sub
		}
		if j < len(words) && cmd == root && !strings.HasPrefix(words[j], "-") {
			continue
		}
		checked++
		cmd.InitDefaultHelpFlag()
		cmd.InitDefaultVersionFlag()
		quoted := false
		for _, a := range words[j:] {
			if a == "|" || a == ";" || a == "&&" || a == "fgtop" {
				break
			}
			if strings.Count(a, `"`)%2 == 1 || strings.Count(a, `'`)%2 == 1 {
				quoted = !quoted
				continue
			}
			if quoted || !strings.HasPrefix(a, "--") || len(a) < 3 {
				continue
			}
			name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
			name = strings.TrimRight(name, ".,:)`")
			if !flagName.MatchString(name) {
				continue
			}
			if cmd.Flags().Lookup(name) == nil && cmd.InheritedFlags().Lookup(name) == nil {
				bad = append(bad, cmd.CommandPath()+" --"+name)
			}
		}
	}
	return bad, checked
}

// userDocs is the module's root and its documents for users: README.md
// and docs/*.md.
func userDocs(t *testing.T) (mod string, files []string) {
	t.Helper()
	mod, err := testfix.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	docs, err := filepath.Glob(filepath.Join(mod, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return mod, append([]string{filepath.Join(mod, "README.md")}, docs...)
}
