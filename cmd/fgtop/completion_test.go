//go:build unix

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/internal/testfix"
	"github.com/fgtop/fgtop/themes"
)

// completionFixture is a node to complete against: the fixtures' agent
// config and mock devices, with the ids the engine reads from them.
type completionFixture struct {
	config, mock, etcd string
	agents             []string // agent ids
	devices            []string // PLUGIN:ID, no memory
}

func newCompletionFixture(t *testing.T) completionFixture {
	t.Helper()
	fx := testfix.Dir(t, "backendai")
	f := completionFixture{
		config: filepath.Join(fx, "agent.multi-agent.device-based.toml"),
		mock:   filepath.Join(fx, "mock-accelerator.toml"),
		etcd:   filepath.Join(fx, "mock-accelerator.etcd.json"),
	}
	cfg, _ := agentconfig.Load(f.config)
	if cfg == nil || len(cfg.Agents) < 2 {
		t.Fatalf("fixture config %s has no agents", f.config)
	}
	for _, a := range cfg.Agents {
		f.agents = append(f.agents, string(a.ID))
	}
	src, err := inventory.Open(f.mock, inventory.OpenOptions{MockEtcdPath: f.etcd})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	inv, err := src.Poll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range inv.Devices {
		if d.Name != "mem" {
			f.devices = append(f.devices, fmt.Sprintf("%s:%s", d.Name, d.ID))
		}
	}
	return f
}

func suffixed(ids []string, prefix, suffix string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = prefix + id + suffix
	}
	return out
}

// TestCompleteCommand asks `fgtop __complete` directly, as every shell's
// script does.
func TestCompleteCommand(t *testing.T) {
	f := newCompletionFixture(t)
	// A user theme beside the built-in ones, and no other.
	xdg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg)
	writeFile(t, filepath.Join(xdg, "fgtop", "themes"), "mine.toml", "")
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"themes", []string{"watch", "--theme", ""}, append(themes.Names(), "mine")},
		{"a theme file", []string{"watch", "--theme", "./"}, []string{"toml"}},
		{"agents for --cpu", []string{"plan", "--config", f.config, "--cpu", ""}, suffixed(f.agents, "", "=")},
		{"agents for --agent", []string{"simulate", "--config", f.config, "--agent", ""}, f.agents},
		{"devices for --move", []string{"apply", "--config", f.config, "--devices", f.mock, "--mock-etcd", f.etcd, "--move", ""}, suffixed(f.devices, "", "=")},
		{"agents after a device", []string{"plan", "--config", f.config, "--move", "cuda:X="}, suffixed(f.agents, "cuda:X=", "")},
		{"agents from --scratch-root", []string{"simulate", "--scratch-root", "alpha=/tmp/a", "--scratch-root", "/tmp/beta", "--agent", ""}, []string{"alpha", "beta"}},
		{"missing config: nothing, quietly", []string{"plan", "--config", "/nonexistent/agent.toml", "--cpu", ""}, nil},
		{"bad device source: nothing, quietly", []string{"plan", "--config", f.config, "--devices", "/nonexistent.toml", "--move", ""}, nil},
		{"agents for --slot", []string{"apply", "--config", f.config, "--slot", ""}, suffixed(f.agents, "", "=")},
		{"slots after an agent", []string{"plan", "--config", f.config, "--devices", f.mock, "--mock-etcd", f.etcd, "--slot", "a="},
			[]string{"a=cpu=", "a=mem=", "a=cuda.shares="}},
		{"the amount is the user's", []string{"plan", "--config", f.config, "--slot", "a=cpu="}, nil},
		{"modes", []string{"plan", "--mode", ""}, []string{"shared", "auto-split", "manual"}},
		{"schemas", []string{"check", "--schema", ""}, []string{"main", "bep-1044"}},
		// Enum flags the tour found completing nothing: --format offered
		// files, --alloc-map= nothing.
		{"formats", []string{"apply", "--format", ""}, []string{"slot-based", "device-based"}},
		{"alloc maps", []string{"snapshot", "--alloc-map="}, []string{"ratio", "absolute"}},
		{"simulate --mem is a size: no agents", []string{"simulate", "--config", f.config, "--mem", ""}, nil},
		{"shells", []string{"completion", ""}, []string{"bash", "fish", "zsh"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out := runCLI(t, append([]string{"__complete"}, tt.args...)...)
			wantCode(t, code, exitOK, out)
			var got []string
			for _, l := range strings.Split(out, "\n") {
				if l == "" || strings.HasPrefix(l, ":") || strings.HasPrefix(l, "Completion ended") {
					continue
				}
				got = append(got, strings.SplitN(l, "\t", 2)[0])
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("completions %q, want %q", got, tt.want)
			}
		})
	}
}

// TestCompletionBash loads the bash script into a real bash (without the
// bash-completion package, so its stand-ins are used) and completes
// through its function, with the script calling this test binary as fgtop.
func TestCompletionBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed")
	}
	f := newCompletionFixture(t)
	bin := t.TempDir()
	wrapper := fmt.Sprintf("#!/bin/sh\nFGTOP_DEMO_HELPER=1 exec %q -test.run='^TestDemoHelperProcess$' -- \"$@\"\n", os.Args[0])
	if err := os.WriteFile(filepath.Join(bin, "fgtop"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	cwd := t.TempDir()
	for _, n := range []string{"a.toml", "b.json", "c.txt"} {
		writeFile(t, cwd, n, "")
	}
	if err := os.Mkdir(filepath.Join(cwd, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		words []string
		want  []string
	}{
		{[]string{"wat"}, []string{"watch"}},
		{[]string{"watch", "--th"}, []string{"--theme"}},
		{[]string{"watch", "--theme", ""}, themes.Names()},
		{[]string{"watch", "--theme", "h"}, []string{"high-contrast"}},
		{[]string{"plan", "--config", f.config, "--cpu", ""}, suffixed(f.agents, "", "=")},
		{[]string{"plan", "--config", f.config, "--devices", f.mock, "--move", ""}, suffixed(f.devices, "", "=")},
		// bash splits words at ':' too: the reply is what follows "cuda:".
		{[]string{"plan", "--config", f.config, "--move", "cuda:X="}, suffixed(f.agents, "X=", "")},
		{[]string{"watch", "--devices", ""}, []string{"auto", "nvml", "a.toml", "b.json"}},
		{[]string{"watch", "--config", ""}, []string{"sub", "a.toml"}},
		{[]string{"watch", "--scratch-root", ""}, []string{"sub"}},
		{[]string{"completion", ""}, []string{"bash", "fish", "zsh"}},
	}
	var script strings.Builder
	script.WriteString(`COMP_TYPE=9
source <(fgtop completion bash) || exit 9
complete -p fgtop
compopt() { :; }  # the builtin works only inside a real completion
comp() {
    COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; COMPREPLY=()
    __start_fgtop fgtop "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    echo "<<<"; printf '%s\n' "${COMPREPLY[@]}"; echo ">>>"
}
`)
	for _, tt := range tests {
		script.WriteString("comp fgtop")
		for _, w := range tt.words {
			script.WriteString(" '" + w + "'")
		}
		script.WriteString("\n")
	}
	cmd := exec.Command(bash, "--norc", "--noprofile", "-c", script.String())
	cmd.Dir = cwd
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "HOME="+t.TempDir(),
		"XDG_CONFIG_HOME="+t.TempDir(), "BACKEND_CONFIG_FILE=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	text := string(out)
	if !strings.HasPrefix(text, "complete -o default -F __start_fgtop fgtop\n") {
		t.Errorf("complete -p fgtop printed %.80q", text)
	}
	replies := strings.Split(text, "<<<\n")[1:]
	if len(replies) != len(tests) {
		t.Fatalf("%d replies for %d completions:\n%s", len(replies), len(tests), text)
	}
	for i, tt := range tests {
		body, _, _ := strings.Cut(replies[i], ">>>")
		var got []string
		for _, l := range strings.Split(body, "\n") {
			if l != "" {
				got = append(got, l)
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("fgtop %s<TAB>: %q, want %q", strings.Join(tt.words, " "), got, tt.want)
		}
	}
}

// TestCompletionScripts checks each shell's script names fgtop and calls
// back into it; where the shell is installed it must parse the script.
func TestCompletionScripts(t *testing.T) {
	tests := []struct {
		shell string
		marks []string
		check []string // a syntax check, if the shell is installed
	}{
		{"bash", []string{"complete -o default -F __start_fgtop fgtop", "__complete", "_get_comp_words_by_ref()"}, []string{"bash", "-n"}},
		{"zsh", []string{"#compdef fgtop", "__complete"}, []string{"zsh", "-n"}},
		{"fish", []string{"complete -c fgtop", "__complete"}, []string{"fish", "--no-execute"}},
	}
	for _, tt := range tests {
		t.Run(tt.shell, func(t *testing.T) {
			code, out := runCLI(t, "completion", tt.shell)
			wantCode(t, code, exitOK, out, tt.marks...)
			sh, err := exec.LookPath(tt.check[0])
			if err != nil {
				t.Logf("%s not installed: checked by structure only", tt.check[0])
				return
			}
			p := writeFile(t, t.TempDir(), "fgtop."+tt.shell, out)
			if b, err := exec.Command(sh, append(tt.check[1:], p)...).CombinedOutput(); err != nil {
				t.Errorf("%s rejects the script: %v\n%s", tt.shell, err, b)
			}
		})
	}
	code, out := runCLI(t, "completion")
	wantCode(t, code, exitBadUsage, out, "bash|zsh|fish")
	code, out = runCLI(t, "completion", "tcsh")
	wantCode(t, code, exitBadUsage, out)
}
