package main

import (
	"io"

	"github.com/fgtop/fgtop/internal/complete"
	"github.com/fgtop/fgtop/internal/complete/lookup"
	"github.com/fgtop/fgtop/themes"
	"github.com/spf13/cobra"
)

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
	byFlag := map[string]cobra.CompletionFunc{
		"theme":   completeTheme,
		"devices": completeDeviceSource,
		"agent":   completeAgents(""),
		"cpu":     completeAgents("="),
		"mem":     completeAgents("="),
		"move":    completeMove,
		"slot":    completeSlot,
		"device":  completeDevices,
	}
	for name, v := range complete.Static() {
		byFlag[name] = completeStatic(v)
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for name, fn := range byFlag {
			if f := c.Flags().Lookup(name); f != nil && complete.Completes(name, f.Value.Type()) {
				// Registering twice fails; every command has its own flags.
				_ = c.RegisterFlagCompletionFunc(name, fn)
			}
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
}

// completeStatic completes a flag's value as v says.
func completeStatic(v complete.Value) cobra.CompletionFunc {
	return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		switch {
		case v.Words != nil:
			return v.Words, cobra.ShellCompDirectiveNoFileComp
		case v.Dirs:
			return nil, cobra.ShellCompDirectiveFilterDirs
		}
		return v.Exts, cobra.ShellCompDirectiveFilterFileExt
	}
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
	words, ok := complete.Theme(toComplete, themes.Names(), func() []string { return lookup.RegularFiles(themes.UserDir()) })
	if !ok {
		return []string{"toml"}, cobra.ShellCompDirectiveFilterFileExt
	}
	return offer(words, false)
}

// completeDeviceSource offers auto and nvml, then mock-accelerator.toml or
// devices.json files.
func completeDeviceSource(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	words, ok := complete.DeviceSource(toComplete, func() []string { return lookup.RegularFiles(".") })
	if !ok {
		return []string{"toml", "json"}, cobra.ShellCompDirectiveFilterFileExt
	}
	return offer(words, false)
}

// completeAgents offers the agent ids of the config the command line
// names, each followed by suffix ("=" for --cpu AGENT=...).
func completeAgents(suffix string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return offer(complete.Fields(toComplete, suffix != "", nodeOf(cmd).AgentIDs))
	}
}

// completeMove completes --move DEVICE=AGENT: plugin-qualified device ids
// first, then, after "=", the agents.
func completeMove(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	n := nodeOf(cmd)
	return offer(complete.Fields(toComplete, false, n.DeviceIDs, n.AgentIDs))
}

// completeSlot completes --slot AGENT=SLOT=AMOUNT: the agents first, then,
// after "AGENT=", cpu, mem and the slots the device source registers (and
// those the config names); the amount is the user's to type.
func completeSlot(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	n := nodeOf(cmd)
	return offer(complete.Fields(toComplete, true, n.AgentIDs, n.SlotNames))
}

// nodeOf is what cmd's command line names of the node: its --config,
// --scratch-root, --devices and --mock-etcd.
func nodeOf(cmd *cobra.Command) lookup.Node {
	// A command without --scratch-root has no roots (the error says so).
	roots, _ := cmd.Flags().GetStringArray("scratch-root")
	return lookup.Node{Config: flagString(cmd, "config"), Roots: roots, Devices: flagString(cmd, "devices"), MockEtcd: flagString(cmd, "mock-etcd")}
}

// flagString reads a string flag of cmd, "" when it has none.
func flagString(cmd *cobra.Command, name string) string {
	if f := cmd.Flags().Lookup(name); f != nil {
		return f.Value.String()
	}
	return ""
}

// completeDevices offers, for history --device, the accelerators of the
// record's latest state.
func completeDevices(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	dir, err := readHistoryDir(flagString(cmd, "history"))
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return offer(lookup.Accelerators(dir), false)
}
