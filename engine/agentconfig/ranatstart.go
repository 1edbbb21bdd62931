package agentconfig

import (
	"os"
	"time"
)

// ReadGrace is how long after its process starts an agent may still be
// reading agent.toml: a write within it may be what the agent read, or
// not.
const ReadGrace = time.Minute

// RanAtStart reports whether a config whose journal is recs (ReadJournal,
// oldest first) held at start the bytes it holds now (sha256 cur), so that
// an agent process started then runs the file as it is, whatever was
// written and undone since (an apply rolled back). It is proved, never
// assumed: the first write after start (w, returned) replaced a version
// with hash cur that nobody had touched since before start (its status
// change time, OldChanged), and came at least ReadGrace after start. It is
// false where the journal cannot say: no write after start (the file was
// changed by hand), a later record stamped at or before start (a clock
// set back), or a record written before fgtop kept OldChanged.
func RanAtStart(recs []JournalRecord, start time.Time, cur string) (w JournalRecord, ok bool) {
	i := 0
	for i < len(recs) && !recs[i].Time.After(start) {
		i++
	}
	if i == len(recs) {
		return JournalRecord{}, false
	}
	for _, r := range recs[i+1:] {
		if !r.Time.After(start) {
			return JournalRecord{}, false
		}
	}
	w = recs[i]
	if w.OldChanged == nil || w.OldChanged.After(start) || w.Time.Before(start.Add(ReadGrace)) || w.OldHash != cur {
		return JournalRecord{}, false
	}
	return w, true
}

// ChangedAt is when the file whose status is st last changed: the later
// of its modification time and its status change time (ctime). The
// modification time alone can be older than the bytes (cp -p, rsync -a
// and tar keep the source's), and an agent started after it but before
// the copy would be taken for running the copy.
func ChangedAt(st os.FileInfo) time.Time {
	t := st.ModTime()
	if c := statusChanged(st); c != nil && c.After(t) {
		return *c
	}
	return t
}
