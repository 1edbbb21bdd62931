//go:build unix

package agentrestart

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/partition"
	"github.com/fgtop/fgtop/model"
)

func TestRun(t *testing.T) {
	for _, tt := range []struct {
		name, cmd string
		timeout   time.Duration
		status    model.RestartState
		// out is a part of what is printed; err of the error ("" none).
		out, err string
	}{
		{name: "no command", out: partition.RestartNeeded + "\n"},
		{name: "no command, the agents run another version", status: model.RestartPending, out: partition.RestartNeeded + "\n  as proved\n"},
		{name: "no command, no agent found", status: model.RestartNotRunning, out: partition.RestartNeeded + "\n"},
		{name: "no command, the agents run this version", status: model.RestartCurrent, out: "no restart needed: as proved\n"},
		{name: "a command runs even where the agents run this version", cmd: "echo agent restarted", timeout: time.Minute, status: model.RestartCurrent,
			out: "running restart command: echo agent restarted\nagent restarted\nrestart command finished\n"},
		{name: "works", cmd: "echo agent restarted", timeout: time.Minute, out: "running restart command: echo agent restarted\nagent restarted\nrestart command finished\n"},
		{name: "fails", cmd: "exit 7", timeout: time.Minute, out: "running restart command: exit 7\n", err: "the config is written, but the restart command failed: exit status 7"},
		{name: "hangs", cmd: "sleep 30", timeout: 100 * time.Millisecond, err: "the config is written, but the restart command did not finish within 100ms (--restart-timeout) and was stopped: restart the agent yourself"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			o := Options{Cmd: tt.cmd, Timeout: tt.timeout, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut}
			if tt.status != "" {
				o.Status = func() model.Restart { return model.Restart{State: tt.status, Detail: "as proved"} }
			}
			err := Run(context.Background(), o)
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || err.Error() != tt.err) {
				t.Fatalf("error %v, want %q", err, tt.err)
			}
			if !strings.Contains(out.String(), tt.out) || tt.status != model.RestartCurrent && tt.cmd == "" && out.String() != tt.out {
				t.Fatalf("printed %q, want %q in it", out.String(), tt.out)
			}
			if tt.err != "" && strings.Contains(out.String(), "restart command finished") {
				t.Fatalf("a failed restart said it finished: %q", out.String())
			}
		})
	}
}

// TestRunStoppedBySignal: the command's context ending (SIGINT, SIGTERM
// to fgtop) stops it, and the words say so.
func TestRunStoppedBySignal(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	var out bytes.Buffer
	err := Run(ctx, Options{Cmd: "sleep 30", Timeout: time.Minute, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out})
	if err == nil || !strings.Contains(err.Error(), "stopped by a signal") {
		t.Fatalf("error %v", err)
	}
}
