package plugin

import (
	"testing"

	"github.com/fgtop/fgtop/model"
)

// TestSettingsDifferSentence: the warning read "i-a has …, but i-b (…)",
// the other agent's settings in parentheses with no verb; each agent now
// has its own clause.
func TestSettingsDifferSentence(t *testing.T) {
	s := NewSource(&swapInner{}, Options{})
	defer s.Close()
	m := map[model.AgentID]*Settings{
		"i-a": Parse(map[string]string{"allocation_mode": "fractional", "unit_mem": "20g"}),
		"i-b": Parse(map[string]string{"allocation_mode": "fractional", "unit_mem": "10g"}),
	}
	_, issues, differ := s.pick(m, model.PluginCUDAFractional)
	want := "the agents' CUDA plugin settings differ (node scopes in etcd): agent i-a has allocation_mode=fractional unit_mem=20g; agent i-b has allocation_mode=fractional unit_mem=10g. fgtop shows the GPUs as agent i-a registers them"
	if !differ || len(issues) != 1 || issues[0].Message != want {
		t.Errorf("differ %v, issues %+v; want %q", differ, issues, want)
	}
}
