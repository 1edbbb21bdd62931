package fleet

import (
	"fmt"
	"io"

	"github.com/fgtop/fgtop/engine/alloc"
)

// Answer is what a one-shot fleet run (fleet --once, --fit, --at) says of
// the fleet it read: where a request fits, or the nodes' table; whether
// that is exit status 1; and a line for each node that did not answer or
// misbehaves. The command reads the flags and the nodes, and prints.
type Answer struct {
	// Fit is the request's report (--fit); nil without a request.
	Fit *JSONFitReport
	// Fleet is the nodes' report without a request.
	Fleet *JSONFleet
	// NodeLines say, per node, why it is not live ("ADDR: STATE: REASON")
	// and what marks it ("ADDR: NOTE"), in fleet order.
	NodeLines []string
	// Failure is why the run exits 1 ("" when it does not): the request
	// fits on no live node, or without one, a node did not answer, is
	// stale, has no figures, or is marked.
	Failure string
	// fitText is the request as written, where it fits nowhere.
	fitText string
}

// AsAt marks a fit answer as asked of the fleet as it was at stamp
// (--at): the report says so, and a request that fits nowhere is said of
// then, not of the nodes live now.
func (a *Answer) AsAt(stamp string) {
	if a.Fit == nil {
		return
	}
	a.Fit.At = stamp
	if a.fitText != "" {
		a.Failure = fmt.Sprintf("%s fitted on no node as the fleet was at %s", a.fitText, stamp)
	}
}

// NewAnswer judges fl: with fit, where req fits under settings (fitText is
// the request as the user wrote it, for the failure's words); without,
// every node's figures.
func NewAnswer(fl *Fleet, fit bool, req alloc.Request, fitText string, settings Settings) Answer {
	var a Answer
	if fit {
		r := FitJSON(fl, req, settings)
		a.Fit = &r
		if len(r.Fits) == 0 {
			a.Failure = fmt.Sprintf("%s fits on no live node", fitText)
			a.fitText = fitText
		}
	} else {
		j := ToJSON(fl)
		a.Fleet = &j
		for _, n := range j.Nodes {
			// A stale node's figures are its last, not its answer now.
			if n.State == Unreachable || n.State == Stale || n.Devices == nil || n.Note != "" {
				a.Failure = "some nodes did not answer, are stale, or are marked (see above)"
			}
		}
	}
	for _, n := range fl.Nodes {
		if n.State != Live || n.Snap == nil {
			a.NodeLines = append(a.NodeLines, fmt.Sprintf("%s: %s: %s", n.Addr, n.State, n.Reason))
		}
		if n.Note != "" {
			a.NodeLines = append(a.NodeLines, fmt.Sprintf("%s: %s", n.Addr, n.Note))
		}
	}
	return a
}

// Value is the answer's JSON document: the fit report, or the fleet's.
func (a Answer) Value() any {
	if a.Fit != nil {
		return *a.Fit
	}
	return *a.Fleet
}

// WriteText writes the answer for people: WriteFit's lines (red as
// there), or WriteTable's.
func (a Answer) WriteText(w io.Writer, red func(string) string) {
	if a.Fit != nil {
		WriteFit(w, *a.Fit, red)
		return
	}
	WriteTable(w, *a.Fleet)
}
