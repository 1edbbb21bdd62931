package fleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fgtop/fgtop/model"
)

// WaitAnswered waits until every node answered (a snapshot or a failure)
// or the timeout passed, and returns the fleet then: the nodes that never
// answered marked unreachable, saying why.
func WaitAnswered(ctx context.Context, t *Tracker, timeout time.Duration) *Fleet {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	sub := t.Subscribe(ctx)
	last := t.Latest()
	for {
		select {
		case <-ctx.Done():
			if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return markUnanswered(t.Latest(), "stopped before it answered")
			}
			return markTimedOut(t, t.Latest(), timeout)
		case fl, ok := <-sub:
			if !ok {
				return markTimedOut(t, last, timeout)
			}
			last = fl
			if fl.Answered() {
				return fl
			}
		}
	}
}

// markTimedOut says why a node that never answered has no figures: the
// time ran out in its SSH handshake (as a stalled node's is worded where
// the handshake's own time runs out), or after it.
func markTimedOut(t *Tracker, fl *Fleet, timeout time.Duration) *Fleet {
	out := markUnanswered(fl, fmt.Sprintf("no snapshot within --timeout %s", timeout))
	for i := range out.Nodes {
		n := &out.Nodes[i]
		if n.Snap != nil || n.State != Unreachable || fl.Nodes[i].State != Connecting {
			continue
		}
		if h, ok := t.handshakes.Load(n.Addr); ok {
			n.Reason = handshakeCut(context.DeadlineExceeded, h.(*heardConn).n.Load() > 0, h.(*heardConn).first()).Error()
		}
	}
	return out
}

// markUnanswered marks the nodes that never answered unreachable, for why.
func markUnanswered(fl *Fleet, why string) *Fleet {
	out := *fl
	out.Nodes = append([]Node(nil), fl.Nodes...)
	for i := range out.Nodes {
		n := &out.Nodes[i]
		if n.Snap == nil && n.State == Connecting {
			n.State, n.Reason = Unreachable, why
		}
	}
	return &out
}

// WriteTable writes the fleet as `fgtop fleet --once` prints it: a line
// a node.
func WriteTable(w io.Writer, j JSONFleet) {
	fmt.Fprintf(w, "%-20s %-12s %4s %15s %8s %8s %6s %7s %6s  %s\n", "NODE", "STATE", "GPUS", "HELD/CAPACITY", "FREE", "LARGEST", "PIECES", "KERNELS", "ISSUES", "ADDRESS")
	for _, n := range j.Nodes {
		if n.Held == nil {
			// A node without accelerators has counts; one that gave no
			// figures has none.
			gpus, kernels, issues := orDash(n.GPUs), orDash(n.Kernels), orDash(n.Issues)
			fmt.Fprintf(w, "%-20s %-12s %4s %15s %8s %8s %6s %7s %6s  %s  %s\n", n.Node, n.State, gpus, "-", "-", "-", "-", kernels, issues, n.Address, n.why())
			continue
		}
		largest := largestText(n)
		if n.State != Live {
			// Not "?" (a figure the node cannot know): what fits on a
			// node that is not live is not known now.
			largest = "-"
		}
		fmt.Fprintf(w, "%-20s %-12s %4s %15s %8s %8s %6s %7s %6s  %s  %s\n", n.Node, n.State, orDash(n.GPUs), n.Held.String()+"/"+orUnknown(n.Capacity),
			orUnknown(n.Free), largest, orDash(n.Pieces), orDash(n.Kernels), orDash(n.Issues), n.Address, n.why())
	}
}

// why is what the table says after a node's address: its error and its
// mark (Note: a name two addresses share, a node that floods lines). The
// mark was in the JSON and on stderr only, so a table of live rows came
// with exit status 1 and nothing on it to say why.
func (n JSONNode) why() string {
	switch {
	case n.Note == "":
		return n.Error
	case n.Error == "":
		return n.Note
	}
	return n.Error + "; " + n.Note
}

// largestText is the table's LARGEST: "!" marks a size that is placed
// only by overcommitting a device (the JSON's largest_fit_overcommits).
func largestText(n JSONNode) string {
	if n.LargestOvercommits {
		return orUnknown(n.Largest) + "!"
	}
	return orUnknown(n.Largest)
}

// orDash is a count of the table, "-" where the node gave none.
func orDash(n *int) string {
	if n == nil {
		return "-"
	}
	return strconv.Itoa(*n)
}

// orUnknown is a figure of the table, "?" where the node cannot know it
// (a device's capacity unknown).
func orUnknown(d *model.Dec) string {
	if d == nil {
		return "?"
	}
	return d.String()
}

// WriteFit writes where a request fits as `fgtop fleet --fit` prints it;
// red paints what overcommits (the caller knows whether w takes colour).
func WriteFit(w io.Writer, r JSONFitReport, red func(string) string) {
	req := strings.Split(r.Request, ",")
	for i, part := range req {
		if slot, amount, ok := strings.Cut(part, "="); ok {
			req[i] = slot + "=" + fitAmount(slot, amount)
		}
	}
	fmt.Fprintf(w, "request %s fits on %d node(s)", strings.Join(req, ","), len(r.Fits))
	if r.At != "" {
		fmt.Fprintf(w, " as the fleet was at %s", r.At)
	}
	if len(r.Overcommits) > 0 {
		fmt.Fprintf(w, ", %s", red(fmt.Sprintf("%d of them only by overcommitting a device", len(r.Overcommits))))
	}
	fmt.Fprintln(w)
	for _, n := range r.Nodes {
		switch {
		case n.Fit.Fits:
			var parts []string
			for slot, devs := range n.Fit.Placement {
				for d, a := range devs {
					parts = append(parts, fmt.Sprintf("%s %s on %s", fitAmount(slot, a), slot, n.deviceName(model.SlotName(slot), d)))
				}
			}
			slices.Sort(parts)
			agent := ""
			if n.Fit.Agent != "" {
				agent = " agent " + n.Fit.Agent + ":"
			}
			fmt.Fprintf(w, "  fits  %-20s%s %s\n", n.Node, agent, strings.Join(parts, ", "))
			for _, d := range n.Fit.Devices {
				if d.Overcommit {
					amt := func(v model.Dec) string { return fitAmount(string(d.Slot), v.String()) }
					when := "now"
					if r.At != "" {
						when = "then"
					}
					fmt.Fprintf(w, "        %s: %s would hold %s of %s %s across all agents (%s held %s + %s)\n",
						red("! OVERCOMMIT"), n.deviceName(d.Slot, string(d.Device)), amt(d.TotalAfter), amt(d.Capacity), d.Slot, amt(d.HeldNow), when, amt(d.Adds))
				}
			}
		case n.Fit.Unknown:
			fmt.Fprintf(w, "  ?     %-20s %s\n", n.Node, n.Fit.Reason)
		default:
			fmt.Fprintf(w, "  no    %-20s %s\n", n.Node, n.Fit.Reason)
		}
	}
}

// deviceName is how the node's console and `fgtop simulate` name the
// device id of slot (GPU0), from the node's devices; the id itself where
// they name it so too or the node said nothing of it.
func (n JSONNode) deviceName(slot model.SlotName, id string) string {
	plugin := string(slot.DeviceName())
	for _, d := range n.Devices {
		if d.Device == id && d.Plugin == plugin && d.Name != "" {
			return d.Name
		}
	}
	return id
}

// fitAmount is an amount of slot as the JSON has it (memory in bytes),
// said for people: memory as a size.
func fitAmount(slot, amount string) string {
	if model.SlotName(slot) != model.SlotMem {
		return amount
	}
	v, err := model.ParseDec(amount)
	if err != nil {
		return amount
	}
	return model.FormatBinarySize(v)
}
