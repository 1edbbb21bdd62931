package manpage

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func TestLineAndEscape(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"--slot a-b", `\-\-slot a\-b`},
		{`C:\dir`, `C:\edir`},
		{".TH inside text", `\&.TH inside text`},
		{"'quoted start", `\&'quoted start`},
		{"plain", "plain"},
	} {
		if got := Line(c.in); got != c.want {
			t.Errorf("Line(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestTextFillsAndKeepsIndentedLines(t *testing.T) {
	var p Page
	p.Text("one line\nanother\n\n  a table row\n  another row\nback to text\n")
	want := "one line\nanother\n.PP\n.nf\n  a table row\n  another row\n.fi\nback to text\n"
	if got := p.String(); got != want {
		t.Errorf("Text:\n%s\nwant:\n%s", got, want)
	}
	var q Page
	q.Text("  ends indented")
	if got := q.String(); !strings.HasSuffix(got, ".fi\n") {
		t.Errorf("an indented last line leaves no-fill on: %q", got)
	}
}

func TestCommandsAndFlags(t *testing.T) {
	root := &cobra.Command{Use: "tool"}
	shown := &cobra.Command{Use: "shown", Short: "a shown command", Run: func(*cobra.Command, []string) {}}
	hidden := &cobra.Command{Use: "hidden", Hidden: true, Run: func(*cobra.Command, []string) {}}
	sub := &cobra.Command{Use: "sub", Run: func(*cobra.Command, []string) {}}
	shown.AddCommand(sub)
	root.AddCommand(shown, hidden)
	root.InitDefaultHelpCmd()
	shown.Flags().String("limit", "4", "how many")
	shown.Flags().Bool("quiet", false, "say less")
	shown.Flags().String("secret", "", "not listed")
	_ = shown.Flags().MarkHidden("secret")
	shown.InitDefaultHelpFlag()

	var names []string
	for _, c := range Commands(root) {
		names = append(names, c.CommandPath())
	}
	if got := strings.Join(names, ","); got != "tool shown,tool shown sub" {
		t.Errorf("Commands = %s", got)
	}
	var flags []string
	for _, f := range Flags(shown) {
		flags = append(flags, f.Name)
	}
	if got := strings.Join(flags, ","); got != "limit,quiet" {
		t.Errorf("Flags = %s", got)
	}
	var p Page
	p.Command(shown)
	page := p.String()
	for _, want := range []string{`.SS "tool shown"`, `\fB\-\-limit\fR \fIstring\fR`, "how many (default: 4)", `\fB\-\-quiet\fR`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "say less (default") {
		t.Errorf("a false default is said:\n%s", page)
	}
}
