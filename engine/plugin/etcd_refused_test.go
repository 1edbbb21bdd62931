package plugin

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// TestEtcdUnreachableSaysWhy: an address where nothing listens is said as
// refused (the client retries it until its deadline, which alone reads as
// a slow etcd), one that takes the connection and never answers as no
// answer.
func TestEtcdUnreachableSaysWhy(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := closed.Addr().String()
	closed.Close()
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	for _, tc := range []struct {
		endpoint, want, not string
	}{
		{refused, "connection refused: is etcd running there? (no answer within 400ms)", ""},
		{"http://" + refused, "connection refused", ""},
		{silent.Addr().String(), "no answer within 400ms", "refused"},
	} {
		_, err := ReadEtcd(context.Background(), EtcdOptions{Endpoints: []string{tc.endpoint}, Timeout: 400 * time.Millisecond})
		if err == nil || !strings.Contains(err.Error(), tc.want) || tc.not != "" && strings.Contains(err.Error(), tc.not) {
			t.Errorf("%s: %v, want %q", tc.endpoint, err, tc.want)
		}
	}
}
