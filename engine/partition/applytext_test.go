package partition

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/model"
)

func TestJudgeApply(t *testing.T) {
	edit := []agentconfig.Change{{}}
	stranded := []DeviceMove{{Device: "cuda:1", To: []model.AgentID{"b"},
		Holders: []Holder{{Kernel: "k1", Agent: "a", Slot: "cuda.shares", Amount: model.MustDec("0.5"), Stranded: true}}}}
	tests := []struct {
		name  string
		plan  Plan
		blind int
		force bool
		want  ApplyVerdict
		why   string
	}{
		{name: "a valid change goes", plan: Plan{Config: "/a.toml", Edits: edit}, want: ApplyGo},
		{name: "an invalid plan is refused even forced", plan: Plan{Config: "/a.toml", Edits: edit, Errors: []string{"x", "y"}}, force: true,
			want: ApplyInvalid, why: "refusing to apply: the plan is invalid (2 error(s)); /a.toml is untouched"},
		{name: "no edit is nothing to apply", plan: Plan{Config: "/a.toml"}, blind: 1,
			want: ApplyNothing, why: "nothing to apply"},
		{name: "a stranded kernel refuses", plan: Plan{Config: "/a.toml", Edits: edit, Moves: stranded},
			want: ApplyRefused, why: "refusing to apply: live kernels hold devices that move (--force applies anyway); /a.toml is untouched"},
		{name: "a strained slot-based agent refuses in its own words", plan: Plan{Config: "/a.toml", Edits: edit,
			Strained: []Strain{{Agent: "a", Slot: "cuda.shares", Held: model.MustDec("1.9"), Capacity: model.MustDec("1.0")}}},
			want: ApplyRefused, why: "refusing to apply: the live kernels of a hold more than the planned amount (--force applies anyway); /a.toml is untouched"},
		{name: "a move and a strain are both said", plan: Plan{Config: "/a.toml", Edits: edit, Moves: stranded,
			Strained: []Strain{{Agent: "a", Slot: "cuda.shares", Held: model.MustDec("1.9"), Capacity: model.MustDec("1.0")}}},
			want: ApplyRefused, why: "refusing to apply: live kernels hold devices that move, and the live kernels of a hold more than the planned amount (--force applies anyway); /a.toml is untouched"},
		{name: "a stranded kernel forced goes", plan: Plan{Config: "/a.toml", Edits: edit, Moves: stranded}, force: true, want: ApplyGo},
		{name: "unseen roots refuse", plan: Plan{Config: "/a.toml", Edits: edit}, blind: 2,
			want: ApplyRefused, why: "refusing to apply: 2 scratch root(s) cannot be read, so the live kernels this change may affect cannot be seen (--force applies anyway); /a.toml is untouched"},
		{name: "unseen roots forced go", plan: Plan{Config: "/a.toml", Edits: edit}, blind: 2, force: true, want: ApplyGo},
		{name: "a strain only if unattributed kernels are its is said as such", plan: Plan{Config: "/a.toml", Edits: edit,
			Strained: []Strain{{Agent: "a", Slot: "cuda.shares", Held: model.MustDec("1.9"), Capacity: model.MustDec("1.0"), Unattributed: []model.KernelID{"k9"}},
				{Agent: "b", Slot: "cuda.shares", Held: model.MustDec("1.9"), Capacity: model.MustDec("1.0"), Unattributed: []model.KernelID{"k9"}}}},
			want: ApplyRefused, why: "refusing to apply: live kernels whose agent cannot be told would put a or b above its planned amount if they are its (--force applies anyway); /a.toml is untouched"},
		{name: "a sure strain is not said again as a possible one", plan: Plan{Config: "/a.toml", Edits: edit,
			Strained: []Strain{{Agent: "a", Slot: "cpu", Held: model.MustDec("9"), Capacity: model.MustDec("8")},
				{Agent: "a", Slot: "cuda.shares", Held: model.MustDec("1.9"), Capacity: model.MustDec("1.0"), Unattributed: []model.KernelID{"k9"}}}},
			want: ApplyRefused, why: "refusing to apply: the live kernels of a hold more than the planned amount (--force applies anyway); /a.toml is untouched"},
		{name: "unchecked accelerator amounts refuse", plan: Plan{Config: "/a.toml", Edits: edit, AccelUnchecked: true},
			want: ApplyRefused, why: "refusing to apply: the agent's start-up checks on the accelerator amounts were not run: the node's accelerators or their capacities are unknown (pass --devices, --fgpu-capacity or --plugin-config) (--force applies anyway); /a.toml is untouched"},
		{name: "unread kernel files refuse", plan: Plan{Config: "/a.toml", Edits: edit, Unread: []string{"x", "y"}},
			want: ApplyRefused, why: "refusing to apply: 2 kernel file(s) could not be read or parsed, so what those kernels hold is not known (--force applies anyway); /a.toml is untouched"},
		{name: "unchecked forced goes", plan: Plan{Config: "/a.toml", Edits: edit, AccelUnchecked: true, Unread: []string{"x"}}, force: true, want: ApplyGo},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := JudgeApply(&tt.plan, tt.blind, tt.force)
			if got != tt.want || why != tt.why {
				t.Errorf("JudgeApply = %d %q, want %d %q", got, why, tt.want, tt.why)
			}
		})
	}
}

func TestApplyText(t *testing.T) {
	old, new := "0123456789abcdef0123", "fedcba9876543210fedc"
	res := &agentconfig.CommitResult{Path: "/etc/agent.toml", OldHash: old, NewHash: new,
		Backup: "/etc/agent.toml.fgtop-1.bak", Journal: "/etc/agent.toml.fgtop-journal.jsonl"}
	top := &agentconfig.JournalRecord{Time: time.Date(2026, 12, 2, 9, 30, 0, 0, time.UTC), Actor: "root", Origin: "local",
		OldHash: old, NewHash: new, Backup: "/etc/agent.toml.fgtop-1.bak"}
	tests := []struct {
		name  string
		write func(*bytes.Buffer)
		want  string
	}{
		{"applied", func(b *bytes.Buffer) { WriteApplied(b, res) },
			"written: /etc/agent.toml (sha256 0123456789ab -> fedcba987654)\nprevious version: /etc/agent.toml.fgtop-1.bak\njournal: /etc/agent.toml.fgtop-journal.jsonl\n"},
		{"undoing", func(b *bytes.Buffer) { WriteUndoing(b, top) },
			"undoing the apply of 2026-12-02 09:30:00Z by root (local): fedcba987654 -> restore /etc/agent.toml.fgtop-1.bak (sha256 0123456789ab)\n"},
		{"restored", func(b *bytes.Buffer) { WriteRestored(b, res) },
			"restored: /etc/agent.toml (sha256 fedcba987654)\nversion replaced: /etc/agent.toml.fgtop-1.bak\njournal: /etc/agent.toml.fgtop-journal.jsonl\n"},
		{"a short hash stays whole", func(b *bytes.Buffer) { b.WriteString(ShortHash("abc")) }, "abc"},
		{"a valid plan is not invalid", func(b *bytes.Buffer) { b.WriteString((&Plan{}).Invalid()) }, ""},
		{"an invalid plan counts its errors", func(b *bytes.Buffer) { b.WriteString((&Plan{Errors: []string{"a", "b", "c"}}).Invalid()) },
			"the plan is invalid (3 error(s)): fix the request or the config as the errors above say"},
		{"a held draft goes stale", func(b *bytes.Buffer) {
			b.WriteString(DraftStaleNote(Hold{Actor: agentconfig.Actor{Name: "alice", Origin: "ssh:203.0.113.7:51234"}, Since: time.Date(2026, 12, 2, 14, 2, 3, 0, time.Local)}))
		}, "note: alice (ssh:203.0.113.7:51234) since 14:02:03 is editing the partition in a console; applying makes that draft stale (it must be reviewed before it can be applied)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			tt.write(&b)
			if b.String() != tt.want {
				t.Errorf("got  %q\nwant %q", b.String(), tt.want)
			}
		})
	}
}

// TestJudgeApplyReadOnly: a config its owner may not write (chmod 444)
// is refused before the confirmation, with the mode and what to do;
// --force applies it (the writer keeps the mode).
func TestJudgeApplyReadOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent.toml")
	if err := os.WriteFile(path, []byte("[agent]\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	p := &Plan{Config: path, Edits: []agentconfig.Change{{}}}
	v, why := JudgeApply(p, 0, false)
	want := "refusing to apply: " + path + " is read-only (mode 0444: its owner may not write it, so someone protected it from changes): make it writable first (chmod u+w " + path + "), or force the write (fgtop apply or rollback --force), which keeps the mode (--force applies anyway); " + path + " is untouched"
	if v != ApplyRefused || why != want {
		t.Errorf("JudgeApply = %d %q\nwant %q", v, why, want)
	}
	if v, _ := JudgeApply(p, 0, true); v != ApplyGo {
		t.Errorf("forced: %d, want ApplyGo", v)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if v, why := JudgeApply(p, 0, false); v != ApplyGo {
		t.Errorf("a 0644 config: %d %q", v, why)
	}
}
