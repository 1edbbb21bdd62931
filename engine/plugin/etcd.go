package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc/grpclog"

	"github.com/fgtop/fgtop/model"
)

// EtcdOptions say where the agent's etcd is and whose settings to read.
type EtcdOptions struct {
	// Endpoints are "host:port" ([etcd] addr).
	Endpoints []string
	// Namespace is [etcd] namespace: keys live under /sorna/<namespace>/.
	Namespace string
	// User and Password are [etcd] user and password.
	User, Password string
	// Agents are the agent ids whose node scope
	// nodes/agents/<id>/config/plugins/accelerator/cuda/ overrides the
	// global settings; none: the global scope only.
	Agents []model.AgentID
	// Timeout bounds each connection attempt and read (default 2s).
	Timeout time.Duration
	// Recheck is how often the settings are read again besides the watch,
	// which is also how soon a stopped etcd is noticed (default 3s).
	Recheck time.Duration
}

// Addr names the endpoints for messages.
func (o EtcdOptions) Addr() string { return strings.Join(o.Endpoints, ",") }

// EtcdReading is one outcome of reading the settings.
type EtcdReading struct {
	// Settings are the merged settings per agent id (the key "" when
	// Agents is empty); nil when Err is set.
	Settings map[model.AgentID]*Settings
	Err      error
}

// GlobalPrefix is the etcd key prefix of the CUDA plugin's global settings.
func GlobalPrefix(namespace string) string {
	return "/sorna/" + namespace + "/config/plugins/accelerator/" + EntryPoint + "/"
}

// NodePrefix is the prefix of an agent's node-scope settings.
func NodePrefix(namespace string, agent model.AgentID) string {
	return "/sorna/" + namespace + "/nodes/agents/" + string(agent) + "/config/plugins/accelerator/" + EntryPoint + "/"
}

// maxKeys bounds one prefix read.
const maxKeys = 4096

var quietGRPC sync.Once

// newClient connects without blocking (the first request fails within
// Timeout when no endpoint answers) and with the client's logging off:
// its output would land on the console's screen.
func newClient(o EtcdOptions) (*clientv3.Client, error) {
	quietGRPC.Do(func() { grpclog.SetLoggerV2(grpclog.NewLoggerV2(io.Discard, io.Discard, io.Discard)) })
	return clientv3.New(clientv3.Config{
		Endpoints: o.Endpoints,
		// No client keepalive: the recheck reads notice a dead server, and
		// pings more often than etcd's --grpc-keepalive-min-time (5s) get
		// the connection closed.
		DialTimeout:        o.Timeout,
		Username:           o.User,
		Password:           o.Password,
		Logger:             zap.NewNop(),
		MaxCallRecvMsgSize: 8 << 20,
	})
}

func (o *EtcdOptions) defaults() {
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Second
	}
	if o.Recheck <= 0 {
		o.Recheck = 3 * time.Second
	}
	if o.Namespace == "" {
		o.Namespace = "local"
	}
}

// ReadEtcd reads the settings once, every agent's node scope over the
// global scope.
func ReadEtcd(ctx context.Context, o EtcdOptions) (map[model.AgentID]*Settings, error) {
	o.defaults()
	cli, err := newClient(o)
	if err != nil {
		return nil, etcdErr(o, err)
	}
	defer cli.Close()
	st, _, err := readAll(ctx, cli, o)
	return st, err
}

func etcdErr(o EtcdOptions, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("no answer within %v", o.Timeout)
	}
	return fmt.Errorf("etcd at %s: %w", o.Addr(), err)
}

// readAll reads every scope; rev is the store revision of the first
// read, from which a watch misses nothing.
func readAll(ctx context.Context, cli *clientv3.Client, o EtcdOptions) (st map[model.AgentID]*Settings, rev int64, err error) {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	global, rev, err := readPrefix(ctx, cli, GlobalPrefix(o.Namespace))
	if err != nil {
		return nil, 0, etcdErr(o, err)
	}
	out := map[model.AgentID]*Settings{}
	if len(o.Agents) == 0 {
		out[""] = Parse(global)
		return out, rev, nil
	}
	for _, a := range o.Agents {
		node, _, err := readPrefix(ctx, cli, NodePrefix(o.Namespace, a))
		if err != nil {
			return nil, 0, etcdErr(o, err)
		}
		out[a] = Parse(Merge(global, node))
	}
	return out, rev, nil
}

// Merge lays the node scope's flattened keys over the global scope's, as
// the agent's merged get_prefix does.
func Merge(global, node map[string]string) map[string]string {
	m := make(map[string]string, len(global)+len(node))
	for k, v := range global {
		m[k] = v
	}
	for k, v := range node {
		m[k] = v
	}
	return m
}

func readPrefix(ctx context.Context, cli *clientv3.Client, prefix string) (map[string]string, int64, error) {
	resp, err := cli.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithLimit(maxKeys))
	if err != nil {
		return nil, 0, err
	}
	kv := make(map[string]string, len(resp.Kvs))
	for _, x := range resp.Kvs {
		k, ok := RelKey(prefix, string(x.Key))
		if !ok {
			continue
		}
		v := string(x.Value)
		if len(v) > MaxValueBytes {
			v = v[:MaxValueBytes]
		}
		kv[k] = v
	}
	return kv, resp.Header.Revision, nil
}

// RelKey turns an etcd key under prefix into the settings key the agent
// sees: the rest of the key, each "/"-separated component URL-unquoted
// (the agent quotes components with quote(k, safe="")). ok is false for
// the prefix itself.
func RelKey(prefix, key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, prefix)
	if !ok || rest == "" {
		return "", false
	}
	parts := strings.Split(rest, "/")
	for i, p := range parts {
		parts[i] = unquote(p)
	}
	return strings.Join(parts, "/"), true
}

// unquote is Python's urllib.parse.unquote: %XX sequences decoded, a
// malformed one left as it is.
func unquote(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && ishex(s[i+1]) && ishex(s[i+2]) {
			u, _ := url.PathUnescape(s[i : i+3])
			b.WriteString(u)
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func ishex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// WatchEtcd reads the settings, then follows them until ctx is done: a
// change under any watched prefix is read again and reported at once;
// besides the watch the settings are read every Recheck, so that a
// stopped etcd is reported (Err) within Recheck + Timeout. Every reading
// and every failure goes to report, from one goroutine; a failure is
// retried every second.
func WatchEtcd(ctx context.Context, o EtcdOptions, report func(EtcdReading)) {
	o.defaults()
	for ctx.Err() == nil {
		err := watchSession(ctx, o, report)
		if ctx.Err() != nil {
			return
		}
		report(EtcdReading{Err: err})
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// watchSession runs one connection until it fails.
func watchSession(ctx context.Context, o EtcdOptions, report func(EtcdReading)) error {
	cli, err := newClient(o)
	if err != nil {
		return etcdErr(o, err)
	}
	defer cli.Close()
	st, rev, err := readAll(ctx, cli, o)
	if err != nil {
		return err
	}
	report(EtcdReading{Settings: st})

	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	events := make(chan error, 1)
	prefixes := []string{GlobalPrefix(o.Namespace)}
	for _, a := range o.Agents {
		prefixes = append(prefixes, NodePrefix(o.Namespace, a))
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for _, p := range prefixes {
		// From the revision read: a change made while the watch is being
		// set up is not missed.
		wch := cli.Watch(wctx, p, clientv3.WithPrefix(), clientv3.WithRev(rev+1))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for resp := range wch {
				var err error
				if resp.Err() != nil {
					err = resp.Err()
				}
				select {
				case events <- err:
				default:
					// A read is already due; it sees this change too.
				}
				if err != nil {
					return
				}
			}
			select {
			case events <- errors.New("watch ended"):
			default:
			}
		}()
	}
	tick := time.NewTicker(o.Recheck)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-events:
			if err != nil {
				return etcdErr(o, err)
			}
		case <-tick.C:
		}
		st, _, err := readAll(ctx, cli, o)
		if err != nil {
			return err
		}
		report(EtcdReading{Settings: st})
	}
}
