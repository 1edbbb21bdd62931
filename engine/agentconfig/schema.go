package agentconfig

// The whole-file verdict: does Backend.AI's agent load this agent.toml?
//
// Two loaders judge a file: Backend.AI main's (slot-based multi-agent,
// AgentUnifiedConfig at c0032c47) and the unmerged BEP-1044 PR #8463's
// (device-based). The rules below were read off their pydantic schemas
// (domain/backendai.md §5.1, §5.2) and are checked case by case against
// the loaders themselves (testdata/fixtures/config-cases.json and the
// oracle test). What pydantic does, in the terms used here:
//
//   - every key has a kebab-case and a snake_case spelling (some have more,
//     e.g. backend/mode); the first spelling present wins and any other
//     spelling left over is an unknown key, which only warns;
//   - "lax" coercion: an integer field takes true, 1.0, "1", " 1 ", "1.0"
//     but not 1.5; a string field takes only strings; a boolean takes
//     0/1, "yes", "off", ...;
//   - a model's own checks (mode rules, duplicate ids, negative values) run
//     only when every field inside it validated, so they are skipped here
//     too once an error was found below them.

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"os/user"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/fgtop/fgtop/model"
	toml "github.com/pelletier/go-toml/v2"
)

// Schema names a loader that judges agent.toml.
type Schema int

// Schemas.
const (
	// SchemaMain is Backend.AI main (slot-based: cpu = N, devices =
	// {"cuda.shares" = "2.0"}).
	SchemaMain Schema = iota
	// SchemaDraft is the BEP-1044 draft, PR #8463 (device-based: cpu =
	// ["0", ...], devices = {cuda = [ids]}); Backend.AI main cannot load
	// files in its format.
	SchemaDraft
)

func (s Schema) String() string {
	if s == SchemaDraft {
		return "BEP-1044 draft (PR #8463)"
	}
	return "Backend.AI main"
}

// Verdict is whether Backend.AI's agent loads a file, under main's schema
// and under the BEP-1044 draft's, with the reasons in fgtop's words.
type Verdict struct {
	// Main is true when Backend.AI main loads the file.
	Main bool
	// Draft is true when PR #8463 (BEP-1044 device-based) loads it.
	Draft bool
	// MainErrors and DraftErrors are why each rejects it (empty when it
	// loads). A TOML syntax error is in both.
	MainErrors, DraftErrors []Problem
	// Warnings are what main logs while loading without refusing: unknown
	// keys (a misspelling, or the loser of two spellings of one key),
	// agents = [...] written under [resource]. Only for files main loads
	// or almost loads; informational.
	Warnings []Problem
	// Mode is main's validated allocation-mode, "" when main rejects.
	Mode string
}

// DraftOnly reports a file in the device-based format that only the
// unmerged BEP-1044 draft loads.
func (v *Verdict) DraftOnly() bool { return v != nil && !v.Main && v.Draft }

// Rejected reports a file neither loader accepts: the agent does not start.
func (v *Verdict) Rejected() bool { return v != nil && !v.Main && !v.Draft }

// Judge decides whether Backend.AI's agent loads raw, under both schemas.
// It never fails: a file that is not TOML is rejected by both.
func Judge(raw []byte) *Verdict {
	v := &Verdict{}
	var idx *tomlDoc
	text := agentText(raw)
	doc, err := decodeAgentTOML(text)
	if err == nil {
		if line, err10 := toml10(text); err10 != nil {
			p := Problem{Line: line, Message: "not valid TOML for the agent's parser: " + err10.Error()}
			v.MainErrors = []Problem{p}
			v.DraftErrors = []Problem{p}
			return v
		}
	}
	if err != nil {
		msg := err.Error()
		var de *toml.DecodeError
		line := 0
		if errors.As(err, &de) {
			line, _ = de.Position()
		}
		p := Problem{Line: line, Message: "not valid TOML: " + msg}
		v.MainErrors = []Problem{p}
		v.DraftErrors = []Problem{p}
		return v
	}
	idx, _ = indexTOML(raw)
	m := &judge{schema: SchemaMain, doc: idx}
	m.unified(doc)
	v.Main = len(m.errs) == 0
	v.MainErrors = m.errs
	v.Warnings = m.warns
	if v.Main {
		v.Mode = m.mode
	}
	d := &judge{schema: SchemaDraft, doc: idx}
	d.unified(doc)
	v.Draft = len(d.errs) == 0
	v.DraftErrors = d.errs
	return v
}

// judge runs one schema over a decoded file.
type judge struct {
	schema Schema
	doc    *tomlDoc
	errs   []Problem
	warns  []Problem
	mode   string
	// ids are the [[agents]] entries' own ids ("" when unset), for messages.
	ids []string
	// misspelt are the unknown keys that most likely misspell a key their
	// table lacks (main only), by misspeltAt of that key: an error that
	// the key is missing names the typo, which only warned.
	misspelt map[string]typo
}

// typo is an unknown key close to a key its table lacks.
type typo struct {
	key, meant string
	line       int
}

// misspeltAt keys judge.misspelt: the table's path and the field's name.
func misspeltAt(path []string, field string) string {
	return pathString(path) + "\x00" + field
}

// misspelling is what an error about the field missing from the table at
// path adds when an unknown key there is close to it:
// " (line 61 has devises: did you mean devices?)", or "".
func (j *judge) misspelling(path []string, field string) string {
	t, ok := j.misspelt[misspeltAt(path, field)]
	if !ok {
		return ""
	}
	if t.line > 0 {
		return fmt.Sprintf(" (line %d has %s: did you mean %s?)", t.line, t.key, t.meant)
	}
	return fmt.Sprintf(" (the file has %s: did you mean %s?)", t.key, t.meant)
}

func (j *judge) main() bool { return j.schema == SchemaMain }

// fail records an error at path (keys; arrElem for list items).
func (j *judge) fail(path []string, format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	if len(path) > 0 {
		msg = j.where(path) + ": " + msg
	}
	p := Problem{Message: msg}
	if j.doc != nil && len(path) > 0 {
		p.Line = j.doc.lineOfPath(path)
	}
	j.errs = append(j.errs, p)
}

// where renders a key path for a message, naming the agent of an
// [[agents]] entry by its id when it has one.
func (j *judge) where(path []string) string {
	s := pathString(path)
	if name, idx, ok := strings.Cut(path[0], arrSep); ok && name == "agents" {
		if i, err := strconv.Atoi(idx); err == nil && i < len(j.ids) && j.ids[i] != "" {
			s += fmt.Sprintf(" (agent %q)", j.ids[i])
		}
	}
	return s
}

// failMissing records a missing key or table: the message names it, so the
// path is not repeated in front.
func (j *judge) failMissing(path []string, format string, a ...any) {
	p := Problem{Message: fmt.Sprintf(format, a...)}
	if j.doc != nil {
		// Point at the enclosing table, which exists.
		p.Line = j.doc.lineOfPath(path[:len(path)-1])
	}
	if len(path) > 1 {
		p.Message = j.where(path[:len(path)-1]) + ": " + p.Message
	}
	j.errs = append(j.errs, p)
}

func (j *judge) warn(path []string, format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	p := Problem{Message: msg}
	if j.doc != nil && len(path) > 0 {
		p.Line = j.doc.lineOfPath(path)
	}
	j.warns = append(j.warns, p)
}

// mark returns the error count, to tell whether a subtree added errors.
func (j *judge) mark() int { return len(j.errs) }

// kind is how a field's value is validated.
type kind int

const (
	kAny       kind = iota // anything (plugins)
	kTable                 // a table whose content is not checked here
	kStr                   // str (or str | None: TOML has no null)
	kInt                   // lax int with optional bounds
	kFloat                 // lax float with optional bounds
	kBool                  // lax bool
	kSize                  // BinarySize
	kEnum                  // a StrEnum: exact value
	kHostPort              // HostPortPair
	kHostPorts             // HostPortPair | list[HostPortPair]
	kPortRange             // tuple[int, int] through int()
	kPath                  // a Path (a string)
	kDir                   // an AutoDirectoryPath: created at start-up
	kFile                  // a FilePath: an existing file
	kAffinity              // affinity-policy: a name, upper-cased
	kCIEnum                // a case-insensitive StrEnum (log levels)
	kEnumList              // a list of StrEnum values
	kLevelMap              // a table of logger name -> log level
	kUID                   // UserID / GroupID
	kStrList               // list[str] / set[str]
	kStrMap                // Mapping[str, str]
	kModel                 // a nested model
)

// field is one pydantic field.
type field struct {
	name  string   // the Python name (snake_case)
	alias []string // validation aliases in order; nil: kebab-case of name
	kind  kind
	req   bool
	// bounds for kInt/kFloat
	ge, le, gt *float64
	enum       []string
	sub        func(j *judge, path []string, t map[string]any) bool
	// link marks a rpc-listen-addr style host check.
	noLinkLocal bool
	user        string // "user" or "group" for kUID
}

func bound(f float64) *float64 { return &f }

// spellings are the keys that set a field, in the order pydantic tries
// them: the aliases, then the field's own name (validate_by_name).
func (f *field) spellings() []string {
	out := f.alias
	if out == nil {
		out = []string{strings.ReplaceAll(f.name, "_", "-")}
	}
	if !slices.Contains(out, f.name) {
		out = append(slices.Clone(out), f.name)
	}
	return out
}

// fieldsQuiet is fields for a model that drops unknown keys silently.
func (j *judge) fieldsQuiet(m *schemaModel, path []string, t map[string]any) map[string]any {
	n := len(j.warns)
	got := j.fields(m, path, t)
	j.warns = j.warns[:n]
	return got
}

// fields validates t against fs and returns the values found by field
// name. Unknown keys warn (main only), with the key each most likely
// misspells.
func (j *judge) fields(m *schemaModel, path []string, t map[string]any) map[string]any {
	got := map[string]any{}
	var extra []string
	var meant map[string]string
	if j.main() {
		extra, meant = j.unknownKeys(m, path, t)
	}
	for i := range m.fields {
		f := &m.fields[i]
		found := false
		for _, k := range f.spellings() {
			v, ok := t[k]
			if !ok {
				continue
			}
			got[f.name] = v
			j.value(f, append(slices.Clone(path), k), v)
			found = true
			break
		}
		if !found && f.req {
			at := append(slices.Clone(path), f.spellings()[0])
			hint := j.misspelling(path, f.name)
			switch {
			case f.kind == kModel && len(path) == 0:
				j.failMissing(at, "the [%s] table is missing, and the agent requires it%s", f.spellings()[0], hint)
			case f.kind == kModel:
				j.failMissing(at, "the [%s] table is missing, and the agent requires it%s", pathString(at), hint)
			default:
				j.failMissing(at, "%s is missing, and the agent requires it%s", f.spellings()[0], hint)
			}
		}
	}
	if len(extra) > 0 {
		where := "the top level"
		if len(path) > 0 {
			where = "[" + pathString(path) + "]"
		}
		words := slices.Clone(extra)
		for i, k := range words {
			if s := meant[k]; s != "" {
				words[i] += " (did you mean " + s + "?)"
			}
		}
		j.warn(append(slices.Clone(path), extra[0]), "unknown key(s) in %s, ignored by the agent: %s", where, strings.Join(words, ", "))
	}
	return got
}

// unknownKeys are t's keys that no field of m reads (the first spelling
// present of each field is read), sorted, and for each one close to a
// field's spelling (model.Closest: allocaton-mode) that spelling. A typo
// of a field t lacks is kept in j.misspelt for the error about it missing.
func (j *judge) unknownKeys(m *schemaModel, path []string, t map[string]any) ([]string, map[string]string) {
	used := map[string]bool{}
	present := map[string]bool{}
	var known []string
	owner := map[string]*field{}
	for i := range m.fields {
		f := &m.fields[i]
		for _, k := range f.spellings() {
			known = append(known, k)
			owner[k] = f
			if _, ok := t[k]; ok && !present[f.name] {
				used[k], present[f.name] = true, true
			}
		}
	}
	var extra []string
	for k := range t {
		if !used[k] {
			extra = append(extra, k)
		}
	}
	slices.Sort(extra)
	meant := map[string]string{}
	for _, k := range extra {
		s := model.Closest(k, known)
		if s == "" || s == k {
			// A second spelling of a field read under its first is
			// not a typo.
			continue
		}
		meant[k] = s
		f := owner[s]
		at := misspeltAt(path, f.name)
		if _, seen := j.misspelt[at]; present[f.name] || seen {
			continue
		}
		if j.misspelt == nil {
			j.misspelt = map[string]typo{}
		}
		tp := typo{key: k, meant: s}
		if j.doc != nil {
			tp.line = j.doc.lineOfPath(append(slices.Clone(path), k))
		}
		j.misspelt[at] = tp
	}
	return extra, meant
}

// value checks one field's value.
func (j *judge) value(f *field, path []string, v any) {
	switch f.kind {
	case kAny:
	case kTable:
		if _, ok := v.(map[string]any); !ok {
			j.fail(path, "must be a table, not %s", tomlType(v))
		}
	case kStr:
		if _, ok := v.(string); !ok {
			j.fail(path, "must be a string, not %s", describe(v))
		}
	case kInt:
		n, err := laxInt(v)
		if err != nil {
			j.fail(path, "%v", err)
			return
		}
		j.bounds(f, path, n, describe(v))
	case kFloat:
		x, err := laxFloat(v)
		if err != nil {
			j.fail(path, "%v", err)
			return
		}
		j.bounds(f, path, x, describe(v))
	case kBool:
		if _, err := laxBool(v); err != nil {
			j.fail(path, "%v", err)
		}
	case kSize:
		if _, err := j.size(v); err != nil {
			j.fail(path, "%v", err)
		}
	case kEnum:
		s, ok := v.(string)
		if !ok || !slices.Contains(f.enum, s) {
			j.fail(path, "%s is not one of %s (exact spelling, case-sensitive)", describe(v), quoteAll(f.enum))
		}
	case kHostPort:
		host, err := hostPort(v)
		if err != nil {
			j.fail(path, "%v", err)
			return
		}
		if f.noLinkLocal {
			if a, err := netip.ParseAddr(host); err == nil && (a.IsLinkLocalUnicast() || a.Unmap().IsLinkLocalUnicast()) {
				j.fail(path, "%s is a link-local address: the agent cannot listen for RPC on it", host)
			}
		}
	case kHostPorts:
		// The union tries list[HostPortPair] as well, and HostPortPair's
		// parser raises TypeError, which pydantic does not turn into a
		// validation error, on an item that is not a string, an array or
		// a table: the loader crashes even where the whole list would
		// read as one pair (["127.0.0.1", 2379]).
		if list, ok := v.([]any); ok {
			for i, x := range list {
				switch x.(type) {
				case string, []any, map[string]any:
				default:
					j.fail(append(slices.Clone(path), strconv.Itoa(i)), "unrecognized value type: %s is not an address (Backend.AI's loader raises TypeError on it and the agent does not start); write \"host:port\", [\"host\", port] inside a list, or { host = ..., port = ... }", describe(x))
					return
				}
			}
		}
		if _, err := hostPort(v); err == nil {
			return
		}
		list, ok := v.([]any)
		if !ok {
			_, err := hostPort(v)
			j.fail(path, "%v", err)
			return
		}
		for i, x := range list {
			if _, err := hostPort(x); err != nil {
				j.fail(append(slices.Clone(path), strconv.Itoa(i)), "%v", err)
			}
		}
	case kPortRange:
		list, ok := v.([]any)
		if !ok || len(list) != 2 {
			j.fail(path, "must be two port numbers, e.g. [30000, 31000], not %s", describe(v))
			return
		}
		for _, x := range list {
			if _, err := pyInt(x); err != nil {
				j.fail(path, "must be two port numbers, e.g. [30000, 31000]: %v", err)
				return
			}
		}
	case kPath, kFile:
		s, ok := v.(string)
		if !ok {
			j.fail(path, "must be a path (a string), not %s", describe(v))
			return
		}
		if f.kind == kFile && !fileExists(s) {
			j.fail(path, "%q is not an existing file", s)
		}
	case kAffinity:
		switch x := v.(type) {
		case string:
			if u := strings.ToUpper(x); u != "INTERLEAVED" && u != "PREFER_SINGLE_NODE" {
				j.fail(path, "%q is not an affinity policy: want INTERLEAVED or PREFER_SINGLE_NODE", x)
			}
		case int64:
			if x != 0 && x != 1 {
				j.fail(path, "%d is not an affinity policy: want INTERLEAVED or PREFER_SINGLE_NODE", x)
			}
		case bool:
		default:
			j.fail(path, "%s is not an affinity policy: want INTERLEAVED or PREFER_SINGLE_NODE", describe(v))
		}
	case kCIEnum:
		if s, ok := v.(string); !ok || !slices.ContainsFunc(f.enum, func(e string) bool { return strings.EqualFold(e, s) }) {
			j.fail(path, "%s is not one of %s", describe(v), quoteAll(f.enum))
		}
	case kEnumList:
		list, ok := v.([]any)
		if !ok {
			j.fail(path, "must be a list of %s, not %s", quoteAll(f.enum), describe(v))
			return
		}
		for _, x := range list {
			if s, ok := x.(string); !ok || !slices.Contains(f.enum, s) {
				j.fail(path, "%s is not one of %s", describe(x), quoteAll(f.enum))
				return
			}
		}
	case kLevelMap:
		t, ok := v.(map[string]any)
		if !ok {
			j.fail(path, "must be a table of logger name -> level, not %s", describe(v))
			return
		}
		for _, k := range sortedKeys(t) {
			if s, ok := t[k].(string); !ok || !slices.ContainsFunc(logLevels, func(e string) bool { return strings.EqualFold(e, s) }) {
				j.fail(append(slices.Clone(path), k), "%s is not one of %s", describe(t[k]), quoteAll(logLevels))
			}
		}
	case kDir:
		s, ok := v.(string)
		if !ok {
			j.fail(path, "must be a path (a string), not %s", describe(v))
			return
		}
		if strings.IndexByte(s, 0) >= 0 {
			j.fail(path, "a path cannot contain a NUL byte")
			return
		}
		for _, part := range strings.Split(s, "/") {
			if len(part) > 255 {
				j.fail(path, "path component %.20q... is longer than 255 bytes", part)
				return
			}
		}
	case kUID:
		j.uid(f, path, v)
	case kStrList:
		list, ok := v.([]any)
		if !ok {
			j.fail(path, "must be a list of strings, not %s", describe(v))
			return
		}
		for _, x := range list {
			if _, ok := x.(string); !ok {
				j.fail(path, "must be a list of strings; %s is not a string", describe(x))
				return
			}
		}
	case kStrMap:
		t, ok := v.(map[string]any)
		if !ok {
			j.fail(path, "must be a table of strings, not %s", describe(v))
			return
		}
		for k, x := range t {
			if _, ok := x.(string); !ok {
				j.fail(append(slices.Clone(path), k), "must be a string, not %s", describe(x))
			}
		}
	case kModel:
		t, ok := v.(map[string]any)
		if !ok {
			j.fail(path, "must be a table, not %s", describe(v))
			return
		}
		f.sub(j, path, t)
	}
}

func (j *judge) bounds(f *field, path []string, x float64, what string) {
	switch {
	case f.ge != nil && x < *f.ge:
		j.fail(path, "%s is below the minimum %s", what, fmtNum(*f.ge))
	case f.gt != nil && !(x > *f.gt):
		j.fail(path, "%s must be greater than %s", what, fmtNum(*f.gt))
	case f.le != nil && x > *f.le:
		j.fail(path, "%s is above the maximum %s", what, fmtNum(*f.le))
	}
}

func fmtNum(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// uid is UserID/GroupID: an integer, an integer string, or the name of a
// user (group) on this machine.
func (j *judge) uid(f *field, path []string, v any) {
	switch x := v.(type) {
	case int64, bool:
		return
	case string:
		if x == "" {
			return
		}
		if _, err := pyInt(x); err == nil {
			return
		}
		var err error
		if f.user == "group" {
			_, err = user.LookupGroup(x)
		} else {
			_, err = user.Lookup(x)
		}
		if err != nil {
			j.fail(path, "no such %s %q on this machine", f.user, x)
		}
	default:
		j.fail(path, "must be a number or a %s name, not %s", f.user, describe(v))
	}
}

// size reads a BinarySize under this judge's schema.
func (j *judge) size(v any) (model.Dec, error) {
	switch x := v.(type) {
	case int64:
		return model.NewDec(x, 0), nil
	case bool:
		// Python's bool is an Integral: true is 1 byte.
		if x {
			return model.One, nil
		}
		return model.Zero, nil
	case string:
		if !j.main() && zeroFractionOnly(x) {
			// PR #8463 predates main's collapsing of "1.0" to "1".
			return model.Dec{}, fmt.Errorf("%q: fractional bytes are not allowed (write %s)", x, strings.SplitN(model.TrimPySpace(x), ".", 2)[0])
		}
		d, err := model.ParseFiniteBinarySize(x)
		if err != nil {
			return model.Dec{}, fmt.Errorf("%q is not a size: write bytes or a size such as \"64G\", \"512M\", \"8 GiB\"", x)
		}
		return d, nil
	}
	return model.Dec{}, fmt.Errorf("%s is not a size: write a string such as \"64G\" or an integer number of bytes", describe(v))
}

// zeroFractionOnly reports a size string that only main's BinarySize reads:
// an integer with a zero fraction ("1.0", "536870912.000").
func zeroFractionOnly(s string) bool {
	e := strings.ReplaceAll(model.TrimPySpace(s), "_", "")
	if !strings.Contains(e, ".") {
		return false
	}
	if _, err := strconv.ParseInt(e, 10, 64); err == nil {
		return false
	}
	d, err := model.ParseDec(e)
	if err != nil || !d.IsFinite() {
		return false
	}
	return d.IsZero() || d.Normalize().Exponent() >= 0
}

// laxIntRe is the string form pydantic's lax int accepts: digits with
// single underscores, and a fraction of zeros only.
var laxIntRe = regexp.MustCompile(`^[+-]?[0-9]+(_[0-9]+)*(\.0+)?$`)

// pyIntRe is the string form Python's int() accepts (base 10).
var pyIntRe = regexp.MustCompile(`^[+-]?[0-9]+(_[0-9]+)*$`)

// intText returns the digits of x when re accepts it (spaces around it
// ignored, underscores and a zero fraction dropped).
func intText(re *regexp.Regexp, x string) (string, bool) {
	s := strings.TrimSpace(x)
	if !re.MatchString(s) {
		return "", false
	}
	s, _, _ = strings.Cut(strings.ReplaceAll(s, "_", ""), ".")
	return s, true
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// laxInt is pydantic's lax int: integers, booleans, integral floats and
// strings of integers.
func laxInt(v any) (float64, error) {
	switch x := v.(type) {
	case int64:
		return float64(x), nil
	case bool:
		return float64(boolInt(x)), nil
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return 0, fmt.Errorf("%v is not a finite number", x)
		}
		if x != math.Trunc(x) {
			return 0, fmt.Errorf("%v is not a whole number", x)
		}
		return x, nil
	case string:
		if s, ok := intText(laxIntRe, x); ok {
			if f, err := strconv.ParseFloat(s, 64); err == nil {
				return f, nil
			}
		}
		return 0, fmt.Errorf("%q is not a whole number", x)
	}
	return 0, fmt.Errorf("must be a whole number, not %s", describe(v))
}

// pyInt is Python's int(): integers, booleans, floats (truncated) and
// base-10 integer strings.
func pyInt(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case bool:
		return boolInt(x), nil
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return 0, fmt.Errorf("%v is not a finite number", x)
		}
		return int64(x), nil
	case string:
		if s, ok := intText(pyIntRe, x); ok {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				return n, nil
			}
		}
		return 0, fmt.Errorf("%q is not a whole number", x)
	}
	return 0, fmt.Errorf("%s is not a whole number", describe(v))
}

// laxFloat is pydantic's lax float.
func laxFloat(v any) (float64, error) {
	switch x := v.(type) {
	case int64:
		return float64(x), nil
	case float64:
		return x, nil
	case bool:
		return float64(boolInt(x)), nil
	case string:
		s := strings.ReplaceAll(strings.TrimSpace(x), "_", "")
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f, nil
		}
		return 0, fmt.Errorf("%q is not a number", x)
	}
	return 0, fmt.Errorf("must be a number, not %s", describe(v))
}

// laxBool is pydantic's lax bool.
func laxBool(v any) (bool, error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case int64:
		if x == 0 || x == 1 {
			return x == 1, nil
		}
	case float64:
		if x == 0 || x == 1 {
			return x == 1, nil
		}
	case string:
		switch strings.ToLower(x) {
		case "0", "off", "f", "false", "n", "no":
			return false, nil
		case "1", "on", "t", "true", "y", "yes":
			return true, nil
		}
	}
	return false, fmt.Errorf("%s is not a boolean (true or false)", describe(v))
}

// hostPort is HostPortPair: "host:port", [host, port] or {host, port}.
// It returns the host as the agent reads it.
func hostPort(v any) (string, error) {
	h, _, err := hostPortPair(v)
	return h, err
}

// hostPortPair reads a HostPortPair in any form the agent accepts.
func hostPortPair(v any) (string, int64, error) {
	var host, port any
	switch x := v.(type) {
	case string:
		i := strings.LastIndexByte(x, ':')
		if i < 0 {
			return "", 0, fmt.Errorf("%q: want HOST:PORT", x)
		}
		host, port = x[:i], x[i+1:]
	case []any:
		if len(x) != 2 {
			return "", 0, fmt.Errorf("want [HOST, PORT] (two items), not %d items", len(x))
		}
		host, port = x[0], x[1]
	case map[string]any:
		h, okh := x["host"]
		p, okp := x["port"]
		if !okh || !okp {
			return "", 0, errors.New(`want a table with "host" and "port"`)
		}
		host, port = h, p
	default:
		return "", 0, fmt.Errorf("want HOST:PORT or { host, port }, not %s", describe(v))
	}
	n, err := pyInt(port)
	if err != nil {
		return "", 0, fmt.Errorf("port: %v", err)
	}
	if n < 1 || n > 65535 {
		return "", 0, fmt.Errorf("port %d is outside 1-65535", n)
	}
	h, _ := host.(string)
	return strings.Trim(h, "[]"), n, nil
}

func quoteAll(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = strconv.Quote(x)
	}
	return strings.Join(q, ", ")
}

// describe names a value for a message: its TOML spelling when short.
func describe(v any) string {
	switch x := v.(type) {
	case string:
		if len(x) > 40 {
			return fmt.Sprintf("%.40q...", x)
		}
		return strconv.Quote(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		f := strconv.FormatFloat(x, 'f', -1, 64)
		if !strings.ContainsAny(f, ".naN") {
			f += ".0"
		}
		return f + " (a float)"
	case bool:
		return strconv.FormatBool(x)
	}
	return tomlType(v)
}
