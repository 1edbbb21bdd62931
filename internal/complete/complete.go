// Package complete works out what a Tab offers for fgtop's flag values:
// from what was typed and the names the node has (which the caller reads:
// agent.toml, the device source, the history), the words to offer and
// whether the shell is to add a space after the one taken; which flags
// complete with fixed words, files or directories (Static, Completes). It
// also holds the bash script's stand-ins for the bash-completion package.
// Subpackage lookup does the reads. Nothing
// here reads a file or knows the command line library, so every answer
// is tested as a table.
package complete

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/fgtop/fgtop/model"
)

// BashStandIns follows cobra's bash script: stand-ins for the two helpers
// of the bash-completion package that the script calls, defined only where
// that package is not loaded, so that completion works on a bare bash too.
const BashStandIns = `
# Stand-ins for bash-completion's helpers, only where that package is absent.
if ! declare -F _get_comp_words_by_ref >/dev/null 2>&1; then
_get_comp_words_by_ref()
{
    # Words split at blanks only, as "-n =:" asks: --move cuda:0=a is one word.
    local line=${COMP_LINE:0:COMP_POINT}
    local -a ws
    read -r -a ws <<<"$line"
    if [[ -z $line || $line == *[[:space:]] ]]; then
        ws+=("")
    fi
    words=("${ws[@]}")
    cword=$((${#ws[@]} - 1))
    cur=${ws[cword]}
    prev=
    if ((cword > 0)); then
        prev=${ws[cword - 1]}
    fi
}
fi
if ! declare -F _filedir >/dev/null 2>&1; then
_filedir()
{
    local IFS=$'\n' f re
    local -a found
    found=($(compgen -d -- "$cur"))
    if [[ ${1-} != -d ]]; then
        re="\\.(${1%|})\$"
        for f in $(compgen -f -- "$cur"); do
            if [[ ! -d $f ]] && [[ -z ${1%|} || $f =~ $re ]]; then
                found+=("$f")
            fi
        done
    fi
    compopt -o filenames 2>/dev/null
    COMPREPLY+=("${found[@]}")
}
fi
`

// Fields completes a value made of fields joined by "=": --agent AGENT
// (one field), --cpu AGENT=AMOUNT (one field, then the user's; open),
// --move DEVICE=AGENT (two), --slot AGENT=SLOT=AMOUNT (two, open). The
// field being typed is the one after the last "=" typed; each word is
// what was typed up to that "=", a name of the field and, when another
// field follows, "=" (noSpace: the value is not finished). Past the last
// field of an open value the amount is the user's to type: nothing.
// Typed beyond the last field of a closed value, the last field is
// offered again after the "=" that began it.
//
// fields are called only for the field being typed: reading the device
// source may take the whole of a completion's time.
func Fields(typed string, open bool, fields ...func() []string) (words []string, noSpace bool) {
	if len(fields) == 0 {
		return nil, false
	}
	i := strings.Count(typed, "=")
	if i >= len(fields) {
		if open {
			return nil, false
		}
		i = len(fields) - 1
	}
	// The prefix ends after the i-th "=".
	prefix, rest := "", typed
	for range i {
		before, after, _ := strings.Cut(rest, "=")
		prefix += before + "="
		rest = after
	}
	more := open || i < len(fields)-1
	suffix := ""
	if more {
		suffix = "="
	}
	for _, name := range fields[i]() {
		words = append(words, prefix+name+suffix)
	}
	return words, more
}

// deviceSources are the words --devices takes besides a file.
var deviceSources = [...]string{"auto", "nvml"}

// DeviceSource completes --devices: auto and nvml, then the files of a
// device source (mock-accelerator.toml, devices.json). Before anything is
// typed the words come with files() (the current directory's regular
// files), of which those that can be a source are offered: the shell's
// own file completion cannot be mixed with words. ok is false when the
// typed value is neither word's beginning: the shell is to complete a
// .toml or .json file.
func DeviceSource(typed string, files func() []string) (words []string, ok bool) {
	if typed == "" {
		words = append(words, deviceSources[:]...)
		for _, f := range files() {
			if ext := filepath.Ext(f); ext == ".toml" || ext == ".json" {
				words = append(words, f)
			}
		}
		return words, true
	}
	for _, w := range deviceSources {
		if strings.HasPrefix(w, typed) {
			words = append(words, w)
		}
	}
	return words, len(words) > 0
}

// Theme completes --theme: the built-in themes' names, then those of
// userFiles() (the user theme directory's regular files) that are themes
// (NAME.toml) of another name. ok is false when the typed value looks
// like a path: the shell is to complete a .toml file.
func Theme(typed string, builtin []string, userFiles func() []string) (words []string, ok bool) {
	if strings.ContainsAny(typed, "/.~") {
		return nil, false
	}
	words = slices.Clone(builtin)
	for _, f := range userFiles() {
		if n, ok := strings.CutSuffix(f, ".toml"); ok && !slices.Contains(words, n) {
			words = append(words, n)
		}
	}
	return words, true
}

// Agents lists the agents to offer: config's (the ids of the agent.toml
// the command line names) and those of the --scratch-root values roots
// (AGENT=DIR names AGENT; a plain DIR its last element, as the commands
// name it), sorted, each once.
func Agents(config, roots []string) []string {
	ids := slices.Clone(config)
	for _, v := range roots {
		agent, _, ok := strings.Cut(v, "=")
		if !ok {
			agent = filepath.Base(filepath.Clean(v))
		}
		ids = append(ids, agent)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// Slots lists the slot names --slot AGENT=SLOT= offers: cpu and mem
// first, then the others of slots (those the device source registers and
// the config's tables name), sorted, each once.
func Slots(slots []string) []string {
	out := []string{"cpu", "mem"}
	for _, s := range slots {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	slices.Sort(out[2:])
	return out
}

// Movable lists, as PLUGIN:ID, the devices --move can move: all of devs
// but memory, which moves with --mem.
func Movable(devs []model.Device) []string {
	var out []string
	for i := range devs {
		if d := &devs[i]; d.Name != "mem" {
			out = append(out, d.Key().String())
		}
	}
	return out
}

// Accelerators lists, as PLUGIN:ID, the accelerators of devs: what
// history --device offers from the record's latest state.
func Accelerators(devs []model.Device) []string {
	var out []string
	for i := range devs {
		if d := &devs[i]; d.IsAccelerator() {
			out = append(out, d.Key().String())
		}
	}
	return out
}
