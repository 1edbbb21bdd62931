package complete

// Value is how a flag's value completes when nothing is read for it:
// Words, a fixed set; else files whose names end in one of Exts; else,
// with Dirs, directories.
type Value struct {
	Words []string
	Exts  []string
	Dirs  bool
}

// Static lists, by flag name, the flags whose values complete as a Value.
// The flags whose values are read from the node (--theme, --devices, the
// agents', devices' and slots' flags) are the command's to complete.
func Static() map[string]Value {
	words := func(ws ...string) Value { return Value{Words: ws} }
	files := func(exts ...string) Value { return Value{Exts: exts} }
	dirs := Value{Dirs: true}
	return map[string]Value{
		"config":       files("toml"),
		"from":         files("toml"),
		"mock-etcd":    files("json"),
		"case":         files("json"),
		"scratch-root": dirs,
		"mode":         words("shared", "auto-split", "manual"),
		"strategy":     words("evenly", "fill"),
		"affinity":     words("interleaved", "prefer-single-node"),
		"schema":       words("main", "bep-1044"),
		"partition":    words("slot-based", "device-based"),
		"format":       words("slot-based", "device-based"),
		"alloc-map":    words("ratio", "absolute"),
		// The history's flags.
		"history":  dirs,
		"dir":      dirs,
		"keep":     words("7d", "3d", "1d", "12h"),
		"max-size": words("100MiB", "1GiB", "20MiB"),
		"at":       words("-1h", "-2h", "-1d", "now"),
		"since":    words("-1h", "-1d", "-7d"),
		"until":    words("now", "-1h"),
		// The CUDA plugin flags.
		"plugin-config": files("json", "toml"),
		"cuda-plugin":   words("open", "fractional"),
	}
}

// Completes says whether a flag named name, whose value is of type typ
// (pflag's Value.Type), takes its completion: a bool or an int has
// nothing to complete, and the partition flags' AGENT=VALUE (cpu, mem,
// move, slot) repeat, so a flag of the same name that does not (simulate's
// --mem, a size) is another flag.
func Completes(name, typ string) bool {
	switch {
	case typ == "bool" || typ == "int":
		return false
	case name == "cpu" || name == "mem" || name == "move" || name == "slot":
		return typ == "stringArray"
	}
	return true
}
