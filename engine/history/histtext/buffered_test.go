package histtext

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/model"
)

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// WriteBuffered writes what Write writes; a failed flush is said only
// when nothing else is.
func TestWriteBuffered(t *testing.T) {
	t0 := time.Date(2026, 11, 20, 3, 0, 0, 0, time.UTC)
	iv := history.Interval{Device: model.DeviceKey{Name: "cuda", ID: "1"}, Kernel: "k1", Agent: "i-a", User: "u1",
		Amounts: model.ResourceSlot{model.SlotCUDAShares: model.NewDec(5, -1)}, From: t0, To: t0.Add(time.Hour)}
	whole := &history.HistoryResult{Intervals: []history.Interval{iv}, From: t0, To: t0.Add(2 * time.Hour)}
	gap := &history.HistoryResult{Intervals: []history.Interval{iv}, From: t0, To: t0.Add(2 * time.Hour),
		Missing: []history.Missing{{From: t0.Add(20 * time.Minute), To: t0.Add(30 * time.Minute), Why: "nothing recorded"}}}
	for _, c := range []struct {
		name     string
		res      *history.HistoryResult
		fail     bool
		problems int
		err      bool
	}{
		{name: "whole", res: whole},
		{name: "a gap", res: gap, problems: 1},
		{name: "flush fails", res: whole, fail: true, err: true},
		{name: "flush fails, a gap said first", res: gap, fail: true, problems: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			var want, got bytes.Buffer
			if _, err := Write(&want, c.res, history.Filter{}, Options{}); err != nil {
				t.Fatal(err)
			}
			var w interface{ Write([]byte) (int, error) } = &got
			if c.fail {
				w = failWriter{}
			}
			problems, err := WriteBuffered(w, c.res, history.Filter{}, Options{})
			if len(problems) != c.problems || (err != nil) != c.err {
				t.Errorf("problems %q, err %v", problems, err)
			}
			if !c.fail && got.String() != want.String() {
				t.Errorf("wrote\n%s\nwant\n%s", got.String(), want.String())
			}
		})
	}
}
