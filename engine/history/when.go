package history

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// maxWhen bounds the text of a time argument.
const maxWhen = 64

// ParseWhen reads a moment as an operator writes it, relative to now:
// RFC 3339 ("2026-11-27T14:02:00Z"), a local date and time
// ("2026-11-27 14:02[:05]"), a local time of day ("14:02", "14:02:17":
// today, or yesterday when that is still to come), a day by name with an
// optional time of day ("yesterday 14:02", "today", "mon 09:30"), "now",
// or a time ago ("-2h", "-90s", "-1d12h": d is 24 hours).
func ParseWhen(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if len(s) > maxWhen {
		return time.Time{}, fmt.Errorf("time %.20q...: too long", s)
	}
	if s == "" {
		return time.Time{}, fmt.Errorf("empty time: want RFC 3339, 14:02, or -2h")
	}
	if s == "now" {
		return now, nil
	}
	if s[0] == '-' {
		d, err := parseDays(s[1:])
		if err != nil || d < 0 {
			return time.Time{}, fmt.Errorf("time %q: want a duration ago such as -2h, -90m or -1d12h", s)
		}
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	loc := now.Location()
	for _, layout := range []string{"2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	for _, layout := range []string{"15:04:05", "15:04"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			y, m, d := now.Date()
			// The fraction too ("14:02:17.5", which Go's layout takes):
			// dropped, the time read as its whole second, which stands
			// for that second (AtStart, AtEnd).
			at := time.Date(y, m, d, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), loc)
			if at.After(now) {
				at = at.AddDate(0, 0, -1)
			}
			return at, nil
		}
	}
	if t, ok, err := parseDayWord(s, now); ok {
		return t, err
	}
	return time.Time{}, fmt.Errorf("time %q: want RFC 3339 (2026-11-27T14:02:00Z), a local 2026-11-27 14:02, a time of day 14:02, a day and time (yesterday 14:02, today, mon 09:30), or a time ago -2h", s)
}

// dayWords are the days an operator names: today, yesterday and the
// weekdays, whole or by their first three letters.
var dayWords = func() map[string]int {
	m := map[string]int{"today": -1, "yesterday": -2}
	for d := time.Sunday; d <= time.Saturday; d++ {
		name := strings.ToLower(d.String())
		m[name], m[name[:3]] = int(d), int(d)
	}
	return m
}()

// parseDayWord reads "yesterday", "today 14:02", "monday 09:30:15",
// "tue": local midnight of the day, or the time of day given. A weekday is
// its latest such day not still to come (this morning's, or a week ago
// where that time today has not come yet). ok is false when the first
// word is not a day.
func parseDayWord(s string, now time.Time) (t time.Time, ok bool, err error) {
	f := strings.Fields(strings.ToLower(s))
	if len(f) == 0 || len(f) > 2 {
		return t, false, nil
	}
	day, known := dayWords[f[0]]
	if !known {
		return t, false, nil
	}
	loc := now.Location()
	var hh, mm, ss, ns int
	if len(f) == 2 {
		var tod time.Time
		var perr error
		for _, layout := range []string{"15:04:05", "15:04"} {
			if tod, perr = time.ParseInLocation(layout, f[1], loc); perr == nil {
				break
			}
		}
		if perr != nil {
			return t, true, fmt.Errorf("time %q: after %s want a time of day such as 14:02", s, f[0])
		}
		hh, mm, ss, ns = tod.Hour(), tod.Minute(), tod.Second(), tod.Nanosecond()
	}
	y, m, d := now.Date()
	at := func(back int) time.Time { return time.Date(y, m, d-back, hh, mm, ss, ns, loc) }
	switch day {
	case -1:
		return at(0), true, nil
	case -2:
		return at(1), true, nil
	}
	back := (int(now.Weekday()) - day + 7) % 7
	if t = at(back); t.After(now) {
		t = at(back + 7)
	}
	return t, true, nil
}

// ErrTooLong is ParseDays' error for a duration written well past what
// a time.Duration holds (about 106,000 days): "99999999h" was told to
// want a form it has.
var ErrTooLong = errors.New("too long: at most 100000d")

// ParseDays is a duration that may also count days ("7d", "1d12h").
func ParseDays(s string) (time.Duration, error) {
	d, err := parseDays(s)
	if err != nil {
		if s != "" && durationShape.MatchString(s) {
			return 0, fmt.Errorf("duration %q: %w", s, ErrTooLong)
		}
		return 0, fmt.Errorf("duration %q: want for example 7d, 36h or 90m", s)
	}
	return d, nil
}

// durationShape is the form ParseDays reads, whatever the numbers.
var durationShape = regexp.MustCompile(`^(\d+d)?(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))*$`)

func parseDays(s string) (time.Duration, error) {
	var days int64
	if i := strings.IndexByte(s, 'd'); i >= 0 {
		n, err := strconv.ParseInt(s[:i], 10, 32)
		if err != nil || n < 0 || n > 100000 {
			return 0, fmt.Errorf("bad days")
		}
		days, s = n, s[i+1:]
		if s == "" {
			return time.Duration(days) * 24 * time.Hour, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, err
	}
	return time.Duration(days)*24*time.Hour + d, nil
}

// SpanOrder refuses a span whose end comes before its start, naming both
// ends as they were read (a zero end is open). untilText is --until as
// typed: a bare time of day still to come today reads as yesterday's, the
// usual cause, and the error says so.
func SpanOrder(since, until time.Time, untilText string, now time.Time) error {
	if since.IsZero() || until.IsZero() || !until.Before(since) {
		return nil
	}
	msg := fmt.Sprintf("--until (%s) is before --since (%s)", spanStamp(until), spanStamp(since))
	// The hint only where --since is today's: with both ends yesterday's
	// (both times of day still to come) the span was typed backwards, and
	// leaving --until out would not mend it.
	y, m, d := now.Date()
	if sy, sm, sd := since.In(now.Location()).Date(); clockOnly(untilText) && sy == y && sm == m && sd == d {
		if uy, um, ud := until.Date(); uy != y || um != m || ud != d {
			msg += fmt.Sprintf(": --until %s is still to come today (now is %s), so it reads as yesterday's; leave --until out to mean now",
				strings.TrimSpace(untilText), now.Format("15:04:05"))
		}
	}
	return errors.New(msg)
}

// spanStamp is a moment as the span errors print it: local, to the second.
func spanStamp(t time.Time) string { return t.Format("2006-01-02 15:04:05 MST") }

// clockOnly reports whether s is a bare time of day ("14:02", "14:02:17").
func clockOnly(s string) bool {
	s = strings.TrimSpace(s)
	for _, layout := range []string{"15:04:05", "15:04"} {
		if _, err := time.Parse(layout, s); err == nil {
			return true
		}
	}
	return false
}
