package resourcefile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/model"
)

func fixturePaths(t testing.TB) []string {
	paths, err := filepath.Glob(filepath.Join(fixturesDir(t), "backendai", "resource.*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Skip("no resource.*.txt fixtures in testdata/fixtures/backendai")
	}
	return paths
}

// TestFixtureRoundTrip parses every sample resource.txt and formats it
// back byte for byte; the legacy sample comes back in the current layout.
func TestFixtureRoundTrip(t *testing.T) {
	types := model.DefaultSlotTypes()
	for _, path := range fixturePaths(t) {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			spec, err := ReadFile(path, types)
			if err != nil {
				t.Fatal(err)
			}
			got := spec.Format()
			want := data
			legacy := strings.Contains(name, "legacy")
			if legacy {
				want = currentLayout(t, data)
			}
			if spec.Legacy != legacy {
				t.Errorf("Legacy = %v, want %v", spec.Legacy, legacy)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("Format differs:\n got %s\nwant %s", got, want)
			}
			again, err := Parse(got, types)
			if err != nil {
				t.Fatalf("re-parse: %v", err)
			}
			if again.Legacy {
				t.Errorf("re-formatted legacy file still reads as legacy")
			}
			if !bytes.Equal(again.Format(), got) {
				t.Errorf("second round trip differs")
			}
		})
	}
}

// currentLayout rewrites a pre-24.12 file by hand into what the current
// agent writes: CID last, compact SLOTS JSON, UNIFIED_DEVICES=[] after
// SLOTS.
func currentLayout(t *testing.T, data []byte) []byte {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	var out []string
	cid := ""
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "CID="):
			cid = l
		case strings.HasPrefix(l, "SLOTS="):
			out = append(out, strings.NewReplacer(": ", ":", ", ", ",").Replace(l), "UNIFIED_DEVICES=[]")
		default:
			out = append(out, l)
		}
	}
	if cid == "" {
		t.Fatal("legacy fixture has no CID line")
	}
	return []byte(strings.Join(append(out, cid), "\n") + "\n")
}

// TestFixtureValues spot-checks what the split-share sample reads as.
func TestFixtureValues(t *testing.T) {
	path := filepath.Join(fixturesDir(t), "backendai", "resource.cuda-shares-split.txt")
	spec, err := ReadFile(path, model.DefaultSlotTypes())
	if errors.Is(err, os.ErrNotExist) {
		t.Skip("fixture absent")
	}
	if err != nil {
		t.Fatal(err)
	}
	const a, b = "c59395cd-ac91-4cd3-a1b0-3d2568aa2d02", "c59395cd-ac91-4cd3-a1b0-3d2568aa2d03"
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"slots cuda.shares", spec.Slots[model.SlotCUDAShares].String(), "1.2"},
		{"slots mem", spec.Slots[model.SlotMem].String(), "34359738368"},
		{"share a", spec.Alloc[model.SlotCUDAShares][a].String(), "0.60"},
		{"share b", spec.Alloc[model.SlotCUDAShares][b].String(), "0.60"},
		{"mem bytes", spec.Alloc[model.SlotMem]["root"].String(), "34359738368"},
		{"cpu cores", strings.Join(ids(spec.DeviceOrder[model.SlotCPU]), ","), "0,20,1,21,2,22,3,23"},
		{"alloc order", strings.Join(names(spec.AllocOrder), ","), "cuda.shares,cpu,mem"},
		{"mount 0", spec.Mounts[0].String(), "/var/lib/backend.ai/scratches/c41a8f2d-3e6b-47d9-a0c5-5b8e2f1d9c63/config:/home/config:ro"},
		{"cid", spec.CID[:8], "0b7e4d1a"},
		{"extra 0", spec.Extra[0].Key + "=" + spec.Extra[0].Value, "CUDA_GLOBAL_DEVICE_IDS=0:" + a + ",1:" + b},
		{"scratch", spec.ScratchSize.String(), "0"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, tt.got, tt.want)
		}
	}
	if len(spec.UnifiedPairs()) != 0 {
		t.Errorf("UnifiedPairs = %v, want none", spec.UnifiedPairs())
	}
}

func ids(xs []model.DeviceID) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = string(x)
	}
	return out
}

func names(xs []model.SlotName) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = string(x)
	}
	return out
}

// TestFormatHandBuilt covers specs built in code (the demo agent writes
// them): missing order slices, grouping by device, bytes slots.
func TestFormatHandBuilt(t *testing.T) {
	spec := &Spec{
		ScratchSize: model.Zero,
		Mounts:      []Mount{{Type: MountVolume, Source: "vol", Target: "/opt/x", Permission: "ro"}},
		Slots:       model.ResourceSlot{"cpu": model.MustDec("2"), "mem": model.MustDec("1610612736"), "cuda.shares": model.MustDec("0.5")},
		SlotOrder:   []model.SlotName{"cpu", "mem", "cuda.shares"},
		Alloc: model.Allocations{
			"cpu":         {"1": model.One, "0": model.One},
			"mem":         {"root": model.MustDec("1610612736")},
			"cuda.shares": {"GPU-0": model.MustDec("0.50")},
			"cuda.device": {"GPU-1": model.One},
		},
		AllocOrder:     []model.SlotName{"cuda.shares", "cpu", "cuda.device"},
		UnifiedDevices: []any{[]any{"cuda", "cuda.shares"}},
		Types:          model.DefaultSlotTypes(),
		Extra:          []KV{{"CUDA_RESOURCE_VIRTUALIZED", "1"}},
		CID:            "abc",
	}
	want := "SCRATCH_SIZE=0m\n" +
		"MOUNTS=vol:/opt/x:ro\n" +
		`SLOTS={"cpu":"2","mem":"1610612736","cuda.shares":"0.5"}` + "\n" +
		`UNIFIED_DEVICES=[["cuda","cuda.shares"]]` + "\n" +
		"CUDA.SHARES_SHARES=GPU-0:0.50\n" +
		"CUDA.DEVICE_SHARES=GPU-1:1\n" +
		"CPU_SHARES=0:1,1:1\n" +
		"MEM_SHARES=root:1.5g\n" +
		"CUDA_RESOURCE_VIRTUALIZED=1\n" +
		"CID=abc\n"
	got, err := spec.FormatStrict()
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestFormatStrictErrors checks the writer failures Backend.AI has and
// that Format still writes something its reader takes back.
func TestFormatStrictErrors(t *testing.T) {
	types := model.DefaultSlotTypes()
	base := "SCRATCH_SIZE=0m\nMOUNTS=\nSLOTS={}\n"
	tests := []struct {
		name, input, kind, line string
	}{
		{"unified null", base + "UNIFIED_DEVICES=null\n", "TypeError", "UNIFIED_DEVICES=null"},
		{"unified int", base + "UNIFIED_DEVICES=5\n", "TypeError", "UNIFIED_DEVICES=5"},
		{"unified triple", base + `UNIFIED_DEVICES=[["a","b","c"]]` + "\n", "ValueError", `UNIFIED_DEVICES=[["a","b","c"]]`},
		{"unified string pairs", base + `UNIFIED_DEVICES="ab"` + "\n", "ValueError", `UNIFIED_DEVICES="ab"`},
		{"unified dict keys", base + `UNIFIED_DEVICES={"ab":1}` + "\n", "", `UNIFIED_DEVICES=[["a","b"]]`},
		{"infinite bytes", base + "MEM_SHARES=root:inf\n", "OverflowError", "MEM_SHARES=root:inf"},
		{"huge bytes", base + "MEM_SHARES=root:1024y\n", "IndexError", "MEM_SHARES=root:1237940039285380274899124224"},
		{"huge scratch", "SCRATCH_SIZE=1e30m\nMOUNTS=\nSLOTS={}\n", "InvalidOperation", "SCRATCH_SIZE=1048576000000000000000000000000000000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec, err := Parse([]byte(tt.input), types)
			if err != nil {
				t.Fatal(err)
			}
			_, err = spec.FormatStrict()
			var fe *FormatError
			switch {
			case tt.kind == "" && err != nil:
				t.Fatalf("FormatStrict: %v", err)
			case tt.kind != "" && (!errors.As(err, &fe) || fe.Kind != tt.kind):
				t.Fatalf("FormatStrict: got %v, want %s", err, tt.kind)
			}
			out := spec.Format()
			if !strings.Contains(string(out), "\n"+tt.line+"\n") && !strings.HasPrefix(string(out), tt.line+"\n") {
				t.Errorf("Format wrote\n%s\nwant a line %q", out, tt.line)
			}
			again, err := Parse(out, types)
			if err != nil {
				t.Fatalf("Format output does not parse: %v", err)
			}
			if !bytes.Equal(again.Format(), out) {
				t.Errorf("not a fixed point:\n%s\n%s", out, again.Format())
			}
		})
	}
}
