package placement

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/fgtop/fgtop/internal/safefile"
)

// Document is the check as fgtop simulate --check --json prints it:
// schema (SimulateCheckSchema), cases, operations, mismatched_operations
// and every mismatch's case, op and what differs, in that order.
func (c CasesCheck) Document() OrderedObject {
	mism := []OrderedObject{}
	for _, m := range c.Mismatches {
		mism = append(mism, OrderedObject{{K: "case", V: m.Case}, {K: "op", V: m.Step}, {K: "what", V: m.What}})
	}
	return OrderedObject{{K: "schema", V: SimulateCheckSchema}, {K: "cases", V: c.Cases}, {K: "operations", V: c.Operations},
		{K: "mismatched_operations", V: c.Mismatched}, {K: "mismatches", V: mism}}
}

// WriteText prints every mismatch, one a line, then a line that counts
// the cases and operations and says whether all match.
func (c CasesCheck) WriteText(w io.Writer) {
	for _, m := range c.Mismatches {
		fmt.Fprintf(w, "%s op #%d: %s\n", m.Case, m.Step, m.What)
	}
	if c.Mismatched == 0 {
		fmt.Fprintf(w, "%d case(s), %d operation(s): all match the recorded results\n", c.Cases, c.Operations)
	} else {
		fmt.Fprintf(w, "%d case(s), %d operation(s): %d differ from the recorded results\n", c.Cases, c.Operations, c.Mismatched)
	}
}

// RunsDocument is case runs as fgtop simulate --case --json prints them:
// one run's own document (Simulation.Document), or for several
// {"schema": SimulateCasesSchema, "cases": [...]}, each its document, in
// the file's order.
func RunsDocument(runs []CaseRun) any {
	if len(runs) == 1 {
		return runs[0].Sim.Document(runs[0].Result, runs[0].Case.ID)
	}
	docs := make([]any, len(runs))
	for i, r := range runs {
		docs[i] = r.Sim.Document(r.Result, r.Case.ID)
	}
	return OrderedObject{{K: "schema", V: SimulateCasesSchema}, {K: "cases", V: docs}}
}

// WriteRunTables writes every case run's table (Simulation.WriteTable),
// a blank line between two; red is WriteTable's.
func WriteRunTables(w io.Writer, runs []CaseRun, red func(string) string) error {
	for i, r := range runs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if err := r.Sim.WriteTable(w, r.Result, r.Case.ID, red); err != nil {
			return err
		}
	}
	return nil
}

// IsDeviceList reports whether a device source names a device list (a
// devices.json, ParseDeviceSpecs) rather than a mock-accelerator.toml, auto
// or nvml: a .json file, or a file whose first non-blank byte opens a JSON
// array or object. A file that cannot be opened is not one: the mock
// file's reader says why.
func IsDeviceList(path string) bool {
	switch path {
	case "", "auto", "nvml":
		return false
	}
	if strings.EqualFold(filepath.Ext(path), ".json") {
		return true
	}
	fh, err := safefile.Open(path, false)
	if err != nil {
		return false
	}
	defer fh.Close()
	buf := make([]byte, 512)
	n, _ := fh.Read(buf)
	b := bytes.TrimLeft(buf[:n], " \t\r\n\ufeff")
	return len(b) > 0 && (b[0] == '[' || b[0] == '{')
}

// BadCaseError is a corpus case that cannot be run as written (its
// devices, settings or operations): bad input, not a failed simulation.
type BadCaseError struct{ Err error }

func (e *BadCaseError) Error() string { return e.Err.Error() }

func (e *BadCaseError) Unwrap() error { return e.Err }

// RunCases runs every case on its own node, with o over its settings,
// recording each step's state when trace is set (Check needs it). The
// first case that cannot be prepared stops it with a *BadCaseError.
func RunCases(cases []Case, o CaseOverrides, trace bool) ([]CaseRun, error) {
	var out []CaseRun
	for i := range cases {
		c := &cases[i]
		node, steps, err := c.Prepare(o)
		if err != nil {
			return nil, &BadCaseError{Err: err}
		}
		res, err := Run(node, steps, RunOptions{Trace: trace})
		if err != nil {
			return nil, fmt.Errorf("case %s: %w", c.ID, err)
		}
		out = append(out, CaseRun{Case: c, Sim: &Simulation{Node: node, Source: "case " + c.ID}, Result: res})
	}
	return out, nil
}
