package resourcefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/model"
)

const goodFile = "SCRATCH_SIZE=0m\n" +
	"MOUNTS=/a:/b:ro\n" +
	`SLOTS={"cpu":"2","mem":"1073741824","cuda.shares":"0.5"}` + "\n" +
	"UNIFIED_DEVICES=[]\n" +
	"CPU_SHARES=0:1,1:1\n" +
	"MEM_SHARES=root:1g\n" +
	"CUDA.SHARES_SHARES=0:0.5\n"

// TestParseErrors checks the error kind and that the line number points
// at the offending line (0 for a missing key, which names the key).
func TestParseErrors(t *testing.T) {
	replace := func(old, new string) string { return strings.Replace(goodFile, old, new, 1) }
	tests := []struct {
		name  string
		input string
		kind  string
		line  int
		msg   string
	}{
		{"bad share decimal", replace("CPU_SHARES=0:1,1:1", "CPU_SHARES=0:1,1:x"), "InvalidOperation", 5, `CPU_SHARES: device "1"`},
		{"bad bytes", replace("root:1g", "root:1.5"), "ValueError", 6, "whole number of bytes"},
		{"infinite bytes times unit", replace("root:1g", "root:infk"), "OverflowError", 6, "infinite sizes"},
		{"signalling NaN bytes", replace("root:1g", "root:snank"), "InvalidOperation", 6, ""},
		{"bytes beyond Emax", replace("root:1g", "root:1e999999k"), "Overflow", 6, ""},
		{"bad slots json", replace(`"cuda.shares":"0.5"}`, `"cuda.shares":"0.5",}`), "JSONDecodeError", 3, "SLOTS: "},
		{"slots not an object", replace(`SLOTS={"cpu":"2","mem":"1073741824","cuda.shares":"0.5"}`, `SLOTS=["cpu"]`), "AttributeError", 3, "want a JSON object of slot amounts, found an array"},
		{"slots bad value", replace(`"cpu":"2"`, `"cpu":"two"`), "InvalidOperation", 3, `SLOTS["cpu"]`},
		{"slots dict value", replace(`"cpu":"2"`, `"cpu":{}`), "TypeError", 3, "an object is not an amount"},
		{"bad mount", replace("MOUNTS=/a:/b:ro", "MOUNTS=/a:/b:xx"), "ValueError", 2, `permission "xx" is not ro, rw or wd`},
		{"bad unified", replace("UNIFIED_DEVICES=[]", "UNIFIED_DEVICES=[cuda"), "JSONDecodeError", 4, "UNIFIED_DEVICES"},
		{"bad scratch", replace("SCRATCH_SIZE=0m", "SCRATCH_SIZE=inf"), "ValueError", 1, "infinite"},
		{"missing mounts", replace("MOUNTS=/a:/b:ro\n", ""), "KeyError", 0, "no MOUNTS= line"},
		{"missing slots", replace(`SLOTS={"cpu":"2","mem":"1073741824","cuda.shares":"0.5"}`+"\n", ""), "KeyError", 0, "no SLOTS= line"},
		{"missing scratch", replace("SCRATCH_SIZE=0m\n", ""), "KeyError", 0, "no SCRATCH_SIZE= line"},
		{"last value wins for the line", goodFile + "CPU_SHARES=0:y\n", "InvalidOperation", 8, ""},
		{"not utf-8", replace("MEM_SHARES=root:1g", "MEM_SHARES=root:\xff"), "UnicodeDecodeError", 6, "0xff"},
		{"torn", strings.TrimSuffix(goodFile, "\n"), "Torn", 7, "newline"},
		{"empty", "", "Torn", 0, "empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec, err := Parse([]byte(tt.input), model.DefaultSlotTypes())
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("got %v (spec %v), want a ParseError", err, spec)
			}
			if pe.Kind != tt.kind || pe.Line != tt.line || !strings.Contains(pe.Msg, tt.msg) {
				t.Errorf("got %s line %d %q, want %s line %d containing %q", pe.Kind, pe.Line, pe.Msg, tt.kind, tt.line, tt.msg)
			}
			if pe.Torn != (tt.kind == "Torn") {
				t.Errorf("Torn = %v", pe.Torn)
			}
			// The kind is parity data; what an operator reads has no
			// Python in it.
			for _, py := range []string{pe.Kind, "<class", "PosixPath", "object has no attribute", "codec", "Python int"} {
				if tt.kind != "Torn" && strings.Contains(err.Error(), py) {
					t.Errorf("message %q shows Python's %q", err, py)
				}
			}
		})
	}
}

func TestParseErrorString(t *testing.T) {
	const agentToo = " (Backend.AI's agent cannot read this file either)"
	tests := []struct {
		err  ParseError
		want string
	}{
		{ParseError{File: "/s/k/config/resource.txt", Line: 3, Kind: "JSONDecodeError", Msg: "x"}, "/s/k/config/resource.txt:3: x" + agentToo},
		{ParseError{File: "/f", Kind: "KeyError", Msg: "the file has no SLOTS= line"}, "/f: the file has no SLOTS= line" + agentToo},
		{ParseError{Line: 2, Kind: "ValueError", Msg: "m"}, "2: m" + agentToo},
		{ParseError{Kind: "KeyError", Msg: "m"}, "m" + agentToo},
		{ParseError{File: "/f", Line: 7, Kind: "Torn", Msg: "the last line has no newline (still being written?)", Torn: true},
			"/f:7: the last line has no newline (still being written?)"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	_, err := ReadFile(filepath.Join(dir, "missing.txt"), nil)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "missing.txt") {
		t.Errorf("missing file: got %v", err)
	}
	bad := filepath.Join(dir, "resource.txt")
	if err := os.WriteFile(bad, []byte("MOUNTS=\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ReadFile(bad, nil)
	var pe *ParseError
	if !errors.As(err, &pe) || pe.File != bad || pe.Kind != "KeyError" {
		t.Errorf("bad file: got %v", err)
	}
	if !strings.HasPrefix(err.Error(), bad+": the file has no SCRATCH_SIZE= line") {
		t.Errorf("message %q", err)
	}
}

// TestParseSemantics covers reader rules beyond the corpus.
func TestParseSemantics(t *testing.T) {
	types := model.DefaultSlotTypes()
	t.Run("legacy", func(t *testing.T) {
		for _, in := range []string{
			"CID=x\nSCRATCH_SIZE=0\nMOUNTS=\nSLOTS={}\n",
			"SCRATCH_SIZE=0\nMOUNTS=\nSLOTS={\"cpu\": \"1\"}\n",
		} {
			spec, err := Parse([]byte(in), types)
			if err != nil || !spec.Legacy {
				t.Errorf("%q: Legacy = %v, %v", in, spec != nil && spec.Legacy, err)
			}
		}
		spec, err := Parse([]byte("SCRATCH_SIZE=0\nMOUNTS=\nSLOTS= {\"cpu\":\"1\"}\nCID=x\n"), types)
		if err != nil || spec.Legacy {
			t.Errorf("current layout reads as legacy (%v)", err)
		}
	})
	t.Run("mount paths", func(t *testing.T) {
		spec, err := Parse([]byte("SCRATCH_SIZE=0\nMOUNTS=//a//b/./:/t/:wd,///c:/d:ro,./v:/e:rw,..:/f:ro\nSLOTS={}\n"), types)
		if err != nil {
			t.Fatal(err)
		}
		want := []Mount{
			{MountBind, "//a/b", "/t", "wd"},
			{MountBind, "/c", "/d", "ro"},
			{MountVolume, "v", "/e", "rw"},
			{MountVolume, "..", "/f", "ro"},
		}
		for i, m := range want {
			if spec.Mounts[i] != m {
				t.Errorf("mount %d = %+v, want %+v", i, spec.Mounts[i], m)
			}
		}
	})
	t.Run("python lower and upper", func(t *testing.T) {
		spec, err := Parse([]byte("SCRATCH_SIZE=0\nMOUNTS=\nSLOTS={}\nAΣ_SHARES=x:1\nİ_SHARES=y:1\nß_SHARES=z:1\n"), types)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(names(spec.AllocOrder), ",")
		if want := "aς,i\u0307,ß"; got != want {
			t.Errorf("slots %q, want %q", got, want)
		}
		out := string(spec.Format())
		for _, line := range []string{"AΣ_SHARES=x:1", "I\u0307_SHARES=y:1", "SS_SHARES=z:1"} {
			if !strings.Contains(out, "\n"+line+"\n") {
				t.Errorf("Format lacks %q:\n%s", line, out)
			}
		}
	})
	t.Run("json numbers", func(t *testing.T) {
		spec, err := Parse([]byte(`SCRATCH_SIZE=0
MOUNTS=
SLOTS={"a":-0,"b":-0.0,"c":18446744073709551615,"d":18446744073709551616,"e":1e2,"f":true,"g":null,"h":[1,[1,5],-1]}
`), types)
		if err != nil {
			t.Fatal(err)
		}
		want := map[model.SlotName]string{"a": "0", "b": "-0", "c": "18446744073709551615", "d": "18446744073709551616", "e": "100", "f": "1", "h": "-1.5"}
		for k, v := range want {
			if got := spec.Slots[k].String(); got != v {
				t.Errorf("%s = %s, want %s", k, got, v)
			}
		}
		if _, ok := spec.Slots["g"]; ok || len(spec.SlotOrder) != 7 {
			t.Errorf("null kept: %v", spec.SlotOrder)
		}
	})
}

// TestParseManyKeys covers the map-backed lookups that take over for
// files with many keys, slots or device ids: a repeat keeps its first
// position and takes its last value, as in a Python dict.
func TestParseManyKeys(t *testing.T) {
	var b strings.Builder
	b.WriteString("SCRATCH_SIZE=0\nMOUNTS=\nSLOTS={}\n")
	for i := range 40 {
		fmt.Fprintf(&b, "S%d_SHARES=a:1\nX%d=v\n", i, i)
	}
	b.WriteString("S3_SHARES=b:2\nX5=w\nCPU_SHARES=")
	for i := range 40 {
		fmt.Fprintf(&b, "%d:1,", i)
	}
	b.WriteString("5:9\n")
	spec, err := Parse([]byte(b.String()), model.DefaultSlotTypes())
	if err != nil {
		t.Fatal(err)
	}
	if len(spec.AllocOrder) != 41 || spec.AllocOrder[3] != "s3" || spec.AllocOrder[40] != "cpu" {
		t.Fatalf("AllocOrder = %v", spec.AllocOrder)
	}
	if got := spec.Alloc["s3"]; len(got) != 1 || got["b"].String() != "2" {
		t.Errorf("s3 = %v, want b:2 only", got)
	}
	if len(spec.Extra) != 40 || spec.Extra[5] != (KV{"X5", "w"}) {
		t.Errorf("Extra[5] = %v of %d", spec.Extra[5], len(spec.Extra))
	}
	cpu := spec.DeviceOrder[model.SlotCPU]
	if len(cpu) != 40 || cpu[5] != "5" || spec.Alloc[model.SlotCPU]["5"].String() != "9" {
		t.Errorf("cpu order %v, cpu[5] = %v", cpu, spec.Alloc[model.SlotCPU]["5"])
	}
}

// TestTornOrNotText: a file whose last line lacks its newline is a write
// still under way only where what comes before is text; bytes that are not
// UTF-8 in the lines before it are said as such (the agent's read fails on
// them), not as a file to wait for.
func TestTornOrNotText(t *testing.T) {
	types := model.DefaultSlotTypes()
	for _, tc := range []struct {
		name string
		data string
		torn bool
		kind string
	}{
		{"a line cut short", "CID=abc\nSLOTS={\"cpu\": \"1\"}\nCUDA.SHA", true, "Torn"},
		{"cut inside a character", "CID=abc\nSLOTS={\"cpu\": \"1\"}\nX=\xe2\x82", true, "Torn"},
		{"garbage before the last line", "CID=abc\n\xaa\xbb\xcc\nX=1", false, "UnicodeDecodeError"},
	} {
		_, err := Parse([]byte(tc.data), types)
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Torn != tc.torn || pe.Kind != tc.kind {
			t.Errorf("%s: %v (torn %v), want kind %s torn %v", tc.name, err, pe != nil && pe.Torn, tc.kind, tc.torn)
		}
	}
}
