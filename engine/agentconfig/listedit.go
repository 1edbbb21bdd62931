package agentconfig

import (
	"strconv"
	"strings"
)

// setList sets a list of strings at path. A multi-line array written one
// element per line keeps the lines of the elements that stay, with their
// comments ("# 3g.20gb") and indentation; new elements get lines of their
// own. Anything else is written as a one-line array.
func setList[E ~string](e *editor, path []string, xs []E) {
	ids := make([]string, len(xs))
	for i, x := range xs {
		ids[i] = string(x)
	}
	if kv := e.doc.kv(path); kv != nil {
		if text, ok := reflowList(string(e.doc.raw[kv.valStart:kv.end]), ids); ok {
			e.set(path, nil, text)
			return
		}
	}
	e.set(path, nil, tomlStrings(ids))
}

// listLine is one line inside a multi-line array: an element (id set) or
// a comment or blank line (notes, carried with the element that follows).
type listLine struct {
	id, indent, lit, rest string
	notes                 []string
}

// reflowList rewrites a one-element-per-line array to hold ids. ok is
// false when old is not such an array (one line, several elements on a
// line, nested values): the caller writes a fresh one-line array then.
func reflowList(old string, ids []string) (string, bool) {
	nl := "\n"
	if strings.Contains(old, "\r\n") {
		nl = "\r\n"
	}
	lines := strings.Split(old, nl)
	if len(lines) < 3 {
		return "", false
	}
	first, last := lines[0], lines[len(lines)-1]
	if !strings.HasPrefix(first, "[") || (strings.TrimSpace(first[1:]) != "" && !strings.HasPrefix(strings.TrimSpace(first[1:]), "#")) ||
		strings.TrimSpace(last) != "]" {
		return "", false
	}
	var elems []listLine
	var notes []string
	for _, ln := range lines[1 : len(lines)-1] {
		t := strings.TrimSpace(ln)
		if t == "" || strings.HasPrefix(t, "#") {
			notes = append(notes, ln)
			continue
		}
		el, ok := parseListLine(ln)
		if !ok {
			return "", false
		}
		el.notes, notes = notes, nil
		elems = append(elems, el)
	}
	if len(elems) == 0 {
		return "", false
	}
	byID := make(map[string]listLine, len(elems))
	for _, el := range elems {
		if _, dup := byID[el.id]; dup {
			return "", false
		}
		byID[el.id] = el
	}
	var b strings.Builder
	b.WriteString(first)
	b.WriteString(nl)
	for _, id := range ids {
		el, kept := byID[id]
		if !kept {
			el = listLine{indent: elems[len(elems)-1].indent, lit: tomlString(id)}
		}
		for _, n := range el.notes {
			b.WriteString(n)
			b.WriteString(nl)
		}
		b.WriteString(el.indent + el.lit + "," + el.rest)
		b.WriteString(nl)
	}
	for _, n := range notes {
		b.WriteString(n)
		b.WriteString(nl)
	}
	b.WriteString(last)
	return b.String(), true
}

// parseListLine reads `  "id",   # comment` (the comma and the comment
// optional; basic or literal string).
func parseListLine(ln string) (listLine, bool) {
	t := strings.TrimLeft(ln, " \t")
	el := listLine{indent: ln[:len(ln)-len(t)]}
	var end int
	switch {
	case strings.HasPrefix(t, `'`):
		i := strings.IndexByte(t[1:], '\'')
		if i < 0 {
			return el, false
		}
		end = i + 2
		el.id = t[1 : end-1]
	case strings.HasPrefix(t, `"`):
		i := 1
		for i < len(t) && t[i] != '"' {
			if t[i] == '\\' {
				i++
			}
			i++
		}
		if i >= len(t) {
			return el, false
		}
		end = i + 1
		id, err := strconv.Unquote(t[:end])
		if err != nil {
			return el, false
		}
		el.id = id
	default:
		return el, false
	}
	el.lit = t[:end]
	rest := t[end:]
	r := strings.TrimLeft(rest, " \t")
	if strings.HasPrefix(r, ",") {
		rest = rest[:len(rest)-len(r)] + r[1:]
		r = strings.TrimLeft(r[1:], " \t")
	}
	if r != "" && !strings.HasPrefix(r, "#") {
		return el, false
	}
	el.rest = strings.TrimRight(rest, " \t\r")
	if r == "" {
		el.rest = ""
	}
	return el, true
}
