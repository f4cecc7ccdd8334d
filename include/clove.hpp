/* SPDX-License-Identifier: MIT */
/*
 * clove.hpp - a header-only C++17 interface to clove (clove.h).
 *
 *     clove::pool pool(clove_config{...});          // or pool(4), or pool()
 *     long r = pool.run([&](clove::task t) { return fib(t, 30); });
 *
 *     long fib(clove::task t, int n) {
 *         if (n < 2) return n;
 *         auto [a, b] = t.join([&](clove::task t) { return fib(t, n - 1); },
 *                              [&](clove::task t) { return fib(t, n - 2); });
 *         return a + b;
 *     }
 *
 * Everything here is a thin layer over the C API; nothing in it is a second
 * scheduler:
 *
 *   clove::pool       RAII owner of a clove_pool (throws std::system_error
 *                     with the errno value); run(f) = clove_pool_run.
 *   run, current      clove_run (the default pool) and clove_current.
 *   clove::task       one clove_task pointer (pass it by value); t.join(f, g)
 *                     = clove_fork / clove_join, inline, no allocation.
 *   parallel_for      clove_for (clove_for_cancel with a clove::cancel).
 *   cancel            a cancellation token (clove_cancel).
 *   reduce            clove_reduce, with T constructed in clove's own
 *                     accumulator buffers (placement new / destroy);
 *                     with clove::deterministic{}, clove_reduce_deterministic.
 *   scope, spawn      clove_scope_run / clove_spawn; closures stored in
 *                     per-worker arenas, not one heap allocation per spawn.
 *   sort              a stable parallel mergesort on t.join (clove_sort's
 *                     comparator has no context pointer; see below).
 *
 * Callables. Wherever a callable receives "the task", it may be declared
 * as f(clove::task), f(clove::task&), f(clove_task *) or f() (detected in
 * that order). A callable that runs on another worker receives *that*
 * worker's task: always use the task you receive, never a captured one.
 *
 * Exceptions never unwind through the library's C frames: every
 * trampoline catches, stores a std::exception_ptr and the C++ side rethrows
 * once the C call has returned, that is after all parallel parts have
 * finished. Without exceptions (-fno-exceptions) the same code compiles
 * without the try/catch. The one exception is the unwinding of a cancelled
 * or exiting thread (glibc's abi::__forced_unwind), which is always
 * rethrown, never stored (see CLOVE__PASS_FOREIGN below).
 *
 * See docs/api.md, section "C++", for the full contract.
 */
#ifndef CLOVE_HPP
#define CLOVE_HPP

/* MSVC keeps __cplusplus at 199711L unless /Zc:__cplusplus; _MSVC_LANG
 * has the real standard. */
#if defined(_MSVC_LANG) && _MSVC_LANG > __cplusplus
#define CLOVE__CPLUSPLUS _MSVC_LANG
#else
#define CLOVE__CPLUSPLUS __cplusplus
#endif
#if CLOVE__CPLUSPLUS < 201703L
#error "clove.hpp needs C++17 or later (-std=c++17, /std:c++17); from older C++, include <clove.h>, the C interface"
#else

#include <clove.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <exception>
#include <functional>
#include <iterator>
#include <memory>
#include <new>
#include <system_error>
#include <type_traits>
#include <utility>

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
#define CLOVE__CXX_EXCEPTIONS 1
#define CLOVE__TRY try
#define CLOVE__CATCH_ALL catch (...)
#define CLOVE__CATCH_ANY catch (...)
/* First in every catch-all that stores or drops what it caught: a C++
 * exception is kept (std::exception_ptr) and rethrown later, anything else
 * is rethrown at once, never stored or swallowed. That is the unwinding of
 * a thread that is cancelled or exits (pthread_cancel, pthread_exit: glibc
 * aborts with "FATAL: exception not rethrown" when it is swallowed), or
 * another language's exception; std::current_exception() is null for
 * both. */
#define CLOVE__PASS_FOREIGN \
    if (!std::current_exception()) \
        throw;
/* So the trampolines that the C library calls are not noexcept: what
 * CLOVE__PASS_FOREIGN rethrows leaves them, passes through the library's
 * frames (built with unwind tables) and clove_pool_run's cleanup (pool.c),
 * which finishes what the thread's run had handed out. */
#define CLOVE__TRAMPOLINE_NOEXCEPT
#else
#define CLOVE__CXX_EXCEPTIONS 0
#define CLOVE__TRY if (true)
#define CLOVE__CATCH_ALL else
#define CLOVE__CATCH_ANY else
#define CLOVE__PASS_FOREIGN
#define CLOVE__TRAMPOLINE_NOEXCEPT noexcept
#endif

namespace clove {

class task;
class scope_ref;

/* Stands for the result of a join side that returns void. */
struct unit {
    friend constexpr bool operator==(unit, unit) noexcept { return true; }
    friend constexpr bool operator!=(unit, unit) noexcept { return false; }
};

namespace detail {

template <class> inline constexpr bool always_false = false;

[[noreturn]] inline void throw_errno(int err, const char *what)
{
#if CLOVE__CXX_EXCEPTIONS
    throw std::system_error(err, std::generic_category(), what);
#else
    (void)err;
    (void)what;
    std::abort();
#endif
}

/* ---- calling a user callable with a task --------------------------------- */

template <class F> constexpr int task_call_kind()
{
    if constexpr (std::is_invocable_v<F &, task &>)
        return 1;
    else if constexpr (std::is_invocable_v<F &, clove_task *>)
        return 2;
    else if constexpr (std::is_invocable_v<F &>)
        return 3;
    else
        return 0;
}

template <class F> decltype(auto) call_task(F &f, task &t);

template <class F>
using task_result_t = decltype(call_task(std::declval<F &>(), std::declval<task &>()));

/* ---- result storage ------------------------------------------------------- */

/* raw_slot<R>: room for one R (void, a reference or any object type,
 * move-only or not) whose lifetime is managed by hand. */
template <class R> struct raw_slot {
    using T = std::remove_cv_t<R>;
    union {
        T v;
    };
    raw_slot() noexcept {}
    ~raw_slot() {}
    raw_slot(const raw_slot &) = delete;
    raw_slot &operator=(const raw_slot &) = delete;
    template <class F> void emplace_call(F &f, task &t)
    {
        ::new (static_cast<void *>(std::addressof(v))) T(call_task(f, t));
    }
    void emplace_from(raw_slot &o) { ::new (static_cast<void *>(std::addressof(v))) T(std::move(o.v)); }
    R take() { return std::move(v); }
    void destroy() noexcept { v.~T(); }
};
template <> struct raw_slot<void> {
    template <class F> void emplace_call(F &f, task &t) { call_task(f, t); }
    void emplace_from(raw_slot &) noexcept {}
    unit take() noexcept { return unit{}; }
    void destroy() noexcept {}
};
template <class R> struct raw_slot<R &> {
    R *p;
    template <class F> void emplace_call(F &f, task &t) { p = std::addressof(call_task(f, t)); }
    void emplace_from(raw_slot &o) noexcept { p = o.p; }
    R &take() noexcept { return *p; }
    void destroy() noexcept {}
};
template <class R> struct raw_slot<R &&> {
    R *p;
    template <class F> void emplace_call(F &f, task &t)
    {
        R &&r = call_task(f, t);
        p = std::addressof(r);
    }
    void emplace_from(raw_slot &o) noexcept { p = o.p; }
    R &&take() noexcept { return static_cast<R &&>(*p); }
    void destroy() noexcept {}
};

/* slot<R>: a raw_slot that remembers whether it holds a value. */
template <class R> struct slot : raw_slot<R> {
    bool full = false;
    slot() noexcept {}
    ~slot()
    {
        if (full)
            this->destroy();
    }
    template <class F> void fill(F &f, task &t)
    {
        this->emplace_call(f, t);
        full = true;
    }
    void fill_from(raw_slot<R> &o)
    {
        this->emplace_from(o);
        full = true;
    }
};

template <class R> using join_value_t = std::conditional_t<std::is_void_v<R>, unit, R>;

/* ---- the first exception of a parallel construct -------------------------- */

/* Shared by every part of one parallel_for / reduce / scope: the first
 * part to throw (in time) stores its exception; later parts see failed()
 * and skip their work. Read by the caller only after the C call returned,
 * which the library orders after every part. */
struct error_box {
    std::atomic<bool> flag{false};
    std::exception_ptr first;
    clove_cancel *token = nullptr; /* a construct's clove::cancel, if any */
    /* Whether the remaining work is to be skipped: an exception was
     * thrown, or the token was requested. */
    bool failed() const noexcept
    {
        return flag.load(std::memory_order_relaxed) || (token && clove_cancelled(token));
    }
    void record() noexcept
    {
#if CLOVE__CXX_EXCEPTIONS
        if (!flag.exchange(true, std::memory_order_acq_rel))
            first = std::current_exception();
        /* An exception cancels what shares the token, too. */
        if (token)
            clove_cancel_request(token);
#endif
    }
    void rethrow_if_any()
    {
        if (first)
            std::rethrow_exception(first);
    }
};

/* ---- join ----------------------------------------------------------------- */

/* The forked side of a join, in the joining frame. Nothing in it is
 * constructed unless the side actually ran on another worker (the
 * trampoline below), so the not-taken path touches only g. */
/* Whether the forked side is kept by value in its frame: a small,
 * trivially copyable callable that can be called as const (a lambda with
 * a few captures, not `mutable`). Copying it costs a store or two, and
 * then g itself never has its address taken, so the compiler keeps it in
 * registers for the not-taken path - which is then the C idiom's code.
 * Anything else is kept by pointer and called in place. */
template <class G>
constexpr bool side_by_value() noexcept
{
    if constexpr (std::is_trivially_copyable_v<G> && sizeof(G) <= 2 * sizeof(void *) &&
                  task_call_kind<const G>() != 0)
        return std::is_same_v<task_result_t<const G>, task_result_t<G>>;
    else
        return false;
}

template <class G> struct fork_frame {
    using R = task_result_t<G>;
    static constexpr bool by_value = side_by_value<G>();
    std::conditional_t<by_value, std::remove_const_t<G>, G *> g;
    bool failed;
    union {
        raw_slot<R> r;
        std::exception_ptr e;
    };
    explicit fork_frame(G *g_) noexcept : g(hold(g_)) {}
    ~fork_frame() {}
    static decltype(auto) hold(G *g_) noexcept
    {
        if constexpr (by_value)
            return std::remove_const_t<G>(*g_);
        else
            return g_;
    }
    /* The callable to run g with, on the worker that took it (or here,
     * after f threw). */
    auto &side() noexcept
    {
        if constexpr (by_value)
            return g;
        else
            return *g;
    }
    /* After a join that found g run elsewhere without throwing: move its
     * result into out (a throw goes to detail::rethrow_taken instead). */
    void settle(slot<R> &out)
    {
        out.fill_from(r);
        r.destroy();
    }
    [[noreturn]] void rethrow_taken()
    {
        std::exception_ptr x = std::move(e);
        e.~exception_ptr();
        std::rethrow_exception(std::move(x));
    }
    /* Release whatever the trampoline left (g's result or exception). */
    void discard_taken() noexcept
    {
        if (!failed)
            r.destroy();
        else
            e.~exception_ptr();
    }
};

template <class G> void fork_trampoline(clove_task *t, void *p) CLOVE__TRAMPOLINE_NOEXCEPT;

/* A join's future and g's side, in one object: the cold paths that need
 * both (f threw; g threw elsewhere) get one address, so the joining frame
 * keeps one callee-saved register for them instead of two. That register
 * is most of what t.join cost over the C idiom: with it, the tree sum
 * costs the same instructions per node as in C. */
template <class G> struct join_frame {
    clove_future fut;
    fork_frame<G> fb;
    explicit join_frame(G *g) noexcept : fb(g) {}
};

/* The cold part of task::join when f threw: join g, skipping it if
 * nobody took it (the exception cancels it), else dropping its result or
 * exception. */
template <class G>
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline, cold))
#endif
void finish_after_throw(task self, join_frame<G> &jf) CLOVE__TRAMPOLINE_NOEXCEPT;

/* g threw on another worker: rethrow that exception here. */
template <class G>
[[noreturn]]
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline, cold))
#endif
void rethrow_taken(join_frame<G> &jf)
{
    jf.fb.rethrow_taken();
}

} // namespace detail

/* ------------------------------------------------------------------------ */
/* task                                                                      */
/* ------------------------------------------------------------------------ */

/* One worker's context: a clove_task pointer. Cheap to copy; pass it by
 * value. Valid only during the call that received it (clove.h). */
class task {
public:
    explicit task(clove_task *t) noexcept : t_(t) {}
    clove_task *get() const noexcept { return t_; }
    operator clove_task *() const noexcept { return t_; } /* for the C API */
    unsigned worker_index() const noexcept { return clove_worker_index(t_); }
    void tick() const noexcept { clove_tick(t_); }

    /* Run f and g, possibly in parallel (g is forked, f runs here; if
     * nobody took g, it runs here after f). Returns void when both return
     * void, otherwise a std::pair of their results, a void side giving
     * clove::unit. If f throws, g is cancelled: skipped if it had not
     * started (nobody took it), waited for if it runs elsewhere; then f's
     * exception goes on. If g throws, it is rethrown after f finished; if
     * both throw, f's. */
    template <class F, class G> auto join(F &&f, G &&g) const;

private:
    clove_task *t_;
};

namespace detail {

template <class F> decltype(auto) call_task(F &f, task &t)
{
    constexpr int kind = task_call_kind<F>();
    static_assert(kind != 0, "clove: the callable must accept (clove::task), "
                             "(clove::task&), (clove_task*) or no argument");
    if constexpr (kind == 1)
        return std::invoke(f, t);
    else if constexpr (kind == 2)
        return std::invoke(f, t.get());
    else if constexpr (kind == 3)
        return std::invoke(f);
}

template <class G> void fork_trampoline(clove_task *t, void *p) CLOVE__TRAMPOLINE_NOEXCEPT
{
    auto *fr = static_cast<fork_frame<G> *>(p);
    task tk(t);
    CLOVE__TRY
    {
        fr->r.emplace_call(fr->side(), tk);
        fr->failed = false;
    }
    CLOVE__CATCH_ALL
    {
        CLOVE__PASS_FOREIGN
#if CLOVE__CXX_EXCEPTIONS
        ::new (static_cast<void *>(&fr->e)) std::exception_ptr(std::current_exception());
        fr->failed = true;
#endif
    }
}

template <class G> void finish_after_throw(task self, join_frame<G> &jf) CLOVE__TRAMPOLINE_NOEXCEPT
{
    /* g ran (or runs) elsewhere: wait for it and drop what it left. If
     * nobody took it, it never started: it is cancelled, not run. */
    if (clove_join(self.get(), &jf.fut))
        jf.fb.discard_taken();
}

} // namespace detail

template <class F, class G> auto task::join(F &&f, G &&g) const
{
    using FF = std::remove_reference_t<F>;
    using GG = std::remove_reference_t<G>;
    using RA = detail::task_result_t<FF>;
    using RB = detail::task_result_t<GG>;

    task self(t_); /* what f and an untaken g receive */
    detail::join_frame<GG> jf(std::addressof(g));
    clove_fork(t_, &jf.fut, &detail::fork_trampoline<GG>, &jf.fb);

    detail::slot<RA> ra;
    CLOVE__TRY { ra.fill(f, self); }
    CLOVE__CATCH_ALL
    {
        /* f threw, or the thread is being cancelled or exits inside it
         * (glibc's forced unwind, which must be rethrown, never stored):
         * cancel g (skipped if not started, else waited for, since it may
         * use what the frames being unwound hold; its own exception, if
         * any, is dropped: f's wins), then let the unwinding go on. Cold,
         * out of line. */
        detail::finish_after_throw(self, jf);
#if CLOVE__CXX_EXCEPTIONS
        throw;
#endif
    }

    detail::slot<RB> rb;
    if (!clove_join(t_, &jf.fut))
        rb.fill(g, self); /* nobody took g: an ordinary call; if it throws,
                           * f has finished already, so it just propagates */
    else if (!jf.fb.failed)
        jf.fb.settle(rb); /* g ran elsewhere: its result */
    else
        detail::rethrow_taken(jf); /* ... or the exception it threw */
    if constexpr (std::is_void_v<RA> && std::is_void_v<RB>) {
        return;
    } else {
        return std::pair<detail::join_value_t<RA>, detail::join_value_t<RB>>(ra.take(),
                                                                              rb.take());
    }
}

/* The same as t.join(f, g). */
template <class F, class G> auto join(task t, F &&f, G &&g)
{
    return t.join(std::forward<F>(f), std::forward<G>(g));
}

/* ------------------------------------------------------------------------ */
/* pool                                                                      */
/* ------------------------------------------------------------------------ */

namespace detail {
template <class F> struct run_frame {
    using R = task_result_t<F>;
    F *f;
    slot<R> r;
    std::exception_ptr e;
};
template <class F> void run_trampoline(clove_task *t, void *p) CLOVE__TRAMPOLINE_NOEXCEPT
{
    auto *fr = static_cast<run_frame<F> *>(p);
    task tk(t);
    CLOVE__TRY { fr->r.fill(*fr->f, tk); }
    CLOVE__CATCH_ALL
    {
        CLOVE__PASS_FOREIGN
#if CLOVE__CXX_EXCEPTIONS
        fr->e = std::current_exception();
#endif
    }
}
/* f(task) through enter (clove_pool_run or clove_run): f's result, or
 * its exception rethrown; enter's error as std::system_error(what). */
template <class F, class Enter> decltype(auto) run_with(F &f, const char *what, Enter enter)
{
    using R = task_result_t<F>;
    run_frame<F> fr{std::addressof(f), {}, {}};
    int rc = enter(&run_trampoline<F>, static_cast<void *>(&fr));
    if (rc != 0)
        throw_errno(rc, what);
    if (fr.e)
        std::rethrow_exception(fr.e);
    if constexpr (std::is_reference_v<R>)
        return static_cast<R>(fr.r.take());
    else if constexpr (!std::is_void_v<R>)
        return std::remove_cv_t<R>(fr.r.take());
}
} // namespace detail

/* Owns a clove_pool. Non-copyable, movable (a moved-from pool is empty:
 * run throws EINVAL, destruction does nothing). */
class pool {
public:
    /* All defaults (threads: $CLOVE_THREADS or the CPUs we may use). */
    pool() : pool(clove_config{}) {}
    /* threads workers including the caller (0 = default). */
    explicit pool(unsigned threads) : pool(make_config(threads)) {}
    /* Throws std::system_error whose code().value() is the errno value
     * clove_pool_create returned (EINVAL, ENOMEM, EAGAIN). */
    explicit pool(const clove_config &config)
    {
        int rc = clove_pool_create(&p_, &config);
        if (rc != 0)
            detail::throw_errno(rc, "clove_pool_create");
    }
    ~pool() { clove_pool_destroy(p_); }
    pool(const pool &) = delete;
    pool &operator=(const pool &) = delete;
    pool(pool &&o) noexcept : p_(o.p_) { o.p_ = nullptr; }
    pool &operator=(pool &&o) noexcept
    {
        if (this != &o) {
            clove_pool_destroy(p_);
            p_ = o.p_;
            o.p_ = nullptr;
        }
        return *this;
    }

    clove_pool *get() const noexcept { return p_; }
    explicit operator bool() const noexcept { return p_ != nullptr; }
    unsigned threads() const noexcept { return p_ ? clove_pool_threads(p_) : 0; }

    /* clove_pool_run: f(task) on the calling thread, which works for the
     * pool until f returns. Returns f's result; rethrows f's exception. */
    template <class F> decltype(auto) run(F &&f)
    {
        clove_pool *p = p_;
        return detail::run_with(f, "clove_pool_run", [p](clove_fn *fn, void *arg) {
            return clove_pool_run(p, fn, arg);
        });
    }

private:
    static clove_config make_config(unsigned threads) noexcept
    {
        clove_config c{};
        c.threads = threads;
        return c;
    }
    clove_pool *p_ = nullptr;
};

/* A cancellation token (clove_cancel): request() from anywhere;
 * parallel_for and scope given one start no more work once it is
 * requested, and running code polls requested() (one relaxed load).
 * Non-copyable: constructs keep its address. */
class cancel {
public:
    cancel() noexcept { clove_cancel_init(&c_); }
    cancel(const cancel &) = delete;
    cancel &operator=(const cancel &) = delete;
    void request() noexcept { clove_cancel_request(&c_); }
    bool requested() const noexcept { return clove_cancelled(&c_); }
    clove_cancel *get() noexcept { return &c_; }

private:
    clove_cancel c_;
};

/* clove_run: f(task) on the process's default pool (created at first use,
 * destroyed at exit), or on the calling thread's task if it already runs
 * one. Returns f's result; rethrows f's exception; throws
 * std::system_error if the default pool cannot be created. */
template <class F> decltype(auto) run(F &&f)
{
    return detail::run_with(f, "clove_run", [](clove_fn *fn, void *arg) {
        return clove_run(fn, arg);
    });
}

/* clove_current(): the calling thread's task inside a run; outside any
 * run a task whose get() is nullptr (it converts to a null clove_task *,
 * so `if (clove::current())` tells). One thread-local load. */
inline task current() noexcept
{
    return task(clove_current());
}

/* ------------------------------------------------------------------------ */
/* parallel_for                                                              */
/* ------------------------------------------------------------------------ */

namespace detail {

template <class B> constexpr int for_body_kind()
{
    if constexpr (std::is_invocable_v<B &, task &, std::size_t, std::size_t>)
        return 1; /* (task, lo, hi) */
    else if constexpr (std::is_invocable_v<B &, std::size_t, std::size_t>)
        return 2; /* (lo, hi) */
    else if constexpr (std::is_invocable_v<B &, task &, std::size_t>)
        return 3; /* (task, i) */
    else if constexpr (std::is_invocable_v<B &, std::size_t>)
        return 4; /* (i) */
    else
        return 0;
}

template <class B> struct for_frame {
    B *body;
    error_box err;
};

template <class B> void for_trampoline(clove_task *t, std::size_t lo, std::size_t hi, void *p) CLOVE__TRAMPOLINE_NOEXCEPT
{
    auto *fr = static_cast<for_frame<B> *>(p);
    if (fr->err.failed())
        return;
    task tk(t);
    B &body = *fr->body;
    constexpr int kind = for_body_kind<B>();
    CLOVE__TRY
    {
        if constexpr (kind == 1)
            std::invoke(body, tk, lo, hi);
        else if constexpr (kind == 2)
            std::invoke(body, lo, hi);
        else if constexpr (kind == 3)
            for (std::size_t i = lo; i < hi; i++)
                std::invoke(body, tk, i);
        else
            for (std::size_t i = lo; i < hi; i++)
                std::invoke(body, i);
    }
    CLOVE__CATCH_ALL { CLOVE__PASS_FOREIGN fr->err.record(); }
}

} // namespace detail

/* clove_for over [begin, end). body is one of (detected in this order)
 *   body(task, lo, hi)   body(lo, hi)   body(task, i)   body(i)
 * with size_t indices. If a body throws, the first exception (in time) is
 * rethrown when the loop has finished; after it, chunks that have not
 * started are skipped, and a per-index body stops at the throwing
 * iteration, but chunks already running on other workers run to their end.
 * So every iteration runs at most once, and which ones ran is unspecified. */
template <class Body> void parallel_for(task t, std::size_t begin, std::size_t end, Body &&body)
{
    using B = std::remove_reference_t<Body>;
    static_assert(detail::for_body_kind<B>() != 0,
                  "clove::parallel_for: body must accept (task, lo, hi), (lo, hi), "
                  "(task, i) or (i) with std::size_t indices");
    detail::for_frame<B> fr{std::addressof(body), {}};
    clove_for(t.get(), begin, end, &detail::for_trampoline<B>, &fr);
    fr.err.rethrow_if_any();
}

/* The same with a token (clove_for_cancel): once c is requested (by a
 * body, or anyone), no chunk starts; a body may poll c.requested() to
 * stop its own. An exception in a body requests c as well. Returns true
 * when every iteration ran, false when c was requested (each iteration
 * ran at most once); rethrows the first exception as parallel_for does. */
template <class Body>
bool parallel_for(task t, std::size_t begin, std::size_t end, Body &&body, cancel &c)
{
    using B = std::remove_reference_t<Body>;
    static_assert(detail::for_body_kind<B>() != 0,
                  "clove::parallel_for: body must accept (task, lo, hi), (lo, hi), "
                  "(task, i) or (i) with std::size_t indices");
    detail::for_frame<B> fr{std::addressof(body), {}};
    fr.err.token = c.get();
    int rc = clove_for_cancel(t.get(), begin, end, &detail::for_trampoline<B>, &fr, c.get());
    fr.err.rethrow_if_any();
    return rc == 0;
}

/* ------------------------------------------------------------------------ */
/* reduce                                                                    */
/* ------------------------------------------------------------------------ */

namespace detail {

/* An accumulator as clove_reduce sees it: the T itself lives in clove's
 * buffer (constructed by init with placement new, destroyed by combine),
 * or, for a T over-aligned beyond max_align_t, on the heap. */
template <class T, bool Inline = (alignof(T) <= alignof(std::max_align_t))> struct acc_box {
    alignas(T) unsigned char buf[sizeof(T)];
    bool alive;
    T &get() noexcept { return *std::launder(reinterpret_cast<T *>(buf)); }
    void make(const T &x)
    {
        ::new (static_cast<void *>(buf)) T(x);
        alive = true;
    }
    void kill() noexcept
    {
        get().~T();
        alive = false;
    }
};
template <class T> struct acc_box<T, false> {
    T *p;
    bool alive;
    T &get() noexcept { return *p; }
    void make(const T &x)
    {
        p = new T(x);
        alive = true;
    }
    void kill() noexcept
    {
        delete p;
        alive = false;
    }
};

template <class T, class Fold> constexpr int fold_kind()
{
    if constexpr (std::is_invocable_v<Fold &, T &, std::size_t, std::size_t>)
        return 1; /* fold(acc&, lo, hi) */
    else if constexpr (std::is_invocable_v<Fold &, T &&, std::size_t>) {
        if constexpr (!std::is_void_v<std::invoke_result_t<Fold &, T &&, std::size_t>>)
            return 2; /* acc = fold(move(acc), i) */
        else if constexpr (std::is_invocable_v<Fold &, T &, std::size_t>)
            return 3;
        else
            return 0;
    } else if constexpr (std::is_invocable_v<Fold &, T &, std::size_t>)
        return 3; /* fold(acc&, i) */
    else
        return 0;
}

template <class T, class Combine> constexpr int combine_kind()
{
    if constexpr (std::is_invocable_v<Combine &, T &&, T &&>) {
        if constexpr (!std::is_void_v<std::invoke_result_t<Combine &, T &&, T &&>>)
            return 1; /* left = combine(move(left), move(right)) */
        else
            return 2;
    } else if constexpr (std::is_invocable_v<Combine &, T &, T &&>)
        return 2; /* combine(left&, move(right)) */
    else if constexpr (std::is_invocable_v<Combine &, T &, T &>)
        return 3; /* combine(left&, right&) */
    else
        return 0;
}

template <class T, class Fold, class Combine> struct reduce_frame {
    const T *identity;
    Fold *fold;
    Combine *combine;
    error_box err;
};

template <class T, class Fold, class Combine> void reduce_init(void *acc, void *ctx) CLOVE__TRAMPOLINE_NOEXCEPT
{
    auto *fr = static_cast<reduce_frame<T, Fold, Combine> *>(ctx);
    auto *box = static_cast<acc_box<T> *>(acc);
    box->alive = false;
    if (fr->err.failed())
        return;
    CLOVE__TRY { box->make(*fr->identity); }
    CLOVE__CATCH_ALL { CLOVE__PASS_FOREIGN fr->err.record(); }
}

template <class T, class Fold, class Combine>
void reduce_body(clove_task *, std::size_t lo, std::size_t hi, void *acc, void *ctx) CLOVE__TRAMPOLINE_NOEXCEPT
{
    auto *fr = static_cast<reduce_frame<T, Fold, Combine> *>(ctx);
    auto *box = static_cast<acc_box<T> *>(acc);
    if (!box->alive || fr->err.failed())
        return;
    T &a = box->get();
    Fold &fold = *fr->fold;
    constexpr int kind = fold_kind<T, Fold>();
    CLOVE__TRY
    {
        if constexpr (kind == 1)
            std::invoke(fold, a, lo, hi);
        else if constexpr (kind == 2)
            for (std::size_t i = lo; i < hi; i++)
                a = std::invoke(fold, std::move(a), i);
        else
            for (std::size_t i = lo; i < hi; i++)
                std::invoke(fold, a, i);
    }
    CLOVE__CATCH_ALL { CLOVE__PASS_FOREIGN fr->err.record(); }
}

template <class T, class Fold, class Combine> void reduce_combine(void *left, void *right, void *ctx) CLOVE__TRAMPOLINE_NOEXCEPT
{
    auto *fr = static_cast<reduce_frame<T, Fold, Combine> *>(ctx);
    auto *l = static_cast<acc_box<T> *>(left);
    auto *r = static_cast<acc_box<T> *>(right);
    if (!r->alive)
        return;
    if (l->alive && !fr->err.failed()) {
        Combine &combine = *fr->combine;
        constexpr int kind = combine_kind<T, Combine>();
        CLOVE__TRY
        {
            if constexpr (kind == 1)
                l->get() = std::invoke(combine, std::move(l->get()), std::move(r->get()));
            else if constexpr (kind == 2)
                std::invoke(combine, l->get(), std::move(r->get()));
            else
                std::invoke(combine, l->get(), r->get());
        }
        CLOVE__CATCH_ALL { CLOVE__PASS_FOREIGN fr->err.record(); }
    }
    r->kill();
}

template <class T> struct acc_guard {
    acc_box<T> &box;
    ~acc_guard()
    {
        if (box.alive)
            box.kill();
    }
};

} // namespace detail

/* The option of reduce that makes it clove_reduce_deterministic: the
 * result depends on the range and grain only, never on the thread count
 * or the timing. grain 0: at most 4096 blocks of at least 2048 iterations
 * (clove.h). */
struct deterministic {
    std::size_t grain = 0;
};

namespace detail {

template <class T, class Fold, class Combine>
T reduce_impl(task t, std::size_t begin, std::size_t end, T &identity, Fold &fold,
              Combine &combine, const deterministic *det)
{
    static_assert(detail::fold_kind<T, Fold>() != 0,
                  "clove::reduce: fold must accept (T&, lo, hi), (T&&, i) returning T, "
                  "or (T&, i)");
    static_assert(detail::combine_kind<T, Combine>() != 0,
                  "clove::reduce: combine must accept (T&&, T&&) returning T, "
                  "(T&, T&&) or (T&, T&)");
    static_assert(std::is_copy_constructible_v<T>, "clove::reduce: T must be copy-constructible");
    detail::reduce_frame<T, Fold, Combine> fr{&identity, std::addressof(fold),
                                              std::addressof(combine), {}};
    detail::acc_box<T> root;
    root.alive = false;
    root.make(identity);
    detail::acc_guard<T> guard{root};
    int rc = det ? clove_reduce_deterministic(t.get(), begin, end, det->grain, &root,
                                              sizeof root, &detail::reduce_init<T, Fold, Combine>,
                                              &detail::reduce_body<T, Fold, Combine>,
                                              &detail::reduce_combine<T, Fold, Combine>, &fr)
                 : clove_reduce(t.get(), begin, end, &root, sizeof root,
                                &detail::reduce_init<T, Fold, Combine>,
                                &detail::reduce_body<T, Fold, Combine>,
                                &detail::reduce_combine<T, Fold, Combine>, &fr);
    if (rc != 0)
        detail::throw_errno(rc, det ? "clove_reduce_deterministic" : "clove_reduce");
    fr.err.rethrow_if_any();
    return std::move(root.get());
}

} // namespace detail

/* clove_reduce over [begin, end) in index order; returns the result.
 * identity: copied into every fresh accumulator (T must be copy-
 *           constructible; it is the starting value too).
 * fold:     fold(acc&, lo, hi), or acc = fold(std::move(acc), i), or
 *           fold(acc&, i) (detected in this order).
 * combine:  left = combine(std::move(left), std::move(right)), or
 *           combine(left&, std::move(right)), or combine(left&, right&).
 * Pieces are combined left to right, so combine need only be associative.
 * Accumulators are real T objects: constructed (placement new) in clove's
 * accumulator buffer when another worker takes a piece, destroyed after
 * being combined. If fold, combine or a copy of identity throws, the first
 * exception is rethrown when the loop has finished (later chunks are
 * skipped; every accumulator is destroyed). */
template <class T, class Fold, class Combine>
T reduce(task t, std::size_t begin, std::size_t end, T identity, Fold &&fold, Combine &&combine)
{
    return detail::reduce_impl<T, std::remove_reference_t<Fold>, std::remove_reference_t<Combine>>(
        t, begin, end, identity, fold, combine, nullptr);
}

/* The same with clove_reduce_deterministic (pass clove::deterministic{} or
 * clove::deterministic{grain}): the same result, bit for bit, on any
 * number of threads; fold and combine see the same pieces every run.
 * Throws std::system_error(ENOMEM) when clove cannot allocate the
 * accumulators of a T over 64 bytes (nothing has run then). */
template <class T, class Fold, class Combine>
T reduce(task t, std::size_t begin, std::size_t end, T identity, Fold &&fold, Combine &&combine,
         deterministic det)
{
    return detail::reduce_impl<T, std::remove_reference_t<Fold>, std::remove_reference_t<Combine>>(
        t, begin, end, identity, fold, combine, &det);
}

/* ------------------------------------------------------------------------ */
/* scope / spawn                                                             */
/* ------------------------------------------------------------------------ */

namespace detail {

/* Spawned closures must outlive the function that spawned them (clove
 * runs them after it returns) but not the outermost scope() call. They are
 * bump-allocated in arenas owned by that call, one arena per worker index
 * (an index is used by one task at a time, so no lock), and freed when the
 * scope ends. Each closure is destroyed right after it ran. */
struct alignas(std::max_align_t) arena_chunk {
    arena_chunk *next;
    std::size_t size; /* bytes after the header */
    std::size_t used;
    bool heap;
    unsigned char *data() noexcept { return reinterpret_cast<unsigned char *>(this + 1); }
};

struct scope_state {
    static constexpr unsigned slots = 64;
    static constexpr std::size_t inline_bytes = 512;
    static constexpr std::size_t first_chunk = 4096;
    static constexpr std::size_t max_chunk = std::size_t(1) << 20;

    error_box err;
    arena_chunk *arena[slots] = {};
    alignas(std::max_align_t) unsigned char inline_buf[sizeof(arena_chunk) + inline_bytes];

    explicit scope_state(unsigned caller_index) noexcept
    {
        if (caller_index < slots) {
            auto *c = ::new (static_cast<void *>(inline_buf)) arena_chunk{nullptr, inline_bytes, 0, false};
            arena[caller_index] = c;
        }
    }
    scope_state(const scope_state &) = delete;
    scope_state &operator=(const scope_state &) = delete;
    ~scope_state()
    {
        for (arena_chunk *head : arena)
            while (head) {
                arena_chunk *next = head->next;
                if (head->heap)
                    ::operator delete(static_cast<void *>(head));
                head = next;
            }
    }

    /* size bytes aligned to align (<= max_align_t) from worker idx's arena. */
    void *alloc(unsigned idx, std::size_t size, std::size_t align)
    {
        arena_chunk *c = arena[idx];
        if (c) {
            std::size_t at = (c->used + align - 1) & ~(align - 1);
            if (at <= c->size && size <= c->size - at) {
                c->used = at + size;
                return c->data() + at;
            }
        }
        std::size_t want = c ? (c->size < max_chunk ? c->size * 2 : c->size) : first_chunk;
        if (want < size)
            want = size;
        void *mem = ::operator new(sizeof(arena_chunk) + want);
        auto *n = ::new (mem) arena_chunk{c, want, size, true};
        arena[idx] = n;
        return n->data();
    }
};

template <class F> constexpr int spawn_call_kind()
{
    if constexpr (std::is_invocable_v<F &, scope_ref &>)
        return 1;
    else if constexpr (std::is_invocable_v<F &, task &, scope_ref &>)
        return 2;
    else if constexpr (std::is_invocable_v<F &, task &>)
        return 3;
    else if constexpr (std::is_invocable_v<F &>)
        return 4;
    else
        return 0;
}

template <class F> void call_spawned(F &f, scope_ref &s);

template <class D> struct spawn_rec {
    scope_state *st;
    D fn;
};

template <class D, bool Heap> void spawn_job(clove_task *t, clove_scope *s, void *p) CLOVE__TRAMPOLINE_NOEXCEPT;

template <class F> struct scope_top {
    scope_state *st;
    F *f;
};
template <class F> void scope_top_fn(clove_task *t, clove_scope *s, void *p) CLOVE__TRAMPOLINE_NOEXCEPT;

} // namespace detail

/* What a scope function and every spawned job receive: their task and
 * their own clove_scope. Use only the scope_ref you received, and only
 * during that call. */
class scope_ref {
public:
    clove::task get_task() const noexcept { return clove::task(t_); }
    clove_scope *get() const noexcept { return s_; }

    /* Spawn f into this scope: it runs exactly once, on some worker, after
     * the function that received this scope_ref has returned, and before
     * the outermost clove::scope returns. f is decay-copied (moved from an
     * rvalue) into the scope's arena: capture by value what the spawning
     * function owns (its locals are gone when f runs). f may be declared
     * as f(scope_ref&), f(task, scope_ref&), f(task) or f(). */
    template <class F> void spawn(F &&f)
    {
        using D = std::decay_t<F>;
        using Rec = detail::spawn_rec<D>;
        static_assert(detail::spawn_call_kind<D>() != 0,
                      "clove::scope_ref::spawn: the job must accept (scope_ref&), "
                      "(task, scope_ref&), (task) or no argument");
        unsigned idx = clove_worker_index(t_);
        if (idx < detail::scope_state::slots && alignof(Rec) <= alignof(std::max_align_t)) {
            void *mem = st_->alloc(idx, sizeof(Rec), alignof(Rec));
            ::new (mem) Rec{st_, std::forward<F>(f)};
            clove_spawn(t_, s_, &detail::spawn_job<D, false>, mem);
        } else {
            /* More than 64 workers, or an over-aligned closure: one heap
             * allocation for this spawn, freed by the job. */
            Rec *r = new Rec{st_, std::forward<F>(f)};
            clove_spawn(t_, s_, &detail::spawn_job<D, true>, r);
        }
    }

private:
    template <class D, bool Heap> friend void detail::spawn_job(clove_task *, clove_scope *, void *) CLOVE__TRAMPOLINE_NOEXCEPT;
    template <class F> friend void detail::scope_top_fn(clove_task *, clove_scope *, void *) CLOVE__TRAMPOLINE_NOEXCEPT;
    scope_ref(clove_task *t, clove_scope *s, detail::scope_state *st) noexcept : t_(t), s_(s), st_(st) {}
    clove_task *t_;
    clove_scope *s_;
    detail::scope_state *st_;
};

namespace detail {

template <class F> void call_spawned(F &f, scope_ref &s)
{
    constexpr int kind = spawn_call_kind<F>();
    if constexpr (kind == 1) {
        std::invoke(f, s);
    } else if constexpr (kind == 2) {
        task t = s.get_task();
        std::invoke(f, t, s);
    } else if constexpr (kind == 3) {
        task t = s.get_task();
        std::invoke(f, t);
    } else {
        std::invoke(f);
    }
}

template <class D, bool Heap> void spawn_job(clove_task *t, clove_scope *s, void *p) CLOVE__TRAMPOLINE_NOEXCEPT
{
    auto *rec = static_cast<spawn_rec<D> *>(p);
    scope_state *st = rec->st;
    if (!st->err.failed()) {
        scope_ref ref(t, s, st);
        CLOVE__TRY { call_spawned(rec->fn, ref); }
        CLOVE__CATCH_ALL { CLOVE__PASS_FOREIGN st->err.record(); }
    }
    if constexpr (Heap)
        delete rec;
    else
        rec->~spawn_rec<D>();
}

template <class F> void scope_top_fn(clove_task *t, clove_scope *s, void *p) CLOVE__TRAMPOLINE_NOEXCEPT
{
    auto *top = static_cast<scope_top<F> *>(p);
    scope_ref ref(t, s, top->st);
    CLOVE__TRY { call_spawned(*top->f, ref); }
    CLOVE__CATCH_ALL { CLOVE__PASS_FOREIGN top->st->err.record(); }
}

} // namespace detail

/* clove_scope_run: f(scope_ref&) (or the other forms spawn accepts) runs
 * here; it and every job spawned in the scope, transitively, have finished
 * when scope returns. The first exception thrown by f or by any job is
 * rethrown then; jobs that had not started when it was thrown are skipped
 * (their closures are destroyed without being called). */
template <class F> void scope(task t, F &&f)
{
    using FF = std::remove_reference_t<F>;
    static_assert(detail::spawn_call_kind<FF>() != 0,
                  "clove::scope: f must accept (scope_ref&), (task, scope_ref&), "
                  "(task) or no argument");
    detail::scope_state st(t.worker_index());
    detail::scope_top<FF> top{&st, std::addressof(f)};
    clove_scope_run(t.get(), &detail::scope_top_fn<FF>, &top);
    st.err.rethrow_if_any();
}

/* The same with a token: once c is requested (by f, a job, or anyone),
 * spawned jobs that have not started are skipped (their closures are
 * destroyed without being called); running ones poll c.requested(). An
 * exception requests c as well. Returns true when nothing was skipped
 * for c (it was not requested), false otherwise; rethrows the first
 * exception as scope does. */
template <class F> bool scope(task t, F &&f, cancel &c)
{
    using FF = std::remove_reference_t<F>;
    static_assert(detail::spawn_call_kind<FF>() != 0,
                  "clove::scope: f must accept (scope_ref&), (task, scope_ref&), "
                  "(task) or no argument");
    detail::scope_state st(t.worker_index());
    st.err.token = c.get();
    detail::scope_top<FF> top{&st, std::addressof(f)};
    if (!c.requested())
        clove_scope_run(t.get(), &detail::scope_top_fn<FF>, &top);
    st.err.rethrow_if_any();
    return !c.requested();
}

/* ------------------------------------------------------------------------ */
/* sort                                                                      */
/* ------------------------------------------------------------------------ */

/*
 * clove_sort's comparator is qsort's int (*)(const void *, const void *),
 * with no context pointer, so a C++ comparator (a lambda with state) cannot
 * be passed through it without a global, which several concurrent sorts
 * would share. clove::sort is therefore its own stable parallel mergesort,
 * built on task::join: halves are joined at every level down to 32
 * elements (insertion sort), and merges longer than 2048 elements split at
 * the middle of the longer run (binary search in the other) into two
 * joined merges. Elements are only moved (T need not be default-
 * constructible or copyable); the scratch buffer holds n live T objects
 * moved out of the range, destroyed before return.
 */
namespace detail {

inline constexpr std::size_t sort_leaf = 32;
inline constexpr std::size_t merge_leaf = 2048;

template <class It, class Comp> void insertion_sort(It first, std::size_t n, Comp &comp)
{
    using T = typename std::iterator_traits<It>::value_type;
    for (std::size_t i = 1; i < n; i++) {
        if (comp(first[i], first[i - 1])) {
            T x = std::move(first[i]);
            std::size_t j = i;
            do {
                first[j] = std::move(first[j - 1]);
                --j;
            } while (j > 0 && comp(x, first[j - 1]));
            first[j] = std::move(x);
        }
    }
}

/* Merge sorted [a, a+na) and [b, b+nb) into out (disjoint), stably. */
template <class I1, class I2, class Comp>
void pmerge(task t, I1 a, std::size_t na, I1 b, std::size_t nb, I2 out, Comp &comp)
{
    if (na + nb <= merge_leaf) {
        std::merge(std::make_move_iterator(a), std::make_move_iterator(a + na),
                   std::make_move_iterator(b), std::make_move_iterator(b + nb), out, comp);
        return;
    }
    std::size_t i, j;
    if (na >= nb) {
        i = na / 2; /* a[i] starts the upper part; b's elements < a[i] go below */
        j = std::size_t(std::lower_bound(b, b + nb, a[i], comp) - b);
    } else {
        j = nb / 2; /* b[j] starts the upper part; a's elements <= b[j] go below */
        i = std::size_t(std::upper_bound(a, a + na, b[j], comp) - a);
    }
    t.join([&](task t2) { pmerge(t2, a, i, b, j, out, comp); },
           [&](task t2) { pmerge(t2, a + i, na - i, b + j, nb - j, out + (i + j), comp); });
}

/* Sort the n elements at src; into_other: the result goes to other (which
 * holds n live objects), else it stays at src, other being scratch. */
template <class I1, class I2, class Comp>
void msort(task t, I1 src, I2 other, std::size_t n, bool into_other, Comp &comp)
{
    if (n <= sort_leaf) {
        insertion_sort(src, n, comp);
        if (into_other)
            std::move(src, src + n, other);
        return;
    }
    std::size_t m = n / 2;
    t.join([&](task t2) { msort(t2, src, other, m, !into_other, comp); },
           [&](task t2) { msort(t2, src + m, other + m, n - m, !into_other, comp); });
    if (into_other)
        pmerge(t, src, m, src + m, n - m, other, comp);
    else
        pmerge(t, other, m, other + m, n - m, src, comp);
}

template <class T> struct sort_buffer {
    T *p = nullptr;
    std::size_t cap = 0, live = 0;
    task t;
    explicit sort_buffer(task t_) : t(t_) {}
    sort_buffer(const sort_buffer &) = delete;
    sort_buffer &operator=(const sort_buffer &) = delete;
    ~sort_buffer()
    {
        if (!p)
            return;
        if constexpr (!std::is_trivially_destructible_v<T>) {
            T *q = p;
            /* A destructor: nothing may leave it (a forced unwinding
             * cannot start here: the thread is unwinding already, or
             * not cancelled). */
            CLOVE__TRY { parallel_for(t, 0, live, [q](std::size_t lo, std::size_t hi) { std::destroy(q + lo, q + hi); }); }
            CLOVE__CATCH_ANY {}
        }
        std::allocator<T>().deallocate(p, cap);
    }
};

} // namespace detail

/* Stable parallel sort of [first, last) by comp (default std::less<>),
 * for random-access iterators. comp is called concurrently from several
 * workers and must be a strict weak ordering. Throws std::bad_alloc if
 * the scratch buffer (last - first elements) cannot be allocated. If comp
 * or a move throws, the first exception is rethrown after all parallel
 * parts have finished, and [first, last) holds valid but unspecified
 * values (the basic guarantee, as for std::sort). */
template <class RandomIt, class Compare = std::less<>>
void sort(task t, RandomIt first, RandomIt last, Compare comp = Compare())
{
    using T = typename std::iterator_traits<RandomIt>::value_type;
    static_assert(std::is_base_of_v<std::random_access_iterator_tag,
                                    typename std::iterator_traits<RandomIt>::iterator_category>,
                  "clove::sort needs random-access iterators");
    const std::size_t n = std::size_t(last - first);
    if (n <= detail::sort_leaf) {
        detail::insertion_sort(first, n, comp);
        return;
    }
    detail::sort_buffer<T> buf(t);
    buf.p = std::allocator<T>().allocate(n);
    buf.cap = n;
    T *p = buf.p;
    if constexpr (std::is_nothrow_move_constructible_v<T>) {
        parallel_for(t, 0, n, [first, p](std::size_t lo, std::size_t hi) {
            std::uninitialized_move(first + lo, first + hi, p + lo);
        });
    } else {
        std::uninitialized_move(first, last, p); /* destroys its own on failure */
    }
    buf.live = n;
    detail::msort(t, p, first, n, true, comp);
}

/* clove::sort is stable already; the name that promises it. */
template <class RandomIt, class Compare = std::less<>>
void stable_sort(task t, RandomIt first, RandomIt last, Compare comp = Compare())
{
    clove::sort(t, first, last, std::move(comp));
}

} // namespace clove

#undef CLOVE__TRY
#undef CLOVE__CATCH_ALL
#undef CLOVE__CATCH_ANY
#undef CLOVE__PASS_FOREIGN
#undef CLOVE__TRAMPOLINE_NOEXCEPT
#undef CLOVE__CXX_EXCEPTIONS

#endif /* C++17 */
#undef CLOVE__CPLUSPLUS

#endif /* CLOVE_HPP */
