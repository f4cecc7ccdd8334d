# SPDX-License-Identifier: MIT
"""lacesim.py - the work-stealing policy of Lace (--policy lace), on the
workloads of clovesim.py, for a peer's prediction beside clove's.

The rules, as Lace's src/lace.c (v1.4/v2) states them:
  - every fork (Lace's SPAWN) pushes a task onto the worker's own deque and
    every join (SYNC) pops it again if nobody stole it: no atomic operation
    on that path, the same as clove's not-taken fork and join. The cost of
    both is inside the node cost c, which is the same for every policy
    unless --c-node says otherwise, so the two policies are compared on
    scheduling alone;
  - a worker with nothing to run steals the oldest task of a victim chosen
    at random among the other workers (a compare-and-swap on the victim's
    tail), runs it, then marks it completed. Idle workers never sleep
    during a run: they keep stealing (Lace's workers spin until
    lace_suspend);
  - a join whose task was stolen leapfrogs: it steals only from the thief,
    whose stealable tasks were all forked inside the stolen one, until the
    thief marks it completed; after 32 failed attempts in a row it steals
    once from a random victim (LACE_LEAP_RANDOM, on by default), which
    gives up the stack bound of pure leapfrogging;
  - not modelled: Lace's split deque (a thief that finds only private
    tasks asks the owner to move its split point, done at the owner's next
    spawn or sync: a few nodes' delay, left out) and its back-off.

Costs (--steal-us, --steal-fail-us, --sync-us): a steal that succeeds is a
CAS on the victim's deque word and a cache miss for the task; a failed one
is one load of the victim's word; a join that finds its task stolen pays a
fence (Lace's shrink_shared) and later a load of the thief word. These
are the same orders of magnitude as clovesim's atomics (--claim-us, a
cache-line transfer), not measurements of Lace.

Simulation: node by node (unlike clovesim's positions), so a workload of
millions of nodes takes seconds to minutes. Workers advance in a global
time order; a worker runs ahead of the others by at most --quantum-ns
(default: a failed steal's cost) before the others catch up, so a thief
sees a victim's deque up to that much in the victim's future.
"""
import heapq
import random

US = 1000.0

NODE, SEQ, JOIN, WAIT, STOLEN, ROOT = range(6)


class WorkSteal:
    """One run of `work` (a clovesim workload) on P workers under Lace's
    rules; c_node: ns per unit of work.cost. clovesim.simulate passes its
    heartbeat options too; they do not apply here (_ignored)."""

    def __init__(self, work, P, c_node, steal_us=0.1, steal_fail_us=0.05, sync_us=0.05,
                 done_us=0.01, leap_random=True, leap_attempts=32, quantum_ns=None, seed=1,
                 breakdown=False, **_ignored):
        self.W = work
        self.P = P
        self.c = c_node
        self.c_steal = steal_us * US
        self.c_fail = steal_fail_us * US
        self.c_sync = sync_us * US
        self.c_done = done_us * US
        self.leap_random = leap_random
        self.leap_attempts = leap_attempts
        self.quantum = self.c_fail if quantum_ns is None else quantum_ns
        self.rng = random.Random(seed)
        self.want_breakdown = breakdown

    def run(self):
        W, P, c = self.W, self.P, self.c
        cost, children = W.cost, W.children
        frames = [[] for _ in range(P)]   # per worker: what it runs, innermost last
        dq = [[] for _ in range(P)]       # per worker: its deque, oldest first
        tail = [0] * P                    # per worker: its oldest task not stolen
        # worker-ns by what they spend it on
        t_work = [0.0] * P      # the workload's own nodes
        t_sched = [0.0] * P     # steals that succeed, syncs of stolen tasks, completions
        t_free = [0.0] * P      # failed steals with nothing to run
        t_leap = [0.0] * P      # failed steals while waiting at a join
        steals = leaps = random_leaps = 0
        frames[0] = [(ROOT,), (NODE, W.root)]
        end = None
        events = 0
        rnd = self.rng.randrange
        heap = [(0.0, i) for i in range(P)]
        heapq.heapify(heap)

        def other(i):
            """A worker other than i, at random (P > 1)."""
            v = rnd(P - 1)
            return v + 1 if v >= i else v

        def steal_from(i, v):
            """i steals v's oldest task: the task, or None."""
            if v == i or tail[v] >= len(dq[v]):
                return None
            t = dq[v][tail[v]]
            tail[v] += 1
            t[1] = i
            return t

        while end is None:
            now, i = heapq.heappop(heap)
            horizon = heap[0][0] + self.quantum if heap else float("inf")
            events += 1
            fr, d_i = frames[i], dq[i]
            clk = now
            while clk <= horizon:
                if not fr:                              # nothing to run: steal
                    t = steal_from(i, other(i)) if P > 1 else None
                    if t is None:
                        clk += self.c_fail
                        t_free[i] += self.c_fail
                    else:
                        steals += 1
                        clk += self.c_steal
                        t_sched[i] += self.c_steal
                        fr.append((STOLEN, t))
                        fr.append((NODE, t[0]))
                    break                               # let the others move
                f = fr[-1]
                k = f[0]
                if k == NODE:
                    d = f[1]
                    x = cost(d) * c
                    clk += x
                    t_work[i] += x
                    ch = children(d)
                    if ch is None:
                        fr.pop()
                        continue
                    left, _, right, _, forks = ch
                    if forks:
                        t = [right, -1, False]
                        d_i.append(t)
                        fr[-1] = (JOIN, t)
                    elif right is not None:
                        fr[-1] = (SEQ, right)
                    else:
                        fr.pop()
                    if left is not None:
                        fr.append((NODE, left))
                elif k == SEQ:
                    fr[-1] = (NODE, f[1])
                elif k == JOIN:
                    t = f[1]
                    if t[1] < 0:                        # not stolen: run it here
                        d_i.pop()
                        fr[-1] = (NODE, t[0])
                    else:
                        clk += self.c_sync
                        t_sched[i] += self.c_sync
                        fr[-1] = (WAIT, t, 0)
                elif k == WAIT:
                    t = f[1]
                    if t[2]:                            # the thief completed it
                        d_i.pop()
                        if tail[i] > len(d_i):
                            tail[i] = len(d_i)
                        clk += self.c_done
                        t_sched[i] += self.c_done
                        fr.pop()
                        continue
                    n = f[2] + 1
                    s = steal_from(i, t[1])             # leapfrog: from the thief
                    if s is None and self.leap_random and n >= self.leap_attempts and P > 2:
                        n = 0
                        s = steal_from(i, other(i))
                        if s is not None:
                            random_leaps += 1
                    if s is None:
                        clk += self.c_fail
                        t_leap[i] += self.c_fail
                        fr[-1] = (WAIT, t, n)
                    else:
                        leaps += 1
                        clk += self.c_steal
                        t_sched[i] += self.c_steal
                        fr[-1] = (WAIT, t, 0)
                        fr.append((STOLEN, s))
                        fr.append((NODE, s[0]))
                    break
                elif k == STOLEN:
                    f[1][2] = True
                    clk += self.c_done
                    t_sched[i] += self.c_done
                    fr.pop()
                else:                                   # ROOT: the run is over
                    end = clk
                    break
            if end is None:
                heapq.heappush(heap, (clk, i))

        T = end
        # A worker's last step may end up to a quantum after the root's:
        # its whole time counts, so the fractions are capped at 1.
        idle = sum(t_free) + sum(t_leap)
        busy = sum(t_work) + sum(t_sched)
        total = P * T
        return dict(
            workload=W.name, P=P, time_ns=T, c_node_ns=c,
            idle_frac=min(1.0, idle / total) if total else 0.0,
            # every idle worker looks for work that exists while the run lasts
            idle_work_frac=min(1.0, idle / total) if total else 0.0,
            lock_frac=0.0,
            all_busy_hb=None, no_heartbeat=True,
            stats=dict(shares=steals + leaps, steals=steals, probe_steals=0,
                       leaps=leaps, random_leaps=random_leaps, wakes=0, empty_wakes=0,
                       events=events),
            breakdown=dict(busy=busy, **{"free stealing": sum(t_free),
                                         "joiner leapfrogging": sum(t_leap)})
            if self.want_breakdown else None,
        )
