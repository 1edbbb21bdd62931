package agentconfig

import (
	"os"
	"strings"
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
// assumed: the first write after start (w, returned; an intent left, or a
// write that failed before the rename, counts: each read the file under
// the journal's lock as a completed write does) replaced (or, failing,
// left in place) a version
// with hash cur that nobody had touched since before start (its status
// change time, OldChanged), and came at least ReadGrace after start. It is
// false where the journal cannot say: no write after start (the file was
// changed by hand), a later record stamped at or before start (a clock
// set back), a record written before fgtop kept OldChanged, or a first
// write after start not made in boot, this host's boot now (BootID): a
// write after the start of an agent still running is of this boot, so
// another's is of a journal copied in with the file or written by another
// host on a shared file system, by other clocks.
func RanAtStart(recs []JournalRecord, start time.Time, cur, boot string) (w JournalRecord, ok bool) {
	w, _, ok = RanAtStartWhy(recs, start, cur, boot)
	return w, ok
}

// RanAtStartWhy is RanAtStart, and where the first write after start did
// replace the bytes the file holds now (a rollback, most often) but the
// proof fails, why not: an operator who rolled back is told why a restart
// is still asked for. why is empty otherwise.
func RanAtStartWhy(recs []JournalRecord, start time.Time, cur, boot string) (w JournalRecord, why string, ok bool) {
	i := 0
	for i < len(recs) && !recs[i].Time.After(start) {
		i++
	}
	if i == len(recs) {
		return JournalRecord{}, "", false
	}
	for _, r := range recs[i+1:] {
		if !r.Time.After(start) {
			return JournalRecord{}, "", false
		}
	}
	w = recs[i]
	switch {
	case w.OldHash != cur:
		return JournalRecord{}, "", false
	case boot == "":
		return w, "this host's boot cannot be read (" + bootIDPath + "), so the journal's times cannot be trusted to be this boot's", false
	case w.Boot == "":
		return w, "that write's journal record, an older fgtop's, does not say which boot made it", false
	case w.Boot != boot:
		return w, "that write's journal record is of another boot or host (a journal copied in with the file, or another host's write on a shared file system)", false
	case w.OldChanged == nil:
		return w, "that write's journal record, an older fgtop's, lacks when the version it replaced last changed", false
	case w.OldChanged.After(start):
		return w, "the version that write replaced had changed after the agent started, outside fgtop", false
	case w.Time.Before(start.Add(ReadGrace)):
		return w, "that write came within the agent's first minute, when the agent may still have been reading the file", false
	}
	return w, "", true
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

// bootIDPath is where Linux says which boot this is.
const bootIDPath = "/proc/sys/kernel/random/boot_id"

// BootID is this host's boot, as Linux names it (a random UUID made at
// each boot): "" where it cannot be read.
func BootID() string {
	b, err := os.ReadFile(bootIDPath)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
