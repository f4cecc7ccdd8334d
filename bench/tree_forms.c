/* SPDX-License-Identifier: MIT */
/*
 * tree_forms.c - clove's tree sum in each way a user writes a fork: a fork
 * at every node with two children, the leaves as in the baseline.
 *
 *   value  clove_fork_value / clove_join_value: the job returns the sum
 *          (clove.h's second example)
 *   args   clove_fork / clove_join with an argument block that the job
 *          writes its sum into (clove.h's first example): the block ends
 *          before the call that runs the job when nobody took it
 *   args_in the same with that call inside the block, its result stored
 *          in the argument block (the compiler cannot turn that call into
 *          a loop: the block's address was handed out and it is still in
 *          scope)
 *   join2  clove_join2 over two argument blocks (Rayon's join)
 *
 * Compiled twice into tree_sum: as the other benchmarks (-O3 -DNDEBUG),
 * and once more without NDEBUG, as a user's default build is (CLOVE_DEBUG
 * on: every misuse check), with TREE_FORMS_DEBUG defined, which gives the
 * functions the suffix _dbg (tree.h).
 */
#include "tree.h"

#ifdef TREE_FORMS_DEBUG
#define FORM(name) name##_dbg
#else
#define FORM(name) name
#endif

static int64_t FORM(value_job)(clove_task *t, void *n)
{
    return FORM(tree_sum_value)(t, n);
}

int64_t FORM(tree_sum_value)(clove_task *t, const node *n)
{
    int64_t s = n->value;
    if (n->left && n->right) {
        clove_future f;
        int64_t r;
        clove_fork_value(t, &f, FORM(value_job), (void *)n->right);
        s += FORM(tree_sum_value)(t, n->left);
        if (!clove_join_value(t, &f, &r))
            r = FORM(tree_sum_value)(t, n->right);
        return s + r;
    }
    if (n->left)
        s += FORM(tree_sum_value)(t, n->left);
    if (n->right)
        s += FORM(tree_sum_value)(t, n->right);
    return s;
}

void FORM(tree_sum_job)(clove_task *t, void *p)
{
    struct tree_sum_arg *a = p;
    a->result = FORM(tree_sum_value)(t, a->n);
}

static int64_t FORM(tree_sum_args)(clove_task *t, const node *n);

void FORM(tree_sum_args_job)(clove_task *t, void *p)
{
    struct tree_sum_arg *a = p;
    a->result = FORM(tree_sum_args)(t, a->n);
}

static int64_t FORM(tree_sum_args)(clove_task *t, const node *n)
{
    int64_t s = n->value;
    if (n->left && n->right) {
        {
            clove_future f;
            struct tree_sum_arg right = { n->right, 0 };
            clove_fork(t, &f, FORM(tree_sum_args_job), &right);
            s += FORM(tree_sum_args)(t, n->left);
            if (clove_join(t, &f))
                return s + right.result;
        }
        return s + FORM(tree_sum_args)(t, n->right);
    }
    if (n->left)
        s += FORM(tree_sum_args)(t, n->left);
    if (n->right)
        s += FORM(tree_sum_args)(t, n->right);
    return s;
}

static int64_t FORM(tree_sum_args_in)(clove_task *t, const node *n);

void FORM(tree_sum_args_in_job)(clove_task *t, void *p)
{
    struct tree_sum_arg *a = p;
    a->result = FORM(tree_sum_args_in)(t, a->n);
}

static int64_t FORM(tree_sum_args_in)(clove_task *t, const node *n)
{
    int64_t s = n->value;
    if (n->left && n->right) {
        clove_future f;
        struct tree_sum_arg right = { n->right, 0 };
        clove_fork(t, &f, FORM(tree_sum_args_in_job), &right);
        s += FORM(tree_sum_args_in)(t, n->left);
        if (!clove_join(t, &f))
            right.result = FORM(tree_sum_args_in)(t, n->right);
        return s + right.result;
    }
    if (n->left)
        s += FORM(tree_sum_args_in)(t, n->left);
    if (n->right)
        s += FORM(tree_sum_args_in)(t, n->right);
    return s;
}

static int64_t FORM(tree_sum_join2)(clove_task *t, const node *n);

void FORM(tree_sum_join2_job)(clove_task *t, void *p)
{
    struct tree_sum_arg *a = p;
    a->result = FORM(tree_sum_join2)(t, a->n);
}

static int64_t FORM(tree_sum_join2)(clove_task *t, const node *n)
{
    int64_t s = n->value;
    if (n->left && n->right) {
        struct tree_sum_arg l = { n->left, 0 }, r = { n->right, 0 };
        clove_join2(t, FORM(tree_sum_join2_job), &l, FORM(tree_sum_join2_job), &r);
        return s + l.result + r.result;
    }
    if (n->left)
        s += FORM(tree_sum_join2)(t, n->left);
    if (n->right)
        s += FORM(tree_sum_join2)(t, n->right);
    return s;
}

static int64_t FORM(tree_sum_current)(const node *n);

static int64_t FORM(current_job)(clove_task *t, void *n)
{
    (void)t;
    return FORM(tree_sum_current)(n);
}

static int64_t FORM(tree_sum_current)(const node *n)
{
    int64_t s = n->value;
    if (n->left && n->right) {
        clove_task *t = clove_current();
        clove_future f;
        int64_t r;
        clove_fork_value(t, &f, FORM(current_job), (void *)n->right);
        s += FORM(tree_sum_current)(n->left);
        if (!clove_join_value(t, &f, &r))
            r = FORM(tree_sum_current)(n->right);
        return s + r;
    }
    if (n->left)
        s += FORM(tree_sum_current)(n->left);
    if (n->right)
        s += FORM(tree_sum_current)(n->right);
    return s;
}

void FORM(tree_sum_current_job)(clove_task *t, void *p)
{
    struct tree_sum_arg *a = p;
    (void)t;
    a->result = FORM(tree_sum_current)(a->n);
}

int64_t FORM(tree_sum_typed)(clove_task *t, const node *n);
CLOVE_TASK(int64_t, FORM(tree_sum_typed), const node *);

int64_t FORM(tree_sum_typed)(clove_task *t, const node *n)
{
    int64_t s = n->value;
    if (n->left && n->right) {
        CLOVE_FORK(t, FORM(tree_sum_typed), right, n->right);
        s += FORM(tree_sum_typed)(t, n->left);
        return s + CLOVE_JOIN(t, right);
    }
    if (n->left)
        s += FORM(tree_sum_typed)(t, n->left);
    if (n->right)
        s += FORM(tree_sum_typed)(t, n->right);
    return s;
}

void FORM(tree_sum_typed_job)(clove_task *t, void *p)
{
    struct tree_sum_arg *a = p;
    a->result = FORM(tree_sum_typed)(t, a->n);
}
