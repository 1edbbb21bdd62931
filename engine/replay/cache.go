package replay

import (
	"sync"
	"time"

	"github.com/fgtop/fgtop/engine/history"
)

// RecordCache shares loaded records between their readers: the console
// editor of every operator of a `serve` replays each draft against the
// record's last week, and reading a week is the slow, large part (a busy
// node's week is hundreds of MB of sessions); replaying it under one
// partition is fast. One record per (directory, span) is read, at most
// once at a time, and given to every reader while it is as young as the
// reader asks; a Record is never changed once loaded (Run and Suggest
// only read it), so readers share it.
type RecordCache struct {
	max int
	// load reads a record (LoadDir; tests count calls).
	load func(dir string, from, to time.Time) (*Record, error)

	mu   sync.Mutex
	ents map[recordKey]*recordEnt
}

type recordKey struct {
	dir  string
	span time.Duration
}

type recordEnt struct {
	done chan struct{} // closed when rec or err is set
	rec  *Record
	err  error
	at   time.Time // the span's end: when it was asked for
	// keep is how long it stands in for a fresh read (KeepFor; age
	// while it is read).
	keep time.Duration
}

// minKeep is the least a young record is kept: reading one is cheap.
const minKeep = 5 * time.Second

// KeepFor is how long rec, read for the last span, may stand in for a
// fresh read: age, but for a record that holds less than span (a
// recorder that started minutes ago) a tenth of what it holds, at least
// minKeep. A draft opened 15 s after the recorder started was judged,
// and S suggested amounts, from those 15 s for the next 5 minutes while
// the record grew twentyfold.
func KeepFor(rec *Record, span, age time.Duration) time.Duration {
	if rec == nil || rec.From.IsZero() {
		return age
	}
	held := rec.To.Sub(rec.From)
	if held >= span-time.Minute {
		return age
	}
	return min(age, max(minKeep, held/10))
}

// NewRecordCache keeps at most max records (the oldest read goes first);
// a max below 1 keeps one, the record being read, which no one evicts.
func NewRecordCache(max int) *RecordCache {
	if max < 1 {
		max = 1
	}
	return &RecordCache{max: max, load: LoadDir, ents: map[recordKey]*recordEnt{}}
}

// RecordsMax bounds a process's cache: the history directories one
// process's consoles replay (a console has one). cmd/fgtop makes one
// cache of it per process (console, demo, serve) and gives it to every
// console it runs, so the editors of N operators of one `serve` hold one
// week, not N; a package's cache would be shared by every test and every
// program linked in, whatever their records.
const RecordsMax = 4

// LoadDir reads the sessions of [from, to) of the history record in dir.
func LoadDir(dir string, from, to time.Time) (*Record, error) {
	rd, err := history.OpenReader(dir)
	if err != nil {
		return nil, err
	}
	return Load(rd, from, to)
}

// Get is the record of dir's last span up to now: one read less than
// age before now (by whichever reader asked first), or a new read; at is
// the moment it was read up to. A reader that asks while it is read
// waits for that read. A failed read is not kept: the next reader reads
// again (a recorder that just started has its first segment within its
// flush). A record is let go age after its read: no reader asking that
// age would take it, and a console left open for days after one look at
// the editor would otherwise hold a busy node's week (hundreds of MB)
// until the process ends.
func (c *RecordCache) Get(dir string, span, age time.Duration, now time.Time) (rec *Record, at time.Time, err error) {
	key := recordKey{dir, span}
	c.mu.Lock()
	if e := c.ents[key]; e != nil && now.Sub(e.at) < min(age, e.keep) {
		c.mu.Unlock()
		<-e.done
		return e.rec, e.at, e.err
	}
	e := &recordEnt{done: make(chan struct{}), at: now, keep: age}
	c.ents[key] = e
	for len(c.ents) > c.max {
		var oldest recordKey
		var old *recordEnt
		for k, x := range c.ents {
			if x != e && (old == nil || x.at.Before(old.at)) {
				oldest, old = k, x
			}
		}
		// A record being read leaves the cache, not its waiters: they
		// hold it.
		delete(c.ents, oldest)
	}
	c.mu.Unlock()
	e.rec, e.err = c.load(dir, now.Add(-span), now)
	if e.err != nil {
		c.forget(key, e)
	} else {
		keep := KeepFor(e.rec, span, age)
		c.mu.Lock()
		e.keep = keep
		c.mu.Unlock()
		time.AfterFunc(keep, func() { c.forget(key, e) })
	}
	close(e.done)
	return e.rec, e.at, e.err
}

// forget takes e out of the cache if it is still key's entry.
func (c *RecordCache) forget(key recordKey, e *recordEnt) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ents[key] == e {
		delete(c.ents, key)
	}
}

// Len is how many records the cache holds.
func (c *RecordCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.ents)
}
