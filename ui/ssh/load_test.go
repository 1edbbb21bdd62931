package sshserve

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/ui/internal/fake"
)

// The load test serves many sessions while the snapshot changes ten times
// a second, and checks that no session starves and memory stays bounded.
//
//	go test -run TestLoad -v ./ui/ssh/                     # short form (CI): 6 sessions, 5 s
//	FGTOP_SSH_LOAD=1 go test -run TestLoad -v ./ui/ssh/    # the issue's: 50 sessions, 60 s
//
// FGTOP_SSH_LOAD_SESSIONS and FGTOP_SSH_LOAD_SECONDS override either form;
// FGTOP_SSH_LOAD_DEBUG=1 logs when each session's longest gap ended (a gap
// all sessions share is the process, not the server, stalling), and
// FGTOP_SSH_LOAD_HEAPPROFILE=FILE writes a heap profile at the end of the
// run, with every session still live.
// The clients (x/crypto/ssh, one output meter each) run in the test's own
// process, so the CPU and memory figures are the server's plus theirs.

// loadMarker starts the window title the console writes whenever the node
// name changes; the load snapshots carry their sequence number in the node
// name, so a client sees which snapshot a frame shows without a terminal
// model.
const loadMarker = "\x1b]2;fgtop load-"

const loadSeqDigits = 6

func loadNode(seq int) string { return fmt.Sprintf("load-%0*d", loadSeqDigits, seq) }

// loadSnapshot is the fixture node with what a busy node changes between
// scans: the name (the test's marker), every GPU's telemetry, and the
// shares of one kernel, so bars, figures and the header all redraw.
func loadSnapshot(seq int) *model.Snapshot {
	s := fake.Node(fake.Options{})
	s.Seq = uint64(seq)
	s.Node = loadNode(seq)
	s.Time = fake.T0.Add(time.Duration(seq) * 100 * time.Millisecond)
	for i := range s.Devices {
		if t := s.Devices[i].Telemetry; t != nil && t.UtilGPU.Valid {
			t.UtilGPU = model.Some(uint32((seq*7 + i*13) % 100))
			t.TempC = model.Some(uint32(40 + (seq+i)%45))
		}
	}
	if s.NumKernels() > 0 {
		k := s.Kernels()[0]
		shares := model.Allocations{}
		for slot, devs := range k.Alloc {
			shares[slot] = map[model.DeviceID]model.Dec{}
			for dev, amt := range devs {
				if slot == model.SlotCUDAShares {
					amt = model.MustDec(fmt.Sprintf("0.%02d", 10+seq%40))
				}
				shares[slot][dev] = amt
			}
		}
		k.Alloc = shares
	}
	return s
}

// meter is one client's stdout: it counts what arrives and notes each new
// snapshot the console shows, and when.
type meter struct {
	published func(seq int) time.Time

	mu         sync.Mutex
	bytes      int64
	seq        int // the latest snapshot shown
	updates    int // distinct snapshots shown
	first      time.Time
	lastUpdate time.Time
	maxGap     time.Duration // between two updates
	maxGapAt   time.Time     // when the longest gap ended
	lags       []time.Duration
	carry      []byte
}

func (m *meter) Write(p []byte) (int, error) {
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.bytes += int64(len(p))
	buf := append(m.carry, p...)
	for i := 0; ; {
		j := bytes.Index(buf[i:], []byte(loadMarker))
		if j < 0 {
			break
		}
		at := i + j + len(loadMarker)
		if at+loadSeqDigits > len(buf) {
			break // the rest arrives with the next write; the carry keeps it
		}
		if seq, err := strconv.Atoi(string(buf[at : at+loadSeqDigits])); err == nil && seq > m.seq {
			m.update(seq, now)
		}
		i = at
	}
	// Keep enough of the tail for a marker split across writes; a marker
	// seen twice is harmless (only a newer sequence counts).
	keep := min(len(buf), len(loadMarker)+loadSeqDigits)
	m.carry = append(m.carry[:0], buf[len(buf)-keep:]...)
	return len(p), nil
}

// update records a new snapshot on screen. Called with mu held.
func (m *meter) update(seq int, now time.Time) {
	if m.updates == 0 {
		m.first = now
	} else if gap := now.Sub(m.lastUpdate); gap > m.maxGap {
		m.maxGap, m.maxGapAt = gap, now
	}
	if pub := m.published(seq); !pub.IsZero() {
		m.lags = append(m.lags, now.Sub(pub))
	}
	m.seq, m.updates, m.lastUpdate = seq, m.updates+1, now
}

// startRun forgets the gaps before the run: while the sessions were
// opening, nothing changed.
func (m *meter) startRun(at time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.maxGap, m.lastUpdate, m.lags = 0, at, nil
}

type meterStats struct {
	bytes      int64
	seq        int
	updates    int
	lastUpdate time.Time
	maxGap     time.Duration
	maxGapAt   time.Time
	lags       []time.Duration
}

func (m *meter) stats() meterStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return meterStats{bytes: m.bytes, seq: m.seq, updates: m.updates, lastUpdate: m.lastUpdate, maxGap: m.maxGap, maxGapAt: m.maxGapAt,
		lags: slices.Clone(m.lags)}
}

// memSample is the process's memory at one moment.
type memSample struct {
	at         time.Duration
	heap, rss  uint64 // bytes: the heap in use, the resident set
	live       uint64 // bytes: the heap the last GC found live
	goroutines int
}

// liveHeap is the heap the last garbage collection marked live: unlike
// HeapAlloc it does not swing with garbage not yet collected, so a trend
// in it is a leak.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

func vmRSS() uint64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive number", name, v)
	}
	return n
}

func TestLoad(t *testing.T) {
	full := os.Getenv("FGTOP_SSH_LOAD") == "1"
	sessions, seconds := 6, 5
	// Bounds: a session starves when it sees nothing new for maxGap while
	// the snapshot changes every 100 ms; the end check gives every session
	// finalWithin to show the last change. The short form runs under -race
	// on a loaded CI machine, hence its slack.
	maxGap, finalWithin := 3*time.Second, 5*time.Second
	if full {
		sessions, seconds = 50, 60
		maxGap, finalWithin = 2*time.Second, 2*time.Second
	}
	sessions = envInt(t, "FGTOP_SSH_LOAD_SESSIONS", sessions)
	seconds = envInt(t, "FGTOP_SSH_LOAD_SECONDS", seconds)
	dur := time.Duration(seconds) * time.Second
	const rate = 10 // snapshots per second

	f := startServer(t, func(c *Config) {
		c.MaxSessions = sessions
		// One viewer key holds them all: the load, not the shares, is
		// under test.
		c.MaxViewerSessions, c.MaxSessionsPerKey = sessions, sessions
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		c.UI.ASCII, c.UI.Now = false, nil
	})
	var pubMu sync.Mutex
	pubTimes := map[int]time.Time{}
	published := func(seq int) time.Time {
		pubMu.Lock()
		defer pubMu.Unlock()
		return pubTimes[seq]
	}
	publish := func(seq int) {
		s := loadSnapshot(seq)
		pubMu.Lock()
		pubTimes[seq] = time.Now()
		pubMu.Unlock()
		f.pub.Publish(s)
	}
	publish(1)
	runtime.GC()
	rss0, live0 := vmRSS(), liveHeap() // the server with no session yet

	meters := make([]*meter, sessions)
	var screen *term // one session's screen, to check what a person sees
	for i := range meters {
		meters[i] = &meter{published: published}
		_, sess := f.ptySession(t, fmt.Sprintf("load%02d", i), f.viewer)
		sess.Stdout, sess.Stderr = meters[i], io.Discard
		if i == 0 {
			screen = newTerm(termW, termH)
			sess.Stdout = io.MultiWriter(meters[i], screen)
		}
		if err := sess.Shell(); err != nil {
			t.Fatal(err)
		}
	}
	waitUntil(t, "every session's first frame", func() bool {
		for _, m := range meters {
			if m.stats().updates == 0 {
				return false
			}
		}
		return true
	})
	if n := f.srv.SessionCount(); n != sessions {
		t.Fatalf("%d sessions live, want %d", n, sessions)
	}

	// The run: a writer changes the snapshot ten times a second while a
	// sampler notes memory every second.
	runtime.GC()
	start, cpu0 := time.Now(), cpuTime()
	var samples []memSample
	sample := func() {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		samples = append(samples, memSample{at: time.Since(start), heap: ms.HeapAlloc, live: liveHeap(), rss: vmRSS(), goroutines: runtime.NumGoroutine()})
	}
	sample()
	for _, m := range meters {
		m.startRun(start)
	}
	// A probe that only sleeps measures how long the whole process went
	// without CPU (the machine is shared): a gap every session shares is
	// that, not the server starving anyone.
	var stallMu sync.Mutex
	var stall time.Duration
	probeDone := make(chan struct{})
	go func() {
		const step = 10 * time.Millisecond
		prev := time.Now()
		for {
			select {
			case <-probeDone:
				return
			case <-time.After(step):
			}
			now := time.Now()
			stallMu.Lock()
			stall = max(stall, now.Sub(prev)-step)
			stallMu.Unlock()
			prev = now
		}
	}()
	tick := time.NewTicker(time.Second / rate)
	secs := time.NewTicker(time.Second)
	seq := 1
	for time.Since(start) < dur {
		select {
		case <-tick.C:
			seq++
			publish(seq)
		case <-secs.C:
			sample()
		}
	}
	tick.Stop()
	secs.Stop()
	if path := os.Getenv("FGTOP_SSH_LOAD_HEAPPROFILE"); path != "" {
		writeHeapProfile(t, path) // with every session still live
	}
	end, cpu := time.Now(), cpuTime()-cpu0
	wall := end.Sub(start)
	sample()
	close(probeDone)
	stallMu.Lock()
	processStall := stall
	stallMu.Unlock()
	// What the process as a whole lost is not the server's doing; beyond
	// it, a session must not wait longer than maxGap.
	gapBound := maxGap + processStall

	// Every session must show the last change, soon.
	last := seq
	deadline := time.Now().Add(finalWithin)
	for time.Now().Before(deadline) && slices.ContainsFunc(meters, func(m *meter) bool { return m.stats().seq < last }) {
		time.Sleep(10 * time.Millisecond)
	}
	pubLast := published(last)

	var updates, gaps, lags []time.Duration
	var updateCounts []int
	var totalBytes int64
	for i, m := range meters {
		st := m.stats()
		totalBytes += st.bytes
		updateCounts = append(updateCounts, st.updates)
		// The gap up to the end counts too: a session that stopped
		// updating just before the end starved as much as one mid-run.
		gap := st.maxGap
		if tail := end.Sub(st.lastUpdate); st.seq < last && tail > gap {
			gap = tail
		}
		gaps = append(gaps, gap)
		if os.Getenv("FGTOP_SSH_LOAD_DEBUG") != "" {
			t.Logf("session %d: longest gap %s ending at t=%s", i, st.maxGap.Round(time.Millisecond), st.maxGapAt.Sub(start).Round(time.Millisecond))
		}
		lags = append(lags, st.lags...)
		if st.seq < last {
			t.Errorf("session %d: shows snapshot %d, not the last one (%d) %s after it was published", i, st.seq, last, finalWithin)
		} else {
			updates = append(updates, st.lastUpdate.Sub(pubLast))
		}
		if gap > gapBound {
			t.Errorf("session %d starved: %s without an update (bound %s + the process's own stall %s); %d updates, %d bytes",
				i, gap.Round(time.Millisecond), maxGap, processStall.Round(time.Millisecond), st.updates, st.bytes)
		}
		if st.updates < int(dur/time.Second) { // at least one a second, on average
			t.Errorf("session %d: only %d updates in %s", i, st.updates, dur)
		}
	}
	if scr := screen.screen(); !strings.Contains(scr, loadNode(last)) {
		t.Errorf("session 0's screen does not show %s:\n%s", loadNode(last), scr)
	}

	// Memory: after warm-up (the first fifth of the run, at least 2 s) the
	// resident set and the heap must show no growth trend: the last
	// quarter's median within 25% (and 16 MiB) of the median just after
	// warm-up. Only the long form has enough samples to judge a trend.
	warm := max(dur/5, 2*time.Second)
	var after []memSample
	for _, s := range samples {
		if s.at >= warm {
			after = append(after, s)
		}
	}
	rssOf := func(s memSample) uint64 { return s.rss }
	liveOf := func(s memSample) uint64 { return s.live }
	if len(after) >= 8 {
		q := len(after) / 4
		for _, m := range []struct {
			name string
			of   func(memSample) uint64
		}{{"RSS", rssOf}, {"live heap", liveOf}} {
			early, late := medianOf(after[:q], m.of), medianOf(after[len(after)-q:], m.of)
			if late > early+early/4+16<<20 {
				t.Errorf("%s grows: median %s after warm-up, %s at the end", m.name, mib(early), mib(late))
			}
		}
	}

	// Fairness: every session gets its share of the frames.
	med := medianInt(updateCounts)
	for i, n := range updateCounts {
		if n < med/2 {
			t.Errorf("session %d got %d updates, under half the median (%d)", i, n, med)
		}
	}
	slices.Sort(updateCounts)
	slices.Sort(gaps)
	slices.Sort(lags)
	slices.Sort(updates)
	peakRSS, peakHeap, peakLive := uint64(0), uint64(0), uint64(0)
	for _, s := range samples {
		peakRSS, peakHeap, peakLive = max(peakRSS, s.rss), max(peakHeap, s.heap), max(peakLive, s.live)
	}
	t.Logf("sessions %d, %s, %d snapshots (%.1f/s), GOMAXPROCS %d, NumCPU %d", sessions, wall.Round(time.Millisecond),
		last-1, float64(last-1)/wall.Seconds(), runtime.GOMAXPROCS(0), runtime.NumCPU())
	t.Logf("updates per session: min %d, median %d, max %d; output %.1f KiB/s per session",
		updateCounts[0], updateCounts[len(updateCounts)/2], updateCounts[len(updateCounts)-1],
		float64(totalBytes)/float64(sessions)/1024/wall.Seconds())
	t.Logf("longest gap between updates: median session %s, worst session %s; the process's longest stall %s",
		gaps[len(gaps)/2].Round(time.Millisecond), gaps[len(gaps)-1].Round(time.Millisecond), processStall.Round(time.Millisecond))
	if len(lags) > 0 {
		t.Logf("publish-to-screen lag: p50 %s, p99 %s, max %s", pct(lags, 50), pct(lags, 99), lags[len(lags)-1].Round(time.Millisecond))
	}
	if len(updates) > 0 {
		t.Logf("last change on every screen within %s (median %s)", updates[len(updates)-1].Round(time.Millisecond), updates[len(updates)/2].Round(time.Millisecond))
	}
	first, final := samples[0], samples[len(samples)-1]
	if len(after) > 0 {
		perSession := func(median, base uint64) string { return mib((max(median, base) - base) / uint64(sessions)) }
		t.Logf("before any session: RSS %s, live heap %s; per session after warm-up: %s RSS, %s live heap",
			mib(rss0), mib(live0), perSession(medianOf(after, rssOf), rss0), perSession(medianOf(after, liveOf), live0))
	}
	t.Logf("RSS start %s, peak %s, end %s; live heap start %s, peak %s, end %s; heap in use peak %s; goroutines %d -> %d",
		mib(first.rss), mib(peakRSS), mib(final.rss), mib(first.live), mib(peakLive), mib(final.live), mib(peakHeap),
		first.goroutines, final.goroutines)
	t.Logf("CPU %.0f%% of one core (%.0f%% of %d); server and clients together", 100*cpu.Seconds()/wall.Seconds(),
		100*cpu.Seconds()/wall.Seconds()/float64(runtime.NumCPU()), runtime.NumCPU())
	if testing.Verbose() {
		for _, s := range samples {
			t.Logf("  t=%3.0fs rss %s live heap %s heap %s goroutines %d", s.at.Seconds(), mib(s.rss), mib(s.live), mib(s.heap), s.goroutines)
		}
	}
}

func medianOf(s []memSample, of func(memSample) uint64) uint64 {
	v := make([]uint64, len(s))
	for i, x := range s {
		v[i] = of(x)
	}
	slices.Sort(v)
	return v[len(v)/2]
}

func medianInt(v []int) int {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func pct(sorted []time.Duration, p int) time.Duration {
	return sorted[min(len(sorted)-1, len(sorted)*p/100)].Round(time.Millisecond)
}

func mib(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func writeHeapProfile(t *testing.T, path string) {
	runtime.GC()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := pprof.WriteHeapProfile(f); err != nil {
		t.Fatal(err)
	}
}
