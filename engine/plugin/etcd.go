package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc/grpclog"

	"github.com/fgtop/fgtop/internal/untrusted"
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
	// Entry is the plugin whose settings are read: the last component of
	// config/plugins/accelerator/<entry>/ (default EntryPoint, the CUDA
	// plugin's; the mock plugin's is "mock").
	Entry string
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
func GlobalPrefix(namespace string) string { return entryPrefix(namespace, "", EntryPoint) }

// NodePrefix is the prefix of an agent's node-scope settings.
func NodePrefix(namespace string, agent model.AgentID) string {
	return entryPrefix(namespace, agent, EntryPoint)
}

// entryPrefix is the prefix of plugin entry's settings: the global scope
// for agent "", else that agent's node scope.
func entryPrefix(namespace string, agent model.AgentID, entry string) string {
	if agent == "" {
		return "/sorna/" + namespace + "/config/plugins/accelerator/" + entry + "/"
	}
	return "/sorna/" + namespace + "/nodes/agents/" + string(agent) + "/config/plugins/accelerator/" + entry + "/"
}

// ReadEtcdFlat reads o.Entry's settings once, unparsed: per agent its
// node scope over the global scope (the key "" when Agents is empty), keys
// relative to the plugin's prefix and keys and values through
// untrusted.Text, as ReadEtcd reads the CUDA plugin's.
func ReadEtcdFlat(ctx context.Context, o EtcdOptions) (map[model.AgentID]map[string]string, error) {
	o.defaults()
	scopes, err := readOnce(ctx, o)
	if err != nil {
		return nil, err
	}
	out := map[model.AgentID]map[string]string{}
	if len(o.Agents) == 0 {
		out[""] = maps.Clone(scopes[0].flat)
		return out, nil
	}
	for i, a := range o.Agents {
		out[a] = Merge(scopes[0].flat, scopes[i+1].flat)
	}
	return out, nil
}

// Where names the prefix o reads, for messages: "etcd at ADDR, KEY".
func (o EtcdOptions) Where() string {
	o.defaults()
	return "etcd at " + o.Addr() + ", " + entryPrefix(o.Namespace, "", o.Entry)
}

// Bounds of a prefix read. The read is paged (pageKeys a request, all
// pages at one revision): one request of at most 4,096 keys hid every
// setting sorted after them, and a node showed capacity 13.50 instead of
// 4.00 with settings_ok true (issue 31). maxKeys bounds what is kept:
// values are clipped to MaxValueBytes, so 16,384 keys are at most about
// 70 MB, and far more than settings; beyond it the read fails, in words.
const (
	pageKeys = 512
	maxKeys  = 16384
)

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
	if o.Entry == "" {
		o.Entry = EntryPoint
	}
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
	scopes, err := readOnce(ctx, o)
	if err != nil {
		return nil, err
	}
	return settingsOf(o, scopes), nil
}

// readOnce reads every scope of o (defaults set) on a client of its own.
func readOnce(ctx context.Context, o EtcdOptions) ([]*scope, error) {
	if err := refusedErr(o); err != nil {
		return nil, err
	}
	cli, err := newClient(o)
	if err != nil {
		return nil, etcdErr(o, err)
	}
	defer cli.Close()
	return readAll(ctx, cli, o)
}

func etcdErr(o EtcdOptions, err error) error {
	// etcd's own words for credentials name no file; the agent takes its
	// credentials from agent.toml's [etcd] user and password.
	for _, a := range []struct {
		err  error
		says string
	}{
		{rpctypes.ErrUserEmpty, "etcd asks for a user and password, and agent.toml's [etcd] sets no user"},
		{rpctypes.ErrAuthFailed, "etcd refused the user and password of agent.toml's [etcd]"},
		{rpctypes.ErrPermissionDenied, "the etcd user of agent.toml's [etcd] may not read the plugin settings"},
	} {
		if strings.Contains(err.Error(), a.err.Error()) {
			return fmt.Errorf("etcd at %s: %s (%w)", o.Addr(), a.says, err)
		}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		// The client retries a refused connection until its deadline;
		// "nothing listens there" and "it listens but does not answer"
		// send an operator to different places.
		if why := unreachable(o.Endpoints, min(o.Timeout, 500*time.Millisecond)); why != "" {
			err = fmt.Errorf("%s (no answer within %v)", why, o.Timeout)
		} else {
			err = fmt.Errorf("no answer within %v", o.Timeout)
		}
	}
	return fmt.Errorf("etcd at %s: %w", o.Addr(), err)
}

// refusedErr is the error of a read none of whose endpoints takes a TCP
// connection because nothing listens there, said at once: the client
// retries a refused connection until its deadline, so every command of a
// node whose etcd is down waited that long (1.5 s) to say "connection
// refused". Nil when an endpoint takes the connection or does not answer
// at all (the client's deadline then says so).
func refusedErr(o EtcdOptions) error {
	if len(o.Endpoints) == 0 {
		return nil
	}
	timeout := min(o.Timeout, 500*time.Millisecond)
	refused := make(chan bool, len(o.Endpoints))
	for _, ep := range o.Endpoints {
		go func() {
			c, err := net.DialTimeout("tcp", endpointHostPort(ep), timeout)
			if err == nil {
				c.Close()
			}
			refused <- errors.Is(err, syscall.ECONNREFUSED)
		}()
	}
	for range o.Endpoints {
		if !<-refused {
			return nil
		}
	}
	return fmt.Errorf("etcd at %s: connection refused: is etcd running there?", o.Addr())
}

// endpointHostPort is the host:port of an endpoint, given as host:port or
// as a URL.
func endpointHostPort(ep string) string {
	if u, err := url.Parse(ep); err == nil && u.Host != "" {
		return u.Host
	}
	return ep
}

// unreachable says why no endpoint takes a TCP connection ("connection
// refused"), or "" when one does (or none can be tried).
func unreachable(endpoints []string, timeout time.Duration) string {
	why := ""
	for _, ep := range endpoints {
		c, err := net.DialTimeout("tcp", endpointHostPort(ep), timeout)
		if err == nil {
			c.Close()
			return ""
		}
		if why == "" {
			var op *net.OpError
			if errors.As(err, &op) && op.Err != nil {
				err = op.Err
			}
			why = err.Error()
			if errors.Is(err, syscall.ECONNREFUSED) {
				why = "connection refused: is etcd running there?"
			}
		}
	}
	return why
}

// scope is one prefix's keys as read and since followed: raw by etcd
// key, flat by the settings key the agent sees (RelKey), key and value
// through untrusted.Text, and rev the revision the view is at.
type scope struct {
	prefix string
	raw    map[string]string
	// flat and src: the settings keys, and the etcd key each one's value
	// came from (two etcd keys may unquote to one settings key; the later
	// one in key order wins, as in a read of the whole prefix).
	flat, src map[string]string
	rev       int64
}

// readAll reads every scope: the global one, then each agent's node
// scope, each at its own revision, from which its watch misses nothing.
func readAll(ctx context.Context, cli *clientv3.Client, o EtcdOptions) ([]*scope, error) {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	prefixes := []string{entryPrefix(o.Namespace, "", o.Entry)}
	for _, a := range o.Agents {
		prefixes = append(prefixes, entryPrefix(o.Namespace, a, o.Entry))
	}
	out := make([]*scope, 0, len(prefixes))
	for _, p := range prefixes {
		sc, err := readPrefix(ctx, cli, p)
		if err != nil {
			return nil, etcdErr(o, err)
		}
		out = append(out, sc)
	}
	return out, nil
}

// settingsOf merges and parses the scopes (as readAll returns them) per
// agent. Only the keys Parse reads are parsed: with thousands of keys
// under the prefix, parsing (and scanning) all of them on each change
// cost more than the change.
func settingsOf(o EtcdOptions, scopes []*scope) map[model.AgentID]*Settings {
	out := map[model.AgentID]*Settings{}
	if len(o.Agents) == 0 {
		out[""] = parseClean(maps.Clone(scopes[0].flat))
		return out
	}
	for i, a := range o.Agents {
		out[a] = parseClean(Merge(scopes[0].flat, scopes[i+1].flat))
	}
	return out
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

// readPrefix reads every key under prefix, pageKeys at a time, all at
// the revision of the first page.
func readPrefix(ctx context.Context, cli *clientv3.Client, prefix string) (*scope, error) {
	sc := &scope{prefix: prefix, raw: map[string]string{}}
	end := clientv3.GetPrefixRangeEnd(prefix)
	from := prefix
	for {
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(pageKeys)}
		if sc.rev > 0 {
			opts = append(opts, clientv3.WithRev(sc.rev))
		}
		resp, err := cli.Get(ctx, from, opts...)
		if err != nil {
			return nil, err
		}
		if sc.rev == 0 {
			sc.rev = resp.Header.Revision
		}
		for _, x := range resp.Kvs {
			sc.raw[string(x.Key)] = clipValue(x.Value)
		}
		if len(sc.raw) > maxKeys {
			return nil, tooManyKeys(prefix)
		}
		if !resp.More || len(resp.Kvs) == 0 {
			break
		}
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
	sc.rebuild()
	return sc, nil
}

func tooManyKeys(prefix string) error {
	return fmt.Errorf("more than %d keys under %s: the plugin's settings are read whole, and this many are not settings; remove what does not belong there", maxKeys, prefix)
}

func clipValue(b []byte) string {
	if len(b) > MaxValueBytes {
		b = b[:MaxValueBytes]
	}
	return string(b)
}

// rebuild derives flat from raw.
func (sc *scope) rebuild() {
	sc.flat, sc.src = make(map[string]string, len(sc.raw)), make(map[string]string, len(sc.raw))
	for k := range sc.raw {
		sc.put(k)
	}
}

// put sets flat's entry for etcd key k from raw, unless a later etcd key
// holds it.
func (sc *scope) put(k string) {
	rel, ok := sc.relKey(k)
	if !ok {
		return
	}
	if cur, held := sc.src[rel]; held && cur > k {
		return
	}
	sc.flat[rel], sc.src[rel] = untrusted.Text(sc.raw[k]), k
}

// relKey is the settings key of etcd key k, through untrusted.Text.
func (sc *scope) relKey(k string) (string, bool) {
	rel, ok := RelKey(sc.prefix, k)
	return untrusted.Text(rel), ok
}

// apply takes one event of the scope's watch; changed is false when it
// changes no settings key's value.
func (sc *scope) apply(ev *clientv3.Event) (changed bool, err error) {
	k := string(ev.Kv.Key)
	sc.rev = max(sc.rev, ev.Kv.ModRevision)
	rel, ok := sc.relKey(k)
	switch ev.Type {
	case clientv3.EventTypePut:
		v := clipValue(ev.Kv.Value)
		if old, had := sc.raw[k]; had && old == v {
			return false, nil
		}
		sc.raw[k] = v
		if len(sc.raw) > maxKeys {
			return false, tooManyKeys(sc.prefix)
		}
		before, had := sc.flat[rel]
		sc.put(k)
		return ok && (!had || before != sc.flat[rel]), nil
	case clientv3.EventTypeDelete:
		if _, had := sc.raw[k]; !had {
			return false, nil
		}
		delete(sc.raw, k)
		if ok && sc.src[rel] == k {
			// Another etcd key may unquote to the same settings key.
			sc.rebuild()
			return true, nil
		}
	}
	return false, nil
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
// change under any watched prefix is applied to the settings as read, and
// the settings are reported at once. Every Recheck the number of keys
// under each prefix is asked at the revision the view is at, which is
// also how a stopped etcd is reported (Err) within Recheck + Timeout; a
// count that differs (a gap), or a watch that fell behind a compaction,
// reads everything again. Every reading and every failure goes to report,
// from one goroutine; a failure is retried every second.
//
// A change does not read the prefix again: with 4,096 keys of 1.5 KB
// under it, 20 writes a second cost every fgtop process 453 ms of CPU a
// second that way (issue 31).
func WatchEtcd(ctx context.Context, o EtcdOptions, report func(EtcdReading)) {
	o.defaults()
	for ctx.Err() == nil {
		err := watchSession(ctx, o, report)
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, errResync) {
			continue // read again at once, and say nothing: nothing failed
		}
		report(EtcdReading{Err: err})
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// errResync ends a session whose view cannot be followed further (its
// watch fell behind a compaction, or a recheck found a gap): the next one
// reads everything again.
var errResync = errors.New("etcd: the settings are read again")

// watchResp is one watch response of scope i, or the end of its watch.
type watchResp struct {
	i     int
	resp  clientv3.WatchResponse
	ended bool
}

// watchSession runs one connection until it fails.
func watchSession(ctx context.Context, o EtcdOptions, report func(EtcdReading)) error {
	if err := refusedErr(o); err != nil {
		return err
	}
	cli, err := newClient(o)
	if err != nil {
		return etcdErr(o, err)
	}
	defer cli.Close()
	scopes, err := readAll(ctx, cli, o)
	if err != nil {
		return err
	}
	report(EtcdReading{Settings: settingsOf(o, scopes)})

	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	resps := make(chan watchResp)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for i, sc := range scopes {
		// From the revision read: a change made while the watch is being
		// set up is not missed.
		wch := cli.Watch(wctx, sc.prefix, clientv3.WithPrefix(), clientv3.WithRev(sc.rev+1))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for resp := range wch {
				select {
				case resps <- watchResp{i: i, resp: resp}:
				case <-wctx.Done():
					return
				}
			}
			select {
			case resps <- watchResp{i: i, ended: true}:
			case <-wctx.Done():
			}
		}()
	}
	tick := time.NewTicker(o.Recheck)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case wr := <-resps:
			changed, err := applyResp(scopes[wr.i], wr)
			if err != nil {
				if errors.Is(err, errResync) {
					return err
				}
				return etcdErr(o, err)
			}
			if changed {
				report(EtcdReading{Settings: settingsOf(o, scopes)})
			}
		case <-tick.C:
			if err := recheck(ctx, cli, o, scopes); err != nil {
				return err
			}
		}
	}
}

// applyResp applies a watch response to its scope.
func applyResp(sc *scope, wr watchResp) (changed bool, err error) {
	resp := wr.resp
	switch {
	case wr.ended:
		return false, errors.New("watch ended")
	case resp.CompactRevision != 0 || errors.Is(resp.Err(), rpctypes.ErrCompacted):
		return false, errResync
	case resp.Err() != nil:
		return false, resp.Err()
	case resp.Canceled:
		return false, errors.New("watch cancelled")
	}
	for _, ev := range resp.Events {
		c, err := sc.apply(ev)
		if err != nil {
			return false, err
		}
		changed = changed || c
	}
	return changed, nil
}

// recheck asks how many keys each scope had at the revision its view is
// at: an etcd that does not answer is an error, a count that differs a
// gap (errResync).
func recheck(ctx context.Context, cli *clientv3.Client, o EtcdOptions, scopes []*scope) error {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	for _, sc := range scopes {
		resp, err := cli.Get(ctx, sc.prefix, clientv3.WithPrefix(), clientv3.WithCountOnly(), clientv3.WithRev(sc.rev))
		switch {
		case errors.Is(err, rpctypes.ErrCompacted):
			return errResync
		case err != nil:
			return etcdErr(o, err)
		case resp.Count != int64(len(sc.raw)):
			return errResync
		}
	}
	return nil
}
