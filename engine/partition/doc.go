// Package partition computes effective multi-agent partitions (shared,
// auto-split, manual; BEP-1044 device-based and the slot-based form),
// validates drafts, builds plans and finds drift.
package partition
