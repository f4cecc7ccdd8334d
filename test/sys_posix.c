/* SPDX-License-Identifier: MIT */
/*
 * sys_posix.c - the tests' helpers that depend on the operating system, on
 * POSIX systems (the /proc parts on Linux): time, threads of this process,
 * mappings, child processes, stderr capture, environment. sys_win.c has
 * the same for Windows; test.h declares them.
 */
#include "test.h"

#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* Time                                                                     */
/* ------------------------------------------------------------------------ */

double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void sleep_us(unsigned long us)
{
    struct timespec ts = {(time_t)(us / 1000000u), (long)(us % 1000000u) * 1000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* ------------------------------------------------------------------------ */
/* /proc/self/task                                                          */
/* ------------------------------------------------------------------------ */

size_t list_tids(pid_t *tids, size_t max)
{
    DIR *d = opendir("/proc/self/task");
    ASSERT_MSG(d != NULL, "cannot open /proc/self/task");
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        if (n < max && tids)
            tids[n] = (pid_t)atol(e->d_name);
        n++;
    }
    closedir(d);
    return n;
}

long job_stack_maps(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (f == NULL)
        return -1;
    const uintptr_t want = CLOVE_JOB_STACK_DEPTH * sizeof(struct clove__job);
    char line[512];
    long n = 0;
    /* A job stack is a read-write mapping of that size between two
     * inaccessible ones (its guard pages, src/jobstack.c). The lines come
     * in address order: a candidate waits for the next line to show its
     * upper guard. Without the guards, any other read-write line of that
     * size (a sanitizer's shadow, say) would count. */
    uintptr_t prev_hi = 0;
    bool prev_none = false, cand = false;
    while (fgets(line, sizeof line, f)) {
        uintptr_t lo, hi;
        char perms[8];
        if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %7s", &lo, &hi, perms) != 3)
            continue;
        bool none = perms[0] == '-' && perms[1] == '-' && perms[2] == '-';
        if (cand && lo == prev_hi && none)
            n++;
        cand = hi - lo == want && perms[0] == 'r' && perms[1] == 'w' && prev_none && prev_hi == lo;
        prev_hi = hi;
        prev_none = none;
    }
    fclose(f);
    return n;
}

unsigned thread_count(void)
{
    return (unsigned)list_tids(NULL, 0);
}

long long thread_ctx_switches(pid_t tid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/self/task/%ld/status", (long)tid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    long long total = 0;
    int found = 0;
    while (fgets(line, sizeof line, f)) {
        long long v;
        if (sscanf(line, "voluntary_ctxt_switches: %lld", &v) == 1 ||
            sscanf(line, "nonvoluntary_ctxt_switches: %lld", &v) == 1) {
            total += v;
            found++;
        }
    }
    fclose(f);
    return found == 2 ? total : -1;
}

/* The one-letter state in a /proc/.../stat file, or '?'. */
static char stat_state(const char *path)
{
    char buf[512];
    FILE *f = fopen(path, "r");
    if (!f)
        return '?';
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    /* "tid (comm) S ...": comm may contain spaces and parentheses. */
    char *p = strrchr(buf, ')');
    if (!p || p[1] != ' ' || !p[2])
        return '?';
    return p[2];
}

char thread_state(pid_t tid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%ld/stat", (long)tid);
    return stat_state(path);
}

/* ------------------------------------------------------------------------ */
/* Child processes                                                          */
/* ------------------------------------------------------------------------ */

/*
 * Under an emulator (qemu-user without binfmt_misc, as in CI's aarch64
 * step), a process cannot exec a binary of the emulated architecture
 * directly: CLOVE_TEST_EMULATOR holds the command that runs one (words
 * separated by spaces, as CMAKE_CROSSCOMPILING_EMULATOR), and the child
 * execs it with this executable's path. /proc/self/exe names the emulated
 * executable in the emulated process.
 */
void self_exec_prepare(struct self_exec *x, const char *argv0)
{
    ssize_t n = readlink("/proc/self/exe", x->path, sizeof x->path - 1);
    ASSERT_MSG(n > 0, "readlink /proc/self/exe failed: errno %d", errno);
    x->path[n] = 0;
    x->argc = 0;
    const char *emu = getenv("CLOVE_TEST_EMULATOR");
    if (emu != NULL && *emu != 0) {
        ASSERT_MSG(strlen(emu) < sizeof x->words, "CLOVE_TEST_EMULATOR is too long");
        strcpy(x->words, emu);
        char *save = NULL;
        for (char *w = strtok_r(x->words, " ", &save); w != NULL;
             w = strtok_r(NULL, " ", &save)) {
            ASSERT_MSG(x->argc < EMULATOR_WORDS, "CLOVE_TEST_EMULATOR has too many words");
            x->argv[x->argc++] = w;
        }
    }
    x->argv[x->argc] = x->argc == 0 ? (char *)argv0 : x->path;
    x->argc++;
}

/* Between fork and exec: async-signal-safe calls only (execvp searches
 * PATH without allocating in glibc). Returns only if the exec failed. */
void self_exec(struct self_exec *x, const char *arg1, const char *arg2)
{
    int argc = x->argc;
    x->argv[argc++] = (char *)arg1;
    if (arg2 != NULL)
        x->argv[argc++] = (char *)arg2;
    x->argv[argc] = NULL;
    if (x->argc == 1)
        execv(x->path, x->argv);
    else
        execvp(x->argv[0], x->argv);
}

int run_self_child(const char *name, char **err)
{
    static struct self_exec self;
    self_exec_prepare(&self, "clove_tests");
    int fds[2];
    ASSERT_OK(pipe(fds));
    fflush(NULL);
    pid_t pid = fork();
    ASSERT_MSG(pid >= 0, "fork failed: errno %d", errno);
    if (pid == 0) {
        /* Only async-signal-safe calls until exec: the parent may have
         * threads. The exec'd child is a fresh single-threaded process. */
        struct rlimit nocore = {0, 0};
        (void)setrlimit(RLIMIT_CORE, &nocore);
        close(fds[0]);
        if (dup2(fds[1], 2) < 0)
            _exit(126);
        close(fds[1]);
        self_exec(&self, "--misuse", name);
        _exit(127);
    }
    close(fds[1]);
    size_t cap = 0, len = 0;
    char *buf = NULL;
    for (;;) {
        buf = room_for_more(buf, &cap, len);
        ssize_t r = read(fds[0], buf + len, cap - len - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        len += (size_t)r;
    }
    buf[len] = 0;
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        ASSERT_MSG(errno == EINTR, "waitpid failed: errno %d", errno);
    *err = buf;
    return status;
}

/* ------------------------------------------------------------------------ */
/* A process that hangs                                                     */
/* ------------------------------------------------------------------------ */

/* The first line of path into buf, without its newline ("?" if none). */
static void read_line(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    if (f == NULL || fgets(buf, (int)n, f) == NULL)
        snprintf(buf, n, "?");
    if (f != NULL)
        fclose(f);
    buf[strcspn(buf, "\n")] = 0;
}

void describe_hung(pid_t pid, const char *what)
{
    char path[320], comm[64], call[256];
    fprintf(stderr, "%s (pid %ld) seems to hang; its threads (tid, name, state, system call):\n",
            what, (long)pid);
    snprintf(path, sizeof path, "/proc/%ld/task", (long)pid);
    DIR *d = opendir(path);
    if (d != NULL) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] < '0' || e->d_name[0] > '9')
                continue;
            snprintf(path, sizeof path, "/proc/%ld/task/%s/comm", (long)pid, e->d_name);
            read_line(path, comm, sizeof comm);
            snprintf(path, sizeof path, "/proc/%ld/task/%s/stat", (long)pid, e->d_name);
            char state = stat_state(path);
            snprintf(path, sizeof path, "/proc/%ld/task/%s/syscall", (long)pid, e->d_name);
            read_line(path, call, sizeof call);
            fprintf(stderr, "  %s %s %c %s\n", e->d_name, comm, state, call);
        }
        closedir(d);
    }
    fflush(stderr);
    /* Every thread's stack, where gdb is installed and may attach (under
     * an emulator it would show the emulator's). */
    if (getenv("CLOVE_TEST_EMULATOR") != NULL || getenv("CLOVE_TEST_NO_GDB") != NULL)
        return;
    char arg[24];
    snprintf(arg, sizeof arg, "%ld", (long)pid);
    pid_t g = fork();
    if (g < 0)
        return;
    if (g == 0) {
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0)
            (void)dup2(null, 0);
        (void)dup2(2, 1);
        execlp("gdb", "gdb", "-nx", "-batch", "-p", arg, "-ex", "thread apply all bt",
               (char *)NULL);
        _exit(127); /* no gdb: the lines above are all there is */
    }
    int status;
    double end = now_s() + 120;
    while (waitpid(g, &status, WNOHANG) == 0) {
        if (now_s() >= end) {
            (void)kill(g, SIGKILL);
            (void)waitpid(g, &status, 0);
            break;
        }
        sleep_us(10000);
    }
}

/* ------------------------------------------------------------------------ */
/* Exit statuses, the environment                                           */
/* ------------------------------------------------------------------------ */

bool child_aborted(int status)
{
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

void child_describe(int status, char *buf, size_t n)
{
    if (WIFSIGNALED(status))
        snprintf(buf, n, "killed by signal %d", WTERMSIG(status));
    else if (WIFEXITED(status))
        snprintf(buf, n, "exited with %d", WEXITSTATUS(status));
    else
        snprintf(buf, n, "status 0x%x", (unsigned)status);
}

int run_test_process(struct self_exec *self, const char *name, char *why, size_t n)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, n, "fork failed: errno %d", errno);
        return 1;
    }
    if (pid == 0) {
        self_exec(self, name, NULL);
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            snprintf(why, n, "waitpid failed: errno %d", errno);
            return 1;
        }
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    if (WIFEXITED(status) && WEXITSTATUS(status) == TEST_SKIPPED)
        return TEST_SKIPPED;
    child_describe(status, why, n);
    return 1;
}

size_t test_rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    if (f == NULL)
        return 0;
    unsigned long size = 0, res = 0;
    int n = fscanf(f, "%lu %lu", &size, &res);
    fclose(f);
    return n == 2 ? (size_t)res * (size_t)sysconf(_SC_PAGESIZE) : 0;
}

long test_map_count(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (f == NULL)
        return -1;
    long n = 0;
    int c;
    while ((c = fgetc(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

void *test_map(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT(p != MAP_FAILED);
    return p;
}

void test_unmap(void *p, size_t bytes)
{
    ASSERT_OK(munmap(p, bytes));
}

uintptr_t test_stack_top(void)
{
    pthread_attr_t attr;
    void *lo = NULL;
    size_t size = 0;
    ASSERT_OK(pthread_getattr_np(pthread_self(), &attr));
    ASSERT_OK(pthread_attr_getstack(&attr, &lo, &size));
    pthread_attr_destroy(&attr);
    return (uintptr_t)lo + size;
}

size_t test_resident(const void *addr, size_t len)
{
    size_t ps = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = (uintptr_t)addr / ps * ps, hi = ((uintptr_t)addr + len + ps - 1) / ps * ps;
    size_t pages = (hi - lo) / ps;
    unsigned char *v = malloc(pages);
    ASSERT(v != NULL);
    ASSERT_OK(mincore((void *)lo, hi - lo, (void *)v));
    size_t n = 0;
    for (size_t i = 0; i < pages; i++)
        n += v[i] & 1;
    free(v);
    return n * ps;
}

size_t test_stack_size(void)
{
    pthread_attr_t a;
    size_t sz = 0;
    ASSERT_OK(pthread_getattr_np(pthread_self(), &a));
    ASSERT_OK(pthread_attr_getstacksize(&a, &sz));
    pthread_attr_destroy(&a);
    return sz;
}

unsigned test_cpu_count(void)
{
#ifdef __linux__
    cpu_set_t set;
    ASSERT_OK(sched_getaffinity(0, sizeof set, &set));
    return (unsigned)CPU_COUNT(&set);
#else
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
#endif
}

void test_watchdog(unsigned seconds)
{
    alarm(seconds);
}

void test_setenv(const char *name, const char *value)
{
    if (value)
        ASSERT_OK(setenv(name, value, 1));
    else
        ASSERT_OK(unsetenv(name));
}
