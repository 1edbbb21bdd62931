package replay

import (
	"slices"
	"strings"
	"time"

	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/model"
)

// sessionsOfIntervals is how Load made the sessions before
// Reader.Sessions: History's intervals (Filter.Host) joined per kernel.
// It is kept as the reference the one-pass reader is compared against.
func sessionsOfIntervals(ivs []history.Interval, from, to time.Time) []Session {
	byKernel := map[model.KernelID][]int{}
	var order []model.KernelID
	for i := range ivs {
		id := ivs[i].Kernel
		if _, ok := byKernel[id]; !ok {
			order = append(order, id)
		}
		byKernel[id] = append(byKernel[id], i)
	}
	out := make([]Session, 0, len(order))
	for _, id := range order {
		idx := byKernel[id]
		s := Session{Kernel: id, Requested: model.ResourceSlot{}, Got: model.Allocations{}}
		var last *history.Interval
		for n, i := range idx {
			iv := &ivs[i]
			if n == 0 || iv.From.Before(s.Start) {
				s.Start = iv.From
			}
			if last == nil || iv.To.After(last.To) || iv.To.Equal(last.To) && iv.Open {
				last = iv
			}
			if iv.Open {
				s.Open = true
			}
		}
		for _, i := range idx {
			iv := &ivs[i]
			if iv.User != "" {
				s.Owner = iv.User
			}
			if iv.Session != "" {
				s.Session = iv.Session
			}
			if !iv.From.Equal(s.Start) {
				continue
			}
			if s.Agent == "" {
				s.Agent = iv.Agent
			}
			if iv.Since && iv.From.After(from) {
				s.InGap = true
			}
			for slot, amt := range iv.Amounts {
				if s.Got[slot] == nil {
					s.Got[slot] = map[model.DeviceID]model.Dec{}
				}
				s.Got[slot][iv.Device.ID] = amt
				s.Requested[slot] = s.Requested[slot].Add(amt)
			}
		}
		for _, i := range idx {
			// A later interval is a change of what it holds only where
			// its amounts differ (an owner learned late opens new ones).
			iv := &ivs[i]
			for slot, amt := range iv.Amounts {
				if had, ok := s.Got[slot][iv.Device.ID]; !ok || !had.Equal(amt) {
					s.Changed = true
				}
			}
		}
		s.End = last.To
		s.EndsInGap = last.Gone && !s.Open
		if !s.Open && !s.End.After(from) || s.Start.After(to) || len(s.Requested) == 0 {
			continue
		}
		if !s.Start.After(from) {
			s.Before = true
		}
		if s.Open || s.End.After(to) {
			s.End = to
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Session) int {
		if a.Before != b.Before {
			if a.Before {
				return -1
			}
			return 1
		}
		if c := a.Start.Compare(b.Start); c != 0 {
			return c
		}
		return strings.Compare(string(a.Kernel), string(b.Kernel))
	})
	return out
}
