// Package manpage writes a manual page in roff from a cobra command tree:
// every visible subcommand and every flag with its default, so the page
// cannot drift from the binary that prints it. What the page says beyond
// the commands (environment, files, exit codes) is the caller's.
package manpage

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Page builds one manual page in roff.
type Page struct {
	b strings.Builder
}

// Header starts the page: .TH with the title, section, date, source and
// manual's name.
func (m *Page) Header(title string, section int, date, source, manual string) {
	m.Raw(fmt.Sprintf(".TH %s %d %q %q %q", title, section, date, source, manual))
}

// String is the page so far.
func (m *Page) String() string { return m.b.String() }

// Raw writes one line of roff as it is.
func (m *Page) Raw(s string) { m.b.WriteString(s + "\n") }

// Section starts a section (.SH).
func (m *Page) Section(name string) { m.Raw(".SH " + name) }

// Para starts a paragraph.
func (m *Page) Para() { m.Raw(".PP") }

// Item is a tagged paragraph: a bold tag, then its text.
func (m *Page) Item(tag, text string) {
	m.Raw(".TP")
	m.Raw(`\fB` + Escape(tag) + `\fR`)
	m.Raw(Line(text))
}

// Text writes help text: plain lines are filled into paragraphs, indented
// lines (tables, examples) are kept as they are.
func (m *Page) Text(s string) {
	fill := true
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		switch {
		case strings.TrimSpace(l) == "":
			if fill {
				m.Para()
			} else {
				m.Raw("")
			}
		case l[0] == ' ' || l[0] == '\t':
			if fill {
				m.Raw(".nf")
				fill = false
			}
			m.Raw(Line(l))
		default:
			if !fill {
				m.Raw(".fi")
				fill = true
			}
			m.Raw(Line(l))
		}
	}
	if !fill {
		m.Raw(".fi")
	}
}

// Command writes one subcommand (.SS): its description, usage, examples
// and flags.
func (m *Page) Command(c *cobra.Command) {
	m.Raw(".SS " + `"` + Escape(c.CommandPath()) + `"`)
	if c.Long != "" {
		m.Text(c.Long)
	} else {
		m.Text(c.Short)
	}
	if use := c.UseLine(); strings.Contains(use, "[") || strings.Contains(use, "--") {
		m.Para()
		m.Raw(`Usage: \fB` + Escape(use) + `\fR`)
	}
	if c.Example != "" {
		m.Para()
		m.Raw("Examples:")
		m.Raw(".nf")
		for _, l := range strings.Split(c.Example, "\n") {
			m.Raw(Line(l))
		}
		m.Raw(".fi")
	}
	if fl := Flags(c); len(fl) > 0 {
		m.Para()
		m.Raw("Flags:")
		m.Raw(".RS")
		m.FlagList(fl)
		m.Raw(".RE")
	}
}

// FlagList writes flags as tagged paragraphs, each with its default
// where it has one worth saying.
func (m *Page) FlagList(fl []*pflag.Flag) {
	for _, f := range fl {
		name, usage := pflag.UnquoteUsage(f)
		tag := `\fB\-\-` + Escape(f.Name) + `\fR`
		if f.Shorthand != "" {
			tag = `\fB\-` + Escape(f.Shorthand) + `\fR, ` + tag
		}
		if name != "" {
			tag += ` \fI` + Escape(name) + `\fR`
		}
		switch f.DefValue {
		case "", "false", "0", "[]", "0s":
		default:
			usage += " (default: " + f.DefValue + ")"
		}
		m.Raw(".TP")
		m.Raw(tag)
		m.Raw(Line(usage))
	}
}

// Commands are the commands a page lists: every visible one under root,
// depth first, without cobra's help command.
func Commands(root *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, s := range c.Commands() {
			if s.Hidden || s.Name() == "help" {
				continue
			}
			out = append(out, s)
			walk(s)
		}
	}
	walk(root)
	return out
}

// Flags are the flags a page lists for a command: its own, without
// -h/--help (said once for all).
func Flags(c *cobra.Command) []*pflag.Flag {
	var out []*pflag.Flag
	keep := func(f *pflag.Flag) {
		if !f.Hidden && f.Name != "help" {
			out = append(out, f)
		}
	}
	c.LocalNonPersistentFlags().VisitAll(keep)
	c.PersistentFlags().VisitAll(keep)
	return out
}

// Line escapes one line of text; a line that would start with a control
// character gets a zero-width guard.
func Line(s string) string {
	e := Escape(s)
	if strings.HasPrefix(e, ".") || strings.HasPrefix(e, "'") {
		e = `\&` + e
	}
	return e
}

// Escape escapes roff's escape character and makes hyphens minus signs,
// so that flags copied from the page work.
func Escape(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	return strings.ReplaceAll(s, "-", `\-`)
}
