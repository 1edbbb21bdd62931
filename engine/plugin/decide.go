package plugin

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/fgtop/fgtop/internal/safefile"
	"github.com/fgtop/fgtop/model"
)

// Module paths of the CUDA plugins, as [agent] allow-compute-plugins and
// block-compute-plugins name them. The fractional plugin's is assumed
// (closed source): the package Lablup ships it in.
const (
	ModuleOpen       = "ai.backend.accelerator.cuda_open"
	ModuleFractional = "ai.backend.accelerator.cuda"
)

// Rules that decide the plugin kind (model.PluginInfo.Source), in the
// order they are tried.
const (
	RuleFlag     = "flag"
	RuleAgent    = "agent-config"
	RuleSettings = "plugin-settings"
	RuleScratch  = "scratch"
	RuleDefault  = "default"
)

// ParseKind reads --cuda-plugin: "open" or "fractional" ("" is unset).
func ParseKind(s string) (string, error) {
	switch s {
	case "", model.PluginCUDAOpen, model.PluginCUDAFractional:
		return s, nil
	}
	return "", fmt.Errorf("%q: want %q (cuda_open, cuda.device) or %q (fGPU, cuda.shares)", s, model.PluginCUDAOpen, model.PluginCUDAFractional)
}

// MatchPluginList is the agent's match_plugin_list: module equals an item
// or starts with item + ".".
func MatchPluginList(module string, items []string) bool {
	for _, it := range items {
		if module == it || strings.HasPrefix(module, it+".") {
			return true
		}
	}
	return false
}

// Evidence is what the kernels' resource.txt files say about the plugin.
type Evidence struct {
	// Files is how many resource.txt files were read.
	Files int
	// Shares counts files with a cuda.shares allocation (CUDA.SHARES_SHARES)
	// or fractional-only lines (CUDA_RESOURCE_VIRTUALIZED=1,
	// a non-empty CUDA_MEMORY_LIMITS); Device counts files with a
	// cuda.device allocation on integer ids or CUDA_RESOURCE_VIRTUALIZED=0.
	Shares, Device int
	// Example names one file of each kind, for messages.
	SharesExample, DeviceExample string
}

// Kind is what the evidence says: "" when it says nothing or disagrees.
func (e Evidence) Kind() string {
	switch {
	case e.Shares > 0 && e.Device == 0:
		return model.PluginCUDAFractional
	case e.Device > 0 && e.Shares == 0:
		return model.PluginCUDAOpen
	}
	return ""
}

// Disagrees reports whether some kernels look fractional and others not.
func (e Evidence) Disagrees() bool { return e.Shares > 0 && e.Device > 0 }

// Limits of ScanEvidence.
const (
	MaxEvidenceFiles     = 512
	maxEvidenceFileBytes = 64 << 10
)

var intID = regexp.MustCompile(`^[0-9]+$`)

// ScanEvidence reads up to MaxEvidenceFiles <root>/*/config/resource.txt
// files (64 KiB of each) for the plugin's traces.
func ScanEvidence(roots []string) Evidence {
	var e Evidence
	for _, root := range roots {
		matches, _ := filepath.Glob(filepath.Join(root, "*", "config", "resource.txt"))
		for _, p := range matches {
			if e.Files >= MaxEvidenceFiles {
				return e
			}
			// Non-blocking and regular files only, as the scanner reads
			// them: a FIFO planted as a resource.txt must not hang the
			// decision (and with it snapshot, check and the console).
			f, err := safefile.Open(p, true)
			if err != nil {
				continue
			}
			shares, device := evidenceOf(io.LimitReader(f, maxEvidenceFileBytes))
			f.Close()
			e.Files++
			if shares {
				e.Shares++
				if e.SharesExample == "" {
					e.SharesExample = p
				}
			} else if device {
				e.Device++
				if e.DeviceExample == "" {
					e.DeviceExample = p
				}
			}
		}
	}
	return e
}

// evidenceOf reads one resource.txt: does it look fractional, or open?
func evidenceOf(r io.Reader) (shares, device bool) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxEvidenceFileBytes)
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if !ok {
			continue
		}
		switch k {
		case "CUDA.SHARES_SHARES":
			if strings.TrimSpace(v) != "" {
				shares = true
			}
		case "CUDA_RESOURCE_VIRTUALIZED":
			switch strings.TrimSpace(v) {
			case "1":
				shares = true
			case "0":
				device = true
			}
		case "CUDA_MEMORY_LIMITS":
			if strings.TrimSpace(v) != "" {
				shares = true
			}
		case "CUDA.DEVICE_SHARES":
			for _, ent := range strings.Split(v, ",") {
				id, _, _ := strings.Cut(strings.TrimSpace(ent), ":")
				if intID.MatchString(id) {
					device = true
				}
			}
		}
	}
	return shares, device
}

// Inputs are what Decide weighs.
type Inputs struct {
	// Flag is --cuda-plugin ("" unset).
	Flag string
	// Allow is [agent] allow-compute-plugins (AllowSet false: unset),
	// Block is block-compute-plugins.
	Allow    []string
	AllowSet bool
	Block    []string
	// Settings are the plugin settings, nil when never read.
	Settings *Settings
	Evidence Evidence
}

// Decide says which CUDA plugin runs, by the first rule that tells:
// --cuda-plugin; the agent's plugin allow/block lists; allocation_mode in
// the settings; the kernels' resource.txt; otherwise cuda_open, the plugin
// in Backend.AI main. The issues name evidence that disagrees with the
// choice, and lists that leave no CUDA plugin at all.
func Decide(in Inputs) (model.PluginInfo, []model.Issue) {
	var issues []model.Issue
	info := model.PluginInfo{}
	loads := func(module string) bool {
		if in.AllowSet && !MatchPluginList(module, in.Allow) {
			return false
		}
		return !MatchPluginList(module, in.Block)
	}
	open, frac := loads(ModuleOpen), loads(ModuleFractional)
	switch {
	case in.Flag != "":
		info.Kind, info.Source, info.Detail = in.Flag, RuleFlag, "--cuda-plugin "+in.Flag
	case open && !frac:
		info.Kind, info.Source, info.Detail = model.PluginCUDAOpen, RuleAgent, "agent.toml [agent] compute-plugin lists load "+ModuleOpen+" only"
	case frac && !open:
		info.Kind, info.Source, info.Detail = model.PluginCUDAFractional, RuleAgent, "agent.toml [agent] compute-plugin lists load "+ModuleFractional+" only"
	case in.Settings != nil && in.Settings.AllocationMode != "":
		info.Kind, info.Source = model.PluginCUDAOpen, RuleSettings
		if in.Settings.Fractional() {
			info.Kind = model.PluginCUDAFractional
		}
		info.Detail = "allocation_mode = " + in.Settings.AllocationMode
	case in.Evidence.Kind() != "":
		info.Kind, info.Source = in.Evidence.Kind(), RuleScratch
		if info.Kind == model.PluginCUDAFractional {
			// The fractional plugin's marks, which it writes for a kernel
			// that holds no shares too (CUDA_RESOURCE_VIRTUALIZED=1).
			info.Detail = fmt.Sprintf("%d kernel(s) carry the fractional plugin's lines (cuda.shares, CUDA_RESOURCE_VIRTUALIZED=1), e.g. %s", in.Evidence.Shares, in.Evidence.SharesExample)
		} else {
			info.Detail = fmt.Sprintf("%d kernel(s) hold cuda.device on index ids, e.g. %s", in.Evidence.Device, in.Evidence.DeviceExample)
		}
	default:
		info.Kind, info.Source, info.Detail = model.PluginCUDAOpen, RuleDefault, "nothing says otherwise: cuda_open, the plugin in Backend.AI main"
	}
	if !open && !frac && in.Flag == "" {
		issues = append(issues, model.Issue{Severity: model.SevWarning, Code: model.IssueConfig,
			Message: "agent.toml [agent] allow/block-compute-plugins load neither CUDA plugin (" + ModuleOpen + ", " + ModuleFractional + "): the agent registers no GPU; fgtop still lists them as " + info.Kind + " would"})
	}
	ev := in.Evidence
	switch {
	case ev.Disagrees():
		issues = append(issues, model.Issue{Severity: model.SevWarning, Code: model.IssuePluginEvidence,
			Message: fmt.Sprintf("the kernels disagree about the CUDA plugin: %d carry the fractional plugin's lines (e.g. %s), %d hold cuda.device on index ids (e.g. %s); showing %s (%s)",
				ev.Shares, ev.SharesExample, ev.Device, ev.DeviceExample, info.Kind, info.Source)})
	case ev.Kind() != "" && ev.Kind() != info.Kind:
		ex := ev.SharesExample
		what := "carry the fractional plugin's lines (cuda.shares, CUDA_RESOURCE_VIRTUALIZED=1)"
		if ev.Kind() == model.PluginCUDAOpen {
			ex, what = ev.DeviceExample, "hold cuda.device on index ids"
		}
		issues = append(issues, model.Issue{Severity: model.SevWarning, Code: model.IssuePluginEvidence,
			Message: fmt.Sprintf("the kernels' resource.txt files %s (e.g. %s), as the %s plugin writes them, but %s says the %s plugin runs: check --cuda-plugin, agent.toml and the plugin settings",
				what, ex, ev.Kind(), info.Detail, info.Kind)})
	}
	return info, issues
}
