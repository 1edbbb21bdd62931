package plugin_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/fgtop/fgtop/engine/plugin"
	"github.com/fgtop/fgtop/internal/etcdtest"
)

// etcdClient is a client of the test's etcd.
func etcdClient(t *testing.T, etcd *etcdtest.Server) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{etcd.Endpoint}, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// putMany puts n keys of size bytes under prefix, 100 a transaction.
func putMany(t *testing.T, c *clientv3.Client, prefix string, n, size int) {
	t.Helper()
	val := strings.Repeat("v", size)
	for i := 0; i < n; i += 100 {
		var ops []clientv3.Op
		for j := i; j < min(i+100, n); j++ {
			ops = append(ops, clientv3.OpPut(fmt.Sprintf("%sb/%05d", prefix, j), val))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := c.Txn(ctx).Then(ops...).Commit()
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// ranges is how many reads (Range calls) the etcd server has answered,
// from its own metrics.
func ranges(t *testing.T, etcd *etcdtest.Server) int {
	t.Helper()
	resp, err := http.Get("http://" + etcd.Endpoint + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	n := 0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "grpc_server_handled_total{") && strings.Contains(line, `grpc_method="Range"`) {
			f := strings.Fields(line)
			v, _ := strconv.ParseFloat(f[len(f)-1], 64)
			n += int(v)
		}
	}
	if n == 0 {
		t.Fatal("etcd's metrics count no Range calls")
	}
	return n
}

// TestEtcdManyKeysAndIncrementalWatch: over 4,096 keys under the plugin's
// prefix hide no setting (the read is paged: one read of 4,096 keys hid
// unit_mem, and capacity 13.50 showed instead of 4.00 with settings_ok
// true), and a change under the prefix is applied from the watch, with no
// read of the prefix again (each change re-read all of it in every fgtop
// process); a settings key two etcd keys unquote to falls back to the
// other one when the winner is deleted.
func TestEtcdManyKeysAndIncrementalWatch(t *testing.T) {
	etcd := etcdtest.Start(t)
	c := etcdClient(t, etcd)
	g := plugin.GlobalPrefix("local")
	etcd.Put(g+"allocation_mode", "fractional")
	putMany(t, c, g, 5000, 1536) // "b/..." sorts before unit_mem
	etcd.Put(g+"unit_mem", "20g")
	opts := plugin.EtcdOptions{Endpoints: []string{etcd.Endpoint}, Timeout: 5 * time.Second, Recheck: time.Hour}
	st, err := plugin.ReadEtcd(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if s := st[""]; s.UnitMem != 20<<30 || !s.Fractional() || len(s.Raw) != 5002 {
		t.Fatalf("with 5,000 keys before it: unit_mem %d (want 20g), fractional %v, %d keys (want 5002)", s.UnitMem, s.Fractional(), len(s.Raw))
	}

	readings := make(chan plugin.EtcdReading, 64)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		plugin.WatchEtcd(ctx, opts, func(r plugin.EtcdReading) { readings <- r })
	}()
	defer func() { cancel(); <-done }()
	next := func(what string) *plugin.Settings {
		t.Helper()
		select {
		case r := <-readings:
			if r.Err != nil {
				t.Fatalf("%s: %v", what, r.Err)
			}
			return r.Settings[""]
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: no reading", what)
			return nil
		}
	}
	if s := next("first reading"); s.UnitMem != 20<<30 {
		t.Fatalf("first reading: unit_mem %d", s.UnitMem)
	}
	before := ranges(t, etcd)
	for i := range 20 {
		etcd.Put(g+"unit_mem", fmt.Sprintf("%dg", 21+i))
		if s := next("a change"); s.UnitMem != int64(21+i)<<30 {
			t.Fatalf("change %d: unit_mem %d, want %dg", i, s.UnitMem, 21+i)
		}
	}
	etcd.Put(g+"unit%5Fmem", "8g") // the same settings key, sorted before unit_mem
	etcd.Delete(g + "unit_mem")
	if s := next("unit_mem deleted"); s.UnitMem != 8<<30 {
		t.Fatalf("unit_mem deleted with unit%%5Fmem = 8g beside it: unit_mem %d", s.UnitMem)
	}
	etcd.Delete(g + "unit%5Fmem")
	if s := next("both deleted"); s.UnitMem != plugin.DefaultUnitMem || len(s.Raw) != 5001 {
		t.Fatalf("both deleted: unit_mem %d (want the default), %d keys", s.UnitMem, len(s.Raw))
	}
	// etcd.Put and Delete read nothing; the watcher read nothing either.
	if n := ranges(t, etcd) - before; n != 0 {
		t.Fatalf("23 changes made %d reads of the prefix (want none: the watch carries them)", n)
	}
}

// TestEtcdWatchCPU measures the CPU a watching process spends while
// 20 keys of 1.5 KB a second are written under a prefix of 4,096 such
// keys (FGTOP_ETCD_CPU=1; figures in the log): the writer alone, then the
// writer with WatchEtcd following, for 10 s each.
func TestEtcdWatchCPU(t *testing.T) {
	if os.Getenv("FGTOP_ETCD_CPU") != "1" {
		t.Skip("FGTOP_ETCD_CPU=1 measures the watch's CPU")
	}
	etcd := etcdtest.Start(t)
	c := etcdClient(t, etcd)
	g := plugin.GlobalPrefix("local")
	putMany(t, c, g, 4096, 1536)
	etcd.Put(g+"unit_mem", "20g")
	val := strings.Repeat("w", 1536)
	write := func(d time.Duration) {
		tick := time.NewTicker(time.Second / 20)
		defer tick.Stop()
		end := time.Now().Add(d)
		for time.Now().Before(end) {
			<-tick.C
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, err := c.Put(ctx, fmt.Sprintf("%sb/%05d", g, rand.IntN(4096)), val+strconv.Itoa(rand.IntN(1e6)))
			cancel()
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	cpu := func() time.Duration {
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	const d = 10 * time.Second
	c0 := cpu()
	write(d)
	alone := cpu() - c0
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	go plugin.WatchEtcd(ctx, plugin.EtcdOptions{Endpoints: []string{etcd.Endpoint}, Timeout: 5 * time.Second},
		func(r plugin.EtcdReading) { n++ })
	time.Sleep(2 * time.Second) // the first read
	c1 := cpu()
	write(d)
	with := cpu() - c1
	perSec := func(x time.Duration) time.Duration { return x / (d / time.Second) }
	t.Logf("20 writes/s of 1.5 KB under 4,096 keys: writer alone %v CPU/s, writer and watch %v CPU/s: the watch %v CPU/s (%d readings)",
		perSec(alone).Round(time.Millisecond), perSec(with).Round(time.Millisecond), perSec(with-alone).Round(time.Millisecond), n)
}

// TestEtcdCompactionReadsAgainQuietly: a compaction past the revision the
// watcher's view is at makes it read the prefix again, with no error
// reported (nothing failed), and it follows changes after.
func TestEtcdCompactionReadsAgainQuietly(t *testing.T) {
	etcd := etcdtest.Start(t)
	c := etcdClient(t, etcd)
	g := plugin.GlobalPrefix("local")
	etcd.Put(g+"unit_mem", "20g")
	opts := plugin.EtcdOptions{Endpoints: []string{etcd.Endpoint}, Timeout: 5 * time.Second, Recheck: 100 * time.Millisecond}
	readings := make(chan plugin.EtcdReading, 64)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		plugin.WatchEtcd(ctx, opts, func(r plugin.EtcdReading) { readings <- r })
	}()
	defer func() { cancel(); <-done }()
	next := func(what string) *plugin.Settings {
		t.Helper()
		select {
		case r := <-readings:
			if r.Err != nil {
				t.Fatalf("%s: %v", what, r.Err)
			}
			return r.Settings[""]
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: no reading", what)
			return nil
		}
	}
	next("first reading")
	// Writes elsewhere move the store on; compacting to them leaves the
	// view's revision behind.
	putMany(t, c, "/elsewhere/", 50, 10)
	ctx2, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
	resp, err := c.Get(ctx2, "/elsewhere/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err == nil {
		_, err = c.Compact(ctx2, resp.Header.Revision)
	}
	cancel2()
	if err != nil {
		t.Fatal(err)
	}
	if s := next("the read after the compaction"); s.UnitMem != 20<<30 {
		t.Fatalf("after the compaction: unit_mem %d", s.UnitMem)
	}
	etcd.Put(g+"unit_mem", "30g")
	for {
		if s := next("a change after the compaction"); s.UnitMem == 30<<30 {
			break
		}
	}
}
