package scratch

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Unseen is a scratch root whose kernels cannot be seen, and why.
type Unseen struct {
	Root Root
	// Message says which root and why, in words for the operator:
	// "scratch root /x (agent a) does not exist".
	Message string
	// Blind: kernels may be under the root without being seen. Every
	// root that exists but cannot be read as a directory is blind, and so
	// is a root the operator named that does not exist (a typo hides the
	// real root's kernels). A root from agent.toml that does not exist yet
	// is not: the agent creates it, so no kernel can be under it (though a
	// root gone from under a running agent looks the same).
	Blind bool
}

// UnseenRoots stats each root and returns those that do not exist, are
// not directories or cannot be listed, in order. named says the roots are the operator's
// (--scratch-root), not agent.toml's.
func UnseenRoots(roots []Root, named bool) []Unseen {
	var out []Unseen
	for _, r := range roots {
		fi, err := os.Stat(r.Path)
		u := Unseen{Root: r, Blind: true}
		switch {
		case err != nil && errors.Is(err, fs.ErrNotExist):
			u.Message = fmt.Sprintf("scratch root %s (agent %s) does not exist", r.Path, r.Agent)
			u.Blind = named
		case err != nil:
			u.Message = fmt.Sprintf("scratch root %s (agent %s): %v", r.Path, r.Agent, err)
		case !fi.IsDir():
			u.Message = fmt.Sprintf("scratch root %s (agent %s) is not a directory", r.Path, r.Agent)
		default:
			if err := listable(r.Path); err != nil {
				var pe *fs.PathError
				if errors.As(err, &pe) {
					err = pe.Err
				}
				u.Message = fmt.Sprintf("scratch root %s (agent %s) cannot be listed: %v", r.Path, r.Agent, err)
				break
			}
			continue
		}
		out = append(out, u)
	}
	return out
}

// listable opens dir and reads one name from it: a directory stat finds
// may still refuse its listing (no read permission), and then no kernel
// under it is seen.
func listable(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Readdirnames(1); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}
