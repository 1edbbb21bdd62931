package scratch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/fgtop/fgtop/internal/untrusted"
	"github.com/fgtop/fgtop/model"
)

// isKernelID reports whether a scratch entry's name is a kernel id: the
// agent's other entries (<id>_tmp, <id>.img) and anything else fail.
func isKernelID(name string) bool { return untrusted.IsUUID(name) }

// Paths of a kernel below a root. Plain concatenation: root paths are
// cleaned once, and this runs 10,000 times per scan.
func kernelDir(root, kid string) string    { return root + "/" + kid }
func configDir(root, kid string) string    { return root + "/" + kid + "/config" }
func resourceRel(kid string) string        { return kid + "/config/resource.txt" }
func resourcePath(root, kid string) string { return root + "/" + resourceRel(kid) }

// isPermission reports whether err means "not allowed".
func isPermission(err error) bool {
	return errors.Is(err, fs.ErrPermission) // EACCES and EPERM
}

// isSymlinkRefusal reports whether err is how the kernel refuses to follow a
// symlink (ELOOP from O_NOFOLLOW or RESOLVE_NO_SYMLINKS; EXDEV from
// RESOLVE_BENEATH).
func isSymlinkRefusal(err error) bool {
	return errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EXDEV)
}

// isMissing reports whether err means "not there" (a missing component, or
// one that is not a directory).
func isMissing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// Within reports whether p is base or below it; both must be clean and
// absolute (or both relative to the same directory).
func Within(base, p string) bool {
	rel, err := filepath.Rel(base, p)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel))
}

// symlinkVerdict says where a symlink under a root points.
type symlinkVerdict struct {
	target  string // resolved (or, if dangling, lexical) target
	escapes bool
}

// judgeSymlink works out where the symlink at link (a path below root, as
// configured) points, and whether that is outside the root. This runs only
// on the error path, so it may stat freely. A dangling link is judged by
// its text.
func judgeSymlink(root, link string) symlinkVerdict {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		realRoot = root
	}
	realRoot, _ = filepath.Abs(realRoot)
	// The link's own directory, seen through the resolved root.
	rel, err := filepath.Rel(root, link)
	if err != nil {
		return symlinkVerdict{target: link, escapes: true}
	}
	realLink := filepath.Join(realRoot, rel)
	if t, err := filepath.EvalSymlinks(realLink); err == nil {
		t, _ = filepath.Abs(t)
		return symlinkVerdict{target: t, escapes: !Within(realRoot, t)}
	}
	text, err := os.Readlink(realLink)
	if err != nil {
		return symlinkVerdict{target: "?", escapes: true}
	}
	t := text
	if !filepath.IsAbs(t) {
		t = filepath.Join(filepath.Dir(realLink), t)
	}
	return symlinkVerdict{target: text, escapes: !Within(realRoot, filepath.Clean(t))}
}

// symlinkIssue is the Problem for a refused symlink.
func symlinkIssue(r Root, kid, link string, v symlinkVerdict) *model.Issue {
	is := &model.Issue{
		Code:   model.IssueSymlinkEscape,
		File:   link,
		Kernel: model.KernelID(kid),
		Agent:  r.Agent,
	}
	if v.escapes {
		is.Severity = model.SevError
		is.Message = fmt.Sprintf("symlink resolves outside the scratch root %s (-> %s); not followed", r.Path, v.target)
	} else {
		is.Severity = model.SevWarning
		is.Message = fmt.Sprintf("symlink inside the scratch root (-> %s); symlinks are never followed", v.target)
	}
	return is
}

// permissionIssue is the Problem for an unreadable path.
func permissionIssue(r Root, kid, path string, err error) *model.Issue {
	return &model.Issue{
		Severity: model.SevError,
		Code:     model.IssuePermission,
		Message:  fmt.Sprintf("cannot read: %v", err),
		File:     path,
		Kernel:   model.KernelID(kid),
		Agent:    r.Agent,
	}
}

// firstSymlink returns the first of the kernel's path components (kernel
// dir, config dir, resource.txt) that is a symlink, or "".
func firstSymlink(root, kid string) string {
	for _, p := range []string{kernelDir(root, kid), configDir(root, kid), resourcePath(root, kid)} {
		fi, err := os.Lstat(p)
		if err != nil {
			return ""
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return p
		}
	}
	return ""
}

// deniedPath names the path whose permissions stop the read: the first
// component that cannot be looked into.
func deniedPath(root, kid string) string {
	if _, err := os.Lstat(configDir(root, kid)); isPermission(err) {
		return kernelDir(root, kid)
	}
	if _, err := os.Lstat(resourcePath(root, kid)); isPermission(err) {
		return configDir(root, kid)
	}
	return resourcePath(root, kid)
}
