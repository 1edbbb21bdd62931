//go:build linux

package scratch

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/internal/testfix"
)

// TestPermissionReal checks real permission bits: an unreadable file, an
// unsearchable kernel directory and an unlistable root, in Scan and in the
// watcher (which also sees them become readable). Run as root, where chmod
// blocks nothing, it re-runs itself as user nobody (65534); it is skipped if
// that is not possible.
func TestPermissionReal(t *testing.T) {
	if testfix.ReexecAsNobody(t) {
		return
	}
	permissionScenario(t)
}

func chmod(t *testing.T, p string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

// permissionScenario needs an unprivileged user: it checks what real
// permission bits do to Scan and to the watcher.
func permissionScenario(t *testing.T) {
	base := t.TempDir()
	r1, r2 := filepath.Join(base, "r1"), filepath.Join(base, "r2")
	mkKernel(t, r1, kid(1), "one")
	f2 := mkKernel(t, r1, kid(2), "two")
	mkKernel(t, r1, kid(3), "three")
	mkKernel(t, r2, kid(4), "four")
	d3 := filepath.Join(r1, kid(3))
	chmod(t, f2, 0)
	chmod(t, d3, 0)
	chmod(t, r2, 0o300) // searchable, not listable
	// Restore before t.TempDir's cleanup, which must be able to delete.
	t.Cleanup(func() {
		os.Chmod(f2, 0o644)
		os.Chmod(d3, 0o755)
		os.Chmod(r2, 0o755)
	})
	if _, err := os.ReadFile(f2); err == nil {
		t.Skip("permission bits do not stop this user")
	}
	roots := []Root{{Path: r1, Agent: "a"}, {Path: r2, Agent: "b"}}
	got := evStrings(Scan(context.Background(), roots, parseText, 2))
	want := []string{
		`kernel-updated 00000001 "one"`,
		`problem 00000002 {permission-denied error ` + f2 + `}`,
		`problem 00000003 {permission-denied error ` + d3 + `}`,
		`resynced [00000001,00000002,00000003]`,
		`problem {permission-denied error ` + r2 + `}`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("scan:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}

	// The watcher reports the same, and follows the fixes.
	r := startWatcher(t, roots, Options{Debounce: 10 * time.Millisecond, RootPoll: 20 * time.Millisecond}, nil)
	r.waitEvent("unlistable root", 0, func(e Event[string]) bool {
		return e.Root == r2 && e.Kind == Problem && e.Issue.Code == "permission-denied"
	})
	from := r.waitEvent("unreadable file", 0, isIssue("permission-denied", kid(2)))
	r.waitEvent("unsearchable kernel dir", 0, isIssue("permission-denied", kid(3)))
	chmod(t, f2, 0o644)
	r.waitEvent("readable file", from, isUpdate(kid(2), "two"))
	chmod(t, d3, 0o755)
	r.waitEvent("searchable kernel dir", from, isUpdate(kid(3), "three"))
	chmod(t, r2, 0o755)
	r.waitEvent("listable root", from, func(e Event[string]) bool {
		return e.Root == r2 && e.Kind == Resynced && slices.Equal(e.Present, present(kid(4)))
	})
	r.waitEvent("kernel of the listable root", from, isUpdate(kid(4), "four"))
}

// TestUnseenUnlistableRoot: a root stat finds but whose listing is refused
// (searchable, not readable) is unseen and blind, named by the operator or
// by agent.toml: no kernel under it is seen. Run as root it re-runs itself
// as nobody (chmod blocks root nothing).
func TestUnseenUnlistableRoot(t *testing.T) {
	if testfix.ReexecAsNobody(t) {
		return
	}
	base := t.TempDir()
	r := filepath.Join(base, "r")
	mkKernel(t, r, kid(1), "one")
	chmod(t, r, 0o300)
	t.Cleanup(func() { os.Chmod(r, 0o755) })
	if _, err := os.ReadDir(r); err == nil {
		t.Skip("permission bits do not stop this user")
	}
	for _, named := range []bool{true, false} {
		u := UnseenRoots([]Root{{Path: base, Agent: "ok"}, {Path: r, Agent: "b"}}, named)
		if len(u) != 1 || !u[0].Blind || u[0].Message != "scratch root "+r+" (agent b) cannot be listed: permission denied" {
			t.Errorf("named=%v: %+v", named, u)
		}
	}
}
