package partition

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/fgtop/fgtop/engine/agentconfig"
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
// record: nobody holds the draft). The file is created when missing.
func updateRecord(path string, fn func(cur *draftRecord) (*draftRecord, error)) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		return fmt.Errorf("draft record: %w", err)
	}
	defer f.Close()
	unlock, err := lockFile(f)
	if err != nil {
		return fmt.Errorf("draft record %s: %w", path, err)
	}
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
		if b, err = json.Marshal(next); err != nil {
			return err
		}
	}
	if err := f.Truncate(0); err != nil {
		return fmt.Errorf("draft record %s: %w", path, err)
	}
	if _, err := f.WriteAt(b, 0); err != nil {
		return fmt.Errorf("draft record %s: %w", path, err)
	}
	return nil
}

// readRecord reads the record without locking: a reader sees the old or
// the new content of a write that is a few bytes (a torn read decodes as
// nobody and is corrected on the next read).
func readRecord(path string) *draftRecord {
	f, err := os.Open(path)
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
	return &r, nil
}
