package fleet

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/apd/v3"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	pmodel "github.com/prometheus/common/model"

	"github.com/fgtop/fgtop/internal/untrusted"
	"github.com/fgtop/fgtop/model"
)

// PromOptions configure the Prometheus source.
type PromOptions struct {
	// URL is Prometheus's base URL (http://prometheus:9090).
	URL string
	// Interval is how often the fleet is queried (default 2s).
	Interval time.Duration
	// Timeout bounds one refresh (default 10s).
	Timeout time.Duration
	// Lookback is how far back a node is still listed once its series are
	// no longer current (its target is down): stale, then unreachable,
	// with the figures of its last scrape (default DefaultLookback).
	Lookback time.Duration
	// UnreachableAfter is --unreachable-after (default
	// DefaultUnreachableAfter): the least silence after which a node whose
	// series are still current is called silent (PromNode.Silent).
	UnreachableAfter time.Duration
	// Settings are the fleet-wide allocator settings for summaries.
	Settings Settings
}

// The series one refresh reads: every one fleet-wide, one query each
// (the exporter's names, /work/notes/metrics.md; engine/metrics).
var promQueries = []string{
	"fgtop_device_info", units("fgtop_device_capacity"), units("fgtop_device_held"), "fgtop_device_kernels",
	"fgtop_allocator_info", "fgtop_agent_info", "fgtop_device_owner_info", "fgtop_agent_memory_share_bytes",
	units("fgtop_agent_device_held"), "fgtop_kernels", "fgtop_issues_by_severity", "fgtop_node_info",
	"fgtop_device_source_info", "fgtop_host_memory_bytes", "fgtop_snapshot_sequence",
	"fgtop_device_capacity_exponent", "fgtop_device_held_exponent", units("fgtop_agent_given"),
	"fgtop_agent_kernels", "fgtop_agent_given_exponent",
}

// units selects every unit's metric of an amount the exporter splits by
// unit (fgtop_device_held_shares, _devices, _bytes): the slot label says
// which slot each sample is, as it did when one metric held them all.
func units(base string) string {
	return `{__name__=~"` + base + `_(shares|devices|bytes)"}`
}

// DefaultLookback is PromOptions.Lookback's default.
const DefaultLookback = 15 * time.Minute

// The queries that say which nodes there are and when each was scraped,
// run with promQueries: fgtop_build_info is on every scrape of an exporter,
// before its first snapshot too.
const (
	// qScrapedAt: each current node's last scrape, the sample's own
	// timestamp (an instant query's samples carry the evaluation time).
	// The "and" drops a node whose series a staleness marker ended:
	// VictoriaMetrics' timestamp() gives the marker's own time.
	qScrapedAt = "max by (node) (timestamp(fgtop_build_info)) and on (node) max by (node) (fgtop_build_info)"
	// qKnownOver (with the lookback): every node scraped within it, current
	// or not: a node whose target went down has no current series (the
	// failed scrape wrote staleness markers) but is still listed.
	qKnownOver = "group by (node) (last_over_time(fgtop_build_info[%s]))"
	// qUpOver (with the lookback): whether each node's target is up now,
	// joined on its job and instance (absent: no longer a target).
	qUpOver = "max by (node) (max by (job, instance, node) (last_over_time(fgtop_build_info[%s])) * on (job, instance) group_left () up)"
	// qTargets: the targets that export each node's name now; more than
	// one is two nodes given one name (a cloned config, a repeated
	// --node), whose series would be read as one node's.
	qTargets = "group by (node, job, instance) (fgtop_build_info)"
	// qCount (with a window, and its index in intervalWindows): how many
	// scrapes of each node the window holds, whence its scrape interval
	// (scrapeIntervals): neither store's query API says a target's
	// interval. Every window's are asked in one query (qCounts), each
	// labelled with its window.
	qCount = `label_replace(sum by (node) (count_over_time(fgtop_build_info[%s])), "window", "%d", "", "")`
)

// Judging a node whose series are current but whose last scrape is old:
// the store answers with a series' last sample for minutes once nothing
// scrapes it any more (Prometheus itself down or restarting, or a
// VictoriaMetrics no longer fed by it), and writes no staleness marker
// then.
const (
	// minScrapes is the fewest scrapes in the window that say an interval
	// (two spacings at least).
	minScrapes = 3
	// DefaultScrapeInterval is a node's interval while it is not known
	// (fewer than minScrapes in the window): Prometheus's default, so a
	// node scraped that seldom never flips, while SilentScrapes of it stay
	// under Prometheus's 5 min lookback.
	DefaultScrapeInterval = time.Minute
	// SilentScrapes is how many of its intervals a node's last scrape may
	// be old before the node is silent: one late or failed scrape is not.
	SilentScrapes = 3
)

// intervalWindows are the spans each node's scrapes are counted over:
// short ones give the interval of a node scraped for a little while
// (since it started, or since Prometheus did), long ones that of a node
// scraped seldom.
var intervalWindows = []time.Duration{15 * time.Second, time.Minute, 4 * time.Minute, 10 * time.Minute}

// PromClient queries Prometheus's HTTP API (client_golang's
// api/prometheus/v1).
type PromClient struct {
	api v1.API
	o   PromOptions

	mu sync.Mutex
	// down keeps what was read of a node whose series are not current (its
	// last scrape and the figures of that scrape: they cannot change while
	// it stays down), so a refresh reads them once.
	down map[string]PromNode
	// spacing is, of each current node, its last scrape as a refresh read
	// it and the step from the one read before (scrapeIntervals).
	spacing map[string]scrapeStep
}

// scrapeStep is what the refreshes saw of a node's scrapes: its last,
// and the step to it from the one before, a direct measure of its scrape
// interval (a multiple of it where a refresh missed scrapes), which
// follows a change of the interval at once and is stretched by a gap in
// the store's data only until the next scrape, where a count over a
// window is for as long as the window holds the gap.
type scrapeStep struct {
	last time.Time
	step time.Duration
}

// NewPromClient checks the URL and returns a client.
func NewPromClient(o PromOptions) (*PromClient, error) {
	if o.Interval <= 0 {
		o.Interval = 2 * time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.Lookback <= 0 {
		o.Lookback = DefaultLookback
	}
	if o.UnreachableAfter <= 0 {
		o.UnreachableAfter = DefaultUnreachableAfter
	}
	c, err := api.NewClient(api.Config{Address: o.URL, RoundTripper: cappedTransport{rt: freshTransport{promTransport()}, limit: MaxPromBody}})
	if err != nil {
		return nil, fmt.Errorf("--prometheus %s: %w", o.URL, err)
	}
	return &PromClient{api: v1.NewAPI(c), o: o, down: map[string]PromNode{}, spacing: map[string]scrapeStep{}}, nil
}

// PromNode is one node as Prometheus has it: a snapshot rebuilt from its
// series, the summary, and when it was last scraped.
type PromNode struct {
	Name string
	// Target is the scrape target its series come from (Node.Target),
	// "" when Prometheus did not say.
	Target string
	// Snap is nil for a node that is down and whose last scrape could not
	// be read back.
	Snap *model.Snapshot
	Sum  Summary
	// Scraped is the node's last scrape (its samples' own timestamp).
	Scraped time.Time
	// Down says why the node's series are not current ("" when they
	// are): its target is down, or no longer scraped; Snap is then what
	// its last scrape said.
	Down string
	// Waiting says why a node that Prometheus scrapes now has no figures
	// ("" otherwise): its exporter is up but has published no snapshot
	// yet (it serves fgtop_build_info alone). Snap is then nil, Down "",
	// and Scraped its current scrape, read afresh every refresh.
	Waiting string
	// Conflict says why the node has no figures though it is scraped:
	// several targets export its name (sharedNames), or it exports values
	// no node has (badValues). Snap is then nil.
	Conflict string
	// Silent says why a node whose series are still current is not heard
	// from ("" when its last scrape is recent): nothing scraped it for
	// Overdue or longer. It is then stale, and unreachable once its last
	// scrape is Overdue + --unreachable-after old.
	Silent string
	// Overdue is how old a node's last scrape may be before it is silent:
	// SilentScrapes of its own scrape interval, and at least
	// --unreachable-after.
	Overdue time.Duration

	// unread says why a down node's last scrape or figures could not be
	// read this refresh ("" when they were).
	unread string
}

// Note marks a node Prometheus has more devices of than the fleet
// follows (Summary.TooLarge): its totals are shown, its largest fit is
// not searched.
func (n PromNode) Note() string {
	if n.Snap == nil || !n.Sum.TooLarge {
		return ""
	}
	return (&TooLargeError{Devices: len(n.Snap.Devices)}).Error() + ": largest fit not searched"
}

// WaitingFirstSnapshot is PromNode.Waiting for an exporter that is up but
// has published no snapshot yet.
const WaitingFirstSnapshot = "exporter up, no snapshot yet"

// Refresh runs one round of queries and rebuilds every node the series
// name, every node scraped now that has published no snapshot yet
// (Waiting), and every node scraped within the lookback whose series are
// no longer current, as its last scrape had it (Down says why). Amounts come
// back exactly: the exporter's values are decimals with few digits, and a
// float64 printed shortest ('f', -1) parses back to the decimal it was
// made from.
func (c *PromClient) Refresh(ctx context.Context) ([]PromNode, error) {
	return c.refreshAt(ctx, time.Now())
}

// refreshAt is Refresh with every query made at now: the present, or a
// past moment for `fleet --at`.
func (c *PromClient) refreshAt(parent context.Context, now time.Time) ([]PromNode, error) {
	ctx, cancel := context.WithTimeout(parent, c.o.Timeout)
	defer cancel()
	lb := pmodel.Duration(c.o.Lookback).String()
	qs := append(slices.Clone(promQueries), qScrapedAt, fmt.Sprintf(qKnownOver, lb), fmt.Sprintf(qUpOver, lb), qTargets, qCounts())
	res, err := c.queryAll(ctx, qs, now)
	if err != nil && parent.Err() == nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		// The live console shows this beside every node: the store and
		// its bound, not "context deadline exceeded".
		return nil, fmt.Errorf("%s did not answer within %s", c.o.URL, c.o.Timeout)
	}
	if err != nil {
		return nil, err
	}
	n := len(promQueries)
	scraped := scrapeTimes(res[n])
	current, err := buildPromNodes(res[:n], scraped, c.o.Settings)
	if err != nil {
		return nil, err
	}
	up := map[string]bool{}
	for _, smp := range res[n+2] {
		up[string(smp.Metric["node"])] = smp.Value == 1
	}
	isCurrent := map[string]bool{}
	for _, pn := range current {
		isCurrent[pn.Name] = true
	}
	// A node scraped now (its fgtop_build_info is current) whose
	// snapshot series are not has an exporter that is up but has
	// published no snapshot yet: it is not down, and its scrape time is
	// the current one, every refresh.
	var waiting []PromNode
	for name, at := range scraped {
		if !isCurrent[name] {
			waiting = append(waiting, PromNode{Name: name, Scraped: at, Waiting: WaitingFirstSnapshot})
			isCurrent[name] = true
		}
	}
	var gone []string
	for _, smp := range res[n+1] {
		if name := string(smp.Metric["node"]); !isCurrent[name] {
			gone = append(gone, name)
		}
	}
	down := c.downNodes(ctx, gone, now)
	for i := range down {
		isUp, isTarget := up[down[i].Name]
		down[i].Down = goneReason(isTarget, isUp, len(current) > 0)
		if down[i].unread != "" {
			down[i].Down += " (" + down[i].unread + ")"
		}
	}
	out := append(append(current, waiting...), down...)
	shared, targets := sharedNames(res[n+3]), targetsByNode(res[n+3])
	for i := range out {
		if why := shared[out[i].Name]; why != "" {
			out[i] = PromNode{Name: out[i].Name, Scraped: out[i].Scraped, Conflict: why}
		}
		if t := targets[out[i].Name]; t != "" {
			out[i].Target = t
		}
	}
	intervals := c.learnSpacing(scrapeIntervals(byWindow(res[n+4]), scraped, now), scraped)
	for i := range out {
		p := &out[i]
		if p.Down != "" || p.Conflict != "" || p.Scraped.IsZero() {
			continue
		}
		p.Overdue = overdue(intervals[p.Name], c.o.UnreachableAfter)
		if age := now.Sub(p.Scraped); age >= p.Overdue {
			p.Silent = silentWhy(intervals[p.Name])
		}
	}
	slices.SortFunc(out, func(a, b PromNode) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}

// qCounts is qCount over every one of intervalWindows, in one query.
func qCounts() string {
	qs := make([]string, len(intervalWindows))
	for i, w := range intervalWindows {
		qs[i] = fmt.Sprintf(qCount, pmodel.Duration(w), i)
	}
	return strings.Join(qs, " or ")
}

// byWindow splits qCounts' answer by window, in intervalWindows' order;
// a sample of no window asked is dropped.
func byWindow(vec pmodel.Vector) []pmodel.Vector {
	out := make([]pmodel.Vector, len(intervalWindows))
	for _, smp := range vec {
		i, err := strconv.Atoi(string(smp.Metric["window"]))
		if err != nil || i < 0 || i >= len(out) || strconv.Itoa(i) != string(smp.Metric["window"]) {
			continue
		}
		out[i] = append(out[i], smp)
	}
	return out
}

// scrapeIntervals reads qCount over each of intervalWindows (counts, in
// that order), evaluated at now: each current node's scrape interval.
// A window holding c scrapes, the last at `last`, holds c-1 spacings
// within (window start, last]: their length over c-1 is never shorter
// than the node's interval, and close to it when the node was scraped
// all through the window; the shortest of the windows' is taken. A node
// scraped for part of a window only, or with a gap in it, reads as
// scraped less often than it is there: judged more patiently, never too
// early. A node with fewer than minScrapes in every window, or whose
// answers are no counts, is left out (not known).
func scrapeIntervals(counts []pmodel.Vector, scraped map[string]time.Time, now time.Time) map[string]time.Duration {
	out := make(map[string]time.Duration)
	for wi, vec := range counts {
		if wi >= len(intervalWindows) {
			break
		}
		start := now.Add(-intervalWindows[wi])
		for _, smp := range vec {
			name := string(smp.Metric["node"])
			last, ok := scraped[name]
			c := float64(smp.Value)
			if !ok || math.IsNaN(c) || c < minScrapes || c > 1e9 || !last.After(start) || last.After(now) {
				continue
			}
			iv := time.Duration(float64(last.Sub(start)) / (math.Floor(c) - 1)).Round(time.Millisecond)
			if old, seen := out[name]; iv > 0 && (!seen || iv < old) {
				out[name] = iv
			}
		}
	}
	return out
}

// learnSpacing records each current node's last scrape (scraped) and
// returns intervals where, for each node whose step between two scrapes
// the refreshes read is known, that step is the interval. Nodes no
// longer current are forgotten: what is kept is bounded by the store's
// answer.
func (c *PromClient) learnSpacing(intervals map[string]time.Duration, scraped map[string]time.Time) map[string]time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name := range c.spacing {
		if _, ok := scraped[name]; !ok {
			delete(c.spacing, name)
		}
	}
	for name, at := range scraped {
		st := c.spacing[name]
		if at.After(st.last) {
			if !st.last.IsZero() {
				st.step = at.Sub(st.last)
			}
			st.last = at
		}
		c.spacing[name] = st
		if st.step > 0 {
			intervals[name] = st.step
		}
	}
	return intervals
}

// overdue is how old a node's last scrape may be before it is silent,
// of its scrape interval (0: not known).
func overdue(interval, unreachableAfter time.Duration) time.Duration {
	return max(SilentScrapes*cmp.Or(interval, DefaultScrapeInterval), unreachableAfter)
}

// silentWhy says why a node whose series are current is silent (its
// reason then says since when).
func silentWhy(interval time.Duration) string {
	every := "its scrape interval not known yet"
	if interval > 0 {
		every = "scraped about every " + interval.Round(100*time.Millisecond).String() + " before"
	}
	return "no longer scraped (" + every + "): the store is no longer fed (Prometheus itself down or restarting?)"
}

// sharedNames says, of each node name that more than one target exports
// (qTargets), which targets do.
func sharedNames(vec pmodel.Vector) map[string]string {
	targets := map[string][]string{}
	for _, smp := range vec {
		name := string(smp.Metric["node"])
		targets[name] = append(targets[name], string(smp.Metric["job"])+"/"+string(smp.Metric["instance"]))
	}
	out := map[string]string{}
	for name, ts := range targets {
		if len(ts) > 1 {
			slices.Sort(ts)
			out[name] = fmt.Sprintf("%d Prometheus targets export this node name (%s): two nodes share it, and their series cannot be told apart; give each exporter its own --node", len(ts), untrusted.Text(strings.Join(ts, ", ")))
		}
	}
	return out
}

// targetsByNode says, of each node name in vec, the scrape targets
// (instance labels) that export it, comma-separated.
func targetsByNode(vec pmodel.Vector) map[string]string {
	insts := map[string][]string{}
	for _, smp := range vec {
		name := string(smp.Metric["node"])
		is := insts[name] // listed even with no instance label
		if inst := string(smp.Metric["instance"]); inst != "" && !slices.Contains(is, inst) {
			is = append(is, inst)
		}
		insts[name] = is
	}
	out := make(map[string]string, len(insts))
	for name, is := range insts {
		slices.Sort(is)
		out[name] = untrusted.Text(strings.Join(is, ", "))
	}
	return out
}

// RefreshAnswered is Refresh for `fleet --once` and --fit: while a node's
// exporter is up but has published no snapshot yet (Waiting), it
// refreshes again every interval, for at most wait.
func (c *PromClient) RefreshAnswered(ctx context.Context, wait time.Duration) ([]PromNode, error) {
	deadline := time.Now().Add(wait)
	for {
		nodes, err := c.Refresh(ctx)
		// A silent node's exporter will publish nothing while nobody
		// scrapes it: not waited for.
		waiting := slices.ContainsFunc(nodes, func(n PromNode) bool { return n.Waiting != "" && n.Silent == "" })
		if err != nil || !waiting || time.Now().Add(c.o.Interval).After(deadline) {
			return nodes, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(c.o.Interval):
		}
	}
}

// Bounds on what Prometheus may make the fleet hold (issue 23: an endless
// answer took the client to 7.5 GB in 10 s).
const (
	// MaxPromBody is the longest answer read from Prometheus, per query:
	// a fleet of thousands of nodes answers a few MiB.
	MaxPromBody = 8 << 20
	// promParallel is how many queries run at once, so that at most this
	// many answers are held at a time.
	promParallel = 3
)

// ErrPromTooLarge is an answer longer than MaxPromBody.
var ErrPromTooLarge = fmt.Errorf("Prometheus answered more than %d MiB to one query", MaxPromBody>>20)

// freshTransport asks every query with nocache=1, which VictoriaMetrics
// reads as "hide no recent data" (by default it hides the newest 30 s
// from queries, -search.latencyOffset, so that every node's last scrape
// would read 30 s old and a silent one be judged 30 s late); Prometheus
// ignores it.
type freshTransport struct{ rt http.RoundTripper }

func (f freshTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	q := r.URL.Query()
	q.Set("nocache", "1")
	r.URL.RawQuery = q.Encode()
	return f.rt.RoundTrip(r) //nolint:wrapcheck // the transport's own error, for the client
}

// cappedTransport cuts every answer's body at limit bytes.
type cappedTransport struct {
	rt    http.RoundTripper
	limit int64
}

func (c cappedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.rt.RoundTrip(r)
	if err != nil {
		return resp, err //nolint:wrapcheck // the transport's own error, for the client
	}
	resp.Body = &cappedBody{ReadCloser: resp.Body, left: c.limit}
	return resp, nil
}

type cappedBody struct {
	io.ReadCloser
	left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	// One byte past the limit tells an answer of exactly the limit from
	// a longer one.
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.ReadCloser.Read(p)
	if int64(n) > b.left {
		return 0, ErrPromTooLarge
	}
	b.left -= int64(n)
	return n, err //nolint:wrapcheck // io.EOF must stay itself
}

// queryAll runs instant queries at one time, promParallel at a time.
func (c *PromClient) queryAll(ctx context.Context, qs []string, at time.Time) ([]pmodel.Vector, error) {
	res := make([]pmodel.Vector, len(qs))
	errs := make(chan error, len(qs))
	sem := make(chan struct{}, promParallel)
	for i, q := range qs {
		go func() {
			select {
			case sem <- struct{}{}:
				defer func() { <-sem }()
			case <-ctx.Done():
				errs <- ctx.Err()
				return
			}
			v, _, _, err := c.api.Query(ctx, q, at)
			if err != nil {
				errs <- promErr(c.o.URL, q, err)
				return
			}
			if v == nil {
				// {"status":"success"} without "data": not Prometheus's
				// answer to an instant query, whatever sent it.
				errs <- fmt.Errorf("query %s: an answer without data, want a vector", q)
				return
			}
			vec, ok := v.(pmodel.Vector)
			if !ok {
				errs <- fmt.Errorf("query %s: a %s, want a vector", q, v.Type())
				return
			}
			for _, smp := range vec {
				cleanLabels(smp.Metric)
			}
			res[i] = vec
			errs <- nil
		}()
	}
	var first error
	for range qs {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return res, first
}

// scrapeTimes reads qScrapedAt: node → its last scrape.
func scrapeTimes(vec pmodel.Vector) map[string]time.Time {
	out := make(map[string]time.Time, len(vec))
	for _, smp := range vec {
		out[string(smp.Metric["node"])] = time.UnixMilli(int64(math.Round(float64(smp.Value) * 1000)))
	}
	return out
}

// downNodes reads the nodes whose series are not current, as their last
// scrape had them: when that was (the newest raw sample of
// fgtop_build_info within the lookback, asked every refresh), then every
// query at that time, for that node alone. What it read is kept while the
// node's last scrape stays the same; a newer one (its target came back
// for a scrape between two refreshes) is read again. A node whose figures
// could not be read is listed without them (unread says why, Scraped its
// last scrape when known) and read again next refresh: a failure here
// never fails the refresh, whose current nodes are what matter most.
func (c *PromClient) downNodes(ctx context.Context, names []string, now time.Time) []PromNode {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name := range c.down {
		if !slices.Contains(names, name) {
			delete(c.down, name) // back, or out of the lookback
		}
	}
	if len(names) == 0 {
		return nil
	}
	last, err := c.lastScrapes(ctx, names, now)
	var out []PromNode
	for _, name := range names {
		if err != nil {
			pn, ok := c.down[name]
			if !ok {
				pn = PromNode{Name: name, unread: "its last scrape could not be read: " + err.Error()}
			}
			out = append(out, pn)
			continue
		}
		ls, ok := last[name]
		if !ok {
			delete(c.down, name)
			continue // out of the lookback since the first query
		}
		at := ls.at
		if pn, ok := c.down[name]; ok && pn.Scraped.Equal(at.Time()) {
			out = append(out, pn)
			continue
		}
		delete(c.down, name)
		pn, err := c.readAt(ctx, name, at.Time())
		if err != nil {
			out = append(out, PromNode{Name: name, Target: ls.target, Scraped: at.Time(), unread: "its figures could not be read: " + err.Error()})
			continue
		}
		pn.Target = ls.target
		c.down[name] = pn
		out = append(out, pn)
	}
	return out
}

// lastScrape is a node's newest raw sample of fgtop_build_info: when, and
// the scrape target (instance label) it came from.
type lastScrape struct {
	at     pmodel.Time
	target string
}

// lastScrapes returns each node's newest raw sample of fgtop_build_info
// within the lookback.
func (c *PromClient) lastScrapes(ctx context.Context, names []string, now time.Time) (map[string]lastScrape, error) {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = regexp.QuoteMeta(n)
	}
	q := fmt.Sprintf("fgtop_build_info{node=~%s}[%s]", strconv.Quote(strings.Join(quoted, "|")), pmodel.Duration(c.o.Lookback))
	// Errors name the query short: the full one lists every down node.
	short := fmt.Sprintf("fgtop_build_info{node=~...}[%s]", pmodel.Duration(c.o.Lookback))
	v, _, _, err := c.api.Query(ctx, q, now)
	if err != nil {
		return nil, promErr(c.o.URL, short, err)
	}
	if v == nil {
		return nil, fmt.Errorf("query %s: an answer without data, want a matrix", short)
	}
	m, ok := v.(pmodel.Matrix)
	if !ok {
		return nil, fmt.Errorf("query %s: a %s, want a matrix", short, v.Type())
	}
	for _, ss := range m {
		cleanLabels(ss.Metric)
	}
	last := map[string]lastScrape{}
	for _, ss := range m {
		// VictoriaMetrics returns the staleness marker (a NaN) that ended
		// the series as a sample: the last scrape is the sample before it.
		for k := len(ss.Values) - 1; k >= 0; k-- {
			if math.IsNaN(float64(ss.Values[k].Value)) {
				continue
			}
			name := string(ss.Metric["node"])
			if at := ss.Values[k].Timestamp; at > last[name].at {
				last[name] = lastScrape{at: at, target: untrusted.Text(string(ss.Metric["instance"]))}
			}
			break
		}
	}
	return last, nil
}

// readAt reads one node as its scrape at at had it.
func (c *PromClient) readAt(ctx context.Context, name string, at time.Time) (PromNode, error) {
	pn := PromNode{Name: name, Scraped: at}
	sel := fmt.Sprintf("node=%s", strconv.Quote(name))
	qs := make([]string, len(promQueries))
	for i, q := range promQueries {
		if strings.HasSuffix(q, "}") { // a selector already: add the matcher
			qs[i] = q[:len(q)-1] + ", " + sel + "}"
		} else {
			qs[i] = q + "{" + sel + "}"
		}
	}
	res, err := c.queryAll(ctx, qs, at)
	if err != nil {
		return pn, err
	}
	got, err := buildPromNodes(res, map[string]time.Time{name: at}, c.o.Settings)
	if err != nil {
		return pn, err
	}
	if len(got) == 1 {
		pn = got[0]
	}
	return pn, nil
}

// series is one sample's labels and exact value.
type series struct {
	l pmodel.Metric
	v model.Dec
}

// cleanLabels passes a series' label values through the one rule for
// outside text as they come in: node names, device ids, agent ids and
// models are all a node's (or anyone's who can push to Prometheus) to
// choose. A node whose name needed escaping is then asked for by the
// escaped name, which Prometheus does not know: its last figures, once
// it is down, cannot be read, and it says so.
func cleanLabels(m pmodel.Metric) {
	for k, v := range m {
		if !untrusted.Safe(string(v)) {
			m[k] = pmodel.LabelValue(untrusted.Text(string(v)))
		}
	}
}

func (s series) get(name string) string { return string(s.l[pmodel.LabelName(name)]) }

// byNode groups a vector by its node label.
func byNode(vec pmodel.Vector) (map[string][]series, error) {
	out := map[string][]series{}
	for _, smp := range vec {
		f := float64(smp.Value)
		// 'f', not 'g': the shortest digits without an exponent, so a
		// byte size such as 128849018880 reads as the node prints it,
		// not as 1.2884901888E+11.
		d, err := model.ParseDec(strconv.FormatFloat(f, 'f', -1, 64))
		if err != nil {
			return nil, fmt.Errorf("%s: value %v: %w", smp.Metric, f, err)
		}
		node := string(smp.Metric["node"])
		out[node] = append(out[node], series{l: smp.Metric, v: d})
	}
	return out, nil
}

// badValues says, of each node with one, the first sample of g (one map a
// query, by node) that no node's exporter sends: a value that is not
// finite, or a negative one outside the exponent series (signed, the
// indexes in signed). Read as figures, a NaN capacity or a negative held
// amount would make the fleet's free, largest fit and --fit answers up;
// the node is shown without figures, saying why, and the others are not
// touched.
func badValues(g []map[string][]series, signed ...int) map[string]string {
	out := map[string]string{}
	for i, m := range g {
		for name, xs := range m {
			if out[name] != "" {
				continue
			}
			for _, x := range xs {
				what := ""
				switch {
				case !x.v.IsFinite():
					what = "not a number"
				case x.v.Sign() < 0 && !slices.Contains(signed, i):
					what = "negative"
				default:
					continue
				}
				metric := string(x.l["__name__"])
				if metric == "" {
					metric = promQueries[i]
				}
				out[name] = fmt.Sprintf("its exporter's %s%s is %s (%s): no figures of it are shown", untrusted.Text(metric), deviceWords(x), x.v, what)
				break
			}
		}
	}
	return out
}

// deviceWords names a sample's device and slot, where it has them.
func deviceWords(x series) string {
	var parts []string
	for _, k := range []string{"agent", "device", "slot"} {
		if v := x.get(k); v != "" {
			parts = append(parts, k+" "+untrusted.Text(v))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " for " + strings.Join(parts, ", ")
}

// exponents maps (device, slot) to the decimal exponent an exponent
// series gives.
func exponents(xs []series) map[[2]string]int32 { return exponentsBy(xs, "device") }

// exponentsBy maps (the label by, slot) to the decimal exponent an
// exponent series gives.
func exponentsBy(xs []series, by string) map[[2]string]int32 {
	out := make(map[[2]string]int32, len(xs))
	for _, x := range xs {
		if e, err := x.v.Int64(); err == nil && e >= -30 && e <= 30 {
			out[[2]string{x.get(by), x.get("slot")}] = int32(e)
		}
	}
	return out
}

// withExponent gives v the exponent the node printed it with, when it is
// known and restoring it changes no digit (an older exporter sends none).
func withExponent(v model.Dec, exps map[[2]string]int32, k [2]string) model.Dec {
	e, ok := exps[k]
	if !ok {
		return v
	}
	q, err := v.Quantize(e, apd.RoundHalfEven)
	if err != nil || !q.Equal(v) {
		return v
	}
	return q
}

// buildPromNodes rebuilds the nodes of promQueries' results; scraped
// gives each node's last scrape.
func buildPromNodes(res []pmodel.Vector, scraped map[string]time.Time, settings Settings) ([]PromNode, error) {
	g := make([]map[string][]series, len(res))
	for i, v := range res {
		m, err := byNode(v)
		if err != nil {
			return nil, err
		}
		g[i] = m
	}
	const (
		qInfo = iota
		qCap
		qHeld
		qDevKernels
		qAlloc
		qAgent
		qOwner
		qMemShare
		qAgentHeld
		qKernels
		qIssues
		qNode
		qSource
		qHostMem
		qSeq
		qCapExp
		qHeldExp
		qAgentGiven
		qAgentKernels
		qGivenExp
	)
	var names []string
	for n := range g[qSeq] {
		names = append(names, n)
	}
	for n := range g[qInfo] {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	bad := badValues(g, qCapExp, qHeldExp, qGivenExp)
	var out []PromNode
	for _, name := range names {
		if why := bad[name]; why != "" {
			out = append(out, PromNode{Name: name, Scraped: scraped[name], Conflict: why})
			continue
		}
		s := &model.Snapshot{Node: name, Usage: map[model.DeviceKey]*model.DeviceUsage{}}
		pn := PromNode{Name: name, Scraped: scraped[name]}
		for _, x := range g[qSeq][name] {
			s.Seq = uint64(x.v.Float64())
		}
		for _, x := range g[qNode][name] {
			s.Mode, s.ConfigPath = x.get("mode"), x.get("config")
		}
		for _, x := range g[qSource][name] {
			s.Source = model.SourceInfo{Kind: x.get("kind"), Health: x.get("health")}
		}
		for _, x := range g[qHostMem][name] {
			v, _ := x.v.Int64()
			s.HostMemBytes = v
		}
		for _, x := range g[qAlloc][name] {
			a := model.Allocator{Fractional: x.get("allocation_mode") == "fractional", AffinityPolicy: x.get("affinity_policy")}
			if q := x.get("quantum_size"); q != "" {
				if d, err := model.ParseDec(q); err == nil {
					a.Quantum = d
				}
			}
			if o := x.get("allocation_order"); o != "" {
				for _, n := range strings.Split(o, ",") {
					a.AllocationOrder = append(a.AllocationOrder, model.DeviceName(n))
				}
			}
			s.Allocator = a
		}
		// Devices in inventory order, with their capacity.
		type posDev struct {
			pos int
			d   model.Device
		}
		var devs []posDev
		// A float sample loses a decimal's trailing zeros ("1.00" comes back
		// as 1); the exporter's exponent series give them back, so amounts
		// read through Prometheus print as the node prints them.
		capExp, heldExp := exponents(g[qCapExp][name]), exponents(g[qHeldExp][name])
		capOf := map[[2]string]model.Dec{}
		for _, x := range g[qCap][name] {
			k := [2]string{x.get("device"), x.get("slot")}
			capOf[k] = withExponent(x.v, capExp, k)
		}
		for _, x := range g[qInfo][name] {
			pos, _ := strconv.Atoi(x.get("position"))
			idx, _ := strconv.Atoi(x.get("index"))
			numa := -1
			if v := x.get("numa_node"); v != "" {
				numa, _ = strconv.Atoi(v)
			}
			// The exporter leaves the capacity out where the node cannot
			// know it (fractional settings never read): unknown here too,
			// not a capacity of 0 that every held share would overrun.
			capacity, known := capOf[[2]string{x.get("device"), x.get("slot")}]
			d := model.Device{ID: model.DeviceID(x.get("device")), Name: model.DeviceName(x.get("plugin")), Slot: model.SlotName(x.get("slot")),
				SlotType: model.SlotType(x.get("slot_type")), Index: idx, NUMANode: numa, Model: x.get("model"), UUID: x.get("uuid"),
				Parent: model.DeviceID(x.get("parent")), Capacity: capacity, CapacityUnknown: !known}
			devs = append(devs, posDev{pos, d})
		}
		slices.SortFunc(devs, func(a, b posDev) int { return cmp.Compare(a.pos, b.pos) })
		pluginOf := map[model.DeviceID][]model.DeviceName{}
		for _, d := range devs {
			s.Devices = append(s.Devices, d.d)
			pluginOf[d.d.ID] = append(pluginOf[d.d.ID], d.d.Name)
		}
		// fgtop_device_held has no plugin label: a device id shared across
		// plugins (cpu core "0", a cuda_open GPU "0") is told apart by the
		// slot's plugin.
		keyOf := func(dev, slot string) model.DeviceKey {
			return model.DeviceKey{Name: model.SlotName(slot).DeviceName(), ID: model.DeviceID(dev)}
		}
		for _, x := range g[qHeld][name] {
			k := keyOf(x.get("device"), x.get("slot"))
			u := s.Usage[k]
			if u == nil {
				u = &model.DeviceUsage{Key: k, Held: model.ResourceSlot{}}
				s.Usage[k] = u
			}
			u.Held[model.SlotName(x.get("slot"))] = withExponent(x.v, heldExp, [2]string{x.get("device"), x.get("slot")})
		}
		for _, x := range g[qDevKernels][name] {
			k := model.DeviceKey{Name: model.DeviceName(x.get("plugin")), ID: model.DeviceID(x.get("device"))}
			n, _ := x.v.Int64()
			if u := s.Usage[k]; u != nil {
				u.Kernels = int(n)
			} else if n > 0 {
				s.Usage[k] = &model.DeviceUsage{Key: k, Held: model.ResourceSlot{}, Kernels: int(n)}
			}
		}
		// Drop the zero entries the exporter lists for the capacity slot:
		// the snapshot lists only what is held.
		for k, u := range s.Usage {
			for slot, v := range u.Held {
				if v.IsZero() {
					delete(u.Held, slot)
				}
			}
			if len(u.Held) == 0 && u.Kernels == 0 {
				delete(s.Usage, k)
			}
		}
		// Agents, their partitions and what their kernels hold: one
		// allocation per agent is what the placement loads (LoadAll sums
		// the kernels anyway).
		type posAgent struct {
			pos int
			a   model.Agent
		}
		var agents []posAgent
		for _, x := range g[qAgent][name] {
			pos, _ := strconv.Atoi(x.get("position"))
			agents = append(agents, posAgent{pos, model.Agent{ID: model.AgentID(x.get("agent")), ScratchRoot: x.get("scratch_root")}})
		}
		slices.SortFunc(agents, func(a, b posAgent) int { return cmp.Compare(a.pos, b.pos) })
		owns := map[model.AgentID]map[model.DeviceName][]model.DeviceID{}
		for _, x := range g[qOwner][name] {
			a := model.AgentID(x.get("agent"))
			if owns[a] == nil {
				owns[a] = map[model.DeviceName][]model.DeviceID{}
			}
			n := model.DeviceName(x.get("plugin"))
			owns[a][n] = append(owns[a][n], model.DeviceID(x.get("device")))
		}
		mem := map[model.AgentID]model.Dec{}
		for _, x := range g[qMemShare][name] {
			mem[model.AgentID(x.get("agent"))] = x.v
		}
		// What the slot-based form gives each agent: the manager's limit
		// (an exporter before it sends none, and --fit then judges by
		// the allocators alone).
		given := map[model.AgentID]model.ResourceSlot{}
		givenExp := exponentsBy(g[qGivenExp][name], "agent")
		for _, x := range g[qAgentGiven][name] {
			a := model.AgentID(x.get("agent"))
			if given[a] == nil {
				given[a] = model.ResourceSlot{}
			}
			given[a][model.SlotName(x.get("slot"))] = withExponent(x.v, givenExp, [2]string{x.get("agent"), x.get("slot")})
		}
		alloc := map[model.AgentID]model.Allocations{}
		for _, x := range g[qAgentHeld][name] {
			a := model.AgentID(x.get("agent"))
			if alloc[a] == nil {
				alloc[a] = model.Allocations{}
			}
			slot := model.SlotName(x.get("slot"))
			if alloc[a][slot] == nil {
				alloc[a][slot] = map[model.DeviceID]model.Dec{}
			}
			// An agent's holding on a device is part of the device's held
			// amount: it reads at that amount's exponent (what the node
			// prints as 0.80 reads 0.80, not the float's 0.8).
			alloc[a][slot][model.DeviceID(x.get("device"))] = withExponent(x.v, heldExp, [2]string{x.get("device"), x.get("slot")})
		}
		agentKernels := map[model.AgentID]int{}
		for _, x := range g[qAgentKernels][name] {
			n, _ := x.v.Int64()
			agentKernels[model.AgentID(x.get("agent"))] = int(n)
		}
		var kernels []*model.Kernel
		for _, pa := range agents {
			a := pa.a
			a.Owns, a.Mem, a.Given, a.Kernels = owns[a.ID], mem[a.ID], given[a.ID], agentKernels[a.ID]
			// What the manager's limit subtracts from the amount given:
			// without it, every agent read as holding nothing, and --fit
			// sent requests to agents that were full.
			a.Held = model.ResourceSlot{}
			for slot, devs := range alloc[a.ID] {
				sum := model.Zero
				for _, v := range devs {
					sum = sum.Add(v)
				}
				if !sum.IsZero() {
					a.Held[slot] = sum
				}
			}
			s.Agents = append(s.Agents, a)
		}
		holds := map[model.DeviceKey][]model.Holding{}
		for a, al := range alloc {
			kid := model.KernelID("all kernels of " + cmp.Or(string(a), "no agent"))
			kernels = append(kernels, &model.Kernel{ID: kid, Agent: a,
				State: model.KernelOK, Alloc: al, AgentBy: model.AgentByRecord})
			// The devices' bars are drawn from their holdings: one per
			// agent, as the per-agent rows say (kernels are not series).
			for slot, devs := range al {
				if !model.CarriesHoldings(slot.DeviceName()) {
					continue
				}
				for id, v := range devs {
					k := model.DeviceKey{Name: slot.DeviceName(), ID: id}
					holds[k] = append(holds[k], model.Holding{Kernel: kid, Agent: a, Slot: slot, Amount: v})
				}
			}
		}
		for k, hs := range holds {
			if u := s.Usage[k]; u != nil {
				u.SetHoldings(hs)
			}
		}
		s.SetKernels(kernels)
		pn.Snap = s
		pn.Sum = Summarize(s, settings)
		// What Prometheus says itself, not the synthetic kernels above.
		pn.Sum.Kernels, pn.Sum.Issues = 0, 0
		for _, x := range g[qKernels][name] {
			n, _ := x.v.Int64()
			pn.Sum.Kernels += int(n)
		}
		nk := pn.Sum.Kernels
		s.SummaryKernels = &nk
		var warns, errs int64
		for _, x := range g[qIssues][name] {
			n, _ := x.v.Int64()
			switch x.get("severity") {
			case "warning":
				warns += n
			case "error":
				errs += n
			}
		}
		pn.Sum.Issues = int(warns + errs)
		// Its console (opened from the fleet) says what Prometheus does
		// not carry, and the node's own count of its issues, at their
		// worst severity: never "no issues" on a node that has some.
		sev := model.SevInfo
		switch {
		case errs > 0:
			sev = model.SevError
		case warns > 0:
			sev = model.SevWarning
		}
		s.Issues = append(s.Issues, model.Issue{Severity: sev, Code: model.IssueFromSummary,
			Message: fmt.Sprintf("seen through Prometheus: the node has %d error(s) and %d warning(s), which its own console lists (ssh to it, or fleet over SSH); kernels are not series, so each agent's holdings show as one row", errs, warns)})
		s.Time = pn.Scraped
		out = append(out, pn)
	}
	return out, nil
}

// FollowPrometheus refreshes the fleet from Prometheus every interval
// until ctx is done. A node whose series are current is live, last seen at
// its last scrape. One whose exporter is up but has published no snapshot
// yet is connecting (stale on the figures it had before, if any), last
// seen at its current scrape: never unreachable while it is scraped. A
// node whose series stopped (its target is down: the failed scrape made
// them stale) is still listed while it was scraped within the lookback,
// with its last scrape's figures, stale, then unreachable: never dropped.
// A failed refresh reports every known node.
func FollowPrometheus(ctx context.Context, t *Tracker, c *PromClient) {
	tick := time.NewTicker(c.o.Interval)
	defer tick.Stop()
	last := map[string]uint64{}
	for {
		nodes, err := c.Refresh(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			for _, n := range t.Latest().Nodes {
				t.Send(ctx, Event{Addr: n.Addr, Err: fmt.Errorf("prometheus: %w", err)})
			}
			t.SetError(ctx, err)
		} else {
			t.SetError(ctx, nil)
			for _, n := range nodes {
				ev := Event{Addr: n.Name, Seen: n.Scraped, Alive: true, Waiting: n.Waiting}
				switch {
				case n.Conflict != "":
					ev = Event{Addr: n.Name, Seen: n.Scraped, Err: errors.New(n.Conflict)}
				case n.Down != "":
					ev = Event{Addr: n.Name, Seen: n.Scraped, Err: errors.New(downReason(n, time.Now()))}
				case n.Silent != "":
					// Stale, not unreachable, until --unreachable-after past
					// the silence it took to tell.
					ev = Event{Addr: n.Name, Seen: n.Scraped, Err: errors.New(silentReason(n, time.Now())), Grace: n.Overdue}
				}
				ev.Target = n.Target
				if seq, ok := last[n.Name]; n.Snap != nil && (!ok || seq != n.Snap.Seq) {
					last[n.Name] = n.Snap.Seq
					ev.Snap, ev.Sum, ev.Alive = n.Snap, n.Sum, false
				}
				ev.Note = n.Note()
				t.Send(ctx, ev)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// silentReason says why a node whose series are current is not heard
// from, and since when.
func silentReason(n PromNode, now time.Time) string {
	return fmt.Sprintf("%s; last scraped %s ago", n.Silent, now.Sub(n.Scraped).Round(time.Second))
}

// downReason says why a node is not current, and since when.
func downReason(n PromNode, now time.Time) string {
	if n.Scraped.IsZero() {
		return n.Down // its last scrape could not be read
	}
	return fmt.Sprintf("%s; last scraped %s ago", n.Down, now.Sub(n.Scraped).Round(time.Second))
}

// PromFleet is the fleet of one refresh, for `fleet --prometheus --once`:
// a node whose series are current is live while its last scrape is
// recent (PromNode.Overdue), stale once it is not (Silent: the store
// answers with series nothing scrapes any more), unreachable once its
// last scrape is Overdue + unreachableAfter old; one that is down is
// stale, or unreachable when its last scrape is unreachableAfter old or
// older. One whose exporter is up
// but has published no snapshot yet is connecting, with that reason: it
// answers (last seen at its current scrape, never aging while Prometheus
// scrapes it), it just has no figures to give yet, as a node over SSH
// before its first snapshot.
func PromFleet(nodes []PromNode, now time.Time, unreachableAfter time.Duration) *Fleet {
	f := &Fleet{Seq: 1, Time: now}
	for _, n := range nodes {
		st, why := Live, ""
		switch {
		case n.Conflict != "":
			st, why = Unreachable, n.Conflict
		case n.Down != "":
			st, why = Stale, downReason(n, now)
			// Unreachable only on a known last scrape that old: one that
			// could not be read this time says nothing either way.
			if !n.Scraped.IsZero() && now.Sub(n.Scraped) >= unreachableAfter {
				st = Unreachable
			}
		case n.Silent != "":
			st, why = Stale, silentReason(n, now)
			if now.Sub(n.Scraped) >= n.Overdue+unreachableAfter {
				st = Unreachable
			}
		case n.Waiting != "":
			st, why = Connecting, n.Waiting
		}
		f.Nodes = append(f.Nodes, Node{Addr: n.Name, Name: n.Name, Source: "prometheus", Target: n.Target, State: st, Reason: why, Note: n.Note(),
			LastSeen: n.Scraped, Updated: n.Scraped, Snap: n.Snap, Sum: n.Sum})
	}
	return f
}

// goneReason is why a node the store knew within its lookback has no
// current series: isTarget and isUp say what its target's up series
// says now, anyCurrent whether any node is scraped now. A node whose
// target has no up series is no longer a target, unless no node at all
// is scraped now: then the store is more likely no longer fed
// (Prometheus down, or writing elsewhere), and the reason says both.
func goneReason(isTarget, isUp, anyCurrent bool) string {
	switch {
	case !isTarget && !anyCurrent:
		return "no node is scraped now: Prometheus down or no longer feeding the store, or this node no longer a target"
	case !isTarget:
		return "no longer a Prometheus target"
	case isUp:
		return "its target is up but no longer exports this node"
	default:
		return "target down"
	}
}
