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
		{refused, "connection refused: is etcd running there?", "no answer within"},
		{"http://" + refused, "connection refused", "no answer within"},
		{silent.Addr().String(), "no answer within 400ms", "refused"},
	} {
		_, err := ReadEtcd(context.Background(), EtcdOptions{Endpoints: []string{tc.endpoint}, Timeout: 400 * time.Millisecond})
		if err == nil || !strings.Contains(err.Error(), tc.want) || tc.not != "" && strings.Contains(err.Error(), tc.not) {
			t.Errorf("%s: %v, want %q", tc.endpoint, err, tc.want)
		}
	}
}

// TestEtcdRefusedAtOnce: an etcd that is down (nothing listens) is said
// at once, not after the client's deadline: every command of such a node
// (snapshot, check, plan, simulate, the console's start) waited 1.5 s to
// say "connection refused". An endpoint that listens still answers.
func TestEtcdRefusedAtOnce(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := closed.Addr().String()
	closed.Close()
	const deadline = 5 * time.Second
	for _, eps := range [][]string{{refused}, {"http://" + refused, refused}} {
		start := time.Now()
		_, err := ReadEtcd(context.Background(), EtcdOptions{Endpoints: eps, Timeout: deadline})
		if took := time.Since(start); err == nil || !strings.Contains(err.Error(), "connection refused") || took > deadline/5 {
			t.Errorf("%v: %v after %v, want connection refused well within the %v deadline", eps, err, took, deadline)
		}
		start = time.Now()
		reports := make(chan EtcdReading, 1)
		ctx, cancel := context.WithCancel(context.Background())
		go WatchEtcd(ctx, EtcdOptions{Endpoints: eps, Timeout: deadline}, func(r EtcdReading) {
			select {
			case reports <- r:
			default:
			}
		})
		r := <-reports
		cancel()
		if took := time.Since(start); r.Err == nil || !strings.Contains(r.Err.Error(), "connection refused") || took > deadline/5 {
			t.Errorf("watch %v: %v after %v, want connection refused well within the %v deadline", eps, r.Err, took, deadline)
		}
	}
}
