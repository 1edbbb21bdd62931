package untrusted

import "reflect"

// Clean applies Text to every string that ptr (a pointer to a decoded
// document) reaches: exported struct fields, slice and array elements,
// pointers, and map keys and values, string kinds of any named type
// included. It is for a document decoded from a peer, so that no field,
// present or added later, enters unescaped. Unexported fields are left
// alone. Two map keys that become the same after escaping keep one
// entry (the escaped text already says the key was odd).
func Clean(ptr any) { Apply(ptr, Text) }

// Apply replaces every string s that ptr reaches, as Clean does, with
// f(s). Tests use it to plant hostile text in every field.
func Apply(ptr any, f func(string) string) {
	v := reflect.ValueOf(ptr)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return
	}
	w := walker{f: f, strs: map[reflect.Type]bool{}, fields: map[reflect.Type][]int{}}
	w.walk(v.Elem())
}

type walker struct {
	f func(string) string
	// strs caches whether a type can hold a string at all, so numeric
	// subtrees (decimals, telemetry) are skipped without a visit.
	strs map[reflect.Type]bool
	// fields caches a struct type's exported fields that can hold one.
	fields map[reflect.Type][]int
}

func (w *walker) stringFields(t reflect.Type) []int {
	if fs, ok := w.fields[t]; ok {
		return fs
	}
	var fs []int
	for i := 0; i < t.NumField(); i++ {
		if f := t.Field(i); f.IsExported() && w.holds(f.Type) {
			fs = append(fs, i)
		}
	}
	w.fields[t] = fs
	return fs
}

func (w *walker) holds(t reflect.Type) bool {
	if h, ok := w.strs[t]; ok {
		return h
	}
	// Assume yes while visiting, so a recursive type terminates.
	w.strs[t] = true
	h := false
	switch t.Kind() {
	case reflect.String, reflect.Interface:
		h = true
	case reflect.Pointer, reflect.Slice, reflect.Array:
		h = w.holds(t.Elem())
	case reflect.Map:
		h = w.holds(t.Key()) || w.holds(t.Elem())
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if f := t.Field(i); f.IsExported() && w.holds(f.Type) {
				h = true
				break
			}
		}
	}
	w.strs[t] = h
	return h
}

// walk cleans v in place (v must be settable where it changes) and says
// whether anything changed.
func (w *walker) walk(v reflect.Value) bool {
	if !w.holds(v.Type()) {
		return false
	}
	switch v.Kind() {
	case reflect.String:
		s := v.String()
		if c := w.f(s); c != s {
			v.SetString(c)
			return true
		}
	case reflect.Pointer:
		if !v.IsNil() {
			return w.walk(v.Elem())
		}
	case reflect.Interface:
		if v.IsNil() {
			return false
		}
		c := reflect.New(v.Elem().Type()).Elem()
		c.Set(v.Elem())
		if w.walk(c) {
			v.Set(c)
			return true
		}
	case reflect.Struct:
		changed := false
		for _, i := range w.stringFields(v.Type()) {
			if w.walk(v.Field(i)) {
				changed = true
			}
		}
		return changed
	case reflect.Slice, reflect.Array:
		changed := false
		for i := 0; i < v.Len(); i++ {
			if w.walk(v.Index(i)) {
				changed = true
			}
		}
		return changed
	case reflect.Map:
		return w.walkMap(v)
	}
	return false
}

func (w *walker) walkMap(m reflect.Value) bool {
	if m.IsNil() {
		return false
	}
	type change struct{ old, key, val reflect.Value }
	var changes []change
	kt, vt := m.Type().Key(), m.Type().Elem()
	keyHolds, valHolds := w.holds(kt), w.holds(vt)
	for it := m.MapRange(); it.Next(); {
		k, v := it.Key(), it.Value()
		nk, nv := k, v
		kc, vc := false, false
		if keyHolds {
			if kt.Kind() == reflect.String {
				if c := w.f(k.String()); c != k.String() {
					nk = reflect.New(kt).Elem()
					nk.SetString(c)
					kc = true
				}
			} else {
				nk = reflect.New(kt).Elem()
				nk.Set(k)
				kc = w.walk(nk)
			}
		}
		if valHolds {
			switch vt.Kind() {
			case reflect.Map, reflect.Pointer:
				// A reference: cleaned where it points, the entry stays.
				w.walk(v)
			case reflect.String:
				if c := w.f(v.String()); c != v.String() {
					nv = reflect.New(vt).Elem()
					nv.SetString(c)
					vc = true
				}
			default:
				nv = reflect.New(vt).Elem()
				nv.Set(v)
				vc = w.walk(nv)
			}
		}
		if kc || vc {
			changes = append(changes, change{k, nk, nv})
		}
	}
	for _, c := range changes {
		m.SetMapIndex(c.old, reflect.Value{})
	}
	for _, c := range changes {
		m.SetMapIndex(c.key, c.val)
	}
	return len(changes) > 0
}
