package history

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/model/names"
)

// Devices lists the devices the record knows: every device of every
// segment's checkpoint, the latest description of each, in the order the
// last one that lists it gives. It reads the checkpoints only.
func (r *Reader) Devices() []model.Device {
	var out []model.Device
	at := map[model.DeviceKey]int{}
	for i := range r.segs {
		sr := r.readOf(i, false, true)
		if sr.err != nil || sr.data.Checkpoint == nil {
			continue
		}
		st := newState()
		w := walker{}
		w.scan(&segRead{file: sr.file, data: &segData{Checkpoint: sr.data.Checkpoint}}, st, time.Time{})
		for _, d := range st.devices {
			if j, ok := at[d.Key()]; ok {
				out[j] = d
				continue
			}
			at[d.Key()] = len(out)
			out = append(out, d)
		}
	}
	return out
}

// Known is what the record knows by name: the kernels that held a device,
// their owners, sessions and projects, each sorted.
type Known struct {
	Kernels, Users, Sessions, Projects []string
}

// Known walks the whole record for the names it holds (a listing of
// every interval: a query's cost, for the errors that list them).
func (r *Reader) Known() (*Known, error) {
	// Accelerators only, as Query matches names first: a kernel of cores
	// and memory only is answered when no accelerator kernel matches
	// (Query), not listed here.
	return r.knownOf(Filter{})
}

// knownOf is Known of the intervals f's walk of the whole record gives.
func (r *Reader) knownOf(f Filter) (*Known, error) {
	res, err := r.History(f)
	if err != nil {
		return nil, err
	}
	k := &Known{}
	for _, iv := range res.Intervals {
		k.Kernels = append(k.Kernels, string(iv.Kernel))
		if iv.User != "" {
			k.Users = append(k.Users, iv.User)
		}
		if iv.Session != "" {
			k.Sessions = append(k.Sessions, iv.Session)
		}
		if iv.Project != "" {
			k.Projects = append(k.Projects, iv.Project)
		}
	}
	for _, l := range []*[]string{&k.Kernels, &k.Users, &k.Sessions, &k.Projects} {
		slices.Sort(*l)
		*l = slices.Compact(*l)
	}
	return k, nil
}

// recordWhere words the record in the resolver's errors.
const recordWhere = "the record"

// ResolveDevice finds the accelerator name names among those the record
// knows (names.Devices.Resolve: key, console label, id, UUID, unique
// prefix).
func (r *Reader) ResolveDevice(name string) (model.DeviceKey, error) {
	devs := slices.DeleteFunc(r.Devices(), func(d model.Device) bool { return !d.IsAccelerator() })
	key, err := names.NewDevices(devs, recordWhere).Resolve(name)
	return key, r.withDamage(err)
}

// withDamage adds to a name the record does not know the segments that
// could not be read: "the record knows no devices" of a record whose
// only segment is damaged blamed the name for the damage. Other errors
// are returned as they are; the NotFoundError stays reachable
// (errors.As).
func (r *Reader) withDamage(err error) error {
	var nf *names.NotFoundError
	if !errors.As(err, &nf) {
		return err
	}
	// The whole record's walk names its damage (a checkpoint that fails
	// its checksum reads as no devices and no kernels, without an error).
	// A name error is rare, and the walk is what listing the known names
	// costs already.
	res, herr := r.History(Filter{})
	if herr != nil {
		return err
	}
	var damaged []string
	for _, m := range res.Missing {
		if strings.HasPrefix(m.Why, "segment ") {
			damaged = append(damaged, strings.TrimPrefix(m.Why, "segment "))
		}
	}
	if len(damaged) == 0 {
		return err
	}
	return fmt.Errorf("%w; but the record is damaged, so it may know more (%s)", err, strings.Join(damaged, "; "))
}

// Query is History for names as a person types them: the device by any
// name fgtop shows for it, a kernel, user, session or project by its id
// or a unique prefix. A name that matches nothing is a
// *names.NotFoundError listing what the record knows, a prefix that
// names several a *names.AmbiguousError listing them: never an empty
// answer for a name that means nothing.
func (r *Reader) Query(f Filter) (*HistoryResult, error) {
	// An --until pasted from the end fgtop printed is the record's end
	// (AtEnd): read before the walk, which stops at Until.
	f.Until = r.untilAtEnd(f.Until)
	if f.Device != "" {
		return r.queryDevice(f)
	}
	res, err := r.History(f)
	if err != nil {
		return nil, err
	}
	if len(res.Matched) == 0 && !f.Host && (f.Kernel != "" || f.User != "" || f.Session != "" || f.Project != "") {
		// Nothing that held an accelerator: a kernel of cores and memory
		// only is in the record too, and what it held is its answer, not
		// "no such kernel".
		hf := f
		hf.Host = true
		if hres, err := r.History(hf); err == nil && len(hres.Matched) > 0 {
			res, f = hres, hf
		}
	}
	name, kind := f.Kernel, "kernel"
	switch {
	case f.User != "":
		name, kind = f.User, "user"
	case f.Session != "":
		name, kind = f.Session, "session"
	case f.Project != "":
		name, kind = f.Project, "project"
	case f.Kernel == "":
		return res, nil
	}
	switch {
	case len(res.Matched) == 1:
		return res, nil
	case len(res.Matched) > 1:
		if !slices.Contains(res.Matched, name) {
			return nil, &names.AmbiguousError{Kind: kind, Name: name, Candidates: res.Matched}
		}
		// The whole id, and a prefix of others too: it names itself.
		res.Intervals = slices.DeleteFunc(res.Intervals, func(iv Interval) bool { return f.pick(&iv) != name })
		res.Matched = []string{name}
		return res, nil
	}
	known, err := r.Known()
	if err != nil {
		return nil, err
	}
	if _, err := names.ID(name, known.of(kind), kind, recordWhere); err != nil {
		var nf *names.NotFoundError
		if !errors.As(err, &nf) {
			return nil, err
		}
		// A name no accelerator kernel has may be one of cores and
		// memory only, outside the span: known, and it held nothing
		// then. This walk is the error path's only.
		host, herr := r.knownOf(Filter{Host: true})
		if herr != nil {
			return nil, herr
		}
		if _, err := names.ID(name, host.of(kind), kind, recordWhere); err != nil {
			return nil, r.withDamage(err)
		}
	}
	// Known, and held nothing in the asked span.
	return res, nil
}

// of is the list of names of kind ("kernel", "user", "session",
// "project").
func (k *Known) of(kind string) []string {
	switch kind {
	case "user":
		return k.Users
	case "session":
		return k.Sessions
	case "project":
		return k.Projects
	}
	return k.Kernels
}

// pick is the field of iv the filter names (kernel, user, session,
// project).
func (f Filter) pick(iv *Interval) string {
	if _, field := f.whoField(); field != nil {
		return field(iv.User, iv.Session, iv.Project)
	}
	return string(iv.Kernel)
}

// queryDevice is Query by device. A plugin key is tried as it is first
// (the devices of the record are then read only when it finds nothing).
func (r *Reader) queryDevice(f Filter) (*HistoryResult, error) {
	if name, _, _ := strings.Cut(f.Device, ":"); name == "cpu" || name == "mem" {
		// The host's cores and memory are in the record beside the
		// accelerators (snapshot --at lists them).
		f.Host = true
	}
	var tried *HistoryResult
	if strings.IndexByte(f.Device, ':') > 0 {
		res, err := r.History(f)
		if err != nil || len(res.Intervals) > 0 {
			return res, err
		}
		tried = res
	}
	if f.Host && tried != nil && slices.ContainsFunc(r.Devices(), func(d model.Device) bool { return d.Key().String() == f.Device }) {
		// A core or the memory the record knows, which held nothing in
		// the span: known, and an empty answer, not a wrong name.
		return tried, nil
	}
	key, err := r.ResolveDevice(f.Device)
	if err != nil && f.Host {
		// A core or the memory asked by name: the error lists the host's
		// devices the record knows (it listed the GPUs alone, though
		// cpu:16 and mem:root are names it takes).
		key, err = names.NewDevices(r.Devices(), recordWhere).Resolve(f.Device)
		err = r.withDamage(err)
	}
	if err != nil {
		return nil, err
	}
	if tried != nil && key.String() == f.Device {
		return tried, nil
	}
	f.Device = key.String()
	return r.History(f)
}

// untilAtEnd is until read against the record's end (AtEnd) where no
// recorder writes it: a recorder's end moves on. The end is read only
// where it may fall in until's second (the last segment begins before
// that second is over).
func (r *Reader) untilAtEnd(until time.Time) time.Time {
	if until.IsZero() || until.Nanosecond() != 0 || r.Active || len(r.segs) == 0 ||
		!r.segs[len(r.segs)-1].Start.Before(until.Add(time.Second)) {
		return until
	}
	_, to, err := r.Span()
	if err != nil {
		// The walk meets what stops the read, and says it.
		return until
	}
	return AtEnd(until, to)
}
