package histread

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/engine/report"
	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/model/names"
)

// smallRecord records a one-kernel node into a new directory: k1 from
// start, for a second.
func smallRecord(t *testing.T, start time.Time) string {
	t.Helper()
	dir := t.TempDir()
	now := start
	rec, err := history.Open(history.Options{Dir: dir, Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	s := &model.Snapshot{Seq: 1, Time: now, Node: "n"}
	s.SetKernels([]*model.Kernel{{ID: "k1", Agent: "a", State: model.KernelOK,
		Alloc: model.Allocations{model.SlotCUDAShares: {"0": model.MustDec("0.5")}}}})
	rec.Observe(s)
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Second)
	rec.Close()
	return dir
}

func TestAt(t *testing.T) {
	start := time.Now().Add(-time.Hour).Truncate(time.Second)
	dir := smallRecord(t, start)
	empty := t.TempDir()
	for _, c := range []struct {
		name     string
		dir      string
		at       time.Time
		readErr  string // a *ReadError saying this
		otherErr bool
		exact    bool
	}{
		{name: "inside", dir: dir, at: start, exact: true},
		{name: "before the record", dir: dir, at: start.Add(-time.Hour), readErr: "before"},
		{name: "empty record names its directory", dir: empty, at: start, readErr: empty + ": "},
		{name: "no directory", dir: filepath.Join(empty, "none"), at: start, otherErr: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := At(c.dir, c.at, time.Now())
			var re *ReadError
			switch {
			case c.readErr != "":
				if !errors.As(err, &re) || !strings.Contains(err.Error(), c.readErr) {
					t.Errorf("%v, want a ReadError saying %q", err, c.readErr)
				}
			case c.otherErr:
				if err == nil || errors.As(err, &re) {
					t.Errorf("%v, want an error opening the directory", err)
				}
			case err != nil:
				t.Fatal(err)
			default:
				if got := Inexact(c.at, res) == nil; got != c.exact {
					t.Errorf("exact %v, want %v (%v)", got, c.exact, Inexact(c.at, res))
				}
				if res.Snap == nil || res.Snap.Kernels()[0].ID != "k1" {
					t.Errorf("snapshot %+v", res.Snap)
				}
			}
		})
	}
}

func TestNotesAndInexact(t *testing.T) {
	at := time.Date(2026, 11, 27, 14, 2, 0, 0, time.UTC)
	snap := &model.Snapshot{Time: at.Add(-time.Hour)}
	res := &history.Result{Snap: snap,
		Missing: []history.Missing{{From: at.Add(-time.Minute), To: at}},
		Skipped: []history.Skipped{{Path: "/h/seg-x.fgh", Why: "garbage"}}}
	notes := Notes(res, report.FormSnapshot)
	if len(notes) != 2 || !strings.HasPrefix(notes[0], "the record lacks ") || notes[1] != "skipped /h/seg-x.fgh: garbage" {
		t.Errorf("Notes = %q", notes)
	}
	if err := Inexact(at, res); err == nil || !strings.Contains(err.Error(), "falls where the record lacks data: this is the node as last recorded, at ") {
		t.Errorf("Inexact = %v", err)
	}
	res.Exact = true
	if err := Inexact(at, res); err != nil {
		t.Errorf("exact: %v", err)
	}
	if len(Notes(&history.Result{Snap: snap}, report.FormAllocAbsolute)) != 0 || len(Notes(&history.Result{Snap: snap}, report.FormAllocRatio)) != 0 {
		t.Error("notes for a whole answer")
	}
}

func TestQuery(t *testing.T) {
	start := time.Now().Add(-time.Hour).Truncate(time.Second)
	dir := smallRecord(t, start)
	empty := t.TempDir()
	for _, c := range []struct {
		name     string
		dir      string
		f        history.Filter
		readErr  string
		notFound bool
		rows     bool
	}{
		{name: "a kernel it knows", dir: dir, f: history.Filter{Kernel: "k1"}, rows: true},
		{name: "a kernel it does not know", dir: dir, f: history.Filter{Kernel: "zz"}, notFound: true},
		{name: "an empty record knows no name", dir: empty, f: history.Filter{Kernel: "zz"}, readErr: empty + ": "},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, _, err := Query(c.dir, c.f)
			var re *ReadError
			var nf *names.NotFoundError
			switch {
			case c.readErr != "":
				if !errors.As(err, &re) || !errors.Is(err, history.ErrEmpty) || !strings.HasPrefix(err.Error(), c.readErr) {
					t.Errorf("%v, want a ReadError saying %q", err, c.readErr)
				}
			case c.notFound:
				if !errors.As(err, &nf) || errors.As(err, &re) {
					t.Errorf("%v, want the name's error as it is", err)
				}
			case err != nil:
				t.Fatal(err)
			case c.rows && res == nil:
				t.Error("no answer")
			}
		})
	}
	if _, _, err := Query(filepath.Join(empty, "none"), history.Filter{Kernel: "k1"}); err == nil || errors.As(err, new(*ReadError)) {
		t.Errorf("no directory: %v", err)
	}
}

func TestFuture(t *testing.T) {
	now := time.Date(2026, 11, 27, 14, 2, 0, 0, time.UTC)
	for _, c := range []struct {
		since time.Time
		err   bool
	}{
		{time.Time{}, false},
		{now.Add(-time.Hour), false},
		{now, false},
		{now.Add(time.Second), true},
	} {
		err := Future("--since", c.since, now)
		if (err != nil) != c.err || err != nil && !strings.HasPrefix(err.Error(), "--since ") {
			t.Errorf("since %s: %v, want error %v", c.since, err, c.err)
		}
	}
}

func TestOneName(t *testing.T) {
	for _, c := range []struct {
		f    history.Filter
		want string
	}{
		{history.Filter{Device: "cuda:0"}, ""},
		{history.Filter{Project: "p"}, ""},
		{history.Filter{}, "history: name one of --device NAME"},
		{history.Filter{Kernel: "k", User: "u"}, "history: --kernel and --user given together: name only one of"},
		{history.Filter{Device: "d", Session: "s", Project: "p"}, "history: --device and --session and --project given together"},
	} {
		err := OneName(c.f)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)) {
			t.Errorf("%+v: %v, want %q", c.f, err, c.want)
		}
	}
}

func TestSetSpan(t *testing.T) {
	now := time.Date(2026, 11, 27, 14, 2, 0, 0, time.Local)
	for _, c := range []struct {
		since, until string
		from, to     time.Time
		err          string
	}{
		{},
		{since: "-2h", from: now.Add(-2 * time.Hour)},
		{since: "-2h", until: "-1h", from: now.Add(-2 * time.Hour), to: now.Add(-time.Hour)},
		{since: "soon", err: "--since: "},
		{until: "later", err: "--until: "},
		{since: "-1h", until: "-2h", err: "--"},
	} {
		var f history.Filter
		err := SetSpan(&f, c.since, c.until, now)
		switch {
		case c.err != "":
			if err == nil || !strings.HasPrefix(err.Error(), c.err) {
				t.Errorf("%q..%q: %v, want %q", c.since, c.until, err, c.err)
			}
		case err != nil || !f.Since.Equal(c.from) || !f.Until.Equal(c.to):
			t.Errorf("%q..%q: %s..%s %v, want %s..%s", c.since, c.until, f.Since, f.Until, err, c.from, c.to)
		}
	}
}
