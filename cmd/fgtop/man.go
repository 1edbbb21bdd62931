package main

import (
	"io"
	"strings"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/partition"
	"github.com/fgtop/fgtop/engine/plugin"
	"github.com/fgtop/fgtop/internal/buildinfo"
	"github.com/fgtop/fgtop/internal/manpage"
	"github.com/spf13/cobra"
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
	b := buildinfo.Read()
	var m manpage.Page
	m.Header("FGTOP", 1, b.Date(), "fgtop "+b.Version, "fgtop manual")
	m.Section("NAME")
	m.Raw(`fgtop \- ` + manpage.Escape(root.Short))
	m.Section("SYNOPSIS")
	m.Raw(`.B fgtop`)
	m.Raw(`[\fIflags\fR]`)
	m.Raw(`.br`)
	m.Raw(`.B fgtop`)
	m.Raw(`\fIcommand\fR [\fIflags\fR]`)
	m.Section("DESCRIPTION")
	desc, _, _ := strings.Cut(root.Long, "\n\nExit status (every command):") // EXIT STATUS says it
	m.Text(desc)
	m.Para()
	m.Text("Every command takes -h or --help. The flags of the console (fgtop without a command) follow; each command's own flags are listed under COMMANDS.")
	m.Section("OPTIONS")
	m.FlagList(manpage.Flags(root))
	m.Section("COMMANDS")
	for _, c := range manpage.Commands(root) {
		m.Command(c)
	}
	m.Section("CUDA PLUGIN")
	m.Text("NVML's GPUs are shown as the node's CUDA plugin registers them. Which plugin runs is decided by the first rule that tells: " +
		"--cuda-plugin open|fractional; agent.toml [agent] allow-compute-plugins / block-compute-plugins (module prefixes " +
		plugin.ModuleOpen + ", " + plugin.ModuleFractional + "); allocation_mode in the plugin settings; the kernels' resource.txt lines; " +
		"otherwise cuda_open. The snapshot JSON says which rule decided (plugin.source).")
	m.Para()
	m.Text("The settings are read from agent.toml's [etcd] (addr, namespace, user, password) under /sorna/NAMESPACE/config/plugins/accelerator/cuda/, " +
		"the node scope nodes/agents/AGENT-ID/ over the global one, and followed; --plugin-config FILE reads them from JSON or TOML instead. " +
		"cuda_open: ids 0, 1, ... in PCI bus order, cuda.device, capacity 1, device_mask UUIDs leave gaps. " +
		"Fractional: ids GPU-UUID, cuda.shares with capacity min(memory/unit_mem, SMs/unit_proc) rounded down to 0.01. " +
		"That rule is the open-source mock plugin's, ASSUMED for the closed-source fractional plugin; --fgpu-capacity N or DEVICE=N,... overrides it. " +
		"When etcd cannot be read an issue names it, the last settings read are kept, and a capacity never known is shown as ? (absent from the JSON).")
	m.Section("EXIT STATUS")
	for _, r := range exitStatus {
		m.Item(r.code, r.what)
	}
	m.Section("ENVIRONMENT")
	m.Item("BACKEND_CONFIG_FILE", "the agent.toml to use before the usual places, as Backend.AI's agent does")
	m.Item("NO_COLOR", "when set and not empty, the console uses the mono theme unless --theme names one")
	m.Item("XDG_CONFIG_HOME", "where user themes are looked for: $XDG_CONFIG_HOME/fgtop/themes (default ~/.config/fgtop/themes)")
	m.Item("SUDO_USER", "the name journaled for changes made under sudo, instead of the login")
	m.Item("TMPDIR", "where fgtop demo puts its node (removed on exit)")
	m.Item("FGTOP_REQUIRE_ETCD", "tests only: 1 makes the tests that start a real etcd fail instead of skip where the etcd binary is missing")
	m.Item("GOGC, GOMEMLIMIT", "when set, snapshot, the console and serve leave the garbage collector as the user set it (serve otherwise keeps the Go runtime's memory under a soft 192 MiB)")
	m.Item("FGTOP_HISTORY", "the history directory when --history is not given (\"off\": record nothing)")
	m.Item("FGTOP_REPLAY_FED", "1: plan --replay runs the partitions in force as the record is read rather than after it (the same answer; measured slower on two cores, meant for machines with more)")
	m.Section("FILES")
	m.Item("agent.toml", "the agent config, looked for where Backend.AI's agent looks, in order: "+strings.Join(agentconfig.SearchPlaces(), ", ")+
		"; or given with --config. Watching needs read permission; plan, apply and rollback need write permission on the file and its directory")
	m.Item("SCRATCH_ROOT/KERNEL_ID/config/resource.txt", "each kernel's allocation, read once and then followed; fgtop needs read and search permission on the scratch root")
	m.Item("AGENT.toml"+strings.TrimPrefix(agentconfig.JournalPath("AGENT.toml"), "AGENT.toml"), "the journal of every apply and rollback, beside the config")
	m.Item("AGENT.toml.fgtop-STAMP.bak", "the previous version kept by each apply, for rollback")
	m.Item("AGENT.toml"+strings.TrimPrefix(partition.DraftRecordPath("AGENT.toml"), "AGENT.toml"), "who holds the partition draft in a console right now")
	m.Item("~/.config/fgtop/themes/NAME.toml", "user themes for --theme NAME")
	m.Item("/var/lib/fgtop/history/seg-TIME.fgh", "the history (fgtop record; serve, exporter and the console record there too when /var/lib/fgtop is writable): compressed, checksummed segments, one writer at a time (the LOCK file beside them)")
	m.Item("libnvidia-ml.so.1", "NVIDIA's management library, loaded at run time by a build with NVML support (see fgtop version)")
	m.Section("SEE ALSO")
	m.Raw(`fgtop version; fgtop completion \-\-help; Backend.AI's agent documentation.`)
	_, err := io.WriteString(w, m.String())
	return err
}
