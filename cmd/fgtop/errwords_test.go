package main

import (
	"github.com/fgtop/fgtop/internal/cliwords"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestErrorsNameWhatToDo feeds the bad input an operator meets first and
// reads the message and the exit status: a config that is not there
// (where fgtop looked, what to do), an unknown command (the closest
// one), amounts echoed as written and malformed --cpu/--mem both exit 2.
func TestErrorsNameWhatToDo(t *testing.T) {
	t.Setenv("BACKEND_CONFIG_FILE", "")
	missing := filepath.Join(t.TempDir(), "nope.toml")
	cfg := filepath.Join("..", "..", "engine", "partition", "testdata", "agent.multi-agent.device-based.toml")
	// A node never applied to: no journal beside its config.
	fresh := filepath.Join(t.TempDir(), "agent.toml")
	if raw, err := os.ReadFile(cfg); err != nil {
		t.Fatal(err)
	} else if err := os.WriteFile(fresh, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name    string
		args    []string
		code    int
		want    []string
		notWant []string
	}{
		{"config not found", []string{"check", "--config", missing}, exitBadUsage,
			[]string{"no agent config at " + missing, "check the path", "/etc/backend.ai/agent.toml"}, []string{"lstat", "resolve agent config path", "looked for " + missing}},
		{"config not found, relative", []string{"check", "--config", "nope-htour.toml"}, exitBadUsage,
			[]string{"no agent config at nope-htour.toml (given with --config): fgtop looked for /", "/nope-htour.toml; check the path"}, nil},
		{"config not found, snapshot", []string{"snapshot", "--config", missing}, exitBadUsage,
			[]string{"no agent config at " + missing}, []string{"lstat"}},
		{"negative mem echoed as written", []string{"plan", "--config", cfg, "--mem", "a=-10g"}, exitBadUsage,
			[]string{`--mem "a=-10g"`, "-10g is not above zero"}, []string{"10737418240"}},
		{"cpu not a core list", []string{"plan", "--config", cfg, "--cpu", "a=abc"}, exitBadUsage,
			[]string{`--cpu "a=abc"`, "not a list of cores such as 0-7,16"}, nil},
		{"mem a fraction of a byte", []string{"plan", "--config", cfg, "--mem", "a=0.3K"}, exitBadUsage,
			[]string{`--mem "a=0.3K"`, "whole number of bytes", "write e.g. 120G"}, nil},
		{"rollback, config not found", []string{"rollback", "--config", missing, "--yes"}, exitBadUsage,
			[]string{"no agent config at " + missing}, []string{"lstat"}},
		{"rollback, nothing ever applied", []string{"rollback", "--config", fresh, "--yes"}, exitProblem,
			[]string{"nothing to roll back: nothing was applied to " + fresh + " with fgtop here: there is no journal beside it (" + fresh + ".fgtop-journal.jsonl)"},
			[]string{"records no apply"}},
		{"devices file not found", []string{"snapshot", "--devices", missing, "--scratch-root", t.TempDir()}, exitBadUsage,
			[]string{"--devices " + missing + ": no such file", "mock-accelerator.toml"}, []string{"stat "}},
		{"unknown agent", []string{"plan", "--config", cfg, "--cpu", "nobody=0-3"}, exitBadUsage,
			[]string{`unknown agent "nobody"`, "the plan is invalid"}, nil},
		{"a command typed as a flag", []string{"--demo"}, exitBadUsage,
			[]string{"unknown flag: --demo; did you mean the command `fgtop demo`?"}, nil},
		{"flag value not a number", []string{"demo", "--seed", "abc"}, exitBadUsage,
			[]string{`--seed "abc": want a whole number`, "fgtop demo --help"}, []string{"strconv", "invalid syntax"}},
		{"flag value out of range", []string{"demo", "--seed", "99999999999999999999"}, exitBadUsage,
			[]string{`--seed "99999999999999999999": want a whole number, and this one is out of range`}, []string{"strconv", "value out of range"}},
		{"flag value not a duration", []string{"snapshot", "--follow", "--heartbeat", "5"}, exitBadUsage,
			[]string{`--heartbeat "5": want a duration such as 30s`}, []string{"time: missing unit"}},
		{"unknown flag, the closest", []string{"exporter", "--listn", "x"}, exitBadUsage,
			[]string{"unknown flag: --listn; did you mean --listen?", "fgtop exporter --help"}, nil},
		{"a sibling's name for the same flag", []string{"snapshot", "--dir", "x"}, exitBadUsage,
			[]string{"unknown flag: --dir; did you mean --history? (--dir is fgtop record's name for the history directory)", "fgtop snapshot --help"}, nil},
		{"flag without its value", []string{"fleet", "--hosts"}, exitBadUsage,
			[]string{"--hosts needs a value", "fgtop fleet --help"}, nil},
		{"a word a command does not take", []string{"man", "extra"}, exitBadUsage,
			[]string{`fgtop man takes no arguments (got "extra")`, "fgtop man --help"}, []string{"unknown command"}},
		{"an unknown subcommand below the root", []string{"completion", "tcsh"}, exitBadUsage,
			[]string{`fgtop completion: unknown command "tcsh"`, "fgtop completion --help"}, []string{"'fgtop --help'"}},
		{"--demo on a command without a demo node", []string{"check", "--demo"}, exitBadUsage,
			[]string{"unknown flag: --demo", "fgtop check has no demo node of its own", "fgtop demo --headless"}, []string{"did you mean --"}},
		{"--demo on simulate", []string{"simulate", "--demo", "--request", "cuda.shares=0.5"}, exitBadUsage,
			[]string{"fgtop simulate has no demo node of its own"}, []string{"did you mean --mem"}},
		{"a hosts file not there", []string{"fleet", "--hosts", "@" + missing, "--once"}, exitBadUsage,
			[]string{"--hosts @" + missing + ": no such file (looked for " + missing + ")"}, []string{"open "}},
		{"a plugin settings file not there", []string{"snapshot", "--scratch-root", t.TempDir(), "--plugin-config", missing}, exitBadUsage,
			[]string{"--plugin-config " + missing + ": no such file (looked for " + missing + ")"}, []string{"open "}},
		{"a case file not there", []string{"simulate", "--case", missing}, exitBadUsage,
			[]string{"--case " + missing + ": no such file (looked for " + missing + ")"}, []string{"open "}},
		{"help on a mistyped command", []string{"help", "chek"}, exitBadUsage,
			[]string{`help: unknown command "chek"; did you mean check?`, "fgtop --help"}, []string{"Available Commands"}},
		{"help on a mistyped subcommand", []string{"help", "completion", "tcsh"}, exitBadUsage,
			[]string{`unknown command "tcsh"; did you mean bash`}, []string{"Usage:"}},
		{"help on a command still helps", []string{"help", "completion", "bash"}, exitOK,
			[]string{"fgtop completion bash"}, []string{"unknown command"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out := runCLIQuiet(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d\n%s", code, tt.code, out)
			}
			wantWords(t, out, tt.want, tt.notWant)
		})
	}
	for typo, want := range map[string]string{"chek": "did you mean check?", "snap": "did you mean snapshot?", "undo": "did you mean rollback?", "zzzzzz": "fgtop --help"} {
		root := newRootCmd()
		root.SetArgs([]string{typo})
		err := root.Execute()
		if err == nil {
			t.Fatalf("%s: no error", typo)
		}
		if msg := cliwords.UnknownCommand(root, err).Error(); !strings.Contains(msg, `unknown command "`+typo+`"`) || !strings.Contains(msg, want) {
			t.Errorf("%s: %q, want %q", typo, msg, want)
		}
	}
}

// TestFleetPrometheusErrors: --prometheus that is not a URL is bad usage
// (exit 2, what to write), and a Prometheus that does not listen is said
// in fgtop's words (exit 1, what to check), not as the HTTP client's
// "Post ...: dial tcp ...: connect: connection refused".
func TestFleetPrometheusErrors(t *testing.T) {
	code, out := runCLIQuiet(t, "fleet", "--prometheus", "nope", "--once", "--json")
	if code != exitBadUsage || !strings.Contains(out, `--prometheus "nope"`) || !strings.Contains(out, "http://prometheus:9090") || strings.Contains(out, "unsupported protocol") {
		t.Errorf("not a URL: exit %d\n%s", code, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := "http://" + l.Addr().String()
	l.Close() // nothing listens there now
	code, out = runCLIQuiet(t, "fleet", "--prometheus", addr, "--once", "--json", "--timeout", "5s")
	if code != exitProblem || !strings.Contains(out, "nothing listens at "+addr) || !strings.Contains(out, "check --prometheus") {
		t.Errorf("not listening: exit %d\n%s", code, out)
	}
	for _, raw := range []string{"dial tcp", "Post \"", "connect: connection refused"} {
		if strings.Contains(out, raw) {
			t.Errorf("not listening: the client's words %q in\n%s", raw, out)
		}
	}
	// A server without the query API (an exporter's /metrics server
	// answers 404 there) is said to be one.
	notProm := httptest.NewServer(http.NotFoundHandler())
	defer notProm.Close()
	code, out = runCLIQuiet(t, "fleet", "--prometheus", notProm.URL, "--once", "--json", "--timeout", "5s")
	if code != exitProblem || !strings.Contains(out, notProm.URL+" has no Prometheus query API (/api/v1/query answers 404 Not Found)") || strings.Contains(out, "client_error") {
		t.Errorf("not Prometheus: exit %d\n%s", code, out)
	}
}

// TestServeAndListenErrors: a port another program holds, an
// authorized_keys that is not there and a host key that cannot be
// created are said in fgtop's words with what to do (exit 2), not as
// "listen tcp ...: bind: address already in use" or "sshserve: host key:
// open ...".
func TestServeAndListenErrors(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	taken := l.Addr().String()
	dir := t.TempDir()
	keys := filepath.Join(dir, "authorized_keys")
	if err := os.WriteFile(keys, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name    string
		args    []string
		want    []string
		notWant []string
	}{
		{"exporter on a taken port", []string{"exporter", "--demo", "--listen", taken},
			[]string{"--listen " + taken + ": the address is in use", "pick another port"}, []string{"bind:"}},
		{"serve on a taken port", []string{"serve", "--demo", "--history", "off", "--authorized-keys", keys, "--host-key", filepath.Join(dir, "hk"), "--listen", taken},
			[]string{"serve: --listen " + taken + ": the address is in use"}, []string{"bind:"}},
		{"authorized_keys not there", []string{"serve", "--demo", "--authorized-keys", filepath.Join(dir, "nope"), "--host-key", filepath.Join(dir, "hk"), "--listen", "127.0.0.1:0"},
			[]string{"no such file (looked for " + filepath.Join(dir, "nope") + ")", "create it with the public keys"}, []string{"no such file or directory"}},
		{"host key in no directory", []string{"serve", "--demo", "--history", "off", "--authorized-keys", keys, "--host-key", filepath.Join(dir, "no", "hk"), "--listen", "127.0.0.1:0"},
			[]string{"host key " + filepath.Join(dir, "no", "hk") + ": cannot be created: no directory " + filepath.Join(dir, "no")}, []string{"sshserve:", "open "}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out := runCLIQuiet(t, tt.args...)
			if code != exitBadUsage {
				t.Errorf("exit %d, want %d\n%s", code, exitBadUsage, out)
			}
			wantWords(t, out, tt.want, tt.notWant)
		})
	}
}

// wantWords requires every want in out and no notWant.
func wantWords(t *testing.T, out string, want, notWant []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("%q not in\n%s", w, out)
		}
	}
	for _, w := range notWant {
		if strings.Contains(out, w) {
			t.Errorf("%q in\n%s", w, out)
		}
	}
}
