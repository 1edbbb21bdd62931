package report

import (
	"bytes"
	"time"

	"github.com/fgtop/fgtop/model"
)

// The alloc-map forms a Follower can print besides the full snapshot.
const (
	FormSnapshot      = ""         // the whole fgtop.snapshot/v1 document
	FormAllocRatio    = "ratio"    // Backend.AI's current gpu_alloc_map
	FormAllocAbsolute = "absolute" // the map agents before September 2026 report
)

// Value is what one line of a form holds: the full report, or one of the
// alloc maps. Only the form asked for is built: the full report costs as
// much as the scan's state folding at 10,000 kernels.
func Value(s *model.Snapshot, form string) any {
	switch form {
	case FormAllocRatio:
		return AllocMap(s)
	case FormAllocAbsolute:
		return AllocMapAbsolute(s)
	}
	return FromSnapshot(s)
}

// Follower turns a stream of snapshots into the lines of `snapshot
// --follow`: one compact JSON line per real change of what the form
// shows, none for a snapshot that only differs in sequence number and
// time (an inventory poll publishes every second), and marked heartbeat
// lines on request. `fgtop snapshot --follow` and the snapshot stream of
// `fgtop serve` both print through it, so a fleet reading either sees the
// same lines.
type Follower struct {
	// Form is FormSnapshot, FormAllocRatio or FormAllocAbsolute.
	Form    string
	last    []byte
	lastSeq uint64
}

// Line returns the line for s, or nil when nothing the form shows changed
// since the last line.
func (f *Follower) Line(s *model.Snapshot) ([]byte, error) {
	f.lastSeq = s.Seq
	v := Value(s, f.Form)
	full, isFull := v.(*Snapshot)
	key := v
	if isFull {
		// Seq and time change with every publication; they are not news.
		c := *full
		c.Seq, c.Time = 0, ""
		key = &c
	}
	kb, err := Marshal(key, false)
	if err != nil {
		return nil, err
	}
	if f.last != nil && bytes.Equal(kb, f.last) {
		return nil, nil
	}
	f.last = kb
	if !isFull {
		return kb, nil
	}
	return Marshal(v, false)
}

// Heartbeat is the marked line that says "nothing changed, still here":
// {"heartbeat":true,"time":...,"seq":N} with the last snapshot's number.
func (f *Follower) Heartbeat(now time.Time) ([]byte, error) {
	return Marshal(Heartbeat{Heartbeat: true, Time: now.UTC().Format(time.RFC3339Nano), Seq: f.lastSeq}, false)
}

// Heartbeat is a heartbeat line of a follow stream.
type Heartbeat struct {
	Heartbeat bool   `json:"heartbeat"`
	Time      string `json:"time"`
	Seq       uint64 `json:"seq"`
}
