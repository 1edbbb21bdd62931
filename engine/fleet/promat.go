package fleet

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	pmodel "github.com/prometheus/common/model"
)

// qKnownAfter (with the lookback, evaluated lookback after the asked
// moment): every node scraped between the moment and then, to list the
// nodes that had no data at the moment but were part of the fleet soon
// after, rather than leave them out, with their scrape targets.
const qKnownAfter = "group by (node, instance) (last_over_time(fgtop_build_info[%s]))"

// AtStamp is how a past moment is written in the fleet's words.
func AtStamp(at time.Time) string { return at.UTC().Format(time.RFC3339) }

// NoDataAt is the reason a node had no figures at the moment asked.
func NoDataAt(at time.Time) string { return "no data at " + AtStamp(at) }

// notScrapedThen is why a node whose series were still current at a past
// moment had no data then: no scrape of it for --unreachable-after before
// the moment, and none failed (a failed one says "target down").
const notScrapedThen = "Prometheus scraped nothing of it then (itself down or restarting)"

// At reads the fleet as Prometheus (or any store that serves its query
// API) had it at the moment at: every query is evaluated at that time.
// A node whose series were current then is live, last seen at its scrape
// before at, where that scrape is less than unreachableAfter before it
// (Prometheus answers with a series' last sample for minutes when it
// scraped nothing since: itself down); one whose target was down then is stale while its last
// scrape is less than unreachableAfter before at, with that scrape's
// figures, as the live fleet shows a node that went down. A node with no
// sample near at (its last scrape unreachableAfter or more before it, or
// scraped only after it, within the lookback) is unreachable, "no data
// at TIME", without figures: its free shares at that moment are not
// known, so they are neither free nor zero. So is a name several targets
// export (PromNode.Conflict). Ages are counted from at, never from now.
func (c *PromClient) At(ctx context.Context, at time.Time, unreachableAfter time.Duration) (*Fleet, error) {
	nodes, err := c.refreshAt(ctx, at)
	if err != nil {
		return nil, err
	}
	later, err := c.nodesAfter(ctx, at)
	if err != nil {
		return nil, err
	}
	return atFleet(nodes, later, at, unreachableAfter), nil
}

// nodesAfter returns the nodes scraped within the lookback after at, each
// with its scrape targets.
func (c *PromClient) nodesAfter(ctx context.Context, at time.Time) (map[string]string, error) {
	ctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	q := fmt.Sprintf(qKnownAfter, pmodel.Duration(c.o.Lookback))
	res, err := c.queryAll(ctx, []string{q}, at.Add(c.o.Lookback))
	if err != nil {
		return nil, err
	}
	return targetsByNode(res[0]), nil
}

// atFleet is the fleet at a past moment from what was read at it (nodes)
// and the nodes scraped soon after it (later: their names and targets).
func atFleet(nodes []PromNode, later map[string]string, at time.Time, unreachableAfter time.Duration) *Fleet {
	f := &Fleet{Seq: 1, Time: at}
	stamp := AtStamp(at)
	known := map[string]bool{}
	for _, n := range nodes {
		known[n.Name] = true
		node := Node{Addr: n.Name, Name: n.Name, Source: "prometheus", Target: n.Target, State: Live, Note: n.Note(),
			LastSeen: n.Scraped, Updated: n.Scraped, Snap: n.Snap, Sum: n.Sum}
		age := at.Sub(n.Scraped).Round(time.Second)
		switch {
		case n.Conflict != "":
			// Several targets export its name: their series cannot be told
			// apart then either (it was listed live, without figures or a
			// reason, and the exit status was 0).
			node.State, node.Reason, node.Snap, node.Sum = Unreachable, n.Conflict, nil, Summary{}
		case n.Down == "" && !n.Scraped.IsZero() && age >= unreachableAfter:
			// Series Prometheus still answers with are not a scrape near
			// the moment: it marks them stale when a scrape fails, not when
			// it scrapes nothing at all (itself down or restarting), and
			// answers with the last sample for minutes.
			node.State, node.Reason, node.Snap, node.Sum = Unreachable,
				fmt.Sprintf("%s: %s; last scraped %s before it", NoDataAt(at), notScrapedThen, age), nil, Summary{}
		case n.Down != "" && n.Scraped.IsZero():
			// Its last scrape could not be read: nothing either way.
			node.State, node.Reason, node.Snap, node.Sum = Unreachable, NoDataAt(at)+": "+n.Down, nil, Summary{}
		case n.Down != "" && age >= unreachableAfter:
			node.State, node.Reason, node.Snap, node.Sum = Unreachable,
				fmt.Sprintf("%s: %s; last scraped %s before it", NoDataAt(at), n.Down, age), nil, Summary{}
		case n.Down != "":
			node.State, node.Reason = Stale, fmt.Sprintf("%s; last scraped %s before %s", n.Down, age, stamp)
		case n.Waiting != "":
			node.State, node.Reason = Connecting, n.Waiting+" at "+stamp
		}
		f.Nodes = append(f.Nodes, node)
	}
	for name, target := range later {
		if known[name] {
			continue
		}
		known[name] = true
		f.Nodes = append(f.Nodes, Node{Addr: name, Name: name, Source: "prometheus", Target: target, State: Unreachable,
			Reason: NoDataAt(at) + ": first scraped after it"})
	}
	slices.SortFunc(f.Nodes, func(a, b Node) int { return cmp.Compare(a.Name, b.Name) })
	return f
}
