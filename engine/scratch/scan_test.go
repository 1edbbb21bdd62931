package scratch

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/fgtop/fgtop/model"
)

func TestIsKernelID(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"c41a8f2d-3e6b-47d9-a0c5-5b8e2f1d9c63", true},
		{"00000000-0000-0000-0000-000000000000", true},
		{"C41A8F2D-3E6B-47D9-A0C5-5B8E2F1D9C63", false}, // not canonical (Python writes lower case)
		{"c41a8f2d-3e6b-47d9-a0c5-5b8e2f1d9c63_tmp", false},
		{"c41a8f2d-3e6b-47d9-a0c5-5b8e2f1d9c63.img", false},
		{"c41a8f2d3e6b47d9a0c55b8e2f1d9c63", false},
		{"c41a8f2d-3e6b-47d9-a0c5-5b8e2f1d9c6g", false},
		{"c41a8f2d_3e6b-47d9-a0c5-5b8e2f1d9c63", false},
		{"", false},
		{"config", false},
	}
	for _, tt := range tests {
		if got := isKernelID(tt.name); got != tt.want {
			t.Errorf("isKernelID(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestWithin(t *testing.T) {
	tests := []struct {
		base, p string
		want    bool
	}{
		{"/a/b", "/a/b", true},
		{"/a/b", "/a/b/c", true},
		{"/a/b", "/a/bc", false},
		{"/a/b", "/a", false},
		{"/a/b", "/x/y", false},
		{"/a/b", "/a/b/../c", false},
		{"/a/b", "/a/b/..c", true},
	}
	for _, tt := range tests {
		if got := Within(tt.base, filepath.Clean(tt.p)); got != tt.want {
			t.Errorf("Within(%q, %q) = %v, want %v", tt.base, tt.p, got, tt.want)
		}
	}
}

func TestEventKindString(t *testing.T) {
	for k := KernelUpdated; k <= Problem; k++ {
		if s := k.String(); s == "invalid" || s == "" {
			t.Errorf("kind %d has no name", k)
		}
	}
	if EventKind(0).String() != "invalid" || EventKind(99).String() != "invalid" {
		t.Error("out-of-range kinds must print as invalid")
	}
}

// TestScanLayout checks what counts as a kernel and the result's order.
func TestScanLayout(t *testing.T) {
	root := t.TempDir()
	a, b, c, d, e := kid(1), kid(2), kid(3), kid(4), kid(5)
	mkKernel(t, root, c, "C")
	mkKernel(t, root, a, "A")
	mkKernel(t, root, e, "BAD")                // parses with an error
	mkdir(t, filepath.Join(root, b))           // no config/ yet
	mkdir(t, filepath.Join(root, d, "config")) // config/ but no file
	// Entries that are not kernels.
	mkdir(t, filepath.Join(root, a+"_tmp"))
	writeFile(t, filepath.Join(root, a+".img"), "x")
	mkdir(t, filepath.Join(root, "C41A8F2D-3E6B-47D9-A0C5-5B8E2F1D9C63"))
	mkdir(t, filepath.Join(root, "lost+found"))
	writeFile(t, filepath.Join(root, kid(7)), "a file named like a kernel")
	// resource.txt that is a directory: read error, reported as such.
	f := kid(8)
	mkdir(t, filepath.Join(root, f, "config", "resource.txt"))

	evs := Scan(context.Background(), []Root{{Path: root, Agent: "i-a"}}, parseText, 3)
	got := evStrings(evs)
	want := []string{
		`kernel-updated 00000001 "A"`,
		`kernel-pending 00000002`,
		`kernel-updated 00000003 "C"`,
		`kernel-pending 00000004`,
		`kernel-updated 00000005 "BAD" err=bad file`,
		`kernel-updated 00000008 "" err=read ` + filepath.Join(root, f, "config", "resource.txt") + `: not a regular file`,
		`resynced [00000001,00000002,00000003,00000004,00000005,00000008]`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("events:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	for _, e := range evs {
		if e.Root != root || e.Agent != "i-a" {
			t.Errorf("%s: root/agent = %q/%q", evString(e), e.Root, e.Agent)
		}
		if e.Kind == KernelUpdated && e.Err == nil {
			// Full scans leave ModTime zero (no fstat); see Event.
			if e.Size != int64(len(e.Value)) || !e.ModTime.IsZero() {
				t.Errorf("%s: size %d modtime %v", evString(e), e.Size, e.ModTime)
			}
			if want := filepath.Join(root, string(e.Kernel), "config", "resource.txt"); e.Path != want {
				t.Errorf("path %q, want %q", e.Path, want)
			}
		}
	}
}

// TestScanRoots covers several roots, a missing one, and a root path that
// is itself a symlink (allowed: the operator configured it).
func TestScanRoots(t *testing.T) {
	base := t.TempDir()
	r1, r2 := filepath.Join(base, "r1"), filepath.Join(base, "real2")
	mkKernel(t, r1, kid(1), "one")
	mkKernel(t, r2, kid(2), "two")
	link := filepath.Join(base, "r2")
	symlink(t, r2, link)
	roots := []Root{{Path: r1, Agent: "a1"}, {Path: filepath.Join(base, "nope"), Agent: "a0"}, {Path: link, Agent: "a2"}}
	got := evStrings(Scan(context.Background(), roots, parseText, 0))
	want := []string{
		`kernel-updated 00000001 "one"`,
		`resynced [00000001]`,
		`root-missing {scratch-root-missing error ` + filepath.Join(base, "nope") + `}`,
		`kernel-updated 00000002 "two"`,
		`resynced [00000002]`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("events:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// symlinkTree builds a root with every kind of symlink the scan must refuse,
// and returns the root and the expected events.
func symlinkTree(t *testing.T) (string, []string) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	mkKernel(t, outside, kid(99), "SECRET")
	secretDir := filepath.Join(outside, kid(99))
	secretCfg := filepath.Join(secretDir, "config")
	secretFile := filepath.Join(secretCfg, "resource.txt")

	mkKernel(t, root, kid(1), "plain")
	// 2: kernel dir -> a kernel dir outside the root.
	symlink(t, secretDir, filepath.Join(root, kid(2)))
	// 3: config/ -> outside.
	mkdir(t, filepath.Join(root, kid(3)))
	symlink(t, secretCfg, filepath.Join(root, kid(3), "config"))
	// 4: resource.txt -> outside, by a relative path.
	mkdir(t, filepath.Join(root, kid(4), "config"))
	rel, _ := filepath.Rel(filepath.Join(root, kid(4), "config"), secretFile)
	symlink(t, rel, filepath.Join(root, kid(4), "config", "resource.txt"))
	// 5: kernel dir -> kernel 1 (inside the root): refused too, as it would
	// count kernel 1 twice.
	symlink(t, filepath.Join(root, kid(1)), filepath.Join(root, kid(5)))
	// 6: resource.txt -> a file inside the root.
	mkdir(t, filepath.Join(root, kid(6), "config"))
	symlink(t, filepath.Join(root, kid(1), "config", "resource.txt"), filepath.Join(root, kid(6), "config", "resource.txt"))
	// 7: dangling link pointing outside.
	mkdir(t, filepath.Join(root, kid(7), "config"))
	symlink(t, "/nonexistent/resource.txt", filepath.Join(root, kid(7), "config", "resource.txt"))

	p := func(i int, rest string) string { return filepath.Join(root, kid(i)) + rest }
	want := []string{
		`kernel-updated 00000001 "plain"`,
		`problem 00000002 {symlink-escape error ` + p(2, "") + `}`,
		`problem 00000003 {symlink-escape error ` + p(3, "/config") + `}`,
		`problem 00000004 {symlink-escape error ` + p(4, "/config/resource.txt") + `}`,
		`problem 00000005 {symlink-escape warning ` + p(5, "") + `}`,
		`problem 00000006 {symlink-escape warning ` + p(6, "/config/resource.txt") + `}`,
		`problem 00000007 {symlink-escape error ` + p(7, "/config/resource.txt") + `}`,
		// Symlinked kernel directories are not kernels; the others are
		// kernels whose file cannot be trusted.
		`resynced [00000001,00000003,00000004,00000006,00000007]`,
	}
	return root, want
}

func TestScanSymlinks(t *testing.T) {
	for _, fallback := range []bool{false, true} {
		name := "openat2"
		if fallback {
			name = "openat-chain"
		}
		t.Run(name, func(t *testing.T) {
			if fallback && !forceOpenatChain(t) {
				t.Skip("no openat chain on this platform")
			}
			root, want := symlinkTree(t)
			evs := Scan(context.Background(), []Root{{Path: root}}, parseText, 2)
			got := evStrings(evs)
			if !slices.Equal(got, want) {
				t.Fatalf("events:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
			}
			for _, e := range evs {
				if strings.Contains(e.Value, "SECRET") {
					t.Errorf("read through a symlink: %s", evString(e))
				}
				if e.Kind == Problem && e.Issue.Kernel != e.Kernel {
					t.Errorf("issue kernel %q, event kernel %q", e.Issue.Kernel, e.Kernel)
				}
			}
		})
	}
}

// faultyTree is two roots whose scanner fails to read kernel 2's file in
// r1 (denied) and to list r2, both with EACCES.
func faultyTree(t *testing.T) (s *scanner[string], r1, r2, denied string) {
	t.Helper()
	base := t.TempDir()
	r1, r2 = filepath.Join(base, "r1"), filepath.Join(base, "r2")
	mkKernel(t, r1, kid(1), "one")
	denied = mkKernel(t, r1, kid(2), "two")
	mkKernel(t, r2, kid(3), "three")
	s = &scanner[string]{parse: parseText, workers: 2, fault: func(op faultOp, p string) error {
		switch {
		case op == faultRead && p == denied:
			return syscall.EACCES
		case op == faultList && p == r2:
			return syscall.EACCES
		}
		return nil
	}}
	return s, r1, r2, denied
}

// TestScanInjectedErrors drives the error classification with injected
// errors: the tests run as root, where chmod does not stop reads
// (TestPermissionReal covers real permission bits as an unprivileged user).
func TestScanInjectedErrors(t *testing.T) {
	s, r1, r2, denied := faultyTree(t)
	targets := []*scanTarget[string]{{root: Root{Path: r1}, path: r1}, {root: Root{Path: r2}, path: r2}}
	finished := s.stream(context.Background(), targets, nil, func(c *chunk[string], i int) {
		c.res[i] = s.readKernel(c.t.root, c.t.path, c.t.dir, c.kids[i], readOpts{})
	})
	var evs []Event[string]
	for _, tg := range targets {
		evs = tg.appendEvents(evs, finished)
		tg.close()
	}
	got := evStrings(evs)
	want := []string{
		`kernel-updated 00000001 "one"`,
		`problem 00000002 {permission-denied error ` + denied + `}`,
		`resynced [00000001,00000002]`,
		`problem {permission-denied error ` + r2 + `}`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("events:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func TestScanCancelled(t *testing.T) {
	root := t.TempDir()
	for i := range 20 {
		mkKernel(t, root, kid(i), "x")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, e := range Scan(ctx, []Root{{Path: root}}, parseText, 2) {
		if e.Kind == Resynced {
			t.Fatal("a cancelled scan must not claim a full resync")
		}
	}
}

// TestReadFileSizes checks the single-read fast path against files of
// every size around the buffer's slack, and an empty file.
func TestReadFileSizes(t *testing.T) {
	root := t.TempDir()
	for i, n := range []int{0, 1, 4096, 8191, 8192, 8193, 16384, 70000} {
		text := strings.Repeat("x", n)
		mkKernel(t, root, kid(i), text)
	}
	for _, e := range Scan(context.Background(), []Root{{Path: root}}, parseText, 1) {
		if e.Kind == KernelUpdated && (e.Err != nil || int64(len(e.Value)) != e.Size || strings.Trim(e.Value, "x") != "") {
			t.Errorf("%s: size %d err %v", e.Kernel, e.Size, e.Err)
		}
	}
}

// TestPermissionIssueNamesPath checks the issue's fields.
func TestPermissionIssueNamesPath(t *testing.T) {
	is := permissionIssue(Root{Path: "/r", Agent: "ag"}, kid(1), "/r/x", syscall.EACCES)
	if is.Code != model.IssuePermission || is.File != "/r/x" || is.Agent != "ag" || is.Kernel != model.KernelID(kid(1)) {
		t.Fatalf("issue = %+v", is)
	}
	if !strings.Contains(is.Message, "permission denied") {
		t.Errorf("message %q does not say why", is.Message)
	}
}

// TestUnlistableRootSaysWhatCounts: a root that cannot be listed says
// that kernels fgtop never saw under it are not counted. It said only that
// its kernels kept their last known figures, which, on a root unreadable
// from the start, read as if the device figures counted them.
func TestUnlistableRootSaysWhatCounts(t *testing.T) {
	ev := rootListEvent[string](Root{Path: "/r", Agent: "ag"}, "/r", &fs.PathError{Op: "open", Path: "/r", Err: syscall.EACCES})
	if ev.Issue == nil || ev.Issue.Code != model.IssuePermission {
		t.Fatalf("event %+v", ev)
	}
	for _, want := range []string{"permission denied", "others are not counted", "as root"} {
		if !strings.Contains(ev.Issue.Message, want) {
			t.Errorf("message %q lacks %q", ev.Issue.Message, want)
		}
	}
}

// TestScanChunks checks a root listed in many chunks, read by various
// numbers of workers: every kernel once, in id order, whatever the
// directory order.
func TestScanChunks(t *testing.T) {
	root := t.TempDir()
	const n = 5*listChunk + 7
	var ids []string
	for i := n; i > 0; i-- { // made in reverse order
		id := kid(i * 7919 % 100003)
		ids = append(ids, id)
		if i%5 == 0 {
			mkdir(t, filepath.Join(root, id)) // pending
		} else {
			mkKernel(t, root, id, id)
		}
		mkdir(t, filepath.Join(root, id+"_tmp"))
	}
	slices.Sort(ids)
	for _, workers := range []int{1, 2, 3, 8} {
		t.Run(fmt.Sprint(workers), func(t *testing.T) {
			evs := Scan(context.Background(), []Root{{Path: root}}, parseText, workers)
			if len(evs) != n+1 {
				t.Fatalf("%d events, want %d", len(evs), n+1)
			}
			for i, id := range ids {
				e := evs[i]
				if string(e.Kernel) != id || (e.Kind == KernelUpdated && e.Value != id) {
					t.Fatalf("event %d: %s, want kernel %s", i, evString(e), id)
				}
			}
			if last := evs[n]; last.Kind != Resynced || !slices.Equal(last.Present, present(ids...)) {
				t.Fatalf("last event %s", evString(last))
			}
		})
	}
}
