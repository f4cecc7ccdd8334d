/* SPDX-License-Identifier: MIT */
/* util.c - assertion failure, scaling, timing and /proc helpers. */
#include "test.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _WIN32
#include <io.h>
#else
#include <unistd.h>
#endif

void test_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL %s:%d: ", file, line);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(NULL);
    /* Other threads (pool workers) may still be running: leave at once. */
    _Exit(1);
}

void test_skip(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("SKIP ");
    vprintf(fmt, ap);
    putchar('\n');
    va_end(ap);
    fflush(NULL);
    _Exit(TEST_SKIPPED);
}

/* ------------------------------------------------------------------------ */
/* Scaling                                                                  */
/* ------------------------------------------------------------------------ */

#if defined(__SANITIZE_ADDRESS__)
#define BUILD_SCALE (1.0 / 2)
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BUILD_SCALE (1.0 / 2)
#endif
#endif
#ifndef BUILD_SCALE
#ifdef CLOVE_TSAN
#define BUILD_SCALE (1.0 / 4)
#else
#define BUILD_SCALE 1.0
#endif
#endif

/* Computed once, whichever thread asks first (tests call scaled() from
 * jobs and from several external threads at once). */
static double scale_value;
static pthread_once_t scale_once = PTHREAD_ONCE_INIT;

static void scale_init(void)
{
    double env = 1;
    const char *s = getenv("CLOVE_TEST_SCALE");
    if (s && *s) {
        char *end;
        double v = strtod(s, &end);
        if (end != s && v > 0)
            env = v;
    }
    scale_value = env * BUILD_SCALE;
}

double test_scale(void)
{
    pthread_once(&scale_once, scale_init);
    return scale_value;
}

size_t scaled(size_t n, size_t lo)
{
    double v = (double)n * test_scale();
    size_t r = v < 1 ? 1 : (size_t)v;
    return r < lo ? lo : r;
}

double scaled_seconds(double s, double lo)
{
    double v = s * test_scale();
    return v < lo ? lo : v;
}

bool test_verbose(void)
{
    const char *s = getenv("CLOVE_TEST_VERBOSE");
    return s && *s && *s != '0';
}

void test_log(const char *fmt, ...)
{
    if (!test_verbose())
        return;
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fflush(stdout);
}

/* ------------------------------------------------------------------------ */
/* Pools                                                                    */
/* ------------------------------------------------------------------------ */

clove_pool *make_pool(unsigned threads, unsigned heartbeat_us)
{
    clove_config cfg = {.threads = threads, .heartbeat_us = heartbeat_us};
    clove_pool *p = NULL;
    ASSERT_OK(clove_pool_create(&p, &cfg));
    ASSERT(p != NULL);
    if (threads)
        ASSERT_EQ_U(clove_pool_threads(p), threads);
    return p;
}

unsigned test_start_threads = 1;

static void *nothing_main(void *arg)
{
    return arg;
}

unsigned thread_baseline(void)
{
    pthread_t th;
    ASSERT_OK(pthread_create(&th, NULL, nothing_main, NULL));
    ASSERT_OK(pthread_join(th, NULL));
    /* Let the joined thread leave /proc and any runtime helper appear. */
    unsigned last = thread_count(), stable = 0;
    for (int i = 0; i < 2000 && stable < 20; i++) {
        sleep_us(1000);
        unsigned c = thread_count();
        stable = c == last ? stable + 1 : 0;
        last = c;
    }
    return last;
}

unsigned wait_thread_count(unsigned n)
{
    unsigned c = thread_count();
    for (int i = 0; i < 5000 && c != n; i++) {
        sleep_us(1000);
        c = thread_count();
    }
    return c;
}

/* stderr into a temporary file: dup and dup2 are POSIX, and mingw-w64's C
 * runtime has them too. What was written is read back with stdio, through
 * the stream, since the file descriptor's offset is at its end. */
static int saved_stderr = -1;
static FILE *captured;

void stderr_capture_begin(void)
{
    ASSERT(saved_stderr < 0);
    fflush(stderr);
    captured = tmpfile();
    ASSERT(captured != NULL);
    saved_stderr = dup(2);
    ASSERT(saved_stderr >= 0);
    ASSERT(dup2(fileno(captured), 2) >= 0);
}

char *stderr_capture_end(void)
{
    ASSERT(saved_stderr >= 0);
    fflush(stderr);
    ASSERT(dup2(saved_stderr, 2) >= 0);
    close(saved_stderr);
    saved_stderr = -1;
    ASSERT(fseek(captured, 0, SEEK_END) == 0);
    long len = ftell(captured);
    ASSERT(len >= 0);
    char *buf = malloc((size_t)len + 1);
    ASSERT(buf != NULL);
    rewind(captured);
    size_t got = fread(buf, 1, (size_t)len, captured);
    buf[got] = 0;
    fclose(captured);
    captured = NULL;
    return buf;
}

char *room_for_more(char *buf, size_t *cap, size_t len)
{
    if (buf != NULL && *cap - len >= 1024)
        return buf;
    *cap = *cap ? *cap * 2 : 4096;
    buf = realloc(buf, *cap);
    ASSERT(buf != NULL);
    return buf;
}

unsigned count_lines(const char *s)
{
    unsigned n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

bool tid_in(pid_t tid, const pid_t *set, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (set[i] == tid)
            return true;
    return false;
}

void stats_settle(clove_pool *p)
{
    double t0 = now_s();
    for (;;) {
        clove_stats s;
        ASSERT_OK(clove_pool_stats(p, &s, NULL, 0));
        if (s.shared + s.stolen == s.ran + s.reclaimed || now_s() - t0 > 10)
            return;
        sleep_us(100);
    }
}
