// Package partition computes effective multi-agent partitions exactly as
// the Backend.AI agent does (shared, auto-split, manual; the BEP-1044
// device-based design and the slot-based form main accepts today), finds
// drift between a partition and the live kernels, turns an operator's
// request into a draft, plans the change from config to draft (who gains
// and loses what, which live kernels are affected, what stays, every
// validation error), and applies a plan for an Actor through
// engine/agentconfig's safe writer.
//
// ParseChange reads a change as an operator types it (the CLI's --move,
// --mode, --cpu, --mem, --slot, --from and --format) into a Request.
//
// Check gives `fgtop check`'s verdict (status, report, exit class) on a
// config against the live node, and CheckResult.WriteText its words;
// Propose plans an operator's request on the node as plan and apply do.
//
// Effective, Drift, Check, Draft, Build and Propose are pure: they read a config, a draft
// and a *model.Snapshot and touch no file. Apply is the only writer.
package partition
