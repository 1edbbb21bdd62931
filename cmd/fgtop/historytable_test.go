package main

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/model"
)

// The table written in one buffer is the tabwriter's, byte for byte, and
// gives way to it where a cell holds a byte the tabwriter treats
// specially.
func TestHistoryTableMatchesTabwriter(t *testing.T) {
	t0 := time.Date(2026, 11, 20, 3, 4, 5, 0, time.UTC)
	var ivs []history.Interval
	for i := range 40 {
		iv := history.Interval{Device: model.DeviceKey{Name: "cuda", ID: model.DeviceID(fmt.Sprint(i % 11))},
			Kernel: model.KernelID(fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i*7919)), Agent: model.AgentID(fmt.Sprintf("i-node%0*d", 1+i%5, i)),
			Amounts: model.ResourceSlot{model.SlotCUDAShares: model.NewDec(int64(1+i), -1)},
			From:    t0.Add(time.Duration(i) * time.Minute), To: t0.Add(time.Duration(i*i) * time.Minute)}
		switch i % 5 {
		case 0:
			iv.Since = true
		case 1:
			iv.Open = true
		case 2:
			iv.Gone = true
			iv.Amounts["cuda.mem"] = model.NewDec(int64(i)<<30, 0)
		case 3:
			iv.Session, iv.User = fmt.Sprintf("sess-%d", i), "ü-user-ß"
		}
		ivs = append(ivs, iv)
	}
	for _, n := range []int{0, 1, 2, len(ivs)} {
		var tabs bytes.Buffer
		writeHistoryTabs(&tabs, ivs[:n])
		for _, parts := range []int{1, 2, 3} {
			var fast bytes.Buffer
			if !writeHistoryParts(&fast, ivs[:n], parts) {
				t.Fatalf("%d intervals: the table gave way", n)
			}
			if fast.String() != tabs.String() {
				t.Fatalf("%d intervals in %d parts:\n%s\ntabwriter:\n%s", n, parts, fast.String(), tabs.String())
			}
		}
	}
	for _, at := range []int{0, 7, len(ivs) - 1} {
		odd := append([]history.Interval(nil), ivs...)
		odd[at].Agent = "a\tb"
		for _, parts := range []int{1, 3} {
			var fast bytes.Buffer
			if writeHistoryParts(&fast, odd, parts) || fast.Len() != 0 {
				t.Fatalf("a tab in a cell of line %d (%d parts) did not give way to the tabwriter", at, parts)
			}
		}
	}
}
