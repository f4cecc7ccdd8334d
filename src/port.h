/* SPDX-License-Identifier: MIT */
/*
 * port.h - everything clove needs from the operating system, behind one
 * small interface, so that the rest of src/ has no #if for the OS.
 *
 * One file per OS family implements it:
 *   port_posix.c  POSIX systems: threads, the pool mutex, memory
 *                 mappings, the monotonic clock, the trace file, code
 *                 addresses (dladdr where the C library has it)
 *   port_linux.c  Linux on top of that: the CPUs of the affinity mask,
 *                 pinning, thread names, timer slack
 *   port_unix.c   other POSIX systems (macOS, the BSDs): the same with
 *                 portable calls only (no pinning)
 *   port_win.c    Windows (Win32 threads, SRW locks, VirtualAlloc, ...)
 * and sleeping/waking on a word (wait.h) one of wait_futex.c (Linux),
 * wait_portable.c (POSIX condition variables) or wait_win.c
 * (WaitOnAddress). CMake picks the files (CLOVE_PORT, CLOVE_WAIT).
 *
 * Errors are errno values (EAGAIN, ENOMEM, EINVAL), as the public API
 * returns them, on every system.
 */
#ifndef CLOVE_PORT_H
#define CLOVE_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#if defined(_WIN32)
typedef void *clove__thread;                 /* a thread HANDLE */
typedef struct { void *srw; } clove__mutex;  /* an SRWLOCK */
/* The processors of the creating thread's group (processor groups other
 * than the creator's are not used: Windows gives a new thread the group
 * of its process's primary group unless told otherwise). */
typedef struct { uint64_t mask; } clove__cpus;
#else
#include <pthread.h>
typedef pthread_t clove__thread;
typedef pthread_mutex_t clove__mutex;
#if defined(__linux__)
#include <sched.h>
typedef cpu_set_t clove__cpus;
#else
typedef struct { int unused; } clove__cpus;
#endif
#endif

/* -- Threads ---------------------------------------------------------- */

/* Start fn(arg) on a new thread with a stack of stack_size bytes (0: the
 * system default; other sizes are raised to the system's minimum and
 * rounded up to whole pages). 0, EAGAIN (no thread could be started) or
 * EINVAL (the system refused the stack size). */
int clove__thread_start(clove__thread *th, size_t stack_size, void *(*fn)(void *), void *arg);
void clove__thread_join(clove__thread th);
/* Name the calling thread, as debuggers and top -H show it (at most 15
 * characters are kept on Linux). Best effort. */
void clove__thread_name(const char *name);

/* Thread cancellation (POSIX pthread_cancel; Windows has none: these do
 * nothing there). clove__cancel_off disables it for the calling thread
 * and returns the previous state, for clove__cancel_restore. */
int clove__cancel_off(void);
void clove__cancel_restore(int state);
/* Call fn(arg); if the thread leaves fn without returning (pthread_exit,
 * or cancellation acting at a cancellation point inside it), call
 * cleanup(cleanup_arg) as the thread unwinds, from this function's frame.
 * Windows has no such exit for a thread: there it is a plain call. */
void clove__call_with_cleanup(void (*fn)(void *), void *arg, void (*cleanup)(void *),
                              void *cleanup_arg);

/* -- The pool mutex ---------------------------------------------------- */

/* 0 or ENOMEM. lock/unlock return 0, or non-zero on a corrupt mutex. */
int clove__mutex_init(clove__mutex *m);
void clove__mutex_destroy(clove__mutex *m);
int clove__mutex_lock(clove__mutex *m);
int clove__mutex_unlock(clove__mutex *m);
/* A static mutex, initialised at compile time (the default pool's). */
#if defined(_WIN32)
#define CLOVE__MUTEX_INITIALIZER {0} /* SRWLOCK_INIT */
#else
#define CLOVE__MUTEX_INITIALIZER PTHREAD_MUTEX_INITIALIZER
#endif

/* -- Processes ---------------------------------------------------------- */

/* Call prepare before a fork() of this process, parent after it in the
 * parent and child in the child (pthread_atfork). Nothing where processes
 * do not fork (Windows). Best effort. */
void clove__at_fork(void (*prepare)(void), void (*parent)(void), void (*child)(void));

/* -- CPUs -------------------------------------------------------------- */

/* Tell the CPU that this is a spin-wait loop (x86's pause, Arm's yield):
 * it saves power and leaves a hyperthread's sibling more of the core. */
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#define clove__cpu_relax() __builtin_ia32_pause()
#elif (defined(__GNUC__) || defined(__clang__)) && (defined(__aarch64__) || defined(__arm__))
#define clove__cpu_relax() __asm__ __volatile__("yield" ::: "memory")
#else
#define clove__cpu_relax() ((void)0)
#endif

/* The CPUs this process may run on (its affinity mask where the system
 * has one, else the online CPUs); at least 1. */
unsigned clove__cpu_count(void);
/* The calling thread's CPUs, for clove__cpus_pin. */
void clove__cpus_get(clove__cpus *cpus);
/* Pin the calling thread to the (index mod m)-th of the m CPUs in cpus.
 * Best effort: nothing where the system cannot pin, or refuses. */
void clove__cpus_pin(const clove__cpus *cpus, unsigned index);
/* Let timed sleeps of the calling thread end up to ns late (Linux's timer
 * slack), to be woken with other timers. Best effort. */
void clove__timer_slack(uint64_t ns);

/* -- Memory ------------------------------------------------------------ */

size_t clove__page_size(void);
/* size bytes aligned to align (a power of two, at most a page), or NULL;
 * freed only with clove__aligned_free (Windows has a free of its own for
 * them). */
void *clove__aligned_alloc(size_t align, size_t size);
void clove__aligned_free(void *ptr);
/* Reserve bytes of address space, inaccessible (NULL on failure), make
 * part of it readable and writable, backed by memory only where touched
 * (false on failure), give back the memory behind part of that (it reads
 * as zeros afterwards; best effort), and release the whole reservation. */
void *clove__vm_reserve(size_t bytes);
bool clove__vm_commit(void *addr, size_t bytes);
void clove__vm_discard(void *addr, size_t bytes);
void clove__vm_release(void *addr, size_t bytes);

/* -- Time -------------------------------------------------------------- */

/* A monotonic clock in nanoseconds. */
uint64_t clove__now_ns(void);

/* -- The trace file ---------------------------------------------------- */

/* Open path for writing without truncating it (it is written when the
 * pool is destroyed): a handle >= 0, with *created telling whether this
 * call created the file, or -1 with errno set. */
int clove__file_open(const char *path, bool *created);
/* The handle as a stream to write from the start, truncated first when
 * it is a regular file (a device such as /dev/null is written as it is);
 * NULL with errno set (the handle is then still open). */
FILE *clove__file_rewrite(int handle);
/* Close a handle that was not turned into a stream; remove the file too
 * if remove. */
void clove__file_close(int handle, const char *path, bool remove);
/* The process id, as trace viewers show it. */
int clove__process_id(void);

/* -- Code addresses ---------------------------------------------------- */

/* The file of the executable or library that holds code address addr, and
 * the address addr2line takes for it (its offset in an ELF object, the
 * linked address in a PE image), and the nearest symbol
 * before it if the dynamic symbol table has one (*symbol NULL if not).
 * false when the system cannot tell. */
bool clove__code_location(const void *addr, char *file, size_t file_size, uintptr_t *offset,
                          const char **symbol, uintptr_t *symbol_offset);

#endif
