package model

import (
	"fmt"
	"strconv"
)

// Severity of an Issue.
type Severity int

// Severities, in increasing order.
const (
	SevInfo Severity = iota
	SevWarning
	SevError
)

func (s Severity) String() string {
	switch s {
	case SevInfo:
		return "info"
	case SevWarning:
		return "warning"
	default:
		return "error"
	}
}

// MarshalText makes severities readable in JSON.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Issue codes. Stable: scripts match on them.
const (
	IssueParse          = "parse-error"          // resource.txt does not parse
	IssueOverCapacity   = "over-capacity"        // a device held beyond its capacity
	IssueUnknownDevice  = "unknown-device"       // allocation on a device the inventory lacks
	IssueUnsupported    = "unsupported-resource" // non-zero slot no device provides
	IssueDeviceSource   = "device-source"        // NVML / mock config problems
	IssueWatch          = "watch"                // fsnotify overflow, watch limit
	IssueRootMissing    = "scratch-root-missing" // a scratch root is gone
	IssuePermission     = "permission-denied"
	IssueSymlinkEscape  = "symlink-escape" // a symlink pointing out of a root
	IssueConfig         = "config"         // agent.toml problems
	IssueDriftNotOwner  = "drift-not-owner"
	IssueDriftUnowned   = "drift-unowned"
	IssueDriftMemBeyond = "drift-mem-beyond-host"
	// IssueDriftCPUBeyond: a slot-based partition gives its agents more
	// CPU cores, together, than the host has.
	IssueDriftCPUBeyond = "drift-cpu-beyond-host"
	// IssueAgentConflict: a kernel's recovery.json names an agent whose
	// scratch root does not hold it.
	IssueAgentConflict = "agent-conflict"
	// IssueUnattributed: no record says whose a kernel in a scratch root
	// that several agents share is.
	IssueUnattributed = "agent-unattributed"
	// IssueRecord: a recovery.json that cannot be read or parsed.
	IssueRecord = "recovery-record"
	// IssueNoFinalNewline: a resource.txt whose last line has no newline,
	// unchanged for the settle time, read as Backend.AI reads it.
	IssueNoFinalNewline = "no-final-newline"
	// IssueNoAllocation: a resource.txt whose SLOTS asks for a slot that
	// no allocation line lists (a file cut short at a line's end).
	IssueNoAllocation = "no-allocation"
	// IssueRestartPending: an agent runs an older agent.toml than the one
	// on disk.
	IssueRestartPending = "restart-pending"
	// IssueFlagUnmatched: a device flag (--fgpu-capacity) names a device
	// the plugin does not register, or is not used by the plugin in force:
	// the operator's figure reaches no bar. One-shot reports say it on
	// stderr too.
	IssueFlagUnmatched = "flag-unmatched"
	// IssuePluginSettings: the CUDA plugin's settings cannot be read (etcd
	// unreachable) or hold a value that cannot be used.
	IssuePluginSettings = "plugin-settings"
	// IssuePluginEvidence: the kernels disagree with each other or with
	// the rule that chose the CUDA plugin.
	IssuePluginEvidence = "plugin-evidence"
	// IssueBadID: an id Backend.AI defines as a UUID (kernel, session,
	// owner) that is not one, from a record or a peer's snapshot.
	IssueBadID = "bad-id"
	// IssueFromSummary: a node seen through Prometheus, which carries
	// its issue counts and per-agent totals, not the issues or kernels.
	IssueFromSummary = "from-summary"
)

// Issue is something an operator should know about, with where it comes
// from.
type Issue struct {
	Severity Severity  `json:"severity"`
	Code     string    `json:"code"`
	Message  string    `json:"message"`
	File     string    `json:"file,omitempty"`
	Line     int       `json:"line,omitempty"`
	Device   DeviceKey `json:"-"`
	Kernel   KernelID  `json:"kernel,omitempty"`
	Agent    AgentID   `json:"agent,omitempty"`
}

// Identity is what stays the same while the condition an issue reports
// goes on, for telling a new issue from one that continues (the console
// flashes new ones). It is the issue's whole content, but for
// over-capacity, whose message carries amounts that move with every
// kernel while the condition lasts: its identity is where it is (the
// device; none for the node-level warning about CPU cores time-shared
// across agents, whose list of cores comes and goes) and its severity,
// so it is new when the condition starts or worsens into an error, not
// each time a kernel adds or frees a share of it.
func (i *Issue) Identity() string {
	msg := i.Message
	if i.Code == IssueOverCapacity {
		msg = ""
	}
	return i.Severity.String() + "|" + i.Code + "|" + i.File + "|" + strconv.Itoa(i.Line) + "|" +
		string(i.Kernel) + "|" + string(i.Agent) + "|" + i.Device.String() + "|" + msg
}

func (i Issue) String() string {
	loc := ""
	if i.File != "" {
		loc = i.File
		if i.Line > 0 {
			loc = fmt.Sprintf("%s:%d", i.File, i.Line)
		}
		loc += ": "
	}
	return fmt.Sprintf("%s %s: %s%s", i.Severity, i.Code, loc, i.Message)
}

// Error lets an Issue be returned as an error.
func (i *Issue) Error() string { return i.String() }
