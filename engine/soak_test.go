package engine_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/enginetest"
	"github.com/fgtop/fgtop/engine/scratch"
	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/themes"
	uiconsole "github.com/fgtop/fgtop/ui/console"
)

// soakParams size a soak run. The writer process gets them as JSON.
type soakParams struct {
	Root     string        `json:"root"`
	Kernels  int           `json:"kernels"`
	Rate     int           `json:"rate"` // file operations per second
	Duration time.Duration `json:"duration"`
	Seed     uint64        `json:"seed"`
}

// writerResult is what the writer process reports on its last line.
type writerResult struct {
	Ops      int     `json:"ops"`
	Creates  int     `json:"creates"`
	Rewrites int     `json:"rewrites"`
	Torn     int     `json:"torn"`
	Deletes  int     `json:"deletes"`
	Errors   int     `json:"errors"`
	Seconds  float64 `json:"seconds"`
	Live     int     `json:"live"`
}

const writerEnv = "FGTOP_SOAK_WRITER"

// TestSoak churns a real scratch root from a separate writer process
// (kernels created, rewritten in place, atomically and torn, deleted) while
// the live engine follows it and a console program renders every snapshot
// it gets. In the middle the engine is stalled until the inotify queue
// overflows for real, and a kernel is created while events are being
// dropped. Afterwards the live snapshot must equal a full re-scan exactly,
// the console must show it, and no goroutine or file descriptor may be
// left behind.
//
// Short form (CI): 300 kernels, 200 operations/s for 5 s. Long form
// (FGTOP_SOAK_LONG=1): 2,000 kernels, 1,000 operations/s for 60 s.
func TestSoak(t *testing.T) {
	p := soakParams{Kernels: 300, Rate: 200, Duration: 5 * time.Second, Seed: uint64(time.Now().UnixNano())}
	if os.Getenv("FGTOP_SOAK_LONG") == "1" {
		p.Kernels, p.Rate, p.Duration = 2000, 1000, 60*time.Second
	}
	if s := os.Getenv("FGTOP_SOAK_SEED"); s != "" {
		p.Seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("soak: %d kernels, %d ops/s for %v, seed %d (FGTOP_SOAK_SEED)", p.Kernels, p.Rate, p.Duration, p.Seed)
	queueLimit := inotifyQueueLimit(t)

	base := t.TempDir()
	p.Root = filepath.Join(base, "scratches")
	files := enginetest.NewFiles(t)
	rng := rand.New(rand.NewPCG(p.Seed, 0))
	for i := range p.Kernels {
		kid := enginetest.KernelID(i)
		enginetest.MustWriteKernel(t, p.Root, kid, files.Random(p.Root, kid, enginetest.MockDevices, rng))
	}
	// A kernel of the test's own: the overflow burst happens in its config/.
	ovf := enginetest.KernelID(0x7f000000)
	ovfPath := enginetest.MustWriteKernel(t, p.Root, ovf, files.Resource(p.Root, ovf, []enginetest.Share{{Dev: enginetest.MockDevices[0], Amount: model.MustDec("0.1")}}))
	src := enginetest.MockSource(t)
	defer src.Close()

	runtime.GC()
	goroutinesBefore := runtime.NumGoroutine()
	fdsBefore, err := enginetest.OpenFDs()
	if err != nil {
		t.Skipf("cannot count file descriptors: %v", err)
	}
	heap := startHeapSampler()

	var g stallGate
	opts := engine.Options{
		Roots:     []scratch.Root{{Path: p.Root, Agent: "i-soak"}},
		Inventory: src,
		Node:      "soak-node",
		Clock:     g.now,
	}
	start := time.Now()
	live := enginetest.Start(t, opts)
	t.Logf("initial scan of %d kernels ready after %v", p.Kernels+1, time.Since(start).Round(time.Millisecond))

	subCtx, stopSub := context.WithCancel(context.Background())
	con := runConsole(subCtx, live.Eng.Subscribe(subCtx), 160, 48)

	// The writer process.
	params, _ := json.Marshal(p)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithTimeout(context.Background(), p.Duration+2*time.Minute)
	defer wcancel()
	cmd := exec.CommandContext(wctx, exe, "-test.run=^TestSoakWriter$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), writerEnv+"="+string(params))
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	writerDone := make(chan error, 1)
	go func() { writerDone <- cmd.Wait() }()

	// Mid-run: stall the engine, overflow the inotify queue, create a
	// kernel whose events are dropped, and let the engine go again.
	time.Sleep(p.Duration / 2)
	overflowAt := time.Now()
	madeDuring := enginetest.KernelID(0x7f000001)
	func() {
		g.stall()
		defer g.release()
		select {
		case <-g.blocked:
		case <-time.After(10 * time.Second):
			t.Fatal("the engine never asked the clock while stalled")
		}
		// Changes a debounce apart fill the engine's event channel, so the
		// watcher blocks and stops draining inotify.
		for i := range 24 {
			if err := os.WriteFile(ovfPath, files.Resource(p.Root, ovf, []enginetest.Share{{Dev: enginetest.MockDevices[i%4], Amount: model.MustDec("0.1")}}), 0o644); err != nil {
				t.Fatal(err)
			}
			time.Sleep(30 * time.Millisecond)
		}
		// Events on two files in turn (inotify merges an event only with an
		// identical one queued just before it): three queues' worth.
		pair := [2]string{filepath.Join(filepath.Dir(ovfPath), "x0"), filepath.Join(filepath.Dir(ovfPath), "x1")}
		for _, f := range pair {
			if err := os.WriteFile(f, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 3 * queueLimit {
			if err := os.Chmod(pair[i%2], os.FileMode(0o600+i%2)); err != nil {
				t.Fatal(err)
			}
		}
		enginetest.MustWriteKernel(t, p.Root, madeDuring, files.Resource(p.Root, madeDuring, []enginetest.Share{{Dev: enginetest.MockDevices[3], Amount: model.MustDec("0.3")}}))
	}()
	overflowSnap := live.Wait(t, "overflow reported and the kernel made during it found", 60*time.Second, func(s *model.Snapshot) error {
		if enginetest.FindIssue(s, model.IssueWatch, func(i model.Issue) bool { return strings.Contains(i.Message, "overflow") }) == nil {
			return fmt.Errorf("no overflow issue")
		}
		if k := s.Kernel(model.KernelID(madeDuring)); k == nil || k.State != model.KernelOK {
			return fmt.Errorf("kernel made during the overflow not found: %+v", k)
		}
		return nil
	})
	overflowRecovery := time.Since(overflowAt)

	var res writerResult
	select {
	case err := <-writerDone:
		if err != nil {
			t.Fatalf("writer: %v\n%s", err, out.String())
		}
	case <-wctx.Done():
		t.Fatalf("writer did not finish\n%s", out.String())
	}
	writerEnd := time.Now()
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	found := false
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "SOAK-WRITER "); ok {
			found = json.Unmarshal([]byte(line), &res) == nil
		}
	}
	if !found {
		t.Fatalf("no result from the writer:\n%s", out.String())
	}
	// A loaded machine slows the writer down; a quarter of the target is
	// still a churn worth the name.
	if target := p.Rate * int(p.Duration/time.Second); res.Errors > 0 || res.Ops < target/4 {
		t.Errorf("writer: %+v (wanted up to %d operations, at least %d, without errors)", res, target, target/4)
	}

	// Convergence: the live account equals a full re-scan, exactly.
	var final *model.Snapshot
	final = live.Wait(t, "live snapshot equals a full re-scan", 60*time.Second, func(s *model.Snapshot) error {
		return live.Converged(s)
	})
	converge := time.Since(writerEnd)
	if got, want := final.NumKernels(), res.Live+2; got != want {
		t.Errorf("live kernels %d, the writer left %d (+2 of the test's)", got, want)
	}
	// The console shows the converged state.
	wantHeader := fmt.Sprintf("%d kernels", final.NumKernels())
	frame := con.waitFrame(t, 20*time.Second, func(f string) bool { return strings.Contains(f, wantHeader) && strings.Contains(f, "soak-node") })
	stopSub()
	con.wait(t)
	frames, changed := con.frames.Load(), con.changed.Load()
	if changed < 5 {
		t.Errorf("the console rendered %d frames, %d different, during the churn", frames, changed)
	}
	if !strings.Contains(frame, wantHeader) {
		t.Errorf("final frame:\n%s", frame)
	}

	live.Stop(t)
	heapPeak := heap.stop()
	gAfter, fdAfter := enginetest.Settle(t, goroutinesBefore, fdsBefore, 10*time.Second)
	t.Logf("SOAK FIGURES: kernels %d initial, %d at the end; writer: %d ops in %.1fs (%.0f ops/s: %d creates, %d rewrites (%d torn), %d deletes); "+
		"snapshots published %d, console frames %d (%d different); overflow recovered in %v (seq %d); converged %v after the writer stopped; "+
		"goroutines %d before, %d after; fds %d before, %d after; peak heap %.1f MiB (sampled), peak RSS %s",
		p.Kernels+1, final.NumKernels(), res.Ops, res.Seconds, float64(res.Ops)/res.Seconds, res.Creates, res.Rewrites, res.Torn, res.Deletes,
		final.Seq, frames, changed, overflowRecovery.Round(time.Millisecond), overflowSnap.Seq, converge.Round(time.Millisecond),
		goroutinesBefore, gAfter, fdsBefore, fdAfter, float64(heapPeak)/(1<<20), peakRSS())
}

// TestSoakWriter is TestSoak's writer process; it does nothing unless
// started by TestSoak.
func TestSoakWriter(t *testing.T) {
	spec := os.Getenv(writerEnv)
	if spec == "" {
		t.Skip("the soak's writer process, started by TestSoak")
	}
	var p soakParams
	if err := json.Unmarshal([]byte(spec), &p); err != nil {
		t.Fatal(err)
	}
	files := enginetest.NewFiles(t)
	rng := rand.New(rand.NewPCG(p.Seed, 1))
	live := make([]string, 0, 2*p.Kernels)
	for i := range p.Kernels {
		live = append(live, enginetest.KernelID(i))
	}
	next := p.Kernels
	var res writerResult
	fail := func(err error) {
		if err != nil {
			res.Errors++
			t.Log(err)
		}
	}
	write := func(kid string, data []byte) {
		dir := filepath.Join(p.Root, kid, "config")
		path := filepath.Join(dir, "resource.txt")
		switch r := rng.IntN(10); {
		case r < 4: // in place, as the agent does
			fail(os.WriteFile(path, data, 0o644))
		case r < 8: // atomically
			tmp := filepath.Join(dir, ".resource.txt.tmp")
			fail(os.WriteFile(tmp, data, 0o644))
			fail(os.Rename(tmp, path))
		default: // torn: half now, the whole file a moment later
			res.Torn++
			fail(os.WriteFile(path, data[:len(data)/2], 0o644))
			time.Sleep(time.Duration(rng.IntN(3)) * time.Millisecond)
			fail(os.WriteFile(path, data, 0o644))
		}
	}
	interval := time.Second / time.Duration(p.Rate)
	start := time.Now()
	for i := 0; ; i++ {
		// Up to Rate operations a second, for Duration: a writer slowed
		// down (the race detector, a loaded machine) does fewer.
		due := start.Add(time.Duration(i) * interval)
		if due.Sub(start) >= p.Duration || time.Since(start) >= p.Duration {
			break
		}
		if d := time.Until(due); d > 0 {
			time.Sleep(d)
		}
		res.Ops++
		r := rng.Float64()
		switch {
		case len(live) > 0 && r < 0.6 || len(live) > 3*p.Kernels/2 && r < 0.8:
			res.Rewrites++
			kid := live[rng.IntN(len(live))]
			write(kid, files.Random(p.Root, kid, enginetest.MockDevices, rng))
		case r < 0.8 || len(live) < p.Kernels/2:
			res.Creates++
			kid := enginetest.KernelID(next)
			next++
			fail(os.MkdirAll(filepath.Join(p.Root, kid, "config"), 0o755))
			write(kid, files.Random(p.Root, kid, enginetest.MockDevices, rng))
			live = append(live, kid)
		default:
			res.Deletes++
			j := rng.IntN(len(live))
			fail(os.RemoveAll(filepath.Join(p.Root, live[j])))
			live[j] = live[len(live)-1]
			live = live[:len(live)-1]
		}
	}
	res.Seconds = time.Since(start).Seconds()
	res.Live = len(live)
	b, _ := json.Marshal(res)
	fmt.Printf("SOAK-WRITER %s\n", b)
}

// inotifyQueueLimit reads fs.inotify.max_queued_events, skipping the test
// where the queue is too large to overflow quickly.
func inotifyQueueLimit(t *testing.T) int {
	b, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events")
	if err != nil {
		t.Skipf("no inotify queue limit to read: %v", err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n > 1<<17 {
		t.Skipf("fs.inotify.max_queued_events %q: too large to overflow quickly", strings.TrimSpace(string(b)))
	}
	return n
}

// stallGate is the engine's clock: normally time.Now, but while stalled it
// blocks the engine's state goroutine (which reads the clock for every
// change), as a stuck engine would be.
type stallGate struct {
	mu      sync.Mutex
	gate    chan struct{}
	blocked chan struct{}
}

func (g *stallGate) now() time.Time {
	g.mu.Lock()
	gate, blocked := g.gate, g.blocked
	g.mu.Unlock()
	if gate != nil {
		select {
		case blocked <- struct{}{}:
		default:
		}
		<-gate
	}
	return time.Now()
}

func (g *stallGate) stall() {
	g.mu.Lock()
	g.gate, g.blocked = make(chan struct{}), make(chan struct{}, 1)
	g.mu.Unlock()
}

func (g *stallGate) release() {
	g.mu.Lock()
	close(g.gate)
	g.gate = nil
	g.mu.Unlock()
}

// console drives a ui program the way Bubble Tea does, without a
// terminal: commands run on their own goroutines, their messages come back
// to one loop that calls Update and then View (the frame the renderer
// would draw).
type console struct {
	m       tea.Model
	msgs    chan tea.Msg
	ctx     context.Context
	frames  atomic.Int64
	changed atomic.Int64
	last    atomic.Pointer[string]
	done    chan struct{}
}

func runConsole(ctx context.Context, sub <-chan *model.Snapshot, w, h int) *console {
	c := &console{
		m:    uiconsole.New(sub, uiconsole.Options{Theme: themes.MustBuiltin(themes.Dark)}),
		msgs: make(chan tea.Msg, 64), ctx: ctx, done: make(chan struct{}),
	}
	go c.loop(w, h)
	return c
}

func (c *console) exec(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	go func() {
		msg := cmd()
		if msg == nil {
			return
		}
		select {
		case c.msgs <- msg:
		case <-c.ctx.Done():
		}
	}()
}

func (c *console) loop(w, h int) {
	defer close(c.done)
	c.exec(c.m.Init())
	c.update(tea.WindowSizeMsg{Width: w, Height: h})
	for {
		select {
		case <-c.ctx.Done():
			return
		case msg := <-c.msgs:
			if b, ok := msg.(tea.BatchMsg); ok {
				for _, cmd := range b {
					c.exec(cmd)
				}
				continue
			}
			c.update(msg)
		}
	}
}

func (c *console) update(msg tea.Msg) {
	m, cmd := c.m.Update(msg)
	c.m = m
	c.exec(cmd)
	f := ansi.Strip(c.m.View().Content)
	c.frames.Add(1)
	if prev := c.last.Load(); prev == nil || *prev != f {
		c.changed.Add(1)
		c.last.Store(&f)
	}
}

// waitFrame waits for a rendered frame that ok accepts.
func (c *console) waitFrame(t *testing.T, d time.Duration, ok func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		if f := c.last.Load(); f != nil && ok(*f) {
			return *f
		}
		if time.Now().After(deadline) {
			f := "(none)"
			if p := c.last.Load(); p != nil {
				f = *p
			}
			t.Fatalf("the console never showed the expected frame; last:\n%s", f)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (c *console) wait(t *testing.T) {
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		t.Fatal("console loop did not stop")
	}
}

// heapSampler records the largest live heap seen (sampled every 100 ms).
type heapSampler struct {
	stopc chan struct{}
	done  chan uint64
}

func startHeapSampler() *heapSampler {
	h := &heapSampler{stopc: make(chan struct{}), done: make(chan uint64, 1)}
	go func() {
		var peak uint64
		var ms runtime.MemStats
		tk := time.NewTicker(100 * time.Millisecond)
		defer tk.Stop()
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
			select {
			case <-h.stopc:
				h.done <- peak
				return
			case <-tk.C:
			}
		}
	}()
	return h
}

func (h *heapSampler) stop() uint64 {
	close(h.stopc)
	return <-h.done
}

// peakRSS is VmHWM from /proc/self/status (the whole test process).
func peakRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "?"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}
