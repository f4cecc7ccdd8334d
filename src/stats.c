/* SPDX-License-Identifier: MIT */
/*
 * stats.c - scheduler counters (clove_pool_stats) and the trace timeline
 * (config.trace_path / CLOVE_TRACE).
 *
 * Both live in per-worker-index slots (internal.h): only the cold paths of
 * share.c write them - a heartbeat answered, a share, a shared job run, a
 * sleep, a join that waits - so neither costs anything on the fork/join
 * fast path. Tracing adds one branch on a NULL pointer to those cold paths
 * when it is off.
 *
 * The trace keeps the last TRACE_EVENTS events of each worker index below
 * threads (a ring: bounded memory, newest kept) and is written as Chrome
 * trace-event JSON, one event per line, when the pool is destroyed:
 *   - a track (tid) per worker index: 0 is the thread(s) in
 *     clove_pool_run with index 0, 1.. the pool's workers;
 *   - complete events ("ph":"X") for "run" (a clove_pool_run call, on the
 *     tracks of the calling threads), "job" (a shared job run for another
 *     worker), "wait" (a join waiting for a job taken elsewhere; jobs it
 *     helped with and its sleeps nest inside) and "sleep" (idle);
 *   - instant events ("ph":"i") "heartbeat" (answered, nothing shared),
 *     "share" (answered by sharing the oldest queued job) and "stolen"
 *     (the heartbeat thread shared the worker's reserve because it left a
 *     beat unanswered, e.g. in a long leaf: at the time it did, recorded
 *     when the worker notices).
 * Threads that enter clove_pool_run with an index >= threads are counted
 * in the totals but not traced.
 */
#include "internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRACE_EVENTS 32768u /* per worker index: 24 bytes each, 768 KiB */

void clove__trace_write(struct clove__trace *tr, uint32_t kind, uint64_t t0, uint64_t t1)
{
    struct clove__event *e = &tr->ev[tr->n % tr->cap];
    e->t0 = t0;
    e->t1 = t1;
    e->kind = kind;
    e->n = 0;
    tr->n++;
}

void clove__trace_share(struct clove__trace *tr, uint64_t t, uint32_t n)
{
    clove__trace_write(tr, CLOVE__EV_SHARE, t, t);
    tr->ev[(tr->n - 1) % tr->cap].n = n;
}

int clove__stats_init(clove_pool *p, const char *trace_path, const char *from)
{
    p->slots = clove__aligned_zalloc((size_t)p->nthreads * sizeof *p->slots);
    if (p->slots == NULL)
        return ENOMEM;
    for (unsigned i = 0; i < p->nthreads; i++) {
        for (int k = 0; k < CLOVE__NSTATS; k++)
            atomic_init(&p->slots[i].c[k], 0);
        p->slots[i].trace = NULL;
    }
    p->trace_path = NULL;
    p->trace_fd = -1;
    p->trace_created = false;
    if (trace_path == NULL || trace_path[0] == 0)
        return 0;
    size_t len = strlen(trace_path) + 1;
    int rc = ENOMEM;
    p->trace_path = clove__malloc(len);
    if (p->trace_path == NULL)
        goto fail;
    memcpy(p->trace_path, trace_path, len);
    for (unsigned i = 0; i < p->nthreads; i++) {
        struct clove__trace *tr =
            clove__malloc(sizeof *tr + TRACE_EVENTS * sizeof tr->ev[0]);
        if (tr == NULL)
            goto fail;
        tr->cap = TRACE_EVENTS;
        tr->n = 0;
        p->slots[i].trace = tr;
    }
    /* Opened now, without truncating it (the trace is written at destroy);
     * trace_created tells whether this created it, so that a create that
     * fails later can remove it again. */
    p->trace_fd = clove__file_open(trace_path, &p->trace_created);
    if (p->trace_fd < 0) {
        if (errno == ENOMEM)
            goto fail;
        fprintf(stderr,
                "clove: %s=\"%s\" refused: cannot open it for writing: %s "
                "(clove_pool_create returns EINVAL)\n",
                from, trace_path, strerror(errno));
        rc = EINVAL;
        goto fail;
    }
    p->t_origin = clove__now_ns();
    return 0;
fail:
    for (unsigned i = 0; i < p->nthreads; i++)
        free(p->slots[i].trace);
    free(p->trace_path);
    clove__aligned_free(p->slots);
    p->slots = NULL;
    p->trace_path = NULL;
    return rc;
}

static const char *event_name(uint32_t kind)
{
    switch (kind) {
    case CLOVE__EV_JOB: return "job";
    case CLOVE__EV_WAIT: return "wait";
    case CLOVE__EV_SLEEP: return "sleep";
    case CLOVE__EV_BEAT: return "heartbeat";
    case CLOVE__EV_SHARE: return "share";
    case CLOVE__EV_RUN: return "run";
    case CLOVE__EV_STOLEN: return "stolen";
    default: return "?";
    }
}

/* Write the trace into p->trace_fd (from its start) and close it. */
static void write_trace(clove_pool *p)
{
    /* A regular file is truncated now (it may have held an older trace);
     * anything else (/dev/null, a terminal) is written as it is. */
    FILE *f = clove__file_rewrite(p->trace_fd);
    if (f == NULL) {
        fprintf(stderr, "clove: cannot write the trace to %s: %s\n", p->trace_path,
                strerror(errno));
        clove__file_close(p->trace_fd, p->trace_path, false);
        return;
    }
    int pid = clove__process_id();
    fprintf(f, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
    fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
               "\"args\":{\"name\":\"clove pool (%u threads, heartbeat %u us)\"}}",
            pid, p->nthreads, p->heartbeat_us);
    for (unsigned i = 0; i < p->nthreads; i++) {
        const struct clove__trace *tr = p->slots[i].trace;
        uint64_t first = tr->n > tr->cap ? tr->n - tr->cap : 0;
        if (i == 0)
            fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
                       "\"args\":{\"name\":\"caller (index 0)\",\"dropped\":%" PRIu64 "}}",
                    pid, first);
        else
            fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%u,"
                       "\"args\":{\"name\":\"clove-%u\",\"dropped\":%" PRIu64 "}}",
                    pid, i, i, first);
        for (uint64_t k = first; k < tr->n; k++) {
            const struct clove__event *e = &tr->ev[k % tr->cap];
            double ts = (double)(e->t0 - p->t_origin) / 1000.0;
            if (e->kind == CLOVE__EV_SHARE)
                fprintf(f, ",\n{\"name\":\"share\",\"ph\":\"i\",\"s\":\"t\",\"pid\":%d,"
                           "\"tid\":%u,\"ts\":%.3f,\"args\":{\"jobs\":%" PRIu32 "}}",
                        pid, i, ts, e->n);
            else if (e->kind == CLOVE__EV_BEAT || e->kind == CLOVE__EV_STOLEN)
                fprintf(f, ",\n{\"name\":\"%s\",\"ph\":\"i\",\"s\":\"t\",\"pid\":%d,"
                           "\"tid\":%u,\"ts\":%.3f}",
                        event_name(e->kind), pid, i, ts);
            else
                fprintf(f, ",\n{\"name\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%u,"
                           "\"ts\":%.3f,\"dur\":%.3f}",
                        event_name(e->kind), pid, i, ts, (double)(e->t1 - e->t0) / 1000.0);
        }
    }
    fprintf(f, "\n]}\n");
    if (fclose(f) != 0)
        fprintf(stderr, "clove: error writing the trace to %s: %s\n", p->trace_path,
                strerror(errno));
}

void clove__stats_fini(clove_pool *p, bool write)
{
    if (p->slots == NULL)
        return;
    if (p->trace_path && write) {
        write_trace(p);
    } else if (p->trace_path) {
        /* clove_pool_create failed: leave no file it created behind. */
        clove__file_close(p->trace_fd, p->trace_path, p->trace_created);
    }
    for (unsigned i = 0; i < p->nthreads; i++)
        free(p->slots[i].trace);
    free(p->trace_path);
    clove__aligned_free(p->slots);
    p->slots = NULL;
}

static void read_slot(const struct clove__slot *s, uint64_t out[CLOVE__NSTATS])
{
    for (int k = 0; k < CLOVE__NSTATS; k++)
        out[k] = atomic_load_explicit(&s->c[k], memory_order_relaxed);
}

static void to_stats(const uint64_t c[CLOVE__NSTATS], clove_stats *s)
{
    s->heartbeats = c[CLOVE__ST_HEARTBEATS];
    s->shared = c[CLOVE__ST_SHARED];
    s->reclaimed = c[CLOVE__ST_RECLAIMED];
    s->ran = c[CLOVE__ST_RAN];
    s->sleeps = c[CLOVE__ST_SLEEPS];
    s->sleep_ns = c[CLOVE__ST_SLEEP_NS];
    s->waits = c[CLOVE__ST_WAITS];
    s->wait_ns = c[CLOVE__ST_WAIT_NS];
    s->stolen = c[CLOVE__ST_STOLEN];
    s->handed = c[CLOVE__ST_HANDED];
    s->answered = c[CLOVE__ST_ANSWERED];
}

/* sizeof(clove_stats) in version 0.1 (see clove_pool_stats_sized). */
#define STATS_SIZE_0_1 (offsetof(clove_stats, stolen) + sizeof(uint64_t))
_Static_assert(sizeof(clove_stats) >= STATS_SIZE_0_1, "clove_stats only grows");

/* Store s into the caller's clove_stats of size bytes (>= STATS_SIZE_0_1):
 * counters its layout lacks are dropped, counters this library lacks are
 * zero. */
static void store_stats(const clove_stats *s, void *out, size_t size)
{
    size_t n = size < sizeof *s ? size : sizeof *s;
    memcpy(out, s, n);
    memset((char *)out + n, 0, size - n);
}

int (clove_pool_stats)(const clove_pool *cp, clove_stats *total, clove_stats *per_worker,
                      size_t n)
{
    return clove_pool_stats_sized(cp, total, per_worker, n, STATS_SIZE_0_1);
}

int clove_pool_stats_sized(const clove_pool *cp, clove_stats *total, clove_stats *per_worker,
                           size_t n, size_t size)
{
    if (cp == NULL || (total == NULL && per_worker == NULL) || size < STATS_SIZE_0_1)
        return EINVAL;
    clove_pool *p = (clove_pool *)cp; /* the lock is not part of its value */
    uint64_t sum[CLOVE__NSTATS];
    clove__lock(p);
    memcpy(sum, p->overflow, sizeof sum);
    /* Live external tasks with an index >= threads count in the total. */
    for (const clove_task *r = p->registered; r; r = clove__tk(r)->reg_next)
        if (r->index >= p->nthreads) {
            uint64_t c[CLOVE__NSTATS];
            read_slot(clove__tk(r)->slot, c);
            for (int k = 0; k < CLOVE__NSTATS; k++)
                sum[k] += c[k];
        }
    clove__unlock(p);
    for (unsigned i = 0; i < p->nthreads; i++) {
        uint64_t c[CLOVE__NSTATS];
        read_slot(&p->slots[i], c);
        for (int k = 0; k < CLOVE__NSTATS; k++)
            sum[k] += c[k];
        if (per_worker && i < n) {
            clove_stats s;
            to_stats(c, &s);
            store_stats(&s, (char *)per_worker + i * size, size);
        }
    }
    if (total) {
        clove_stats s;
        to_stats(sum, &s);
        store_stats(&s, total, size);
    }
    return 0;
}
