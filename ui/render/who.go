package render

import (
	"strconv"
	"strings"

	"github.com/fgtop/fgtop/model"

	"github.com/fgtop/fgtop/ui/kit"
)

// kernWho is whose a kernel is (its recovery.json) and what its GPU
// processes use of what it holds, formatted once per kernel value.
type kernWho struct {
	// Display cells: ids cut to 8 characters, "-" when unknown.
	User, project, Session, Stype string
	// Lower-case full values, for the filter and the sort.
	FUser, fProject, FSession, FType, fImage string
	// gmem and util are the GMEM and UTIL cells.
	Gmem, Util string
	UtilLvl    kit.Level
	// gmemF and utilF sort the columns; -1 when unknown.
	GmemF, UtilF float64
	Idle         bool
}

// sessionTypeShort fits session types in the TYPE column.
var sessionTypeShort = map[string]string{"interactive": "inter", "batch": "batch", "inference": "infer", "system": "sys"}

func newKernWho(k *model.Kernel) kernWho {
	w := kernWho{User: "-", project: "-", Session: "-", Stype: "-", Gmem: "-", Util: "-", UtilLvl: kit.LvlDim, GmemF: -1, UtilF: -1}
	if r := k.Record; r != nil {
		w.User, w.project, w.Session = cut8(r.OwnerUserID), cut8(r.OwnerProjectID), cut8(r.SessionID)
		w.FUser, w.fProject, w.FSession = strings.ToLower(r.OwnerUserID), strings.ToLower(r.OwnerProjectID), strings.ToLower(r.SessionID)
		w.FType, w.fImage = strings.ToLower(r.SessionType), strings.ToLower(r.Image)
		if r.SessionType != "" {
			w.Stype = r.SessionType
			if s, ok := sessionTypeShort[r.SessionType]; ok {
				w.Stype = s
			}
		}
	}
	u := k.Use
	if u == nil {
		return w
	}
	switch {
	case u.MemUsed.Valid:
		w.Gmem, w.GmemF = kit.Gib(u.MemUsed.V, 1)+"G", float64(u.MemUsed.V)
	case u.Procs == 0:
		w.Gmem, w.GmemF = "0", 0
	default:
		w.Gmem = "N/A"
	}
	switch {
	case u.Idle:
		w.Util, w.UtilLvl, w.UtilF, w.Idle = "idle", kit.LvlWarn, 0, true
	case u.Util.Valid:
		w.Util, w.UtilLvl, w.UtilF = strconv.Itoa(int(u.Util.V))+"%", kit.LvlPlain, float64(u.Util.V)
	default:
		// Memory only: the driver gives no per-process utilisation.
		w.Util, w.UtilLvl = "N/A", kit.LvlNA
	}
	return w
}

func cut8(s string) string {
	switch {
	case s == "":
		return "-"
	case len(s) > 8:
		return s[:8]
	}
	return s
}

// filterField is one field the kernels filter matches: /user:ed3a, /type:batch.
// The help screen lists them from this table.
type filterField struct {
	Name, Arg, Help string
	Match           func(r *KernRow, v string) bool
}

// filterFields are the kernels filter's fields, in the order the help
// lists them.
var filterFields = []filterField{
	{"user", "ID", "owner user id starts with ID", func(r *KernRow, v string) bool { return strings.HasPrefix(r.W.FUser, v) }},
	{"project", "ID", "owner project id starts with ID", func(r *KernRow, v string) bool { return strings.HasPrefix(r.W.fProject, v) }},
	{"session", "ID", "session id starts with ID", func(r *KernRow, v string) bool { return strings.HasPrefix(r.W.FSession, v) }},
	{"type", "TYPE", "session type: interactive, batch, inference, system (a prefix will do)", func(r *KernRow, v string) bool { return r.W.FType != "" && strings.HasPrefix(r.W.FType, v) }},
	{"image", "TEXT", "image reference contains TEXT", func(r *KernRow, v string) bool { return strings.Contains(r.W.fImage, v) }},
	{"agent", "ID", "agent id contains ID", func(r *KernRow, v string) bool { return strings.Contains(strings.ToLower(string(r.K.Agent)), v) }},
	{"is", "idle", "holding but idle (a GPU held at 0 % for --idle-after)", func(r *KernRow, v string) bool { return v == "idle" && r.W.Idle }},
	// dev: needs the node's devices to resolve its name: BindDevices
	// gives it its match; unbound, it matches nothing.
	{"dev", "NAME", "holds something on the device NAME: GPU1, MIG 4/0, an id, …a104 or a unique prefix (as history --device)", nil},
}

// fterm is one term of a compiled filter: a field match, or plain text the
// row's haystack must contain; not inverts it. raw is the field's value
// as typed (a device id's case matters to its resolver); held is a dev:
// term's match, once BindDevices resolved its name.
type fterm struct {
	field *filterField
	val   string
	raw   string
	not   bool
	held  func(r *KernRow) bool
}

// kernelFilter is the compiled filter: every term must hold.
type kernelFilter []fterm

// CompileFilter reads the filter: space-separated terms, each plain text
// (matched anywhere in the row: id, agent, state, devices, owner, session)
// or FIELD:VALUE (filterFields); a leading '!' inverts a term ("! x" too).
// Case is ignored.
func CompileFilter(f string) kernelFilter {
	var out kernelFilter
	not := false
	words := strings.Fields(f)
	for w := 0; w < len(words); w++ {
		raw := words[w]
		for strings.HasPrefix(raw, "!") {
			not, raw = !not, raw[1:]
		}
		if raw == "" {
			continue
		}
		t := strings.ToLower(raw)
		term := fterm{val: t, not: not}
		not = false
		if name, v, ok := strings.Cut(t, ":"); ok {
			for i := range filterFields {
				if filterFields[i].Name == name {
					term.field, term.val = &filterFields[i], v
					_, term.raw, _ = strings.Cut(raw, ":")
					// A MIG slice's label has a space (MIG 3/0): the
					// word after dev:MIG is the rest of the name.
					if term.field.Name == "dev" && v == "mig" && w+1 < len(words) && strings.Contains(words[w+1], "/") {
						w++
						term.raw += " " + words[w]
						term.val = strings.ToLower(term.raw)
					}
					break
				}
			}
		}
		out = append(out, term)
	}
	return out
}

// Match reports whether a row passes every term.
func (f kernelFilter) Match(r *KernRow) bool {
	for i := range f {
		t := &f[i]
		var ok bool
		switch {
		case t.held != nil:
			ok = t.held(r)
		case t.field != nil && t.field.Match != nil:
			ok = t.field.Match(r, t.val)
		case t.field != nil:
			// An unbound dev: term: no device resolved, nothing holds on it.
		default:
			ok = strings.Contains(r.search, t.val)
		}
		if ok == t.not {
			return false
		}
	}
	return true
}

// MatchText reports whether a row of another table (the fleet's nodes),
// said as hay, passes the filter by the kernels filter's own terms: every
// term must occur in hay, a '!' term must not, case ignored. A field has
// no meaning there: FIELD:VALUE is plain text like any other term.
func (f kernelFilter) MatchText(hay string) bool {
	hay = strings.ToLower(hay)
	for i := range f {
		t := &f[i]
		v := t.val
		if t.field != nil {
			v = t.field.Name + ":" + t.val
		}
		if strings.Contains(hay, v) == t.not {
			return false
		}
	}
	return true
}

// BindDevices resolves each dev: term's name, with resolve (the name as
// typed to what holds something on the device it names), so that /dev:
// takes a name as :dev and history --device do. The first name resolve
// refuses is the error (naming nothing, or several devices): the filter
// then matches nothing, never every device a prefix could mean.
func (f kernelFilter) BindDevices(resolve func(name string) (func(r *KernRow) bool, error)) error {
	for i := range f {
		t := &f[i]
		if t.field == nil || t.field.Name != "dev" {
			continue
		}
		held, err := resolve(t.raw)
		if err != nil {
			// resolve's words name the name already, as :dev says them.
			return err
		}
		t.held = held
	}
	return nil
}

// FilterNearMiss names, for a filter that matched nothing, a term that
// reads as a mistyped field (usr:ed3a: plain text no row holds, an edit
// from user:), "" when none does: "usr: is no filter field; user:?". A
// term whose name is far from every field (cuda:3, 14:02) is plain text;
// so is one near a field of two letters (id: is not is:).
func FilterNearMiss(f string) string {
	for _, t := range CompileFilter(f) {
		name, _, ok := strings.Cut(t.val, ":")
		if t.field != nil || !ok || name == "" {
			continue
		}
		for _, ff := range filterFields {
			if len(ff.Name) < 3 {
				continue
			}
			lim := 1 // edits that still read as the field
			if len(ff.Name) >= 6 {
				lim = 2
			}
			if d := model.EditDistance(name, ff.Name); d > 0 && d <= lim {
				return name + ": is no filter field; " + ff.Name + ":?"
			}
		}
	}
	return ""
}

// FilterHelp lists the filter's fields for the help screen.
func FilterHelp() [][2]string {
	out := make([][2]string, 0, len(filterFields))
	for _, f := range filterFields {
		out = append(out, [2]string{"/" + f.Name + ":" + f.Arg, f.Help})
	}
	return out
}
