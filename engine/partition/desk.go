package partition

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/internal/safefile"
	"github.com/fgtop/fgtop/internal/untrusted"
	"github.com/fgtop/fgtop/model"
)

// Refusals of the Desk; nothing is written after any of them.
var (
	// ErrBusy: another operator holds the draft (open with takeOver to
	// take it from them).
	ErrBusy = errors.New("another operator is editing the partition")
	// ErrStale: the config changed since the draft's base was loaded (an
	// apply or rollback by someone else, or an edit on disk); review the
	// plan against the new file before applying.
	ErrStale = errors.New("the config changed since this draft was planned")
	// ErrTakenOver: another operator took the draft over; this session
	// may no longer plan or apply.
	ErrTakenOver = errors.New("the draft was taken over by another operator")
	// ErrClosed: the session was closed.
	ErrClosed = errors.New("the edit session is closed")
)

// DeskOptions configure a Desk.
type DeskOptions struct {
	// Config is the agent.toml the desk edits.
	Config string
	// Snapshot returns the latest live snapshot (the engine's Latest); plans
	// are made against it. It may return nil before the first scan.
	Snapshot func() *model.Snapshot
	// Journal is the journal path ("" = beside the config).
	Journal string
	Now     func() time.Time
	// Hooks stop the writer between steps (tests).
	Hooks *agentconfig.Hooks
}

// Desk is where one node's partition is edited: one per process (the local
// console, or the SSH server with all its sessions). It lends the draft to
// one operator at a time and tells everyone else who holds it and since
// when; it plans drafts against the live snapshot and applies them for the
// session's Actor, refusing viewers whatever a UI sends. Every apply or
// rollback through the desk, and any change of the file on disk, makes the
// other drafts stale: their plans must be reviewed against the new file
// before they can be applied.
type Desk struct {
	opts DeskOptions

	// wmu serialises writes of the config (apply, rollback) and is held
	// across them; mu guards the state below and is never held across a
	// config write, but it is held across the draft record's small
	// flocked, fsynced writes (Open, Close, a reclaimed record). Holder and
	// Holds take mu, so a console calls them off its UI loop (a tea.Cmd).
	wmu sync.Mutex
	mu  sync.Mutex
	// vmu guards what a console reads on its UI loop (Base, Stale,
	// LastWrite): d.gen, d.last and each session's base, gen, lagHash,
	// closed and lostTo. Writers hold mu and then vmu, briefly; mu is held
	// across the draft record's small locked, fsynced writes (Open, Close,
	// a reclaimed record), vmu never is, so another operator opening or
	// closing the editor does not stall this one's frames.
	vmu    sync.Mutex
	holder *Session
	// gen counts writes made through the desk; last says who made the
	// latest and when, lastHash what file it left ("" unreadable).
	gen      uint64
	last     Hold
	lastHash string
	// version changes whenever anything a viewer sees changes (holder,
	// writes), so a UI can poll it cheaply; it is read without d.mu, which
	// an apply holds across its write.
	version atomic.Uint64
	// ownToken is the record token of holder ("" when none).
	ownToken atomic.Value

	// extMu guards ext, the draft record as last read (another process's
	// holder), read at most every recordTTL. It is never held across
	// anything but that read.
	extMu   sync.Mutex
	ext     *draftRecord
	extRead time.Time

	// watch is what LatestWrite last read of the files.
	watch fileWatch
}

// recordTTL bounds how often the consoles sharing a desk read the draft
// record: each asks about once a second, an SSH server has dozens.
const recordTTL = 500 * time.Millisecond

// Hold says who did something and when: who holds the draft and since
// when, or who wrote the config last.
type Hold struct {
	Actor agentconfig.Actor
	Since time.Time
	// Rollback says a write was a rollback: it may leave the file the
	// agents run, and the operator whose apply it undid is told so.
	Rollback bool
}

// String reads "alice (ssh:203.0.113.7:51234) since 14:02:03".
func (h Hold) String() string {
	return h.Actor.String() + " since " + h.Since.Local().Format("15:04:05")
}

// NewDesk returns a desk for opts.Config, named by its resolved path (the
// draft record and the journal are keyed on it, whichever spelling found
// the file).
func NewDesk(opts DeskOptions) *Desk {
	if real, err := agentconfig.ResolvePath(opts.Config); err == nil {
		opts.Config = real
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Snapshot == nil {
		opts.Snapshot = func() *model.Snapshot { return nil }
	}
	d := &Desk{opts: opts}
	d.watch.born, _ = os.Stat(d.JournalPath())
	if d.watch.born != nil {
		if recs, _, err := agentconfig.ReadJournal(d.JournalPath()); err == nil {
			d.watch.bornRecs = len(recs)
		}
	}
	return d
}

// Path is the config the desk edits.
func (d *Desk) Path() string { return d.opts.Config }

// JournalPath is where the desk's applies and rollbacks are journaled.
func (d *Desk) JournalPath() string {
	if d.opts.Journal != "" {
		return d.opts.Journal
	}
	return agentconfig.JournalPath(d.opts.Config)
}

// Journal returns the last n records of the desk's journal, newest first
// (all of them when n <= 0), and how many lines could not be read. A
// missing journal is no error: nothing was applied yet.
func (d *Desk) Journal(n int) ([]agentconfig.JournalRecord, int, error) {
	recs, bad, err := agentconfig.ReadJournal(d.JournalPath())
	if err != nil {
		return nil, bad, fmt.Errorf("journal %s: %w", d.JournalPath(), err)
	}
	if n > 0 && len(recs) > n {
		recs = recs[len(recs)-n:]
	}
	slices.Reverse(recs)
	// These are for showing: the journal is a file anyone with write
	// access to it can plant text in. (Rollback reads it on its own.)
	for i := range recs {
		untrusted.Clean(&recs[i])
	}
	return recs, bad, nil
}

// Holder reports who holds the draft and since when.
func (d *Desk) Holder() (Hold, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.holder != nil {
		return Hold{Actor: d.holder.actor, Since: d.holder.since}, true
	}
	if r := d.external(); r != nil {
		return Hold{Actor: r.Actor, Since: r.Since}, true
	}
	return Hold{}, false
}

// external returns the live holder recorded by another process (nil when
// none), re-reading the record when the cached copy is old; a change of
// holder bumps the version.
func (d *Desk) external() *draftRecord {
	d.extMu.Lock()
	defer d.extMu.Unlock()
	if now := time.Now(); now.Sub(d.extRead) >= recordTTL {
		d.extRead = now
		r := readRecord(DraftRecordPath(d.opts.Config))
		if own, _ := d.ownToken.Load().(string); !r.live() || (own != "" && r.Token == own) {
			r = nil
		}
		if tokenOf(r) != tokenOf(d.ext) {
			d.version.Add(1)
		}
		d.ext = r
	}
	return d.ext
}

// forgetExternal drops the cached record so the next read is fresh.
func (d *Desk) forgetExternal() {
	d.extMu.Lock()
	d.ext, d.extRead = nil, time.Time{}
	d.extMu.Unlock()
}

// setHolder records who holds the draft here. Called with d.mu held.
func (d *Desk) setHolder(s *Session) {
	d.holder = s
	tok := ""
	if s != nil {
		tok = s.token
	}
	d.ownToken.Store(tok)
	d.version.Add(1)
}

func tokenOf(r *draftRecord) string {
	if r == nil {
		return ""
	}
	return r.Token
}

// LastWrite reports the latest apply or rollback made through the desk.
func (d *Desk) LastWrite() (Hold, bool) {
	d.vmu.Lock()
	defer d.vmu.Unlock()
	return d.last, d.gen > 0
}

// Version changes whenever the holder changes or the desk writes.
func (d *Desk) Version() uint64 {
	d.external()
	return d.version.Load()
}

// Open lends the draft to actor. A viewer is refused (ErrNotAllowed). While
// another session holds the draft, Open fails with ErrBusy naming the
// holder, unless takeOver is set: then that session loses the draft (its
// further calls fail with ErrTakenOver) and actor gets it. The session's
// base is the config as it is on disk now.
func (d *Desk) Open(actor agentconfig.Actor, takeOver bool) (*Session, error) {
	if !actor.CanWrite() {
		return nil, fmt.Errorf("%w: %s (role %q) may not edit the partition", agentconfig.ErrNotAllowed, actor, actor.Role)
	}
	// The name is shown to the other sessions and written to the record.
	actor = actor.Clean()
	base, err := agentconfig.Load(d.opts.Config)
	if base == nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	// The name alone is what the client claimed; the origin (address,
	// key) says who it really is.
	h := d.holder
	if h != nil && !takeOver {
		return nil, fmt.Errorf("%w: the draft is held by %s", ErrBusy, Hold{Actor: h.actor, Since: h.since})
	}
	now := d.opts.Now()
	host, _ := os.Hostname()
	s := &Session{desk: d, actor: actor, since: now, base: base, gen: d.gen, token: newToken(), lagHash: d.configHash()}
	err = updateRecord(DraftRecordPath(d.opts.Config), func(cur *draftRecord) (*draftRecord, error) {
		if cur.live() && !takeOver && (h == nil || cur.Token != h.token) {
			return nil, fmt.Errorf("%w: the draft is held by %s", ErrBusy, Hold{Actor: cur.Actor, Since: cur.Since})
		}
		return &draftRecord{Token: s.token, Actor: actor, Since: now, PID: os.Getpid(), Host: host}, nil
	})
	if err != nil {
		return nil, err
	}
	if h != nil {
		d.vmu.Lock()
		h.lostTo = &Hold{Actor: actor, Since: now}
		d.vmu.Unlock()
	}
	d.setHolder(s)
	d.forgetExternal()
	return s, nil
}

// Session is one operator's hold of the draft.
type Session struct {
	desk  *Desk
	actor agentconfig.Actor
	since time.Time

	// Guarded by desk.mu; written with desk.vmu held too (see Desk.vmu).
	base   *agentconfig.Config
	gen    uint64
	lostTo *Hold
	closed bool
	// lagHash is the snapshot's ConfigHash when base was set: the engine
	// follows the file a little later than a write, so until its snapshot
	// moves past that hash it says nothing about this base (Stale).
	lagHash string
	// token names the session in the draft record.
	token string
}

// Actor is who holds the session.
func (s *Session) Actor() agentconfig.Actor { return s.actor }

// Holds reports whether the session holds the draft now (not closed, not
// taken over).
func (s *Session) Holds() bool {
	s.desk.mu.Lock()
	defer s.desk.mu.Unlock()
	return s.desk.holder == s
}

// Base is the config the session's drafts start from.
func (s *Session) Base() *agentconfig.Config {
	s.desk.vmu.Lock()
	defer s.desk.vmu.Unlock()
	return s.base
}

// gone says why the session no longer holds the draft (nil while it
// does): closed, or taken over here or by another process. A record that
// went missing or void (deleted by hand, or damaged) is claimed again.
// Called with desk.mu held.
func (s *Session) gone() error {
	switch {
	case s.closed:
		return ErrClosed
	case s.lostTo != nil:
		return fmt.Errorf("%w: %s", ErrTakenOver, s.lostTo)
	}
	d := s.desk
	path := DraftRecordPath(d.opts.Config)
	if r := readRecord(path); r != nil && r.Token == s.token {
		return nil
	}
	host, _ := os.Hostname()
	err := updateRecord(path, func(cur *draftRecord) (*draftRecord, error) {
		switch {
		case cur != nil && cur.Token == s.token:
			return nil, nil
		case cur.live():
			d.vmu.Lock()
			s.lostTo = &Hold{Actor: cur.Actor, Since: cur.Since}
			d.vmu.Unlock()
			return nil, nil
		}
		return &draftRecord{Token: s.token, Actor: s.actor, Since: s.since, PID: os.Getpid(), Host: host}, nil
	})
	if s.lostTo != nil {
		if d.holder == s {
			d.setHolder(nil)
		}
		return fmt.Errorf("%w: %s", ErrTakenOver, s.lostTo)
	}
	return err
}

// check says why the session may not plan or apply now: closed, taken
// over, or stale. Called with desk.mu held.
func (s *Session) check() error {
	if err := s.gone(); err != nil {
		return err
	}
	if s.gen != s.desk.gen {
		return fmt.Errorf("%w: %s wrote it at %s", ErrStale, s.desk.last.Actor, s.desk.last.Since.Local().Format("15:04:05"))
	}
	raw, err := safefile.ReadFile(s.desk.opts.Config, agentconfig.MaxConfigSize)
	if err != nil {
		return fmt.Errorf("%w: read %s: %v", ErrStale, s.desk.opts.Config, err)
	}
	if sum := sha256.Sum256(raw); hex.EncodeToString(sum[:]) != s.base.Hash {
		return fmt.Errorf("%w: %s was changed on disk", ErrStale, s.desk.opts.Config)
	}
	return nil
}

// Check reports why the session's drafts may not be applied now (nil when
// they may): closed, taken over, or stale (errors.Is ErrStale).
func (s *Session) Check() error {
	s.desk.mu.Lock()
	defer s.desk.mu.Unlock()
	return s.check()
}

// Stale is Check without reading anything: why the session's drafts may
// not be applied, judged from the desk's own writes and hash, the config's
// hash in the engine's latest snapshot (Snapshot.ConfigHash). A console
// calls it on every snapshot; the engine follows agent.toml, so a change
// on disk reaches it there. A hash that is the base's, or the one the
// snapshot carried when the base was set (the engine has not read the new
// file yet), says nothing. Apply still checks the file itself.
func (s *Session) Stale(hash string) error {
	s.desk.vmu.Lock()
	defer s.desk.vmu.Unlock()
	switch {
	case s.closed:
		return ErrClosed
	case s.lostTo != nil:
		return fmt.Errorf("%w: %s", ErrTakenOver, s.lostTo)
	case s.gen != s.desk.gen:
		return fmt.Errorf("%w: %s wrote it at %s", ErrStale, s.desk.last.Actor, s.desk.last.Since.Local().Format("15:04:05"))
	case hash != "" && hash == s.base.Hash:
		// The engine has caught up with the base: the hash it carried
		// before says nothing any more. A later return to it (another
		// process's rollback restores the bytes of before) is a change.
		s.lagHash = ""
		return nil
	case hash == "" || hash == s.lagHash:
		return nil
	case hash == model.ConfigUnusable:
		return fmt.Errorf("%w: %s was changed on disk and cannot be used", ErrStale, s.desk.opts.Config)
	}
	return fmt.Errorf("%w: %s was changed on disk", ErrStale, s.desk.opts.Config)
}

// Lost says whether the session lost the draft (closed, or taken over
// here or by another process), nil while it holds it. It reads the draft
// record only as the desk's cached copy (at most every recordTTL for all
// the consoles sharing the desk), and the record itself only when that
// copy names another holder. Call it off the UI loop.
func (s *Session) Lost() error {
	d := s.desk
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case s.closed:
		return ErrClosed
	case s.lostTo != nil:
		return fmt.Errorf("%w: %s", ErrTakenOver, s.lostTo)
	case d.external() == nil:
		return nil
	}
	// The cached copy may predate this session's own record: read it.
	d.forgetExternal()
	return s.gone()
}

// configHash is the latest snapshot's ConfigHash ("" without one).
func (d *Desk) configHash() string {
	if snap := d.opts.Snapshot(); snap != nil {
		return snap.ConfigHash
	}
	return ""
}

// Plan turns a request into a plan against the session's base and the
// latest snapshot. It works on a stale base too (the plan shows what would
// have happened); Apply refuses it until Review.
func (s *Session) Plan(req Request) *Plan {
	base := s.Base()
	snap := s.desk.opts.Snapshot()
	if snap == nil {
		snap = &model.Snapshot{}
	}
	draft, errs := Draft(base, InventoryOf(snap), req)
	return Build(base, draft, snap, errs...)
}

// Review reloads the base from disk so the next Plan is made on the file
// as it is now; it clears staleness (not a take-over).
func (s *Session) Review() error {
	base, err := agentconfig.Load(s.desk.opts.Config)
	if base == nil {
		return err
	}
	s.desk.mu.Lock()
	defer s.desk.mu.Unlock()
	if err := s.gone(); err != nil {
		return err
	}
	lag := s.desk.configHash()
	s.desk.vmu.Lock()
	s.base, s.gen, s.lagHash = base, s.desk.gen, lag
	s.desk.vmu.Unlock()
	return nil
}

// Apply writes the plan for the session's actor (see Apply). It is refused
// when the session is stale, taken over or closed, or when the plan was not
// made on the session's current base. After a write the session's base is
// the new file, and every other session is stale.
//
// The desk's state lock is not held across the write (writes are
// serialised on their own lock): the other consoles keep drawing while an
// apply fsyncs.
func (s *Session) Apply(p *Plan, force bool) (*ApplyResult, error) {
	d := s.desk
	d.wmu.Lock()
	defer d.wmu.Unlock()
	if err := s.mayApply(p, force); err != nil {
		return nil, err
	}
	res, err := Apply(p, ApplyOptions{Actor: s.actor, Force: force, Journal: d.opts.Journal, Now: d.opts.Now, Hooks: d.opts.Hooks})
	if res != nil {
		d.wrote(s, false)
	}
	return res, err
}

// mayApply says why p may not be applied by s now. Called with d.wmu held.
func (s *Session) mayApply(p *Plan, force bool) error {
	d := s.desk
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := s.check(); err != nil {
		return err
	}
	if p.BaseHash != s.base.Hash {
		return fmt.Errorf("%w: the plan was made on an earlier version of the file; review it", ErrStale)
	}
	// The plan was made a while ago (a person read it): kernels may have
	// started on a device that moves since then, and a force covers only
	// the ones that were shown.
	if snap := d.opts.Snapshot(); snap != nil && p.Valid() {
		if late := p.Unconfirmed(snap, force); len(late) > 0 && (force || len(p.Affected()) == 0) {
			return fmt.Errorf("%w since the plan was made; review it:\n  %s", ErrLiveKernels, strings.Join(late, "\n  "))
		}
	}
	return nil
}

// wrote records a write by s: other sessions go stale, s is rebased on the
// new file. Called with d.wmu held, not d.mu (it reads the file).
func (d *Desk) wrote(s *Session, rollback bool) {
	// An unreadable result keeps the old base: the next check then reports
	// the file as changed, which is the truth.
	base, _ := agentconfig.Load(d.opts.Config)
	lag := d.configHash()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.vmu.Lock()
	defer d.vmu.Unlock()
	d.gen++
	d.last, d.lastHash = Hold{Actor: s.actor, Since: d.opts.Now(), Rollback: rollback}, ""
	d.version.Add(1)
	if base != nil {
		s.base = base
		d.lastHash = base.Hash
	}
	s.gen, s.lagHash = d.gen, lag
}

// Close gives the draft back; closing twice is harmless.
func (s *Session) Close() {
	d := s.desk
	d.mu.Lock()
	defer d.mu.Unlock()
	if s.closed {
		return
	}
	d.vmu.Lock()
	s.closed = true
	d.vmu.Unlock()
	if d.holder == s {
		d.setHolder(nil)
	}
	// Only its own record is cleared: after a take-over the record names
	// the new holder. An error leaves a record that names this process,
	// which becomes void when the process ends.
	_ = updateRecord(DraftRecordPath(d.opts.Config), func(cur *draftRecord) (*draftRecord, error) {
		if cur != nil && cur.Token == s.token {
			return &draftRecord{}, nil
		}
		return nil, nil
	})
}
