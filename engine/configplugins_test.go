package engine

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/model"
)

// TestConfigPluginInputsChangedLive: the device source reads the plugins'
// settings (agent.toml's [etcd]) and choice (allow/block-compute-plugins)
// once, at start. A running console whose agent.toml then names another
// etcd or other plugin lists says so, and that a restart follows them; it
// is cleared when the file says what it said at start. Seen in the console:
// after allow-compute-plugins = ["ai.backend.accelerator.cuda_open"] was
// added (or [etcd] pointed elsewhere) the GPUs stayed fGPU from etcd's
// settings with no word, while a fresh fgtop showed cuda_open.
func TestConfigPluginInputsChangedLive(t *testing.T) {
	config, _ := sharedConfig(t)
	orig, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	l := startLive(t, viewOptions(t, config))
	said := func(s *model.Snapshot) string {
		for _, iss := range issuesWith(s, model.IssueConfig) {
			if strings.Contains(iss.Message, "plugins' settings and choice") {
				return iss.Message
			}
		}
		return ""
	}
	l.wait(t, "the first reading", 2*time.Second, func(s *model.Snapshot) error {
		if m := said(s); m != "" {
			return fmt.Errorf("said at start: %q", m)
		}
		return nil
	})
	const from, to = `port = 2379 }`, `port = 2380 }`
	if !strings.Contains(string(orig), from) {
		t.Fatalf("fixture changed: no %q", from)
	}
	text := strings.Replace(string(orig), from, to, 1)
	text = strings.Replace(text, `allow-compute-plugins = ["ai.backend.accelerator.mock"]`, `allow-compute-plugins = ["ai.backend.accelerator.cuda_open"]`, 1)
	if err := os.WriteFile(config, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	l.wait(t, "the change said", 2*time.Second, func(s *model.Snapshot) error {
		m := said(s)
		if !strings.HasPrefix(m, "agent.toml's [etcd] and compute-plugin lists changed; restart fgtop") {
			return fmt.Errorf("issue %q; want it to name [etcd] and the plugin lists", m)
		}
		return nil
	})
	if err := os.WriteFile(config, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	l.wait(t, "cleared when put back", 2*time.Second, func(s *model.Snapshot) error {
		if m := said(s); m != "" {
			return fmt.Errorf("still said: %q", m)
		}
		return nil
	})
}
