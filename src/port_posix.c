/* SPDX-License-Identifier: MIT */
/*
 * port_posix.c - port.h on POSIX systems: threads, the pool mutex, memory
 * mappings, the clock, the trace file and code addresses. The calls that
 * differ between POSIX systems (CPU affinity, thread names) are in
 * port_linux.c and port_unix.c.
 */
#include "port.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#if defined(__GLIBC__) || defined(__APPLE__) || defined(__FreeBSD__)
#include <dlfcn.h>
#define HAVE_DLADDR 1
#endif

#ifndef MAP_ANONYMOUS
#define MAP_ANONYMOUS MAP_ANON
#endif
#ifndef MAP_NORESERVE
#define MAP_NORESERVE 0
#endif
#ifndef O_CLOEXEC
#define O_CLOEXEC 0
#endif

/* ------------------------------------------------------------------------ */
/* Threads and the mutex                                                    */
/* ------------------------------------------------------------------------ */

/* Raised to the system's minimum for a thread's stack (PTHREAD_STACK_MIN:
 * 16 KiB on x86-64 Linux, 128 KiB on aarch64 Linux) and rounded up to
 * whole pages, which some systems require. */
static size_t thread_stack_size(size_t size)
{
    long min = sysconf(_SC_THREAD_STACK_MIN);
    size_t page = clove__page_size();
    if (min > 0 && size < (size_t)min)
        size = (size_t)min;
    if (size % page != 0)
        size += page - size % page;
    return size;
}

int clove__thread_start(clove__thread *th, size_t stack_size, void *(*fn)(void *), void *arg)
{
    pthread_attr_t attr, *attrp = NULL;
    if (stack_size) {
        if (pthread_attr_init(&attr) != 0)
            return EAGAIN;
        attrp = &attr;
        if (pthread_attr_setstacksize(&attr, thread_stack_size(stack_size)) != 0) {
            pthread_attr_destroy(&attr);
            return EINVAL;
        }
    }
    int rc = pthread_create(th, attrp, fn, arg);
    if (attrp)
        pthread_attr_destroy(attrp);
    /* EPERM (a scheduling policy refused) and EINVAL (attributes) are, as
     * far as the caller can tell, threads that could not be had. */
    return rc == 0 ? 0 : (rc == EPERM || rc == EINVAL ? EAGAIN : rc);
}

int clove__cancel_off(void)
{
    int state = PTHREAD_CANCEL_ENABLE;
    (void)pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &state);
    return state;
}

void clove__cancel_restore(int state)
{
    (void)pthread_setcancelstate(state, NULL);
}

void clove__call_with_cleanup(void (*fn)(void *), void *arg, void (*cleanup)(void *),
                              void *cleanup_arg)
{
    pthread_cleanup_push(cleanup, cleanup_arg);
    fn(arg);
    pthread_cleanup_pop(0);
}

void clove__thread_join(clove__thread th)
{
    (void)pthread_join(th, NULL);
}

int clove__mutex_init(clove__mutex *m)
{
    return pthread_mutex_init(m, NULL) == 0 ? 0 : ENOMEM;
}

void clove__mutex_destroy(clove__mutex *m)
{
    (void)pthread_mutex_destroy(m);
}

int clove__mutex_lock(clove__mutex *m)
{
    return pthread_mutex_lock(m);
}

int clove__mutex_unlock(clove__mutex *m)
{
    return pthread_mutex_unlock(m);
}

void clove__at_fork(void (*prepare)(void), void (*parent)(void), void (*child)(void))
{
    (void)pthread_atfork(prepare, parent, child);
}

/* ------------------------------------------------------------------------ */
/* Memory                                                                   */
/* ------------------------------------------------------------------------ */

size_t clove__page_size(void)
{
    long ps = sysconf(_SC_PAGESIZE);
    return ps > 0 ? (size_t)ps : 4096;
}

void *clove__aligned_alloc(size_t align, size_t size)
{
    void *mem = NULL;
    return posix_memalign(&mem, align, size) == 0 ? mem : NULL;
}

void clove__aligned_free(void *ptr)
{
    free(ptr);
}

void *clove__vm_reserve(size_t bytes)
{
    void *m = mmap(NULL, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return m == MAP_FAILED ? NULL : m;
}

bool clove__vm_commit(void *addr, size_t bytes)
{
    return mprotect(addr, bytes, PROT_READ | PROT_WRITE) == 0;
}

void clove__vm_discard(void *addr, size_t bytes)
{
    /* Private anonymous memory reads as zeros after MADV_DONTNEED. */
    (void)madvise(addr, bytes, MADV_DONTNEED);
}

void clove__vm_release(void *addr, size_t bytes)
{
    (void)munmap(addr, bytes);
}

/* ------------------------------------------------------------------------ */
/* Time, the trace file, code addresses                                     */
/* ------------------------------------------------------------------------ */

uint64_t clove__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int clove__file_open(const char *path, bool *created)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    *created = fd >= 0;
    if (fd < 0 && errno == EEXIST)
        fd = open(path, O_WRONLY | O_CLOEXEC);
    return fd;
}

FILE *clove__file_rewrite(int handle)
{
    struct stat st;
    if (fstat(handle, &st) != 0)
        return NULL;
    if (S_ISREG(st.st_mode) && ftruncate(handle, 0) != 0)
        return NULL;
    return fdopen(handle, "w");
}

void clove__file_close(int handle, const char *path, bool remove)
{
    close(handle);
    if (remove)
        unlink(path);
}

int clove__process_id(void)
{
    return (int)getpid();
}

bool clove__code_location(const void *addr, char *file, size_t file_size, uintptr_t *offset,
                          const char **symbol, uintptr_t *symbol_offset)
{
#ifdef HAVE_DLADDR
    Dl_info info;
    if (!dladdr(addr, &info) || !info.dli_fname || !info.dli_fbase || file_size == 0)
        return false;
    *offset = (uintptr_t)((const char *)addr - (const char *)info.dli_fbase);
    *symbol = NULL;
    if (info.dli_sname && info.dli_saddr) {
        *symbol = info.dli_sname;
        *symbol_offset = (uintptr_t)((const char *)addr - (const char *)info.dli_saddr);
    }
    /* The main program is named as it was started (argv[0], maybe with no
     * path at all): give a path addr2line can open. */
    const char *name = info.dli_fname;
    char path[PATH_MAX];
    if (strchr(name, '/') == NULL) {
        ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
        if (n > 0) {
            path[n] = 0;
            name = path;
        }
    } else if (name[0] != '/' && realpath(name, path) != NULL) {
        name = path;
    }
    snprintf(file, file_size, "%s", name);
    return true;
#else
    (void)addr;
    (void)file;
    (void)file_size;
    (void)offset;
    (void)symbol;
    (void)symbol_offset;
    return false;
#endif
}
