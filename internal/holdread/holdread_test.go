package holdread

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/internal/hostile"
)

// TestHoldsAGreeting: a port that speaks first (an SSH server's greeting)
// and whose greeting is already there when the request is written.
// Without the hold, net/http read it as an unsolicited answer on an idle
// connection: "readLoopPeekFailLocked", a line on stderr, and no word of
// what the port sent.
func TestHoldsAGreeting(t *testing.T) {
	addr := hostile.Greeter(t, "SSH-2.0-Go\r\n", time.Second)
	tr := &http.Transport{DialContext: Dial((&net.Dialer{}).DialContext)}
	defer tr.CloseIdleConnections()
	// The greeting is read before net/http has the request in hand,
	// every time, not in 1 run of a few: the request waits 100 ms between
	// getting its connection and writing on it, while the connection's
	// reader runs.
	for round := range 3 {
		req, err := http.NewRequestWithContext(hostile.LateWrite(context.Background(), 100*time.Millisecond), http.MethodGet, "http://"+addr+"/api/v1/query", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Do(req)
		if err == nil {
			resp.Body.Close()
			t.Fatalf("round %d: an answer from a port that sent only an SSH greeting", round)
		}
		if !strings.Contains(err.Error(), `malformed HTTP response "SSH-2.0-Go"`) {
			t.Fatalf("round %d: %v, want net/http's malformed HTTP response with the greeting", round, err)
		}
	}
}
