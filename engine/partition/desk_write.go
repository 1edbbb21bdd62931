package partition

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"sync"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/internal/safefile"
)

// fileWatch is what LatestWrite last read of the config and its journal,
// kept so that a poll re-reads a file only when its stat changed.
type fileWatch struct {
	mu sync.Mutex
	// born is the journal's stat when the desk was made (nil: none): its
	// records then are what the console found, not news.
	born os.FileInfo
	// bornRecs is how many records the journal held then.
	bornRecs int
	// jInfo is the journal's stat when newest was read; newest is its
	// newest record (nil when it has none or cannot be read), done its
	// newest that is not an intent nor a failed write and came after
	// bornRecs.
	jInfo        os.FileInfo
	newest, done *agentconfig.JournalRecord
	// cInfo is the config's stat when hash was taken ("" unreadable).
	cInfo os.FileInfo
	hash  string
}

// sameStat reports whether a and b are the same file, unchanged.
func sameStat(a, b os.FileInfo) bool {
	return a != nil && b != nil && os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// LatestWrite reports the latest write of the config by any hand since
// the desk was made: the newest apply or rollback in its journal,
// whichever process made it (a CLI apply or rollback while a console
// runs: LastWrite knows only this desk's own); or, when the file on disk is not the one that write left,
// a change fgtop did not make, as an Actor with no name at the file's
// modification time. ok is false while nothing was written that way.
// It stats the config and the journal and re-reads one only when it
// changed: call it off the UI loop.
func (d *Desk) LatestWrite() (Hold, bool) {
	h, _, ok := d.LatestWriteHash()
	return h, ok
}

// LatestWriteHash is LatestWrite with the sha256 of the config as read
// for it ("" where it could not be read).
func (d *Desk) LatestWriteHash() (Hold, string, bool) {
	d.vmu.Lock()
	own, ok, ownHash := d.last, d.gen > 0, d.lastHash
	d.vmu.Unlock()

	w := &d.watch
	w.mu.Lock()
	defer w.mu.Unlock()
	if fi, err := os.Stat(d.JournalPath()); err != nil {
		w.jInfo, w.newest, w.done = nil, nil, nil
	} else if !sameStat(fi, w.jInfo) {
		w.jInfo, w.newest, w.done = fi, nil, nil
		if recs, _, err := agentconfig.ReadJournal(d.JournalPath()); err == nil && len(recs) > 0 {
			r := recs[len(recs)-1]
			w.newest = &r
			for i := len(recs) - 1; i >= w.bornRecs; i-- {
				if a := recs[i].Action; a != agentconfig.ActionIntent && a != agentconfig.ActionFailed {
					w.done = &recs[i]
					break
				}
			}
		}
	}
	// The config's hash first: whether an intent left last was carried
	// out is the file's to say.
	fi, err := os.Stat(d.opts.Config)
	if err != nil {
		fi = nil
	} else if !sameStat(fi, w.cInfo) {
		w.cInfo, w.hash = fi, ""
		if raw, err := safefile.ReadFile(d.opts.Config, agentconfig.MaxConfigSize); err == nil {
			sum := sha256.Sum256(raw)
			w.hash = hex.EncodeToString(sum[:])
		}
	}
	r := w.newest
	if r != nil && r.Action == agentconfig.ActionIntent && (w.hash == "" || w.hash != r.NewHash) {
		// An intent left last is a write that announced itself and then
		// failed or was killed: it wrote nothing unless the file is the
		// one it meant to leave (its record then lost). A write under
		// way elsewhere is one too, until its record comes.
		r = w.done
	}
	if r != nil && r.Action == agentconfig.ActionFailed {
		// A write that failed before the rename, and said so, wrote
		// nothing: the latest write is the one before it.
		r = w.done
	}
	hash := ownHash
	// A write from before the desk was made is what the console found: it
	// never told of those (the agents' restart state does).
	if r != nil && !sameStat(w.jInfo, w.born) && (!ok || !r.Time.Before(own.Since)) {
		own = Hold{Actor: agentconfig.Actor{Name: r.Actor, Origin: r.Origin, Role: r.Role, Key: r.Key}, Since: r.Time,
			Rollback: r.Action == agentconfig.ActionRollback}
		hash, ok = r.NewHash, true
	}
	if !ok {
		return Hold{}, w.hash, false
	}
	if fi == nil {
		return own, "", true
	}
	if w.hash != "" && hash != "" && w.hash != hash {
		return Hold{Since: fi.ModTime()}, w.hash, true
	}
	return own, w.hash, true
}
