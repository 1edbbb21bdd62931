package history

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/model/names"
)

// Query names as a person types them: a unique prefix is its id, a
// shared one is ambiguous (listing the candidates), a name nothing has
// lists what the record knows; never an empty answer for it.
func TestQueryNames(t *testing.T) {
	dir := t.TempDir()
	recordSynth(t, dir, newSynth(5, 12), 40, 1, Options{})
	rd, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	known, err := rd.Known()
	if err != nil || len(known.Kernels) < 3 || len(known.Users) < 2 {
		t.Fatalf("known %+v, %v", known, err)
	}
	k := known.Kernels[len(known.Kernels)-1]
	u := known.Users[0]
	for _, c := range []struct {
		name      string
		f         Filter
		matched   string
		ambiguous bool
		notFound  string
	}{
		{name: "kernel by id", f: Filter{Kernel: k}, matched: k},
		{name: "kernel by a unique prefix", f: Filter{Kernel: k[:8]}, matched: k},
		{name: "kernel by a shared prefix", f: Filter{Kernel: "0000000"}, ambiguous: true},
		{name: "no such kernel", f: Filter{Kernel: "zz"}, notFound: `no kernel "zz" in the record, which knows ` + known.Kernels[0]},
		{name: "user by id", f: Filter{User: u}, matched: u},
		{name: "user by a shared prefix", f: Filter{User: "user-"}, ambiguous: true},
		{name: "no such user", f: Filter{User: "nosuch"}, notFound: `no user "nosuch" in the record, which knows ` + u},
		{name: "no such session", f: Filter{Session: "zz"}, notFound: `no session "zz"`},
		{name: "no such device", f: Filter{Device: "GPU99"}, notFound: `no device "GPU99"`}, // the synthetic node lists no devices
	} {
		res, err := rd.Query(c.f)
		var amb *names.AmbiguousError
		var nf *names.NotFoundError
		switch {
		case c.ambiguous:
			if !errors.As(err, &amb) || len(amb.Candidates) < 2 {
				t.Errorf("%s: %v, want ambiguous", c.name, err)
			}
		case c.notFound != "":
			if !errors.As(err, &nf) || !strings.Contains(err.Error(), c.notFound) {
				t.Errorf("%s: %v, want %q", c.name, err, c.notFound)
			}
		default:
			if err != nil || len(res.Matched) != 1 || res.Matched[0] != c.matched || len(res.Intervals) == 0 {
				t.Errorf("%s: %v, matched %v, %d intervals", c.name, err, res.Matched, len(res.Intervals))
			}
		}
	}
}

// A name the record does not know, in a record whose segments could not
// be read, says so: the error listed nothing ("the record knows no
// devices") and blamed the name for the damage.
func TestQueryNamesSaysTheDamage(t *testing.T) {
	dir := t.TempDir()
	recordSynth(t, dir, newSynth(5, 12), 40, 1, Options{})
	segs, err := filepath.Glob(filepath.Join(dir, "seg-*.fgh"))
	if err != nil || len(segs) == 0 {
		t.Fatalf("segments %v, %v", segs, err)
	}
	for _, p := range segs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		// The checkpoint's chunk, just after the header, fails its
		// checksum.
		for i := 40; i < 48 && i < len(b); i++ {
			b[i] ^= 0xff
		}
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	rd, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []Filter{{Device: "GPU1"}, {Kernel: "zz"}, {User: "nosuch"}} {
		_, err := rd.Query(f)
		var nf *names.NotFoundError
		if !errors.As(err, &nf) {
			t.Errorf("%+v: %v, want a name not found", f, err)
			continue
		}
		if !strings.Contains(err.Error(), "the record is damaged") || !strings.Contains(err.Error(), filepath.Base(segs[0])) {
			t.Errorf("%+v: %v, want the damaged segment named", f, err)
		}
	}
	// An intact record says nothing of damage.
	clean := t.TempDir()
	recordSynth(t, clean, newSynth(5, 12), 40, 1, Options{})
	rd, err = OpenReader(clean)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rd.Query(Filter{Kernel: "zz"}); err == nil || strings.Contains(err.Error(), "the record is damaged") {
		t.Errorf("intact record: %v", err)
	}
}
