package ui

import (
	"strconv"
	"strings"

	"github.com/fgtop/fgtop/model"
)

// kernWho is whose a kernel is (its recovery.json) and what its GPU
// processes use of what it holds, formatted once per kernel value.
type kernWho struct {
	// Display cells: ids cut to 8 characters, "-" when unknown.
	user, project, session, stype string
	// Lower-case full values, for the filter and the sort.
	fUser, fProject, fSession, fType, fImage string
	// gmem and util are the GMEM and UTIL cells.
	gmem, util string
	utilLvl    level
	// gmemF and utilF sort the columns; -1 when unknown.
	gmemF, utilF float64
	idle         bool
}

// sessionTypeShort fits session types in the TYPE column.
var sessionTypeShort = map[string]string{"interactive": "inter", "batch": "batch", "inference": "infer", "system": "sys"}

func newKernWho(k *model.Kernel) kernWho {
	w := kernWho{user: "-", project: "-", session: "-", stype: "-", gmem: "-", util: "-", utilLvl: lvlDim, gmemF: -1, utilF: -1}
	if r := k.Record; r != nil {
		w.user, w.project, w.session = cut8(r.OwnerUserID), cut8(r.OwnerProjectID), cut8(r.SessionID)
		w.fUser, w.fProject, w.fSession = strings.ToLower(r.OwnerUserID), strings.ToLower(r.OwnerProjectID), strings.ToLower(r.SessionID)
		w.fType, w.fImage = strings.ToLower(r.SessionType), strings.ToLower(r.Image)
		if r.SessionType != "" {
			w.stype = r.SessionType
			if s, ok := sessionTypeShort[r.SessionType]; ok {
				w.stype = s
			}
		}
	}
	u := k.Use
	if u == nil {
		return w
	}
	switch {
	case u.MemUsed.Valid:
		w.gmem, w.gmemF = gib(u.MemUsed.V, 1)+"G", float64(u.MemUsed.V)
	case u.Procs == 0:
		w.gmem, w.gmemF = "0", 0
	default:
		w.gmem = "N/A"
	}
	switch {
	case u.Idle:
		w.util, w.utilLvl, w.utilF, w.idle = "idle", lvlWarn, 0, true
	case u.Util.Valid:
		w.util, w.utilLvl, w.utilF = strconv.Itoa(int(u.Util.V))+"%", lvlPlain, float64(u.Util.V)
	default:
		// Memory only: the driver gives no per-process utilisation.
		w.util, w.utilLvl = "N/A", lvlNA
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
	name, arg, help string
	match           func(r *kernRow, v string) bool
}

// filterFields are the kernels filter's fields, in the order the help
// lists them.
var filterFields = []filterField{
	{"user", "ID", "owner user id starts with ID", func(r *kernRow, v string) bool { return strings.HasPrefix(r.w.fUser, v) }},
	{"project", "ID", "owner project id starts with ID", func(r *kernRow, v string) bool { return strings.HasPrefix(r.w.fProject, v) }},
	{"session", "ID", "session id starts with ID", func(r *kernRow, v string) bool { return strings.HasPrefix(r.w.fSession, v) }},
	{"type", "TYPE", "session type: interactive, batch, inference, system (a prefix will do)", func(r *kernRow, v string) bool { return r.w.fType != "" && strings.HasPrefix(r.w.fType, v) }},
	{"image", "TEXT", "image reference contains TEXT", func(r *kernRow, v string) bool { return strings.Contains(r.w.fImage, v) }},
	{"agent", "ID", "agent id contains ID", func(r *kernRow, v string) bool { return strings.Contains(strings.ToLower(string(r.k.Agent)), v) }},
	{"is", "idle", "holding but idle (a GPU held at 0 % for --idle-after)", func(r *kernRow, v string) bool { return v == "idle" && r.w.idle }},
}

// fterm is one term of a compiled filter: a field match, or plain text the
// row's haystack must contain; not inverts it.
type fterm struct {
	field *filterField
	val   string
	not   bool
}

// kernelFilter is the compiled filter: every term must hold.
type kernelFilter []fterm

// compileFilter reads the filter: space-separated terms, each plain text
// (matched anywhere in the row: id, agent, state, devices, owner, session)
// or FIELD:VALUE (filterFields); a leading '!' inverts a term ("! x" too).
// Case is ignored.
func compileFilter(f string) kernelFilter {
	var out kernelFilter
	not := false
	for _, t := range strings.Fields(strings.ToLower(f)) {
		for strings.HasPrefix(t, "!") {
			not, t = !not, t[1:]
		}
		if t == "" {
			continue
		}
		term := fterm{val: t, not: not}
		not = false
		if name, v, ok := strings.Cut(t, ":"); ok {
			for i := range filterFields {
				if filterFields[i].name == name {
					term.field, term.val = &filterFields[i], v
					break
				}
			}
		}
		out = append(out, term)
	}
	return out
}

// match reports whether a row passes every term.
func (f kernelFilter) match(r *kernRow) bool {
	for i := range f {
		t := &f[i]
		var ok bool
		if t.field != nil {
			ok = t.field.match(r, t.val)
		} else {
			ok = strings.Contains(r.search, t.val)
		}
		if ok == t.not {
			return false
		}
	}
	return true
}

// filterHelp lists the filter's fields for the help screen.
func filterHelp() [][2]string {
	out := make([][2]string, 0, len(filterFields))
	for _, f := range filterFields {
		out = append(out, [2]string{"/" + f.name + ":" + f.arg, f.help})
	}
	return out
}
