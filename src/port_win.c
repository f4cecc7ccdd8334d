/* SPDX-License-Identifier: MIT */
/*
 * port_win.c - port.h on Windows: Win32 threads, an SRW lock for the pool
 * mutex, VirtualAlloc reservations committed on demand, the performance
 * counter, and module names for code addresses. Needs Windows 8 or later
 * (WaitOnAddress in wait_win.c; SetThreadDescription is looked up at run
 * time, as it came with Windows 10 1607).
 *
 * Processor groups: a pool uses the processors of the group of the thread
 * that creates it (at most 64); CPUs in other groups are neither counted
 * nor used for pinning.
 */
#include "port.h"

#include <errno.h>
#include <fcntl.h>
#include <io.h>
#include <process.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <wchar.h>
#include <windows.h>

/* ------------------------------------------------------------------------ */
/* Threads and the mutex                                                    */
/* ------------------------------------------------------------------------ */

struct start {
    void *(*fn)(void *);
    void *arg;
};

static unsigned __stdcall thread_main(void *p)
{
    struct start s = *(struct start *)p;
    free(p);
    s.fn(s.arg);
    return 0;
}

int clove__thread_start(clove__thread *th, size_t stack_size, void *(*fn)(void *), void *arg)
{
    struct start *s = malloc(sizeof *s);
    if (s == NULL)
        return EAGAIN;
    s->fn = fn;
    s->arg = arg;
    /* _beginthreadex rather than CreateThread: the C runtime's per-thread
     * state is set up and freed with the thread. The size is what the
     * thread's stack may grow to (reserved, committed as it grows). */
    uintptr_t h = _beginthreadex(NULL, (unsigned)(stack_size > 0xFFFFFFFFu ? 0xFFFFFFFFu : stack_size),
                                 thread_main, s, stack_size ? STACK_SIZE_PARAM_IS_A_RESERVATION : 0,
                                 NULL);
    if (h == 0) {
        free(s);
        return errno == EINVAL ? EINVAL : EAGAIN;
    }
    *th = (clove__thread)h;
    return 0;
}

int clove__cancel_off(void)
{
    return 0;
}

void clove__cancel_restore(int state)
{
    (void)state;
}

void clove__call_with_cleanup(void (*fn)(void *), void *arg, void (*cleanup)(void *),
                              void *cleanup_arg)
{
    (void)cleanup;
    (void)cleanup_arg;
    fn(arg);
}

void clove__thread_join(clove__thread th)
{
    WaitForSingleObject((HANDLE)th, INFINITE);
    CloseHandle((HANDLE)th);
}

typedef HRESULT(WINAPI *set_description_fn)(HANDLE, PCWSTR);

void clove__thread_name(const char *name)
{
    static set_description_fn set;
    static volatile LONG looked_up;
    if (!looked_up) {
        HMODULE k = GetModuleHandleW(L"kernel32.dll");
        FARPROC f = k ? GetProcAddress(k, "SetThreadDescription") : NULL;
        /* A function pointer of another type, as GetProcAddress gives
         * them all: through void (*)(void) to keep compilers quiet. */
        set = (set_description_fn)(void (*)(void))f;
        InterlockedExchange(&looked_up, 1);
    }
    if (set == NULL)
        return;
    wchar_t wide[64];
    size_t n = 0;
    for (; name[n] && n < sizeof wide / sizeof wide[0] - 1; n++)
        wide[n] = (wchar_t)(unsigned char)name[n];
    wide[n] = 0;
    (void)set(GetCurrentThread(), wide);
}

int clove__mutex_init(clove__mutex *m)
{
    SRWLOCK init = SRWLOCK_INIT;
    memcpy(&m->srw, &init, sizeof init);
    return 0;
}

void clove__mutex_destroy(clove__mutex *m)
{
    (void)m; /* SRW locks hold no resources */
}

int clove__mutex_lock(clove__mutex *m)
{
    AcquireSRWLockExclusive((PSRWLOCK)&m->srw);
    return 0;
}

int clove__mutex_unlock(clove__mutex *m)
{
    ReleaseSRWLockExclusive((PSRWLOCK)&m->srw);
    return 0;
}

void clove__at_fork(void (*prepare)(void), void (*parent)(void), void (*child)(void))
{
    /* Windows processes do not fork. */
    (void)prepare;
    (void)parent;
    (void)child;
}

/* ------------------------------------------------------------------------ */
/* CPUs                                                                     */
/* ------------------------------------------------------------------------ */

static unsigned popcount64(uint64_t v)
{
    unsigned n = 0;
    for (; v; v &= v - 1)
        n++;
    return n;
}

unsigned clove__cpu_count(void)
{
    DWORD_PTR process, system;
    if (GetProcessAffinityMask(GetCurrentProcess(), &process, &system) && process != 0)
        return popcount64((uint64_t)process);
    SYSTEM_INFO si;
    GetSystemInfo(&si);
    return si.dwNumberOfProcessors > 0 ? (unsigned)si.dwNumberOfProcessors : 1;
}

void clove__cpus_get(clove__cpus *cpus)
{
    DWORD_PTR process, system;
    cpus->mask = 0;
    if (GetProcessAffinityMask(GetCurrentProcess(), &process, &system))
        cpus->mask = (uint64_t)process;
}

void clove__cpus_pin(const clove__cpus *cpus, unsigned index)
{
    unsigned m = popcount64(cpus->mask);
    if (m == 0)
        return;
    unsigned want = index % m, seen = 0;
    for (unsigned cpu = 0; cpu < 64; cpu++) {
        if (!(cpus->mask >> cpu & 1))
            continue;
        if (seen++ == want) {
            (void)SetThreadAffinityMask(GetCurrentThread(), (DWORD_PTR)1 << cpu);
            return;
        }
    }
}

void clove__timer_slack(uint64_t ns)
{
    (void)ns;
}

/* ------------------------------------------------------------------------ */
/* Memory                                                                   */
/* ------------------------------------------------------------------------ */

size_t clove__page_size(void)
{
    SYSTEM_INFO si;
    GetSystemInfo(&si);
    return si.dwPageSize ? (size_t)si.dwPageSize : 4096;
}

void *clove__aligned_alloc(size_t align, size_t size)
{
    return _aligned_malloc(size, align);
}

void clove__aligned_free(void *ptr)
{
    _aligned_free(ptr);
}

/*
 * Commit on touch. Committed memory counts against the system's commit
 * limit (RAM plus page file) even untouched, so a job stack (32 MiB of
 * address space) is not committed whole: a region is committed a CHUNK at
 * a time, with a guard page (PAGE_GUARD) after what is committed. The fork
 * that first writes a record in the guard page raises
 * STATUS_GUARD_PAGE_VIOLATION (the system has already made the page
 * ordinary read-write memory); the vectored exception handler below
 * commits the next chunk, guards the page after it, and resumes the write.
 * Records are written in order, one after the other, so the guard is
 * always met before anything beyond it. The first chunk has one page more,
 * and discarded memory keeps its first page committed (as zeros): the
 * pool reads the first record past a job stack's first 64 KiB to tell
 * whether deep forks touched it (clove__jobs_touched), and that read must
 * not grow the stack.
 *
 * A read can also reach a page that is not committed: a worker holding a
 * stale range of shared records loads their state words (share.c), and
 * the records may lie on pages that clove__vm_discard has decommitted
 * since. POSIX gives such a read zeros (MADV_DONTNEED); here it raises an
 * access violation, and the handler commits that page, as zeros, and
 * resumes the read, which then sees no shared record. The page stays
 * committed until the next discard.
 *
 * The handler knows the regions from a list under an SRW lock: added by
 * clove__vm_commit, removed by clove__vm_release. It is installed with the
 * first region and removed with the last, so that a DLL with no pool left
 * can be unloaded. Faults outside the regions go on to other handlers.
 */
#define CHUNK ((size_t)64 << 10)

struct region {
    char *lo, *hi; /* [lo, hi): committed on touch */
    struct region *next;
};

static SRWLOCK regions_lock = SRWLOCK_INIT;
static struct region *regions; /* regions_lock */
static void *handler;          /* regions_lock: installed while regions != NULL */

/* Commit [from, min(from + CHUNK, hi)) and guard the page after it. */
static void commit_chunk(char *from, char *hi)
{
    size_t ps = clove__page_size();
    char *to = (size_t)(hi - from) > CHUNK ? from + CHUNK : hi;
    (void)VirtualAlloc(from, (size_t)(to - from), MEM_COMMIT, PAGE_READWRITE);
    if (to < hi)
        (void)VirtualAlloc(to, ps, MEM_COMMIT, PAGE_READWRITE | PAGE_GUARD);
}

static LONG CALLBACK guard_handler(EXCEPTION_POINTERS *info)
{
    const EXCEPTION_RECORD *er = info->ExceptionRecord;
    bool guard = er->ExceptionCode == STATUS_GUARD_PAGE_VIOLATION;
    /* An access violation is a read or a write (not an execution, 8) of a
     * page that is not committed. */
    if ((!guard && er->ExceptionCode != EXCEPTION_ACCESS_VIOLATION) ||
        er->NumberParameters < 2 || (!guard && er->ExceptionInformation[0] > 1))
        return EXCEPTION_CONTINUE_SEARCH;
    char *addr = (char *)er->ExceptionInformation[1];
    LONG verdict = EXCEPTION_CONTINUE_SEARCH;
    AcquireSRWLockShared(&regions_lock);
    for (const struct region *r = regions; r; r = r->next) {
        if (addr >= r->lo && addr < r->hi) {
            size_t ps = clove__page_size();
            char *page = r->lo + (size_t)(addr - r->lo) / ps * ps;
            if (!guard)
                verdict = VirtualAlloc(page, ps, MEM_COMMIT, PAGE_READWRITE) != NULL
                              ? EXCEPTION_CONTINUE_EXECUTION
                              : EXCEPTION_CONTINUE_SEARCH;
            else {
                if (page + ps < r->hi)
                    commit_chunk(page + ps, r->hi);
                verdict = EXCEPTION_CONTINUE_EXECUTION;
            }
            break;
        }
    }
    ReleaseSRWLockShared(&regions_lock);
    return verdict;
}

void *clove__vm_reserve(size_t bytes)
{
    return VirtualAlloc(NULL, bytes, MEM_RESERVE, PAGE_NOACCESS);
}

bool clove__vm_commit(void *addr, size_t bytes)
{
    struct region *r = malloc(sizeof *r);
    if (r == NULL)
        return false;
    r->lo = addr;
    r->hi = (char *)addr + bytes;
    AcquireSRWLockExclusive(&regions_lock);
    if (regions == NULL)
        handler = AddVectoredExceptionHandler(1, guard_handler);
    bool ok = handler != NULL;
    if (ok) {
        r->next = regions;
        regions = r;
    }
    ReleaseSRWLockExclusive(&regions_lock);
    if (!ok) {
        free(r);
        return false;
    }
    size_t ps = clove__page_size();
    (void)VirtualAlloc(r->lo, bytes < ps ? bytes : ps, MEM_COMMIT, PAGE_READWRITE);
    if (bytes > ps)
        commit_chunk(r->lo + ps, r->hi);
    return true;
}

void clove__vm_discard(void *addr, size_t bytes)
{
    /* Decommitted pages take no memory. The first is committed again, as
     * zeros, and the next becomes the guard, so that touching it commits
     * the rest anew. */
    size_t ps = clove__page_size();
    if (bytes == 0 || !VirtualFree(addr, bytes, MEM_DECOMMIT))
        return;
    (void)VirtualAlloc(addr, ps, MEM_COMMIT, PAGE_READWRITE);
    if (bytes > ps)
        (void)VirtualAlloc((char *)addr + ps, ps, MEM_COMMIT, PAGE_READWRITE | PAGE_GUARD);
}

void clove__vm_release(void *addr, size_t bytes)
{
    char *lo = addr, *hi = lo + bytes;
    AcquireSRWLockExclusive(&regions_lock);
    for (struct region **rp = &regions; *rp;) {
        struct region *r = *rp;
        if (r->lo >= lo && r->hi <= hi) {
            *rp = r->next;
            free(r);
        } else {
            rp = &r->next;
        }
    }
    if (regions == NULL && handler != NULL) {
        RemoveVectoredExceptionHandler(handler);
        handler = NULL;
    }
    ReleaseSRWLockExclusive(&regions_lock);
    (void)VirtualFree(addr, 0, MEM_RELEASE);
}

/* ------------------------------------------------------------------------ */
/* Time, the trace file, code addresses                                     */
/* ------------------------------------------------------------------------ */

uint64_t clove__now_ns(void)
{
    static LARGE_INTEGER freq;
    LARGE_INTEGER now;
    if (freq.QuadPart == 0)
        QueryPerformanceFrequency(&freq);
    QueryPerformanceCounter(&now);
    /* Seconds and the rest apart, so that the product cannot overflow. */
    uint64_t f = (uint64_t)freq.QuadPart, c = (uint64_t)now.QuadPart;
    return c / f * 1000000000u + c % f * 1000000000u / f;
}

int clove__file_open(const char *path, bool *created)
{
    int fd = _open(path, _O_WRONLY | _O_CREAT | _O_EXCL | _O_BINARY | _O_NOINHERIT,
                   _S_IREAD | _S_IWRITE);
    *created = fd >= 0;
    if (fd < 0 && errno == EEXIST)
        fd = _open(path, _O_WRONLY | _O_BINARY | _O_NOINHERIT);
    return fd;
}

FILE *clove__file_rewrite(int handle)
{
    struct _stat64 st;
    if (_fstat64(handle, &st) != 0)
        return NULL;
    if ((st.st_mode & _S_IFMT) == _S_IFREG && _chsize_s(handle, 0) != 0)
        return NULL;
    return _fdopen(handle, "wb");
}

void clove__file_close(int handle, const char *path, bool remove)
{
    _close(handle);
    if (remove)
        _unlink(path);
}

int clove__process_id(void)
{
    return (int)GetCurrentProcessId();
}

bool clove__code_location(const void *addr, char *file, size_t file_size, uintptr_t *offset,
                          const char **symbol, uintptr_t *symbol_offset)
{
    HMODULE mod;
    (void)symbol_offset;
    if (file_size == 0 ||
        !GetModuleHandleExA(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS |
                                GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
                            (LPCSTR)addr, &mod))
        return false;
    DWORD n = GetModuleFileNameA(mod, file, (DWORD)(file_size > 0xFFFFFFFFu ? 0xFFFFFFFFu : file_size));
    if (n == 0 || n >= file_size)
        return false;
    /* addr2line takes the address as linked: the image's preferred base
     * (from its PE header, mapped at mod) plus addr's offset in it. */
    const IMAGE_DOS_HEADER *dos = (const IMAGE_DOS_HEADER *)(const void *)mod;
    const IMAGE_NT_HEADERS *nt =
        (const IMAGE_NT_HEADERS *)(const void *)((const char *)mod + dos->e_lfanew);
    *offset = (uintptr_t)nt->OptionalHeader.ImageBase +
              (uintptr_t)((const char *)addr - (const char *)mod);
    *symbol = NULL;
    return true;
}
