package replay

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/history"
)

// TestWindow: SPAN is counted back from until (now by default) or on
// from since, never replaced by it, and never past now.
func TestWindow(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	at := func(h time.Duration) time.Time {
		return time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC).Add(h * time.Hour)
	}
	for _, tt := range []struct {
		span, since, until string
		from, to           time.Time
		err                string
	}{
		{span: "2h", from: at(10), to: at(12)},
		{span: "10s", since: "-1m", from: now.Add(-time.Minute), to: now.Add(-50 * time.Second)},
		{span: "36h", since: "2026-11-27T03:00:00Z", from: at(3), to: now},
		{span: "1h", until: "2026-11-27T03:00:00Z", from: at(2), to: at(3)},
		{span: "soon", err: `--replay "soon": want a span such as 7d, 36h or 1d12h`},
		{span: "0h", err: `--replay "0h": want a span`},
		{span: "99999999h", err: `--replay "99999999h": too long: at most 100000d`},
		{span: "100001d", err: `--replay "100001d": too long: at most 100000d`},
		{span: "", err: `--replay "": want a span`},
		{span: "-5h", err: `--replay "-5h": want a span`},
		{span: "1h", since: "-3h", until: "-1h", err: "--replay 1h with both --since and --until: the span is counted from --since or up to --until; give one of them"},
		{span: "1h", since: "2099-01-01T00:00:00Z", err: "--since 2099-01-01T00:00:00Z is not before now"},
		{span: "1h", since: "whenever", err: "--since: "},
		{span: "1h", until: "whenever", err: "--until: "},
	} {
		t.Run(fmt.Sprintf("%s since %q until %q", tt.span, tt.since, tt.until), func(t *testing.T) {
			from, to, err := Window(tt.span, tt.since, tt.until, now)
			if tt.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || !from.Equal(tt.from) || !to.Equal(tt.to) {
				t.Fatalf("%s to %s (%v), want %s to %s", from, to, err, tt.from, tt.to)
			}
		})
	}
}

func TestSpanErrorEmpty(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{history.ErrEmpty, true},
		{fmt.Errorf("read: %w", history.ErrEmpty), true},
		{&OutsideError{}, true},
		{errors.New("segment 3: bad checksum"), false},
	} {
		e := &SpanError{Dir: "/h", Err: tt.err}
		if got := e.Empty(); got != tt.want {
			t.Errorf("%v: Empty %v, want %v", tt.err, got, tt.want)
		}
		if !strings.HasPrefix(e.Error(), "/h: ") || !errors.Is(e, tt.err) {
			t.Errorf("%q does not say its directory and wrap %v", e.Error(), tt.err)
		}
	}
}

// TestSpanErrorHint: a span wholly after the record says --until its
// end, one wholly before it --since its start (--replay 7d of a record
// that ended days ago exited 2 with no word of how to replay its last
// week: the tour); one the record covers, or no record, nothing.
func TestSpanErrorHint(t *testing.T) {
	rFrom := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	rTo := time.Date(2026, 11, 27, 0, 0, 0, 500, time.UTC)
	at := func(d int) time.Time { return rFrom.AddDate(0, 0, d) }
	for _, c := range []struct {
		err  error
		want string
	}{
		{&OutsideError{From: at(10), To: at(17), RecordFrom: rFrom, RecordTo: rTo}, "to replay the span up to the record's end: --until 2026-11-27T00:00:00Z"},
		{&OutsideError{From: at(-3), To: at(-2), RecordFrom: rFrom, RecordTo: rTo}, "to replay the span from the record's start: --since 2026-11-20T00:00:00Z"},
		{&OutsideError{From: at(-3), To: rFrom, RecordFrom: rFrom, RecordTo: rTo}, "to replay the span from the record's start: --since 2026-11-20T00:00:00Z"},
		{&OutsideError{From: at(1), To: at(1), RecordFrom: rFrom, RecordTo: rTo}, ""},
		{history.ErrEmpty, ""},
	} {
		e := &SpanError{Dir: "/h", Err: c.err}
		if got := e.Hint(); got != c.want {
			t.Errorf("%v: hint %q, want %q", c.err, got, c.want)
		}
	}
}

// TestLoadSpanNoRecord: a history directory with no record yet is a
// span with nothing to replay, said with the directory.
func TestLoadSpanNoRecord(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	_, err := LoadSpan(dir, now.Add(-time.Hour), now)
	var span *SpanError
	if !errors.As(err, &span) || !span.Empty() || !strings.HasPrefix(err.Error(), dir+": ") {
		t.Fatalf("LoadSpan of an empty directory: %v", err)
	}
	_, _, err = LoadSpanStarted(dir, now.Add(-time.Hour), now, Options{})
	if !errors.As(err, &span) || !span.Empty() {
		t.Fatalf("LoadSpanStarted of an empty directory: %v", err)
	}
}
