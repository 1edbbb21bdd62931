package procmap

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/internal/testfix"
)

const (
	idA = "0b7e4d1a9c2f3e4d5c6b7a8f9e0d1c2b3a4f5e6d7c8b9a0f1e2d3c4b5a6f7e8d"
	idB = "f1e2d3c4b5a6f7e8d9c0b1a2f3e4d5c6b7a8f9e0d1c2b3a4f5e6d7c8b9a0f1e2"
)

func TestParseCgroup(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"v2 docker systemd driver", "0::/system.slice/docker-" + idA + ".scope\n", idA},
		{"v2 docker cgroupfs driver", "0::/docker/" + idA + "\n", idA},
		{"v2 containerd kubelet systemd", "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1b2c3d4e_5f60_7182_93a4_b5c6d7e8f901.slice/cri-containerd-" + idA + ".scope\n", idA},
		{"v1 containerd kubelet cgroupfs", "12:memory:/kubepods/burstable/pod1b2c3d4e-5f60-7182-93a4-b5c6d7e8f901/" + idA + "\n11:cpu,cpuacct:/kubepods/burstable/pod1b2c3d4e-5f60-7182-93a4-b5c6d7e8f901/" + idA + "\n", idA},
		{"v1 docker", "12:pids:/docker/" + idA + "\n11:devices:/docker/" + idA + "\n1:name=systemd:/docker/" + idA + "\n", idA},
		{"v1 docker systemd driver", "4:devices:/system.slice/docker-" + idA + ".scope\n1:name=systemd:/system.slice/docker-" + idA + ".scope\n0::/system.slice/docker-" + idA + ".scope\n", idA},
		{"crio", "0::/kubepods.slice/kubepods-pod1.slice/crio-" + idA + ".scope\n", idA},
		{"upper case", "0::/docker/" + strings.ToUpper(idA) + "\n", idA},
		{"nested: outermost wins", "0::/docker/" + idA + "/docker/" + idB + "\n", idA},
		{"init.scope under the container", "0::/system.slice/docker-" + idA + ".scope/init.scope\n", idA},
		{"first line with an id wins", "1:name=systemd:/user.slice\n0::/docker/" + idB + "\n", idB},
		{"host session", "0::/user.slice/user-1000.slice/session-3.scope\n", ""},
		{"host service", "12:memory:/system.slice/nvidia-persistenced.service\n0::/system.slice/nvidia-persistenced.service\n", ""},
		{"root", "0::/\n", ""},
		{"63 hex", "0::/docker/" + idA[:63] + "\n", ""},
		{"65 hex", "0::/docker/" + idA + "0\n", ""},
		{"not hex", "0::/docker/" + strings.Repeat("g", 64) + "\n", ""},
		{"scope without dash", "0::/docker" + idA + ".scope\n", ""},
		{"no colons", idA + "\n", ""},
		{"no newline at end", "0::/docker/" + idA, idA},
		{"empty", "", ""},
		{"path with colon", "0::/a:b/docker/" + idA + "\n", idA},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ParseCgroup([]byte(c.in)); got != c.want {
				t.Errorf("ParseCgroup(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func FuzzParseCgroup(f *testing.F) {
	f.Add([]byte("0::/system.slice/docker-" + idA + ".scope\n"))
	f.Add([]byte("12:memory:/kubepods/burstable/pod1/" + idA + "\n"))
	f.Add([]byte("0::/\n"))
	f.Add([]byte(":::\n::"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		id := ParseCgroup(raw)
		if id == "" {
			return
		}
		if len(id) != 64 || strings.Trim(id, "0123456789abcdef") != "" {
			t.Fatalf("not a container id: %q", id)
		}
		if !strings.Contains(strings.ToLower(string(raw)), id) {
			t.Fatalf("%q is not in the input", id)
		}
	})
}

func TestParseStat(t *testing.T) {
	cases := []struct {
		in   string
		comm string
		want uint64
		err  bool
	}{
		{"1 (a b) c) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 12345 0 0", "a b) c", 12345, false},
		{"4242 (python3) S 1 4242 4242 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 360000 100 10", "python3", 360000, false},
		{"1 (x) S 1 1", "", 0, true},
		{"no paren", "", 0, true},
		{") 1 (x", "", 0, true},
		{"1 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 -5 0 0", "", 0, true},
		{"1 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99999999999999999 0 0", "", 0, true},
	}
	for _, c := range cases {
		got, err := ParseStat([]byte(c.in))
		if (err != nil) != c.err || got.StartTicks != c.want || got.Comm != c.comm {
			t.Errorf("%q: %+v, %v", c.in, got, err)
		}
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte("4242 (python3 (x) y) S 1 4242 4242 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 360000 100 10"))
	f.Add([]byte("1 (init) S"))
	f.Add([]byte(")("))
	f.Fuzz(func(t *testing.T, raw []byte) {
		st, err := ParseStat(raw)
		if err == nil && st.StartTicks > maxTicks {
			t.Fatalf("accepted %d ticks", st.StartTicks)
		}
	})
}

func TestParseUptime(t *testing.T) {
	cases := []struct {
		in   string
		want uint64
		err  bool
	}{
		{"12345.67 54321.00\n", 1234567, false},
		{"10.5 1.0", 1050, false},
		{"10 1", 1000, false},
		{"10.999 1", 1099, false},
		{"", 0, true},
		{"-1.00 0", 0, true},
		{"1.x 0", 0, true},
		{"99999999999999999999 0", 0, true},
	}
	for _, c := range cases {
		got, err := ParseUptime([]byte(c.in))
		if (err != nil) != c.err || got != c.want {
			t.Errorf("%q: %d, %v", c.in, got, err)
		}
	}
}

func FuzzParseUptime(f *testing.F) {
	f.Add([]byte("12345.67 54321.00\n"))
	f.Add([]byte("1.999999 0"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if v, err := ParseUptime(raw); err == nil && v > maxTicks+ClockTicks {
			t.Fatalf("accepted %d ticks", v)
		}
	})
}

// fakeProc is a fake /proc tree in a temp dir.
type fakeProc struct {
	t    *testing.T
	root string
}

func newFakeProc(t *testing.T) *fakeProc {
	t.Helper()
	return &fakeProc{t: t, root: t.TempDir()}
}

func (f *fakeProc) write(rel, content string) {
	f.t.Helper()
	testfix.WriteFile(f.t, f.root, rel, content)
}

func statLine(pid int, comm string, start uint64) string {
	return fmt.Sprintf("%d (%s) S 1 %d %d 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 %d 100 10\n", pid, comm, pid, pid, start)
}

// proc writes one process: its stat and its cgroup.
func (f *fakeProc) proc(pid int, comm string, start uint64, cgroup string) {
	f.write(fmt.Sprintf("%d/stat", pid), statLine(pid, comm, start))
	f.write(fmt.Sprintf("%d/cgroup", pid), cgroup)
}

func (f *fakeProc) uptime(ticks uint64) {
	f.write("uptime", fmt.Sprintf("%d.%02d 1.00\n", ticks/100, ticks%100))
}

// TestResolve covers each runtime's cgroup form on a fake /proc, a host
// process, a PID gone and a PID reused.
func TestResolve(t *testing.T) {
	f := newFakeProc(t)
	f.uptime(500_000)
	f.proc(100, "python3", 1000, "0::/system.slice/docker-"+idA+".scope\n")                              // v2, docker (systemd)
	f.proc(101, "train", 2000, "12:memory:/docker/"+idB+"\n1:name=systemd:/docker/"+idB+"\n")            // v1, docker (cgroupfs)
	f.proc(102, "triton", 3000, "0::/kubepods.slice/kubepods-pod1.slice/cri-containerd-"+idA+".scope\n") // v2, containerd
	f.proc(103, "Xorg", 50, "0::/system.slice/display-manager.service\n")                                // host
	f.proc(104, "late", 600_000, "0::/docker/"+idB+"\n")                                                 // started after the listing
	f.write("105/stat", "garbage")
	r := NewResolver(f.root)
	m := r.Mark()
	if !m.OK || m.Ticks != 500_000 {
		t.Fatalf("mark %+v", m)
	}
	want := []Info{
		{PID: 100, Status: Live, Start: 1000, Comm: "python3", Container: idA},
		{PID: 101, Status: Live, Start: 2000, Comm: "train", Container: idB},
		{PID: 102, Status: Live, Start: 3000, Comm: "triton", Container: idA},
		{PID: 103, Status: Live, Start: 50, Comm: "Xorg"},
		{PID: 104, Status: Reused, Start: 600_000},
		{PID: 105, Status: Unreadable, Err: "malformed stat: no command name"},
		{PID: 106, Status: Gone},
	}
	for _, w := range want {
		if got := r.Resolve(w.PID, m); got != w {
			t.Errorf("pid %d:\n got %+v\nwant %+v", w.PID, got, w)
		}
	}
}

// TestResolveAcrossPolls: a PID that exits between two polls is gone; one
// reused by a process in another container is never answered from the
// cache of the first.
func TestResolveAcrossPolls(t *testing.T) {
	f := newFakeProc(t)
	f.uptime(10_000)
	f.proc(200, "python3", 1000, "0::/docker/"+idA+"\n")
	f.proc(201, "python3", 1100, "0::/docker/"+idA+"\n")
	r := NewResolver(f.root)
	m := r.Mark()
	if got := r.Resolve(200, m); got.Container != idA || got.Status != Live {
		t.Fatalf("first poll: %+v", got)
	}
	r.Resolve(201, m)
	r.Sweep()

	// Between polls: 200 exits; 201 exits and its PID goes to a process of
	// another container, which started before the next listing.
	if err := os.RemoveAll(filepath.Join(f.root, "200")); err != nil {
		t.Fatal(err)
	}
	f.proc(201, "bash", 9000, "0::/docker/"+idB+"\n")
	m = r.Mark()
	if got := r.Resolve(200, m); got.Status != Gone || got.Container != "" {
		t.Errorf("gone: %+v", got)
	}
	if got := r.Resolve(201, m); got.Status != Live || got.Container != idB || got.Start != 9000 || got.Comm != "bash" {
		t.Errorf("reused before the listing: the new process is the listed one: %+v", got)
	}
	r.Sweep()

	// The PID is reused after the listing was taken: not credited.
	f.proc(201, "evil", 10_500, "0::/docker/"+idA+"\n")
	if got := r.Resolve(201, m); got.Status != Reused || got.Container != "" {
		t.Errorf("reused after the listing: %+v", got)
	}
}

// TestResolveReusedMidRead: the PID changes hands between the stat read
// and the cgroup read; the second stat read catches it.
func TestResolveReusedMidRead(t *testing.T) {
	f := newFakeProc(t)
	f.uptime(10_000)
	f.proc(300, "python3", 1000, "0::/docker/"+idA+"\n")
	r := NewResolver(f.root)
	// The resolver reads stat, then cgroup, then stat again: the process
	// is replaced right after the cgroup read.
	swapped := false
	r.afterCgroup = func() {
		if !swapped {
			swapped = true
			f.proc(300, "other", 2000, "0::/docker/"+idB+"\n")
		}
	}
	if got := r.Resolve(300, r.Mark()); got.Status != Reused || got.Container != "" {
		t.Errorf("reused mid-read: %+v", got)
	}
	// The next poll sees the new process as itself.
	r.afterCgroup = nil
	if got := r.Resolve(300, r.Mark()); got.Status != Live || got.Container != idB {
		t.Errorf("after: %+v", got)
	}
}

func TestResolveThisProcess(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here")
	}
	r := NewResolver("")
	got := r.Resolve(uint32(os.Getpid()), r.Mark())
	if got.Status != Live || got.Start == 0 || got.Comm == "" {
		t.Fatalf("this process: %+v", got)
	}
}

// TestMarkFromClock: on the host's /proc the mark is CLOCK_BOOTTIME in
// ticks, which is what /proc/uptime says (read before and after it),
// read afresh in each round and carried on by the monotonic clock within
// one, and it reads no file (no allocation: the file's path and parse
// allocate).
func TestMarkFromClock(t *testing.T) {
	if _, err := os.Stat("/proc/uptime"); err != nil {
		t.Skip("no /proc here")
	}
	fromFile := func() uint64 {
		raw, err := os.ReadFile("/proc/uptime")
		if err != nil {
			t.Fatal(err)
		}
		v, err := ParseUptime(raw)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	r := NewResolver("")
	for i := range 50 {
		if i%2 == 0 {
			r.Sweep() // a new round reads the clock; within one it is carried on
		}
		before := fromFile()
		m := r.Mark()
		after := fromFile()
		if !m.OK || m.Ticks < before || m.Ticks > after {
			t.Fatalf("mark %+v outside /proc/uptime's %d..%d", m, before, after)
		}
	}
	if n := testing.AllocsPerRun(100, func() { r.Mark() }); n != 0 {
		t.Errorf("Mark on /proc allocates %v times: it reads the file", n)
	}
	// Another root is still read (a fake tree's uptime is what counts).
	f := newFakeProc(t)
	f.uptime(123)
	if m := NewResolver(f.root).Mark(); !m.OK || m.Ticks != 123 {
		t.Errorf("fake root's mark %+v, want its uptime 123", m)
	}
}
