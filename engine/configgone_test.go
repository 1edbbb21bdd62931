package engine

import (
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fgtop/fgtop/model"
)

// TestConfigGoneLive: an agent.toml removed while the engine runs is said
// in fgtop's words with the way back, not as the loader's lstat error, and
// the issue clears when the file is back.
func TestConfigGoneLive(t *testing.T) {
	config, _ := sharedConfig(t)
	l := startLive(t, viewOptions(t, config))
	l.wait(t, "initial partition", 2*time.Second, func(s *model.Snapshot) error {
		if !ownsCUDA(s, numa0, gpu03) {
			return fmt.Errorf("agents %+v", s.Agents)
		}
		return nil
	})
	orig, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(config); err != nil {
		t.Fatal(err)
	}
	s := l.wait(t, "the removed file's issue", 2*time.Second, func(s *model.Snapshot) error {
		for _, iss := range issuesWith(s, model.IssueConfig) {
			if iss.File == config && strings.Contains(iss.Message, "still showing the partition last read") {
				return nil
			}
		}
		return fmt.Errorf("issues %v", s.Issues)
	})
	for _, iss := range issuesWith(s, model.IssueConfig) {
		if !strings.Contains(iss.Message, "still showing") {
			continue
		}
		want := "agent.toml " + config + " is gone (removed or renamed, or its directory): still showing the partition last read; put it back"
		if !strings.HasPrefix(iss.Message, want) || strings.Contains(iss.Message, "no such file") {
			t.Errorf("issue %q; want it to begin %q, without the loader's words", iss.Message, want)
		}
	}
	if !ownsCUDA(s, numa0, gpu03) {
		t.Errorf("a removed file changed the partition: %+v", s.Agents)
	}
	if err := os.WriteFile(config, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	l.wait(t, "the issue cleared", 2*time.Second, func(s *model.Snapshot) error {
		for _, iss := range issuesWith(s, model.IssueConfig) {
			if strings.Contains(iss.Message, "still showing") {
				return fmt.Errorf("stale issue %v", iss)
			}
		}
		return nil
	})
}

// TestConfigUnusableWords: each way the file cannot be used, as the
// console's header shows it.
func TestConfigUnusableWords(t *testing.T) {
	const p = "/etc/backend.ai/agent.toml"
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"gone", fmt.Errorf("read agent config: %w", &fs.PathError{Op: "open", Path: p, Err: syscall.ENOENT}),
			"agent.toml /etc/backend.ai/agent.toml is gone (removed or renamed, or its directory): still showing the partition last read; put it back, or start fgtop with --config naming where it is now"},
		{"unreadable", fmt.Errorf("read agent config: %w", &fs.PathError{Op: "open", Path: p, Err: syscall.EACCES}),
			"agent.toml /etc/backend.ai/agent.toml can no longer be read (permission denied): still showing the partition last read; give fgtop's user read access again, or run fgtop as root or as the user the agent runs as"},
		{"broken", fmt.Errorf("%s:1:7: not valid TOML", p),
			"agent.toml changed on disk and cannot be used (/etc/backend.ai/agent.toml:1:7: not valid TOML); still showing the partition last read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := configUnusable(p, tt.err); got != tt.want {
				t.Errorf("configUnusable = %q\nwant %q", got, tt.want)
			}
		})
	}
}
