#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# check.sh - verify model/clove.pml and model/claims.pml with spin (see
# model/README.md).
#
#   model/check.sh           the real model (must pass) and every bug variant
#                            (must fail), 2 tasks; plus two extra runs
#   model/check.sh --full    also the 3-task checks and two larger claims
#                            runs (3 workers, 3 rounds): 1 to 16 minutes and
#                            up to 15 GB each, except term2, which needs
#                            more than 23 GB (see README.md, Results)
#   model/check.sh --quick   the same without the two extra runs
#
# The searches run side by side, as many at once as CLOVE_MODEL_JOBS says
# (default: the CPUs, at most 4 and at most one per 3 GB of available
# memory; --full: 1, its runs need up to 15 GB each); their lines come out
# in the order below.
#
# Exits non-zero if the real model reports an error or an incomplete
# search, or if a bug variant is NOT caught. Every search is exhaustive
# (no bit-state hashing); an incomplete search ("max search depth too
# small", "Search not completed" without an error) counts as a failure.
set -u

here=$(cd "$(dirname "$0")" && pwd)
model="$here/clove.pml"
level=default
case "${1:-}" in
    --full) level=full ;;
    --quick) level=quick ;;
    "") ;;
    *) echo "usage: $0 [--quick|--full]" >&2; exit 2 ;;
esac

command -v spin >/dev/null 2>&1 || { echo "spin not found (apt-get install spin)" >&2; exit 2; }
command -v gcc >/dev/null 2>&1 || { echo "gcc not found" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
trap 'kill $(jobs -p) 2>/dev/null; exit 130' INT TERM
if [ -n "${CLOVE_MODEL_JOBS:-}" ]; then
    jobs_max=$CLOVE_MODEL_JOBS
elif [ $level = full ]; then
    jobs_max=1
else
    jobs_max=$(nproc 2>/dev/null || echo 1)
    [ "$jobs_max" -le 4 ] || jobs_max=4
    mem_kb=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo 2>/dev/null)
    if [ -n "$mem_kb" ] && [ $((mem_kb / 3145728)) -lt "$jobs_max" ]; then
        jobs_max=$((mem_kb / 3145728))
    fi
    [ "$jobs_max" -ge 1 ] || jobs_max=1
fi
case $jobs_max in ''|*[!0-9]*|0) echo "check.sh: CLOVE_MODEL_JOBS must be a positive number" >&2; exit 2 ;; esac
seq=0      # lines queued: $work/line.N, written when its search is done
printed=0  # lines printed, in order
running=0  # searches running
DEPTH=100000     # pan -m: far above the deepest path (~300 steps)
HASH=26          # pan -w: 2^26 slots

# verify NAME EXPECT MODE "SPIN DEFINES" [FAIL-PATTERN]
#   EXPECT: pass | fail
#   MODE:   safety  assertions + invalid end states       (pan -DSAFETY)
#           npf     non-progress cycles, weak fairness    (pan -DNP -l -f)
#           np      non-progress cycles, no fairness      (pan -DNP -l)
#           ltl     LTL lostkick, weak fairness           (pan -a -f)
#           leaf    LTL leaf with LONGLEAF, weak fairness (pan -a -f)
#   (npf, ltl and leaf use FAIRLOCK: see clove.pml, HB)
verify_one() {
    name=$1 expect=$2 mode=$3 defs=$4 pattern=${5:-}
    dir="$work/$name"
    mkdir -p "$dir" && cp "$model" "$dir/" || exit 2
    extra= cflags= runflags=
    case $mode in
        safety) cflags="-DSAFETY" ;;
        npf) extra="-DPROGRESS_END -DFAIRLOCK"; cflags="-DNP"; runflags="-l -f" ;;
        np) extra="-DPROGRESS_END"; cflags="-DNP"; runflags="-l" ;;
        ltl) extra="-DLTL_LOSTKICK -DFAIRLOCK"; runflags="-a -f" ;;
        leaf) extra="-DLONGLEAF -DLTL_LEAF -DFAIRLOCK"; runflags="-a -f" ;;
    esac
    start=$(date +%s)
    (
        cd "$dir" &&
        spin $defs $extra -a "$(basename "$model")" >spin.out 2>&1 &&
        gcc -O2 -w -DCOLLAPSE $cflags -o pan pan.c >gcc.out 2>&1 &&
        ./pan -m$DEPTH -w$HASH $runflags >pan.out 2>&1
    )
    rc=$?
    secs=$(( $(date +%s) - start ))
    out="$dir/pan.out"
    if [ ! -s "$out" ]; then
        echo "FAIL  $name: spin/gcc/pan did not run (rc=$rc)"; cat "$dir"/*.out 2>/dev/null | tail -5
        return
    fi
    errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$out" | tail -1)
    stored=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' "$out" | tail -1)
    depth=$(sed -n 's/.*depth reached \([0-9]*\).*/\1/p' "$out" | tail -1)
    what=$(grep -m1 -E '^pan:1: ' "$out" | sed 's/^pan:1: //')
    mem=$(sed -n 's/^ *\([0-9.]*\)[[:space:]]*total actual memory usage.*/\1/p' "$out" | tail -1)
    summary="states=$stored depth=$depth errors=$errors ${secs}s ${mem:-?} MB"
    if [ "$expect" = pass ]; then
        if [ "$errors" = 0 ] && ! grep -q -E 'max search depth too small|Search not completed|out of memory' "$out"; then
            echo "ok    $name: passes ($summary)"
        else
            echo "FAIL  $name: expected to pass ($summary) ${what}"
            grep -E 'too small|not completed|memory' "$out"
        fi
    else
        if [ -n "$errors" ] && [ "$errors" != 0 ] && grep -q -E "$pattern" "$out"; then
            echo "ok    $name: caught: $what ($summary)"
        else
            echo "FAIL  $name: bug NOT caught (wanted /$pattern/; $summary) ${what}"
        fi
    fi
}

# Print the lines that are done, in order.
flush() {
    while [ -f "$work/line.$((printed + 1))" ]; do
        printed=$((printed + 1))
        cat "$work/line.$printed"
    done
}

# A line of its own (a heading), in order with the searches' lines.
say() {
    seq=$((seq + 1))
    echo "$*" >"$work/line.$seq"
    flush
}

# verify NAME EXPECT MODE "SPIN DEFINES" [FAIL-PATTERN]: verify_one in the
# background, its lines into $work/line.N once it is done; at most
# jobs_max at once.
verify() {
    seq=$((seq + 1))
    (verify_one "$@" >"$work/part.$seq" 2>&1; mv "$work/part.$seq" "$work/line.$seq") &
    running=$((running + 1))
    if [ $running -ge "$jobs_max" ]; then
        wait -n
        running=$((running - 1))
    fi
    flush
}

say "== real model, 2 tasks (external thread + 1 worker) + heartbeat thread"
verify safe1            pass safety "-DNW=1"
verify safe1-spurious   pass safety "-DNW=1 -DSPURIOUS"
verify term1            pass npf    "-DNW=1"
verify term1-spurious   pass npf    "-DNW=1 -DSPURIOUS"
verify hbquiet1         pass np     "-DNW=1 -DPROGRESS_BEAT"
verify lostkick1        pass ltl    "-DNW=1 -DLONGWORK"
verify lostkick1-spur   pass ltl    "-DNW=1 -DLONGWORK -DSPURIOUS"
verify leaf1            pass leaf   "-DNW=1"
verify abandon1         pass safety "-DNW=1 -DABANDON"
verify abandon1-term    pass npf    "-DNW=1 -DABANDON"
verify fan1             pass safety "-DNW=1 -DFAN"
verify fan1-spurious    pass safety "-DNW=1 -DFAN -DSPURIOUS"
verify fanterm1         pass npf    "-DNW=1 -DFAN"
verify fanlostkick1     pass ltl    "-DNW=1 -DFAN"

say "== bug variants (2 tasks), each must be caught"
verify bug-reclaim      fail safety "-DNW=1 -DBUG_RECLAIM_KEEPS_SLOT" 'assertion violated'
verify bug-wokendone    fail safety "-DNW=1 -DBUG_WOKEN_MEANS_DONE" 'assertion violated \(\(fst\[f\]==4\)&&jdone\[f\]\)'
verify bug-wakeorder    fail safety "-DNW=1 -DBUG_WAKE_BEFORE_STATE" 'invalid end state'
verify bug-wakeorder-np fail npf    "-DNW=1 -DBUG_WAKE_BEFORE_STATE" 'non-progress cycle'
verify bug-donenowake   fail npf    "-DNW=1 -DBUG_DONE_NO_WAKE" 'non-progress cycle'
verify bug-idlepark     fail safety "-DNW=1 -DBUG_PARK_STORE" 'invalid end state'
verify bug-idlepark-np  fail npf    "-DNW=1 -DBUG_PARK_STORE" 'non-progress cycle'
verify bug-hbnorecheck  fail ltl    "-DNW=1 -DLONGWORK -DBUG_HB_NO_RECHECK" 'acceptance cycle'
verify bug-hbnorecheck-end fail safety "-DNW=1 -DBUG_HB_NO_RECHECK" 'invalid end state'
verify bug-noidlekick   fail ltl    "-DNW=1 -DLONGWORK -DBUG_NO_IDLE_KICK" 'acceptance cycle'
verify bug-hbnograce    fail np     "-DNW=1 -DPROGRESS_BEAT -DBUG_HB_NO_GRACE" 'non-progress cycle'
verify bug-reservenocas fail safety "-DNW=1 -DBUG_RESERVE_NO_CAS" 'assertion violated'
verify bug-stealnocas   fail safety "-DNW=1 -DBUG_STEAL_NO_CAS" 'assertion violated'
verify bug-noarm        fail leaf   "-DNW=1 -DBUG_NO_ARM" 'acceptance cycle'
verify bug-nosteal      fail leaf   "-DNW=1 -DBUG_NO_STEAL" 'acceptance cycle'
verify bug-stealnobeat  fail leaf   "-DNW=1 -DBUG_STEAL_NO_BEAT" 'acceptance cycle'
# the three findings of the model in the reserve's spec (README.md, "Findings")
verify bug-loadstoreclear fail leaf "-DNW=1 -DBUG_LOAD_STORE_CLEAR" 'acceptance cycle'
verify bug-nohandlerrearm fail leaf "-DNW=1 -DBUG_NO_HANDLER_REARM" 'acceptance cycle'
verify bug-shareemptylist fail safety "-DNW=1 -DBUG_SHARE_EMPTY_LIST" 'assertion violated \(qlen>0\)'
verify bug-abandonnowait fail safety "-DNW=1 -DABANDON -DBUG_ABANDON_NO_WAIT" 'assertion violated'
# batches (share.c, "Requests and batches")
verify bug-batchnoshrink fail safety "-DNW=1 -DFAN -DBUG_BATCH_NO_SHRINK" 'assertion violated \(cnt\[f\]==1\)'
verify bug-batchearlydone fail safety "-DNW=1 -DFAN -DBUG_BATCH_EARLY_DONE" 'assertion violated'

say "== claims on shared records (claims.pml: owner + 2 workers + heartbeat thread, 2 records, 2 rounds)"
model="$here/claims.pml"
verify claims           pass safety ""
verify claims-3rec1     pass safety "-DNREC=3 -DNWORK=1"
verify claims-stale-reached fail safety "-DCHECK_STALE_REACHED" 'assertion violated \(inc\[k\]<=when\)'
verify bug-claimloadstore fail safety "-DBUG_CLAIM_LOAD_STORE" 'assertion violated \(runs\['
verify bug-reclaimloadstore fail safety "-DBUG_RECLAIM_LOAD_STORE" 'assertion violated \(runs\['
verify bug-waiterstore  fail safety "-DBUG_WAITER_STORE" 'invalid end state'
verify bug-donenowaiter fail safety "-DBUG_DONE_NO_WAKE" 'invalid end state'
verify bug-donebeforeresult fail safety "-DBUG_DONE_BEFORE_RESULT" 'assertion violated \(\(runs\[j\]==1\)&&\(res\[j\]==inc\[j\]\)\)'
verify bug-sharekeepsfn fail safety "-DBUG_SHARE_KEEPS_FN" 'assertion violated'
verify bug-stealunlocked fail safety "-DBUG_STEAL_UNLOCKED" 'assertion violated \(st\[j\]==4\)'
# direct requests (claims.pml, REQUEST): owner + 1 worker + heartbeat thread
verify claims-req       pass safety "-DREQUEST -DNWORK=1"
verify claims-answer-reached fail safety "-DREQUEST -DNWORK=1 -DCHECK_ANSWER_REACHED" 'assertion violated  *!\(answered\)'
verify bug-withdrawstore fail safety "-DREQUEST -DNWORK=1 -DBUG_WITHDRAW_STORE" 'assertion violated \(mbox\[me\]==0\)'
verify bug-noemptyanswer fail safety "-DREQUEST -DNWORK=1 -DBUG_NO_EMPTY_ANSWER" 'invalid end state'
# the handoff into an idle worker's mailbox (claims.pml, REQUEST and HANDOFF)
verify claims-handoff   pass safety "-DREQUEST -DHANDOFF -DNWORK=1"
verify claims-handoff-reached fail safety "-DREQUEST -DHANDOFF -DNWORK=1 -DCHECK_HANDOFF_REACHED" 'assertion violated  *!\(handed\)'
verify bug-wakebeforemail fail safety "-DREQUEST -DHANDOFF -DNWORK=1 -DBUG_WAKE_BEFORE_MAIL" 'assertion violated \(mbox\[(w|me)\]==0\)'
# a joiner's requests to the runner of the record it awaits (claims.pml, JOINASK):
# owner + 1 worker whose job forks 2 records + heartbeat thread, 1 round
verify claims-joinask   pass safety "-DJOINASK -DNWORK=1 -DNROUND=1"
verify claims-joinask-3rec pass safety "-DJOINASK -DNWORK=1 -DNROUND=1 -DNREC=3"
verify claims-joinask-reached fail safety "-DJOINASK -DNWORK=1 -DNROUND=1 -DCHECK_JOINASK_REACHED" 'assertion violated 0'
verify bug-answeranyjob fail safety "-DJOINASK -DNWORK=1 -DNROUND=1 -DBUG_ANSWER_ANY_JOB" 'assertion violated \(\(wxk'
verify bug-answerbelowfrom fail safety "-DJOINASK -DNWORK=1 -DNROUND=1 -DBUG_ANSWER_BELOW_FROM" 'assertion violated \(\(wxk'
# the owner's wait spinning, then parked on a sleep word (claims.pml, SPINPARK)
verify claims-spinpark  pass safety "-DSPINPARK"
verify bug-parkstore    fail safety "-DSPINPARK -DBUG_PARK_STORE" 'invalid end state'
verify bug-checkbeforespin fail safety "-DSPINPARK -DBUG_CHECK_BEFORE_SPIN" 'invalid end state'
# forks that write the state word, as a debug build's stamp (claims.pml, STAMP)
verify claims-stamp     pass safety "-DSTAMP"
verify bug-stampshared  fail safety "-DBUG_STAMP_SHARED" 'assertion violated'
if [ $level = full ]; then
    verify claims-3w    pass safety "-DNWORK=3"
    verify claims-3r    pass safety "-DNROUND=3"
fi
model="$here/clove.pml"

if [ $level != quick ]; then
    say "== the spec's handler (step 1 load+store, no re-arm; with the empty-list guard): safe, not live"
    verify spec-safe     pass safety "-DNW=1 -DBUG_LOAD_STORE_CLEAR -DBUG_NO_HANDLER_REARM"
    verify spec-leaf     fail leaf   "-DNW=1 -DBUG_LOAD_STORE_CLEAR -DBUG_NO_HANDLER_REARM" 'acceptance cycle'
fi

if [ $level = full ]; then
    say "== real model, 3 tasks (external thread + 2 workers) + heartbeat thread"
    verify safe2        pass safety "-DNW=2"
    verify leaf2        pass leaf   "-DNW=2"
    verify lostkick2    pass ltl    "-DNW=2 -DLONGWORK"
    verify hbquiet2     pass np     "-DNW=2 -DPROGRESS_BEAT"
    verify safe2-spurious pass safety "-DNW=2 -DSPURIOUS"
    verify term2        pass npf    "-DNW=2"
    verify fan2         pass safety "-DNW=2 -DFAN"
fi

wait
flush
failures=$(cat "$work"/line.* | grep -c '^FAIL')
if [ "$failures" -ne 0 ]; then
    echo "check.sh: $failures check(s) FAILED"
    exit 1
fi
echo "check.sh: all checks as expected"
