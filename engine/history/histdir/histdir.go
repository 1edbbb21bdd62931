// Package histdir decides which history directory a command records into
// or reads from: the --history flag, else FGTOP_HISTORY, else a default,
// with "off" for none; and what a record directory's options are.
package histdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/model"
)

// Off is the --history value that records nothing.
const Off = "off"

// Env is the environment variable naming the directory when the flag
// does not.
const Env = "FGTOP_HISTORY"

// given is the flag's value, else the environment's.
func given(flag string) string {
	if flag != "" {
		return flag
	}
	return os.Getenv(Env)
}

// ForRecording resolves --history for a command that records: the flag,
// else FGTOP_HISTORY, else def where it can be made (with its parents) and
// written. note says why nothing is recorded ("" when something is, or
// when asked for off): a command that records on the side goes on without
// its record rather than failing.
func ForRecording(flag, def string) (dir, note string) {
	switch v := given(flag); v {
	case Off:
		return "", ""
	case "":
	default:
		return v, ""
	}
	if err := os.MkdirAll(def, 0o700); err != nil {
		return "", fmt.Sprintf("history off: %s cannot be made (%v); record with --history DIR or `fgtop record`", def, err)
	}
	if syscall.Access(def, 2) != nil {
		return "", fmt.Sprintf("history off: %s is not writable; record with --history DIR or `fgtop record`", def)
	}
	return def, ""
}

// OffByEnv reports whether FGTOP_HISTORY=off, not the flag, is what
// turns the record off: what to change is then the environment.
func OffByEnv(flag string) bool { return flag == "" && os.Getenv(Env) == Off }

// ForDemo resolves --history for a command on the demo node, whose files
// are in nodeDir: an explicit --history DIR (or off) is honoured;
// otherwise the demo records beside its node. FGTOP_HISTORY and the
// default directory are the real node's record: fake kernels must never
// mix into it, nor the demo take its lock from the real recorder.
func ForDemo(flag, nodeDir string) string {
	switch flag {
	case Off:
		return ""
	case "":
		return filepath.Join(nodeDir, "history")
	}
	return flag
}

// ForReading resolves --history for a command that reads: the flag, else
// FGTOP_HISTORY, else def. The directory must exist; every error is the
// caller's usage (a name to correct), in the words to say it with.
func ForReading(flag, def string) (string, error) {
	v := given(flag)
	if v == Off {
		// Said as the operator set it: FGTOP_HISTORY=off in a profile
		// reads nothing like a flag they never typed.
		if flag == "" {
			return "", errors.New(Env + "=off: there is no record to read (name the directory a recorder writes with --history DIR)")
		}
		return "", errors.New("--history off: there is no record to read")
	}
	if v == "" {
		v = def
	}
	// where is the directory as the words name it: one that came from
	// the environment says so, or an operator who never passed
	// --history cannot tell where it came from; name is what to correct.
	where, name := v, "name the directory a recorder writes with --history DIR"
	if flag == "" && os.Getenv(Env) != "" {
		where, name = fmt.Sprintf("%s (%s=%s in the environment)", v, Env, v), "correct "+Env+", or name the directory a recorder writes with --history DIR"
	}
	fi, err := os.Stat(v)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("no history at %s: no such directory: %s", where, name)
	case errors.Is(err, fs.ErrPermission):
		return "", fmt.Errorf("cannot read the history at %s: this user may not reach it (permission denied): run fgtop as the recorder's user, or as root", where)
	case err != nil:
		return "", fmt.Errorf("no history at %s (%w): %s", where, err, name)
	case !fi.IsDir():
		return "", fmt.Errorf("no history at %s: it is a file, not a directory: %s", where, name)
	}
	// A record is personal data, its directory its recorder's (mode
	// 0700): another user reached Go's "history DIR: open DIR:
	// permission denied" only once the read began.
	d, err := os.Open(v)
	if errors.Is(err, fs.ErrPermission) {
		return "", fmt.Errorf("cannot read the history at %s: this user may not read the directory (permission denied; a recorder makes it mode 0700): run fgtop as the recorder's user, or as root", where)
	}
	if err != nil {
		return "", fmt.Errorf("cannot read the history at %s: %w", where, err)
	}
	d.Close()
	return v, nil
}

// Empty reports whether rd holds no segment at all.
func Empty(rd *history.Reader) bool {
	_, _, err := rd.Span()
	return errors.Is(err, history.ErrEmpty)
}

// EmptyError says that dir holds no record yet (history.ErrEmpty), naming
// the files named like segments that the reader left out, if any, else
// where a record would come from.
func EmptyError(dir string, rd *history.Reader) error {
	var skipped []string
	for _, s := range rd.Skipped() {
		skipped = append(skipped, s.String())
	}
	if len(skipped) == 0 {
		return fmt.Errorf("%s: %w (is fgtop record, or a console with --history, writing there?)", dir, history.ErrEmpty)
	}
	return fmt.Errorf("%s: %w (skipped: %s)", dir, history.ErrEmpty, strings.Join(skipped, "; "))
}

// RecordOptions are `fgtop record`'s options from its --dir, --history
// (the same, as every other command names it), --keep and --max-size.
// Every error is the caller's usage, in the words to say it with.
func RecordOptions(dir, hist, keep, maxSize string) (history.Options, error) {
	// "off" means no record to every command that takes --history: here
	// it would have recorded into ./off.
	for _, v := range []struct{ flag, val string }{{"--history", hist}, {"--dir", dir}} {
		if v.val == Off {
			return history.Options{}, fmt.Errorf("record: %s off records nothing: name the directory to record into (stop the recorder to record nothing)", v.flag)
		}
	}
	if hist != "" {
		if dir != "" && dir != hist {
			return history.Options{}, fmt.Errorf("record: --dir %s and --history %s name two directories: give one", dir, hist)
		}
		dir = hist
	}
	o := history.Options{Dir: dir}
	if dir == "" {
		return o, errors.New("record: --dir DIR (or --history DIR) is required")
	}
	d, err := history.ParseDays(keep)
	if err != nil || d <= 0 {
		return o, fmt.Errorf("--keep %s: want a positive duration such as 7d or 36h", keep)
	}
	o.Keep = d
	n, err := model.ParseFiniteBinarySize(maxSize)
	if err != nil {
		return o, fmt.Errorf("--max-size %s: %v", maxSize, err)
	}
	size, err := n.Int64()
	if err != nil || size < 1<<20 {
		return o, fmt.Errorf("--max-size %s: want at least 1MiB", maxSize)
	}
	o.MaxSize = size
	return o, nil
}

// DemoFilesWhy is what a console says of its record where ForDemoFiles
// kept it off, and DemoFilesBadge its header's mark.
const (
	DemoFilesWhy   = "the node's files are fgtop demo's: start fgtop with --history DIR to record them"
	DemoFilesBadge = "demo's files: not recorded"
)

// ForDemoFiles is ForRecording for a node whose files are a demo node's,
// in demoDir (what fgtop demo prints, handed to another command): only a
// directory --history names, or one inside demoDir, takes the record.
// FGTOP_HISTORY and def are the host's own record, where the demo's
// made-up kernels would be read as having run on this node. note says
// why nothing is recorded and how to record anyway. demoDir "" is a real
// node's: ForRecording.
func ForDemoFiles(flag, def, demoDir string) (dir, note string) {
	if demoDir == "" {
		return ForRecording(flag, def)
	}
	v := given(flag)
	switch {
	case v == Off:
		return "", ""
	case flag != "":
		return flag, ""
	case v != "" && strings.HasPrefix(filepath.Clean(v)+string(filepath.Separator), filepath.Clean(demoDir)+string(filepath.Separator)):
		return v, ""
	}
	where := def
	if v != "" {
		where = fmt.Sprintf("%s (%s)", v, Env)
	}
	return "", fmt.Sprintf("not recording: the node's files are fgtop demo's (%s), whose made-up kernels the record in %s would take for this node's; record them anyway with --history DIR, a directory of their own", demoDir, where)
}
