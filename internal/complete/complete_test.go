package complete

import (
	"slices"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/model"
)

// source is a field's names, counting the reads: a field that is not
// being typed must not be read.
type source struct {
	names []string
	reads int
}

func (s *source) read() []string {
	s.reads++
	return s.names
}

func TestFields(t *testing.T) {
	agents := []string{"a1", "a2"}
	devs := []string{"cuda:0", "cuda:1"}
	slots := []string{"cpu", "mem", "cuda.shares"}
	tests := []struct {
		name        string
		typed       string
		open        bool
		fields      [][]string
		want        []string
		wantNoSpace bool
		wantReads   []int // reads of each field
	}{
		{"--agent", "", false, [][]string{agents}, agents, false, []int{1}},
		{"--agent, a prefix typed", "a", false, [][]string{agents}, agents, false, []int{1}},
		{"--agent with a = typed: still the agents", "a=", false, [][]string{agents}, agents, false, []int{1}},
		{"--cpu", "", true, [][]string{agents}, []string{"a1=", "a2="}, true, []int{1}},
		{"--cpu past the agent", "a1=", true, [][]string{agents}, nil, false, []int{0}},
		{"--cpu past the agent, an amount typed", "a1=2", true, [][]string{agents}, nil, false, []int{0}},
		{"--move", "", false, [][]string{devs, agents}, []string{"cuda:0=", "cuda:1="}, true, []int{1, 0}},
		{"--move after the device", "cuda:X=", false, [][]string{devs, agents}, []string{"cuda:X=a1", "cuda:X=a2"}, false, []int{0, 1}},
		{"--move, an agent's prefix typed", "cuda:X=a", false, [][]string{devs, agents}, []string{"cuda:X=a1", "cuda:X=a2"}, false, []int{0, 1}},
		{"--move, past the agent: the agents after the first =", "cuda:X=y=z", false, [][]string{devs, agents}, []string{"cuda:X=a1", "cuda:X=a2"}, false, []int{0, 1}},
		{"--slot", "", true, [][]string{agents, slots}, []string{"a1=", "a2="}, true, []int{1, 0}},
		{"--slot after the agent", "a=", true, [][]string{agents, slots}, []string{"a=cpu=", "a=mem=", "a=cuda.shares="}, true, []int{0, 1}},
		{"--slot, a slot's prefix typed", "a=cu", true, [][]string{agents, slots}, []string{"a=cpu=", "a=mem=", "a=cuda.shares="}, true, []int{0, 1}},
		{"--slot, the amount is the user's", "a=cpu=", true, [][]string{agents, slots}, nil, false, []int{0, 0}},
		{"--slot, an empty agent", "=", true, [][]string{agents, slots}, []string{"=cpu=", "=mem=", "=cuda.shares="}, true, []int{0, 1}},
		{"three fields, the third", "x=y=", false, [][]string{agents, devs, slots}, []string{"x=y=cpu", "x=y=mem", "x=y=cuda.shares"}, false, []int{0, 0, 1}},
		{"three fields, open, the second", "x=", true, [][]string{agents, devs, slots}, []string{"x=cuda:0=", "x=cuda:1="}, true, []int{0, 1, 0}},
		{"no names", "", true, [][]string{nil}, nil, true, []int{1}},
		{"no fields", "x", true, nil, nil, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srcs := make([]*source, len(tt.fields))
			var fields []func() []string
			for i, names := range tt.fields {
				srcs[i] = &source{names: names}
				fields = append(fields, srcs[i].read)
			}
			got, noSpace := Fields(tt.typed, tt.open, fields...)
			if !slices.Equal(got, tt.want) || noSpace != tt.wantNoSpace {
				t.Errorf("Fields(%q, open %v) = %q, noSpace %v; want %q, %v", tt.typed, tt.open, got, noSpace, tt.want, tt.wantNoSpace)
			}
			for i, s := range srcs {
				if s.reads != tt.wantReads[i] {
					t.Errorf("field %d read %d times, want %d", i, s.reads, tt.wantReads[i])
				}
			}
		})
	}
}

func TestDeviceSource(t *testing.T) {
	files := []string{"a.toml", "b.json", "c.txt", "toml", "mock-accelerator.toml"}
	tests := []struct {
		typed     string
		want      []string
		wantOK    bool
		wantReads int
	}{
		{"", []string{"auto", "nvml", "a.toml", "b.json", "mock-accelerator.toml"}, true, 1},
		{"a", []string{"auto"}, true, 0},
		{"n", []string{"nvml"}, true, 0},
		{"nvml", []string{"nvml"}, true, 0},
		{"nvmlx", nil, false, 0},
		{"./", nil, false, 0},
		{"mock", nil, false, 0},
	}
	for _, tt := range tests {
		src := &source{names: files}
		got, ok := DeviceSource(tt.typed, src.read)
		if !slices.Equal(got, tt.want) || ok != tt.wantOK || src.reads != tt.wantReads {
			t.Errorf("DeviceSource(%q) = %q, %v (%d reads); want %q, %v (%d)", tt.typed, got, ok, src.reads, tt.want, tt.wantOK, tt.wantReads)
		}
	}
}

func TestTheme(t *testing.T) {
	// Room after the names: the caller's slice (themes.Names) must not be
	// written into.
	builtin := append(make([]string, 0, 8), "dark", "light")
	user := []string{"mine.toml", "dark.toml", "notes.txt", "zz.toml"}
	tests := []struct {
		typed     string
		want      []string
		wantOK    bool
		wantReads int
	}{
		{"", []string{"dark", "light", "mine", "zz"}, true, 1},
		{"m", []string{"dark", "light", "mine", "zz"}, true, 1},
		{"./", nil, false, 0},
		{"~/t", nil, false, 0},
		{"a.toml", nil, false, 0},
		{"/etc/x", nil, false, 0},
	}
	for _, tt := range tests {
		src := &source{names: user}
		got, ok := Theme(tt.typed, builtin, src.read)
		if !slices.Equal(got, tt.want) || ok != tt.wantOK || src.reads != tt.wantReads {
			t.Errorf("Theme(%q) = %q, %v (%d reads); want %q, %v (%d)", tt.typed, got, ok, src.reads, tt.want, tt.wantOK, tt.wantReads)
		}
	}
	if !slices.Equal(builtin[:cap(builtin)], []string{"dark", "light", "", "", "", "", "", ""}) {
		t.Errorf("Theme wrote into the built-in names' slice: %q", builtin[:cap(builtin)])
	}
}

func TestAgents(t *testing.T) {
	tests := []struct {
		name          string
		config, roots []string
		want          []string
	}{
		{"none", nil, nil, nil},
		{"the config's, sorted", []string{"b", "a"}, nil, []string{"a", "b"}},
		{"named roots and plain ones", nil, []string{"alpha=/tmp/a", "/tmp/beta/", "/srv/scratch/../gamma", "/data/k/..", "alpha=/x"},
			[]string{"alpha", "beta", "data", "gamma"}},
		{"both, each once", []string{"z", "alpha"}, []string{"alpha=/a", "y=/b"}, []string{"alpha", "y", "z"}},
		{"a root of an equals sign", nil, []string{"=/a"}, []string{""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Agents(tt.config, tt.roots); !slices.Equal(got, tt.want) {
				t.Errorf("Agents(%q, %q) = %q, want %q", tt.config, tt.roots, got, tt.want)
			}
		})
	}
}

func TestSlots(t *testing.T) {
	tests := []struct {
		slots, want []string
	}{
		{nil, []string{"cpu", "mem"}},
		{[]string{"mem", "cpu", "cuda.shares", "cuda.mem", "cuda.shares"}, []string{"cpu", "mem", "cuda.mem", "cuda.shares"}},
		{[]string{"rocm.device", "cuda.device"}, []string{"cpu", "mem", "cuda.device", "rocm.device"}},
	}
	for _, tt := range tests {
		if got := Slots(tt.slots); !slices.Equal(got, tt.want) {
			t.Errorf("Slots(%q) = %q, want %q", tt.slots, got, tt.want)
		}
	}
}

func TestDevices(t *testing.T) {
	devs := []model.Device{
		{Name: "cpu", ID: "0"}, {Name: "cpu", ID: "1"}, {Name: "mem", ID: "root"},
		{Name: "cuda", ID: "0"}, {Name: "cuda", ID: "MIG-4/0"},
	}
	if got, want := Movable(devs), []string{"cpu:0", "cpu:1", "cuda:0", "cuda:MIG-4/0"}; !slices.Equal(got, want) {
		t.Errorf("Movable = %q, want %q", got, want)
	}
	if got, want := Accelerators(devs), []string{"cuda:0", "cuda:MIG-4/0"}; !slices.Equal(got, want) {
		t.Errorf("Accelerators = %q, want %q", got, want)
	}
	if got := Movable(nil); got != nil {
		t.Errorf("Movable(nil) = %q", got)
	}
}

// The stand-ins are defined only where bash-completion is absent, and
// each one's definition is closed.
func TestBashStandIns(t *testing.T) {
	for _, fn := range []string{"_get_comp_words_by_ref", "_filedir"} {
		guard := "if ! declare -F " + fn + " >/dev/null 2>&1; then\n" + fn + "()\n{"
		if !strings.Contains(BashStandIns, guard) {
			t.Errorf("no guarded definition of %s", fn)
		}
	}
	if strings.Count(BashStandIns, "\nfi\n") < 2 || !strings.HasPrefix(BashStandIns, "\n") {
		t.Errorf("the stand-ins do not close each guard, or do not begin on a line of their own")
	}
}
