#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""clovesim.py - a discrete-event model of clove's heartbeat scheduler.

Models (see sim/README.md for the long version and the calibration):
  - the real fork/join tree of a workload, node by node: a balanced binary
    tree sum (bench/tree.c: fork the right child, recurse into the left one)
    or fib(n) (fork fib(n-2), recurse into fib(n-1)). A worker's progress
    through a job is its position in the pre-order of the job's subtree, so
    the state of its fork list at any instant is computed exactly (O(depth))
    instead of simulating every node: 1e7 or 1e9 nodes cost the same;
  - P tasks: the caller (index 0, which runs the root) and P - 1 pool
    workers; each task's fork list (oldest queued fork shared first);
  - the heartbeat thread: beats every interval (plus timer lateness) only
    while some task is idle; sleeps when none is; kicked (wake latency) by
    the first task to go idle during a run (after an all-busy sleep), it
    beats at once, but never sooner than one interval after its previous
    beat, and an eighth of an interval later (plus timer lateness) runs a
    probe pass that steals the reserve of every task that has not answered
    that beat yet, then goes on as usual (src/heartbeat.c;
    --no-beat-on-kick: one full period after the kick, no probe;
    --probe-div 0: no probe); after run_enter's kick the first beat comes
    one period later; a beat sets the flag of every non-idle task;
  - the flag is answered at the task's next fork (the "tick gap");
  - a share moves the oldest queued fork into a FIFO ring and wakes exactly
    one idle task (most recently idle first) with a wake latency; the
    sharer pays for the wake call; one pool lock serialises every
    bookkeeping step (share, take, reclaim, done, going idle);
  - the cascade: a task that takes a shared job while others are still
    idle raises its own flag, so its first fork shares again;
  - joins: reclaim a still-queued shared job (run it here), skip a done
    one, or wait: help with ring jobs, else sleep until the taker wakes us
    (and relay a share-wake if we were woken just as our job finished);
  - the cascade's owner re-share (src/share.c, default on): the taker also
    raises the flag of the job's owner; --no-cascade-owner: only the taker
    shares again;
  - the reserve (src/share.c, default on; --no-reserve: tasks keep no
    reserve): each task keeps its oldest queued fork published; at each
    beat (and probe) the heartbeat thread, for every busy task whose flag
    is still raised (no fork since the flag went up: a long leaf), if a
    task is idle and the ring has room, claims that fork and shares it as
    the owner would (ring, wake one idle task, after the lock); at most one
    per task until the task forks again (which re-reserves); at most 16
    steals per beat.
    --steal-every-beat: a rejected alternative in which every normal beat
    steals from every busy task, answered or not;
  - not modelled: clove_for / clove_reduce loops (chunks, splits at a
    heartbeat, the eager splits of src/for.c); the map workloads are
    divide-and-conquer recursions with a fixed fork tree;
  - long-leaf workloads (pair, rounds, map, imap, tmap, fan): node costs in
    ns, leaves that compute for milliseconds without a fork; a flag is
    answered at the task's next fork, found in the tree;
  - optional design variants: no cascade (Spice), k shares per answer;
    for wide fan-out (sim/fanout.md): per-member claims (--claims), idle
    tasks that spin before they sleep (--spin-us), requests answered into
    the requester's mailbox without the lock (--direct), joins that run
    their own older records (--self-help);
  - a peer's rules instead of clove's: Spice (--policy spice, flags of
    this model) or Lace's work stealing (--policy lace, a simulator of its
    own, node by node: sim/lacesim.py).
Not modelled: memory bandwidth and cache effects (a node costs the same
whatever the number of workers, except for the crude --contention factor),
other processes on the machine, the OS scheduler beyond a fixed wake
latency, variance (every run is deterministic).

Python 3 standard library only. Run "clovesim.py --help".
"""
import argparse
import heapq
import json
import math
import sys

NS = 1.0
US = 1000.0

# --------------------------------------------------------------------------
# Calibration defaults (measured on this machine: sim/README.md, "Calibration")
# --------------------------------------------------------------------------
DEFAULTS = dict(
    c_node_tree={1000: 2.83, 1000000: 2.917, 10000000: 3.007},  # ns per node, clove 1 thread
    c_node_tree_other=3.007,
    c_call_fib=1.755,        # ns per call, clove 1 thread (fib 32)
    c_node_uts=5.0,          # ns per node, clove 1 thread, uts --shape loop (placeholder)
    heartbeat_us=100.0,
    hb_late_us=None,         # None: 0.1 * heartbeat (timer slack) + 17 us (measured: 127 us period at 100)
    hb_overhead_us=17.0,
    wake_us=10.0,            # share -> job start, median over clove traces (sim/trace_stats.py)
    wake_call_us=5.0,        # the waker's FUTEX_WAKE syscall (sim/wakelat.c, median 5.8)
    lock_us=0.15,            # one pool-lock critical section incl. the cache-line transfer
    hb_per_task_us=0.02,     # heartbeat_pass: one flag store per task (another core's line)
    tick_gap_nodes=2.0,      # nodes from a flag store to the next fork that reads it
    reclaim_us=0.05,         # owner reclaims a queued shared future (+ lock)
    join_done_us=0.05,       # owner finds its shared future DONE (+ lock)
)

# --------------------------------------------------------------------------
# Machines (--machine): what P threads get of a machine. sim/README.md,
# "Machines and policies", states where each number comes from.
# --------------------------------------------------------------------------
MACHINES = {
    # GCP c4-standard-16: 16 vCPUs = 8 cores x 2 hyperthreads (Intel Xeon,
    # 5th generation), the machine of Spice's published benchmark.
    "c4-standard-16": dict(cores=8, smt=2, smt_yield=0.68, contention=0.031,
                           contention_ref_ns=3.93,
                           # a tree node on 1 thread there, by policy (the
                           # tree workloads' default --c-node on this machine)
                           tree_ns=dict(spice=3.93, clove=4.14)),
}


def machine_cost(m, c1, P, mem_demand=1.0):
    """The per-node cost of each of P busy threads on machine m, from the
    1-thread cost c1: threads fill one hyperthread of every core first;
    a core's second hyperthread adds smt_yield of a core; each busy core
    beyond the first slows every node by `contention` (shared memory
    bandwidth), scaled by the workload's demand (contention_ref_ns / c1:
    a node that takes longer asks less of memory per second; times
    mem_demand, the memory a node touches against a tree node's: 1 for a
    pointer-chasing walk, 0 for a node computed in registers); more
    threads than hyperthreads share them by time."""
    if m is None:
        return c1
    cores, smt = m["cores"], m["smt"]
    hts = min(P, cores * smt)
    busy_cores = min(hts, cores)
    doubled = max(0, hts - cores)
    k = m["contention"] * m["contention_ref_ns"] / c1 * mem_demand
    throughput = (busy_cores + m["smt_yield"] * doubled) / (1 + k * (busy_cores - 1))
    return c1 * P / throughput


# src/ as it is (sim/README.md, "clove as built"), as Sim keyword arguments:
# the claims, the spin before sleeping, the direct requests of free
# workers and of joiners (a joiner asks its job's runner once it has
# waited 2 us); no self-help. On the command line: --claims --spin-us 100
# --direct --join-links 1 --join-ask-after-us 2.
AS_BUILT = dict(claims=True, spin_us=100, direct=True, join_links=1, join_ask_after_us=2)


# Policies (--policy): the rules of a runtime, as Sim keyword arguments.
POLICIES = {
    "clove": {},
    # Spice (its src/root.zig at 6d2d665): no cascade, no
    # reserve, no requests or batches; beats at a fixed period whether or
    # not anybody is idle (no beat on kick, no probe, no run-age gate).
    "spice": dict(cascade=False, reserve=False, request=False, batch=1, beat_on_kick=False,
                  probe_div=0, run_age_div=0),
    # Lace's work stealing (sim/lacesim.py): a simulator of its own
    "lace": dict(lace=True),
}

SHARED, TAKEN, DONE, RECLAIMED = 1, 2, 3, 4
BUSY, IDLE, WAKING = 0, 1, 2
EV_BEAT, EV_ANSWER, EV_REACH, EV_WOKEN, EV_SAMPLE, EV_HBWAKE, EV_PROBE, EV_RETRY = range(8)
KICK = "kick"                # EV_BEAT's task slot: a beat on kick (a probe follows)


# --------------------------------------------------------------------------
# Workloads: a node is a descriptor; children() gives the pre-order layout.
# --------------------------------------------------------------------------
class TreeSum:
    """Balanced tree as bench/tree.c builds it: node (size s) holds the
    middle value, left = floor((s-1)/2) nodes, right = the rest. The clove
    version forks the right child when both children exist."""

    def __init__(self, n):
        self.n = n
        self.root = n
        self.name = f"tree{n:g}" if n < 1e3 else f"tree 1e{round(math.log10(n))}" \
            if 10 ** round(math.log10(n)) == n else f"tree {n}"

    def size(self, d):
        return d

    def children(self, d):
        """(left, lsize, right, rsize, forks) or None for a leaf."""
        if d <= 1:
            return None
        ls = (d - 1) // 2
        rs = d - 1 - ls
        return (ls if ls else None, ls, rs if rs else None, rs, ls > 0 and rs > 0)

    def cost(self, d):
        return 1

    def label(self, d):
        return f"subtree of {d} nodes"


class Fib:
    """fib(n) as bench/fib.c: every call with n >= 2 forks fib(n-2) and
    recurses into fib(n-1); calls(n) = 2 fib(n+1) - 1."""

    def __init__(self, n):
        self.n = n
        self.root = n
        self.name = f"fib {n}"
        self.calls = [1, 1]
        for k in range(2, n + 1):
            self.calls.append(self.calls[k - 1] + self.calls[k - 2] + 1)

    def size(self, d):
        return self.calls[d]

    def children(self, d):
        if d < 2:
            return None
        return (d - 1, self.calls[d - 1], d - 2, self.calls[d - 2], True)

    def cost(self, d):
        return 1

    def label(self, d):
        return f"fib({d})"


# Long-leaf workloads. Their unit is the nanosecond (c = 1 ns per unit): a
# node's own cost is cost(d) units, spent at its start, before its children
# (pre-order). A leaf computes for its whole cost without a fork or a tick;
# an internal node costs FORK_NS (a fork and its join) and forks its right
# child, except a "sequence" node (forks False: the right child runs after
# the left, as the next iteration of a loop), which costs nothing.
FORK_NS = 3.0


def parse_ms(s):
    """A duration in ms; suffixes us, ms, s accepted ("500us", "2s")."""
    s = s.strip()
    for suf, f in (("us", 1e-3), ("ms", 1.0), ("s", 1e3)):
        if s.endswith(suf) and s[:-len(suf)].replace(".", "", 1).replace("e", "", 1).isdigit():
            return float(s[:-len(suf)]) * f
    return float(s)


def fmt_ms(ms):
    return f"{ms:g} ms" if ms >= 1 else f"{ms * 1e3:g} us"


class LongLeaves:
    long = True
    unit_ns = 1.0


class Rounds(LongLeaves):
    """bench/longleaf.c: `pairs` calls of clove_join2(leaf, leaf) in a loop
    (pair:L is rounds:1:L). clove_join2 forks b, runs a, joins b. The loop
    is a balanced tree of sequence nodes over the rounds (the same
    pre-order as a chain, with a small depth)."""

    def __init__(self, pairs, leaf_ms, fork_ns=FORK_NS):
        self.pairs = pairs
        self.L = leaf_ms * 1e6
        self.fk = fork_ns
        self.pair_size = fork_ns + 2 * self.L
        self.root = ("R", 0, pairs)
        self.name = f"pair {fmt_ms(leaf_ms)}" if pairs == 1 else f"rounds {pairs} x {fmt_ms(leaf_ms)}"

    def size(self, d):
        if d[0] == "L":
            return self.L
        return (d[2] - d[1]) * self.pair_size

    def cost(self, d):
        if d[0] == "L":
            return self.L
        return self.fk if d[2] - d[1] == 1 else 0.0

    def children(self, d):
        if d[0] == "L":
            return None
        lo, hi = d[1], d[2]
        if hi - lo == 1:          # clove_join2: fork b (right), run a (left)
            return (("L",), self.L, ("L",), self.L, True)
        mid = (lo + hi) // 2
        return (("R", lo, mid), (mid - lo) * self.pair_size,
                ("R", mid, hi), (hi - mid) * self.pair_size, False)

    def label(self, d):
        return "leaf" if d[0] == "L" else f"rounds {d[1]}..{d[2]}"


class Map(LongLeaves):
    """A parallel map over n coarse items written as divide and conquer:
    map(lo, hi) forks map(mid, hi), runs map(lo, mid), joins; an item is a
    leaf that computes for leaf_ns[i] without forking or ticking."""

    def __init__(self, leaf_ns, name, fork_ns=FORK_NS):
        self.n = len(leaf_ns)
        self.fk = fork_ns
        self.leaf = list(leaf_ns)
        self.pre = [0.0]
        for x in self.leaf:
            self.pre.append(self.pre[-1] + x)
        self.root = (0, self.n)
        self.name = name

    def size(self, d):
        lo, hi = d
        return self.pre[hi] - self.pre[lo] + (hi - lo - 1) * self.fk

    def cost(self, d):
        lo, hi = d
        return self.leaf[lo] if hi - lo == 1 else self.fk

    def children(self, d):
        lo, hi = d
        if hi - lo == 1:
            return None
        mid = lo + (hi - lo) // 2
        return ((lo, mid), self.size((lo, mid)), (mid, hi), self.size((mid, hi)), True)

    def label(self, d):
        return f"items {d[0]}..{d[1]}"


class Fan(LongLeaves):
    """A flat fork-out: fork k - 1 leaves in a loop, run one leaf, join them
    in LIFO order (so the first fork is the oldest, the one reserved)."""

    def __init__(self, k, leaf_ms, fork_ns=FORK_NS):
        self.k = k
        self.L = leaf_ms * 1e6
        self.fk = fork_ns
        self.root = ("F", k - 1)
        self.name = f"fan {k} x {fmt_ms(leaf_ms)}"

    def size(self, d):
        if d[0] == "L":
            return self.L
        return d[1] * (self.fk + self.L) + self.L

    def cost(self, d):
        return self.L if d[0] == "L" or d[1] == 0 else self.fk

    def children(self, d):
        if d[0] == "L" or d[1] == 0:
            return None
        rest = ("F", d[1] - 1)
        return (rest, self.size(rest), ("L",), self.L, True)

    def label(self, d):
        return "leaf" if d[0] == "L" or d[1] == 0 else f"fan of {d[1] + 1}"


# bench/uts.c's tree (bench/rec.h): the root has b0 children, every other
# node 4 children when a hash of its id is below q 2^64 (q = 0.2499), else
# none; a child's id is a hash of its parent's id and its index.
UTS_M, UTS_SEED, UTS_GOLDEN = 4, 3, 0x9E3779B97F4A7C15
UTS_THRESHOLD = int(0.2499 * 18446744073709551616.0)
M64 = (1 << 64) - 1


def uts_mix(z):
    """splitmix64's finalizer (rec_uts_mix)."""
    z &= M64
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M64
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M64
    return z ^ (z >> 31)


class Uts:
    """bench/uts.c's binomial unbalanced tree, in its loop-of-forks shape
    (`uts --shape loop`): a node forks every child in a loop
    (clove_fork_value) and joins them newest first, running each child
    nobody took; the root does the same over its b0 children. The tree is
    generated once (the subtree size of every node, in pre-order, child 0
    first); a node costs one unit, a fork nothing more (the node cost c is
    that of clove on one thread, forks included). Descriptors: a node's
    pre-order index, or ("F", i, j): the forks of children j.. of node i,
    whose oldest is child j (a fan, as Fan: fork child j, then the rest,
    then run the newest first)."""

    def __init__(self, b0):
        import array
        self.n = b0
        self.name = f"uts-loop {b0}"
        mix, G, TH = uts_mix, UTS_GOLDEN, UTS_THRESHOLD
        sizes = array.array("I")
        par = array.array("I")
        kids = bytearray()
        sizes.append(1)
        par.append(0)
        kids.append(0)
        root = mix(UTS_SEED)
        work = [(mix(root + (i + 1) * G), 0) for i in range(b0 - 1, -1, -1)]
        pop, push = work.pop, work.append
        while work:
            z, pi = pop()
            idx = len(sizes)
            sizes.append(1)
            par.append(pi)
            if z < TH:
                kids.append(UTS_M)
                for i in range(UTS_M, 0, -1):
                    push((mix(z + i * G), idx))
            else:
                kids.append(0)
        for i in range(len(sizes) - 1, 0, -1):
            sizes[par[i]] += sizes[i]
        del par
        self.sizes, self.kids = sizes, kids
        kids[0] = 1 if b0 else 0            # (the root's fan-out is b0: see nkids)
        off, c = [], 1
        for _ in range(b0):
            off.append(c)
            c += sizes[c]
        self.root_off = off
        self.root = 0
        self.nodes = len(sizes)

    def nkids(self, i):
        return self.n if i == 0 else self.kids[i]

    def child(self, i, j):
        if i == 0:
            return self.root_off[j]
        c = i + 1
        for _ in range(j):
            c += self.sizes[c]
        return c

    def size(self, d):
        if isinstance(d, int):
            return self.sizes[d]
        _, i, j = d
        return i + self.sizes[i] - self.child(i, j)

    def cost(self, d):
        return 1 if isinstance(d, int) else 0

    def children(self, d):
        if isinstance(d, int):
            if self.nkids(d) == 0:
                return None
            return (("F", d, 0), self.sizes[d] - 1, None, 0, False)
        _, i, j = d
        c = self.child(i, j)
        rest = ("F", i, j + 1) if j + 1 < self.nkids(i) else None
        rs = self.size(rest) if rest is not None else 0
        return (rest, rs, c, self.sizes[c], True)

    def label(self, d):
        return f"node {d}" if isinstance(d, int) else f"children {d[2]}.. of node {d[1]}"


def map_leaves(kind, n, leaf_ms, seed=1):
    """Leaf costs (ns) of the map workloads: 'map' all equal; 'imap'
    exponentially distributed (mean leaf_ms, deterministic seed); 'tmap' a
    linear ramp (item i costs 2 L (i + 1/2) / n: a triangular loop)."""
    L = leaf_ms * 1e6
    if kind == "map":
        return [L] * n
    if kind == "tmap":
        return [2 * L * (i + 0.5) / n for i in range(n)]
    import random
    rng = random.Random(seed)
    return [L * rng.expovariate(1.0) for _ in range(n)]


# --------------------------------------------------------------------------
# Simulator state
# --------------------------------------------------------------------------
class Job:
    __slots__ = ("desc", "start", "size", "owner", "_st", "left", "left_start", "taker",
                 "batch", "members", "taken_t", "seen", "rng", "octx")

    def __init__(self, desc, start, size, owner, left, left_start):
        self.desc, self.start, self.size, self.owner = desc, start, size, owner
        self.left, self.left_start = left, left_start
        self._st = SHARED
        self.taker = None
        self.taken_t = 0.0
        self.seen = False          # a batch its owner has seen DONE
        self.batch = None          # a member of a batch: the batch's job
        self.members = None        # a batch: its member jobs, oldest first
        self.rng = None            # --claims: a member's range, or a ring entry's
        self.octx = None           # the context it was forked in (--join-desc)

    @property
    def state(self):
        """A member not reclaimed has its batch's state."""
        if self.batch is not None and self._st == SHARED:
            return self.batch._st
        return self._st

    @state.setter
    def state(self, v):
        self._st = v


def batch_desc(members):
    """The descriptor of a batch job over members [(desc, size), ...]: the
    member itself when there is one."""
    return members[0][0] if len(members) == 1 else ("B", tuple(members))


class BatchWork:
    """A workload plus the batch descriptors ("B", members): the taker of a
    batch runs its members oldest first, as a divide and conquer over the
    range that forks the upper half and recurses into the lower one, so
    that its own shares hand out halves of what remains."""

    def __init__(self, work):
        self.w = work

    def __getattr__(self, name):
        return getattr(self.w, name)

    @staticmethod
    def is_batch(d):
        return isinstance(d, tuple) and len(d) == 2 and d[0] == "B"

    def size(self, d):
        if self.is_batch(d):
            return sum(x[1] for x in d[1])
        return self.w.size(d)

    def cost(self, d):
        return 0 if self.is_batch(d) else self.w.cost(d)

    def children(self, d):
        if not self.is_batch(d):
            return self.w.children(d)
        ms = d[1]
        h = len(ms) // 2
        lo, hi = ms[:h], ms[h:]
        return (batch_desc(lo), sum(x[1] for x in lo), batch_desc(hi), sum(x[1] for x in hi), True)

    def label(self, d):
        return f"batch of {len(d[1])}" if self.is_batch(d) else self.w.label(d)


class Range:
    """--claims: the members [lo, hi) of a batch (the owner's records,
    oldest first) that one ring entry, or one task running them, holds.
    Every member has its own state, changed by an atomic operation: a
    runner claims the members from lo up, one at a time (SHARED -> TAKEN,
    then DONE); the owner's join claims the newest back (SHARED ->
    RECLAIMED, hi shrinks) and waits only for a member that has started.
    A runner answering a flag splits off the upper half of its unclaimed
    members [mid, hi) as a new range (a ring entry). sharer: the task that
    put the range in the ring (the owner, or the runner it was split
    from)."""
    __slots__ = ("members", "lo", "hi", "owner", "sharer", "entry", "taken_t")

    def __init__(self, members, lo, hi, owner, sharer):
        self.members, self.lo, self.hi = members, lo, hi
        self.owner, self.sharer = owner, sharer
        self.entry = None
        self.taken_t = 0.0
        for i in range(lo, hi):
            members[i].rng = self

    def left(self):
        return self.hi - self.lo


class Ctx:
    """One job running on a task: position p_ref at time t_ref, advancing
    one node per c ns after t_ref (t_ref may lie ahead: overhead)."""
    __slots__ = ("desc", "size", "job", "p_ref", "t_ref", "shared", "waiting", "rng", "hc")

    def __init__(self, desc, size, job, t):
        self.desc, self.size, self.job = desc, size, job
        self.p_ref, self.t_ref = 0.0, t
        self.shared = []      # jobs shared from this context, oldest (highest) first
        self.waiting = None   # the TAKEN job this context waits for at its join
        self.rng = None       # --claims: the range whose member this context runs
        self.hc = None        # --self-help: (a, b, shared[b - 1]): shared[a:b] are claimed


class Task:
    __slots__ = ("idx", "status", "stack", "flag", "flag_t", "gen", "answer_pending",
                 "stolen", "agen", "ans_q", "rearm", "bsize", "req", "spin_until",
                 "mail", "req_from", "req_to", "rgen", "deadline",
                 "req_short", "ask_after")

    def __init__(self, idx):
        self.idx = idx
        self.status = IDLE
        self.stack = []
        self.flag = False
        self.flag_t = 0.0          # when the flag was raised (see raise_flag)
        self.gen = 0
        self.answer_pending = False
        self.stolen = 0            # reserves the heartbeat thread took since w's last fork
        self.agen = 0              # long-leaf workloads: generation of the pending answer event
        self.ans_q = None          # (ctx, position) of the fork a postponed answer waits for
        self.rearm = False         # what-if share_after_steal=False: the raised flag only re-reserves
        self.bsize = 1             # adaptive batches: records in this task's next batch
        self.req = False           # the raised flag is a request (a taker of ours went idle)
        self.spin_until = -math.inf  # --spin-us: spinning (cheap to wake) until then
        self.mail = None           # --direct: the range (ring entry) a sharer handed to this task
        self.req_from = None       # --direct: the task whose request this one has to answer
        self.req_to = None         # --direct: the task this one waits on for an answer
        self.rgen = 0              # --direct: generation of this task's retry events
        self.deadline = 0.0        # --direct: when this requester stops and sleeps
        self.req_short = True      # --direct: its last job was short (a request for a batch)
        self.ask_after = 0.0       # --direct: a joiner asks from then on (--join-ask-after-us)


class Sim:
    def __init__(self, work, P, c_node, heartbeat_us=100.0, wake_us=10.0, cascade=True,
                 k=1, wake_call_us=5.0, lock_us=0.15, hb_late_us=None, hb_overhead_us=17.0,
                 hb_per_task_us=0.02, tick_gap_nodes=2.0, reclaim_us=0.05,
                 join_done_us=0.05, contention=1.0, contention_ns=0.0, leaf_block=0, sample_us=None,
                 idle_request=False, beat_on_kick=True, cascade_owner=True, reserve=True,
                 reserves=1, hb_wake_batch=16, hb_phase_us=None, join_ticks=False,
                 steal_every_beat=False, share_after_steal=True, probe_div=8,
                 run_age_div=4, batch=64, request=True, adaptive=True,
                 request_max_us=None, request_one=True, spin_us=0.0, spin_wake_us=0.05,
                 spin_lat_us=0.2,
                 claims=False, claim_us=0.03, local_us=0.01, done_us=0.01, request_to="owner",
                 direct=False, retry_us=1.0, scan_us=0.05, self_help=False, look_us=0.01,
                 join_desc=False, direct_joiners=True, handoff=True, handoff_only=False,
                 join_ask_after_us=0.0, join_links=8,
                 owner_only=False, start_gate=False,
                 breakdown=False,
                 max_events=50_000_000):
        # --claims: every share is a range of records (Range) whose members
        # are claimed one at a time by atomic operations, the pool lock
        # guarding only the ring and the idle list (sim/fanout.md)
        self.claims = claims
        # an atomic operation on a member's state: a runner's claim (the
        # line is the owner's), or one on a line the task holds (the
        # runner's DONE, the owner's claim back of a member nobody touched);
        # the owner's join of a DONE member (loads of its state and result)
        self.c_claim = claim_us * US
        self.c_local = local_us * US
        self.c_done = done_us * US
        # a request goes to the owner of the job just finished, or to the
        # task that shared its range (sharer); pending: to that one if it
        # has a queued fork, else to the next task that has one
        self.request_to = request_to
        self.victim_rr = 0                # the last task request_to "pending" picked
        # --direct (with --claims and --spin-us): a worker that runs out of
        # work requests from one task (scan_us per task looked at) and
        # spins on its mailbox; the task hands it a range at its next fork,
        # no lock; unanswered after retry_us (the task runs a leaf) it
        # sleeps, and with nobody to ask it looks again every retry_us; a
        # join that finds its record started asks the task running it (or
        # the one that task waits for); spin_us after it ran out of work a
        # task sleeps (the lock, the idle list). A share made while a
        # worker in its worker loop is idle hands the range to it directly,
        # and only such a worker makes a taker's cascade share again.
        self.direct = direct and claims and spin_us > 0
        # --no-direct-joiners: only workers in their worker loop request
        # directly; a join that finds its record started helps from the
        # ring, then sleeps, as without --direct
        self.direct_joiners = self.direct and direct_joiners
        # --owner-only (with --direct): as src/ builds it: a free worker
        # asks only the owner of the range it ran, only when src/ would
        # request (after a short range, or a long one with nobody else
        # idle), and not again: refused or unanswered it sleeps, leaving
        # the request through the ring; joiners do not ask
        self.owner_only = self.direct and owner_only
        if self.owner_only:
            self.direct_joiners = False
        # --no-handoff: with --direct, a share for a sleeping free worker
        # still goes through the ring and a wake, not into its mailbox
        self.handoff = self.direct and handoff
        # --handoff-only (with --claims): the handoff without direct
        # requests: a share made while a free worker is idle goes into its
        # mailbox; the worker runs it without the lock, then looks at the
        # ring under the lock and requests from the owner as as built
        if handoff_only and claims:
            self.handoff = True
        self.retry = retry_us * US
        # --direct joiners: a joiner asks only once it has waited this long
        # (src/: an eighth of an interval), and follows at most join_links
        # links of the chain of runners (src/: 1, the awaited job's runner)
        self.join_ask_after = join_ask_after_us * US
        self.join_links = join_links
        self.c_scan = scan_us * US
        # --self-help (with --claims): a join that finds its record started
        # first claims back and runs its own newest unclaimed older record
        # (its own fork, run out of order), look_us per record looked at
        self.self_help = self_help and claims
        self.c_look = look_us * US
        # what-if (with --direct): a joiner may also ask any task that runs
        # a job forked inside the one it waits for (not only that job's runner
        # and the chain of tasks each waits for)
        self.join_desc = join_desc
        self.W = BatchWork(work) if batch > 1 and not claims else work
        self.P = P
        self.c = (c_node * contention + contention_ns) if P > 1 else c_node
        self.idle_request = idle_request
        self.beat_on_kick = beat_on_kick
        # --steal-every-beat, a rejected alternative: a normal beat steals
        # from every busy task, not only from those that left it unanswered
        self.steal_every_beat = steal_every_beat
        # the probe pass interval / probe_div after a beat on kick
        # (src/heartbeat.c HB_PROBE_DIV = 8); 0: none
        self.probe_div = probe_div
        # what-if (False): after a steal the owner's next fork only reserves
        # again; src/ stores BEAT, so that fork also shares the next oldest
        self.share_after_steal = share_after_steal
        self.cascade_owner = cascade_owner and cascade   # --no-cascade: neither flag
        self.reserve = reserve
        self.reserves = reserves if reserve else 0   # what-if: > 1 reserves per task
        self.join_ticks = join_ticks                  # what-if: clove_join ticks (long leaves only)
        self.hb_phase = None if hb_phase_us is None else hb_phase_us * US
        # src/heartbeat.c HB_RUN_AGE_DIV: a pass skips a run younger than
        # interval / run_age_div (0: no such gate, the first pass beats it)
        self.run_age_div = run_age_div
        self.hb_wake_batch = hb_wake_batch
        # what-if (--start-gate): a run whose start wakes the heartbeat
        # thread gets its first beat a quarter interval (run_age_div)
        # after the thread is awake, as a run that begins while the thread
        # is awake does; src/: a whole interval
        self.start_gate = start_gate
        # a share moves up to `batch` oldest queued forks into the ring and
        # wakes one idle task (k: as many forks, one wake each)
        self.batch = batch
        # request: a task that finished a shared job and finds the ring
        # empty raises that job's owner's flag before it sleeps
        self.request = request
        # src/share.c: only a job shorter than an eighth of an interval requests
        self.request_max = (heartbeat_us / 8 if request_max_us is None else request_max_us) * US
        # src/share.c: a longer job requests one record (REQ_ONE)
        self.request_one = request_one
        # adaptive: a task's batch size starts at 1, doubles at each share
        # answering a request, halves when the task waits on a batch
        self.adaptive = adaptive
        # long-leaf workloads: a flag is answered at the task's next fork
        # (found in the tree), not a fixed tick gap later
        self.long = getattr(work, "long", False)
        self.H = heartbeat_us * US
        late = (0.1 * heartbeat_us + hb_overhead_us) if hb_late_us is None else hb_late_us
        self.period = self.H + late * US
        self.L = wake_us * US
        self.cascade = cascade
        self.k = k
        self.c_wake_call = wake_call_us * US
        # --spin-us: a task going idle spins that long before it sleeps;
        # waking it meanwhile costs the waker a store, not a system call
        self.spin = spin_us * US
        self.c_spin_wake = spin_wake_us * US
        self.spin_lat = spin_lat_us * US
        self.c_lock = lock_us * US
        self.c_hb_task = hb_per_task_us * US
        self.tick_gap = tick_gap_nodes * self.c
        self.c_reclaim = reclaim_us * US
        self.c_join_done = join_done_us * US
        self.leaf_block = leaf_block
        # breakdown: where the worker-time goes, sampled every microsecond
        # (unless sample_us says otherwise)
        self.breakdown = {} if breakdown else None
        if breakdown and not sample_us:
            sample_us = 1.0
        self.sample_dt = (sample_us * US) if sample_us else self.H / 10.0
        self.max_events = max_events

        self.tasks = [Task(i) for i in range(P)]
        self.idle = []            # idle list; the end is the most recently idle
        self.ring = []            # FIFO of shared jobs (reclaimed ones removed)
        self.ring_head = 0
        self.ring_live = 0
        cap = 8
        while cap < 4 * P * max(1, batch) and cap < 65536:
            cap *= 2
        self.ring_cap = cap
        self.c_batch_rec = 0.01 * US   # per extra record of a batch (its marks, its ring entry)
        self.lock_iv = []          # reserved (start, end) intervals of the pool lock
        self.lock_held = 0.0       # total time the lock was held
        self.now = 0.0
        self.heap = []
        self.seq = 0
        self.hb_asleep = True
        self.hb_busy_sleep = False  # asleep because a beat found nobody idle (not: no run yet)
        self.last_beat = -math.inf  # when the last beat (heartbeat_pass) ended
        self.min_beat_gap = math.inf  # shortest time from the end of a beat to the next beat
        self.hb_gen = 0
        self.done_at = None
        # metrics
        self.n_busy = 0
        self.t_last = 0.0
        self.idle_area = 0.0
        self.idle_work_area = 0.0
        self.all_busy_at = None
        self.busy90_at = None
        self.peak_busy = 0
        self.stats = dict(beats=0, answers=0, shares=0, steals=0, wakes=0, empty_wakes=0,
                          reclaims=0, taken=0, waits=0, relays=0, events=0, kick_beats=0,
                          probes=0, probe_steals=0, batches=0, records=0, requests=0,
                          spin_wakes=0, splits=0, handoffs=0, direct=0,
                          refusals=0, req_ring=0, req_deadline=0, req_none=0,
                          req_timeout=0, req_busy=0, join_requests=0,
                          join_retries=0, self_helps=0)

    # ---- event queue -----------------------------------------------------
    def push(self, t, kind, task=None, gen=0):
        self.seq += 1
        heapq.heappush(self.heap, (t, self.seq, kind, task, gen))

    # ---- pool lock: one server ----------------------------------------------
    def locked(self, t, hold=None):
        """Hold the lock for `hold` from the first free moment at or after t;
        return when the critical section ends. Reservations are kept as
        intervals, because a task may reserve a little ahead of the event
        being processed (after its own wake call): a later reservation must
        not delay an earlier request."""
        hold = self.c_lock if hold is None else hold
        iv = self.lock_iv
        # forget intervals that ended before the event being processed
        while iv and iv[0][1] <= self.now:
            iv.pop(0)
        start = t
        pos = 0
        for pos, (a, b) in enumerate(iv):
            if start + hold <= a:
                break
            if b > start:
                start = b
        else:
            pos = len(iv)
        iv.insert(pos, (start, start + hold))
        self.lock_held += hold
        return start + hold

    # ---- busy accounting ---------------------------------------------------
    def set_status(self, w, st, t):
        if w.status == st:
            return
        self.idle_area += (self.P - self.n_busy) * (t - self.t_last)
        self.t_last = t
        if w.status == BUSY:
            self.n_busy -= 1
        if st == BUSY:
            self.n_busy += 1
        w.status = st
        if self.n_busy == self.P and self.all_busy_at is None:
            self.all_busy_at = t
        if self.n_busy > self.peak_busy:
            self.peak_busy = self.n_busy
        if self.n_busy >= 0.9 * self.P and self.busy90_at is None:
            self.busy90_at = t

    # ---- positions ---------------------------------------------------------
    def pos(self, ctx, t):
        if t <= ctx.t_ref:
            return ctx.p_ref
        return ctx.p_ref + (t - ctx.t_ref) / self.c

    def overhead(self, w, t, until):
        """Task w spends [t, until) on scheduler work: no progress."""
        ctx = w.stack[-1]
        p = self.pos(ctx, t)
        ctx.p_ref = p
        ctx.t_ref = max(ctx.t_ref, until)

    def schedule_reach(self, w):
        ctx = w.stack[-1]
        target = ctx.shared[-1].start if ctx.shared else ctx.size
        tt = ctx.t_ref + (target - ctx.p_ref) * self.c
        w.gen += 1
        self.push(tt, EV_REACH, w, w.gen)

    def oldest_pending(self, ctx, p):
        """The oldest queued fork of ctx at position p (the fork of node p is
        done): (right desc, right start, right size, left desc, left start),
        or ('block', end) when p is inside a leaf block (no fork until its
        end), or None."""
        W = self.W
        if ctx.shared:
            s = ctx.shared[-1]
            d, i = s.left, s.left_start
        else:
            d, i = ctx.desc, 0
        lb = self.leaf_block
        while d is not None:
            if p < i:
                return None
            if lb and W.size(d) <= lb:
                end = i + W.size(d)
                return ("block", end) if p < end else None
            kids = W.children(d)
            if kids is None:
                return None
            l, ls, r, rs, forks = kids
            li = i + W.cost(d)
            rstart = li + ls
            if p < rstart:
                if forks:
                    return (r, rstart, rs, l, li)
                d, i = l, li
            else:
                d, i = r, rstart
        return None

    def next_fork(self, d, i, p):
        """Long-leaf workloads: the position of the first fork (with
        join_ticks, fork or join) at or after p in subtree d (starting at
        i), in execution order, or None. O(depth):
        every internal node of these workloads forks or has a forking
        leftmost descendant."""
        W = self.W
        if i + W.size(d) <= p:
            return None
        kids = W.children(d)
        if kids is None:
            return None
        l, ls, r, rs, forks = kids
        if forks and i >= p:
            return i
        li = i + W.cost(d)
        if l is not None:
            q = self.next_fork(l, li, p)
            if q is not None:
                return q
        if forks and self.join_ticks and li + ls >= p:
            return li + ls                 # what-if: the join reads the flag too
        if r is not None:
            return self.next_fork(r, li + ls, p)
        return None

    def time_at(self, ctx, q):
        """When ctx reaches position q (q at or ahead of its position now)."""
        return ctx.t_ref + max(0.0, q - ctx.p_ref) * self.c

    def arm_answer(self, w, t):
        """Long-leaf workloads: (re)schedule w's answer from time t (no
        tick gap: on_answer looks for the next fork from the position at t,
        which may be at t itself); a newer arming cancels an older one."""
        w.agen += 1
        w.ans_q = None
        w.answer_pending = True
        self.push(t, EV_ANSWER, w, w.agen)     # on_answer finds the next fork itself

    def has_pending(self, w, t):
        ctx = w.stack[-1]
        if ctx.waiting is not None:
            return False
        if ctx.rng is not None and ctx.rng.left() > 0:
            return True
        p = self.pos(ctx, t)
        r = self.oldest_pending(ctx, p if self.long else int(p))
        return r is not None and r[0] != "block"

    # ---- ring ------------------------------------------------------------
    def ring_push(self, job):
        self.ring.append(job)
        self.ring_live += 1

    def put_range(self, R, now):
        """--claims: range R goes into the ring as one entry (lock held);
        one idle task, if any, is woken. Returns when the sharer is done."""
        n = R.left()
        e = Job(None, 0, sum(R.members[i].size for i in range(R.lo, R.hi)), R.sharer, None, 0)
        e.rng = R
        R.entry = e
        r = R.sharer.req_from
        if self.direct and r is not None:
            # --direct: into the requester's mailbox (a store; it spins),
            # after taking its name from the request word (another's line)
            now += self.c_claim
            R.sharer.req_from = None
            r.req_to = None
            r.rgen += 1
            e.state = TAKEN
            r.mail = e
            self.stats["direct"] += 1
            self.stats["shares"] += 1
            self.stats["records"] += n
            if n > 1:
                self.stats["batches"] += 1
                now += self.c_batch_rec * (n - 1)
            now += self.c_spin_wake
            self.wake(r, now, self.spin_lat)
            return now
        if self.handoff:
            for i in range(len(self.idle) - 1, -1, -1):
                v = self.idle[i]
                if not v.stack:            # in its worker loop (not a joiner)
                    del self.idle[i]
                    e.state = TAKEN        # not in the ring; its members are still unclaimed
                    v.mail = e
                    self.stats["handoffs"] += 1
                    break
            else:
                v = None
            if v is not None:
                self.stats["shares"] += 1
                self.stats["records"] += n
                if n > 1:
                    self.stats["batches"] += 1
                    now += self.c_batch_rec * (n - 1)
                return self.wake_call(v, now)
        self.ring_push(e)
        self.stats["shares"] += 1
        self.stats["records"] += n
        if n > 1:
            self.stats["batches"] += 1
            now += self.c_batch_rec * (n - 1)
        if self.idle:
            v = self.idle.pop()
            now = self.wake_call(v, now)
        return now

    def claim_member(self, w, R, t):
        """--claims: w claims R's oldest unclaimed member at t (one atomic
        operation) and runs it: its context, not yet on w's stack."""
        m = R.members[R.lo]
        R.lo += 1
        m.state = TAKEN
        m.taker = w
        m.taken_t = t
        ctx = Ctx(m.desc, m.size, m, t + self.c_claim)
        ctx.rng = R
        return ctx

    def ring_pop(self):
        while self.ring_head < len(self.ring):
            j = self.ring[self.ring_head]
            self.ring_head += 1
            if j.state == SHARED:
                self.ring_live -= 1
                return j
        return None

    # ---- heartbeat thread ----------------------------------------------------
    def hb_kick(self, t):
        if self.hb_asleep and self.P > 1:
            self.hb_asleep = False
            self.hb_gen += 1
            awake = t + self.L             # woken (wake latency)
            kind = None
            if self.beat_on_kick and self.hb_busy_sleep:
                # clove__heartbeat_main (src/heartbeat.c): after an all-busy
                # sleep, beat as soon as awake, but never less than an
                # interval after the previous beat (the wait for the rest of
                # the interval is late like any timed wait: the beat comes a
                # period after the previous one); a probe pass follows
                # (on_beat)
                # (beat_on_kick="now": no such limit, designs.py's
                # "unlimited beat on kick" rows)
                at = awake if (awake - self.last_beat >= self.H or self.beat_on_kick == "now") \
                    else self.last_beat + self.period
                kind = KICK
            else:
                # after a sleep with no run (run_enter's kick), or with
                # --no-beat-on-kick: one full interval before the beat
                at = awake + self.period
                if self.start_gate and not self.hb_busy_sleep and self.run_age_div:
                    at = awake + self.H / self.run_age_div + (self.period - self.H)
            self.hb_busy_sleep = False
            self.push(at, EV_BEAT, kind, self.hb_gen)

    def raise_flag(self, w, t, rearm=False):
        """Raise w's flag at time t (t may lie ahead of the event being
        processed: a taker queued for the lock raises flags when it gets
        it). flag_t keeps when the flag went up, for the steal test.
        rearm (what-if share_after_steal=False): the flag only makes the
        next fork reserve again, unless it was already raised to share."""
        if not rearm:
            w.rearm = False
        elif not w.flag:
            w.rearm = True
        if not w.flag or t < w.flag_t:
            w.flag_t = t
        w.flag = True

    def try_steal(self, w, t, every=False):
        """clove__steal_locked: if some task is idle and the ring has room,
        claim w's reserve - its oldest queued fork, unless the heartbeat
        thread already took it and w has not forked since - and share it as
        w's own handler would; only if w's flag is still raised (heartbeat_pass
        reads BEAT), unless every (the rejected --steal-every-beat). Returns
        the idle task taken off the idle list (woken by the heartbeat thread
        after unlocking), or None."""
        if not self.idle or self.ring_live >= self.ring_cap:
            return None
        if w.status != BUSY or w.stolen >= self.reserves:
            return None
        if not every and (not w.flag or w.flag_t > t):
            return None                # (a flag that goes up later is not yet unanswered)
        ctx = w.stack[-1]
        if ctx.waiting is not None:
            return None
        if t < ctx.t_ref and ctx.p_ref == 0 and ctx.job is not None:
            return None                # a job taken but not started (the taker still queues
                                       # for the lock): no fork yet, so no reserve
        p = self.pos(ctx, t)
        pend = self.oldest_pending(ctx, p if self.long else int(p))
        if pend is None or pend[0] == "block":
            return None
        r, rstart, rs, l, lstart = pend
        job = Job(r, rstart, rs, w, l, lstart)
        ctx.shared.append(job)
        job.octx = ctx
        if self.claims:
            R = Range([job], 0, 1, w, w)
            R.entry = Job(None, 0, rs, w, None, 0)
            R.entry.rng = R
            self.ring_push(R.entry)
        else:
            self.ring_push(job)
        v = self.idle.pop()
        self.stats["steals"] += 1
        w.stolen += 1
        # steal_locked stores BEAT: re-reserve at the next fork (which, with
        # a task still idle, also shares the next oldest fork)
        self.raise_flag(w, t, rearm=not self.share_after_steal)
        self.schedule_reach(w)         # the owner now stops at the stolen fork's join
        if self.long:
            self.arm_answer(w, t)      # its next fork may now lie behind that join
        return v

    def flag_all(self, t, steal=False, probe=False):
        """heartbeat_pass: raise the flag of every task that is not idle.
        With the reserve (steal, from the heartbeat thread): first, for each
        busy task whose flag is still raised (no fork since the last beat,
        or raised by a cascade since; with the rejected steal_every_beat,
        at a normal beat: every busy task), claim and share its reserve, at
        most hb_wake_batch per beat (the rest of the walk waits a beat, as
        in src/heartbeat.c). probe (heartbeat_pass's HB_PASS_PROBE): the
        steals only, no flag raised. Returns when the heartbeat thread is
        done (its wake calls included)."""
        thieves = []
        skip = ()
        robbed = set()
        every = self.steal_every_beat and not probe
        if steal and self.reserve:
            order = self.tasks[1:] + self.tasks[:1]   # workers, then the caller
            for i, w in enumerate(order):
                if w.status == IDLE or (not every and not w.flag):
                    continue
                v = self.try_steal(w, t, every)
                if v is not None:
                    thieves.append(v)
                    if not self.share_after_steal:
                        robbed.add(w.idx)      # what-if: no BEAT after the steal
                    if len(thieves) == self.hb_wake_batch:
                        skip = set(x.idx for x in order[i + 1:])
                        break
        end = self.locked(t, self.c_hb_task * self.P + len(thieves) * self.c_lock)
        if probe:
            self.stats["probe_steals"] += len(thieves)
        for w in () if probe else self.tasks:
            if w.status != IDLE and w.idx not in skip and w.idx not in robbed:
                self.raise_flag(w, t)
                if w.status == BUSY and not w.answer_pending and w.stack[-1].waiting is None:
                    if self.long:
                        self.arm_answer(w, t)
                    else:
                        w.answer_pending = True
                        self.push(t + self.tick_gap, EV_ANSWER, w)
        if not thieves:
            return t
        now = end
        for v in thieves:              # woken after unlocking, one call each
            now = self.wake_call(v, now)
        return now

    def on_beat(self, t, gen, kick=False):
        if gen != self.hb_gen or self.hb_asleep:
            return
        t_end = t
        if self.idle:
            self.stats["beats"] += 1
            self.min_beat_gap = min(self.min_beat_gap, t - self.last_beat)
            t_end = self.flag_all(t, steal=True)
            self.last_beat = t_end
            if kick:
                self.stats["kick_beats"] += 1
            if kick and self.probe_div:
                # src/heartbeat.c: a beat on kick is followed, interval /
                # HB_PROBE_DIV later (a timed wait, late like any), by a
                # probe pass; the thread stays awake until then
                self.push(t_end + self.H / self.probe_div + (self.period - self.H), EV_PROBE,
                          None, gen)
                return
        self.after_pass(t_end, gen)

    def after_pass(self, t_end, gen):
        """clove__heartbeat_main's loop top: sleep if nobody is idle, else
        the next beat one period later."""
        if not self.idle:
            self.hb_asleep = True      # nobody idle: sleep until kicked
            self.hb_busy_sleep = True
        else:
            self.push(t_end + self.period, EV_BEAT, None, gen)

    def on_probe(self, t, gen):
        """The probe pass after a beat on kick (heartbeat_pass's
        HB_PASS_PROBE): steal from the tasks that have not answered that
        beat yet."""
        if gen != self.hb_gen or self.hb_asleep:
            return
        t_end = t
        if self.idle:
            self.stats["probes"] += 1
            t_end = self.flag_all(t, steal=True, probe=True)
        self.after_pass(t_end, gen)

    # ---- tasks -----------------------------------------------------------
    def go_idle(self, w, t):
        t = self.locked(t)
        self.enter_idle(w, t)
        self.hb_kick(t)

    def wants_work(self):
        """The cascade's test (start_job): some task is idle (src/), or with
        --direct only a worker in its worker loop: one waiting at a join is
        left to the beats, its own records and the task it waits for."""
        if not self.direct:
            return bool(self.idle)
        return any(not v.stack for v in self.idle)

    def enter_idle(self, w, t, spin_until=None):
        """w goes on the idle list at t (lock held); with --spin-us it spins
        until t + spin (or spin_until), and a wake-up before then is cheap."""
        self.set_status(w, IDLE, t)
        self.idle.append(w)
        if self.spin:
            w.spin_until = t + self.spin if spin_until is None else spin_until

    def wake_call(self, v, t):
        """The waker, which took v off the idle list under the lock, wakes
        it from t; returns when the waker is done. A sleeping v costs the
        waker the wake call and runs the wake latency after it; a spinning
        one (--spin-us) costs a store (spin_wake) and runs spin_lat after
        it (it sees the store and takes the lock)."""
        if t < v.spin_until:
            self.stats["spin_wakes"] += 1
            t += self.c_spin_wake
            self.wake(v, t, self.spin_lat)
        else:
            t += self.c_wake_call
            self.wake(v, t)
        return t

    def wake(self, v, t_call_end, lat=None):
        """v leaves the idle list (done by the caller under the lock) and runs
        after the wake latency."""
        self.set_status(v, WAKING, t_call_end)
        self.stats["wakes"] += 1
        self.push(t_call_end + (self.L if lat is None else lat), EV_WOKEN, v)

    def start_job(self, w, job, t):
        job.state = TAKEN
        job.taker = w
        job.taken_t = t
        self.stats["taken"] += 1
        idle = self.wants_work()
        if self.cascade and idle:
            self.raise_flag(w, t)
        if self.cascade_owner and idle:
            # variant: the owner, who keeps the other half, shares again too
            o = job.owner
            self.raise_flag(o, t)
            if o.status == BUSY and not o.answer_pending and o.stack \
                    and o.stack[-1].waiting is None:
                if self.long:
                    self.arm_answer(o, t)
                else:
                    o.answer_pending = True
                    self.push(t + self.tick_gap, EV_ANSWER, o)
        if job.rng is not None:            # --claims: the range's first member
            job.rng.taken_t = t
            ctx = self.claim_member(w, job.rng, t)
        else:
            ctx = Ctx(job.desc, job.size, job, t)
        w.stack.append(ctx)
        self.set_status(w, BUSY, t)
        self.schedule_reach(w)
        if self.long:
            if w.flag:
                self.arm_answer(w, t)
        elif w.flag and not w.answer_pending:
            w.answer_pending = True
            self.push(t + self.tick_gap, EV_ANSWER, w)

    def short_job(self, job, t):
        """The request's test: the job ran for less than request_max."""
        return t - job.taken_t < self.request_max

    def request_of(self, job, o, t):
        """Whom a finished job requests from and whether for one record:
        (o, False) after a short job (a batch), (o, True) after a longer
        one with --request-one (asked only if no other task is idle:
        take_or_sleep), else (None, False)."""
        if self.short_job(job, t):
            return o, False
        return (o, True) if self.request_one else (None, False)

    def take_or_sleep(self, w, t, owner=None, one=False, spin_until=None):
        """Under the lock: take the oldest ring job or go idle. owner: of
        the shared job w just finished (for the request); one: request one
        record, not a batch."""
        t = self.locked(t)
        job = self.ring_pop()
        if job is not None:
            self.start_job(w, job, t)
        else:
            self.enter_idle(w, t, spin_until)
            if self.request and self.request_to == "pending" and not self.direct:
                owner = self.pick_victim(w, owner, t)
            if one and len(self.idle) > 1:
                owner = None               # REQ_ONE: only with nobody else idle
            if self.request and owner is not None and owner.status == BUSY \
                    and owner.stack and owner.stack[-1].waiting is None:
                # the request: the owner shares at its next fork
                self.stats["requests"] += 1
                self.raise_flag(owner, t)
                owner.req = owner.req is True or not one
                if not owner.req:
                    owner.req = "one"
                if not owner.answer_pending:
                    owner.answer_pending = True
                    self.push(t + self.tick_gap, EV_ANSWER, owner)
            self.hb_kick(t)
            if self.idle_request:
                self.flag_all(t)

    def work_of(self, v, t):
        """How much v could share now (0: nothing; the sim's stand-in for
        v's reserve word being set)."""
        if v.status != BUSY or not v.stack or v.stack[-1].waiting is not None:
            return 0
        ctx = v.stack[-1]
        if ctx.rng is not None and ctx.rng.left() > 0:
            R = ctx.rng
            return sum(R.members[i].size for i in range(R.lo, R.hi))
        p = self.pos(ctx, t)
        r = self.oldest_pending(ctx, p if self.long else int(p))
        return 0 if r is None or r[0] == "block" else r[2]

    def pick_victim(self, w, owner, t, free=False):
        """The task to request from, going idle (--request-to pending, and
        every --direct request): owner (the hint: of the job just finished)
        if it has a queued fork, else the next task after the last one
        picked that has one (src/ would read each task's reserve word: one
        load per task looked at). free (--direct): only a task nobody has
        asked yet; returns (task or None, tasks looked at)."""
        def ok(v):
            return v is not w and (not free or v.req_from is None) and self.work_of(v, t) > 0
        if owner is not None and ok(owner):
            return (owner, 1) if free else owner
        n = self.P
        for k in range(1, n + 1):
            v = self.tasks[(self.victim_rr + k) % n]
            if ok(v):
                self.victim_rr = v.idx
                return (v, k + 1) if free else v
        return (None, n + 1) if free else None

    def resume(self, w, t):
        """w's top context continues (after its waited job is DONE)."""
        ctx = w.stack[-1]
        s = ctx.waiting
        ctx.waiting = None
        ctx.p_ref = s.start + s.size
        ctx.t_ref = t
        self.set_status(w, BUSY, t)
        self.schedule_reach(w)
        if self.long:
            if w.flag:
                self.arm_answer(w, t)
        elif w.flag and not w.answer_pending:
            w.answer_pending = True
            self.push(t + self.tick_gap, EV_ANSWER, w)

    def on_answer(self, w, t, gen=0):
        if self.long and gen != w.agen:
            return                         # superseded by a later arming
        w.answer_pending = False
        if w.status != BUSY or not w.flag or not w.stack or w.stack[-1].waiting is not None:
            if w.req_from is not None and (w.status != BUSY or not w.stack
                                           or w.stack[-1].waiting is not None):
                self.refuse(w, t)
            return
        ctx = w.stack[-1]
        if self.long:
            # the flag is read at the next fork: none inside a leaf, and
            # none past the next join of a shared fork (re-armed there)
            p = self.pos(ctx, t)
            if w.ans_q is not None and w.ans_q[0] is ctx:
                p = max(p, w.ans_q[1])
            w.ans_q = None
            q = self.next_fork(ctx.desc, 0, p)
            limit = ctx.shared[-1].start if ctx.shared else ctx.size
            if q is None or q >= limit:
                return
            if q > p:
                w.answer_pending = True
                w.ans_q = (ctx, q)
                self.push(self.time_at(ctx, q), EV_ANSWER, w, w.agen)
                return
        else:
            p = int(self.pos(ctx, t))
        if self.leaf_block:
            r = self.oldest_pending(ctx, p)
            if r is not None and r[0] == "block":  # answered at the block's end
                w.answer_pending = True
                self.push(ctx.t_ref + (r[1] - ctx.p_ref) * self.c if t < ctx.t_ref
                          else t + (r[1] - p) * self.c, EV_ANSWER, w)
                return
        w.flag = False
        req, w.req = w.req, False
        w.stolen = 0                       # the handler reserves again (or the next fork does)
        self.stats["answers"] += 1
        if w.rearm:                        # what-if share_after_steal=False: reserve only
            w.rearm = False
            return
        direct = self.direct and w.req_from is not None
        if not direct and not self.idle:
            return
        R = ctx.rng
        if self.claims and R is not None and R.left() > 0:
            # the range's unclaimed members are older than the member's own
            # forks: split off the upper half (all of it if one is left)
            now = t if direct else self.locked(t)
            mid = R.lo + R.left() // 2
            R2 = Range(R.members, mid, R.hi, R.owner, w)
            R.hi = mid
            now = self.put_range(R2, now)
            self.stats["splits"] += 1
            self.overhead(w, t, now)
            self.schedule_reach(w)
            return
        pend = self.oldest_pending(ctx, p)
        if pend is None or pend[0] == "block":
            if direct:
                self.refuse(w, t)
            return
        now = t
        shared = 0
        if self.batch > 1 or self.claims:
            # a batch: the oldest queued forks, up to the batch size, one
            # lock hold, one ring entry, one task woken
            if self.adaptive:
                # a request is answered with a batch that doubles at each
                # request; a beat, and a request for one record, share one
                # fork (src/share.c, "Requests and batches")
                if req is True:
                    w.bsize = min(self.batch, 2 * w.bsize)
                n = w.bsize if req is True else 1
            else:
                n = self.batch
            if not direct:
                now = self.locked(now)
            members = []
            while len(members) < n and pend is not None and pend[0] != "block":
                r, rstart, rs, l, lstart = pend
                job = Job(r, rstart, rs, w, l, lstart)
                ctx.shared.append(job)
                job.octx = ctx
                members.append(job)
                pend = self.oldest_pending(ctx, p)
            if self.claims:
                now = self.put_range(Range(members, 0, len(members), w, w), now)
                self.overhead(w, t, now)
                self.schedule_reach(w)
                return
            self.stats["shares"] += 1          # a batch counts once, as in clove_stats
            self.stats["records"] += len(members)
            if len(members) == 1:
                self.ring_push(members[0])
            else:
                b = Job(batch_desc([(m.desc, m.size) for m in members]), 0,
                        sum(m.size for m in members), w, None, 0)
                b.members = members
                for m in members:
                    m.batch = b
                self.ring_push(b)
                self.stats["batches"] += 1
                now += self.c_batch_rec * (len(members) - 1)
            v = self.idle.pop()
            now = self.wake_call(v, now)
            self.overhead(w, t, now)
            self.schedule_reach(w)
            return
        while shared < self.k and self.idle and pend is not None and pend[0] != "block" \
                and self.ring_live < self.ring_cap:
            r, rstart, rs, l, lstart = pend
            now = self.locked(now)
            job = Job(r, rstart, rs, w, l, lstart)
            ctx.shared.append(job)
            job.octx = ctx
            self.ring_push(job)
            v = self.idle.pop()
            now = self.wake_call(v, now)
            self.stats["shares"] += 1
            shared += 1
            pend = self.oldest_pending(ctx, p)
        self.overhead(w, t, now)
        self.schedule_reach(w)

    def on_reach(self, w, t, gen):
        if gen != w.gen or w.status != BUSY:
            return
        ctx = w.stack[-1]
        if ctx.shared:
            s = ctx.shared.pop()
            ctx.p_ref = float(s.start)
            ctx.t_ref = t
            if self.claims:
                self.join_claimed(w, ctx, s, t)
                return
            b = s.batch
            if b is not None and s.state == SHARED:
                # the newest member of a batch still in the ring: the
                # batch shrinks by one
                assert b.members[-1] is s
                b.members.pop()
                b.size -= s.size
                if b.members:
                    b.desc = batch_desc([(m.desc, m.size) for m in b.members])
                    self.ring_live += 1    # the entry stays (taken off again below)
                else:
                    b.state = RECLAIMED
                s._st = SHARED
                s.batch = None
            elif b is not None and s.state == TAKEN and len(b.members) > 1 and self.adaptive:
                s.owner.bsize = max(1, s.owner.bsize // 2)
            if s.state == SHARED:          # nobody took it: reclaim, run it here
                s.state = RECLAIMED
                self.ring_live -= 1
                self.stats["reclaims"] += 1
                end = self.locked(t, self.c_lock + self.c_reclaim)
                ctx.t_ref = end
                self.schedule_reach(w)
                if self.long and w.flag:
                    self.arm_answer(w, ctx.t_ref)
            elif s.state == DONE:
                ctx.p_ref = float(s.start + s.size)
                if b is not None and b.seen:
                    # a member of a batch this task has seen DONE already
                    # (src/share.c keeps it in task->done_batch): no lock
                    ctx.t_ref = t + self.c_join_done
                else:
                    ctx.t_ref = self.locked(t, self.c_lock + self.c_join_done)
                    if b is not None:
                        b.seen = True
                self.schedule_reach(w)
                if self.long and w.flag:
                    self.arm_answer(w, ctx.t_ref)
            else:                          # TAKEN: help, or sleep until done
                ctx.waiting = s
                self.stats["waits"] += 1
                self.take_or_sleep(w, t)
            return
        # the context is finished
        w.stack.pop()
        job = ctx.job
        if job is None:                    # the root: the run is over
            self.done_at = t
            return
        if self.claims:
            self.member_done(w, ctx, job, t)
            return
        now = self.locked(t)
        job.state = DONE
        o = job.owner
        ow = o.stack[-1].waiting if o.stack else None
        if o.status == IDLE and ow is not None and (ow is job or ow.batch is job):
            self.idle.remove(o)
            now = self.wake_call(o, now)
        if w.stack:                        # we were helping while waiting
            below = w.stack[-1]
            if below.waiting.state == DONE:
                self.resume(w, now)
            else:
                self.take_or_sleep(w, now, *self.request_of(job, o, t))
        else:
            self.take_or_sleep(w, now, *self.request_of(job, o, t))

    def join_claimed(self, w, ctx, s, t):
        """--claims: the owner w joins its shared record s (on_reach): an
        unclaimed member is claimed back and run here (one atomic operation,
        no lock), a DONE one costs a load, and only a started one is
        waited for."""
        R = s.rng
        if s.state == SHARED:
            # the newest member left in its range (the owner joins newest
            # first; a runner claims oldest first)
            assert R.members[R.hi - 1] is s
            R.hi -= 1
            if R.left() == 0 and R.entry is not None and R.entry.state == SHARED:
                R.entry.state = RECLAIMED  # the ring entry is dead
                self.ring_live -= 1
            s.state = RECLAIMED
            self.stats["reclaims"] += 1
            ctx.t_ref = t + self.c_local
        elif s.state == DONE:
            ctx.p_ref = float(s.start + s.size)
            ctx.t_ref = t + self.c_done
        else:                              # TAKEN: help, or sleep until done
            if self.adaptive and len(R.members) > 1:
                w.bsize = max(1, w.bsize // 2)
            ctx.waiting = s
            self.stats["waits"] += 1
            if self.self_help and self.help_self(w, t + self.c_claim):
                return
            if self.direct_joiners:
                w.deadline = t + self.spin
                w.ask_after = t + self.join_ask_after
                self.go_request(w, t + self.c_claim)
            else:
                self.take_or_sleep(w, t + self.c_claim)
            return
        self.schedule_reach(w)
        if self.long and w.flag:
            self.arm_answer(w, ctx.t_ref)

    def help_self(self, w, t):
        """--self-help: w waits at a join (its top context); claim the newest
        unclaimed record among the older ones it shared from that context
        (the top of its range: newer members of that range are claimed or
        joined) and run it on top, as a helping job. Returns whether it
        found one."""
        ctx = w.stack[-1]
        sh = ctx.shared
        a, b = 0, 0
        if ctx.hc is not None and ctx.hc[1] <= len(sh) and ctx.hc[1] > 0 \
                and sh[ctx.hc[1] - 1] is ctx.hc[2]:
            a, b = ctx.hc[0], ctx.hc[1]
        looked = 0
        found = None
        i = len(sh) - 1
        while i >= 0:
            if a <= i < b:
                i = a - 1
                continue
            looked += 1
            if sh[i].state == SHARED:
                found = i
                break
            i -= 1
        lo = 0 if found is None else found + 1
        ctx.hc = (lo, len(sh), sh[-1]) if sh and lo < len(sh) else None
        t += self.c_look * looked
        if found is None:
            ctx.t_ref = max(ctx.t_ref, t)
            return False
        r = sh[found]
        R = r.rng
        assert R.members[R.hi - 1] is r
        R.hi -= 1
        if R.left() == 0 and R.entry is not None and R.entry.state == SHARED:
            R.entry.state = RECLAIMED
            self.ring_live -= 1
        r.state = TAKEN
        r.taker = w
        r.taken_t = t
        t += self.c_local
        self.stats["self_helps"] += 1
        nctx = Ctx(r.desc, r.size, r, t)
        w.stack.append(nctx)
        self.set_status(w, BUSY, t)
        self.schedule_reach(w)
        if self.long:
            if w.flag:
                self.arm_answer(w, t)
        elif w.flag and not w.answer_pending:
            w.answer_pending = True
            self.push(t + self.tick_gap, EV_ANSWER, w)
        return True

    def member_done(self, w, ctx, job, t):
        """--claims: w finished member job (on_reach): DONE (an atomic
        exchange; the lock and a wake call only if the owner sleeps waiting
        for it), then the next member of its range, if any is unclaimed."""
        now = t + self.c_local
        job.state = DONE
        o = job.owner
        ow = o.stack[-1].waiting if o.stack else None
        if o.status == IDLE and ow is job:
            if o in self.idle:
                now = self.locked(now)
                self.idle.remove(o)
                now = self.wake_call(o, now)
            else:                          # --direct: it spins, requesting
                now += self.c_spin_wake
                o.rgen += 1
                self.push(now + self.spin_lat, EV_RETRY, o, o.rgen)
        R = ctx.rng
        if R is not None and R.left() > 0:
            nctx = self.claim_member(w, R, now)
            w.stack.append(nctx)
            self.schedule_reach(w)
            if self.long:
                if w.flag:
                    self.arm_answer(w, nctx.t_ref)
            elif w.flag and not w.answer_pending:
                w.answer_pending = True
                self.push(nctx.t_ref + self.tick_gap, EV_ANSWER, w)
            return
        one = False
        if R is None:
            req, one = self.request_of(job, o, t)
        else:
            # As request_of: a batch after a short range; after a longer
            # one, with --request-one, one record if nobody else is idle
            # (src/). --request-to pending picks its own task then.
            req = R.sharer if self.request_to == "sharer" else R.owner
            if t - R.taken_t >= self.request_max:
                if self.request_one and self.request_to != "pending":
                    one = True
                else:
                    req = None
        if w.stack:                        # we were helping while waiting
            below = w.stack[-1]
            if below.waiting.state == DONE:
                self.resume(w, now)
                return
            if self.self_help and self.help_self(w, now):
                return
            if self.direct_joiners:
                w.deadline = now + self.spin
                self.go_request(w, now)
                return
        elif self.direct and not (self.owner_only and req is None):
            hint = R.sharer if R is not None and self.request_to == "sharer" else o
            w.req_short = req is not None and not one  # (a long job asks for one record)
            w.deadline = now + self.spin
            self.go_request(w, now, hint)
            return
        self.take_or_sleep(w, now, req, one)

    def go_request(self, w, t, hint=None):
        """--direct: w, in its worker loop with nothing to run, takes a ring
        job if there is one (the lock), else requests from a task with a
        queued fork (pick_victim) and spins; with no such task, or past its
        deadline, it sleeps (take_or_sleep)."""
        if w.stack and w.stack[-1].waiting.state == DONE:
            self.resume(w, t)              # a joiner whose job is done meanwhile
            return
        if w.stack and not self.direct_joiners:
            self.take_or_sleep(w, t)
            return
        if self.ring_live > 0 or t >= w.deadline:
            self.stats["req_ring" if self.ring_live > 0 else "req_deadline"] += 1
            self.take_or_sleep(w, t, None, spin_until=w.deadline)
            return
        if w.stack and t < w.ask_after:
            # a joiner that has not waited long enough to ask: it watches
            # its job, and looks again a retry later
            self.set_status(w, IDLE, t)
            w.req_to = None
            w.rgen += 1
            self.push(min(t + self.retry, w.ask_after, w.deadline), EV_RETRY, w, w.rgen)
            return
        if w.stack:
            # a joiner: only from the task running the job it waits for,
            # or from the one that task waits for, and so on (helping's
            # leapfrog rule: those jobs lie inside the awaited one)
            v, looked = None, 0
            x = w.stack[-1].waiting.taker
            for _ in range(self.join_links):
                looked += 1
                if x is None or x is w:
                    break
                if x.req_from is None and self.work_of(x, t) > 0:
                    v = x
                    break
                if x.status == BUSY and x.stack and x.stack[-1].waiting is not None:
                    x = x.stack[-1].waiting.taker
                else:
                    break
            if v is None and self.join_desc:
                # what-if: any task running a job forked inside the awaited one
                s0 = w.stack[-1].waiting
                for x in self.tasks:
                    looked += 1
                    if x is w or x.req_from is not None or self.work_of(x, t) == 0:
                        continue
                    j = x.stack[-1].job
                    while j is not None and j is not s0 and j.octx is not None:
                        j = j.octx.job
                    if j is s0:
                        v = x
                        break
            t += self.c_scan * looked
            if v is None:
                # nothing there now: spin, look again a retry later
                self.stats["join_retries"] += 1
                self.set_status(w, IDLE, t)
                w.req_to = None
                w.rgen += 1
                self.push(min(t + self.retry, w.deadline), EV_RETRY, w, w.rgen)
                return
            self.stats["join_requests"] += 1
        elif self.owner_only:
            if hint is None or hint is w or hint.req_from is not None:
                # nobody to ask, or another worker asks it (src/: the CAS
                # fails, the request goes through the ring)
                self.stats["req_none"] += 1
                self.take_or_sleep(w, t, hint if hint is not w else None,
                                   not w.req_short, spin_until=w.deadline)
                return
            v, looked = hint, 1
            t += self.c_scan
        else:
            v, looked = self.pick_victim(w, hint, t, free=True)
            t += self.c_scan * looked
        if v is None:
            if any(x is not w and self.work_of(x, t) > 0 for x in self.tasks):
                # every task with a queued fork has a requester already:
                # keep spinning, look again later
                self.stats["req_busy"] += 1
                self.set_status(w, IDLE, t)
                w.req_to = None
                w.rgen += 1
                self.push(min(t + self.retry, w.deadline), EV_RETRY, w, w.rgen)
                return
            self.stats["req_none"] += 1
            self.take_or_sleep(w, t, None, spin_until=w.deadline)
            return
        t += self.c_claim                  # the request: a CAS on v's request word
        self.set_status(w, IDLE, t)
        w.req_to = v
        v.req_from = w
        self.stats["requests"] += 1
        self.raise_flag(v, t)
        if w.req_short or w.stack:
            v.req = True
        if not v.answer_pending and v.stack and v.stack[-1].waiting is None:
            v.answer_pending = True
            self.push(t + self.tick_gap, EV_ANSWER, v)
        w.rgen += 1
        self.push(min(t + self.retry, w.deadline), EV_RETRY, w, w.rgen)

    def refuse(self, v, t):
        """--direct: v has nothing to hand its requester: it clears the
        request, and the requester looks elsewhere once it sees that."""
        r = v.req_from
        v.req_from = None
        if r is not None and r.req_to is v:
            r.req_to = None
            r.rgen += 1
            self.stats["refusals"] += 1
            self.push(t + self.spin_lat, EV_RETRY, r, r.rgen)

    def on_retry(self, w, t, gen):
        """--direct: a requester looks again: answered meanwhile (a stale
        event), still waiting on a task that has a queued fork (keep
        waiting), or not (cancel, look elsewhere or sleep)."""
        if gen != w.rgen or w.status != IDLE or w in self.idle:
            return
        v = w.req_to
        if w.stack and w.stack[-1].waiting.state == DONE:
            # a joiner whose job is done: it stops requesting and goes on
            if v is not None:
                w.req_to = None
                if v.req_from is w:
                    v.req_from = None
                t += self.c_claim
            self.resume(w, t)
            return
        if v is not None:
            # not answered within a retry: v runs a leaf (no fork); cancel
            # (a CAS on v's request word) and sleep, so that the heartbeat
            # thread sees an idle task and may share v's reserve
            self.stats["req_timeout"] += 1
            w.req_to = None
            if v.req_from is w:
                v.req_from = None
            t += self.c_claim
            if self.owner_only:            # the request through the ring stands
                self.take_or_sleep(w, t, v, not w.req_short, spin_until=w.deadline)
            else:
                self.take_or_sleep(w, t, None, spin_until=w.deadline)
            return
        self.go_request(w, t)

    def on_woken(self, w, t):
        if w.mail is not None:             # --handoff: no lock, no ring
            e, w.mail = w.mail, None
            if e.rng.left() > 0:
                e.state = SHARED
                self.start_job(w, e, t)
                return
            self.stats["empty_wakes"] += 1
            if self.direct:
                self.go_request(w, t)
            else:
                self.take_or_sleep(w, t)
            return
        if w.stack and w.stack[-1].waiting is not None:   # a joiner
            ctx = w.stack[-1]
            if ctx.waiting.state == DONE:
                t = self.locked(t)
                if self.ring_live > 0 and self.idle:      # relay the wake
                    v = self.idle.pop()
                    t = self.wake_call(v, t)
                    self.stats["relays"] += 1
                self.resume(w, t)
                return
        t2 = self.locked(t)
        job = self.ring_pop()
        if job is not None:
            self.start_job(w, job, t2)
        else:
            self.stats["empty_wakes"] += 1
            self.enter_idle(w, t2)
            self.hb_kick(t2)
            if self.idle_request:
                self.flag_all(t2)

    def on_sample(self, t):
        bd = self.breakdown
        if bd is not None:
            idle = set(id(v) for v in self.idle)
            for v in self.tasks:
                if v.status == BUSY:
                    k = "busy"
                elif v.status == WAKING:
                    k = "waking"
                else:
                    k = ("joiner " if v.stack else "free ") + (
                        ("spinning" if t < v.spin_until else "asleep") if id(v) in idle
                        else "requesting")
                bd[k] = bd.get(k, 0.0) + self.sample_dt
        non_busy = self.P - self.n_busy
        if non_busy:
            work = self.ring_live > 0 or any(
                w.status == BUSY and self.has_pending(w, t) for w in self.tasks)
            if work:
                self.idle_work_area += non_busy * self.sample_dt
        self.push(t + self.sample_dt, EV_SAMPLE)

    # ---- main loop -------------------------------------------------------------
    def run(self):
        W = self.W
        root = self.tasks[0]
        for w in self.tasks[1:]:
            self.idle.append(w)            # pool workers sleep on the idle list
        ctx = Ctx(W.root, W.size(W.root), None, 0.0)
        root.stack.append(ctx)
        self.set_status(root, BUSY, 0.0)
        self.schedule_reach(root)
        if self.P > 1 and self.hb_phase is None:
            self.hb_kick(0.0)              # run_enter kicks the heartbeat thread
        elif self.P > 1:
            # variant: the heartbeat thread is still awake from a previous run
            # (it stays up HB_GRACE_BEATS intervals): first beat hb_phase in
            self.hb_asleep = False
            self.hb_gen += 1
            first = self.hb_phase
            # the run is the only busy task: the pass that first finds it
            # stamps it and skips it, and a gate pass interval /
            # run_age_div later beats it (src/heartbeat.c heartbeat_pass: the
            # heartbeat thread stamps the run, no clock read per run)
            if self.run_age_div:
                first += self.H / self.run_age_div
            self.push(first, EV_BEAT, None, self.hb_gen)
        if self.P > 1:
            self.push(self.sample_dt / 2, EV_SAMPLE)
        heap = self.heap
        n = 0
        while heap and self.done_at is None:
            t, _, kind, w, gen = heapq.heappop(heap)
            self.now = t
            n += 1
            if n > self.max_events:
                raise RuntimeError("event limit reached")
            if kind == EV_REACH:
                self.on_reach(w, t, gen)
            elif kind == EV_ANSWER:
                self.on_answer(w, t, gen)
            elif kind == EV_WOKEN:
                self.on_woken(w, t)
            elif kind == EV_BEAT:
                self.on_beat(t, gen, w == KICK)
            elif kind == EV_RETRY:
                self.on_retry(w, t, gen)
            elif kind == EV_PROBE:
                self.on_probe(t, gen)
            elif kind == EV_SAMPLE:
                self.on_sample(t)
        self.stats["events"] = n
        T = self.done_at
        self.idle_area += (self.P - self.n_busy) * (T - self.t_last)
        return dict(
            workload=W.name, P=self.P, time_ns=T,
            idle_frac=self.idle_area / (self.P * T),
            lock_frac=self.lock_held / T if T > 0 else 0.0,
            idle_work_frac=min(1.0, self.idle_work_area / (self.P * T)),
            all_busy_hb=(self.all_busy_at / self.H) if self.all_busy_at is not None else None,
            busy90_hb=(self.busy90_at / self.H) if self.busy90_at is not None else None,
            first_beat_hb=(self.L + self.period) / self.H,
            peak_busy=self.peak_busy,
            min_beat_gap_ns=None if self.min_beat_gap == math.inf else self.min_beat_gap,
            stats=self.stats,
            breakdown=self.breakdown,
        )


# --------------------------------------------------------------------------
# Front end
# --------------------------------------------------------------------------
def make_work(spec):
    kind, _, arg = spec.partition(":")
    if kind == "tree":
        return TreeSum(int(float(arg)))
    if kind == "fib":
        return Fib(int(arg))
    if kind == "uts":
        return Uts(int(float(arg)))
    args = arg.split(":") if arg else []
    try:
        if kind == "pair" and len(args) == 1:
            return Rounds(1, parse_ms(args[0]))
        if kind == "rounds" and len(args) == 2:
            return Rounds(int(args[0]), parse_ms(args[1]))
        if kind == "fan" and len(args) == 2 and int(args[0]) >= 1:
            return Fan(int(args[0]), parse_ms(args[1]))
        if kind in ("map", "imap", "tmap") and len(args) in (2, 3):
            n, L = int(args[0]), parse_ms(args[1])
            seed = int(args[2]) if len(args) == 3 else 1
            what = {"map": "equal", "imap": f"exponential, seed {seed}", "tmap": "linear ramp"}[kind]
            return Map(map_leaves(kind, n, L, seed), f"{kind} {n} x {fmt_ms(L)} ({what})")
    except ValueError:
        pass
    raise SystemExit(f"unknown workload {spec!r} (tree:N, fib:N, pair:L, rounds:N:L, "
                     f"map:N:L, imap:N:L[:SEED], tmap:N:L, fan:K:L; L in ms or with us/ms/s)")


def default_cost(work):
    if getattr(work, "long", False):
        return work.unit_ns
    if isinstance(work, Fib):
        return DEFAULTS["c_call_fib"]
    if isinstance(work, Uts):
        return DEFAULTS["c_node_uts"]
    return DEFAULTS["c_node_tree"].get(work.n, DEFAULTS["c_node_tree_other"])


def workload_mem_demand(work):
    """How much of the machine model's memory contention a workload's node
    meets (machine_cost's mem_demand). The contention was fitted on the
    tree sum, whose node is a pointer chased through a tree too large for
    the caches: 1. fib and uts-loop touch no data structure (a call's
    argument, or a hash of the parent's id, in registers and a stack that
    stays in cache): 0, so on a machine they are limited by its
    hyperthreads alone. Long leaves are measured, not modelled: 1, as
    before."""
    return 0.0 if isinstance(work, (Fib, Uts)) else 1.0


# Options of --policy lace only (sim/lacesim.py)
LACE_OPTIONS = ("steal_us", "steal_fail_us", "sync_us", "leap_random")


def simulate(work, P, c_node=None, machine=None, policy=None, mem_demand=None, **kw):
    """One run of work on P workers. machine: a MACHINES name (the node
    cost then depends on P); mem_demand: the machine's memory contention
    scaled by this (default: the workload's own, workload_mem_demand);
    policy: a POLICIES name, whose rules the keyword arguments may
    override."""
    if c_node is None:
        c_node = default_cost(work)
    if policy is not None:
        kw = {**POLICIES[policy], **kw}
    if machine is not None:
        if mem_demand is None:
            mem_demand = workload_mem_demand(work)
        c_node = machine_cost(MACHINES[machine], c_node, P, mem_demand)
    if kw.pop("lace", False):
        import lacesim
        return lacesim.WorkSteal(work, P, c_node, **kw).run()
    for k in LACE_OPTIONS:
        kw.pop(k, None)
    return Sim(work, P, c_node, **kw).run()


def fmt_time(ns):
    if ns >= 1e9:
        return f"{ns / 1e9:.3f} s"
    if ns >= 1e6:
        return f"{ns / 1e6:.3f} ms"
    return f"{ns / 1e3:.1f} us"


def table(work, Ps, kw, out=sys.stdout, markdown=False):
    base = simulate(work, 1, **kw)
    rows = []
    for P in Ps:
        r = base if P == 1 else simulate(work, P, **kw)
        sp = base["time_ns"] / r["time_ns"]
        rows.append((P, r, sp))
    if markdown:
        print("| workers | time | speed-up | idle | idle while work exists | all busy after (heartbeats) | shares |", file=out)
        print("|---|---|---|---|---|---|---|", file=out)
    for P, r, sp in rows:
        ab = "-" if P == 1 or r.get("no_heartbeat") else ("never" if r["all_busy_hb"] is None else f"{r['all_busy_hb']:.2f}")
        if markdown:
            print(f"| {P} | {fmt_time(r['time_ns'])} | {sp:.2f}x | {100 * r['idle_frac']:.1f} % | "
                  f"{100 * r['idle_work_frac']:.1f} % | {ab} | {r['stats']['shares']} |", file=out)
        else:
            print(f"  P={P:4d}  time {fmt_time(r['time_ns']):>11s}  speed-up {sp:7.2f}x  "
                  f"idle {100 * r['idle_frac']:5.1f}%  idle-while-work {100 * r['idle_work_frac']:5.1f}%  "
                  f"all-busy {ab:>6s} hb  shares {r['stats']['shares']:6d}  "
                  f"steals {r['stats']['steals']:5d} (probe {r['stats']['probe_steals']:3d})  "
                  f"wakes {r['stats']['wakes']:6d} (empty {r['stats']['empty_wakes']:5d})  lock {100 * r['lock_frac']:5.2f}%  "
                  f"events {r['stats']['events']}", file=out)
        bd = r.get("breakdown")
        if bd:
            # worker-time by state; busy = the work (the 1-worker time)
            # plus the scheduler's work done on tasks' time
            parts = [f"work {base['time_ns'] / 1e6:.2f}",
                     f"overhead {(bd.get('busy', 0.0) - base['time_ns']) / 1e6:.2f}"]
            parts += [f"{k} {v / 1e6:.2f}" for k, v in sorted(bd.items()) if k != "busy"]
            print(f"{'':9s}worker-ms ({P * r['time_ns'] / 1e6:.2f} in all): " + ", ".join(parts),
                  file=out)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="Workloads: tree:N (balanced tree sum of N nodes), fib:N;\n"
                                        "long leaves (L in ms, or with a suffix: 500us, 2s): pair:L\n"
                                        "(clove_join2 of two leaves), rounds:N:L (N pairs in a loop),\n"
                                        "map:N:L (divide-and-conquer map over N items of L each),\n"
                                        "imap:N:L[:SEED] (item lengths exponential, mean L), tmap:N:L\n"
                                        "(item i costs 2L(i+1/2)/N), fan:K:L (fork K-1 leaves in a loop,\n"
                                        "run one). Defaults model src/:\n"
                                        "cascade with owner re-share, the reserve stolen from a task that\n"
                                        "left a beat unanswered, beat on kick (at most one per interval)\n"
                                        "followed by a probe pass interval/8 later. No beat on kick, no\n"
                                        "probe: add --no-beat-on-kick. The rejected alternative in which\n"
                                        "every beat steals: add --steal-every-beat --probe-div 0.\n"
                                        "Example: clovesim.py -w tree:1e7 -P 1 2 4 16 64 256")
    ap.add_argument("-w", "--workload", action="append", default=None,
                    help="tree:N, fib:N, pair:L, rounds:N:L, map:N:L, ... (repeatable; "
                         "default tree:1e7; see below)")
    ap.add_argument("-P", "--workers", type=int, nargs="+", default=[1, 2, 4, 16, 64, 256])
    ap.add_argument("--c-node", type=float, default=None,
                    help="ns per node / call on one thread (default: calibrated, see README)")
    ap.add_argument("--heartbeat-us", type=float, default=DEFAULTS["heartbeat_us"])
    ap.add_argument("--hb-late-us", type=float, default=None,
                    help="timer lateness added to each interval (default 0.1 H + 17 us)")
    ap.add_argument("--wake-us", type=float, default=DEFAULTS["wake_us"])
    ap.add_argument("--wake-call-us", type=float, default=DEFAULTS["wake_call_us"])
    ap.add_argument("--lock-us", type=float, default=DEFAULTS["lock_us"])
    ap.add_argument("--tick-gap-nodes", type=float, default=DEFAULTS["tick_gap_nodes"])
    ap.add_argument("--no-cascade", action="store_true", help="Spice's behaviour")
    ap.add_argument("-k", "--shares-per-beat", type=int, default=1)
    ap.add_argument("--contention", type=float, default=1.0,
                    help="multiply the node cost when P > 1 (crude memory contention; 1 = none)")
    ap.add_argument("--contention-ns", type=float, default=0.0,
                    help="add this to the node cost when P > 1 (memory contention measured "
                         "by the hand split: 2 x split - baseline, ns/node)")
    ap.add_argument("--idle-request", action="store_true",
                    help="variant: a task going idle raises every busy task's flag at once")
    ap.add_argument("--cascade-owner", action=argparse.BooleanOptionalAction, default=True,
                    help="when a shared job is taken while others are idle, its owner "
                         "shares again too (with the cascade: doubling per wake-up); src/, "
                         "default on; --no-cascade-owner: only the taker shares again")
    ap.add_argument("--reserve", action=argparse.BooleanOptionalAction, default=True,
                    help="the heartbeat thread shares the reserved oldest fork of a task that "
                         "left a beat unanswered (long leaves), while some task is idle; src/, "
                         "default on; --no-reserve: tasks keep no reserve")
    ap.add_argument("--steal-every-beat", action="store_true",
                    help="a rejected alternative: every normal beat steals the reserve of "
                         "every busy task, answered or not (a probe pass still steals only from "
                         "the unanswered)")
    ap.add_argument("--probe-div", type=int, default=8,
                    help="a beat on kick is followed, interval / N later (plus timer lateness), "
                         "by a probe pass: the reserve of every task that has not answered that "
                         "beat yet is stolen, no flag is raised (src/heartbeat.c HB_PROBE_DIV, "
                         "default 8); 0: no probe")
    ap.add_argument("--share-after-steal", action=argparse.BooleanOptionalAction, default=True,
                    help="after a steal the owner's flag is raised (steal_locked and "
                         "heartbeat_pass store BEAT), so its next fork also shares its next "
                         "oldest fork while a task is idle (src/, default); what-if "
                         "--no-share-after-steal: that fork only reserves again")
    ap.add_argument("--reserves", type=int, default=1,
                    help="what-if (src/ has 1): the heartbeat thread may take up to this many of "
                         "a task's oldest forks between two of its forks, one per beat")
    ap.add_argument("--join-ticks", action="store_true",
                    help="what-if (long-leaf workloads): clove_join's fast path also answers the "
                         "flag (and so re-reserves), as a tick would")
    ap.add_argument("--hb-phase-us", type=float, default=None,
                    help="the heartbeat thread is already awake when the run starts (back-to-back "
                         "runs in one pool) and first beats this long after the start; default: "
                         "asleep, kicked by run_enter (first beat after wake + one period)")
    ap.add_argument("--run-age-div", type=int, default=4,
                    help="with --hb-phase-us: a heartbeat pass skips the run while it is younger "
                         "than interval / this (src/heartbeat.c HB_RUN_AGE_DIV, default 4); "
                         "0: no such gate, the first pass beats it whatever its age")
    ap.add_argument("--beat-on-kick", action=argparse.BooleanOptionalAction, default=True,
                    help="woken by a task going idle during a run (after an all-busy sleep), "
                         "the heartbeat thread beats at once, but not sooner than one interval "
                         "after its previous beat, then probes (--probe-div); src/heartbeat.c, "
                         "default on; --no-beat-on-kick: one full period after the kick, "
                         "no probe")
    ap.add_argument("--request", action=argparse.BooleanOptionalAction, default=True,
                    help="a task that finished a shared job shorter than --request-max-us and "
                         "finds the ring empty raises the job owner's flag (a request) before it "
                         "sleeps; src/, default on")
    ap.add_argument("--request-max-us", type=float, default=None,
                    help="a shared job shorter than this requests a batch (default: interval / 8)")
    ap.add_argument("--request-one", action=argparse.BooleanOptionalAction, default=True,
                    help="a longer shared job requests one record if no other task is "
                         "idle (src/, default on); --no-request-one: it requests nothing")
    ap.add_argument("--batch", type=int, default=64,
                    help="a request is answered with a batch of up to this many oldest queued "
                         "forks, one ring entry, one task woken (src/ CLOVE__BATCH_MAX, 64); "
                         "1: no batches")
    ap.add_argument("--adaptive", action=argparse.BooleanOptionalAction, default=True,
                    help="a task's batch size starts at 1, doubles with each request it answers, "
                         "halves when it waits on a batch, and a plain beat shares one fork "
                         "(src/, default); --no-adaptive: every share is a batch of --batch")
    ap.add_argument("--spin-us", type=float, default=0.0,
                    help="variant: a task going idle spins this long before it sleeps; waking "
                         "it meanwhile costs the waker --spin-wake-us instead of the wake call, "
                         "and it runs --spin-lat-us later instead of the wake latency "
                         "(default 0: it sleeps at once, as src/ does)")
    ap.add_argument("--spin-wake-us", type=float, default=0.05,
                    help="with --spin-us: the waker's cost for a spinning task (an atomic store "
                         "to its word)")
    ap.add_argument("--spin-lat-us", type=float, default=0.2,
                    help="with --spin-us: from that store to the spinning task taking the lock")
    ap.add_argument("--claims", action="store_true",
                    help="variant: every share is a range of records whose members are claimed "
                         "one at a time by an atomic operation: the owner's join claims an "
                         "unclaimed member back (no lock, no wait), a runner answering a flag "
                         "splits off the upper half of its unclaimed members (sim/fanout.md)")
    ap.add_argument("--claim-us", type=float, default=0.03,
                    help="with --claims: a runner's claim of a member (an atomic operation on "
                         "the owner's line)")
    ap.add_argument("--local-us", type=float, default=0.01,
                    help="with --claims: an atomic operation on a record the task holds in its "
                         "cache (the runner's DONE, the owner's claim back)")
    ap.add_argument("--done-us", type=float, default=0.01,
                    help="with --claims: the owner's join of a DONE member (a load of its state "
                         "and result, no lock; the joins of a loop overlap their cache misses)")
    ap.add_argument("--request-to", choices=("owner", "sharer", "pending"), default="owner",
                    help="with --claims: a finished range requests from its members' owner or "
                         "from the task that shared it (sharer); pending: from that owner if it "
                         "has a queued fork, else from the next task that has one (--direct "
                         "always goes on to the next task)")
    ap.add_argument("--direct", action="store_true",
                    help="with --claims and --spin-us: a worker out of work requests from one "
                         "task with a queued fork and spins; that task hands it a range at its "
                         "next fork, into its mailbox, with no lock; a join that finds its "
                         "record started asks the task running it (sim/fanout.md)")
    ap.add_argument("--retry-us", type=float, default=1.0,
                    help="with --direct: an unanswered request is withdrawn after this (its task "
                         "runs a leaf), and a worker with nobody to ask looks again this often")
    ap.add_argument("--scan-us", type=float, default=0.05,
                    help="with --direct: a requester's cost per task it looks at")
    ap.add_argument("--direct-joiners", action=argparse.BooleanOptionalAction, default=True,
                    help="with --direct: a join that finds its record started requests too "
                         "(default); --no-direct-joiners: only workers out of work do")
    ap.add_argument("--join-ask-after-us", type=float, default=0.0,
                    help="with --direct: a joiner asks only once it has waited this long "
                         "(src/: 2)")
    ap.add_argument("--join-links", type=int, default=8,
                    help="with --direct: how many links of the chain of runners a joiner "
                         "follows to find one to ask (src/: 1, the awaited job's runner)")
    ap.add_argument("--handoff", action=argparse.BooleanOptionalAction, default=True,
                    help="with --direct: a share for a sleeping free worker goes into its "
                         "mailbox with the wake-up (default); --no-handoff: through the ring")
    ap.add_argument("--owner-only", action="store_true",
                    help="with --direct: a free worker asks only the owner of the range it "
                         "ran, once; joiners do not ask (a narrower form, not built)")
    ap.add_argument("--handoff-only", action="store_true",
                    help="with --claims: the handoff into a sleeping free worker's mailbox, "
                         "without --direct's requests")
    ap.add_argument("--self-help", action="store_true",
                    help="with --claims: a join that finds its record started first runs the "
                         "newest unclaimed older record of its own (claimed back, out of order)")
    ap.add_argument("--look-us", type=float, default=0.01,
                    help="with --self-help: the cost per record looked at")
    ap.add_argument("--join-desc", action="store_true",
                    help="what-if (with --direct): a join may also ask any task running a job "
                         "forked inside the one it waits for")
    ap.add_argument("--hb-per-task-us", type=float, default=DEFAULTS["hb_per_task_us"])
    ap.add_argument("--leaf-block", type=int, default=0,
                    help="subtrees of at most this many nodes run without forks (a grain)")
    ap.add_argument("--machine", choices=sorted(MACHINES), default=None,
                    help="a machine model: the node cost then depends on the worker count "
                         "(hyperthreads, memory contention; sim/README.md, \"Machines and "
                         "policies\"); default: none (every worker a whole core, no contention)")
    ap.add_argument("--mem-demand", type=float, default=None,
                    help="with --machine: scale its memory contention by this (1: a "
                         "pointer-chasing tree node, 0: none); default: the workload's own "
                         "(1 for the tree sum and long leaves, 0 for fib and uts-loop)")
    ap.add_argument("--policy", choices=sorted(POLICIES), default="clove",
                    help="the runtime's rules: clove (src/, the default), spice (no cascade, "
                         "no reserve, no requests, no beat on kick; its rules override the "
                         "rule options) or lace (work stealing with leapfrogging, "
                         "sim/lacesim.py; the heartbeat options do not apply)")
    ap.add_argument("--start-gate", action="store_true",
                    help="what-if: a run whose start wakes the heartbeat thread gets its first "
                         "beat a quarter interval (--run-age-div) after the thread is awake, as "
                         "a run that begins while the thread is awake does; src/: a whole "
                         "interval")
    ap.add_argument("--steal-us", type=float, default=0.1,
                    help="with --policy lace: a steal that succeeds (a CAS on the victim's deque "
                         "word and a cache miss for the task)")
    ap.add_argument("--steal-fail-us", type=float, default=0.05,
                    help="with --policy lace: a steal that finds nothing (a load of the victim's "
                         "deque word)")
    ap.add_argument("--sync-us", type=float, default=0.05,
                    help="with --policy lace: a join that finds its task stolen (a fence)")
    ap.add_argument("--leap-random", action=argparse.BooleanOptionalAction, default=True,
                    help="with --policy lace: after 32 failed steals from the thief a waiting "
                         "join steals once from a random worker (Lace's LACE_LEAP_RANDOM, "
                         "default); --no-leap-random: leapfrogging only")
    ap.add_argument("--breakdown", action="store_true",
                    help="also print where the worker-time goes (worker-ms: the work, the "
                         "scheduler's overhead, waking, free workers and joiners spinning, "
                         "requesting or asleep), sampled every microsecond")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--json", action="store_true", help="one JSON object per result")
    a = ap.parse_args(argv)
    kw = dict(heartbeat_us=a.heartbeat_us, wake_us=a.wake_us, wake_call_us=a.wake_call_us,
              lock_us=a.lock_us, tick_gap_nodes=a.tick_gap_nodes, cascade=not a.no_cascade,
              k=a.shares_per_beat, contention=a.contention, leaf_block=a.leaf_block,
              hb_late_us=a.hb_late_us, c_node=a.c_node, contention_ns=a.contention_ns,
              idle_request=a.idle_request, beat_on_kick=a.beat_on_kick,
              cascade_owner=a.cascade_owner, reserve=a.reserve, reserves=a.reserves,
              hb_phase_us=a.hb_phase_us, join_ticks=a.join_ticks,
              hb_per_task_us=a.hb_per_task_us, steal_every_beat=a.steal_every_beat,
              share_after_steal=a.share_after_steal, probe_div=a.probe_div,
              run_age_div=a.run_age_div, batch=a.batch, request=a.request,
              adaptive=a.adaptive, request_max_us=a.request_max_us,
              request_one=a.request_one, spin_us=a.spin_us,
              spin_wake_us=a.spin_wake_us, spin_lat_us=a.spin_lat_us, claims=a.claims,
              claim_us=a.claim_us, local_us=a.local_us, done_us=a.done_us,
              request_to=a.request_to, direct=a.direct, direct_joiners=a.direct_joiners,
              handoff=a.handoff, handoff_only=a.handoff_only,
              join_ask_after_us=a.join_ask_after_us, join_links=a.join_links, owner_only=a.owner_only, retry_us=a.retry_us, scan_us=a.scan_us,
              self_help=a.self_help, look_us=a.look_us, join_desc=a.join_desc,
              start_gate=a.start_gate, breakdown=a.breakdown)
    kw = {**kw, **POLICIES[a.policy], "machine": a.machine}
    if a.policy == "lace":
        kw.update(steal_us=a.steal_us, steal_fail_us=a.steal_fail_us, sync_us=a.sync_us,
                  leap_random=a.leap_random)
    if a.mem_demand is not None and (a.mem_demand < 0 or not a.machine):
        raise SystemExit("--mem-demand needs --machine and a value >= 0")
    base_kw = kw
    for spec in a.workload or ["tree:1e7"]:
        work = make_work(spec)
        kw = dict(base_kw)      # per workload: the node cost below is the tree's
        if a.machine and a.c_node is None and isinstance(work, TreeSum):
            # --policy lace: clove's node cost (the policies compared on
            # scheduling alone)
            tn = MACHINES[a.machine]["tree_ns"]
            kw["c_node"] = tn.get(a.policy, tn["clove"])
        machine = a.machine or "none"
        if a.machine:
            kw["mem_demand"] = a.mem_demand if a.mem_demand is not None else workload_mem_demand(work)
            machine += f" (memory demand {kw['mem_demand']:g})"
        if a.json:
            for P in a.workers:
                r = simulate(work, P, **kw)
                print(json.dumps(r))
            continue
        if a.policy == "lace":
            print(f"{work.name}: policy lace, machine {machine}, "
                  f"c = {kw['c_node'] or default_cost(work)} ns/"
                  f"{'unit' if getattr(work, 'long', False) else 'node'}, steal {a.steal_us:g} us, "
                  f"failed steal {a.steal_fail_us:g} us, sync of a stolen task {a.sync_us:g} us, "
                  f"{'random steals after 32 failed leaps' if a.leap_random else 'leapfrogging only'}")
            table(work, a.workers, kw, markdown=a.markdown)
            continue
        print(f"{work.name}: policy {a.policy}, machine {machine}, "
              f"c = {kw['c_node'] or default_cost(work)} ns/"
              f"{'unit' if getattr(work, 'long', False) else 'node'}, heartbeat "
              f"{a.heartbeat_us:g} us, wake {a.wake_us:g} us, "
              f"{'cascade' if kw['cascade'] else 'no cascade'}"
              f"{' + owner' if kw['cascade'] and a.cascade_owner else ''}, k = {a.shares_per_beat}, "
              f"{'reserve' if a.reserve else 'no reserve'}"
              f"{' (stolen at every beat)' if a.reserve and a.steal_every_beat else ''}"
              f"{', no share after a steal' if a.reserve and not a.share_after_steal else ''}, "
              f"{'beat on kick' if a.beat_on_kick else 'no beat on kick'}"
              f"{f' + probe at H/{a.probe_div}' if a.beat_on_kick and a.probe_div else ''}")
        table(work, a.workers, kw, markdown=a.markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
