package agentconfig

import (
	"cmp"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/fgtop/fgtop/model"
)

// The models of agent.toml, field by field, as main (and, where it
// differs, PR #8463) declares them. Tables fgtop does not use and whose
// content cannot stop a node's resources from loading (logging, otel,
// pyroscope, service-discovery, redis, plugins) are only checked to be
// tables.

var portBounds = struct{ lo, hi *float64 }{bound(1), bound(65535)}

func (j *judge) unified(doc map[string]any) {
	top := &schemaModel{name: "the top level", fields: []field{
		{name: "pyroscope", kind: kModel, sub: func(j *judge, p []string, t map[string]any) bool {
			return j.model(&schemaModel{name: "pyroscope", fields: []field{
				{name: "enabled", kind: kBool},
				{name: "app_name", kind: kStr},
				{name: "server_addr", kind: kStr},
				{name: "sample_rate", kind: kInt},
			}}, p, t)
		}},
		{name: "logging", kind: kModel, sub: (*judge).logging},
		{name: "otel", kind: kModel, sub: func(j *judge, p []string, t map[string]any) bool {
			fs := []field{
				{name: "enabled", kind: kBool},
				{name: "log_level", kind: kStr},
				{name: "endpoint", kind: kStr},
			}
			if j.main() {
				fs = append(fs, field{name: "max_queue_size", kind: kInt}, field{name: "max_export_batch_size", kind: kInt})
			}
			return j.model(&schemaModel{name: "otel", fields: fs}, p, t)
		}},
		{name: "service_discovery", kind: kModel, sub: (*judge).serviceDiscovery},
		{name: "debug", kind: kModel, sub: (*judge).debug},
		{name: "etcd", kind: kModel, req: true, sub: (*judge).etcd},
		{name: "container_logs", kind: kModel, sub: (*judge).containerLogs},
		{name: "api", kind: kModel, sub: func(j *judge, p []string, t map[string]any) bool {
			return j.model(&schemaModel{name: "api", fields: []field{
				{name: "pull_timeout", kind: kFloat, ge: bound(0)},
				{name: "commit_timeout", kind: kFloat, ge: bound(0)},
				{name: "push_timeout", kind: kFloat, ge: bound(0)},
			}}, p, t)
		}},
		{name: "kernel_lifecycles", kind: kModel, sub: func(j *judge, p []string, t map[string]any) bool {
			return j.model(&schemaModel{name: "kernel-lifecycles", fields: []field{
				{name: "init_polling_attempt", kind: kInt},
				{name: "init_polling_timeout_sec", kind: kFloat},
				{name: "init_timeout_sec", kind: kFloat},
			}}, p, t)
		}},
		{name: "plugins", kind: kAny},
		{name: "redis", kind: kModel, sub: func(j *judge, p []string, t map[string]any) bool { return j.redis(p, t, true) }},
		{name: "agent", kind: kModel, req: true, sub: (*judge).agentTable},
		{name: "container", kind: kModel, req: true, sub: func(j *judge, p []string, t map[string]any) bool {
			return j.container(p, t, true)
		}},
		{name: "resource", kind: kModel, req: true, sub: (*judge).resource},
		{name: "agents", kind: kAny},
	}}
	if list, ok := doc["agents"].([]any); ok {
		for _, x := range list {
			t, _ := x.(map[string]any)
			id, _ := table(t, "agent")["id"].(string)
			j.ids = append(j.ids, id)
		}
	}
	start := j.mark()
	got := j.fields(top, nil, doc)
	agentsOK := true
	var agents []map[string]any
	if v, ok := got["agents"]; ok {
		agents, agentsOK = j.agents(v)
	}
	if res, ok := doc["resource"].(map[string]any); ok {
		if _, ok := res["agents"]; ok && j.main() {
			j.warn([]string{"resource", "agents"}, "agents = [...] is written under [resource], so it is resource.agents, which the agent ignores: this file runs as a single agent. Move agents = [...] above the first [table] header, or write [[agents]] tables")
		}
	}
	if j.mark() != start || !agentsOK {
		return
	}
	// Every field loaded: the whole-file checks run.
	j.wholeFile(doc, agents)
}

// schemaModel is a pydantic model: its fields by name.
type schemaModel struct {
	name   string
	fields []field
}

// model validates t as m and reports whether it added no error.
func (j *judge) model(m *schemaModel, path []string, t map[string]any) bool {
	start := j.mark()
	j.fields(m, path, t)
	return j.mark() == start
}

// logLevels are LogLevel's values (matched case-insensitively).
var logLevels = []string{"CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG", "TRACE", "NOTSET"}

func (j *judge) logging(path []string, t map[string]any) bool {
	formats := []string{"simple", "verbose"}
	sub := func(name string, fs ...field) func(j *judge, p []string, t map[string]any) bool {
		return func(j *judge, p []string, t map[string]any) bool {
			return j.model(&schemaModel{name: name, fields: fs}, p, t)
		}
	}
	return j.model(&schemaModel{name: "logging", fields: []field{
		{name: "version", kind: kInt},
		{name: "level", kind: kCIEnum, enum: logLevels},
		{name: "disable_existing_loggers", kind: kBool},
		{name: "handlers", kind: kTable},
		{name: "loggers", kind: kTable},
		{name: "drivers", kind: kEnumList, enum: []string{"console", "logstash", "file", "graylog"}},
		{name: "console", kind: kModel, sub: sub("logging.console",
			field{name: "colored", kind: kBool},
			field{name: "format", kind: kCIEnum, enum: formats})},
		{name: "file", kind: kModel, sub: func(j *judge, p []string, t map[string]any) bool {
			ok := sub("logging.file",
				field{name: "path", kind: kDir, req: true},
				field{name: "filename", kind: kStr, req: true},
				field{name: "backup_count", kind: kInt},
				field{name: "rotation_size", kind: kAny},
				field{name: "format", kind: kCIEnum, enum: formats})(j, p, t)
			if _, set := firstOf(t, "rotation-size", "rotation_size"); !set && ok {
				// Backend.AI's default, ByteSize("10MB"), raises when it is
				// built: the agent only starts with the size written out.
				j.fail(p, "rotation-size must be set (e.g. rotation-size = \"10M\"): the agent's own default for it fails to load")
				return false
			}
			return ok
		}},
		{name: "logstash", kind: kModel, sub: sub("logging.logstash",
			field{name: "endpoint", kind: kModel, req: true, sub: sub("logging.logstash.endpoint",
				field{name: "host", kind: kStr, req: true},
				field{name: "port", kind: kInt, req: true, gt: bound(0), le: bound(65535)})},
			field{name: "protocol", kind: kEnum, enum: []string{"zmq.push", "zmq.pub", "tcp", "udp"}},
			field{name: "ssl_enabled", kind: kBool},
			field{name: "ssl_verify", kind: kBool})},
		{name: "graylog", kind: kModel, sub: sub("logging.graylog",
			field{name: "host", kind: kStr, req: true},
			field{name: "port", kind: kInt, req: true},
			field{name: "level", kind: kCIEnum, enum: logLevels},
			field{name: "localname", kind: kStr},
			field{name: "fqdn", kind: kStr},
			field{name: "ssl_verify", kind: kBool},
			field{name: "ca_certs", kind: kStr},
			field{name: "keyfile", kind: kStr},
			field{name: "certfile", kind: kStr})},
		{name: "pkg_ns", kind: kLevelMap},
	}}, path, t)
}

func (j *judge) serviceDiscovery(path []string, t map[string]any) bool {
	if !j.main() {
		return j.model(&schemaModel{name: "service-discovery", fields: []field{
			{name: "type", kind: kEnum, enum: []string{"etcd", "redis"}},
		}}, path, t)
	}
	ok := j.model(&schemaModel{name: "service-discovery", fields: []field{
		{name: "type", kind: kEnum, enum: []string{"etcd", "redis"}},
		{name: "instance_id", kind: kStr},
		{name: "service_group", kind: kStr},
		{name: "display_name", kind: kStr},
		{name: "extra_labels", kind: kStrMap},
		{name: "endpoints", kind: kAny},
	}}, path, t)
	v, has := firstOf(t, "endpoints")
	if !has {
		return ok
	}
	list, isList := v.([]any)
	at := append(slices.Clone(path), "endpoints")
	if !isList {
		j.fail(at, "must be a list of endpoint tables, not %s", describe(v))
		return false
	}
	for i, x := range list {
		e, isTable := x.(map[string]any)
		p := append(slices.Clone(at), strconv.Itoa(i))
		if !isTable {
			j.fail(p, "must be a table, not %s", describe(x))
			ok = false
			continue
		}
		ok = j.model(&schemaModel{name: pathString(p), fields: []field{
			{name: "role", kind: kStr, req: true},
			{name: "scope", kind: kStr, req: true},
			{name: "address", kind: kStr, req: true},
			{name: "port", kind: kInt, req: true},
			{name: "protocol", kind: kStr, req: true},
			{name: "metadata", kind: kStrMap},
		}}, p, e) && ok
	}
	return ok
}

// redis is RedisConfig (top=true) or one of its override-configs.
func (j *judge) redis(path []string, t map[string]any, top bool) bool {
	fs := []field{
		{name: "addr", kind: kHostPort},
		{name: "sentinel", kind: kAny},
		{name: "service_name", alias: []string{"service_name", "service-name"}, kind: kStr},
		{name: "password", kind: kStr},
		{name: "sentinel_password", alias: []string{"sentinel_password", "sentinel-password"}, kind: kStr},
		{name: "request_timeout", alias: []string{"request_timeout", "request-timeout"}, kind: kInt},
		{name: "redis_helper_config", alias: []string{"redis_helper_config", "redis-helper-config"}, kind: kModel, sub: func(j *judge, p []string, t map[string]any) bool {
			return j.model(&schemaModel{name: "redis-helper-config", fields: []field{
				{name: "socket_timeout", alias: []string{"socket_timeout", "socket-timeout"}, kind: kFloat},
				{name: "socket_connect_timeout", alias: []string{"socket_connect_timeout", "socket-connect-timeout"}, kind: kFloat},
				{name: "reconnect_poll_timeout", alias: []string{"reconnect_poll_timeout", "reconnect-poll-timeout"}, kind: kFloat},
				{name: "connection_ready_timeout", alias: []string{"connection_ready_timeout", "connection-ready-timeout"}, kind: kFloat},
			}}, p, t)
		}},
		{name: "use_tls", alias: []string{"use_tls", "use-tls"}, kind: kBool},
		{name: "tls_skip_verify", alias: []string{"tls_skip_verify", "tls-skip-verify"}, kind: kBool},
	}
	if top {
		fs = append(fs, field{name: "override_configs", alias: []string{"override_configs", "override-configs"}, kind: kAny})
	}
	// Redis' settings are not agent.toml's own schema: unknown keys there
	// are dropped without a warning.
	start := j.mark()
	got := j.fieldsQuiet(&schemaModel{name: "redis", fields: fs}, path, t)
	if v, ok := got["sentinel"]; ok {
		at := append(slices.Clone(path), "sentinel")
		switch x := v.(type) {
		case string:
			for _, part := range strings.Split(x, ",") {
				h, p, ok := strings.Cut(strings.TrimSpace(part), ":")
				if _, err := pyInt(p); !ok || err != nil || strings.Contains(p, ":") {
					j.fail(at, "%q: want HOST:PORT,HOST:PORT", x)
					break
				}
				_ = h
			}
		case []any:
			for _, e := range x {
				if _, err := hostPort(e); err != nil {
					j.fail(at, "%v", err)
					break
				}
			}
		default:
			j.fail(at, "must be a list of HOST:PORT or a \"HOST:PORT,HOST:PORT\" string, not %s", describe(v))
		}
	}
	if v, ok := got["override_configs"]; ok {
		at := append(slices.Clone(path), "override-configs")
		o, isTable := v.(map[string]any)
		if !isTable {
			j.fail(at, "must be a table, not %s", describe(v))
		}
		for _, k := range sortedKeys(o) {
			sub, isTable := o[k].(map[string]any)
			if !isTable {
				j.fail(append(slices.Clone(at), k), "must be a table, not %s", describe(o[k]))
				continue
			}
			j.redis(append(slices.Clone(at), k), sub, false)
		}
	}
	return j.mark() == start
}

func (j *judge) etcd(path []string, t map[string]any) bool {
	return j.model(&schemaModel{name: "etcd", fields: []field{
		{name: "namespace", kind: kStr},
		{name: "addr", kind: kHostPorts},
		{name: "user", kind: kStr},
		{name: "password", kind: kStr},
	}}, path, t)
}

func (j *judge) debug(path []string, t map[string]any) bool {
	fs := []field{
		// The agent replaces debug.enabled with its --debug flag before
		// looking at the value.
		{name: "enabled", kind: kAny},
		{name: "asyncio", kind: kBool},
		{name: "kernel_runner", kind: kBool},
		{name: "enhanced_aiomonitor_task_info", kind: kBool},
		{name: "skip_container_deletion", kind: kBool},
		{name: "log_stats", kind: kBool},
		{name: "log_kernel_config", kind: kBool},
		{name: "log_alloc_map", kind: kBool},
		{name: "log_events", kind: kBool},
		{name: "log_heartbeats", kind: kBool},
		{name: "heartbeat_interval", kind: kFloat},
		{name: "log_docker_events", kind: kBool},
		{name: "coredump", kind: kModel, sub: func(j *judge, p []string, t map[string]any) bool {
			return j.model(&schemaModel{name: "debug.coredump", fields: []field{
				{name: "enabled", kind: kBool},
				{name: "path", kind: kDir},
				{name: "backup_count", kind: kInt, ge: bound(1)},
				{name: "size_limit", kind: kSize},
			}}, p, t)
		}},
	}
	return j.model(&schemaModel{name: "debug", fields: fs}, path, t)
}

func (j *judge) containerLogs(path []string, t map[string]any) bool {
	fs := []field{
		{name: "max_length", kind: kSize},
		{name: "chunk_size", kind: kSize},
	}
	if j.main() {
		fs = append(fs, field{name: "driver", kind: kEnum, enum: []string{"local", "json-file"}})
	}
	return j.model(&schemaModel{name: "container-logs", fields: fs}, path, t)
}

// overridableAgent are the [agent] keys an [agents.agent] table may set.
func (j *judge) overridableAgent() []field {
	fs := []field{
		{name: "id", kind: kStr},
		{name: "agent_sock_port", kind: kInt, ge: bound(1024), le: bound(65535)},
		{name: "scaling_group_type", kind: kEnum, enum: []string{"compute", "storage"}},
		{name: "force_terminate_abusing_containers", kind: kBool},
		{name: "kernel_creation_concurrency", kind: kInt, ge: bound(1), le: bound(32)},
		{name: "sync_container_lifecycles", kind: kModel, sub: func(j *judge, p []string, t map[string]any) bool {
			return j.model(&schemaModel{name: "sync-container-lifecycles", fields: []field{
				{name: "enabled", kind: kBool},
				{name: "interval", kind: kFloat, ge: bound(0)},
			}}, p, t)
		}},
	}
	if j.main() {
		metric := func(j *judge, p []string, t map[string]any) bool {
			return j.model(&schemaModel{name: pathString(p), fields: []field{
				{name: "enable", kind: kBool},
				{name: "interval", kind: kFloat, gt: bound(0)},
			}}, p, t)
		}
		fs = append(fs,
			field{name: "initial_resource_group_name", kind: kStr},
			field{name: "utilization_metric", kind: kModel, sub: func(j *judge, p []string, t map[string]any) bool {
				return j.model(&schemaModel{name: "utilization-metric", fields: []field{
					{name: "node", kind: kModel, sub: metric},
					{name: "container", kind: kModel, sub: metric},
					{name: "process", kind: kModel, sub: metric},
				}}, p, t)
			}})
	} else {
		fs = append(fs, field{name: "scaling_group", kind: kStr})
	}
	return fs
}

// removedScalingGroup is main's refusal of the key renamed
// initial-resource-group-name (#13005).
func (j *judge) removedScalingGroup(path []string, t map[string]any) bool {
	if !j.main() {
		return false
	}
	for _, k := range []string{"scaling-group", "scaling_group"} {
		if _, ok := t[k]; ok {
			j.fail(append(slices.Clone(path), k), "%s was removed in Backend.AI main: rename it initial-resource-group-name", k)
			return true
		}
	}
	return false
}

func (j *judge) agentTable(path []string, t map[string]any) bool {
	if j.removedScalingGroup(path, t) {
		return false
	}
	fs := []field{
		{name: "backend", alias: []string{"backend", "mode"}, kind: kEnum, req: true, enum: []string{"docker", "kubernetes", "dummy"}},
		{name: "rpc_listen_addr", kind: kHostPort, noLinkLocal: true},
		{name: "internal_addr", alias: []string{"service-addr", "internal-addr", "service_addr"}, kind: kHostPort},
		{name: "announce_internal_addr", alias: []string{"announce-addr", "announce-internal-addr", "announce_addr"}, kind: kHostPort},
		{name: "ssl_enabled", kind: kBool},
		{name: "ssl_cert", kind: kFile},
		{name: "ssl_key", kind: kFile},
		{name: "advertised_rpc_addr", kind: kHostPort},
		{name: "rpc_auth_manager_public_key", kind: kFile},
		{name: "rpc_auth_agent_keypair", kind: kFile},
		{name: "ipc_base_path", kind: kDir},
		{name: "var_base_path", kind: kDir},
		{name: "mount_path", kind: kDir},
		{name: "cohabiting_storage_proxy", kind: kBool},
		{name: "public_host", kind: kStr},
		{name: "region", kind: kStr},
		{name: "instance_type", kind: kStr},
		{name: "pid_file", kind: kPath},
		{name: "event_loop", kind: kEnum, enum: []string{"asyncio", "uvloop"}},
		{name: "skip_manager_detection", kind: kBool},
		{name: "aiomonitor_termui_port", alias: []string{"aiomonitor-termui-port", "aiomonitor-port", "aiomonitor_termui_port"}, kind: kInt, ge: portBounds.lo, le: portBounds.hi},
		{name: "aiomonitor_webui_port", kind: kInt, ge: portBounds.lo, le: portBounds.hi},
		{name: "metadata_server_bind_host", kind: kStr},
		{name: "metadata_server_port", kind: kInt, ge: portBounds.lo, le: portBounds.hi},
		{name: "allow_compute_plugins", kind: kStrList},
		{name: "block_compute_plugins", kind: kStrList},
		{name: "allow_network_plugins", kind: kStrList},
		{name: "block_network_plugins", kind: kStrList},
		{name: "image_commit_path", kind: kDir},
		{name: "abuse_report_path", kind: kPath},
		{name: "docker_mode", kind: kStr},
		{name: "mount_path_uid_gid", kind: kStr},
	}
	if !j.main() {
		fs = append(fs, field{name: "use_experimental_redis_event_dispatcher", kind: kBool})
	}
	fs = append(fs, j.overridableAgent()...)
	return j.model(&schemaModel{name: "agent", fields: fs}, path, t)
}

// container is [container] (all=true) or [agents.container].
func (j *judge) container(path []string, t map[string]any, all bool) bool {
	fs := []field{
		{name: "kernel_uid", kind: kUID, user: "user"},
		{name: "kernel_gid", kind: kUID, user: "group"},
		{name: "port_range", kind: kPortRange},
		// cgroup stats and hostfile scratch need root: the agent runs as
		// root, so they are taken as allowed.
		{name: "stats_type", kind: kEnum, enum: []string{"cgroup", "docker"}},
		{name: "sandbox_type", kind: kEnum, enum: []string{"docker", "jail"}},
		{name: "jail_args", kind: kStrList},
		{name: "scratch_type", kind: kEnum, enum: []string{"hostdir", "hostfile", "memory", "k8s-nfs"}},
		{name: "scratch_root", kind: kDir},
		{name: "scratch_size", kind: kSize},
		{name: "scratch_nfs_address", kind: kStr},
		{name: "scratch_nfs_options", kind: kStr},
		{name: "alternative_bridge", kind: kStr},
		{name: "swarm_enabled", kind: kBool},
	}
	if j.main() {
		fs = append(fs, field{name: "port_reuse_cooldown_sec", kind: kInt, ge: bound(0)})
	}
	if all {
		fs = append(fs,
			field{name: "bind_host", alias: []string{"bind-host", "bind_host", "kernel-host"}, kind: kStr},
			field{name: "advertised_host", kind: kStr},
			field{name: "krunner_volumes", kind: kStrMap})
	}
	ok := j.model(&schemaModel{name: "container", fields: fs}, path, t)
	if ok && runtime.GOARCH != "amd64" {
		if v, _ := firstOf(t, "sandbox-type", "sandbox_type"); v == "jail" {
			j.fail(append(slices.Clone(path), "sandbox-type"), "the jail sandbox is only supported on x86_64")
			return false
		}
	}
	return ok
}

func (j *judge) resource(path []string, t map[string]any) bool {
	fs := []field{
		{name: "reserved_cpu", kind: kInt},
		{name: "reserved_mem", kind: kSize},
		{name: "reserved_disk", kind: kSize},
		{name: "allocation_mode", kind: kEnum, enum: []string{ModeShared, ModeAutoSplit, ModeManual}},
		{name: "allocations", kind: kModel, sub: (*judge).allocation},
		{name: "memory_align_size", kind: kSize},
		{name: "allocation_order", kind: kStrList},
		{name: "affinity_policy", kind: kAffinity},
	}
	ok := j.model(&schemaModel{name: "resource", fields: fs}, path, t)
	if ok {
		j.mode = ModeShared
		if v, ok := firstOf(t, "allocation-mode", "allocation_mode"); ok {
			j.mode, _ = v.(string)
		}
	}
	return ok
}

// allocation is a ResourceAllocationConfig: [resource.allocations] or
// [agents.resource].
func (j *judge) allocation(path []string, t map[string]any) bool {
	if j.main() {
		return j.slotAllocation(path, t)
	}
	return j.deviceAllocation(path, t)
}

// slotAllocation is main's: cpu = N, mem = SIZE, devices = {slot = amount}.
func (j *judge) slotAllocation(path []string, t map[string]any) bool {
	start := j.mark()
	at := func(k ...string) []string { return append(slices.Clone(path), k...) }
	fs := []field{
		{name: "cpu", kind: kInt, req: true},
		{name: "mem", kind: kSize, req: true},
		{name: "devices", kind: kAny},
	}
	j.fields(&schemaModel{name: pathString(path), fields: fs}, path, t)
	if v, ok := t["cpu"]; ok {
		if _, isList := v.([]any); isList {
			j.errs[len(j.errs)-1].Message += ` (Backend.AI main takes a core count, cpu = 2; a list of core IDs is the BEP-1044 draft's format)`
		}
	}
	var negDevice bool
	if v, ok := t["devices"]; ok {
		d, isTable := v.(map[string]any)
		if !isTable {
			j.fail(at("devices"), "must be a table of slot name -> amount, e.g. devices = { \"cuda.shares\" = \"2.0\" }, not %s", describe(v))
		}
		for _, k := range sortedKeys(d) {
			amount, err := pyDecimal(d[k])
			if err != nil {
				hint := ""
				switch d[k].(type) {
				case []any:
					hint = ` (a list of device IDs is the BEP-1044 draft's format; Backend.AI main takes an amount: devices = { "cuda.shares" = "2.0" })`
				case map[string]any:
					hint = fmt.Sprintf(` (TOML reads the unquoted dotted key %s.… as a nested table: quote the slot name, "%s.shares" = "2.0")`, k, k)
				}
				j.fail(at("devices", k), "%v%s", err, hint)
				continue
			}
			if amount.Sign() < 0 {
				negDevice = true
			}
		}
	}
	if j.mark() != start {
		return false
	}
	cpu, _ := laxInt(t["cpu"])
	mem, _ := j.size(t["mem"])
	switch {
	case cpu < 0:
		j.fail(at("cpu"), "%s: a core count must not be negative", describe(t["cpu"]))
	case mem.Sign() < 0:
		j.fail(at("mem"), "%s: memory must not be negative", describe(t["mem"]))
	case negDevice:
		j.fail(at("devices"), "device amounts must not be negative")
	}
	return j.mark() == start
}

// deviceAllocation is PR #8463's: cpu = [core ids], mem = SIZE, devices =
// {device = [ids]}.
func (j *judge) deviceAllocation(path []string, t map[string]any) bool {
	start := j.mark()
	at := func(k ...string) []string { return append(slices.Clone(path), k...) }
	j.fields(&schemaModel{name: pathString(path), fields: []field{
		{name: "cpu", kind: kAny},
		{name: "mem", kind: kSize, req: true},
		{name: "devices", kind: kAny},
	}}, path, t)
	if v, ok := t["cpu"]; ok {
		switch v.(type) {
		case int64, bool:
			j.fail(at("cpu"), "Old integer format detected: the device-based format lists core IDs, cpu = [\"0\", \"1\"]")
		case []any:
		default:
			j.fail(at("cpu"), "must be a list of core IDs, not %s", describe(v))
		}
	}
	cpuInDevices := false
	if v, ok := t["devices"]; ok {
		d, isTable := v.(map[string]any)
		if !isTable {
			j.fail(at("devices"), "must be a table of device name -> device IDs, not %s", describe(v))
		}
		for _, k := range sortedKeys(d) {
			if strings.Contains(k, ".") {
				j.fail(at("devices", k), "Old slot-based format detected: key '%s' contains '.'; the device-based format maps a device name to device IDs, devices = { cuda = [\"<id>\"] }", k)
				break // the draft stops at the first bad key
			}
			switch x := d[k].(type) {
			case int64, float64, bool:
				j.fail(at("devices", k), "Old slot-based format detected: %s is an amount, not device IDs", describe(x))
			case string:
				if strings.Contains(x, ".") {
					if _, err := model.ParseDec(x); err == nil {
						j.fail(at("devices", k), "Old slot-based format detected: %q is an amount, not device IDs", x)
					}
				}
			case []any:
			default:
				j.fail(at("devices", k), "must be a list of device IDs, not %s", describe(x))
			}
			if k == "cpu" {
				cpuInDevices = true
			}
			if j.mark() != start {
				break
			}
		}
	}
	if j.mark() != start {
		return false
	}
	mem, _ := j.size(t["mem"])
	switch {
	case cpuInDevices:
		j.fail(at("devices", "cpu"), "CPU cores go in cpu = [\"0\", ...], not in devices")
	case mem.Sign() < 0:
		j.fail(at("mem"), "must not be negative")
	}
	return j.mark() == start
}

// pyDecimal is pydantic's Decimal: an integer, a finite float, or a
// decimal string.
func pyDecimal(v any) (model.Dec, error) {
	switch x := v.(type) {
	case int64:
		return model.NewDec(x, 0), nil
	case float64:
		d, err := decValue(x)
		if err != nil {
			return model.Dec{}, fmt.Errorf("%v is not a finite number", x)
		}
		return d, nil
	case string:
		d, err := model.ParseDec(x)
		if err != nil {
			return model.Dec{}, fmt.Errorf("%q is not a decimal amount", x)
		}
		if !d.IsFinite() {
			return model.Dec{}, fmt.Errorf("%q is not a finite number", x)
		}
		return d, nil
	}
	return model.Dec{}, fmt.Errorf("must be a decimal amount such as \"2.0\", not %s", describe(v))
}

// agents validates agents = [...] / [[agents]]: a list of
// AgentOverrideConfig, not exactly one, ids unique among those written.
func (j *judge) agents(v any) ([]map[string]any, bool) {
	list, ok := v.([]any)
	if !ok {
		j.fail([]string{"agents"}, "must be a list of agent tables ([[agents]]), not %s", describe(v))
		return nil, false
	}
	start := j.mark()
	out := make([]map[string]any, len(list))
	for i, x := range list {
		p := []string{arrElem("agents", i)}
		t, ok := x.(map[string]any)
		if !ok {
			j.fail(p, "must be a table, not %s", describe(x))
			continue
		}
		out[i] = t
		j.fields(&schemaModel{name: pathString(p), fields: []field{
			{name: "agent", kind: kModel, req: true, sub: func(j *judge, p []string, t map[string]any) bool {
				if j.removedScalingGroup(p, t) {
					return false
				}
				return j.model(&schemaModel{name: pathString(p), fields: j.overridableAgent()}, p, t)
			}},
			{name: "container", kind: kModel, sub: func(j *judge, p []string, t map[string]any) bool {
				return j.container(p, t, false)
			}},
			{name: "resource", kind: kModel, sub: (*judge).allocation},
		}}, p, t)
	}
	if j.mark() != start {
		return out, false
	}
	if len(list) == 1 {
		j.fail([]string{"agents"}, "has exactly one entry, which the agent refuses: for one agent, drop [[agents]] and use the single-agent form ([agent] and [resource.allocations])")
		return out, false
	}
	seen := map[string]int{}
	for i, t := range out {
		id, ok := table(t, "agent")["id"].(string)
		if !ok {
			continue
		}
		if first, dup := seen[id]; dup {
			j.fail([]string{arrElem("agents", i), "agent", "id"}, "duplicate agent id %q (agents[%d] has it too): every agent needs its own id", id, first)
			return out, false
		}
		seen[id] = i
	}
	return out, true
}

// effective is one agent as the loader merges it: the allocation table in
// effect (nil: none) and the container settings.
type effective struct {
	path      []string // where its allocation table is
	alloc     map[string]any
	container map[string]any
	agentPath []string
}

// effectiveAgents merges every [[agents]] entry over the global tables the
// way the agent does: an entry's own [agents.resource] is laid over
// [resource.allocations] key by key (so only keys it does not set are
// inherited), [agents.container] over [container].
func effectiveAgents(doc map[string]any, agents []map[string]any) []effective {
	res := table(doc, "resource")
	global := table(res, "allocations")
	gcont := table(doc, "container")
	if len(agents) == 0 {
		return []effective{{path: []string{"resource", "allocations"}, alloc: global, container: gcont}}
	}
	out := make([]effective, len(agents))
	for i, a := range agents {
		e := effective{path: []string{"resource", "allocations"}, alloc: global, container: gcont,
			agentPath: []string{arrElem("agents", i)}}
		if own, ok := a["resource"].(map[string]any); ok {
			e.path = []string{arrElem("agents", i), "resource"}
			e.alloc = mergeTables(global, own)
		}
		if own, ok := a["container"].(map[string]any); ok {
			e.container = mergeTables(gcont, own)
		}
		out[i] = e
	}
	return out
}

// mergeTables lays over's keys over base's (nil base: over itself).
func mergeTables(base, over map[string]any) map[string]any {
	if base == nil {
		return over
	}
	m := make(map[string]any, len(base)+len(over))
	for k, v := range base {
		m[k] = v
	}
	for k, v := range over {
		m[k] = v
	}
	return m
}

// wholeFile runs the checks of the file as a whole: the allocation-mode
// rules and the backend's own container checks.
func (j *judge) wholeFile(doc map[string]any, agents []map[string]any) {
	eff := effectiveAgents(doc, agents)
	backend, _ := firstOf(table(doc, "agent"), "backend", "mode")
	if backend == "kubernetes" {
		for _, e := range eff {
			st, _ := firstOf(e.container, "scratch-type", "scratch_type")
			_, hasAddr := firstOf(e.container, "scratch-nfs-address", "scratch_nfs_address")
			_, hasOpts := firstOf(e.container, "scratch-nfs-options", "scratch_nfs_options")
			if st == "k8s-nfs" && (!hasAddr || !hasOpts) {
				j.fail([]string{"container", "scratch-type"}, "scratch-type k8s-nfs needs scratch-nfs-address and scratch-nfs-options")
				return
			}
		}
	}
	switch j.mode {
	case ModeShared, ModeAutoSplit:
		for _, e := range eff {
			if e.alloc != nil {
				j.fail(e.path, "allocation tables are only allowed in manual mode, and allocation-mode is %q: remove this table or set [resource] allocation-mode = \"manual\"%s", j.mode, j.misspelling([]string{"resource"}, "allocation_mode"))
				return
			}
		}
	case ModeManual:
		var first []string
		for i, e := range eff {
			if e.alloc == nil {
				where, hint := "[resource.allocations]", j.misspelling([]string{"resource"}, "allocations")
				if e.agentPath != nil {
					where = "[agents.resource] for " + agentName(agents, i)
					hint = cmp.Or(j.misspelling(e.agentPath, "resource"), hint)
				}
				j.fail(e.agentPath, "manual mode needs cpu and mem for every agent, and %s is missing%s", where, hint)
				return
			}
			if !j.main() {
				if cpu, _ := e.alloc["cpu"].([]any); len(cpu) == 0 {
					j.fail(append(slices.Clone(e.path), "cpu"), "manual mode needs a non-empty cpu list")
					return
				}
				if mem, _ := j.size(e.alloc["mem"]); mem.Sign() <= 0 {
					j.fail(append(slices.Clone(e.path), "mem"), "manual mode needs mem greater than 0")
					return
				}
				continue
			}
			keys := sortedKeys(table(e.alloc, "devices"))
			if i == 0 {
				first = keys
			} else if !slices.Equal(first, keys) {
				// One with none may have misspelt the key (devises).
				var hint string
				for _, n := range []int{0, i} {
					if len(table(eff[n].alloc, "devices")) == 0 {
						hint = cmp.Or(hint, j.misspelling(eff[n].path, "devices"), j.misspelling([]string{"resource", "allocations"}, "devices"))
					}
				}
				j.fail(append(slices.Clone(e.path), "devices"), "every agent must list the same devices slots: %s has %s, %s has %s%s",
					agentName(agents, 0), keyList(first), agentName(agents, i), keyList(keys), hint)
				return
			}
		}
	}
}

func agentName(agents []map[string]any, i int) string {
	if i < len(agents) {
		if id, ok := table(agents[i], "agent")["id"].(string); ok {
			return fmt.Sprintf("agent %q", id)
		}
		return fmt.Sprintf("agents[%d]", i)
	}
	return "the agent"
}

func keyList(ks []string) string {
	if len(ks) == 0 {
		return "none"
	}
	return strings.Join(ks, ", ")
}

// firstOf returns the first of keys present in t (nil t: none).
func firstOf(t map[string]any, keys ...string) (any, bool) {
	for _, k := range keys {
		if v, ok := t[k]; ok {
			return v, true
		}
	}
	return nil, false
}

// fileExists is pydantic's FilePath: an existing regular file.
func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
