package replay

import (
	"errors"
	"fmt"
	"time"

	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/internal/gcpolicy"
)

// Window is the span a replay's flags name, relative to now: span (7d,
// 36h, 1d12h, as history.ParseDays reads it) up to until (now when ""),
// or span from since (up to now at the most); since and until are
// history.ParseWhen's times. Every error is the operator's, worded with
// the flag it came from (--replay, --since, --until).
func Window(span, since, until string, now time.Time) (from, to time.Time, err error) {
	d, err := history.ParseDays(span)
	if errors.Is(err, history.ErrTooLong) {
		return from, to, fmt.Errorf("--replay %q: %w", span, history.ErrTooLong)
	}
	if err != nil || d <= 0 {
		return from, to, fmt.Errorf("--replay %q: want a span such as 7d, 36h or 1d12h", span)
	}
	if since != "" && until != "" {
		return from, to, fmt.Errorf("--replay %s with both --since and --until: the span is counted from --since or up to --until; give one of them", span)
	}
	to = now
	switch {
	case since != "":
		if from, err = history.ParseWhen(since, now); err != nil {
			return from, to, fmt.Errorf("--since: %w", err)
		}
		if !from.Before(now) {
			return from, to, fmt.Errorf("--since %s is not before now", since)
		}
		// SPAN on from --since, never replaced by it: --replay 10s
		// --since -1m replayed the whole last minute.
		if end := from.Add(d); end.Before(now) {
			to = end
		}
		return from, to, nil
	case until != "":
		if to, err = history.ParseWhen(until, now); err != nil {
			return from, to, fmt.Errorf("--until: %w", err)
		}
	}
	return to.Add(-d), to, nil
}

// SpanError is a record that was opened but cannot be replayed over the
// span (Load's error), said with its history directory.
type SpanError struct {
	Dir string
	Err error
}

func (e *SpanError) Error() string { return e.Dir + ": " + e.Err.Error() }

func (e *SpanError) Unwrap() error { return e.Err }

// Empty reports whether the span holds nothing to replay (no record
// yet, a span outside it) rather than a damaged record: nothing to
// replay is not an answer about sessions, and a script must not read it
// as refusals.
func (e *SpanError) Empty() bool {
	var outside *OutsideError
	return errors.Is(e.Err, history.ErrEmpty) || errors.As(e.Err, &outside)
}

// Hint is what to ask instead of a span that lies wholly after or
// before the record ("" otherwise): --replay SPAN counts back from now,
// so a record that stopped growing days ago (a dead node's, a copy)
// holds nothing of "the last 7d" (the tour: plan --replay 7d on the bench
// week exited 2, the way to replay its last week left to be guessed).
func (e *SpanError) Hint() string {
	var o *OutsideError
	if !errors.As(e.Err, &o) || o.RecordTo.IsZero() {
		return ""
	}
	switch {
	case !o.From.Before(o.RecordTo):
		return "to replay the span up to the record's end: --until " + o.RecordTo.UTC().Format(time.RFC3339)
	case !o.To.IsZero() && !o.To.After(o.RecordFrom):
		return "to replay the span from the record's start: --since " + o.RecordFrom.UTC().Format(time.RFC3339)
	}
	return ""
}

// LoadSpan reads the record's sessions of [from, to) from the history
// directory dir (Load, the heap readied for it and collected once after
// it: gcpolicy.ReadDone). A record that cannot be opened is the reader's
// error; one that cannot be replayed over the span, a *SpanError.
func LoadSpan(dir string, from, to time.Time) (*Record, error) {
	rd, err := openDir(dir)
	if err != nil {
		return nil, err
	}
	rec, err := Load(rd, from, to)
	if err != nil {
		return nil, &SpanError{Dir: dir, Err: err}
	}
	gcpolicy.ReadDone()
	return rec, nil
}

// LoadSpanStarted is LoadSpan with the run of opts under the partitions in
// force started as the record is read (LoadStarted).
func LoadSpanStarted(dir string, from, to time.Time, opts Options) (*Record, *Pending, error) {
	rd, err := openDir(dir)
	if err != nil {
		return nil, nil, err
	}
	if opts.AfterRead == nil {
		opts.AfterRead = gcpolicy.ReadDone
	}
	rec, p, err := LoadStarted(rd, from, to, opts)
	if err != nil {
		return nil, nil, &SpanError{Dir: dir, Err: err}
	}
	return rec, p, nil
}

// openDir opens the history in dir with the heap readied for reading it
// whole. No memory ceiling as history's queries set (gcpolicy.Query): a
// week's sessions with their cores and memory hold more than it, and the
// collector would run without end.
func openDir(dir string) (*history.Reader, error) {
	rd, err := history.OpenReader(dir)
	if err != nil {
		return nil, err
	}
	gcpolicy.PrepareQueryHeap(rd.Size())
	return rd, nil
}
