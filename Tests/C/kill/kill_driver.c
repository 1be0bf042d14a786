/*
 * kill-driver -- drives a 50-node workflow on a file store as a scripted fake
 * host, and survives SIGKILL at any instruction: every launch reopens the
 * engine and carries on where the store says the work is.
 *
 *   kill-driver run   --store PATH --seed N    drive the workflow to done (exit 0)
 *   kill-driver check --store PATH --seed N    verify the finished store (exit 0 when sound)
 *   kill-driver plan  --seed N                 print the graph built from the seed
 *
 * `run` and `check` take --durability normal|full, the engine's "durability" (default
 * normal: a commit survives a killed process; full: also a power cut, which
 * kill-supervisor --power-cut simulates), and --may-lose-commits: the launches
 * are separated by power cuts on "normal", which may take the last calls'
 * changes. The engine may then go back to an earlier state (fewer steps done,
 * a local run started again, a job submitted again under a run id used
 * before), so the checks that assume nothing is lost are left out; every
 * other check holds, the store must open after every cut, and the workflow
 * must still finish with the right outputs and lineage. --foreground-writes opens
 * the engine with "backgroundWrites": false. --store-faults: the store's writes
 * fail now and then (kill-supervisor --faults); a call or an open refused with
 * WF_ESTORE ends the launch with exit status 11, and the next launch goes on.
 *
 * The graph (50 nodes, built deterministically from the seed) mixes local text
 * tools (Text, Upper, Append, Reverse, Concat: run by this program on
 * local.run) and remote tools answered by a fake provider (ShoutRemote: text
 * asset outputs; JoinRemote: {url} outputs, so the engine asks for
 * remote.download; SpeakRemote: an AudioRef asset), with fan-out and fan-in.
 *
 * Files next to the store:
 *   PATH.jobs  the fake provider's ledger: one line per job it created
 *              (job id, run id, node, idempotency key, creation time, timings,
 *              output). Rewritten whole through a temporary file and rename(),
 *              so a kill leaves either the old or the new ledger, never half.
 *              A job is in the ledger before the engine hears its id; a submit
 *              delivered again for a run that has a job gets the same job id.
 *   PATH.log   the journal: one line per launch, per remote.submit seen
 *              (with whether the run already had a job id, in the engine and
 *              in the ledger), per anomaly. Lines are appended with a single
 *              write() each.
 *
 * Exit status of `run`: 0 done; 10 a rule was broken (the journal and stderr
 * say which: "VIOLATION ..."); 1 anything else (an op failed, ...).
 */
#define _POSIX_C_SOURCE 200809L

#include "workflow.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NODE_COUNT 50
#define SOURCE_COUNT 4
#define MAX_TEXT 40
#define MAX_JOBS 64
#define CLOCK_STEP_SECONDS 5
#define MAX_ROUNDS 20000
#define STALL_SECONDS 600
#define TEXT_URI_PREFIX "data:text/plain;charset=utf-8,"
#define EXIT_VIOLATION 10
/* --store-faults: the store refused a write (WF_ESTORE); the supervisor launches the driver again. */
#define EXIT_STORE_FAULT 11

/* ---------------------------------------------------------------------------
 * Small helpers
 * ------------------------------------------------------------------------- */

static const char *g_store;
/* The engine's "durability": "normal" or "full" (--durability). */
static const char *g_durability = "normal";
/* --may-lose-commits: power cuts on "normal" separate the launches. */
static int g_may_lose_commits;
/* --foreground-writes: the engine's "backgroundWrites": false (the journal folded on the
 * calling thread). */
static int g_background_writes = 1;
/* --store-faults: writes to the store fail now and then (the fault shim); a call refused with
 * WF_ESTORE is made again, and after FAULT_ATTEMPTS refusals ends the launch with
 * EXIT_STORE_FAULT instead of failing the test. */
static int g_store_faults;
/* --pauses: the driver stops now and then for 100 to 200 ms, as a host waiting for its user or
 * its provider does, so that the store's folder folds while the engine is quiet (it waits for
 * 100 ms of quiet) and the next call finds the journal folded. */
static int g_pauses;
static char g_journal_path[4096];
static char g_ledger_path[4096];
static int g_violations;

static void die(const char *format, ...) {
    va_list ap;
    va_start(ap, format);
    fputs("kill-driver: ", stderr);
    vfprintf(stderr, format, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

/* Appends one line to the journal with a single write(): a kill leaves the
 * line whole or absent. */
static void journal(const char *format, ...) {
    char line[1024];
    va_list ap;
    va_start(ap, format);
    int n = vsnprintf(line, sizeof line - 1, format, ap);
    va_end(ap);
    if (n < 0) return;
    if (n > (int)sizeof line - 2) n = (int)sizeof line - 2;
    line[n++] = '\n';
    int fd = open(g_journal_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0) die("cannot open %s: %s", g_journal_path, strerror(errno));
    if (write(fd, line, (size_t)n) != n) die("cannot write %s", g_journal_path);
    close(fd);
}

/* A broken rule: journaled, printed; `run` stops with EXIT_VIOLATION. */
static void violation(const char *format, ...) {
    char text[900];
    va_list ap;
    va_start(ap, format);
    vsnprintf(text, sizeof text, format, ap);
    va_end(ap);
    fprintf(stderr, "kill-driver: VIOLATION %s\n", text);
    journal("violation %s", text);
    g_violations++;
}

/* The codes a failing disk may cause (the faults injected); storeCorrupt never is one. */
static int is_fault(const char *code) {
    return strcmp(code, "storeWriteFailed") == 0 || strcmp(code, "storeReadFailed") == 0 ||
           strcmp(code, "storeOpenFailed") == 0;
}

/* A call the store refused changed nothing, so it is made again, as a host would, up to
 * FAULT_ATTEMPTS times in all (the engine goes on after a failed write, or refuses every write
 * once its journal could not be restored); then the launch ends with EXIT_STORE_FAULT. */
#define FAULT_ATTEMPTS 4

static json_t *call_status(int *status, wf_engine *engine, const char *op, json_t *args_stolen) {
    json_t *result = NULL;
    for (int attempt = 1;; attempt++) {
        *status = wf_call(&result, engine, op, args_stolen);
        if (!(*status == WF_ESTORE && g_store_faults && is_fault(wf_error_last()->code))) break;
        const wf_error *e = wf_error_last();
        journal("storeFault %s %s (attempt %d of %d): %s", op, e->code, attempt, FAULT_ATTEMPTS, e->message);
        if (attempt == FAULT_ATTEMPTS) exit(EXIT_STORE_FAULT);
    }
    json_decref(args_stolen);
    return result;
}

/* Calls an op that must succeed. */
static json_t *call(wf_engine *engine, const char *op, json_t *args_stolen) {
    int status;
    char *args_text = json_dumps(args_stolen, JSON_COMPACT);
    json_t *result = call_status(&status, engine, op, args_stolen);
    if (status != WF_OK) {
        const wf_error *e = wf_error_last();
        die("%s %s failed: %s %s: %s (details %s)", op, args_text ? args_text : "", wf_status_name(status), e->code,
            e->message, e->details_json);
    }
    free(args_text);
    return result;
}

static void call0(wf_engine *engine, const char *op, json_t *args_stolen) { json_decref(call(engine, op, args_stolen)); }

static const char *str(const json_t *object, const char *key) {
    const char *s = json_string_value(json_object_get(object, key));
    return s ? s : "";
}

static int eq(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

/* splitmix64 */
static uint64_t next_random(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static uint32_t hash_text(const char *s) {
    uint32_t h = 2166136261u;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* The text of a data: URI (written to out, at most size-1 bytes); 0 when not one. */
static int text_from_uri(const char *uri, char *out, size_t size) {
    size_t prefix = strlen(TEXT_URI_PREFIX), n = 0;
    if (!uri || strncmp(uri, TEXT_URI_PREFIX, prefix) != 0) return 0;
    for (const char *p = uri + prefix; *p && n + 1 < size;) {
        if (p[0] == '%' && isxdigit((unsigned char)p[1]) && isxdigit((unsigned char)p[2])) {
            char hex[3] = {p[1], p[2], 0};
            out[n++] = (char)strtol(hex, NULL, 16);
            p += 3;
        } else {
            out[n++] = *p++;
        }
    }
    out[n] = 0;
    return 1;
}

static void uri_from_text(const char *text, char *out, size_t size) {
    size_t n = (size_t)snprintf(out, size, "%s", TEXT_URI_PREFIX);
    for (const unsigned char *p = (const unsigned char *)text; *p && n + 4 < size; p++) {
        if (isalnum(*p) && *p < 128) {
            out[n++] = (char)*p;
        } else {
            n += (size_t)snprintf(out + n, size - n, "%%%02X", *p);
        }
    }
    out[n] = 0;
}

/* Milliseconds since the epoch of "YYYY-MM-DDTHH:MM:SS.mmmZ". */
static int64_t parse_time_ms(const char *s) {
    int y, mo, d, h, mi, sec, ms = 0;
    if (!s || sscanf(s, "%d-%d-%dT%d:%d:%d.%dZ", &y, &mo, &d, &h, &mi, &sec, &ms) < 6) die("bad time '%s'", s ? s : "");
    y -= mo <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    int64_t days = era * 146097 + doe - 719468;
    return ((days * 86400 + h * 3600 + mi * 60 + sec) * 1000) + ms;
}

/* ---------------------------------------------------------------------------
 * The graph, from the seed
 * ------------------------------------------------------------------------- */

typedef enum kind { TEXT, UPPER, APPEND, REVERSE, CONCAT, SHOUT_REMOTE, JOIN_REMOTE, SPEAK_REMOTE, KIND_COUNT } kind;

static const char *const kind_names[KIND_COUNT] = {"Text", "Upper", "Append", "Reverse", "Concat",
                                                   "ShoutRemote", "JoinRemote", "SpeakRemote"};

static int is_remote(kind k) { return k == SHOUT_REMOTE || k == JOIN_REMOTE || k == SPEAK_REMOTE; }
static int input_count(kind k) { return k == TEXT ? 0 : (k == CONCAT || k == JOIN_REMOTE) ? 2 : 1; }
static const char *output_port(kind k) { return k == SPEAK_REMOTE ? "audio" : "text"; }
static const char *output_type(kind k) { return k == SPEAK_REMOTE ? "AudioRef" : "TextRef"; }
static const char *input_port(kind k, int i) { return input_count(k) == 2 ? (i == 0 ? "a" : "b") : "text"; }

typedef struct node {
    char id[8];
    kind kind;
    int inputs[2]; /* producer node indexes */
    char param[24]; /* Text: text; Append: suffix */
    char expected[MAX_TEXT + 1]; /* the output text (SpeakRemote: the text it speaks) */
} node;

typedef struct graph {
    uint64_t seed;
    node nodes[NODE_COUNT];
} graph;

static void clamp(char *s) {
    if (strlen(s) > MAX_TEXT) s[MAX_TEXT] = 0;
}

/* What each tool makes of its inputs; local and remote tools alike (the fake
 * provider computes its outputs with this too). Output at most MAX_TEXT bytes. */
static void apply_tool(kind k, const char *param, const char *a, const char *b, char out[MAX_TEXT + 1]) {
    char buf[4 * MAX_TEXT + 8];
    size_t n;
    switch (k) {
    case TEXT: snprintf(buf, sizeof buf, "%s", param); break;
    case UPPER:
    case SPEAK_REMOTE:
        snprintf(buf, sizeof buf, "%s", a);
        if (k == UPPER) {
            for (char *p = buf; *p; p++) *p = (char)toupper((unsigned char)*p);
        }
        break;
    case APPEND: snprintf(buf, sizeof buf, "%s%s", a, param); break;
    case REVERSE:
        n = strlen(a);
        for (size_t i = 0; i < n; i++) buf[i] = a[n - 1 - i];
        buf[n] = 0;
        break;
    case CONCAT: snprintf(buf, sizeof buf, "%.19s|%.19s", a, b); break;
    case SHOUT_REMOTE:
        snprintf(buf, sizeof buf, "%s!", a);
        for (char *p = buf; *p; p++) *p = (char)toupper((unsigned char)*p);
        break;
    case JOIN_REMOTE: snprintf(buf, sizeof buf, "%.19s&%.19s", b, a); break;
    default: buf[0] = 0;
    }
    clamp(buf);
    snprintf(out, MAX_TEXT + 1, "%.*s", MAX_TEXT, buf);
}

static int pick_producer(const graph *g, int i, uint64_t *rng, int avoid) {
    for (;;) {
        int j;
        if (next_random(rng) % 10 < 7) {
            int lo = i - 8 < 0 ? 0 : i - 8;
            j = lo + (int)(next_random(rng) % (uint64_t)(i - lo));
        } else {
            j = (int)(next_random(rng) % (uint64_t)i);
        }
        if (j != avoid && g->nodes[j].kind != SPEAK_REMOTE) return j;
    }
}

static int build_attempt(graph *g, uint64_t seed, uint64_t attempt) {
    static const char *const words[] = {"amber", "birch", "cedar", "delta", "ember", "fjord", "grove", "haze",
                                        "iris", "jade", "kelp", "lumen", "moss", "nova", "opal", "pine"};
    uint64_t rng = seed * 1000003ULL + attempt;
    int counts[KIND_COUNT] = {0};
    int consumers[NODE_COUNT] = {0};
    memset(g->nodes, 0, sizeof g->nodes);
    g->seed = seed;
    for (int i = 0; i < NODE_COUNT; i++) {
        node *n = &g->nodes[i];
        snprintf(n->id, sizeof n->id, "n%02d", i);
        n->inputs[0] = n->inputs[1] = -1;
        if (i < SOURCE_COUNT) {
            n->kind = TEXT;
            snprintf(n->param, sizeof n->param, "%s %d", words[next_random(&rng) % 16], i);
        } else {
            unsigned r = (unsigned)(next_random(&rng) % 100);
            n->kind = r < 22 ? SHOUT_REMOTE : r < 32 ? JOIN_REMOTE : r < 38 ? SPEAK_REMOTE
                    : r < 52 ? UPPER : r < 66 ? APPEND : r < 80 ? REVERSE : CONCAT;
            if (i == NODE_COUNT - 1) n->kind = CONCAT; /* a final fan-in */
            if (n->kind == APPEND) snprintf(n->param, sizeof n->param, "+%d", i);
            n->inputs[0] = pick_producer(g, i, &rng, -1);
            if (input_count(n->kind) == 2) n->inputs[1] = pick_producer(g, i, &rng, n->inputs[0]);
        }
        counts[n->kind]++;
        for (int k = 0; k < input_count(n->kind); k++) consumers[n->inputs[k]]++;
        const char *a = n->inputs[0] >= 0 ? g->nodes[n->inputs[0]].expected : "";
        const char *b = n->inputs[1] >= 0 ? g->nodes[n->inputs[1]].expected : "";
        apply_tool(n->kind, n->param, a, b, n->expected);
    }
    int max_fan_out = 0;
    for (int i = 0; i < NODE_COUNT; i++) max_fan_out = consumers[i] > max_fan_out ? consumers[i] : max_fan_out;
    return counts[SHOUT_REMOTE] >= 6 && counts[JOIN_REMOTE] >= 3 && counts[SPEAK_REMOTE] >= 2 && counts[CONCAT] >= 3 &&
           counts[UPPER] + counts[APPEND] + counts[REVERSE] >= 8 && max_fan_out >= 3;
}

static void build_graph(graph *g, uint64_t seed) {
    for (uint64_t attempt = 0;; attempt++) {
        if (build_attempt(g, seed, attempt)) return;
    }
}

static int graph_node(const graph *g, const char *id) {
    for (int i = 0; i < NODE_COUNT; i++) {
        if (eq(g->nodes[i].id, id)) return i;
    }
    return -1;
}

static json_t *template_json(const graph *g) {
    json_t *nodes = json_array(), *edges = json_array();
    for (int i = 0; i < NODE_COUNT; i++) {
        const node *n = &g->nodes[i];
        json_t *inputs = json_object();
        for (int k = 0; k < input_count(n->kind); k++) {
            json_object_set_new(inputs, input_port(n->kind, k), json_string("TextRef"));
            json_array_append_new(edges, json_pack("{s:[ss], s:[ss]}", "from", g->nodes[n->inputs[k]].id, "text", "to",
                                                   n->id, input_port(n->kind, k)));
        }
        json_t *spec = json_pack("{s:s, s:s, s:o, s:{s:s}, s:{s:s}}", "id", n->id, "kind", kind_names[n->kind],
                                 "inputs", inputs, "outputs", output_port(n->kind), output_type(n->kind),
                                 "resources", "class", is_remote(n->kind) ? "remote" : "local");
        if (n->kind == TEXT) json_object_set_new(spec, "params", json_pack("{s:s}", "text", n->param));
        if (n->kind == APPEND) json_object_set_new(spec, "params", json_pack("{s:s}", "suffix", n->param));
        json_array_append_new(nodes, spec);
    }
    char name[64];
    snprintf(name, sizeof name, "kill test %llu", (unsigned long long)g->seed);
    return json_pack("{s:s, s:s, s:o, s:o, s:{s:s}}", "schema", "app.workflow/v2", "name", name, "nodes", nodes,
                     "edges", edges, "options", "errorPolicy", "isolate-node");
}

static void register_tools(wf_engine *engine) {
    for (int k = 0; k < KIND_COUNT; k++) {
        json_t *inputs = json_object();
        for (int i = 0; i < input_count((kind)k); i++) json_object_set_new(inputs, input_port((kind)k, i), json_string("TextRef"));
        call0(engine, "tool.register",
              json_pack("{s:s, s:o, s:{s:s}, s:s}", "kind", kind_names[k], "inputs", inputs, "outputs",
                        output_port((kind)k), output_type((kind)k), "resourceClass", is_remote((kind)k) ? "remote" : "local"));
    }
}

static void print_plan(const graph *g) {
    int remote = 0, downloads = 0;
    for (int i = 0; i < NODE_COUNT; i++) {
        const node *n = &g->nodes[i];
        remote += is_remote(n->kind);
        downloads += n->kind == JOIN_REMOTE;
        printf("%s %-12s", n->id, kind_names[n->kind]);
        for (int k = 0; k < input_count(n->kind); k++) printf(" %s=%s", input_port(n->kind, k), g->nodes[n->inputs[k]].id);
        printf("%s%s  -> \"%s\"\n", n->param[0] ? "  param " : "", n->param, n->expected);
    }
    printf("%d nodes, %d remote (%d with {url} outputs: downloads), %d local\n", NODE_COUNT, remote, downloads,
           NODE_COUNT - remote);
}

/* ---------------------------------------------------------------------------
 * The fake provider's ledger
 * ------------------------------------------------------------------------- */

typedef struct job {
    char job_id[32];
    char run_id[32];
    char node_id[8];
    char key[96];
    int64_t created_ms; /* engine time */
    int queued_s, running_s;
    char output[MAX_TEXT + 1];
} job;

typedef struct ledger {
    job jobs[MAX_JOBS];
    int count;
} ledger;

static void ledger_load(ledger *l) {
    l->count = 0;
    FILE *f = fopen(g_ledger_path, "r");
    if (!f) return;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        if (l->count >= MAX_JOBS) die("ledger too long");
        job *j = &l->jobs[l->count];
        long long created;
        char encoded[256];
        if (sscanf(line, "%31s %31s %7s %95s %lld %d %d %255s", j->job_id, j->run_id, j->node_id, j->key, &created,
                   &j->queued_s, &j->running_s, encoded) != 8) {
            die("ledger %s: bad line '%s'", g_ledger_path, line);
        }
        j->created_ms = created;
        if (!text_from_uri(encoded, j->output, sizeof j->output)) die("ledger: bad output '%s'", encoded);
        l->count++;
    }
    fclose(f);
}

/* Writes the whole ledger to PATH.jobs.tmp and renames it over PATH.jobs. */
static void ledger_save(const ledger *l) {
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", g_ledger_path);
    FILE *f = fopen(tmp, "w");
    if (!f) die("cannot write %s: %s", tmp, strerror(errno));
    for (int i = 0; i < l->count; i++) {
        const job *j = &l->jobs[i];
        char encoded[256];
        uri_from_text(j->output, encoded, sizeof encoded);
        fprintf(f, "%s %s %s %s %lld %d %d %s\n", j->job_id, j->run_id, j->node_id, j->key, (long long)j->created_ms,
                j->queued_s, j->running_s, encoded);
    }
    if (fclose(f) != 0) die("cannot write %s", tmp);
    if (rename(tmp, g_ledger_path) != 0) die("cannot rename %s: %s", tmp, strerror(errno));
}

/* The provider's job for an idempotency key (the engine's workflowId/nodeId/runId). */
static job *ledger_by_key(ledger *l, const char *key) {
    for (int i = 0; i < l->count; i++) {
        if (eq(l->jobs[i].key, key)) return &l->jobs[i];
    }
    return NULL;
}

static job *ledger_by_job(ledger *l, const char *job_id) {
    for (int i = 0; i < l->count; i++) {
        if (eq(l->jobs[i].job_id, job_id)) return &l->jobs[i];
    }
    return NULL;
}

/* ---------------------------------------------------------------------------
 * The engine and the workflow
 * ------------------------------------------------------------------------- */

#define MAX_LOCAL_RUNS 4096

typedef struct driver {
    wf_engine *engine;
    graph graph;
    ledger ledger;
    char workflow_id[32];
    int answered;
    /* Local runs whose local.run was taken already, by this launch or an
     * earlier one (journal "local" lines). */
    char taken_local[MAX_LOCAL_RUNS][32];
    int taken_local_count;
    long long most_steps_done; /* the most stepsDone an earlier launch saw at opening */
} driver;

/* Reads the journal: the local runs earlier launches took ("local RUN NODE"
 * lines), and the progress they saw ("opened ... stepsDone=N"). */
static void read_journal(driver *d) {
    FILE *f = fopen(g_journal_path, "r");
    char line[1200];
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "local ", 6) == 0 && d->taken_local_count < MAX_LOCAL_RUNS) {
            if (sscanf(line + 6, "%31s", d->taken_local[d->taken_local_count]) == 1) d->taken_local_count++;
        }
        const char *steps = strstr(line, " stepsDone=");
        if (strncmp(line, "opened ", 7) == 0 && steps) {
            long long n = atoll(steps + 11);
            if (n > d->most_steps_done) d->most_steps_done = n;
        }
    }
    if (f) fclose(f);
}

static void remember_local(driver *d, const char *run_id) {
    if (d->taken_local_count < MAX_LOCAL_RUNS) snprintf(d->taken_local[d->taken_local_count++], 32, "%s", run_id);
}

static int taken_earlier(const driver *d, const char *run_id) {
    for (int i = 0; i < d->taken_local_count; i++) {
        if (eq(d->taken_local[i], run_id)) return 1;
    }
    return 0;
}

static wf_engine *open_engine(uint64_t seed) {
    wf_engine *engine = NULL;
    json_t *config = json_pack("{s:s, s:{s:s, s:s}, s:I, s:s, s:{s:i, s:i}, s:s, s:b}", "store", g_store, "clock", "mode",
                               "manual", "start", "2026-01-01T00:00:00.000Z", "seed", (json_int_t)seed, "logLevel",
                               "critical", "concurrency", "remote", 6, "local", 2, "durability", g_durability,
                               "backgroundWrites", g_background_writes);
    int status = wf_engine_open(&engine, config);
    json_decref(config);
    if (status == WF_ESTORE && g_store_faults && is_fault(wf_error_last()->code)) {
        journal("storeFault open %s: %s", wf_error_last()->code, wf_error_last()->message);
        exit(EXIT_STORE_FAULT);
    }
    if (status != WF_OK) {
        const wf_error *e = wf_error_last();
        die("opening the engine on %s: %s %s: %s", g_store, wf_status_name(status), e->code, e->message);
    }
    return engine;
}

static int64_t now_ms(driver *d) {
    json_t *r = call(d->engine, "clock.now", NULL);
    int64_t t = parse_time_ms(str(r, "now"));
    json_decref(r);
    return t;
}

/* The workflow of this seed's template in the store, if any. */
static int find_workflow(driver *d, const char *template_id) {
    json_t *list = call(d->engine, "workflow.list", json_pack("{s:s, s:b}", "filter", "all", "includeArchived", 1));
    json_t *row;
    size_t i;
    int found = 0;
    json_array_foreach(json_object_get(list, "rows"), i, row) {
        if (eq(str(row, "templateId"), template_id)) {
            if (found) violation("two workflows for template %s: %s and %s", template_id, d->workflow_id, str(row, "workflowId"));
            snprintf(d->workflow_id, sizeof d->workflow_id, "%s", str(row, "workflowId"));
            found = 1;
        }
    }
    json_decref(list);
    return found;
}

static json_t *get_workflow(driver *d) {
    return call(d->engine, "workflow.get", json_pack("{s:s}", "workflowId", d->workflow_id));
}

static json_t *node_history(driver *d, const char *node_id) {
    return call(d->engine, "node.history", json_pack("{s:s, s:s}", "workflowId", d->workflow_id, "nodeId", node_id));
}

static const char *const known_states[] = {"blocked", "ready", "awaitingUser", "queuedRemote", "runningRemote",
                                           "runningLocal", "downloading", "succeeded", "failed", "cancelled", "skipped"};

/* Every node in a legal state. `reopened`: the engine was just opened, so no
 * local run that an earlier launch took can be running: a killed process's
 * runs come back failed, "interrupted". (Runs that waited for a local slot,
 * in state ready, may start as the slots free up: those are new.) */
static void check_states(driver *d, json_t *wf, int reopened) {
    const char *status = str(wf, "status");
    if (!eq(status, "active") && !eq(status, "done") && !eq(status, "failed")) violation("workflow status '%s'", status);
    json_t *nodes = json_object_get(wf, "nodes"), *n;
    size_t i;
    if (json_array_size(nodes) != NODE_COUNT) violation("workflow has %zu nodes, not %d", json_array_size(nodes), NODE_COUNT);
    json_array_foreach(nodes, i, n) {
        const char *id = str(n, "nodeId"), *state = str(n, "state");
        int gi = graph_node(&d->graph, id);
        if (gi < 0) {
            violation("unknown node '%s'", id);
            continue;
        }
        kind k = d->graph.nodes[gi].kind;
        int known = 0;
        for (size_t s = 0; s < sizeof known_states / sizeof known_states[0]; s++) known |= eq(state, known_states[s]);
        if (!known) violation("%s: unknown state '%s'", id, state);
        if (eq(state, "blocked")) {
            json_t *reason = json_object_get(n, "blockedReason");
            const char *code = str(reason, "code");
            if (!reason || !*code || !*str(reason, "message")) {
                violation("%s: blocked without a blockedReason", id);
            } else if (!eq(code, "waitingForInput") && !eq(code, "upstreamFailed")) {
                violation("%s: blocked for an unexpected reason %s (%s)", id, code, str(reason, "message"));
            }
        }
        if (eq(state, "awaitingUser") || eq(state, "cancelled") || eq(state, "skipped")) violation("%s: state %s", id, state);
        if (is_remote(k) && eq(state, "runningLocal")) violation("%s: remote node in runningLocal", id);
        if (!is_remote(k) && (eq(state, "queuedRemote") || eq(state, "runningRemote") || eq(state, "downloading"))) {
            violation("%s: local node in %s", id, state);
        }
        /* (After a power cut on "normal" a new run may have the id of one taken before it.) */
        if (reopened && !g_may_lose_commits && eq(state, "runningLocal") && taken_earlier(d, str(n, "runId"))) {
            violation("%s: run %s, taken by an earlier launch, is still runningLocal after reopening", id, str(n, "runId"));
        }
        if (eq(state, "failed")) {
            const char *code = str(json_object_get(n, "lastError"), "code");
            if (is_remote(k) || !eq(code, "interrupted")) violation("%s (%s) failed: %s", id, kind_names[k], code);
        }
        if (eq(state, "succeeded") && !json_is_string(json_object_get(json_object_get(n, "outputs"), output_port(k)))) {
            violation("%s: succeeded without output %s", id, output_port(k));
        }
        const char *job_id = str(n, "jobId");
        if (*job_id) {
            job *j = ledger_by_job(&d->ledger, job_id);
            if (!j) {
                violation("%s: job %s is not in the provider's ledger", id, job_id);
            } else if (!eq(j->run_id, str(n, "runId")) || !eq(j->node_id, id)) {
                violation("%s run %s: job %s belongs to run %s of %s", id, str(n, "runId"), job_id, j->run_id, j->node_id);
            }
        }
    }
}

/* The run `run_id` of a node, from node.history (a new reference), or NULL. */
static json_t *find_run(driver *d, const char *node_id, const char *run_id) {
    json_t *history = node_history(d, node_id), *run, *found = NULL;
    size_t i;
    json_array_foreach(json_object_get(history, "runs"), i, run) {
        if (eq(str(run, "runId"), run_id)) found = json_incref(run);
    }
    json_decref(history);
    return found;
}

/* The texts of an effect's input assets, checked against the graph. */
static void input_texts(driver *d, const json_t *effect, int gi, char a[MAX_TEXT + 1], char b[MAX_TEXT + 1]) {
    const node *n = &d->graph.nodes[gi];
    a[0] = b[0] = 0;
    for (int k = 0; k < input_count(n->kind); k++) {
        char *out = k == 0 ? a : b;
        json_t *asset = json_object_get(json_object_get(effect, "inputs"), input_port(n->kind, k));
        const node *producer = &d->graph.nodes[n->inputs[k]];
        if (!asset || !text_from_uri(str(asset, "uri"), out, MAX_TEXT + 1)) {
            violation("%s %s: input %s missing or not text", str(effect, "type"), n->id, input_port(n->kind, k));
            continue;
        }
        if (!eq(out, producer->expected)) {
            violation("%s %s: input %s is \"%s\", expected \"%s\"", str(effect, "type"), n->id, input_port(n->kind, k), out,
                      producer->expected);
        }
        if (!eq(str(json_object_get(asset, "provenance"), "nodeId"), producer->id)) {
            violation("%s %s: input %s comes from %s, not %s", str(effect, "type"), n->id, input_port(n->kind, k),
                      str(json_object_get(asset, "provenance"), "nodeId"), producer->id);
        }
    }
}

static json_t *text_asset(const char *text) {
    char uri[512];
    uri_from_text(text, uri, sizeof uri);
    return json_pack("{s:s, s:s, s:I, s:{s:s}}", "type", "TextRef", "uri", uri, "bytes", (json_int_t)strlen(text), "meta",
                     "providerSchema", "v1");
}

/* Calls an answering op; an answer the engine refuses is an anomaly worth a line. */
static void answer(driver *d, const char *op, json_t *args_stolen) {
    int status;
    char *text = json_dumps(args_stolen, JSON_COMPACT);
    json_t *r = call_status(&status, d->engine, op, args_stolen);
    if (status != WF_OK) {
        const wf_error *e = wf_error_last();
        violation("%s %s refused: %s %s: %s", op, text ? text : "", wf_status_name(status), e->code, e->message);
    } else if (!json_is_true(json_object_get(r, "applied"))) {
        journal("notApplied %s %s -> %s", op, text ? text : "", str(r, "state"));
    }
    d->answered++;
    free(text);
    json_decref(r);
}

static void on_local_run(driver *d, const json_t *effect) {
    int gi = graph_node(&d->graph, str(effect, "nodeId"));
    if (gi < 0 || is_remote(d->graph.nodes[gi].kind)) {
        violation("local.run for %s", str(effect, "nodeId"));
        return;
    }
    const node *n = &d->graph.nodes[gi];
    if (!eq(str(effect, "kind"), kind_names[n->kind])) violation("local.run %s: kind %s", n->id, str(effect, "kind"));
    if (taken_earlier(d, str(effect, "runId"))) {
        if (g_may_lose_commits) {
            journal("localAgain %s %s (a power cut took the change that started it)", str(effect, "runId"), n->id);
        } else {
            violation("local.run %s %s delivered again: it was taken already (after a kill it should be interrupted)",
                      n->id, str(effect, "runId"));
        }
    }
    journal("local %s %s effect=%s", str(effect, "runId"), n->id, str(effect, "id"));
    remember_local(d, str(effect, "runId"));
    char a[MAX_TEXT + 1], b[MAX_TEXT + 1], out[MAX_TEXT + 1];
    input_texts(d, effect, gi, a, b);
    json_t *params = json_object_get(effect, "params");
    const char *param = n->kind == TEXT ? str(params, "text") : n->kind == APPEND ? str(params, "suffix") : "";
    apply_tool(n->kind, param, a, b, out);
    answer(d, "local.completed",
           json_pack("{s:s, s:{s:o}}", "runId", str(effect, "runId"), "outputs", output_port(n->kind), text_asset(out)));
}

static void on_remote_submit(driver *d, const json_t *effect) {
    const char *run_id = str(effect, "runId"), *node_id = str(effect, "nodeId"), *key = str(effect, "idempotencyKey");
    int gi = graph_node(&d->graph, node_id);
    if (gi < 0 || !is_remote(d->graph.nodes[gi].kind)) {
        violation("remote.submit for %s", node_id);
        return;
    }
    /* The rule: a run that has a job id is never submitted again. */
    json_t *run = find_run(d, node_id, run_id);
    const char *engine_job = run ? str(run, "jobId") : "";
    job *j = ledger_by_key(&d->ledger, key);
    journal("submit %s %s effect=%s key=%s engineJob=%s ledgerJob=%s", run_id, node_id, str(effect, "id"), key,
            *engine_job ? engine_job : "-", j ? j->job_id : "-");
    if (!run) violation("remote.submit %s %s: no such run in node.history", node_id, run_id);
    if (*engine_job) violation("remote.submit %s %s: the run already has job %s", node_id, run_id, engine_job);
    json_decref(run);
    char expected_key[128];
    snprintf(expected_key, sizeof expected_key, "%s/%s/%s", d->workflow_id, node_id, run_id);
    if (!eq(key, expected_key)) violation("remote.submit %s: idempotencyKey %s, expected %s", run_id, key, expected_key);

    if (!j) {
        /* A new job: in the ledger before the engine hears of it. */
        if (d->ledger.count >= MAX_JOBS) die("too many jobs");
        const node *n = &d->graph.nodes[gi];
        char a[MAX_TEXT + 1], b[MAX_TEXT + 1];
        input_texts(d, effect, gi, a, b);
        j = &d->ledger.jobs[d->ledger.count];
        memset(j, 0, sizeof *j);
        snprintf(j->job_id, sizeof j->job_id, "J%llu-%02d", (unsigned long long)d->graph.seed, d->ledger.count + 1);
        snprintf(j->run_id, sizeof j->run_id, "%s", run_id);
        snprintf(j->node_id, sizeof j->node_id, "%s", node_id);
        snprintf(j->key, sizeof j->key, "%s", key);
        j->created_ms = now_ms(d);
        uint32_t h = hash_text(key);
        j->queued_s = (int)(h % 16);
        j->running_s = 5 + (int)((h >> 8) % 36);
        apply_tool(n->kind, "", a, b, j->output);
        d->ledger.count++;
        ledger_save(&d->ledger);
        journal("job %s %s %s", j->job_id, run_id, node_id);
    }
    answer(d, "job.submitted", json_pack("{s:s, s:s}", "runId", run_id, "jobId", j->job_id));
}

static void on_remote_poll(driver *d, const json_t *effect) {
    const char *job_id = str(effect, "jobId");
    job *j = ledger_by_job(&d->ledger, job_id);
    if (!j) {
        violation("remote.poll for job %s, which the provider never created", job_id);
        return;
    }
    if (!eq(j->run_id, str(effect, "runId"))) violation("remote.poll %s: run %s, not %s", job_id, str(effect, "runId"), j->run_id);
    int gi = graph_node(&d->graph, j->node_id);
    kind k = d->graph.nodes[gi].kind;
    double elapsed = (double)(now_ms(d) - j->created_ms) / 1000.0;
    /* A quarter of the jobs are preempted halfway: put back in the provider's queue for 12 s (a poll lands in it),
     * then running again (the node goes runningRemote -> queuedRemote -> runningRemote). */
    int preempted = (hash_text(j->key) >> 16) % 4 == 0;
    double requeued_from = j->queued_s + j->running_s / 2.0;
    if (elapsed < j->queued_s) {
        answer(d, "job.update", json_pack("{s:s, s:s}", "jobId", job_id, "status", "queued"));
    } else if (preempted && elapsed >= requeued_from && elapsed < requeued_from + 12) {
        /* A node the engine had running must be queued again once the answer is applied. */
        int status;
        json_t *before = call_status(&status, d->engine, "node.get",
                                     json_pack("{s:s, s:s}", "workflowId", d->workflow_id, "nodeId", j->node_id));
        int was_running = status == WF_OK && eq(str(before, "state"), "runningRemote");
        json_decref(before);
        json_t *r = call_status(&status, d->engine, "job.update", json_pack("{s:s, s:s}", "jobId", job_id, "status", "queued"));
        d->answered++;
        if (status != WF_OK) {
            violation("job.update %s queued refused: %s %s", job_id, wf_status_name(status), wf_error_last()->message);
        } else if (was_running && !eq(str(r, "state"), "queuedRemote")) {
            violation("job.update %s queued after running left %s %s", job_id, j->node_id, str(r, "state"));
        } else if (was_running) {
            journal("requeued %s %s", job_id, j->node_id);
        }
        json_decref(r);
    } else if (elapsed < j->queued_s + j->running_s) {
        double progress = (elapsed - j->queued_s) / j->running_s;
        answer(d, "job.update", json_pack("{s:s, s:s, s:f}", "jobId", job_id, "status", "running", "progress", progress));
    } else {
        json_t *outputs;
        if (k == JOIN_REMOTE) {
            char url[128];
            snprintf(url, sizeof url, "https://provider.example/jobs/%s/text", job_id);
            outputs = json_pack("{s:{s:s}}", "text", "url", url);
        } else if (k == SPEAK_REMOTE) {
            char uri[128];
            snprintf(uri, sizeof uri, "https://provider.example/audio/%s.m4a", job_id);
            outputs = json_pack("{s:{s:s, s:s, s:{s:s, s:s}}}", "audio", "type", "AudioRef", "uri", uri, "meta",
                                "providerSchema", "v1", "spoken", j->output);
        } else {
            outputs = json_pack("{s:o}", "text", text_asset(j->output));
        }
        answer(d, "job.update", json_pack("{s:s, s:s, s:o}", "jobId", job_id, "status", "succeeded", "outputs", outputs));
    }
}

static void on_remote_download(driver *d, const json_t *effect) {
    const char *run_id = str(effect, "runId");
    char key[128];
    snprintf(key, sizeof key, "%s/%s/%s", d->workflow_id, str(effect, "nodeId"), run_id);
    job *j = ledger_by_key(&d->ledger, key);
    char url[128];
    if (!j) {
        violation("remote.download for run %s, which has no job", run_id);
        return;
    }
    snprintf(url, sizeof url, "https://provider.example/jobs/%s/text", j->job_id);
    if (!eq(str(effect, "url"), url)) violation("remote.download %s: url %s, expected %s", run_id, str(effect, "url"), url);
    journal("download %s %s %s", run_id, j->node_id, str(effect, "id"));
    answer(d, "job.downloaded", json_pack("{s:s, s:s, s:o}", "runId", run_id, "port", str(effect, "port"), "asset",
                                          text_asset(j->output)));
}

static void handle(driver *d, const json_t *effect) {
    const char *type = str(effect, "type");
    if (eq(type, "local.run")) {
        on_local_run(d, effect);
    } else if (eq(type, "remote.submit")) {
        on_remote_submit(d, effect);
    } else if (eq(type, "remote.poll")) {
        on_remote_poll(d, effect);
    } else if (eq(type, "remote.download")) {
        on_remote_download(d, effect);
    } else if (eq(type, "remote.cancel")) {
        violation("remote.cancel %s (nothing was cancelled)", str(effect, "jobId"));
    } else if (!eq(type, "notify") && !eq(type, "notify.withdraw") && !eq(type, "cache.evict")) {
        violation("unknown effect type %s", type);
    }
}

/* Tools, template, workflow: each step idempotent, so a kill anywhere in
 * between is repaired by the next launch. */
static void set_up(driver *d) {
    register_tools(d->engine);
    json_t *registered = call(d->engine, "template.register", json_pack("{s:o}", "template", template_json(&d->graph)));
    const char *template_id = str(registered, "templateId");
    if (!find_workflow(d, template_id)) {
        json_t *created = call(d->engine, "workflow.create", json_pack("{s:s}", "templateId", template_id));
        snprintf(d->workflow_id, sizeof d->workflow_id, "%s", str(created, "workflowId"));
        json_decref(created);
        journal("created %s", d->workflow_id);
    }
    json_decref(registered);
}

/* A digest of what the nodes are doing: state, run, job and progress of each. */
static uint32_t hash_nodes(const json_t *wf) {
    json_t *n;
    size_t i;
    uint32_t h = 2166136261u;
    json_array_foreach(json_object_get(wf, "nodes"), i, n) {
        char line[160];
        json_t *progress = json_object_get(n, "progress");
        snprintf(line, sizeof line, "%s %s %s %s %.4f;", str(n, "nodeId"), str(n, "state"), str(n, "runId"),
                 str(n, "jobId"), json_is_number(progress) ? json_number_value(progress) : -1.0);
        for (const char *p = line; *p; p++) h = (h ^ (unsigned char)*p) * 16777619u;
    }
    return h;
}

/* The workflow stopped moving: say where every unfinished node is. */
static void report_stall(driver *d) {
    json_t *wf = get_workflow(d), *n;
    size_t i;
    char where[700] = "";
    size_t used = 0;
    json_array_foreach(json_object_get(wf, "nodes"), i, n) {
        if (eq(str(n, "state"), "succeeded") || used + 64 > sizeof where) continue;
        used += (size_t)snprintf(where + used, sizeof where - used, " %s:%s%s%s", str(n, "nodeId"), str(n, "state"),
                                 *str(n, "jobId") ? "/" : "", str(n, "jobId"));
    }
    violation("stalled: no node moved for %d s of engine time, workflow %s; unfinished:%s", STALL_SECONDS,
              str(wf, "status"), where);
    json_decref(wf);
}

/* --pauses: one loop in eight sleeps 100 to 200 ms (the PRNG seeded per launch: kills land at
 * random moments anyway). */
static void pause_now_and_then(void) {
    static uint64_t state;
    if (!state) state = ((uint64_t)getpid() << 32) ^ (uint64_t)time(NULL) ^ 0x9E3779B97F4A7C15ULL;
    uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    if (z % 8 != 0) return;
    long ms = 100 + (long)((z >> 8) % 101);
    struct timespec t = {0, ms * 1000000L};
    while (nanosleep(&t, &t) != 0 && errno == EINTR) {
    }
}

static int run(uint64_t seed) {
    driver d;
    memset(&d, 0, sizeof d);
    build_graph(&d.graph, seed);
    ledger_load(&d.ledger);
    read_journal(&d);
    journal("start pid=%ld jobs=%d", (long)getpid(), d.ledger.count);
    d.engine = open_engine(seed);
    set_up(&d);

    json_t *wf = get_workflow(&d);
    check_states(&d, wf, 1);
    long long steps_done = json_integer_value(json_object_get(wf, "stepsDone"));
    if (steps_done < d.most_steps_done && g_may_lose_commits) {
        journal("wentBack stepsDone %lld -> %lld (a power cut)", d.most_steps_done, steps_done);
    } else if (steps_done < d.most_steps_done) {
        violation("stepsDone went back from %lld to %lld across a kill", d.most_steps_done, steps_done);
    }
    journal("opened %s status=%s stepsDone=%lld", d.workflow_id, str(wf, "status"), steps_done);
    json_decref(wf);
    if (g_violations) return EXIT_VIOLATION;
    call0(d.engine, "workflow.runAllReady", json_pack("{s:s}", "workflowId", d.workflow_id));

    uint32_t last_look = 0;
    int64_t last_change_ms = now_ms(&d);
    for (int round = 0; round < MAX_ROUNDS; round++) {
        wf = get_workflow(&d);
        check_states(&d, wf, 0);
        if (g_violations) return EXIT_VIOLATION;
        /* Every job finishes within a minute of engine time and is polled every
         * 10 s: nodes that do not move for STALL_SECONDS are stuck. */
        uint32_t look = hash_nodes(wf);
        int64_t t = now_ms(&d);
        if (look != last_look) {
            last_look = look;
            last_change_ms = t;
        } else if (t - last_change_ms > STALL_SECONDS * 1000LL) {
            json_decref(wf);
            report_stall(&d);
            return EXIT_VIOLATION;
        }
        const char *status = str(wf, "status");
        if (eq(status, "done")) {
            journal("done %s", d.workflow_id);
            json_decref(wf);
            /* The close puts every commit on disk; on a failing disk it may not (WF_ESTORE), and
             * the next launch closes again. */
            if (wf_engine_close(d.engine) != WF_OK) {
                const wf_error *e = wf_error_last();
                if (e->status == WF_ESTORE && g_store_faults && is_fault(e->code)) {
                    journal("storeFault close %s: %s", e->code, e->message);
                    return EXIT_STORE_FAULT;
                }
                die("closing the engine: %s %s: %s", wf_status_name(e->status), e->code, e->message);
            }
            return 0;
        }
        /* Local runs cut short by a kill: Retry (same inputs). */
        json_t *n;
        size_t i;
        int retried = 0;
        json_array_foreach(json_object_get(wf, "nodes"), i, n) {
            if (eq(str(n, "state"), "failed") && eq(str(json_object_get(n, "lastError"), "code"), "interrupted")) {
                json_t *r = call(d.engine, "node.retry", json_pack("{s:s, s:s}", "workflowId", d.workflow_id, "nodeId", str(n, "nodeId")));
                journal("retry %s %s -> %s", str(n, "nodeId"), str(n, "runId"), str(r, "runId"));
                json_decref(r);
                retried++;
            }
        }
        json_decref(wf);

        json_t *taken = call(d.engine, "effects.take", NULL), *effect;
        json_array_foreach(json_object_get(taken, "effects"), i, effect) handle(&d, effect);
        size_t count = json_array_size(json_object_get(taken, "effects"));
        json_decref(taken);
        if (g_violations) return EXIT_VIOLATION;
        if (g_pauses) pause_now_and_then();
        if (count > 0 || retried) continue;
        call0(d.engine, "clock.advance", json_pack("{s:i}", "seconds", CLOCK_STEP_SECONDS));
    }
    violation("the workflow is not done after %d rounds", MAX_ROUNDS);
    return EXIT_VIOLATION;
}

/* ---------------------------------------------------------------------------
 * check: the finished store
 * ------------------------------------------------------------------------- */

static int check(uint64_t seed) {
    driver d;
    memset(&d, 0, sizeof d);
    build_graph(&d.graph, seed);
    ledger_load(&d.ledger);
    read_journal(&d);
    d.engine = open_engine(seed);
    json_t *registered = call(d.engine, "template.register", json_pack("{s:o}", "template", template_json(&d.graph)));
    if (!json_is_true(json_object_get(registered, "existing"))) violation("the template was not in the store");
    if (!find_workflow(&d, str(registered, "templateId"))) die("no workflow in %s", g_store);
    json_decref(registered);

    json_t *wf = get_workflow(&d);
    check_states(&d, wf, 1);
    if (!eq(str(wf, "status"), "done")) violation("workflow %s is %s, not done", d.workflow_id, str(wf, "status"));
    if (json_integer_value(json_object_get(wf, "stepsDone")) != NODE_COUNT) {
        violation("stepsDone %lld", (long long)json_integer_value(json_object_get(wf, "stepsDone")));
    }

    char outputs[NODE_COUNT][32];
    char run_of[NODE_COUNT][32];
    memset(outputs, 0, sizeof outputs);
    memset(run_of, 0, sizeof run_of);
    int runs_total = 0, interrupted_runs = 0, remote_nodes = 0, downloads = 0;
    char seen_jobs[MAX_JOBS][32];
    int seen_job_count = 0;

    json_t *n;
    size_t i;
    json_array_foreach(json_object_get(wf, "nodes"), i, n) {
        int gi = graph_node(&d.graph, str(n, "nodeId"));
        if (gi < 0) continue;
        const node *g = &d.graph.nodes[gi];
        remote_nodes += is_remote(g->kind);
        downloads += g->kind == JOIN_REMOTE;
        if (!eq(str(n, "state"), "succeeded")) violation("%s is %s", g->id, str(n, "state"));
        snprintf(outputs[gi], sizeof outputs[gi], "%s", str(json_object_get(n, "outputs"), output_port(g->kind)));
        snprintf(run_of[gi], sizeof run_of[gi], "%s", str(n, "runId"));

        /* Runs: exactly one succeeded; remote nodes have one run only; any
         * other run of a local node failed as interrupted. */
        json_t *history = node_history(&d, g->id), *run;
        size_t r;
        int succeeded = 0;
        json_array_foreach(json_object_get(history, "runs"), r, run) {
            const char *status = str(run, "status"), *job_id = str(run, "jobId");
            runs_total++;
            if (eq(status, "succeeded")) {
                succeeded++;
                if (!eq(str(run, "runId"), run_of[gi])) violation("%s: succeeded run %s is not the node's run %s", g->id, str(run, "runId"), run_of[gi]);
            } else if (eq(status, "failed") && !is_remote(g->kind)) {
                interrupted_runs++;
            } else {
                violation("%s: run %s is %s", g->id, str(run, "runId"), status);
            }
            if (*job_id) {
                for (int s = 0; s < seen_job_count; s++) {
                    if (eq(seen_jobs[s], job_id)) violation("job %s appears on two runs", job_id);
                }
                if (seen_job_count < MAX_JOBS) snprintf(seen_jobs[seen_job_count++], 32, "%s", job_id);
                job *j = ledger_by_job(&d.ledger, job_id);
                if (!j || !eq(j->run_id, str(run, "runId"))) violation("%s: run %s has job %s, unknown to the provider for it", g->id, str(run, "runId"), job_id);
            } else if (is_remote(g->kind)) {
                violation("%s: remote run %s has no job id", g->id, str(run, "runId"));
            }
        }
        if (succeeded != 1) violation("%s: %d succeeded runs", g->id, succeeded);
        if (is_remote(g->kind) && json_array_size(json_object_get(history, "runs")) != 1) {
            violation("%s: remote node with %zu runs", g->id, json_array_size(json_object_get(history, "runs")));
        }
        json_decref(history);

        /* The output asset: present, typed, with provenance, and the expected content. */
        if (!outputs[gi][0]) {
            violation("%s: no output %s", g->id, output_port(g->kind));
            continue;
        }
        int status;
        json_t *asset = call_status(&status, d.engine, "asset.get", json_pack("{s:s}", "assetId", outputs[gi]));
        if (status != WF_OK) {
            violation("%s: output asset %s: %s", g->id, outputs[gi], wf_error_last()->code);
            continue;
        }
        json_t *prov = json_object_get(asset, "provenance");
        if (!eq(str(asset, "type"), output_type(g->kind))) violation("%s: asset type %s", g->id, str(asset, "type"));
        if (!eq(str(prov, "workflowId"), d.workflow_id) || !eq(str(prov, "nodeId"), g->id) ||
            !eq(str(prov, "runId"), run_of[gi]) || !eq(str(prov, "port"), output_port(g->kind))) {
            char *p = json_dumps(prov, JSON_COMPACT);
            violation("%s: asset %s provenance %s", g->id, outputs[gi], p ? p : "null");
            free(p);
        }
        if (g->kind == SPEAK_REMOTE) {
            if (!eq(str(json_object_get(asset, "meta"), "spoken"), g->expected)) {
                violation("%s: spoke \"%s\", expected \"%s\"", g->id, str(json_object_get(asset, "meta"), "spoken"), g->expected);
            }
        } else {
            char text[MAX_TEXT + 1];
            if (!text_from_uri(str(asset, "uri"), text, sizeof text) || !eq(text, g->expected)) {
                violation("%s: output \"%s\", expected \"%s\"", g->id, str(asset, "uri"), g->expected);
            }
        }
        json_decref(asset);
    }

    /* Lineage: each succeeded run consumed its producers' final outputs. */
    for (int gi = 0; gi < NODE_COUNT; gi++) {
        const node *g = &d.graph.nodes[gi];
        json_t *run = find_run(&d, g->id, run_of[gi]);
        for (int k = 0; run && k < input_count(g->kind); k++) {
            const char *in = str(json_object_get(run, "inputs"), input_port(g->kind, k));
            if (!eq(in, outputs[g->inputs[k]])) {
                violation("%s: input %s was %s, but %s's output is %s", g->id, input_port(g->kind, k), in,
                          d.graph.nodes[g->inputs[k]].id, outputs[g->inputs[k]]);
            }
        }
        json_decref(run);
    }
    json_decref(wf);

    /* The provider: one job per remote node, each for a run that has that job id (unless power
     * cuts took changes: then jobs the engine forgot may stand beside the ones it knows). */
    for (int a = 0; a < d.ledger.count && !g_may_lose_commits; a++) {
        for (int b = a + 1; b < d.ledger.count; b++) {
            if (eq(d.ledger.jobs[a].run_id, d.ledger.jobs[b].run_id)) violation("two jobs for run %s", d.ledger.jobs[a].run_id);
            if (eq(d.ledger.jobs[a].node_id, d.ledger.jobs[b].node_id)) violation("two jobs for node %s", d.ledger.jobs[a].node_id);
        }
    }
    if (d.ledger.count != remote_nodes && !g_may_lose_commits) {
        violation("the provider created %d jobs for %d remote nodes", d.ledger.count, remote_nodes);
    }
    if (seen_job_count != d.ledger.count && !g_may_lose_commits) {
        violation("the engine knows %d job ids, the provider created %d", seen_job_count, d.ledger.count);
    }

    /* The journal: no violation ever; no submit of a run that had a job id. */
    FILE *f = fopen(g_journal_path, "r");
    int launches = 0, opened = 0, submits = 0, with_job = 0, redelivered = 0, retries = 0, logged_violations = 0;
    int downloads_answered = 0, not_applied = 0, requeued = 0;
    if (f) {
        char line[1200];
        while (fgets(line, sizeof line, f)) {
            launches += strncmp(line, "start ", 6) == 0;
            opened += strncmp(line, "opened ", 7) == 0;
            retries += strncmp(line, "retry ", 6) == 0;
            downloads_answered += strncmp(line, "download ", 9) == 0;
            requeued += strncmp(line, "requeued ", 9) == 0;
            logged_violations += strncmp(line, "violation ", 10) == 0;
            not_applied += strncmp(line, "notApplied ", 11) == 0;
            if (strncmp(line, "submit ", 7) == 0) {
                submits++;
                with_job += strstr(line, "engineJob=-") == NULL;
                redelivered += strstr(line, "ledgerJob=-") == NULL;
            }
        }
        fclose(f);
    }
    if (logged_violations) violation("the journal records %d violations", logged_violations);
    if (with_job) violation("%d remote.submit effects for runs that already had a job id", with_job);
    if (wf_engine_close(d.engine) != WF_OK) violation("closing the engine: %s", wf_error_last()->message);

    const char *name = strrchr(g_store, '/') ? strrchr(g_store, '/') + 1 : g_store;
    printf("check %s: %s; %d nodes (%d remote, %d with downloads); %d runs (%d interrupted, %d retries journaled); "
           "%d jobs; %d launches journaled (%d got the engine open); %d remote.submit (%d delivered again after the "
           "provider had made the job: same job id; %d for a run with a job id); %d downloads answered; "
           "%d nodes put back from runningRemote to queuedRemote; %d answers not applied\n",
           name, g_violations ? "FAILED" : "ok", NODE_COUNT, remote_nodes, downloads, runs_total, interrupted_runs,
           retries, d.ledger.count, launches, opened, submits, redelivered, with_job, downloads_answered, requeued,
           not_applied);
    return g_violations ? EXIT_VIOLATION : 0;
}

/* ---------------------------------------------------------------------------
 * main
 * ------------------------------------------------------------------------- */

static void usage(void) {
    fprintf(stderr, "usage: kill-driver run|check --store PATH --seed N [--durability normal|full] [--may-lose-commits]\n"
                    "                 [--foreground-writes] [--store-faults] [--pauses]\n"
                    "       kill-driver plan --seed N\n");
    exit(2);
}

int main(int argc, char **argv) {
    if (argc < 2) usage();
    const char *mode = argv[1];
    uint64_t seed = 1;
    for (int i = 2; i < argc; i++) {
        if (eq(argv[i], "--store") && i + 1 < argc) {
            g_store = argv[++i];
        } else if (eq(argv[i], "--seed") && i + 1 < argc) {
            seed = strtoull(argv[++i], NULL, 10);
        } else if (eq(argv[i], "--durability") && i + 1 < argc && (eq(argv[i + 1], "normal") || eq(argv[i + 1], "full"))) {
            g_durability = argv[++i];
        } else if (eq(argv[i], "--may-lose-commits")) {
            g_may_lose_commits = 1;
        } else if (eq(argv[i], "--foreground-writes")) {
            g_background_writes = 0;
        } else if (eq(argv[i], "--store-faults")) {
            g_store_faults = 1;
        } else if (eq(argv[i], "--pauses")) {
            g_pauses = 1;
        } else {
            usage();
        }
    }
    if (eq(mode, "plan")) {
        graph g;
        build_graph(&g, seed);
        print_plan(&g);
        return 0;
    }
    if (!g_store || (!eq(mode, "run") && !eq(mode, "check"))) usage();
    snprintf(g_journal_path, sizeof g_journal_path, "%s.log", g_store);
    snprintf(g_ledger_path, sizeof g_ledger_path, "%s.jobs", g_store);
    return eq(mode, "run") ? run(seed) : check(seed);
}
