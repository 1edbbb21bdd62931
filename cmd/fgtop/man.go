package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/partition"
	"github.com/fgtop/fgtop/engine/plugin"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func newManCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "man",
		Short: "Print the manual page, fgtop(1), in roff (install: fgtop man > /usr/local/share/man/man1/fgtop.1)",
		Long: `Print fgtop's manual page in roff. It is generated from the commands' own
definitions (every subcommand and every flag, with its default), so it cannot
drift from the binary. Read it with: fgtop man | man -l -`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return writeMan(cmd.OutOrStdout(), cmd.Root())
		},
	}
}

// writeMan writes fgtop(1) for the command tree under root.
func writeMan(w io.Writer, root *cobra.Command) error {
	root.InitDefaultVersionFlag()
	b := readBuildInfo()
	var m manWriter
	date := ""
	if b.Time != nil && len(*b.Time) >= 10 {
		date = (*b.Time)[:10]
	}
	m.raw(fmt.Sprintf(".TH FGTOP 1 %q %q %q", date, "fgtop "+b.Version, "fgtop manual"))
	m.section("NAME")
	m.raw(`fgtop \- ` + roffEscape(root.Short))
	m.section("SYNOPSIS")
	m.raw(`.B fgtop`)
	m.raw(`[\fIflags\fR]`)
	m.raw(`.br`)
	m.raw(`.B fgtop`)
	m.raw(`\fIcommand\fR [\fIflags\fR]`)
	m.section("DESCRIPTION")
	desc, _, _ := strings.Cut(root.Long, "\n\nExit status (every command):") // EXIT STATUS says it
	m.text(desc)
	m.para()
	m.text("Every command takes -h or --help. The flags of the console (fgtop without a command) follow; each command's own flags are listed under COMMANDS.")
	m.section("OPTIONS")
	m.flags(root)
	m.section("COMMANDS")
	for _, c := range manCommands(root) {
		m.command(c)
	}
	m.section("CUDA PLUGIN")
	m.text("NVML's GPUs are shown as the node's CUDA plugin registers them. Which plugin runs is decided by the first rule that tells: " +
		"--cuda-plugin open|fractional; agent.toml [agent] allow-compute-plugins / block-compute-plugins (module prefixes " +
		plugin.ModuleOpen + ", " + plugin.ModuleFractional + "); allocation_mode in the plugin settings; the kernels' resource.txt lines; " +
		"otherwise cuda_open. The snapshot JSON says which rule decided (plugin.source).")
	m.para()
	m.text("The settings are read from agent.toml's [etcd] (addr, namespace, user, password) under /sorna/NAMESPACE/config/plugins/accelerator/cuda/, " +
		"the node scope nodes/agents/AGENT-ID/ over the global one, and followed; --plugin-config FILE reads them from JSON or TOML instead. " +
		"cuda_open: ids 0, 1, ... in PCI bus order, cuda.device, capacity 1, device_mask UUIDs leave gaps. " +
		"Fractional: ids GPU-UUID, cuda.shares with capacity min(memory/unit_mem, SMs/unit_proc) rounded down to 0.01. " +
		"That rule is the open-source mock plugin's, ASSUMED for the closed-source fractional plugin; --fgpu-capacity N or DEVICE=N,... overrides it. " +
		"When etcd cannot be read an issue names it, the last settings read are kept, and a capacity never known is shown as ? (absent from the JSON).")
	m.section("EXIT STATUS")
	for _, r := range exitStatus {
		m.item(r.code, r.what)
	}
	m.section("ENVIRONMENT")
	m.item("BACKEND_CONFIG_FILE", "the agent.toml to use before the usual places, as Backend.AI's agent does")
	m.item("NO_COLOR", "when set and not empty, the console uses the mono theme unless --theme names one")
	m.item("XDG_CONFIG_HOME", "where user themes are looked for: $XDG_CONFIG_HOME/fgtop/themes (default ~/.config/fgtop/themes)")
	m.item("SUDO_USER", "the name journaled for changes made under sudo, instead of the login")
	m.item("TMPDIR", "where fgtop demo puts its node (removed on exit)")
	m.item("FGTOP_REQUIRE_ETCD", "tests only: 1 makes the tests that start a real etcd fail instead of skip where the etcd binary is missing")
	m.item("GOGC, GOMEMLIMIT", "when set, snapshot, the console and serve leave the garbage collector as the user set it (serve otherwise keeps the Go runtime's memory under a soft 192 MiB)")
	m.item("FGTOP_HISTORY", "the history directory when --history is not given (\"off\": record nothing)")
	m.item("FGTOP_REPLAY_FED", "1: plan --replay runs the partitions in force as the record is read rather than after it (the same answer; measured slower on two cores, meant for machines with more)")
	m.section("FILES")
	m.item("agent.toml", "the agent config, looked for where Backend.AI's agent looks, in order: "+strings.Join(configPlaces(), ", ")+
		"; or given with --config. Watching needs read permission; plan, apply and rollback need write permission on the file and its directory")
	m.item("SCRATCH_ROOT/KERNEL_ID/config/resource.txt", "each kernel's allocation, read once and then followed; fgtop needs read and search permission on the scratch root")
	m.item("AGENT.toml"+strings.TrimPrefix(agentconfig.JournalPath("AGENT.toml"), "AGENT.toml"), "the journal of every apply and rollback, beside the config")
	m.item("AGENT.toml.fgtop-STAMP.bak", "the previous version kept by each apply, for rollback")
	m.item("AGENT.toml"+strings.TrimPrefix(partition.DraftRecordPath("AGENT.toml"), "AGENT.toml"), "who holds the partition draft in a console right now")
	m.item("~/.config/fgtop/themes/NAME.toml", "user themes for --theme NAME")
	m.item("/var/lib/fgtop/history/seg-TIME.fgh", "the history (fgtop record; serve, exporter and the console record there too when /var/lib/fgtop is writable): compressed, checksummed segments, one writer at a time (the LOCK file beside them)")
	m.item("libnvidia-ml.so.1", "NVIDIA's management library, loaded at run time by a build with NVML support (see fgtop version)")
	m.section("SEE ALSO")
	m.raw(`fgtop version; fgtop completion \-\-help; Backend.AI's agent documentation.`)
	_, err := io.WriteString(w, m.b.String())
	return err
}

// configPlaces are agentconfig.SearchPaths for any user: the environment
// variable by name, the home directory as ~.
func configPlaces() []string {
	home, _ := os.UserHomeDir()
	env := os.Getenv("BACKEND_CONFIG_FILE")
	out := []string{"$BACKEND_CONFIG_FILE"}
	for _, p := range agentconfig.SearchPaths() {
		if env != "" && p == env {
			continue
		}
		if home != "" && home != "/" && strings.HasPrefix(p, home+string(filepath.Separator)) {
			p = "~" + p[len(home):]
		}
		out = append(out, p)
	}
	return out
}

// manCommands are the commands the manual lists: every visible one, depth
// first, without cobra's help command.
func manCommands(root *cobra.Command) []*cobra.Command {
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

// manFlags are the flags the manual lists for a command: its own, without
// -h/--help (described once, in DESCRIPTION).
func manFlags(c *cobra.Command) []*pflag.Flag {
	var out []*pflag.Flag
	c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && f.Name != "help" {
			out = append(out, f)
		}
	})
	c.PersistentFlags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && f.Name != "help" {
			out = append(out, f)
		}
	})
	return out
}

// manWriter builds roff text.
type manWriter struct {
	b strings.Builder
}

func (m *manWriter) raw(s string) { m.b.WriteString(s + "\n") }

func (m *manWriter) section(name string) { m.raw(".SH " + name) }

func (m *manWriter) para() { m.raw(".PP") }

// item is a tagged paragraph: a bold tag, then its text.
func (m *manWriter) item(tag, text string) {
	m.raw(".TP")
	m.raw(`\fB` + roffEscape(tag) + `\fR`)
	m.raw(roffLine(text))
}

// text writes help text: plain lines are filled into paragraphs, indented
// lines (tables, examples) are kept as they are.
func (m *manWriter) text(s string) {
	fill := true
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		switch {
		case strings.TrimSpace(l) == "":
			if fill {
				m.para()
			} else {
				m.raw("")
			}
		case l[0] == ' ' || l[0] == '\t':
			if fill {
				m.raw(".nf")
				fill = false
			}
			m.raw(roffLine(l))
		default:
			if !fill {
				m.raw(".fi")
				fill = true
			}
			m.raw(roffLine(l))
		}
	}
	if !fill {
		m.raw(".fi")
	}
}

// command writes one subcommand: its synopsis, description, examples and
// flags.
func (m *manWriter) command(c *cobra.Command) {
	m.raw(".SS " + `"` + roffEscape(c.CommandPath()) + `"`)
	if c.Long != "" {
		m.text(c.Long)
	} else {
		m.text(c.Short)
	}
	if use := c.UseLine(); strings.Contains(use, "[") || strings.Contains(use, "--") {
		m.para()
		m.raw(`Usage: \fB` + roffEscape(use) + `\fR`)
	}
	if c.Example != "" {
		m.para()
		m.raw("Examples:")
		m.raw(".nf")
		for _, l := range strings.Split(c.Example, "\n") {
			m.raw(roffLine(l))
		}
		m.raw(".fi")
	}
	if fl := manFlags(c); len(fl) > 0 {
		m.para()
		m.raw("Flags:")
		m.raw(".RS")
		m.flagList(fl)
		m.raw(".RE")
	}
}

// flags writes a command's flags as tagged paragraphs.
func (m *manWriter) flags(c *cobra.Command) { m.flagList(manFlags(c)) }

func (m *manWriter) flagList(fl []*pflag.Flag) {
	for _, f := range fl {
		name, usage := pflag.UnquoteUsage(f)
		tag := `\fB\-\-` + roffEscape(f.Name) + `\fR`
		if f.Shorthand != "" {
			tag = `\fB\-` + roffEscape(f.Shorthand) + `\fR, ` + tag
		}
		if name != "" {
			tag += ` \fI` + roffEscape(name) + `\fR`
		}
		switch f.DefValue {
		case "", "false", "0", "[]", "0s":
		default:
			usage += " (default: " + f.DefValue + ")"
		}
		m.raw(".TP")
		m.raw(tag)
		m.raw(roffLine(usage))
	}
}

// roffLine escapes one line of text; a line that would start with a
// control character gets a zero-width guard.
func roffLine(s string) string {
	e := roffEscape(s)
	if strings.HasPrefix(e, ".") || strings.HasPrefix(e, "'") {
		e = `\&` + e
	}
	return e
}

// roffEscape escapes roff's escape character and makes hyphens minus signs,
// so that flags copied from the page work.
func roffEscape(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	return strings.ReplaceAll(s, "-", `\-`)
}
