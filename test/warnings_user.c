/* SPDX-License-Identifier: MIT */
/*
 * warnings_user.c - the forms of fork a program writes, compiled by
 * header_warnings.cmake at every optimization level, with and without
 * NDEBUG, as C and as C++, with -Wall -Wextra -Wpedantic -Wshadow
 * -Wconversion -Werror: the inline fork/join (and their debug checks,
 * which read a future before its fork) must not warn in correct code.
 * Compiled only, never run.
 */
#include <clove.h>

typedef struct wnode {
    int64_t value;
    struct wnode *left, *right;
} wnode;

struct wsum {
    const wnode *n;
    int64_t result;
};

int64_t sum_value(clove_task *t, const wnode *n);
int64_t sum_args(clove_task *t, const wnode *n);
int64_t sum_args_in(clove_task *t, const wnode *n);
int64_t sum_join2(clove_task *t, const wnode *n);
int64_t sum_many(clove_task *t, const wnode *const *nodes, int count);

static int64_t value_job(clove_task *t, void *n)
{
    return sum_value(t, (const wnode *)n);
}

int64_t sum_value(clove_task *t, const wnode *n)
{
    int64_t s = n->value, r;
    if (n->left && n->right) {
        clove_future f;
        clove_fork_value(t, &f, value_job, (void *)n->right);
        s += sum_value(t, n->left);
        if (!clove_join_value(t, &f, &r))
            r = sum_value(t, n->right);
        return s + r;
    }
    if (n->left)
        s += sum_value(t, n->left);
    if (n->right)
        s += sum_value(t, n->right);
    return s;
}

static void args_job(clove_task *t, void *p)
{
    struct wsum *a = (struct wsum *)p;
    a->result = sum_args(t, a->n);
}

int64_t sum_args(clove_task *t, const wnode *n)
{
    int64_t s = n->value;
    if (n->left && n->right) {
        {
            clove_future f;
            struct wsum right = { n->right, 0 };
            clove_fork(t, &f, args_job, &right);
            s += sum_args(t, n->left);
            if (clove_join(t, &f))
                return s + right.result;
        }
        return s + sum_args(t, n->right);
    }
    return s + (n->left ? sum_args(t, n->left) : 0) + (n->right ? sum_args(t, n->right) : 0);
}

static void args_in_job(clove_task *t, void *p)
{
    struct wsum *a = (struct wsum *)p;
    a->result = sum_args_in(t, a->n);
}

int64_t sum_args_in(clove_task *t, const wnode *n)
{
    int64_t s = n->value;
    if (n->left && n->right) {
        clove_future f;
        struct wsum right = { n->right, 0 };
        clove_fork(t, &f, args_in_job, &right);
        s += sum_args_in(t, n->left);
        if (!clove_join(t, &f))
            right.result = sum_args_in(t, n->right);
        return s + right.result;
    }
    return s + (n->left ? sum_args_in(t, n->left) : 0) +
           (n->right ? sum_args_in(t, n->right) : 0);
}

static void join2_job(clove_task *t, void *p)
{
    struct wsum *a = (struct wsum *)p;
    a->result = sum_join2(t, a->n);
}

int64_t sum_join2(clove_task *t, const wnode *n)
{
    if (n->left && n->right) {
        struct wsum l = { n->left, 0 }, r = { n->right, 0 };
        clove_join2(t, join2_job, &l, join2_job, &r);
        return n->value + l.result + r.result;
    }
    return n->value + (n->left ? sum_value(t, n->left) : 0) +
           (n->right ? sum_value(t, n->right) : 0);
}

/* Futures in an array, and one future reused in a loop. */
int64_t sum_many(clove_task *t, const wnode *const *nodes, int count)
{
    enum { MAX = 16 };
    clove_future fs[MAX];
    int64_t total = 0, r;
    int k = count < MAX ? count : MAX;
    for (int i = 0; i < k; i++)
        clove_fork_value(t, &fs[i], value_job, (void *)nodes[i]);
    for (int i = k; i-- > 0;)
        total += clove_join_value(t, &fs[i], &r) ? r : sum_value(t, nodes[i]);
    for (int i = 0; i < count; i++) {
        clove_future f;
        clove_fork_value(t, &f, value_job, (void *)nodes[i]);
        clove_tick(t);
        total += clove_join_value(t, &f, &r) ? r : sum_value(t, nodes[i]);
    }
    return total;
}

/* Without a task parameter: the task from clove_current(). */
int64_t sum_current(const wnode *n);

static int64_t current_job(clove_task *t, void *n)
{
    (void)t;
    return sum_current((const wnode *)n);
}

int64_t sum_current(const wnode *n)
{
    int64_t s = n->value, r;
    if (n->left && n->right) {
        clove_task *t = clove_current();
        clove_future f;
        clove_fork_value(t, &f, current_job, (void *)n->right);
        s += sum_current(n->left);
        if (!clove_join_value(t, &f, &r))
            r = sum_current(n->right);
        return s + r;
    }
    return s;
}

/* Typed tasks: one packed argument and a small result (the value form),
 * several arguments and a large result (the argument block), void. */
int64_t sum_typed(clove_task *t, const wnode *n);
CLOVE_TASK(int64_t, sum_typed, const wnode *);

int64_t sum_typed(clove_task *t, const wnode *n)
{
    int64_t s = n->value;
    if (n->left && n->right) {
        CLOVE_FORK(t, sum_typed, right, n->right);
        s += sum_typed(t, n->left);
        return s + CLOVE_JOIN(t, right);
    }
    return s;
}

struct wpair {
    int64_t sum, count;
};
struct wpair pair_typed(clove_task *t, const wnode *n, int depth);
CLOVE_TASK(struct wpair, pair_typed, const wnode *, int);

struct wpair pair_typed(clove_task *t, const wnode *n, int depth)
{
    struct wpair p = {n->value, 1};
    if (n->left && n->right) {
        CLOVE_FORK(t, pair_typed, right, n->right, depth + 1);
        struct wpair l = pair_typed(t, n->left, depth + 1);
        struct wpair r = CLOVE_JOIN(t, right);
        p.sum += l.sum + r.sum;
        p.count += l.count + r.count;
    }
    return p;
}

void visit_typed(clove_task *t, const wnode *n, int64_t *out);
CLOVE_VOID_TASK(visit_typed, const wnode *, int64_t *);

void visit_typed(clove_task *t, const wnode *n, int64_t *out)
{
    out[0] = n->value;
    if (n->left && n->right) {
        CLOVE_FORK(t, visit_typed, right, n->right, out + 1);
        visit_typed(t, n->left, out + 2);
        CLOVE_JOIN(t, right);
    }
}

int run_typed(const wnode *n, int64_t *out);
int run_typed(const wnode *n, int64_t *out)
{
    int64_t s = 0;
    int rc = CLOVE_RUN(sum_typed, &s, n);
    if (rc == 0)
        rc = CLOVE_RUN(visit_typed, n, out);
    return rc != 0 ? rc : (int)(s & 1);
}

/* A cancellation token, polled in a loop body and requested by it. */
struct wsearch {
    clove_cancel c;
    const int64_t *v;
    int64_t key;
};

static void search_body(clove_task *t, size_t lo, size_t hi, void *ctx)
{
    struct wsearch *s = (struct wsearch *)ctx;
    const clove_cancel *cc = &s->c;
    (void)t;
    for (size_t i = lo; i < hi && !clove_cancelled(cc); i++)
        if (s->v[i] == s->key)
            clove_cancel_request(&s->c);
}

int search_all(clove_task *t, const int64_t *v, size_t n, int64_t key);
int search_all(clove_task *t, const int64_t *v, size_t n, int64_t key)
{
    struct wsearch s = {CLOVE_CANCEL_INIT, v, key};
    clove_cancel_init(&s.c);
    return clove_for_cancel(t, 0, n, search_body, &s, &s.c);
}
