package partition

import (
	"errors"
	"testing"
)

func TestJudgeRestoreUnscanned(t *testing.T) {
	scan := errors.New("--devices x.toml: no such file")
	for _, tt := range []struct {
		force   bool
		refusal string
		warning string
	}{
		{false, "refusing to roll back: the live kernels cannot be judged (--devices x.toml: no such file) (--force rolls back anyway); /etc/agent.toml is untouched", ""},
		{true, "", "the live kernels were not judged: --devices x.toml: no such file"},
	} {
		j := JudgeRestoreUnscanned("/etc/agent.toml", scan, tt.force)
		if j.Refusal != tt.refusal || len(j.Affected) != 0 {
			t.Errorf("force %v: refusal %q, want %q", tt.force, j.Refusal, tt.refusal)
		}
		if got := ""; len(j.Warnings) > 0 {
			got = j.Warnings[0]
			if got != tt.warning || len(j.Warnings) != 1 {
				t.Errorf("force %v: warnings %q, want %q", tt.force, j.Warnings, tt.warning)
			}
		} else if tt.warning != "" {
			t.Errorf("force %v: no warning, want %q", tt.force, tt.warning)
		}
	}
}
