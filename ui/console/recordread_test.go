package console

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/ui/internal/fake"
)

// goCmd runs cmd as the program does, in goroutines of its own, and sends
// what it answers to out.
func goCmd(cmd tea.Cmd, out chan<- tea.Msg, wg *sync.WaitGroup) {
	if cmd == nil {
		return
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		switch msg := cmd().(type) {
		case tea.BatchMsg:
			for _, c := range msg {
				goCmd(c, out, wg)
			}
		case nil:
		default:
			out <- msg
		}
	}()
}

// TestOneReadOfTheRecordAtATime: a viewer pasting `:at` (and `:span`)
// many times in a row has at most one read of the record running; each
// new one cancels the one in flight, the last one's answer is what shows,
// and closing the console cancels its read (issue 31: four consoles
// pasting `:at` 100 times took serve past 6 GB).
func TestOneReadOfTheRecordAtATime(t *testing.T) {
	dir, past := pastRecord(t)
	a := testApp(t, 160, 48, fake.Node(fake.Options{}), Options{History: dir})
	var running, peak atomic.Int32
	var lastCtx atomic.Pointer[context.Context]
	// The reads wait in started until hold closes or they are cancelled.
	hold := make(chan struct{})
	a.reads.started = func(ctx context.Context) {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		lastCtx.Store(&ctx)
		select {
		case <-ctx.Done():
		case <-hold:
		}
	}
	msgs := make(chan tea.Msg, 256)
	var wg sync.WaitGroup
	enter := func(line string) {
		a.Update(keyRune(':'))
		typeKeys(a, line)
		_, cmd := a.Update(keyCode(tea.KeyEnter))
		goCmd(cmd, msgs, &wg)
	}
	const n = 41
	for i := range n {
		at := past[i%2].Time.Add(time.Minute)
		if i%10 == 9 {
			enter("span 1d")
			continue
		}
		enter("at " + at.Format(time.RFC3339))
	}
	// The last :at waits in its read; every earlier one answered (as
	// replaced) without reading, or stopped reading when replaced.
	deadline := time.Now().Add(10 * time.Second)
	for running.Load() != 1 || len(msgs) < n-1 {
		if time.Now().After(deadline) {
			t.Fatalf("%d reads running, %d of %d answered", running.Load(), len(msgs), n-1)
		}
		time.Sleep(time.Millisecond)
	}
	if p := peak.Load(); p != 1 {
		t.Fatalf("%d reads of the record ran at once (want 1)", p)
	}
	close(hold)
	wg.Wait()
	close(msgs)
	for msg := range msgs {
		a.Update(msg)
	}
	// The last command, an :at, is what shows; the :span before it was
	// replaced, and no replaced read flashed its cancellation.
	if a.reads.inFlight(0) {
		t.Fatal("a read still in flight after every answer came")
	}
	if !a.past.on || a.Snap.Seq != past[0].Seq || a.graph.series != nil || strings.Contains(a.Flash.Text, "cancel") {
		t.Fatalf("after the burst: past %v seq %d (want %d), span series %v, flash %q", a.past.on, a.Snap.Seq, past[0].Seq, a.graph.series != nil, a.Flash.Text)
	}

	// Closing the console cancels its read.
	msgs = make(chan tea.Msg, 4)
	lastCtx.Store(nil)
	a.reads.started = func(ctx context.Context) {
		running.Add(1)
		defer running.Add(-1)
		lastCtx.Store(&ctx)
		<-ctx.Done()
	}
	enter("at " + past[0].Time.Add(time.Minute).Format(time.RFC3339))
	for lastCtx.Load() == nil || running.Load() != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the read after the burst never started")
		}
		time.Sleep(time.Millisecond)
	}
	ctx := *lastCtx.Load()
	a.Close()
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("closing the console left its read of the record running")
	}
	wg.Wait()
	if running.Load() != 0 {
		t.Fatalf("%d reads running after Close", running.Load())
	}
}
