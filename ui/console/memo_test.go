package console

import (
	"testing"

	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/ui/internal/fake"
	"github.com/fgtop/fgtop/ui/render"
)

// TestMemoFrameMatchesFresh: a frame drawn with the memo of the frames
// before it (graphs and clamped rows kept where their inputs are equal) is
// the frame drawn afresh, through idle and moving telemetry, a cursor
// move, a resize and the segments toggle; and once the readings have been
// still for the graphs' whole window, every graph is kept, not redrawn.
func TestMemoFrameMatchesFresh(t *testing.T) {
	s := fake.Large(8, 16)
	a := testApp(t, 200, 60, s, Options{})
	fresh := func() string {
		m := a.memo
		a.memo = nil
		defer func() { a.memo = m }()
		return a.compose()
	}
	step := func(what string, n int, change ...func(s *model.Snapshot)) {
		t.Helper()
		s = fake.Tick(s, n)
		for _, c := range change {
			c(s)
		}
		feed(a, s)
		a.Update(frameMsg{})
		got := a.View().Content
		if want := fresh(); got != want {
			t.Fatalf("%s: the memo's frame differs from a fresh one:\n%s\nwant:\n%s", what, got, want)
		}
	}
	for n := 1; n <= 30; n++ {
		step("moving", n)
	}
	for range histLen {
		step("still", 0) // until every graph's window holds still readings
	}
	kept := a.memo.kept
	for range 5 {
		step("still", 0)
	}
	if a.memo.kept-kept < 5*(3+8) {
		t.Errorf("at rest the memo kept %d graphs in 5 frames, want every one of the 11 each frame", a.memo.kept-kept)
	}
	step("a temperature alone", 0, func(s *model.Snapshot) {
		tel := *s.Devices[2].Telemetry
		tel.TempC.V += 7
		s.Devices[2].Telemetry = &tel
	})
	typeKeys(a, "j")
	step("cursor moved", 0)
	a.Update(teaSize(160, 48))
	step("resized", 0)
	typeKeys(a, "a")
	step("bars per agent", 3)
	step("agent down", 0, func(s *model.Snapshot) {
		s.Agents[0].Health = model.AgentHealth{State: model.AgentDown, Detail: "connection refused"}
	})
	step("agent up", 0, func(s *model.Snapshot) { s.Agents[0].Health = model.AgentHealth{State: model.AgentUp} })
	step("source degraded", 0, func(s *model.Snapshot) {
		s.Source = model.SourceInfo{Kind: "nvml", Health: "degraded", Detail: "nvmlDeviceGetTemperature: GPU is lost"}
	})
	typeKeys(a, "f")
	step("all kernels", 0)
	typeKeys(a, "S")
	step("kernels in reverse", 0)
	typeKeys(a, "\t\t")
	step("agents focused", 0)
	typeKeys(a, "j")
	step("second agent", 0)
	a.Update(teaSize(100, 40))
	step("narrow", 0)
}

// TestMemoForgetsUnused: every map of the memo gives the same entry back
// to the frame that asks again, and forgets an entry the first frame that
// does not ask for it ends; the other entries stay.
func TestMemoForgetsUnused(t *testing.T) {
	m := newViewMemo()
	build := func() []string { return []string{"x"} }
	row := func() string { return "r" }
	ask := func(keys ...int) {
		for _, k := range keys {
			m.joined(string(rune('a'+k)), nil, nil, nil, nil, build)
			m.block(blockKey{i: k}, blockIn{}, build)
			lookup(m.graphs, graphKey{k: k}, m.gen)
			m.devRow(k, devRowIn{gen: &render.Gen{}}, row)
			m.kernRow(k, kernRowIn{gen: &render.Gen{}}, nil, row)
		}
	}
	sizes := func() []int {
		return []int{len(m.graphs), len(m.joins), len(m.blocks), len(m.devRows), len(m.kernRows)}
	}
	for _, tc := range []struct {
		name string
		keys []int
		want int
	}{
		{"first frame asks for three", []int{0, 1, 2}, 3},
		{"next frame asks for two", []int{0, 2}, 3}, // 1 is forgotten when this frame ends
		{"then for the same two", []int{0, 2}, 2},
		{"then for none", nil, 2},
		{"then for one", []int{1}, 1},
	} {
		m.frame()
		ask(tc.keys...)
		for i, n := range sizes() {
			if n != tc.want {
				t.Errorf("%s: map %d holds %d entries, want %d (%v)", tc.name, i, n, tc.want, sizes())
			}
		}
	}
	g := lookup(m.graphs, graphKey{k: 1}, m.gen)
	if again := lookup(m.graphs, graphKey{k: 1}, m.gen); again != g {
		t.Errorf("a second lookup in one frame made a new entry")
	}
}
