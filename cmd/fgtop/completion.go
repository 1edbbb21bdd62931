package main

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/internal/complete"
	"github.com/fgtop/fgtop/themes"
	"github.com/spf13/cobra"
)

// completionTimeout bounds the device lookup behind a completion: a Tab
// must answer at once, even where NVML is slow to start.
const completionTimeout = 2 * time.Second

func newCompletionCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "completion bash|zsh|fish",
		Short: "Shell completion script: subcommands, flags, theme names, agent and device ids",
		Long: `Print a completion script for bash, zsh or fish. It completes subcommands and flags,
--theme names, --devices and the files flags take, and agent and device ids and slot names
(for --agent, --move, --cpu, --mem, --slot AGENT=SLOT=) read from the agent.toml and device source the command line names
(or Backend.AI's usual agent.toml); the script asks fgtop itself, which answers quietly and
within two seconds even when a file is missing.

Install (as root for every user, or into your own directories):
  bash:  fgtop completion bash > /etc/bash_completion.d/fgtop
         (or: echo 'source <(fgtop completion bash)' >> ~/.bashrc)
  zsh:   fgtop completion zsh > "${fpath[1]}/_fgtop"      (then start a new shell)
  fish:  fgtop completion fish > ~/.config/fish/completions/fgtop.fish`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageErr("completion needs a shell: fgtop completion bash|zsh|fish")
		},
	}
	shells := []struct {
		name string
		gen  func(c *cobra.Command) error
	}{
		{"bash", func(c *cobra.Command) error {
			if err := c.Root().GenBashCompletionV2(c.OutOrStdout(), true); err != nil {
				return err
			}
			_, err := io.WriteString(c.OutOrStdout(), complete.BashStandIns)
			return err
		}},
		{"zsh", func(c *cobra.Command) error { return c.Root().GenZshCompletion(c.OutOrStdout()) }},
		{"fish", func(c *cobra.Command) error { return c.Root().GenFishCompletion(c.OutOrStdout(), true) }},
	}
	for _, sh := range shells {
		gen := sh.gen
		cmd.AddCommand(&cobra.Command{
			Use:   sh.name,
			Short: "Print the " + sh.name + " completion script",
			Args:  cobra.NoArgs,
			RunE:  func(c *cobra.Command, _ []string) error { return gen(c) },
		})
	}
	return cmd
}

// registerCompletions gives every command's flags their completions: fixed
// words, files of the right kind, and ids read from the node.
func registerCompletions(root *cobra.Command) {
	words := func(ws ...string) cobra.CompletionFunc {
		return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return ws, cobra.ShellCompDirectiveNoFileComp
		}
	}
	files := func(exts ...string) cobra.CompletionFunc {
		return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return exts, cobra.ShellCompDirectiveFilterFileExt
		}
	}
	dirs := func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return nil, cobra.ShellCompDirectiveFilterDirs
	}
	byFlag := map[string]cobra.CompletionFunc{
		"theme":        completeTheme,
		"devices":      completeDeviceSource,
		"config":       files("toml"),
		"from":         files("toml"),
		"mock-etcd":    files("json"),
		"case":         files("json"),
		"scratch-root": dirs,
		"agent":        completeAgents(""),
		"cpu":          completeAgents("="),
		"mem":          completeAgents("="),
		"move":         completeMove,
		"slot":         completeSlot,
		"mode":         words("shared", "auto-split", "manual"),
		"strategy":     words("evenly", "fill"),
		"affinity":     words("interleaved", "prefer-single-node"),
		"schema":       words("main", "bep-1044"),
		"partition":    words("slot-based", "device-based"),
		// The history's flags.
		"history":  dirs,
		"dir":      dirs,
		"keep":     words("7d", "3d", "1d", "12h"),
		"max-size": words("100MiB", "1GiB", "20MiB"),
		"at":       words("-1h", "-2h", "-1d", "now"),
		"since":    words("-1h", "-1d", "-7d"),
		"until":    words("now", "-1h"),
		"device":   completeDevices,
	}
	// The CUDA plugin flags (pluginflags.go).
	byFlag["plugin-config"] = files("json", "toml")
	byFlag["cuda-plugin"] = words("open", "fractional")
	agentValued := map[string]bool{"cpu": true, "mem": true, "move": true, "slot": true}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for name, fn := range byFlag {
			f := c.Flags().Lookup(name)
			if f == nil || f.Value.Type() == "bool" || f.Value.Type() == "int" {
				continue
			}
			// The partition flags AGENT=VALUE repeat; simulate's --mem of
			// the same name is a size, which has nothing to complete.
			if agentValued[name] && f.Value.Type() != "stringArray" {
				continue
			}
			// Registering twice fails; every command has its own flags.
			_ = c.RegisterFlagCompletionFunc(name, fn)
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
}

// offer is words to complete with, the shell adding a space after the one
// taken unless noSpace.
func offer(words []string, noSpace bool) ([]cobra.Completion, cobra.ShellCompDirective) {
	d := cobra.ShellCompDirectiveNoFileComp
	if noSpace {
		d |= cobra.ShellCompDirectiveNoSpace
	}
	return words, d
}

// completeTheme offers the built-in theme names and user themes; a value
// that looks like a path completes as a file.
func completeTheme(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	words, ok := complete.Theme(toComplete, themes.Names(), func() []string { return regularFiles(themes.UserDir()) })
	if !ok {
		return []string{"toml"}, cobra.ShellCompDirectiveFilterFileExt
	}
	return offer(words, false)
}

// completeDeviceSource offers auto and nvml, then mock-accelerator.toml or
// devices.json files.
func completeDeviceSource(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	words, ok := complete.DeviceSource(toComplete, func() []string { return regularFiles(".") })
	if !ok {
		return []string{"toml", "json"}, cobra.ShellCompDirectiveFilterFileExt
	}
	return offer(words, false)
}

// regularFiles lists the names of dir's regular files; none when dir is
// "" or cannot be read.
func regularFiles(dir string) []string {
	if dir == "" {
		return nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if e.Type().IsRegular() {
			out = append(out, e.Name())
		}
	}
	return out
}

// completeAgents offers the agent ids of the config the command line
// names, each followed by suffix ("=" for --cpu AGENT=...).
func completeAgents(suffix string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return offer(complete.Fields(toComplete, suffix != "", func() []string { return agentIDsFor(cmd) }))
	}
}

// completeMove completes --move DEVICE=AGENT: plugin-qualified device ids
// first, then, after "=", the agents.
func completeMove(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return offer(complete.Fields(toComplete, false,
		func() []string { return deviceIDsFor(cmd) },
		func() []string { return agentIDsFor(cmd) }))
}

// completeSlot completes --slot AGENT=SLOT=AMOUNT: the agents first, then,
// after "AGENT=", cpu, mem and the slots the device source registers (and
// those the config names); the amount is the user's to type.
func completeSlot(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return offer(complete.Fields(toComplete, true,
		func() []string { return agentIDsFor(cmd) },
		func() []string { return slotNamesFor(cmd) }))
}

// slotNamesFor lists cpu, mem, the slots of the device source --devices
// and --mock-etcd name, and the slots the config's tables name, each once.
func slotNamesFor(cmd *cobra.Command) []string {
	var slots []string
	if inv := pollDevices(cmd); inv != nil {
		for _, d := range inv.Devices {
			slots = append(slots, string(d.Slot))
		}
	}
	path := flagString(cmd, "config")
	if path == "" {
		path, _ = agentconfig.Find()
	}
	if path != "" {
		if cfg, _ := agentconfig.Load(path); cfg != nil {
			for _, a := range cfg.Agents {
				if a.Alloc != nil {
					for s := range a.Alloc.Slots {
						slots = append(slots, string(s))
					}
				}
			}
		}
	}
	return complete.Slots(slots)
}

// flagString reads a string flag of cmd, "" when it has none.
func flagString(cmd *cobra.Command, name string) string {
	if f := cmd.Flags().Lookup(name); f != nil {
		return f.Value.String()
	}
	return ""
}

// agentIDsFor reads the agent ids of the config named by --config (or
// found where Backend.AI looks, when no --scratch-root is given either),
// plus the agents --scratch-root names.
// Any error just means fewer completions.
func agentIDsFor(cmd *cobra.Command) []string {
	var ids []string
	var roots []string
	if f := cmd.Flags().Lookup("scratch-root"); f != nil {
		if sv, ok := f.Value.(interface{ GetSlice() []string }); ok {
			roots = sv.GetSlice()
		}
	}
	path := flagString(cmd, "config")
	if path == "" && len(roots) == 0 {
		// As the commands do: Backend.AI's places only when neither a
		// config nor scratch roots are named.
		path, _ = agentconfig.Find()
	}
	if path != "" {
		// Load returns the config with its problems when it breaks a rule:
		// its agents are still the ones to complete.
		if cfg, _ := agentconfig.Load(path); cfg != nil {
			for _, a := range cfg.Agents {
				ids = append(ids, string(a.ID))
			}
		}
	}
	return complete.Agents(ids, roots)
}

// pollDevices reads the device source --devices and --mock-etcd name
// once, within completionTimeout; nil when it cannot.
func pollDevices(cmd *cobra.Command) *inventory.Inventory {
	src, err := inventory.Open(flagString(cmd, "devices"), inventory.OpenOptions{MockEtcdPath: flagString(cmd, "mock-etcd")})
	if err != nil {
		return nil
	}
	defer src.Close()
	ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
	defer cancel()
	inv, err := src.Poll(ctx)
	if err != nil {
		return nil
	}
	return inv
}

// deviceIDsFor lists PLUGIN:ID for every device of the source --devices
// and --mock-etcd name, host cores included.
func deviceIDsFor(cmd *cobra.Command) []string {
	if inv := pollDevices(cmd); inv != nil {
		return complete.Movable(inv.Devices)
	}
	return nil
}

// completeDevices offers, for history --device, the accelerators of the
// record's latest state.
func completeDevices(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	dir, err := readHistoryDir(flagString(cmd, "history"))
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	rd, err := history.OpenReader(dir)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	res, err := rd.At(time.Now())
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return offer(complete.Accelerators(res.Snap.Devices), false)
}
