// Package hostile is for tests: text an attacker would put in any field
// fgtop reads from outside, a snapshot with it planted in every string,
// and a check that finds such bytes in what fgtop printed. Nothing
// outside _test.go files imports it.
package hostile

import (
	stdcontext "context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptrace"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/fgtop/fgtop/internal/untrusted"
	"github.com/fgtop/fgtop/model"
)

// SGR is the colour a hostile value tries to set: 256-colour 201, which
// no fgtop theme uses, so Foreign can tell it from fgtop's own SGR.
const SGR = "\x1b[38;5;201m"

// Payload holds every kind of sequence the attacks used: OSC 52 (sets the
// clipboard), an OSC 8 link, SGR, a screen clear, CR/LF, BEL, C1 CSI
// (U+009B), a bidirectional override and a stray 0x9b byte.
const Payload = "\x1b]52;c;cm0gLXJmIH4K\a\x1b]8;;http://evil/\x1b\\link\x1b]8;;\x1b\\" + SGR + "red\x1b[2J\r\nforged\u009b31m\u202eexe\x9b"

// Plant appends Payload to every non-empty string ptr reaches (as
// untrusted.Apply walks it). Appending keeps ids distinct and equal
// where they were, so the document still hangs together.
func Plant(ptr any) {
	untrusted.Apply(ptr, func(s string) string {
		if s == "" {
			return s
		}
		return s + Payload
	})
}

// Snapshot plants Payload in every string of s, the kernels and the
// holdings included. s must not be shared yet.
func Snapshot(s *model.Snapshot) *model.Snapshot {
	ks := s.Kernels()
	planted := make([]*model.Kernel, len(ks))
	for i, k := range ks {
		c := *k
		Plant(&c)
		planted[i] = &c
	}
	for _, u := range s.Usage {
		hs := append([]model.Holding(nil), u.Holdings()...)
		Plant(&hs)
		u.SetHoldings(hs)
	}
	Plant(s)
	s.SetKernels(planted)
	return s
}

// sgr matches one SGR sequence.
var sgr = regexp.MustCompile("\x1b\\[[0-9;]*m")

// Foreign lists the bytes in out that fgtop did not emit itself: ESC
// outside an SGR sequence of fgtop's (SGR with colour 201 is the
// attacker's), BEL and the other C0 controls but newline, DEL, C1
// characters, a bidirectional override, and bytes that are not UTF-8.
// Empty means clean.
func Foreign(out string) []string {
	var found []string
	rest := sgr.ReplaceAllStringFunc(out, func(m string) string {
		if strings.Contains(m, "5;201") {
			found = append(found, fmt.Sprintf("attacker's SGR %q", m))
		}
		return ""
	})
	for i, r := range rest {
		switch {
		case r == utf8.RuneError:
			if _, n := utf8.DecodeRuneInString(rest[i:]); n == 1 {
				found = append(found, fmt.Sprintf("byte %#x at %d: %q", rest[i], i, context(rest, i)))
			}
		case r == '\n':
		case untrusted.Unsafe(r):
			found = append(found, fmt.Sprintf("%U at %d: %q", r, i, context(rest, i)))
		}
		if len(found) > 10 {
			break
		}
	}
	return found
}

func context(s string, i int) string {
	return s[max(0, i-30):min(len(s), i+30)]
}

// Prometheus is a fake Prometheus query API whose every answer names one
// node, node + Payload, with Payload in every label fgtop reads (numeric
// labels stay numbers, so the node is rebuilt): what a node that writes
// its own labels, or anyone who can push to Prometheus, can make it say.
// With fail set it answers every query with an error whose body carries
// Payload instead.
func Prometheus(node string, fail bool) http.Handler {
	name := node + Payload
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.FormValue("query")
		if fail {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnprocessableEntity)
			b, _ := json.Marshal(map[string]string{"status": "error", "errorType": "execution" + Payload, "error": "boom" + Payload})
			_, _ = w.Write(b)
			return
		}
		labels := map[string]string{"node": name}
		value := "1"
		switch {
		case strings.Contains(q, "timestamp("):
			value = strconv.FormatInt(time.Now().Unix(), 10)
		case strings.Contains(q, "by (node)"):
		default:
			for _, l := range []string{"plugin", "device", "slot", "slot_type", "model", "uuid", "agent", "mode", "config",
				"kind", "health", "severity", "version", "allocation_mode", "affinity_policy", "allocation_order", "parent"} {
				labels[l] = l + Payload
			}
			labels["position"], labels["index"], labels["numa_node"], labels["quantum_size"] = "0", "0", "0", "0.1"
		}
		ts := float64(time.Now().UnixMilli()) / 1000
		out := map[string]any{"status": "success", "data": map[string]any{"resultType": "vector",
			"result": []any{map[string]any{"metric": labels, "value": []any{ts, value}}}}}
		if strings.Contains(q, "[") && strings.HasPrefix(q, "fgtop_build_info{") { // a range selector: a matrix
			out["data"] = map[string]any{"resultType": "matrix",
				"result": []any{map[string]any{"metric": labels, "values": []any{[]any{ts, value}}}}}
		}
		w.Header().Set("Content-Type", "application/json")
		b, _ := json.Marshal(out)
		_, _ = w.Write(b)
	})
}

// Greeter listens on 127.0.0.1 as a server of another protocol that
// speaks first (an SSH server's "SSH-2.0-..."): every connection gets
// greeting at once, then is closed after hold, whatever it sent. It
// returns the address; the listener closes when the test ends.
func Greeter(t testing.TB, greeting string, hold time.Duration) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				_, _ = c.Write([]byte(greeting))
				time.Sleep(hold)
				c.Close()
			}()
		}
	}()
	return ln.Addr().String()
}

// LateWrite is ctx with every HTTP request made under it waiting pause
// between getting its connection and writing on it, so that a Greeter's
// greeting is there before the request, every run.
func LateWrite(ctx stdcontext.Context, pause time.Duration) stdcontext.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { time.Sleep(pause) }})
}
