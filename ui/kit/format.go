package kit

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/apd/v3"
	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/model/names"
)

// Threshold colours a reading: below Warn it is fine, below Crit a warning,
// from Crit on critical.
type Threshold struct{ Warn, Crit float64 }

// Level is where v falls against the threshold.
func (t Threshold) Level(v float64) Level {
	switch {
	case v >= t.Crit:
		return LvlCrit
	case v >= t.Warn:
		return LvlWarn
	}
	return LvlOK
}

// Thresholds are the cut points for telemetry colours. The defaults follow
// what operators know from all-smi and k9s (warn/critical around 75-80 and
// 90-95 %) and all-smi's GPU temperature alerts (80/90 °C).
type Thresholds struct {
	Util  Threshold // GPU utilisation, %
	Mem   Threshold // device memory used, % of total
	Temp  Threshold // °C
	Power Threshold // % of the power cap
}

// DefaultThresholds are used when Options.Thresholds is nil.
func DefaultThresholds() Thresholds {
	return Thresholds{
		Util:  Threshold{Warn: 75, Crit: 90},
		Mem:   Threshold{Warn: 80, Crit: 95},
		Temp:  Threshold{Warn: 80, Crit: 90},
		Power: Threshold{Warn: 80, Crit: 95},
	}
}

// Reading is one formatted telemetry value and its colour level. An
// invalid measurement is "N/A", never 0.
type Reading struct {
	Text string
	Lvl  Level
}

var naReading = Reading{"N/A", LvlNA}

// NAReading is the reading of a value the device does not report.
func NAReading() Reading { return naReading }

// TeleCells are a device's formatted readings, built once per snapshot.
type TeleCells struct {
	Util, Mem, MemShort, Temp, Power Reading
	Lost                             bool
}

// FormatTelemetry formats a device's telemetry into its cells, each with
// its level against th; N/A for what the device does not report.
func FormatTelemetry(t *model.Telemetry, th Thresholds, degree string) TeleCells {
	if t == nil {
		return TeleCells{Util: naReading, Mem: naReading, MemShort: naReading, Temp: naReading, Power: naReading}
	}
	c := TeleCells{Lost: t.Lost}
	c.Util = naReading
	if t.UtilGPU.Valid {
		c.Util = Reading{strconv.Itoa(int(t.UtilGPU.V)) + "%", th.Util.Level(float64(t.UtilGPU.V))}
	}
	c.Mem, c.MemShort = naReading, naReading
	if t.MemUsed.Valid && t.MemTotal.Valid && t.MemTotal.V > 0 {
		lvl := th.Mem.Level(100 * float64(t.MemUsed.V) / float64(t.MemTotal.V))
		c.Mem = Reading{gibPair(t.MemUsed.V, t.MemTotal.V, 1), lvl}
		c.MemShort = Reading{gibPair(t.MemUsed.V, t.MemTotal.V, 0), lvl}
	} else if t.MemUsed.Valid {
		c.Mem = Reading{Gib(t.MemUsed.V, 1) + "G", LvlPlain}
		c.MemShort = Reading{Gib(t.MemUsed.V, 0) + "G", LvlPlain}
	}
	c.Temp = naReading
	if t.TempC.Valid {
		c.Temp = Reading{strconv.Itoa(int(t.TempC.V)) + degree, th.Temp.Level(float64(t.TempC.V))}
	}
	c.Power = naReading
	if t.PowerMW.Valid {
		w := strconv.Itoa(int((t.PowerMW.V + 500) / 1000))
		lvl := LvlPlain
		if t.PowerCapMW.Valid && t.PowerCapMW.V > 0 {
			lvl = th.Power.Level(100 * float64(t.PowerMW.V) / float64(t.PowerCapMW.V))
		}
		c.Power = Reading{w + "W", lvl}
	}
	if c.Lost {
		lost := Reading{"LOST", LvlCrit}
		c.Util, c.Mem, c.MemShort, c.Temp, c.Power = lost, lost, lost, lost, lost
	}
	return c
}

// Gib prints bytes in GiB with the given decimals.
func Gib(b uint64, decimals int) string {
	return strconv.FormatFloat(float64(b)/(1<<30), 'f', decimals, 64)
}

func gibPair(used, total uint64, decimals int) string {
	return Gib(used, decimals) + "/" + Gib(total, decimals) + "G"
}

// FmtAge prints a duration the way process tables do: the two largest
// units, at most 6 cells ("42s", "12m", "3h12m", "2d3h").
func FmtAge(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + "s"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + "m"
	case d < 24*time.Hour:
		h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
		if m == 0 {
			return strconv.Itoa(h) + "h"
		}
		return fmt.Sprintf("%dh%dm", h, m)
	}
	days, h := int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour)
	if h == 0 || days >= 100 {
		return strconv.Itoa(days) + "d"
	}
	return fmt.Sprintf("%dd%dh", days, h)
}

// AgeAt is FmtAge(now-since) and the instant that text turns over; "-"
// and no instant where since is not known (zero: a fleet's node sent no
// time for a kernel), not an age of 292 years.
func AgeAt(now, since time.Time) (string, time.Time) {
	if since.IsZero() {
		return "-", time.Time{}
	}
	d := now.Sub(since)
	return FmtAge(d), since.Add(AgeNext(d))
}

// AgeNext is the age at which FmtAge next prints otherwise than for d:
// the smallest e > d with FmtAge(e) != FmtAge(d).
func AgeNext(d time.Duration) time.Duration {
	const day = 24 * time.Hour
	switch {
	case d < 0:
		return time.Second // "0s", as for 0
	case d < time.Minute:
		return d.Truncate(time.Second) + time.Second
	case d < day:
		return d.Truncate(time.Minute) + time.Minute
	case d/day >= 100:
		return d.Truncate(day) + day
	}
	return d.Truncate(time.Hour) + time.Hour
}

// FmtBytesDec prints an exact byte amount as Backend.AI's BinarySize does
// ("32g", "1.5g").
func FmtBytesDec(d model.Dec) string { return model.FormatBinarySize(d) }

// FmtSlot prints an amount of a slot: binary size for byte slots, the
// exact decimal otherwise.
func FmtSlot(slot model.SlotName, v model.Dec) string {
	if model.DefaultSlotTypes().TypeOf(slot) == model.SlotTypeBytes {
		return FmtBytesDec(v)
	}
	return v.String()
}

// FmtWhole prints a whole-unit slot's (cores, whole devices, MIG slices)
// whole amount without fraction digits, any other amount as its decimal:
// a resource.txt may write a MIG slice held as "1.00", and it prints "1"
// as a core held and the slice's capacity do.
func FmtWhole(slot model.SlotName, v model.Dec) string {
	if wholeUnit(slot) && v.Exponent() < 0 {
		if w, err := v.Quantize(0, apd.RoundDown); err == nil && w.Equal(v) {
			return w.String()
		}
	}
	return v.String()
}

// wholeUnit: slot is allocated in whole units only.
func wholeUnit(slot model.SlotName) bool {
	return slot == model.SlotCPU || strings.HasSuffix(string(slot), ".device") ||
		model.DefaultSlotTypes().TypeOf(slot) == model.SlotTypeUnique
}

// ShortKernel is the kernel id as operators read it in docker ps: its first
// 8 characters.
func ShortKernel(id model.KernelID) string {
	if len(id) <= 8 {
		return string(id)
	}
	return string(id[:8])
}

// MIGSuffix returns "3/0" for a MIG device id "MIG-<uuid>/3/0" (the GPU
// and compute instance ids), or the whole id when it has no '/'.
func MIGSuffix(id model.DeviceID) string { return names.MIGSuffix(id) }

// UniqueAbbrev returns, for each id, the shortest form that tells it apart
// from the others: an 8-character prefix when that suffices (real NVIDIA
// UUIDs), else an ellipsis and the shortest unique suffix of at least 4
// (mock devices share their prefix and differ at the end), else the id.
func UniqueAbbrev(ids []string, ell string) []string {
	out := make([]string, len(ids))
	unique := func(f func(string) string) bool {
		seen := make(map[string]bool, len(ids))
		for _, id := range ids {
			k := f(id)
			if seen[k] {
				return false
			}
			seen[k] = true
		}
		return true
	}
	prefix := func(id string) string {
		if len(id) <= 8 {
			return id
		}
		return id[:8]
	}
	if unique(prefix) {
		for i, id := range ids {
			out[i] = prefix(id)
		}
		return out
	}
	for n := 4; n < 36; n++ {
		suffix := func(id string) string {
			if len(id) <= n {
				return id
			}
			return id[len(id)-n:]
		}
		if unique(suffix) {
			for i, id := range ids {
				if s := suffix(id); s != id {
					out[i] = ell + s
				} else {
					out[i] = id
				}
			}
			return out
		}
	}
	copy(out, ids)
	return out
}

// CompressIDs prints device ids compactly: runs of consecutive integers as
// ranges ("0-15,20"), other ids as they are, in natural order.
func CompressIDs(ids []model.DeviceID) string {
	nums := make([]int, 0, len(ids))
	var other []string
	for _, id := range ids {
		if n, err := strconv.Atoi(string(id)); err == nil && n >= 0 {
			nums = append(nums, n)
		} else {
			other = append(other, string(id))
		}
	}
	slices.Sort(nums)
	nums = slices.Compact(nums)
	var b strings.Builder
	for i := 0; i < len(nums); {
		j := i
		for j+1 < len(nums) && nums[j+1] == nums[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(nums[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(nums[j]))
		}
		i = j + 1
	}
	slices.Sort(other)
	for _, o := range other {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(o)
	}
	return b.String()
}
