package partition

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/internal/safefile"
)

// The draft record makes "one editor at a time" hold across processes: two
// operators who each run fgtop on the node (or two SSH servers) share one
// config, not one Desk. It is a small JSON file beside the config naming the
// session that holds the draft; every change of it is made under an
// exclusive lock on the file, and a record whose process is gone is void,
// so a crashed console never keeps the draft.

// DraftRecordPath is where the draft record of a config lives.
func DraftRecordPath(config string) string { return config + ".fgtop-draft" }

// DraftHolder reports who holds the draft of config in any process: for
// the CLI, which takes no draft but should say whose draft it makes stale.
func DraftHolder(config string) (Hold, bool) {
	if real, err := agentconfig.ResolvePath(config); err == nil {
		config = real // the record is keyed like the desk's
	}
	r := readRecord(DraftRecordPath(config))
	if !r.live() {
		return Hold{}, false
	}
	return Hold{Actor: r.Actor, Since: r.Since}, true
}

// draftRecord is the file's content; empty when nobody holds the draft.
type draftRecord struct {
	Token string            `json:"token"`
	Actor agentconfig.Actor `json:"actor"`
	Since time.Time         `json:"since"`
	PID   int               `json:"pid"`
	Host  string            `json:"host"`
}

func newToken() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// live reports whether the record names a session that may still hold the
// draft: one of another host (its process cannot be checked), or of a
// process that still runs here.
func (r *draftRecord) live() bool {
	if r == nil || r.Token == "" {
		return false
	}
	if h, _ := os.Hostname(); r.Host != h {
		return true
	}
	return processAlive(r.PID)
}

// updateRecord reads the record under an exclusive lock, lets fn decide,
// and writes what fn returns (nil: leave the file as it is; an empty
// record: nobody holds the draft). The file is created when missing. It
// is opened without following a symlink, as a regular file only (whoever
// may write the config's directory must not make fgtop empty or write
// another file), and replaced by a temp file and a rename, so a reader
// never sees half a record.
func updateRecord(path string, fn func(cur *draftRecord) (*draftRecord, error)) error {
	start := time.Now()
	f, unlock, err := openLockedRecord(path)
	if err != nil {
		return fmt.Errorf("draft record: %w", err)
	}
	defer f.Close()
	defer unlock()
	cur, err := decodeRecord(f)
	if err != nil {
		return fmt.Errorf("draft record %s: %w", path, err)
	}
	next, err := fn(cur)
	if err != nil || next == nil {
		return err
	}
	var b []byte
	if next.Token != "" {
		rec := *next
		rec.Actor = rec.Actor.Clean()
		if b, err = json.Marshal(&rec); err != nil {
			return err
		}
	}
	agentconfig.RemoveStaleTemps(path, start)
	if err := writeRecord(path, b); err != nil {
		return fmt.Errorf("draft record %s: %w", path, err)
	}
	return nil
}

// openLockedRecord opens the record (creating it) and locks it. A writer
// replaces the file, so the file locked may no longer be the one the path
// names once the lock is ours: then it is opened again, and the lock is
// always on the current record.
func openLockedRecord(path string) (*os.File, func(), error) {
	for range 100 {
		f, err := safefile.OpenFile(path, os.O_RDWR|os.O_CREATE, recordPerm, true)
		if err != nil {
			return nil, nil, err
		}
		unlock, err := lockFile(f)
		if err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		st, err1 := f.Stat()
		now, err2 := os.Lstat(path)
		if err1 == nil && err2 == nil && os.SameFile(st, now) {
			return f, unlock, nil
		}
		unlock()
		f.Close()
	}
	return nil, nil, fmt.Errorf("%s: replaced again and again while locking it", path)
}

// recordPerm is the draft record's mode: it names who edits, nothing
// secret, but nobody else writes it.
const recordPerm = 0o640

// writeRecord replaces the record with b: a temp file beside it, synced,
// renamed over it.
func writeRecord(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".fgtop-tmp-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	err = tmp.Chmod(recordPerm)
	if err == nil {
		_, err = tmp.Write(b)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(name, path)
	}
	if err != nil {
		_ = os.Remove(name)
	}
	return err
}

// readRecord reads the record without locking: a writer renames a whole
// new record into place, so a reader sees the old one or the new one.
func readRecord(path string) *draftRecord {
	f, err := safefile.Open(path, true)
	if err != nil {
		return nil
	}
	defer f.Close()
	r, _ := decodeRecord(f)
	return r
}

// decodeRecord returns nil for an empty file; a file that is not a record
// (damaged, or written by something else) counts as empty too, since
// refusing every editor forever over it would be worse.
func decodeRecord(f *os.File) (*draftRecord, error) {
	b, err := io.ReadAll(io.NewSectionReader(f, 0, 1<<16))
	if err != nil {
		return nil, err
	}
	if len(b) == 0 {
		return nil, nil
	}
	var r draftRecord
	if json.Unmarshal(b, &r) != nil || r.Token == "" {
		return nil, nil
	}
	// Whoever could write the record could put anything in the name that
	// consoles and `fgtop apply` print.
	r.Actor = r.Actor.Clean()
	return &r, nil
}
