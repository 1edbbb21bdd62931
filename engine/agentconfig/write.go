package agentconfig

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/fgtop/fgtop/internal/safefile"
	"github.com/fgtop/fgtop/internal/untrusted"
)

// Journal actions.
const (
	ActionApply    = "apply"
	ActionRollback = "rollback"
	ActionIntent   = "intent"
	// ActionFailed completes an intent whose write failed before the
	// config was replaced: nothing was written. An action of its own, not
	// an "apply" with another result, so that a reader that knows only
	// applies and rollbacks (an older fgtop, a script) never takes it for
	// a write.
	ActionFailed = "failed"
)

// MaxConfigSize is the largest agent.toml read: real ones are a few kB.
const MaxConfigSize = 16 << 20

// backupPerm is the most a backup of the config may allow: owner
// read-write, group read.
const backupPerm = 0o640

// Role is what an actor may do to the config.
type Role string

// Roles. Anything but an operator or an admin is refused a write: a role
// that is missing or unknown counts as a viewer.
const (
	RoleViewer   Role = "viewer"
	RoleOperator Role = "operator"
	RoleAdmin    Role = "admin"
)

// CanWrite says whether the role may change the config: an operator or an
// admin; a missing or unknown role may not.
func (r Role) CanWrite() bool { return r == RoleOperator || r == RoleAdmin }

// String is the role's name as authorized_keys and the journal spell it.
func (r Role) String() string { return string(r) }

// Actor is who changes the config and from where; the journal records it.
type Actor struct {
	Name string `json:"name"`
	// Origin says where the change comes from: "cli", "console",
	// "ssh:203.0.113.7:51234 SHA256:...".
	Origin string `json:"origin"`
	Role   Role   `json:"role"`
	// Key is the fingerprint of the SSH key the actor authenticated with
	// ("SHA256:..."), "" when the change did not come over SSH. The name an
	// SSH client gives is its own choice; the key is what identifies the
	// person, so the journal keeps it in a field of its own.
	Key string `json:"key,omitempty"`
}

// CanWrite reports whether the actor may change the config.
func (a Actor) CanWrite() bool { return a.Role.CanWrite() }

// Errors the writer refuses with; the file is untouched after each.
var (
	// ErrNotAllowed: the actor is a viewer (or has no known role).
	ErrNotAllowed = errors.New("not allowed")
	// ErrChangedOnDisk: the file is not the one the change was planned on.
	ErrChangedOnDisk = errors.New("the config changed on disk since it was loaded")
	// ErrNothingToRollBack: the journal records no apply still in effect.
	ErrNothingToRollBack = errors.New("nothing to roll back")
	// ErrBadBackup: the journal names as the backup to restore a file
	// that is not one fgtop made of this config.
	ErrBadBackup = errors.New("not fgtop's backup")
	// ErrUndoMoved: the apply a rollback would undo is not the one its
	// caller showed (RollbackRequest.Undoes): another apply or rollback
	// was made since.
	ErrUndoMoved = errors.New("the last apply changed since it was shown")
	// ErrReadOnly: the config's mode lets its owner not write it (a
	// chmod 444 to protect it), and the write was not forced
	// (CommitRequest.ReadOnlyOK).
	ErrReadOnly = errors.New("the config is read-only")
)

// ReadOnlyWhy says why the config at path is taken as protected from
// changes ("" when it is not): its mode gives its owner no write
// permission (chmod 444, chmod a-w). The rename that replaces it needs
// only the directory's permission, and root writes any file, so the
// mode bits, not a failed write, are what tell.
func ReadOnlyWhy(path string) string {
	st, err := os.Stat(path)
	if err != nil || !readOnly(st) {
		return ""
	}
	return readOnlyWords(path, st)
}

// readOnlyError is ErrReadOnly in words of its own.
type readOnlyError struct{ msg string }

func (e *readOnlyError) Error() string        { return e.msg }
func (e *readOnlyError) Is(target error) bool { return target == ErrReadOnly }

func readOnly(st os.FileInfo) bool { return st.Mode().IsRegular() && st.Mode().Perm()&0o200 == 0 }

func readOnlyWords(path string, st os.FileInfo) string {
	return fmt.Sprintf("%s is read-only (mode %04o: its owner may not write it, so someone protected it from changes): make it writable first (chmod u+w %s), or force the write (fgtop apply or rollback --force), which keeps the mode", path, st.Mode().Perm(), path)
}

// Step names a point in the writer's sequence, for fault injection.
type Step string

// Steps, in the order Commit passes them.
const (
	StepLocked      Step = "locked"       // the journal lock is held, nothing written
	StepBackup      Step = "backup"       // the backup copy is written and synced
	StepTempPartial Step = "temp-partial" // half of the new bytes are in the temp file
	StepTempWritten Step = "temp-written" // every byte is in the temp file, not synced
	StepTempSynced  Step = "temp-synced"  // the temp file is synced and closed
	StepIntent      Step = "intent"       // the intent record is journaled, the config not yet replaced
	StepRenamed     Step = "renamed"      // the temp file replaced the config
	StepDirSynced   Step = "dir-synced"   // the directory entry is synced
	StepJournaled   Step = "journaled"    // the journal record is appended and synced
)

// Steps lists every Step in order.
var Steps = []Step{StepLocked, StepBackup, StepTempPartial, StepTempWritten, StepTempSynced, StepIntent, StepRenamed, StepDirSynced, StepJournaled}

// Hooks let tests stop the writer between steps.
type Hooks struct {
	// Fault is called at each step; an error makes the writer return it at
	// once and leave everything as a crash at that point would (no clean-up).
	Fault func(Step) error
}

func (h *Hooks) at(s Step) error {
	if h == nil || h.Fault == nil {
		return nil
	}
	if err := h.Fault(s); err != nil {
		return fmt.Errorf("stopped at %s: %w", s, err)
	}
	return nil
}

// JournalRecord is one line of the journal (JSON lines).
type JournalRecord struct {
	Time time.Time `json:"time"`
	// Action is "apply" or "rollback"; or "intent", written (and synced)
	// before the config is replaced, so that a write killed between the
	// rename and its record still leaves a trace. The record that
	// completes an intent has the same Time, Config and hashes: the
	// apply or rollback, or "failed" when the write failed before the
	// config was replaced (nothing was written).
	Action string `json:"action"`
	// Intends is, for an intent or a failed record, the action it
	// announced.
	Intends string `json:"intends,omitempty"`
	Actor   string `json:"actor"`
	Origin  string `json:"origin"`
	Role    Role   `json:"role"`
	// Key is the actor's SSH key fingerprint (Actor.Key), when it has one.
	Key    string `json:"key,omitempty"`
	Config string `json:"config"`
	// OldHash and NewHash are the sha256 of the file before and after.
	OldHash string `json:"old_hash"`
	NewHash string `json:"new_hash"`
	// Backup is the copy of the previous version (OldHash).
	Backup string `json:"backup"`
	// OldChanged is the previous version's last status change (ctime),
	// read under the journal's lock before the write: no hand touched the
	// file between it and Time. RanAtStart reads it; older records lack it.
	OldChanged *time.Time `json:"old_changed,omitempty"`
	// Boot is the boot of the host that wrote it (BootID): RanAtStart
	// believes only a write of the boot an agent runs in.
	Boot   string `json:"boot,omitempty"`
	Forced bool   `json:"forced,omitempty"`
	// Result is "ok", or "mismatch" when the file read back did not give
	// what was planned (Mismatch says how); "pending" for an intent,
	// "failed" for a failed record.
	Result string `json:"result"`
	// Failure is, for a failed record, why the write failed.
	Failure  string          `json:"failure,omitempty"`
	Mismatch []string        `json:"mismatch,omitempty"`
	Plan     json.RawMessage `json:"plan,omitempty"`
	// Undoes is, for a rollback, the time of the apply it undid.
	Undoes *time.Time `json:"undoes,omitempty"`
}

// JournalPath is where the journal of config path lives: beside it
// (beside the file a symlink points to, when Commit resolves one).
func JournalPath(path string) string { return path + ".fgtop-journal.jsonl" }

// CommitRequest is one change of the config file.
type CommitRequest struct {
	Path string
	// BaseHash is the hash of the file the change was planned on; the
	// write is refused when the file on disk differs.
	BaseHash string
	Data     []byte
	Actor    Actor
	// Plan is recorded in the journal as JSON.
	Plan   any
	Forced bool
	// ReadOnlyOK replaces a config whose mode gives its owner no write
	// permission (ReadOnlyWhy), keeping that mode; without it such a
	// file is refused (ErrReadOnly). Its use is journaled as forced.
	ReadOnlyOK bool
	// Verify checks the file as read back; it returns what does not match
	// the plan (nil when it all does).
	Verify func(*Config) []string
	// Assume is the allocation format to read the result with when the
	// file does not tell (see ParseAssuming).
	Assume Format
	// Journal is the journal's path ("" = JournalPath of the resolved Path).
	Journal string
	Now     func() time.Time
	Hooks   *Hooks
}

// CommitResult says what a write did.
type CommitResult struct {
	// Path is the file written (symlinks resolved).
	Path    string
	Backup  string
	OldHash string
	NewHash string
	Journal string
	// Mismatch lists how the file read back differs from the plan; empty
	// when it matches.
	Mismatch []string
	Record   JournalRecord
}

// Commit writes req.Data as the config, safely:
//
//   - refused for an actor who is not an operator (ErrNotAllowed);
//   - refused when the new bytes would not load (ErrWouldNotLoad: see
//     ValidateRendered);
//   - refused when the file on disk is not the one planned on
//     (ErrChangedOnDisk), checked under an exclusive lock on the journal so
//     two writers cannot interleave;
//   - the previous version is kept as a timestamped copy beside the config;
//   - the new bytes go to a temp file in the same directory, which is
//     synced, then renamed over the config, and the directory is synced: a
//     crash at any point leaves either the old file or the new one;
//   - the file is read back and checked (req.Verify); a mismatch is
//     reported in the result and the journal, never hidden;
//   - a journal record (time, actor, origin, hashes, backup, plan) is
//     appended and synced.
func Commit(req CommitRequest) (*CommitResult, error) {
	path, old, unlock, err := begin(req.Actor, req.Path, &req.Journal, req.Hooks)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if h := hashOf(old); h != req.BaseHash {
		return nil, fmt.Errorf("%w: %s is now sha256 %s, the plan was made on %s; load it again and re-plan", ErrChangedOnDisk, req.Path, short(h), short(req.BaseHash))
	}
	if _, probs, err := ValidateRendered(req.Path, req.Data, req.Assume); err != nil || len(probs) > 0 {
		if err == nil {
			err = &InvalidError{Path: req.Path, Problems: probs}
		}
		return nil, fmt.Errorf("%w, so it is not written: %w", ErrWouldNotLoad, err)
	}
	return commitLocked(path, old, req, "apply", nil)
}

// begin is the start every write shares: refuse an actor who may not
// write, resolve the config's real path, default the journal beside it,
// take the journal lock (released by unlock) and read the file as it is.
func begin(actor Actor, reqPath string, journal *string, hooks *Hooks) (path string, cur []byte, unlock func(), err error) {
	if !actor.CanWrite() {
		return "", nil, nil, fmt.Errorf("%w: %s (role %q) may not change the agent config", ErrNotAllowed, actor, actor.Role)
	}
	if path, err = ResolvePath(reqPath); err != nil {
		return "", nil, nil, err
	}
	// Before the journal is made: a refusal leaves nothing beside it.
	if err = mayReplace(path); err != nil {
		return "", nil, nil, err
	}
	if *journal == "" {
		// Beside the real file, like the backups, whichever link names it.
		*journal = JournalPath(path)
	}
	if unlock, err = lockJournal(*journal, path); err != nil {
		return "", nil, nil, err
	}
	if err = hooks.at(StepLocked); err == nil {
		if cur, err = safefile.ReadFile(path, MaxConfigSize); err != nil {
			err = fmt.Errorf("read agent config: %w", err)
		}
	}
	if err != nil {
		unlock()
		return "", nil, nil, err
	}
	return path, cur, unlock, nil
}

// commitLocked does the write; the journal lock is held and old is the
// file's current content.
func commitLocked(path string, old []byte, req CommitRequest, action string, undoes *time.Time) (*CommitResult, error) {
	now := time.Now
	if req.Now != nil {
		now = req.Now
	}
	t := now().UTC()
	// The name is the client's free choice (an SSH user name): it is
	// journaled and printed, so it carries no terminal controls.
	req.Actor = req.Actor.Clean()
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("stat agent config: %w", err)
	}
	if readOnly(st) {
		if !req.ReadOnlyOK {
			verb := action
			if action == ActionRollback {
				verb = "roll back"
			}
			return nil, &readOnlyError{fmt.Sprintf("refusing to %s: %s; nothing was written", verb, readOnlyWords(path, st))}
		}
		req.Forced = true
	}
	res := &CommitResult{Path: path, OldHash: hashOf(old), NewHash: hashOf(req.Data), Journal: req.Journal}
	oldChanged, boot := statusChanged(st), BootID()
	RemoveStaleTemps(path, time.Now())
	res.Backup, err = writeBackup(path, old, st, t)
	if err != nil {
		return nil, untouched(path, req.Journal, "", err)
	}
	if err := req.Hooks.at(StepBackup); err != nil {
		return nil, err
	}
	intent := JournalRecord{
		Time: t, Action: ActionIntent, Intends: action, Actor: req.Actor.Name, Origin: req.Actor.Origin, Role: req.Actor.Role,
		Key: req.Actor.Key, Config: path, OldHash: res.OldHash, NewHash: res.NewHash, Backup: res.Backup, OldChanged: oldChanged,
		Boot: boot, Forced: req.Forced, Undoes: undoes, Result: "pending",
	}
	announce := func() error {
		if err := appendJournal(req.Journal, intent); err != nil {
			return fmt.Errorf("cannot record the change in the journal %s before making it: %w", req.Journal, err)
		}
		return nil
	}
	if err := replaceFile(path, req.Data, st, req.Hooks, announce); err != nil {
		var nr *notReplaced
		if !errors.As(err, &nr) {
			return nil, err
		}
		if nr.announced {
			return nil, failedAfterIntent(path, req.Journal, intent, nr.err)
		}
		return nil, untouched(path, req.Journal, res.Backup, nr.err)
	}

	// Read back what is on disk now: that, not what we meant to write, is
	// what the agent will read at its next start.
	back, err := safefile.ReadFile(path, MaxConfigSize)
	switch {
	case err != nil:
		res.Mismatch = append(res.Mismatch, fmt.Sprintf("cannot read the file back: %v", err))
	case !bytes.Equal(back, req.Data):
		res.Mismatch = append(res.Mismatch, fmt.Sprintf("the file read back (sha256 %s) is not what was written (sha256 %s)", short(hashOf(back)), short(res.NewHash)))
	default:
		cfg, perr := ParseAssuming(req.Path, back, req.Assume)
		switch {
		case cfg == nil:
			res.Mismatch = append(res.Mismatch, fmt.Sprintf("the file read back does not load: %v", perr))
		case req.Verify != nil:
			res.Mismatch = append(res.Mismatch, req.Verify(cfg)...)
		}
	}

	rec := JournalRecord{
		Time: t, Action: action, Actor: req.Actor.Name, Origin: req.Actor.Origin, Role: req.Actor.Role, Key: req.Actor.Key,
		Config: path, OldHash: res.OldHash, NewHash: res.NewHash, Backup: res.Backup, OldChanged: oldChanged, Boot: boot,
		Forced: req.Forced, Result: "ok", Mismatch: res.Mismatch, Undoes: undoes,
	}
	if len(res.Mismatch) > 0 {
		rec.Result = "mismatch"
	}
	if req.Plan != nil {
		b, err := json.Marshal(req.Plan)
		if err != nil {
			return res, fmt.Errorf("written, but the plan cannot be journaled: %w", err)
		}
		rec.Plan = b
	}
	res.Record = rec
	if err := appendJournal(req.Journal, rec); err != nil {
		return res, fmt.Errorf("the config is written (backup %s) but the journal is not: %w", res.Backup, err)
	}
	if err := req.Hooks.at(StepJournaled); err != nil {
		return res, err
	}
	return res, nil
}

// untouched is the error of a write that failed before it replaced the
// config at path, the journal recording nothing of it. What the attempt
// made is removed: its backup, a copy of a file that did not change, and
// (replaceFile's part) its temp file. The journal is not: it is the lock
// that writers wait on, and a writer that removed it could let two in at
// once; empty, it records nothing, which the operator is told.
func untouched(path, journal, backup string, err error) error {
	gone := ""
	if backup != "" {
		gone = " (the temp file and the backup this attempt made are removed)"
		if rerr := os.Remove(backup); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			gone = fmt.Sprintf(" (the temp file is removed; the backup %s, a copy of it, could not be: %v)", backup, rerr)
		}
	}
	empty := ""
	if st, serr := os.Lstat(journal); serr == nil && st.Mode().IsRegular() && st.Size() == 0 {
		empty = fmt.Sprintf("; the journal beside it, %s, is empty: it records nothing and is harmless", filepath.Base(journal))
	}
	return fmt.Errorf("%w; nothing was written: %s is untouched%s%s", err, path, gone, empty)
}

// failedAfterIntent is the error of a write that failed after its intent
// was journaled but before the config was replaced. Left alone, the
// intent would read for good as a write killed half-way, which a reader
// must take for done wherever the file later holds its bytes: a record
// completing it says the write failed, and the backup, a copy of a file
// that did not change, is removed. When that record cannot be appended
// the intent, which names the backup, stays, and so does the backup.
func failedAfterIntent(path, journal string, intent JournalRecord, err error) error {
	failed := intent
	failed.Action, failed.Result, failed.Failure, failed.Backup = ActionFailed, "failed", err.Error(), ""
	if jerr := appendJournal(journal, failed); jerr != nil {
		return fmt.Errorf("%w; nothing was written: %s is untouched (the temp file is removed; the backup %s is a copy of it); the journal %s could not record that the %s failed either (%v), so it shows the %s as interrupted",
			err, path, intent.Backup, journal, intent.Intends, jerr, intent.Intends)
	}
	gone := "the temp file and the backup this attempt made are removed"
	if rerr := os.Remove(intent.Backup); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		gone = fmt.Sprintf("the temp file is removed; the backup %s, a copy of it, could not be: %v", intent.Backup, rerr)
	}
	return fmt.Errorf("%w; nothing was written: %s is untouched (%s; the journal records the %s as failed)", err, path, gone, intent.Intends)
}

// notReplaced is replaceFile's failure before its rename, not a Hooks
// stop: the config is as it was and the temp file is removed. announced
// says whether the journal's intent record was written.
type notReplaced struct {
	err       error
	announced bool
}

func (e *notReplaced) Error() string { return e.err.Error() }
func (e *notReplaced) Unwrap() error { return e.err }

// writeBackup keeps old beside path as <name>.fgtop-<UTC time>.bak, synced.
func writeBackup(path string, old []byte, st os.FileInfo, t time.Time) (string, error) {
	stamp := t.Format("20060102T150405.000000000Z")
	for i := 0; ; i++ {
		name := fmt.Sprintf("%s.fgtop-%s.bak", path, stamp)
		if i > 0 {
			name = fmt.Sprintf("%s.fgtop-%s-%d.bak", path, stamp, i)
		}
		// O_EXCL|O_NOFOLLOW: a name someone placed (a symlink) is never
		// written through. The copy is at most 0640, whatever the config's
		// mode: a world-writable config must not leave world-writable
		// copies that a rollback would restore.
		perm := st.Mode().Perm() & backupPerm
		f, err := safefile.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm, true)
		if errors.Is(err, os.ErrExist) && i < 100 {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("back up agent config: %w", err)
		}
		// The umask may have taken bits, never added any: set exactly.
		if err := f.Chmod(perm); err != nil {
			f.Close()
			os.Remove(name)
			return "", fmt.Errorf("back up agent config: %w", err)
		}
		if err := writeSync(f, old); err != nil {
			os.Remove(name)
			return "", fmt.Errorf("back up agent config: %w", err)
		}
		copyOwner(name, st)
		return name, nil
	}
}

// backupStamp is the part of a backup's name after "<config>.fgtop-":
// writeBackup's UTC time, a collision counter, ".bak".
var backupStamp = regexp.MustCompile(`^[0-9]{8}T[0-9]{6}\.[0-9]{9}Z(-[0-9]{1,3})?\.bak$`)

// ownBackup reports whether backup is a name writeBackup gives backups
// of the config at path (resolved): in its directory, named
// <config name>.fgtop-<time>[-N].bak.
func ownBackup(path, backup string) error {
	dir, name := filepath.Split(filepath.Clean(backup))
	prefix := filepath.Base(path) + ".fgtop-"
	if backup == "" || !filepath.IsAbs(backup) || filepath.Clean(dir) != filepath.Dir(path) ||
		!strings.HasPrefix(name, prefix) || !backupStamp.MatchString(name[len(prefix):]) {
		return fmt.Errorf("%w: the journal names %q as the backup, which is not a backup fgtop makes of %s (%s.fgtop-TIME.bak beside it): refusing to restore it",
			ErrBadBackup, untrusted.Text(backup), path, filepath.Base(path))
	}
	return nil
}

// writeSync writes data, syncs and closes f.
func writeSync(f *os.File, data []byte) error {
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// replaceFile puts data at path atomically: temp file in the same
// directory, synced, renamed over path, directory synced. The file keeps
// path's permissions (and owner, when we may set it). announce runs just
// before the rename (the journal's intent record): when it fails nothing
// is replaced. A failure before the rename is a *notReplaced.
func replaceFile(path string, data []byte, st os.FileInfo, hooks *Hooks, announce func() error) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".fgtop-tmp-*")
	if err != nil {
		return &notReplaced{err: fmt.Errorf("write agent config: %w", err)}
	}
	tmp := f.Name()
	crashed := false
	defer func() {
		if !crashed {
			os.Remove(tmp) // no-op once renamed
		}
	}()
	if err := f.Chmod(st.Mode().Perm()); err != nil {
		f.Close()
		return &notReplaced{err: fmt.Errorf("write agent config: %w", err)}
	}
	n := len(data) / 2
	if _, err := f.Write(data[:n]); err != nil {
		f.Close()
		return &notReplaced{err: fmt.Errorf("write agent config: %w", err)}
	}
	if err := hooks.at(StepTempPartial); err != nil {
		crashed = true // a torn temp file, left as a crash would leave it
		return err
	}
	if _, err := f.Write(data[n:]); err != nil {
		f.Close()
		return &notReplaced{err: fmt.Errorf("write agent config: %w", err)}
	}
	if err := hooks.at(StepTempWritten); err != nil {
		crashed = true
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return &notReplaced{err: fmt.Errorf("sync agent config: %w", err)}
	}
	if err := f.Close(); err != nil {
		return &notReplaced{err: fmt.Errorf("write agent config: %w", err)}
	}
	copyOwner(tmp, st)
	if err := hooks.at(StepTempSynced); err != nil {
		crashed = true
		return err
	}
	if announce != nil {
		if err := announce(); err != nil {
			return &notReplaced{err: err}
		}
	}
	if err := hooks.at(StepIntent); err != nil {
		crashed = true
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return &notReplaced{err: fmt.Errorf("replace agent config: %w", err), announced: announce != nil}
	}
	if err := hooks.at(StepRenamed); err != nil {
		crashed = true
		return err
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	if err := hooks.at(StepDirSynced); err != nil {
		crashed = true
		return err
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func appendJournal(path string, rec JournalRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	f, err := safefile.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600, true)
	if err != nil {
		return err
	}
	line := append(b, '\n')
	size := int64(-1)
	// A write torn before its newline (power lost, a full disk) would
	// otherwise take this record into its line, and both would be lost
	// to the reader: this one starts a line of its own.
	if st, err := f.Stat(); err == nil {
		size = st.Size()
		last := make([]byte, 1)
		if size > 0 {
			if _, err := f.ReadAt(last, size-1); err == nil && last[0] != '\n' {
				line = append([]byte{'\n'}, line...)
			}
		}
	}
	// A record that failed (a full disk) is taken back, so that it does
	// not stay as a torn line every later rollback warns of.
	fail := func(err error) error {
		if size >= 0 {
			_ = f.Truncate(size)
		}
		f.Close()
		return err
	}
	if _, err := f.Write(line); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	return f.Close()
}

// ReadJournal returns the journal's records, oldest first, without the
// intents that their apply, rollback or failed record completed: an
// intent left is a write that was interrupted between announcing itself
// and recording its end; a failed record (ActionFailed) is a write that
// wrote nothing. A missing journal is empty; a line that does not parse
// (a torn last write) is skipped and counted in bad.
func ReadJournal(path string) (recs []JournalRecord, bad int, err error) {
	recs, bad, err = readJournal(path)
	return dropCompletedIntents(recs), bad, err
}

// readJournal returns every record, intents included.
func readJournal(path string) (recs []JournalRecord, bad int, err error) {
	recs, unread, err := readJournalLines(path)
	return recs, len(unread), err
}

// readJournalLines is readJournal, with the numbers (from 1) of the lines
// that do not parse.
func readJournalLines(path string) (recs []JournalRecord, unread []int, err error) {
	f, err := safefile.Open(path, true)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if errors.Is(err, fs.ErrPermission) {
		// Root's journal is root's alone (0600): rollback without sudo.
		return nil, nil, fmt.Errorf("read journal: %w (run fgtop as the config's owner or as root: sudo)", err)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read journal: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var r JournalRecord
		if json.Unmarshal(line, &r) != nil {
			unread = append(unread, n)
			continue
		}
		// Whoever could write the journal could put anything in a name.
		r.Actor, r.Origin, r.Key = CleanName(r.Actor), cleanLong(r.Origin), CleanName(r.Key)
		recs = append(recs, r)
	}
	if err := sc.Err(); err != nil && !errors.Is(err, io.EOF) {
		return recs, unread, fmt.Errorf("read journal: %w", err)
	}
	return recs, unread, nil
}

// JournalWarning is rollback's warning of the lines of the journal of
// config (journal: "" = JournalPath of the resolved config) that fgtop
// cannot read, and so skips:
// a record torn by a crash or a full disk, or a hand edit. "" when every
// line reads, or when the journal cannot be read at all (Undoable says
// why then).
func JournalWarning(config, journal string) string {
	if journal == "" {
		real, err := ResolvePath(config)
		if err != nil {
			return ""
		}
		journal = JournalPath(real)
	}
	_, unread, err := readJournalLines(journal)
	if err != nil || len(unread) == 0 {
		return ""
	}
	const most = 10
	nums := make([]string, 0, most)
	for _, n := range unread[:min(len(unread), most)] {
		nums = append(nums, fmt.Sprint(n))
	}
	which, it := "line "+nums[0]+" is not a record", "it is"
	if len(unread) > 1 {
		which, it = "lines "+strings.Join(nums, ", "), "they are"
		if len(unread) > most {
			which += fmt.Sprintf(" (and %d more)", len(unread)-most)
		}
		which += " are not records"
	}
	return fmt.Sprintf("the journal %s: %s fgtop can read (a write torn by a crash or a full disk, or an edit?); %s skipped, and the apply to undo is found from the other lines", journal, which, it)
}

// RollbackRequest undoes the last apply still in effect.
type RollbackRequest struct {
	Path    string
	Actor   Actor
	Journal string // "" = JournalPath(Path)
	// Force rolls back even when the file changed since that apply (the
	// change is kept in the backup Rollback makes), and when the file is
	// read-only (CommitRequest.ReadOnlyOK).
	Force bool
	// Undoes, when set, is the apply the caller showed and judged (the
	// console's rollback dialog): compared under the journal's lock, so
	// that an apply another process made after the caller looked is not
	// the one undone, unseen and unjudged (ErrUndoMoved).
	Undoes *JournalRecord
	Now    func() time.Time
	Hooks  *Hooks
}

// Undoable returns the apply that rollback would undo: the journal is
// replayed as a stack (an apply pushes, a rollback pops; a failed write
// does neither).
func Undoable(path, journal string) (*JournalRecord, error) {
	real, err := ResolvePath(path)
	if err != nil {
		return nil, err
	}
	if journal == "" {
		journal = JournalPath(real)
	}
	recs, bad, err := readJournal(journal)
	if err != nil {
		return nil, err
	}
	var stack []JournalRecord
	settle := func(r JournalRecord) {
		switch r.Action {
		case ActionApply:
			stack = append(stack, r)
		case ActionRollback:
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		}
	}
	// An intent whose completing record never came was killed between
	// its journal line and the end of the write: the write took place if
	// the file went on to be what it wrote (the next write started from
	// it, or it is the file on disk now), and counts as its action then.
	var pending *JournalRecord
	unrecorded := func(now string) {
		if pending != nil && pending.NewHash == now {
			r := *pending
			r.Action, r.Result = r.Intends, "unrecorded"
			settle(r)
		}
		pending = nil
	}
	for _, r := range recs {
		if r.Config != real && !(!filepath.IsAbs(r.Config) && filepath.Base(r.Config) == filepath.Base(real)) {
			// Records name the resolved path; older fgtops wrote the
			// path as given, which in the file's own journal is the same
			// file when its name matches.
			continue
		}
		switch r.Action {
		case ActionIntent:
			unrecorded(r.OldHash)
			p := r
			pending = &p
		case ActionApply, ActionRollback, ActionFailed:
			if k, ok := completes(r); ok && pending != nil && keyOf(*pending, pending.Intends) == k {
				pending = nil
			}
			// A failed write changed nothing: there is nothing of it
			// to undo, and it hides no apply before it.
			if r.Action != ActionFailed {
				settle(r)
			}
		}
	}
	if pending != nil {
		if cur, err := safefile.ReadFile(real, MaxConfigSize); err == nil {
			unrecorded(hashOf(cur))
		}
	}
	if len(stack) == 0 {
		if len(recs) == 0 && bad == 0 {
			// No record at all: say so, rather than speak of a journal
			// that may not even exist.
			what := "its journal " + journal + " is empty"
			if _, err := os.Lstat(journal); errors.Is(err, fs.ErrNotExist) {
				what = "there is no journal beside it (" + journal + ")"
			}
			return nil, fmt.Errorf("%w: nothing was applied to %s with fgtop here: %s", ErrNothingToRollBack, real, what)
		}
		if bad > 0 {
			return nil, fmt.Errorf("%w: the journal %s records no apply of %s still in effect that fgtop can read; %d of its line(s) cannot be read (a write torn by a crash or a full disk?), and an apply they recorded is not known: its backups (%s.fgtop-*.bak) are beside the file",
				ErrNothingToRollBack, journal, real, bad, filepath.Base(real))
		}
		return nil, fmt.Errorf("%w: the journal %s records no apply of %s still in effect", ErrNothingToRollBack, journal, real)
	}
	r := stack[len(stack)-1]
	return &r, nil
}

// Rollback restores the version before the last apply still in effect,
// byte for byte, with the same safety as Commit (atomic write, backup of
// the current version, journal record). It refuses when the file changed
// since that apply, unless forced, and when the backup is missing or does
// not hash to what was recorded.
func Rollback(req RollbackRequest) (*CommitResult, error) {
	path, cur, unlock, err := begin(req.Actor, req.Path, &req.Journal, req.Hooks)
	if err != nil {
		return nil, err
	}
	defer unlock()
	top, err := Undoable(req.Path, req.Journal)
	if err != nil {
		return nil, err
	}
	if u := req.Undoes; u != nil && (!top.Time.Equal(u.Time) || top.NewHash != u.NewHash) {
		return nil, fmt.Errorf("%w: the apply of %s by %s is the last now, not the one of %s: look at the journal again",
			ErrUndoMoved, top.Time.Format(time.RFC3339), top.Actor, u.Time.Format(time.RFC3339))
	}
	if h := hashOf(cur); h != top.NewHash && !req.Force {
		// A journal line that cannot be read may be the record that
		// explains it (a rollback of that apply, torn): said, since
		// --force would then restore the wrong version.
		unread := ""
		if _, bad, _ := readJournal(req.Journal); bad > 0 {
			unread = fmt.Sprintf(" (the journal has %d line(s) fgtop cannot read, which may be a later apply or rollback: check the backups beside the file before forcing)", bad)
		}
		// Put back by hand (cp -p from the backup, at 3 a.m.): saying only
		// that it changed would hide that nothing is left to undo.
		back := ""
		if h == top.OldHash {
			back = ": it already holds the version from before that apply (put back outside fgtop?), so there is nothing to restore"
		}
		return nil, fmt.Errorf("%w: %s is sha256 %s, not the %s the apply of %s wrote%s; --force rolls back anyway (the current file is backed up first)%s",
			ErrChangedOnDisk, req.Path, short(h), short(top.NewHash), top.Time.Format(time.RFC3339), back, unread)
	}
	// The backup's path comes from the journal: it must be one fgtop
	// made (beside the config, named as writeBackup names them), a
	// regular file, not a link someone placed in its stead, and hash to
	// what was recorded. A planted record naming any other file restores
	// nothing.
	if err := ownBackup(path, top.Backup); err != nil {
		return nil, err
	}
	prev, err := safefile.ReadFileNoFollow(top.Backup, MaxConfigSize)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("the backup of the version before that apply, %s, is gone: nothing to restore it from (the journal records its sha256 %s): %w", top.Backup, short(top.OldHash), err)
		}
		return nil, fmt.Errorf("read backup of the previous version: %w", err)
	}
	if h := hashOf(prev); h != top.OldHash {
		return nil, fmt.Errorf("backup %s is sha256 %s, not the %s recorded: refusing to restore it", top.Backup, short(h), short(top.OldHash))
	}
	creq := CommitRequest{Path: req.Path, Data: prev, Actor: req.Actor, Forced: req.Force, ReadOnlyOK: req.Force, Journal: req.Journal, Now: req.Now, Hooks: req.Hooks,
		Plan: map[string]any{"restores": top.OldHash, "backup": top.Backup, "undoes_apply_of": top.Time}}
	t := top.Time
	return commitLocked(path, cur, creq, "rollback", &t)
}

// RemoveStaleTemps removes the temp files of path that a crashed write
// left behind (".NAME.fgtop-tmp-*"): regular files only (a link is left
// alone), older than before, the start of this write. Call it under the
// lock that writers of path take, so no other writer of path has a temp
// file in progress.
func RemoveStaleTemps(path string, before time.Time) {
	dir, prefix := filepath.Dir(path), "."+filepath.Base(path)+".fgtop-tmp-"
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), prefix) || !e.Type().IsRegular() {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if st, err := os.Lstat(p); err == nil && st.Mode().IsRegular() && st.ModTime().Before(before) {
			_ = os.Remove(p)
		}
	}
}

// dropCompletedIntents returns the records without the intents that a
// record completed (same time, action, config and hashes).
func dropCompletedIntents(recs []JournalRecord) []JournalRecord {
	done := map[intentKey]bool{}
	for _, r := range recs {
		if k, ok := completes(r); ok {
			done[k] = true
		}
	}
	out := make([]JournalRecord, 0, len(recs))
	for _, r := range recs {
		if r.Action == ActionIntent && done[keyOf(r, r.Intends)] {
			continue
		}
		out = append(out, r)
	}
	return out
}

// intentKey is what an intent and the record completing it share.
type intentKey struct {
	t                         time.Time
	action, config, old, next string
}

func keyOf(r JournalRecord, action string) intentKey {
	return intentKey{r.Time.UTC(), action, r.Config, r.OldHash, r.NewHash}
}

// completes returns the key of the intent r completes: an apply or
// rollback completes the intent of its own action, a failed record that
// of the action it intended. An intent completes none.
func completes(r JournalRecord) (intentKey, bool) {
	switch r.Action {
	case ActionIntent:
		return intentKey{}, false
	case ActionFailed:
		return keyOf(r, r.Intends), true
	}
	return keyOf(r, r.Action), true
}

func hashOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// HashOf returns the sha256 hex digest Config.Hash uses.
func HashOf(b []byte) string { return hashOf(b) }

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// String names the actor for messages: "alice (ssh:203.0.113.7:51234 SHA256:…)".
func (a Actor) String() string {
	a = a.Clean()
	n := a.Name
	if n == "" {
		n = "an unnamed actor"
	}
	if a.Origin != "" {
		n += " (" + a.Origin + ")"
	}
	return strings.TrimSpace(n)
}
