/*
 * fakenvml.c: a fake libnvidia-ml.so.1 for fgtop's tests.
 *
 * It is built by the tests (internal/fakenvml) against go-nvml's own nvml.h,
 * so every struct has the layout the real binary expects, and loaded by the
 * real fgtop binary through LD_LIBRARY_PATH: the cgo path users run, which
 * go-nvml's Go mocks skip. Every other NVML symbol comes from a generated
 * stub file (stubs.c, weak definitions) that answers
 * NVML_ERROR_NOT_SUPPORTED.
 *
 * Configuration: FAKE_NVML_CONFIG names a file in a small TOML subset
 * (top-level keys, [[gpu]] and [[process]] tables, integers, quoted
 * strings without escapes, booleans, # comments). It is read at every
 * nvmlInit and re-read when its size or mtime changes (checked at most every
 * 100 ms), so a test can change telemetry and processes while fgtop runs.
 * FAKE_NVML_STATS names a file that nvmlShutdown fills with one line per
 * entry point called since the last nvmlShutdown: "<symbol> <count>".
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "nvml.h"

#define MAX_GPUS 64
#define MAX_PROCS 1024
#define STR 128

struct fake_gpu {
    int magic; /* handles point here: checked on every call */
    char name[STR], uuid[STR], bus_id[STR];
    unsigned long long mem_total, mem_used;
    unsigned int sms, util_gpu, util_mem, temp, power_mw, power_limit_mw;
    unsigned int power_default_limit_mw;
    int numa;  /* < 0: NOT_SUPPORTED */
    int error; /* nonzero: every per-GPU call returns it (15 = GPU_IS_LOST) */
    int mig;   /* MIG mode current/pending */
};

struct fake_proc {
    unsigned int gpu, pid, sm_util, mem_util;
    int mig; /* index among its GPU's MIG devices, -1: none */
    unsigned long long used_memory;
};

/* A MIG device: its own handle, listed under its GPU in file order. */
struct fake_mig {
    int magic;
    unsigned int gpu;
    char uuid[STR], name[STR];
    unsigned long long mem_total, mem_used;
    unsigned int sms;
};

#define MAX_MIGS 64

struct fake_cfg {
    int init_ret, count_ret;
    int attributes_mig_only; /* nvmlDeviceGetAttributes on a full GPU: NOT_SUPPORTED */
    char driver[STR], nvml[STR];
    int cuda_version;
    int ngpus, nprocs, nmigs;
    struct fake_gpu gpus[MAX_GPUS];
    struct fake_proc procs[MAX_PROCS];
    struct fake_mig migs[MAX_MIGS];
};

#define GPU_MAGIC 0x6e766d6c
#define MIG_MAGIC 0x6d696721

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct fake_cfg cfg;   /* guarded by mu */
static struct fake_gpu handles[MAX_GPUS]; /* stable addresses: the handles */
static struct fake_mig mighandles[MAX_MIGS];
static int inited;            /* nvmlInit refcount */
static struct timespec last_check;
static long long cfg_size = -1;
static struct timespec cfg_mtime;

/* ---- call counting ------------------------------------------------------ */

struct counter { const char *name; unsigned long n; };
static struct counter counters[1024];
static pthread_mutex_t count_mu = PTHREAD_MUTEX_INITIALIZER;
static int init_failed; /* the last nvmlInit failed */

static void write_stats(void);

/* fakenvml_note counts one call of name (a string literal: its address is
 * the key). Exported for the generated stubs. */
void fakenvml_note(const char *name)
{
    /* The real library is not to be called after a failed nvmlInit (it
     * may abort the process): the fake makes that a hard failure. */
    if (__atomic_load_n(&init_failed, __ATOMIC_SEQ_CST) && strncmp(name, "nvmlInit", 8) != 0) {
        write_stats();
        fprintf(stderr, "fakenvml: %s called after a failed nvmlInit\n", name);
        abort();
    }
    size_t h = ((size_t)name >> 3) % 1024;
    pthread_mutex_lock(&count_mu);
    for (size_t i = 0; i < 1024; i++) {
        struct counter *c = &counters[(h + i) % 1024];
        if (c->name == name || c->name == NULL) {
            c->name = name;
            c->n++;
            break;
        }
    }
    pthread_mutex_unlock(&count_mu);
}

/* write_stats writes the counts and starts them again, so that each
 * Init..Shutdown of a source is counted on its own. */
static void write_stats(void)
{
    const char *path = getenv("FAKE_NVML_STATS");
    if (path == NULL || *path == 0)
        return;
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return;
    pthread_mutex_lock(&count_mu);
    for (size_t i = 0; i < 1024; i++)
        if (counters[i].name != NULL && counters[i].n > 0) {
            fprintf(f, "%s %lu\n", counters[i].name, counters[i].n);
            counters[i].n = 0;
        }
    pthread_mutex_unlock(&count_mu);
    fclose(f);
}

#define NOTE() fakenvml_note(__func__)

/* ---- configuration ------------------------------------------------------ */

static int ret_code(const char *v)
{
    static const struct { const char *n; int c; } names[] = {
        {"SUCCESS", NVML_SUCCESS},
        {"UNINITIALIZED", NVML_ERROR_UNINITIALIZED},
        {"NOT_SUPPORTED", NVML_ERROR_NOT_SUPPORTED},
        {"NO_PERMISSION", NVML_ERROR_NO_PERMISSION},
        {"NOT_FOUND", NVML_ERROR_NOT_FOUND},
        {"DRIVER_NOT_LOADED", NVML_ERROR_DRIVER_NOT_LOADED},
        {"TIMEOUT", NVML_ERROR_TIMEOUT},
        {"LIBRARY_NOT_FOUND", NVML_ERROR_LIBRARY_NOT_FOUND},
        {"FUNCTION_NOT_FOUND", NVML_ERROR_FUNCTION_NOT_FOUND},
        {"GPU_IS_LOST", NVML_ERROR_GPU_IS_LOST},
        {"RESET_REQUIRED", NVML_ERROR_RESET_REQUIRED},
        {"LIB_RM_VERSION_MISMATCH", NVML_ERROR_LIB_RM_VERSION_MISMATCH},
        {"UNKNOWN", NVML_ERROR_UNKNOWN},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(v, names[i].n) == 0 || (strncmp(v, "ERROR_", 6) == 0 && strcmp(v + 6, names[i].n) == 0))
            return names[i].c;
    return atoi(v);
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    char *e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
        *--e = 0;
    return s;
}

/* value strips quotes (a quoted value keeps '#') or a trailing comment. */
static char *value(char *v)
{
    v = trim(v);
    if (*v == '"') {
        char *end = strchr(v + 1, '"');
        if (end != NULL)
            *end = 0;
        return v + 1;
    }
    char *hash = strchr(v, '#');
    if (hash != NULL)
        *hash = 0;
    v = trim(v);
    if (strcmp(v, "true") == 0)
        return "1";
    if (strcmp(v, "false") == 0)
        return "0";
    return v;
}

static void copy(char *dst, const char *src)
{
    snprintf(dst, STR, "%s", src);
}

static void gpu_defaults(struct fake_gpu *g, int i)
{
    memset(g, 0, sizeof *g);
    g->magic = GPU_MAGIC;
    copy(g->name, "NVIDIA H100 80GB HBM3");
    snprintf(g->uuid, STR, "GPU-00000000-0000-0000-0000-%012d", i);
    snprintf(g->bus_id, STR, "00000000:%02X:00.0", 0x18 + i);
    g->mem_total = 85520809984ULL;
    g->sms = 132;
    g->power_limit_mw = g->power_default_limit_mw = 700000;
    g->numa = -1;
}

/* parse reads path into c; on a missing file c is the default (no GPU). */
static void parse(const char *path, struct fake_cfg *c)
{
    memset(c, 0, sizeof *c);
    copy(c->driver, "580.159.04");
    copy(c->nvml, "13.580.159.04");
    c->cuda_version = 13000;
    if (path == NULL || *path == 0)
        return;
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return;
    char line[1024];
    enum { TOP, GPU, PROC, MIG } sect = TOP;
    while (fgets(line, sizeof line, f) != NULL) {
        char *s = trim(line);
        if (*s == 0 || *s == '#')
            continue;
        if (strncmp(s, "[[gpu]]", 7) == 0) {
            if (c->ngpus < MAX_GPUS) {
                gpu_defaults(&c->gpus[c->ngpus], c->ngpus);
                c->ngpus++;
                sect = GPU;
            }
            continue;
        }
        if (strncmp(s, "[[process]]", 11) == 0) {
            if (c->nprocs < MAX_PROCS) {
                memset(&c->procs[c->nprocs], 0, sizeof c->procs[0]);
                c->procs[c->nprocs].mig = -1;
                c->nprocs++;
                sect = PROC;
            }
            continue;
        }
        if (strncmp(s, "[[mig]]", 7) == 0) {
            if (c->nmigs < MAX_MIGS) {
                struct fake_mig *m = &c->migs[c->nmigs];
                memset(m, 0, sizeof *m);
                m->magic = MIG_MAGIC;
                snprintf(m->uuid, STR, "MIG-00000000-0000-0000-0000-%012d", c->nmigs);
                copy(m->name, "NVIDIA H100 80GB HBM3 MIG 1g.10gb");
                m->mem_total = 10ULL << 30;
                m->sms = 16;
                c->nmigs++;
                sect = MIG;
            }
            continue;
        }
        char *eq = strchr(s, '=');
        if (eq == NULL)
            continue;
        *eq = 0;
        char *k = trim(s), *v = value(eq + 1);
        unsigned long long n = strtoull(v, NULL, 10);
        if (sect == TOP) {
            if (strcmp(k, "init") == 0) c->init_ret = ret_code(v);
            else if (strcmp(k, "count_error") == 0) c->count_ret = ret_code(v);
            else if (strcmp(k, "driver_version") == 0) copy(c->driver, v);
            else if (strcmp(k, "nvml_version") == 0) copy(c->nvml, v);
            else if (strcmp(k, "cuda_version") == 0) c->cuda_version = (int)n;
            else if (strcmp(k, "attributes_mig_only") == 0) c->attributes_mig_only = (int)n;
        } else if (sect == GPU) {
            struct fake_gpu *g = &c->gpus[c->ngpus - 1];
            if (strcmp(k, "name") == 0) copy(g->name, v);
            else if (strcmp(k, "uuid") == 0) copy(g->uuid, v);
            else if (strcmp(k, "bus_id") == 0) copy(g->bus_id, v);
            else if (strcmp(k, "memory_total") == 0) g->mem_total = n;
            else if (strcmp(k, "memory_used") == 0) g->mem_used = n;
            else if (strcmp(k, "sms") == 0) g->sms = (unsigned)n;
            else if (strcmp(k, "util_gpu") == 0) g->util_gpu = (unsigned)n;
            else if (strcmp(k, "util_mem") == 0) g->util_mem = (unsigned)n;
            else if (strcmp(k, "temperature") == 0) g->temp = (unsigned)n;
            else if (strcmp(k, "power_mw") == 0) g->power_mw = (unsigned)n;
            else if (strcmp(k, "power_limit_mw") == 0) g->power_limit_mw = (unsigned)n;
            else if (strcmp(k, "numa") == 0) g->numa = atoi(v);
            else if (strcmp(k, "error") == 0) g->error = ret_code(v);
            else if (strcmp(k, "mig") == 0) g->mig = (int)n;
        } else if (sect == MIG) {
            struct fake_mig *m = &c->migs[c->nmigs - 1];
            if (strcmp(k, "gpu") == 0) m->gpu = (unsigned)n;
            else if (strcmp(k, "uuid") == 0) copy(m->uuid, v);
            else if (strcmp(k, "name") == 0) copy(m->name, v);
            else if (strcmp(k, "memory_total") == 0) m->mem_total = n;
            else if (strcmp(k, "memory_used") == 0) m->mem_used = n;
            else if (strcmp(k, "sms") == 0) m->sms = (unsigned)n;
        } else {
            struct fake_proc *p = &c->procs[c->nprocs - 1];
            if (strcmp(k, "mig") == 0) p->mig = atoi(v);
            if (strcmp(k, "gpu") == 0) p->gpu = (unsigned)n;
            else if (strcmp(k, "pid") == 0) p->pid = (unsigned)n;
            else if (strcmp(k, "used_memory") == 0) p->used_memory = n;
            else if (strcmp(k, "sm_util") == 0) p->sm_util = (unsigned)n;
            else if (strcmp(k, "mem_util") == 0) p->mem_util = (unsigned)n;
        }
    }
    fclose(f);
}

/* load re-reads the file when forced or when it changed; call with mu. */
static void load(int force)
{
    const char *path = getenv("FAKE_NVML_CONFIG");
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (!force) {
        long long ms = (now.tv_sec - last_check.tv_sec) * 1000LL + (now.tv_nsec - last_check.tv_nsec) / 1000000;
        if (ms < 100)
            return;
    }
    last_check = now;
    struct stat st;
    long long size = -1;
    struct timespec mtime = {0, 0};
    if (path != NULL && *path != 0 && stat(path, &st) == 0) {
        size = st.st_size;
        mtime = st.st_mtim;
    }
    if (!force && size == cfg_size && mtime.tv_sec == cfg_mtime.tv_sec && mtime.tv_nsec == cfg_mtime.tv_nsec)
        return;
    cfg_size = size;
    cfg_mtime = mtime;
    static struct fake_cfg next;
    parse(path, &next);
    cfg = next;
    for (int i = 0; i < cfg.ngpus; i++)
        handles[i] = cfg.gpus[i];
    for (int i = 0; i < cfg.nmigs; i++)
        mighandles[i] = cfg.migs[i];
}

/* mig returns the MIG device behind a handle, NULL for any other handle;
 * on a MIG handle it refreshes the configuration and leaves mu locked. */
static struct fake_mig *mig(nvmlDevice_t device)
{
    struct fake_mig *m = (struct fake_mig *)(void *)device.handle;
    if (m < mighandles || m >= mighandles + MAX_MIGS || m->magic != MIG_MAGIC)
        return NULL;
    pthread_mutex_lock(&mu);
    load(0);
    return m;
}

/* mig_index is m's index among its GPU's MIG devices. */
static int mig_index(struct fake_mig *m)
{
    int k = 0;
    for (int i = 0; i < cfg.nmigs && &mighandles[i] != m; i++)
        if (cfg.migs[i].gpu == m->gpu)
            k++;
    return k;
}

/* procs_on lists the processes of GPU idx (mig < 0: all of them, as the
 * parent lists them) or of its MIG device number mig. */
static nvmlReturn_t procs_on(unsigned idx, int migi, unsigned int *count, nvmlProcessInfo_t *infos)
{
    unsigned n = 0;
    for (int i = 0; i < cfg.nprocs; i++)
        if (cfg.procs[i].gpu == idx && (migi < 0 || cfg.procs[i].mig == migi))
            n++;
    if (n > *count) {
        *count = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    n = 0;
    for (int i = 0; i < cfg.nprocs; i++) {
        struct fake_proc *p = &cfg.procs[i];
        if (p->gpu != idx || (migi >= 0 && p->mig != migi))
            continue;
        infos[n].pid = p->pid;
        infos[n].usedGpuMemory = p->used_memory;
        /* GPU and compute instance: MIG device k is instance k+1, compute 0. */
        infos[n].gpuInstanceId = p->mig >= 0 ? (unsigned)p->mig + 1 : 0xFFFFFFFF;
        infos[n].computeInstanceId = p->mig >= 0 ? 0 : 0xFFFFFFFF;
        n++;
    }
    *count = n;
    return NVML_SUCCESS;
}

/* gpu checks a handle and refreshes the configuration; it returns the
 * per-GPU error or SUCCESS and leaves mu locked on success. */
static nvmlReturn_t gpu(nvmlDevice_t device, struct fake_gpu **out)
{
    /* go-nvml's nvml.h wraps the handle in a one-pointer struct: the same
     * ABI as the driver's bare pointer. */
    struct fake_gpu *g = (struct fake_gpu *)(void *)device.handle;
    if (g < handles || g >= handles + MAX_GPUS || g->magic != GPU_MAGIC)
        return NVML_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&mu);
    if (!inited) {
        pthread_mutex_unlock(&mu);
        return NVML_ERROR_UNINITIALIZED;
    }
    load(0);
    if (g - handles >= cfg.ngpus) {
        pthread_mutex_unlock(&mu);
        return NVML_ERROR_GPU_IS_LOST; /* the file dropped it */
    }
    if (g->error != 0) {
        int e = g->error;
        pthread_mutex_unlock(&mu);
        return (nvmlReturn_t)e;
    }
    *out = g;
    return NVML_SUCCESS;
}

static nvmlReturn_t put_string(char *dst, unsigned int length, const char *src)
{
    if (dst == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (strlen(src) + 1 > length)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(dst, src, strlen(src) + 1);
    return NVML_SUCCESS;
}

#define DONE(r) do { nvmlReturn_t _r = (r); pthread_mutex_unlock(&mu); return _r; } while (0)

/* ---- entry points -------------------------------------------------------- */

static nvmlReturn_t do_init(void)
{
    pthread_mutex_lock(&mu);
    load(1);
    if (cfg.init_ret != NVML_SUCCESS) {
        __atomic_store_n(&init_failed, 1, __ATOMIC_SEQ_CST);
        DONE((nvmlReturn_t)cfg.init_ret);
    }
    __atomic_store_n(&init_failed, 0, __ATOMIC_SEQ_CST);
    inited++;
    DONE(NVML_SUCCESS);
}

nvmlReturn_t nvmlInit_v2(void) { NOTE(); return do_init(); }
nvmlReturn_t nvmlInit(void) { NOTE(); return do_init(); }
nvmlReturn_t nvmlInitWithFlags(unsigned int flags) { (void)flags; NOTE(); return do_init(); }

nvmlReturn_t nvmlShutdown(void)
{
    NOTE();
    pthread_mutex_lock(&mu);
    if (!inited)
        DONE(NVML_ERROR_UNINITIALIZED);
    inited--;
    pthread_mutex_unlock(&mu);
    write_stats();
    return NVML_SUCCESS;
}

const char *nvmlErrorString(nvmlReturn_t result)
{
    NOTE();
    switch (result) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
    case NVML_ERROR_NOT_FOUND: return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case NVML_ERROR_TIMEOUT: return "Timeout";
    case NVML_ERROR_FUNCTION_NOT_FOUND: return "Function Not Found";
    case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH: return "RM has detected an NVML/RM version mismatch.";
    default: return "Unknown Error";
    }
}

#define TOPLEVEL() do { pthread_mutex_lock(&mu); if (!inited) DONE(NVML_ERROR_UNINITIALIZED); } while (0)

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
    NOTE(); TOPLEVEL();
    DONE(put_string(version, length, cfg.driver));
}

nvmlReturn_t nvmlSystemGetNVMLVersion(char *version, unsigned int length)
{
    NOTE(); TOPLEVEL();
    DONE(put_string(version, length, cfg.nvml));
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *v)
{
    NOTE(); TOPLEVEL();
    *v = cfg.cuda_version;
    DONE(NVML_SUCCESS);
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v) { return nvmlSystemGetCudaDriverVersion(v); }

static nvmlReturn_t get_count(unsigned int *n)
{
    TOPLEVEL();
    if (cfg.count_ret != NVML_SUCCESS)
        DONE((nvmlReturn_t)cfg.count_ret);
    *n = (unsigned)cfg.ngpus;
    DONE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n) { NOTE(); return get_count(n); }
nvmlReturn_t nvmlDeviceGetCount(unsigned int *n) { NOTE(); return get_count(n); }

static nvmlReturn_t get_handle(unsigned int i, nvmlDevice_t *device)
{
    TOPLEVEL();
    if (i >= (unsigned)cfg.ngpus)
        DONE(NVML_ERROR_INVALID_ARGUMENT);
    device->handle = (struct nvmlDevice_st *)(void *)&handles[i];
    DONE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d) { NOTE(); return get_handle(i, d); }
nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int i, nvmlDevice_t *d) { NOTE(); return get_handle(i, d); }

nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device)
{
    NOTE(); TOPLEVEL();
    for (int i = 0; i < cfg.ngpus; i++)
        if (strcmp(handles[i].uuid, uuid) == 0) {
            device->handle = (struct nvmlDevice_st *)(void *)&handles[i];
            DONE(NVML_SUCCESS);
        }
    DONE(NVML_ERROR_NOT_FOUND);
}

#define GPU(d) struct fake_gpu *g; { nvmlReturn_t _e = gpu((d), &g); if (_e != NVML_SUCCESS) return _e; }

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *uuid, unsigned int length)
{
    NOTE();
    struct fake_mig *m = mig(d);
    if (m != NULL)
        DONE(put_string(uuid, length, m->uuid));
    GPU(d);
    DONE(put_string(uuid, length, g->uuid));
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *name, unsigned int length)
{
    NOTE();
    struct fake_mig *m = mig(d);
    if (m != NULL)
        DONE(put_string(name, length, m->name));
    GPU(d);
    DONE(put_string(name, length, g->name));
}

nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t d, unsigned int *index)
{
    NOTE(); GPU(d);
    *index = (unsigned)(g - handles);
    DONE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t d, unsigned int *minor)
{
    NOTE(); GPU(d);
    *minor = (unsigned)(g - handles);
    DONE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m)
{
    NOTE();
    struct fake_mig *mg = mig(d);
    if (mg != NULL) {
        m->total = mg->mem_total;
        m->used = mg->mem_used;
        m->free = mg->mem_total > mg->mem_used ? mg->mem_total - mg->mem_used : 0;
        DONE(NVML_SUCCESS);
    }
    GPU(d);
    m->total = g->mem_total;
    m->used = g->mem_used;
    m->free = g->mem_total > g->mem_used ? g->mem_total - g->mem_used : 0;
    DONE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t *m)
{
    NOTE(); GPU(d);
    m->total = g->mem_total;
    m->reserved = 0;
    m->used = g->mem_used;
    m->free = g->mem_total > g->mem_used ? g->mem_total - g->mem_used : 0;
    DONE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *pci)
{
    NOTE(); GPU(d);
    memset(pci, 0, sizeof *pci);
    snprintf(pci->busId, sizeof pci->busId, "%s", g->bus_id);
    snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%s", g->bus_id);
    pci->pciDeviceId = 0x233010de;
    unsigned dom = 0, bus = 0, dev = 0;
    if (sscanf(g->bus_id, "%x:%x:%x", &dom, &bus, &dev) == 3) {
        pci->domain = dom;
        pci->bus = bus;
        pci->device = dev;
    }
    DONE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetNumaNodeId(nvmlDevice_t d, unsigned int *node)
{
    NOTE(); GPU(d);
    if (g->numa < 0)
        DONE(NVML_ERROR_NOT_SUPPORTED);
    *node = (unsigned)g->numa;
    DONE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u)
{
    NOTE(); GPU(d);
    u->gpu = g->util_gpu;
    u->memory = g->util_mem;
    DONE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, nvmlTemperatureSensors_t sensor, unsigned int *temp)
{
    NOTE(); GPU(d);
    if (sensor != NVML_TEMPERATURE_GPU)
        DONE(NVML_ERROR_INVALID_ARGUMENT);
    *temp = g->temp;
    DONE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int *power)
{
    NOTE(); GPU(d);
    *power = g->power_mw;
    DONE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned int *limit)
{
    NOTE(); GPU(d);
    *limit = g->power_limit_mw;
    DONE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t d, unsigned int *limit)
{
    NOTE(); GPU(d);
    *limit = g->power_limit_mw;
    DONE(NVML_SUCCESS);
}

/* What a monitor such as nvtop asks beyond fgtop's calls, answered as an
 * idle H100 SXM answers it, so that a side-by-side benchmark has it do
 * its whole work rather than skip what would be NOT_SUPPORTED. The fan
 * stays a stub: an SXM board has none. */
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, nvmlClockType_t type, unsigned int *clock)
{
    NOTE(); GPU(d);
    (void)g;
    switch (type) {
    case NVML_CLOCK_GRAPHICS: case NVML_CLOCK_SM: *clock = 345; break;
    case NVML_CLOCK_MEM: *clock = 2619; break;
    case NVML_CLOCK_VIDEO: *clock = 765; break;
    default: DONE(NVML_ERROR_INVALID_ARGUMENT);
    }
    DONE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, nvmlClockType_t type, unsigned int *clock)
{
    NOTE(); GPU(d);
    (void)g;
    switch (type) {
    case NVML_CLOCK_GRAPHICS: case NVML_CLOCK_SM: *clock = 1980; break;
    case NVML_CLOCK_MEM: *clock = 2619; break;
    case NVML_CLOCK_VIDEO: *clock = 1545; break;
    default: DONE(NVML_ERROR_INVALID_ARGUMENT);
    }
    DONE(NVML_SUCCESS);
}

static nvmlReturn_t pcie(nvmlDevice_t d, unsigned int *out, unsigned int v)
{
    GPU(d);
    (void)g;
    *out = v;
    DONE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t d, unsigned int *v) { NOTE(); return pcie(d, v, 5); }
nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t d, unsigned int *v) { NOTE(); return pcie(d, v, 16); }
nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t d, unsigned int *v) { NOTE(); return pcie(d, v, 5); }
nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t d, unsigned int *v) { NOTE(); return pcie(d, v, 16); }

nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t d, nvmlPcieUtilCounter_t counter, unsigned int *value)
{
    NOTE();
    if (counter != NVML_PCIE_UTIL_TX_BYTES && counter != NVML_PCIE_UTIL_RX_BYTES)
        return NVML_ERROR_INVALID_ARGUMENT;
    return pcie(d, value, 0);
}

static nvmlReturn_t codec(nvmlDevice_t d, unsigned int *util, unsigned int *period)
{
    GPU(d);
    (void)g;
    *util = 0;
    *period = 167000;
    DONE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t d, unsigned int *u, unsigned int *p) { NOTE(); return codec(d, u, p); }
nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t d, unsigned int *u, unsigned int *p) { NOTE(); return codec(d, u, p); }

nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t d, nvmlTemperatureThresholds_t type, unsigned int *temp)
{
    NOTE(); GPU(d);
    (void)g;
    switch (type) {
    case NVML_TEMPERATURE_THRESHOLD_SHUTDOWN: *temp = 92; break;
    case NVML_TEMPERATURE_THRESHOLD_SLOWDOWN: *temp = 89; break;
    case NVML_TEMPERATURE_THRESHOLD_GPU_MAX: *temp = 87; break;
    default: DONE(NVML_ERROR_NOT_SUPPORTED);
    }
    DONE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t d, unsigned int *limit)
{
    NOTE(); GPU(d);
    *limit = g->power_default_limit_mw;
    DONE(NVML_SUCCESS);
}

/* nvml.h: "This API currently only supports MIG device handles";
 * attributes_mig_only makes a full GPU answer so. */
nvmlReturn_t nvmlDeviceGetAttributes_v2(nvmlDevice_t d, nvmlDeviceAttributes_t *a)
{
    NOTE();
    struct fake_mig *m = mig(d);
    if (m != NULL) {
        memset(a, 0, sizeof *a);
        a->multiprocessorCount = m->sms;
        a->gpuInstanceSliceCount = a->computeInstanceSliceCount = 1;
        a->memorySizeMB = m->mem_total >> 20;
        DONE(NVML_SUCCESS);
    }
    GPU(d);
    if (cfg.attributes_mig_only)
        DONE(NVML_ERROR_NOT_SUPPORTED);
    memset(a, 0, sizeof *a);
    a->multiprocessorCount = g->sms;
    a->sharedCopyEngineCount = 7;
    a->memorySizeMB = g->mem_total >> 20;
    DONE(NVML_SUCCESS);
}

/* CUDA cores: 128 per SM, as on Hopper. */
nvmlReturn_t nvmlDeviceGetNumGpuCores(nvmlDevice_t d, unsigned int *cores)
{
    NOTE(); GPU(d);
    *cores = g->sms * 128;
    DONE(NVML_SUCCESS);
}

/* Hopper, as the H100 it mimics: with nvmlDeviceGetNumGpuCores it gives
 * the SM count where nvmlDeviceGetAttributes_v2 refuses a full GPU. */
nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t d, nvmlDeviceArchitecture_t *arch)
{
    NOTE(); GPU(d);
    *arch = NVML_DEVICE_ARCH_HOPPER;
    DONE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t d, int *major, int *minor)
{
    NOTE(); GPU(d);
    *major = 9;
    *minor = 0;
    DONE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned int *current, unsigned int *pending)
{
    NOTE(); GPU(d);
    *current = *pending = (unsigned)g->mig;
    DONE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int *count, nvmlProcessInfo_t *infos)
{
    NOTE();
    struct fake_mig *m = mig(d);
    if (m != NULL)
        DONE(procs_on(m->gpu, mig_index(m), count, infos));
    GPU(d);
    DONE(procs_on((unsigned)(g - handles), -1, count, infos));
}

/* The first (unversioned) process calls, which nvtop 3.0.1 makes: the
 * same processes in the two-field v1 layout. Graphics processes: a
 * compute node has none. */
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t d, unsigned int *count, nvmlProcessInfo_v1_t *infos)
{
    static nvmlProcessInfo_t tmp[MAX_PROCS]; /* guarded by mu */
    NOTE(); GPU(d);
    unsigned int n = *count < MAX_PROCS ? *count : MAX_PROCS;
    nvmlReturn_t r = procs_on((unsigned)(g - handles), -1, &n, tmp);
    *count = n;
    if (r != NVML_SUCCESS)
        DONE(r);
    for (unsigned int i = 0; i < n; i++) {
        infos[i].pid = tmp[i].pid;
        infos[i].usedGpuMemory = tmp[i].usedGpuMemory;
    }
    DONE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t d, unsigned int *count, nvmlProcessInfo_v1_t *infos)
{
    NOTE(); GPU(d);
    (void)g; (void)infos;
    *count = 0;
    DONE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t d, unsigned int *count)
{
    NOTE(); GPU(d);
    if (!g->mig)
        DONE(NVML_ERROR_NOT_SUPPORTED);
    *count = 7; /* an H100's most */
    DONE(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t d, unsigned int index, nvmlDevice_t *out)
{
    NOTE(); GPU(d);
    unsigned idx = (unsigned)(g - handles), k = 0;
    for (int i = 0; i < cfg.nmigs; i++) {
        if (cfg.migs[i].gpu != idx)
            continue;
        if (k++ == index) {
            out->handle = (struct nvmlDevice_st *)(void *)&mighandles[i];
            DONE(NVML_SUCCESS);
        }
    }
    DONE(NVML_ERROR_NOT_FOUND);
}

nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t d, nvmlProcessUtilizationSample_t *u, unsigned int *count,
                                             unsigned long long last_seen)
{
    NOTE(); GPU(d);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    unsigned long long ts = (unsigned long long)now.tv_sec * 1000000ULL + (unsigned long long)now.tv_nsec / 1000;
    unsigned idx = (unsigned)(g - handles), n = 0;
    for (int i = 0; i < cfg.nprocs; i++)
        if (cfg.procs[i].gpu == idx && cfg.procs[i].sm_util + cfg.procs[i].mem_util > 0 && ts > last_seen)
            n++;
    if (n == 0)
        DONE(NVML_ERROR_NOT_FOUND);
    if (u == NULL || *count < n) {
        *count = n;
        DONE(NVML_ERROR_INSUFFICIENT_SIZE);
    }
    n = 0;
    for (int i = 0; i < cfg.nprocs; i++) {
        struct fake_proc *p = &cfg.procs[i];
        if (p->gpu != idx || p->sm_util + p->mem_util == 0)
            continue;
        memset(&u[n], 0, sizeof u[n]);
        u[n].pid = p->pid;
        u[n].timeStamp = ts;
        u[n].smUtil = p->sm_util;
        u[n].memUtil = p->mem_util;
        n++;
    }
    *count = n;
    DONE(NVML_SUCCESS);
}
