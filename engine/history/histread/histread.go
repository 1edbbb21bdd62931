// Package histread asks a history directory what the commands that read
// it print: the node at a moment (snapshot --at) and who held what over a
// span (history). It opens the record, sizes the garbage collector for the
// one query, and sorts what goes wrong into what the record lacks (a
// ReadError) and the rest.
package histread

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/engine/history/histdir"
	"github.com/fgtop/fgtop/engine/report"
	"github.com/fgtop/fgtop/internal/gcpolicy"
	"github.com/fgtop/fgtop/model/names"
)

// ReadError is a finding about the record: it holds nothing yet, the
// asked time is outside it, a segment cannot be read. The directory was
// named right; the answer is that the record cannot give one (exit 1 to
// the commands, not bad usage).
type ReadError struct {
	Err error
	// Skipped are the files named like segments the reader left out, said
	// beside a refusal as beside an answer (Notes): a planted file named
	// for 2030 must not read as part of the record whose span is refused.
	Skipped []history.Skipped
}

func (e *ReadError) Error() string { return e.Err.Error() }
func (e *ReadError) Unwrap() error { return e.Err }

// At is the node as dir's record has it at t, the record read as of now
// (a recorder writing it has recorded up to now). An error opening dir is
// returned as it is; one reading the record is a *ReadError, the empty
// record's naming dir.
func At(dir string, t, now time.Time) (*history.Result, error) {
	rd, err := history.OpenReader(dir)
	if err != nil {
		return nil, err
	}
	rd.Now = func() time.Time { return now }
	gcpolicy.PrepareQueryHeap(rd.Size())
	gcpolicy.Seek()
	res, err := rd.At(t)
	var out *history.OutsideError
	switch {
	case errors.As(err, &out):
		return nil, &ReadError{Err: err, Skipped: rd.Skipped()}
	case errors.Is(err, history.ErrEmpty):
		return nil, &ReadError{Err: fmt.Errorf("%s: %w", dir, err)}
	case err != nil:
		return nil, &ReadError{Err: err, Skipped: rd.Skipped()}
	}
	return res, nil
}

// Notes are what an answer of At lacks or left out, one line each, for
// stderr: the printed snapshot is whole only where they are none. form is
// the report's form (report.FormSnapshot, ...): the ratio map also names
// the GPUs it leaves out (report.RatioLeftOut).
func Notes(res *history.Result, form string) []string {
	var out []string
	for _, m := range res.Missing {
		out = append(out, fmt.Sprintf("the record lacks %s", m))
	}
	for _, sk := range res.Skipped {
		out = append(out, fmt.Sprintf("skipped %s", sk))
	}
	if form == report.FormAllocRatio {
		if msg := report.RatioLeftOut(res.Snap); msg != "" {
			out = append(out, msg)
		}
	}
	return out
}

// Inexact says that t falls where the record lacks data and res is the
// node as last recorded before it; nil when res is the node at t.
func Inexact(t time.Time, res *history.Result) error {
	if res.Exact {
		return nil
	}
	return fmt.Errorf("%s falls where the record lacks data: this is the node as last recorded, at %s",
		t.Local().Format(stamp), res.Snap.Time.Local().Format(stamp))
}

// stamp is how a moment is named to the user.
const stamp = "2006-01-02 15:04:05 MST"

// Query lists who held what in dir's record, as f asks, and whether a
// recorder is writing the record now. An error opening dir, and a name f
// gives that the record does not know or knows several of
// (*names.NotFoundError, *names.AmbiguousError: the user's to correct),
// are returned as they are; what the record lacks is a *ReadError naming
// dir. A record that holds nothing yet knows no name: that is a finding
// about the record, not a wrong name.
func Query(dir string, f history.Filter) (res *history.HistoryResult, active bool, err error) {
	rd, err := history.OpenReader(dir)
	if err != nil {
		return nil, false, err
	}
	gcpolicy.PrepareQueryHeap(rd.Size())
	gcpolicy.Query()
	res, err = rd.Query(f)
	var notFound *names.NotFoundError
	var ambiguous *names.AmbiguousError
	switch {
	case errors.As(err, &notFound) && histdir.Empty(rd):
		return nil, false, &ReadError{Err: histdir.EmptyError(dir, rd)}
	case errors.As(err, &notFound) || errors.As(err, &ambiguous):
		return nil, false, err
	case err != nil:
		return nil, false, &ReadError{Err: fmt.Errorf("%s: %w", dir, err)}
	}
	return res, rd.Active, nil
}

// Future says that since is after now, when it is: said whether or not a
// recorder is writing, since with one the record's end is now, and an
// empty table would read as "nobody held it" (a year mistyped).
func Future(flag string, since, now time.Time) error {
	if !since.After(now) {
		return nil
	}
	return fmt.Errorf("%s %s is in the future (now is %s): the record holds nothing after now",
		flag, since.Local().Format(stamp), now.Local().Format(stamp))
}

// OneName checks that f names exactly one thing to ask the record about
// (a device, kernel, user, session or project): the record is asked one
// way, not for a filter of several. The error is the caller's usage.
func OneName(f history.Filter) error {
	var given []string
	for _, g := range []struct{ flag, v string }{{"--device", f.Device}, {"--kernel", f.Kernel}, {"--user", f.User}, {"--session", f.Session}, {"--project", f.Project}} {
		if g.v != "" {
			given = append(given, g.flag)
		}
	}
	switch {
	case len(given) == 0:
		return errors.New("history: name one of --device NAME, --kernel ID, --user ID, --session ID, --project ID")
	case len(given) > 1:
		return fmt.Errorf("history: %s given together: name only one of --device NAME, --kernel ID, --user ID, --session ID, --project ID (the console's / filter combines them)", strings.Join(given, " and "))
	}
	return nil
}

// SetSpan sets f's span from --since and --until as typed ("" for none),
// read as of now, and checks that it runs forwards. The error is the
// caller's usage.
func SetSpan(f *history.Filter, since, until string, now time.Time) error {
	var err error
	if since != "" {
		if f.Since, err = history.ParseWhen(since, now); err != nil {
			return fmt.Errorf("--since: %w", err)
		}
	}
	if until != "" {
		if f.Until, err = history.ParseWhen(until, now); err != nil {
			return fmt.Errorf("--until: %w", err)
		}
	}
	return history.SpanOrder(f.Since, f.Until, until, now)
}
