package main

import (
	"bytes"
	"github.com/fgtop/fgtop/internal/manpage"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// manSections splits a roff page at .SH and .SS lines: name -> body.
func manSections(page string) map[string]string {
	out := map[string]string{}
	name := ""
	var body strings.Builder
	flush := func() {
		if name != "" {
			out[name] = body.String()
		}
		body.Reset()
	}
	for _, l := range strings.Split(page, "\n") {
		if strings.HasPrefix(l, ".SH ") || strings.HasPrefix(l, ".SS ") {
			flush()
			name = strings.Trim(strings.TrimSpace(l[4:]), `"`)
			name = strings.ReplaceAll(name, `\-`, "-")
			continue
		}
		body.WriteString(l + "\n")
	}
	flush()
	return out
}

// TestManPage checks that the page lists every command and every flag of
// each (in that command's own section), has the sections a manual page
// needs, and is clean roff.
func TestManPage(t *testing.T) {
	code, page := runCLI(t, "man")
	wantCode(t, code, exitOK, page)
	secs := manSections(page)
	for _, s := range []string{"NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "COMMANDS", "EXIT STATUS", "ENVIRONMENT", "FILES"} {
		if _, ok := secs[s]; !ok {
			t.Errorf("no %s section", s)
		}
	}
	if !strings.HasPrefix(page, ".TH FGTOP 1 ") {
		t.Errorf("page does not start with .TH FGTOP 1: %.40q", page)
	}

	root := newRootCmd()
	root.InitDefaultVersionFlag()
	cmds := manpage.Commands(root)
	if len(cmds) < 12 {
		t.Fatalf("only %d commands found in the tree", len(cmds))
	}
	flagsChecked := 0
	check := func(section string, names []string) {
		body, ok := secs[section]
		if !ok {
			t.Errorf("no section for %q", section)
			return
		}
		for _, n := range names {
			if !strings.Contains(body, `\fB\-\-`+strings.ReplaceAll(n, "-", `\-`)+`\fR`) {
				t.Errorf("%s: flag --%s is not listed", section, n)
			}
			flagsChecked++
		}
	}
	var rootFlags []string
	for _, f := range manpage.Flags(root) {
		rootFlags = append(rootFlags, f.Name)
	}
	check("OPTIONS", rootFlags)
	for _, c := range cmds {
		var names []string
		for _, f := range manpage.Flags(c) {
			names = append(names, f.Name)
		}
		// Every flag the command accepts apart from help, checked through
		// cobra itself rather than through manpage.Flags.
		all := 0
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Name != "help" && !f.Hidden {
				all++
			}
		})
		if all != len(names) {
			t.Errorf("%s: the page lists %d flags, the command has %d", c.CommandPath(), len(names), all)
		}
		check(c.CommandPath(), names)
	}
	for _, must := range []string{"version", "request", "mock-etcd", "theme", "move", "authorized-keys"} {
		if !strings.Contains(page, `\-\-`+strings.ReplaceAll(must, "-", `\-`)) {
			t.Errorf("page lacks --%s", must)
		}
	}
	if flagsChecked < 60 {
		t.Errorf("only %d flags checked", flagsChecked)
	}

	// Clean roff: every control line is a macro the page means to use, and
	// every backslash starts a known escape.
	macro := regexp.MustCompile(`^\.(TH|SH|SS|TP|PP|nf|fi|RS|RE|br|B)( |$)`)
	escape := regexp.MustCompile(`\\(e|-|&|f[BIR])`)
	for i, l := range strings.Split(page, "\n") {
		if (strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'")) && !macro.MatchString(l) {
			t.Errorf("line %d is an unexpected control line: %q", i+1, l)
		}
		if strings.Count(l, `\`) != len(escape.FindAllString(l, -1)) {
			t.Errorf("line %d has an unknown escape: %q", i+1, l)
		}
	}

	// Where groff or man is installed, they must read it without a warning
	// and show the flags.
	if groff, err := exec.LookPath("groff"); err == nil {
		cmd := exec.Command(groff, "-man", "-ww", "-z", "-Tutf8")
		cmd.Stdin = strings.NewReader(page)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil || stderr.Len() > 0 {
			t.Errorf("groff: %v\n%s", err, stderr.String())
		}
	} else {
		t.Log("groff not installed: roff checked by structure only")
	}
	if man, err := exec.LookPath("man"); err == nil {
		cmd := exec.Command(man, "-l", "-")
		cmd.Env = append(cmd.Environ(), "MANWIDTH=100", "MANPAGER=cat", "PAGER=cat")
		cmd.Stdin = strings.NewReader(page)
		out, err := cmd.Output()
		text := string(out)
		if err != nil || !strings.Contains(text, "fgtop simulate") || !strings.Contains(text, "--request") || !strings.Contains(text, "EXIT STATUS") {
			t.Errorf("man -l: %v\n%.600s", err, text)
		}
	} else {
		t.Log("man not installed")
	}
}
