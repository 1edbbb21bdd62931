package agentconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/fgtop/fgtop/model"
)

// DraftFormatWarning is what fgtop says wherever a file in the BEP-1044
// device-based form is shown (check, plan, the console's header and
// editor): Backend.AI main refuses it, so an agent started on it does not
// start. One sentence everywhere, so operators and scripts can match it.
const DraftFormatWarning = "BEP-1044 draft format: Backend.AI main cannot load this file"

// IsDraftFormat reports whether the file is in the BEP-1044 device-based
// form: its allocation tables say so. A file without allocation tables
// loads in main whatever it was read as, so it never is.
func (c *Config) IsDraftFormat() bool {
	return c != nil && c.AllocFormat == FormatDeviceBased && !c.FormatGuessed
}

// ParseFormat reads a --format (or demo --partition) value: "slot-based"
// (Backend.AI main's form) or "device-based" (the BEP-1044 draft); "" is
// no preference. Its error begins with the value, for the flag's name to
// go before it, and names the one meant where the value is a typo of one
// ("slotbased").
func ParseFormat(s string) (Format, error) {
	switch Format(s) {
	case "":
		return "", nil
	case FormatSlotBased, FormatDeviceBased:
		return Format(s), nil
	}
	near := ""
	if n := model.Closest(s, []string{string(FormatSlotBased), string(FormatDeviceBased)}); n != "" {
		near = "did you mean " + n + "? "
	}
	return "", fmt.Errorf("%q: %swant slot-based (Backend.AI main's form) or device-based (the BEP-1044 draft, which main cannot load)", s, near)
}

// ErrWouldNotLoad is wrapped when fgtop refuses to write a file that would
// break the agent's load rules: the agent would not start on it.
var ErrWouldNotLoad = errors.New("the file would not load")

// ValidateRendered is the one check every file fgtop is about to write
// goes through: the plan's rendering (partition.Build) and Commit, before
// anything touches the disk. raw is read back with the format it was
// rendered in (a file without allocation tables does not say), and the
// agent's load rules are applied. It returns the file as it would load,
// nil with err when it would not load at all, and every rule it breaks.
//
// Stricter whole-file checks (main's full schema) belong here, so that no
// write path can skip them.
func ValidateRendered(path string, raw []byte, format Format) (*Config, []Problem, error) {
	c, err := ParseAssuming(path, raw, format)
	if c == nil {
		return nil, nil, err
	}
	return c, c.Problems, nil
}

// ResolvePath is the one name fgtop gives a config file: absolute, with
// every symlink resolved. The journal, the backups and the draft record
// are keyed on it, so that `--config rel/agent.toml`, `--config
// /abs/agent.toml` and a link to either are the same file. When the file
// cannot be resolved (it does not exist) the absolute path is returned
// with the error.
func ResolvePath(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path), fmt.Errorf("resolve agent config path: %w", err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return abs, &PathError{Path: abs, Err: err}
	}
	return real, nil
}

// PathError is a config path that cannot be resolved, in words an
// operator reads (not lstat's or EvalSymlinks'); Err stays reachable
// (errors.Is(err, fs.ErrNotExist)).
type PathError struct {
	Path string
	Err  error
}

func (e *PathError) Error() string {
	var pe *fs.PathError
	switch {
	case errors.Is(e.Err, fs.ErrNotExist):
		return "no such file: " + e.Path
	case errors.Is(e.Err, fs.ErrPermission):
		return "permission denied: " + e.Path + " (or a directory above it)"
	case strings.Contains(e.Err.Error(), "too many links"):
		return e.Path + ": a loop of symbolic links"
	case errors.As(e.Err, &pe):
		return e.Path + ": " + pe.Err.Error()
	}
	return e.Path + ": " + e.Err.Error()
}

func (e *PathError) Unwrap() error { return e.Err }
