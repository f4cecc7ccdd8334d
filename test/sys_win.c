/* SPDX-License-Identifier: MIT */
/*
 * sys_win.c - the tests' helpers that depend on the operating system, on
 * Windows (as sys_posix.c on POSIX systems; test.h declares them). Threads
 * of this process come from a Toolhelp snapshot, job-stack mappings from
 * VirtualQuery, child processes from CreateProcess with stderr on a pipe.
 * What Windows does not offer to a process about its threads (context
 * switch counts, run states) reads as unknown, and the tests that need it
 * skip.
 */
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <io.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>
#include <tlhelp32.h>

/* ------------------------------------------------------------------------ */
/* Time                                                                     */
/* ------------------------------------------------------------------------ */

double now_s(void)
{
    LARGE_INTEGER f, c;
    QueryPerformanceFrequency(&f);
    QueryPerformanceCounter(&c);
    return (double)c.QuadPart / (double)f.QuadPart;
}

void sleep_us(unsigned long us)
{
    /* Sleep counts milliseconds; shorter sleeps yield instead. */
    if (us < 1000)
        SwitchToThread();
    else
        Sleep((DWORD)(us / 1000));
}

/* ------------------------------------------------------------------------ */
/* Threads of this process, job-stack mappings                              */
/* ------------------------------------------------------------------------ */

size_t list_tids(pid_t *tids, size_t max)
{
    HANDLE snap = CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0);
    ASSERT_MSG(snap != INVALID_HANDLE_VALUE, "CreateToolhelp32Snapshot failed: %lu",
               (unsigned long)GetLastError());
    DWORD me = GetCurrentProcessId();
    THREADENTRY32 te;
    te.dwSize = sizeof te;
    size_t n = 0;
    for (BOOL ok = Thread32First(snap, &te); ok; ok = Thread32Next(snap, &te)) {
        if (te.th32OwnerProcessID != me)
            continue;
        if (n < max && tids)
            tids[n] = (pid_t)te.th32ThreadID;
        n++;
    }
    CloseHandle(snap);
    return n;
}

unsigned thread_count(void)
{
    return (unsigned)list_tids(NULL, 0);
}

/* A job stack is one reservation: a guard page, the records (committed as
 * they are touched), a guard page. Count reservations of exactly that
 * size (the regions VirtualQuery reports, summed per allocation). */
long job_stack_maps(void)
{
    SYSTEM_INFO si;
    GetSystemInfo(&si);
    const size_t ps = si.dwPageSize;
    const size_t records = CLOVE_JOB_STACK_DEPTH * sizeof(struct clove__job);
    const size_t want = ps + (records + ps - 1) / ps * ps + ps;
    long n = 0;
    const void *base = NULL;
    size_t size = 0;
    MEMORY_BASIC_INFORMATION mbi;
    for (const char *a = NULL; VirtualQuery(a, &mbi, sizeof mbi) == sizeof mbi;
         a = (const char *)mbi.BaseAddress + mbi.RegionSize) {
        if (mbi.State != MEM_FREE && mbi.AllocationBase == base) {
            size += mbi.RegionSize;
        } else {
            n += base != NULL && size == want;
            base = mbi.State == MEM_FREE ? NULL : mbi.AllocationBase;
            size = mbi.State == MEM_FREE ? 0 : mbi.RegionSize;
        }
        if ((uintptr_t)mbi.BaseAddress + mbi.RegionSize < (uintptr_t)mbi.BaseAddress)
            break;
    }
    return n + (base != NULL && size == want);
}

long long thread_ctx_switches(pid_t tid)
{
    (void)tid;
    return -1;
}

char thread_state(pid_t tid)
{
    (void)tid;
    return '?';
}

/* ------------------------------------------------------------------------ */
/* Child processes                                                          */
/* ------------------------------------------------------------------------ */

void self_exec_prepare(struct self_exec *x, const char *argv0)
{
    DWORD n = GetModuleFileNameA(NULL, x->path, (DWORD)sizeof x->path);
    ASSERT_MSG(n > 0 && n < sizeof x->path, "GetModuleFileName failed: %lu",
               (unsigned long)GetLastError());
    x->argv[0] = (char *)argv0;
    x->argc = 1;
}

void self_exec(struct self_exec *x, const char *arg1, const char *arg2)
{
    (void)x;
    (void)arg1;
    (void)arg2;
    ASSERT_MSG(false, "self_exec: Windows starts children with CreateProcess");
}

/* Start this executable with "ARG1 [ARG2]", its stderr on a pipe (err_read,
 * or inherited when NULL); the process handle. */
static HANDLE start_self(const char *arg1, const char *arg2, HANDLE *err_read)
{
    char path[4096], cmd[8192];
    DWORD n = GetModuleFileNameA(NULL, path, (DWORD)sizeof path);
    ASSERT_MSG(n > 0 && n < sizeof path, "GetModuleFileName failed");
    snprintf(cmd, sizeof cmd, "\"%s\" %s%s%s", path, arg1, arg2 ? " " : "", arg2 ? arg2 : "");
    STARTUPINFOA si;
    memset(&si, 0, sizeof si);
    si.cb = sizeof si;
    HANDLE rd = NULL, wr = NULL;
    if (err_read) {
        SECURITY_ATTRIBUTES sa = {sizeof sa, NULL, TRUE};
        ASSERT_MSG(CreatePipe(&rd, &wr, &sa, 0), "CreatePipe failed");
        SetHandleInformation(rd, HANDLE_FLAG_INHERIT, 0);
        si.dwFlags = STARTF_USESTDHANDLES;
        si.hStdInput = GetStdHandle(STD_INPUT_HANDLE);
        si.hStdOutput = GetStdHandle(STD_OUTPUT_HANDLE);
        si.hStdError = wr;
    }
    PROCESS_INFORMATION pi;
    fflush(NULL);
    ASSERT_MSG(CreateProcessA(path, cmd, NULL, NULL, TRUE, 0, NULL, NULL, &si, &pi),
               "CreateProcess failed: %lu", (unsigned long)GetLastError());
    CloseHandle(pi.hThread);
    if (err_read) {
        CloseHandle(wr);
        *err_read = rd;
    }
    return pi.hProcess;
}

static int wait_exit_code(HANDLE proc)
{
    DWORD code = 1;
    WaitForSingleObject(proc, INFINITE);
    GetExitCodeProcess(proc, &code);
    CloseHandle(proc);
    return (int)code;
}

int run_self_child(const char *name, char **err)
{
    HANDLE rd;
    HANDLE proc = start_self("--misuse", name, &rd);
    size_t cap = 0, len = 0;
    char *buf = NULL;
    for (;;) {
        buf = room_for_more(buf, &cap, len);
        DWORD got = 0;
        if (!ReadFile(rd, buf + len, (DWORD)(cap - len - 1), &got, NULL) || got == 0)
            break;
        len += got;
    }
    buf[len] = 0;
    CloseHandle(rd);
    *err = buf;
    return wait_exit_code(proc);
}

int run_test_process(struct self_exec *self, const char *name, char *why, size_t n)
{
    (void)self;
    int code = wait_exit_code(start_self(name, NULL, NULL));
    if (code == 0 || code == TEST_SKIPPED)
        return code;
    child_describe(code, why, n);
    return 1;
}

/* abort() ends a process with exit code 3 on Windows. */
bool child_aborted(int status)
{
    return status == 3;
}

void child_describe(int status, char *buf, size_t n)
{
    if ((unsigned)status >= 0xC0000000u)
        snprintf(buf, n, "ended by exception 0x%08x", (unsigned)status);
    else
        snprintf(buf, n, "exited with %d", status);
}

/* ------------------------------------------------------------------------ */
/* Watchdog, environment                                                    */
/* ------------------------------------------------------------------------ */

static DWORD WINAPI watchdog_main(void *arg)
{
    Sleep((DWORD)(uintptr_t)arg * 1000u);
    fprintf(stderr, "watchdog: still running after %u s\n", (unsigned)(uintptr_t)arg);
    fflush(stderr);
    TerminateProcess(GetCurrentProcess(), 124);
    return 0;
}

size_t test_resident(const void *addr, size_t len)
{
    size_t n = 0;
    const char *a = addr, *end = a + len;
    MEMORY_BASIC_INFORMATION mbi;
    while (a < end && VirtualQuery(a, &mbi, sizeof mbi) == sizeof mbi) {
        const char *lo = mbi.BaseAddress, *hi = lo + mbi.RegionSize;
        if (lo < a)
            lo = a;
        if (hi > end)
            hi = end;
        if (mbi.State == MEM_COMMIT)
            n += (size_t)(hi - lo);
        a = (const char *)mbi.BaseAddress + mbi.RegionSize;
    }
    return n;
}

size_t test_stack_size(void)
{
    ULONG_PTR low = 0, high = 0;
    GetCurrentThreadStackLimits(&low, &high);
    return (size_t)(high - low);
}

unsigned test_cpu_count(void)
{
    DWORD_PTR process, system;
    ASSERT(GetProcessAffinityMask(GetCurrentProcess(), &process, &system));
    unsigned n = 0;
    for (; process; process &= process - 1)
        n++;
    return n;
}

void test_watchdog(unsigned seconds)
{
    HANDLE h = CreateThread(NULL, 0, watchdog_main, (void *)(uintptr_t)seconds, 0, NULL);
    ASSERT(h != NULL);
    CloseHandle(h);
}

void test_setenv(const char *name, const char *value)
{
    ASSERT_OK(_putenv_s(name, value ? value : ""));
}
