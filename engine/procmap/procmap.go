// Package procmap tells which container a host process runs in, from
// /proc/<pid>/cgroup, so that a GPU process NVML names by host PID can be
// credited to the Backend.AI kernel whose resource.txt CID= line names that
// container.
//
// A PID names a process only for as long as it lives: between the driver's
// process list and the reads here, a process can exit (its PID gone) and
// its PID can be handed to a newer process in another container (reused).
// Resolver never credits such a PID: it keys every answer on (PID, start
// time from /proc/<pid>/stat), reads the start time again after the cgroup
// file, and refuses a process that started after the listing it is asked
// about.
package procmap

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ClockTicks is USER_HZ, the unit of /proc/<pid>/stat's start time and of
// the 10 ms resolution of /proc/uptime: 100 on every Linux architecture
// the GPU drivers ship for.
const ClockTicks = 100

// maxTicks bounds a start time or an uptime: beyond a century it is
// garbage, and would overflow arithmetic on it.
const maxTicks = 100 * 365 * 24 * 3600 * ClockTicks

// MaxCgroupSize bounds what ParseCgroup reads: a real file is a few
// hundred bytes (cgroup v1 lists a dozen hierarchies).
const MaxCgroupSize = 64 << 10

// Stat is what fgtop uses of /proc/<pid>/stat.
type Stat struct {
	// Comm is the command name (field 2, without its parentheses).
	Comm string
	// StartTicks is when the process started, in clock ticks after boot
	// (field 22).
	StartTicks uint64
}

// ParseStat parses /proc/<pid>/stat. The command name may hold spaces and
// parentheses, so fields are counted from the last ')'.
func ParseStat(raw []byte) (Stat, error) {
	open := bytes.IndexByte(raw, '(')
	i := bytes.LastIndexByte(raw, ')')
	if i < 0 || open < 0 || open > i {
		return Stat{}, errors.New("malformed stat: no command name")
	}
	fields := strings.Fields(string(raw[i+1:]))
	// fields[0] is field 3 (state); the start time is field 22.
	if len(fields) < 20 {
		return Stat{}, errors.New("malformed stat: too few fields")
	}
	ticks, err := strconv.ParseUint(fields[19], 10, 64)
	if err != nil {
		return Stat{}, fmt.Errorf("malformed stat: %w", err)
	}
	if ticks > maxTicks {
		return Stat{}, errors.New("malformed stat: start time out of range")
	}
	return Stat{Comm: string(raw[open+1 : i]), StartTicks: ticks}, nil
}

// ParseUptime parses /proc/uptime ("12345.67 54321.00") into clock ticks
// since boot, the clock start times are counted on.
func ParseUptime(raw []byte) (uint64, error) {
	f := strings.Fields(string(raw))
	if len(f) == 0 {
		return 0, errors.New("malformed uptime: empty")
	}
	whole, frac, _ := strings.Cut(f[0], ".")
	sec, err := strconv.ParseUint(whole, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("malformed uptime %q: %w", f[0], err)
	}
	if sec > maxTicks/ClockTicks {
		return 0, fmt.Errorf("malformed uptime %q: out of range", f[0])
	}
	var cs uint64
	switch {
	case frac == "":
	case len(frac) <= 2:
		v, err := strconv.ParseUint(frac, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("malformed uptime %q: %w", f[0], err)
		}
		if len(frac) == 1 {
			v *= 10
		}
		cs = v
	default:
		// More digits than the kernel writes: keep hundredths, rounded down
		// (a later start must never look earlier than the mark).
		v, err := strconv.ParseUint(frac[:2], 10, 64)
		if err != nil || strings.Trim(frac[2:], "0123456789") != "" {
			return 0, fmt.Errorf("malformed uptime %q", f[0])
		}
		cs = v
	}
	return sec*ClockTicks + cs*ClockTicks/100, nil
}

// ParseCgroup reads /proc/<pid>/cgroup (cgroup v1 "ID:controllers:/path"
// lines, the v2 "0::/path" line, or both on a hybrid host) and returns the
// container id it names, lower-cased, or "" for a process in no container
// (a host process: a user session, a system service).
//
// A container id is a path component of 64 hex digits, bare or wrapped the
// way each runtime and cgroup driver writes it:
//
//	/docker/<id>                                  docker, cgroupfs driver
//	/system.slice/docker-<id>.scope               docker, systemd driver
//	/kubepods/burstable/pod<uid>/<id>             kubelet, cgroupfs driver
//	/kubepods.slice/.../cri-containerd-<id>.scope containerd, systemd driver
//	crio-<id>.scope, libpod-<id>.scope            CRI-O, podman
//
// Lines are read in order and the first id found wins; within a path the
// outermost id wins, so a container nested in a kernel's container (docker
// in docker) is still the kernel's.
func ParseCgroup(data []byte) string {
	if len(data) > MaxCgroupSize {
		data = data[:MaxCgroupSize]
	}
	for len(data) > 0 {
		line := data
		if n := bytes.IndexByte(data, '\n'); n >= 0 {
			line, data = data[:n], data[n+1:]
		} else {
			data = nil
		}
		// hierarchy-ID:controller-list:path; the path may hold ':'.
		c1 := bytes.IndexByte(line, ':')
		if c1 < 0 {
			continue
		}
		c2 := bytes.IndexByte(line[c1+1:], ':')
		if c2 < 0 {
			continue
		}
		path := line[c1+1+c2+1:]
		for len(path) > 0 {
			comp := path
			if n := bytes.IndexByte(path, '/'); n >= 0 {
				comp, path = path[:n], path[n+1:]
			} else {
				path = nil
			}
			if id, ok := containerComponent(comp); ok {
				return id
			}
		}
	}
	return ""
}

// idLen is the length of a docker/containerd/CRI-O container id.
const idLen = 64

// containerComponent recognises one path component naming a container:
// "<id>", or "<prefix>-<id>.scope" (systemd's transient unit, any runtime).
func containerComponent(c []byte) (string, bool) {
	if len(c) == idLen && isHex(c) {
		return strings.ToLower(string(c)), true
	}
	if s, ok := bytes.CutSuffix(c, []byte(".scope")); ok && len(s) > idLen && s[len(s)-idLen-1] == '-' {
		if id := s[len(s)-idLen:]; isHex(id) {
			return strings.ToLower(string(id)), true
		}
	}
	return "", false
}

func isHex(b []byte) bool {
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f', c >= 'A' && c <= 'F':
		default:
			return false
		}
	}
	return true
}

// NormalizeID spells a container id as ParseCgroup returns it: trimmed and
// lower-cased. A resource.txt CID= line gives the full 64-hex id.
func NormalizeID(s string) string {
	return strings.ToLower(strings.TrimSpace(s))
}
