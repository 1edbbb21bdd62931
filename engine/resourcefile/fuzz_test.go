package resourcefile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/fgtop/fgtop/model"
)

// FuzzParse checks that Parse never panics, that its three modes agree,
// and that formatting a parsed file and reading it back reaches a fixed
// point (the writer is lossy only where the agent's is: bytes amounts,
// SCRATCH_SIZE, names whose upper case folds differently) while SLOTS and
// MOUNTS survive exactly.
func FuzzParse(f *testing.F) {
	fx := fixturesDir(f)
	if paths, _ := filepath.Glob(filepath.Join(fx, "backendai", "resource.*.txt")); len(paths) > 0 {
		for _, p := range paths {
			if data, err := os.ReadFile(p); err == nil {
				f.Add(data)
			}
		}
	}
	if raw, err := os.ReadFile(filepath.Join(fx, "resource-cases.json")); err == nil {
		var cases []struct{ Input string }
		if json.Unmarshal(raw, &cases) == nil {
			for _, c := range cases {
				if len(c.Input) < 8<<10 {
					f.Add([]byte(c.Input))
				}
			}
		}
	}
	f.Add([]byte(goodFile))
	types := model.DefaultSlotTypes()
	types["cuda.mem"] = model.SlotTypeBytes

	// Shared by every input, so inputs meet values other inputs left.
	common := NewShared()
	f.Fuzz(func(t *testing.T, data []byte) {
		spec, err := ParseOptions{AllowTorn: true}.Parse(data, types)
		fspec, ferr := ParseOptions{AllowTorn: true, FiguresOnly: true}.Parse(data, types)
		hspec, herr := ParseOptions{AllowTorn: true, FiguresOnly: true, Shared: common}.Parse(data, types)
		if (err == nil) != (herr == nil) || err != nil && err.Error() != herr.Error() {
			t.Fatalf("Shared: %v, full: %v", herr, err)
		}
		if err == nil && (slotsString(hspec) != slotsString(spec) || fmt.Sprint(hspec.Alloc) != fmt.Sprint(spec.Alloc)) {
			t.Fatalf("Shared figures differ: %s %v, want %s %v", slotsString(hspec), hspec.Alloc, slotsString(spec), spec.Alloc)
		}
		sspec, serr := Parse(data, types)
		if (err == nil) != (ferr == nil) || err != nil && err.Error() != ferr.Error() {
			t.Fatalf("FiguresOnly: %v, full: %v", ferr, err)
		}
		complete := len(data) > 0 && data[len(data)-1] == '\n'
		var pe *ParseError
		switch {
		case !complete:
			// Unterminated: a write still under way (Torn), unless the
			// lines before the last are not text, which is said as such.
			if whole := data[:bytes.LastIndexByte(data, '\n')+1]; !utf8.Valid(whole) {
				if !errors.As(serr, &pe) || pe.Torn || pe.Kind != "UnicodeDecodeError" {
					t.Fatalf("unterminated input after bytes that are not UTF-8: strict Parse gave %v", serr)
				}
			} else if !errors.As(serr, &pe) || !pe.Torn {
				t.Fatalf("unterminated input: strict Parse gave %v", serr)
			}
		case (err == nil) != (serr == nil) || err != nil && err.Error() != serr.Error():
			t.Fatalf("strict %v, lenient %v", serr, err)
		}
		if err != nil {
			if !errors.As(err, &pe) || pe.Kind == "" || pe.Torn {
				t.Fatalf("error %v is not a proper ParseError", err)
			}
			return
		}
		if complete && !bytes.Equal(sspec.Format(), spec.Format()) {
			t.Fatal("strict and lenient specs differ")
		}
		if len(fspec.Alloc) != len(spec.Alloc) || len(fspec.Slots) != len(spec.Slots) {
			t.Fatal("FiguresOnly figures differ")
		}

		f1 := spec.Format()
		s2, err := Parse(f1, types)
		if err != nil {
			t.Fatalf("Format output does not parse: %v\n%q", err, f1)
		}
		if got, want := slotsString(s2), slotsString(spec); got != want {
			t.Fatalf("SLOTS changed: %s -> %s", want, got)
		}
		if len(s2.Mounts) != len(spec.Mounts) {
			t.Fatalf("MOUNTS changed: %v -> %v", spec.Mounts, s2.Mounts)
		}
		for i := range spec.Mounts {
			if s2.Mounts[i] != spec.Mounts[i] {
				t.Fatalf("mount %d changed: %v -> %v", i, spec.Mounts[i], s2.Mounts[i])
			}
		}
		f2 := s2.Format()
		s3, err := Parse(f2, types)
		if err != nil {
			t.Fatalf("second Format output does not parse: %v", err)
		}
		if f3 := s3.Format(); !bytes.Equal(f3, f2) {
			t.Fatalf("Format is not a fixed point:\n%q\n%q", f2, f3)
		}
	})
}

func slotsString(s *Spec) string {
	var b []byte
	for _, k := range s.SlotOrder {
		b = append(b, k...)
		b = append(b, '=')
		b = append(b, s.Slots[k].String()...)
		b = append(b, ';')
	}
	return string(b)
}
