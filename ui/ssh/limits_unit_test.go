package sshserve

import (
	"encoding/binary"
	"testing"
	"time"

	"charm.land/ssh"
	gossh "golang.org/x/crypto/ssh"
)

// The end-to-end TestRefusedSessionsLeakNothing holds only while at least
// one of two guards works (resizes held back by limitRequests, and
// drainWindows); these tests hold each guard on its own.

func windowPayload(w, h uint32) []byte {
	p := make([]byte, 16)
	binary.BigEndian.PutUint32(p, w)
	binary.BigEndian.PutUint32(p[4:], h)
	return p
}

func ptyPayload(w, h uint32) []byte {
	term := "xterm"
	p := binary.BigEndian.AppendUint32(nil, uint32(len(term)))
	p = append(p, term...)
	p = append(p, windowPayload(w, h)...)
	return binary.BigEndian.AppendUint32(p, 0) // no modes
}

// TestLimitRequestsHoldsResizes: resizes before the shell fold into the
// pty request; after it, only the newest is kept, and it is passed on only
// once the console is ready to read it. A library request loop that got
// every resize before then blocked for good on its one-slot buffer.
func TestLimitRequestsHoldsResizes(t *testing.T) {
	in, out, ready := make(chan *gossh.Request), make(chan *gossh.Request, 16), make(chan struct{})
	go limitRequests(in, out, ready)
	send := func(typ string, payload []byte) {
		select {
		case in <- &gossh.Request{Type: typ, Payload: payload}:
		case <-time.After(5 * time.Second):
			t.Fatalf("limitRequests stopped reading at %s", typ)
		}
	}
	send("pty-req", ptyPayload(80, 24))
	send("window-change", windowPayload(100, 30))
	send("window-change", windowPayload(120, 40))
	send("shell", nil)
	for i := range 50 {
		send("window-change", windowPayload(uint32(130+i), 45))
	}
	// What reached the library so far: the pty at the last size before the
	// shell, then the shell, and no resize.
	var got []*gossh.Request
	for len(out) > 0 {
		got = append(got, <-out)
	}
	if len(got) != 2 || got[0].Type != "pty-req" || got[1].Type != "shell" {
		t.Fatalf("before ready: %d requests %v", len(got), got)
	}
	if off, ok := ptyWindowAt(got[0].Payload); !ok || binary.BigEndian.Uint32(got[0].Payload[off:]) != 120 {
		t.Errorf("pty request does not carry the last resize before the shell: %v", got[0].Payload)
	}
	close(ready)
	select {
	case r := <-out:
		if r.Type != "window-change" || binary.BigEndian.Uint32(r.Payload) != 179 {
			t.Errorf("after ready: %s %v, want the newest resize (179 columns)", r.Type, r.Payload)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the held resize was not passed on once ready")
	}
	send("window-change", windowPayload(90, 20))
	if r := <-out; r.Type != "window-change" || binary.BigEndian.Uint32(r.Payload) != 90 {
		t.Errorf("a resize after ready: %s %v", r.Type, r.Payload)
	}
	close(in)
	select {
	case _, open := <-out:
		if open {
			t.Error("a request after the input closed")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("out not closed when the requests ended")
	}
}

// TestDrainWindowsReadsEveryResize: with nobody else reading a session's
// window channel, drainWindows takes every resize, so the sender (the
// library's request loop) never blocks.
func TestDrainWindowsReadsEveryResize(t *testing.T) {
	winch := make(chan ssh.Window)
	drainWindows(winch)
	for i := range 100 {
		select {
		case winch <- ssh.Window{Width: 80 + i, Height: 24}:
		case <-time.After(5 * time.Second):
			t.Fatalf("resize %d blocked", i)
		}
	}
	close(winch)
	drainWindows(nil) // a session without a pty: nothing to drain
}
