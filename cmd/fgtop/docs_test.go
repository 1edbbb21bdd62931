package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/internal/testfix"
)

// TestDocsCiteOnlyTheRepository: the README and docs/ are for users of a
// clone: every relative link points at a file of the repository, and no
// text sends the reader to a path outside it (the README once cited a
// DESIGN.md the repository did not have, and ../shared/oracle, which only
// the CI machine has).
func TestDocsCiteOnlyTheRepository(t *testing.T) {
	mod, err := testfix.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	docs, err := filepath.Glob(filepath.Join(mod, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := append([]string{filepath.Join(mod, "README.md")}, docs...)
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
