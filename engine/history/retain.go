package history

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// futureSlack is how far past now a segment's name may lie and still be
// one this recorder counts (a clock set back a little).
const futureSlack = 5 * time.Minute

// retain drops the oldest segments (never the one being written) while
// they are older than Keep or the directory is larger than MaxSize. It
// counts and drops only segments it recognises as a recorder's (ownSeg):
// a planted file, one named for a time to come or one whose size is a
// claim (sparse) never makes it delete a real segment, and it says once
// which it skipped and why.
func (r *Recorder) retain(now time.Time) {
	segs, err := listSegments(r.opts.Dir)
	if err != nil {
		return
	}
	r.dropOrphanFolds()
	own := segs[:0]
	var total int64
	for _, s := range segs {
		size, why := ownSeg(s, now)
		if why != "" {
			r.skipped(s.Path, why)
			continue
		}
		// A segment's tail counts with it (a crashed recorder's stays).
		if fi, err := os.Lstat(tailPath(s.Path)); err == nil && fi.Mode().IsRegular() {
			size += diskSize(fi)
		}
		if fi, err := os.Lstat(foldPath(s.Path)); err == nil && fi.Mode().IsRegular() {
			size += diskSize(fi)
		}
		s.Size = size
		total += size
		own = append(own, s)
	}
	segs = own
	active := ""
	if r.f != nil {
		active = r.f.Name()
	}
	for i := 0; i < len(segs)-1; i++ {
		s := segs[i]
		if s.Path == active {
			break
		}
		// A segment's content ends where the next one begins.
		old := now.Sub(segs[i+1].Start) > r.opts.Keep
		if !old && total <= r.opts.MaxSize {
			break
		}
		// The fold first: one without its segment is never read, but
		// would stay.
		if err := os.Remove(foldPath(s.Path)); err != nil && !errors.Is(err, os.ErrNotExist) {
			r.opts.Logf("history: drop %s: %v", foldPath(s.Path), err)
			break
		}
		// The tail next: a segment without its tail reads, shorter.
		if err := os.Remove(tailPath(s.Path)); err != nil && !errors.Is(err, os.ErrNotExist) {
			r.opts.Logf("history: drop %s: %v", tailPath(s.Path), err)
			break
		}
		if err := os.Remove(s.Path); err != nil {
			r.opts.Logf("history: drop %s: %v", s.Path, err)
			break
		}
		total -= s.Size
	}
}

// skipped reports, once per file, a file retention leaves alone.
func (r *Recorder) skipped(path, why string) {
	if r.warned == nil {
		r.warned = map[string]bool{}
	}
	name := filepath.Base(path)
	if r.warned[name] {
		return
	}
	r.warned[name] = true
	r.opts.Logf("history: %s in %s: %s; retention neither counts nor deletes it (fgtop did not write it: move it out of the directory)",
		name, r.opts.Dir, why)
}

// ownSeg says whether s is a segment a recorder of this directory wrote,
// as far as can be told without reading it: named for a time not to come,
// a regular file of the recorder's own user, a segment header, no larger
// than a reader reads. size is what it takes on disk (its apparent size,
// or less where it is sparse); why, when not "", says why it is not one.
func ownSeg(s segFile, now time.Time) (size int64, why string) {
	if s.Start.After(now.Add(futureSlack)) {
		return 0, fmt.Sprintf("named for %s, a time still to come", s.Start.UTC().Format("2006-01-02 15:04:05 MST"))
	}
	f, st, err := openRegular(s.Path)
	if err != nil {
		return 0, fmt.Sprintf("cannot be checked (%v)", err)
	}
	defer f.Close()
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Geteuid() {
		return 0, fmt.Sprintf("owned by uid %d, not by this recorder's (uid %d)", sys.Uid, os.Geteuid())
	}
	var h [headerSize]byte
	if _, err := io.ReadFull(f, h[:]); err != nil {
		return 0, "not a segment (shorter than a segment's header)"
	}
	if err := checkHeader(h[:]); err != nil {
		return 0, err.Error()
	}
	if st.Size() > maxSegmentFile {
		return 0, fmt.Sprintf("%s, more than the %s fgtop reads of one segment", sizeWords(st.Size()), sizeWords(maxSegmentFile))
	}
	return diskSize(st), ""
}

// diskSize is what a file takes on disk: its size, or its allocated
// blocks where fewer (a sparse file claims a size it does not use).
func diskSize(fi os.FileInfo) int64 {
	n := fi.Size()
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		n = min(n, int64(sys.Blocks)*512)
	}
	return n
}

// dirWarning says what is wrong with the modes of a directory recorded
// into ("" when nothing): records name owners, sessions and images, and
// whoever may write the directory can plant files in it.
func dirWarning(dir string) string {
	st, err := os.Stat(dir)
	if err != nil {
		return ""
	}
	m := uint32(st.Mode().Perm())
	if st.Mode()&os.ModeSticky != 0 {
		m |= 0o1000
	}
	switch {
	case m&0o002 != 0:
		return fmt.Sprintf("%s is writable by every user (mode %04o): anyone can plant files there, and read what is recorded (owners, sessions, images); chmod 700 %s", dir, m, dir)
	case m&0o020 != 0:
		return fmt.Sprintf("%s is writable by its group (mode %04o): the group can plant files there; chmod 700 %s (or 750 for a group that may read it)", dir, m, dir)
	case m&0o004 != 0:
		return fmt.Sprintf("%s is readable by every user (mode %04o): the record names owners, sessions and images; chmod 700 %s (or 750 for a group that may read it)", dir, m, dir)
	}
	return ""
}

// dropOrphanFolds removes the folds whose segment is gone: retention can
// drop a fold, then its segment, between a fold writer's rename and its
// check that the segment is still there. Such a fold is never read, and
// retention, which counts a fold with its segment, would never count or
// drop it.
func (r *Recorder) dropOrphanFolds() {
	folds, err := filepath.Glob(filepath.Join(r.opts.Dir, "seg-*"+foldSuffix))
	if err != nil {
		return
	}
	for _, f := range folds {
		seg := f[:len(f)-len(foldSuffix)] + segSuffix
		if _, err := os.Lstat(seg); !errors.Is(err, os.ErrNotExist) {
			continue
		}
		if fi, err := os.Lstat(f); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			r.opts.Logf("history: drop %s: %v", f, err)
		}
	}
}
