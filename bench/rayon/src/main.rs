// SPDX-License-Identifier: MIT
//! clove-rayon-bench: the Rayon companion of clove's C benchmarks.
//!
//! Workloads (each checked on every run; a wrong result aborts):
//!   tree_sum  balanced tree of n heap nodes (one Box per node, allocated in
//!             pre-order, values 1..n as bench/tree.c), rayon::join at every
//!             node with two children; sum checked against n(n+1)/2
//!   fib       naive Fibonacci, rayon::join at every call with n >= 2 (no
//!             cutoff); time per call (2 fib(n+1) - 1 calls)
//!   nqueens   bitmask n-queens, a join at every valid placement but the
//!             last of a row (as bench/nqueens.c forks); time per search node
//! and two measurements of the pool itself:
//!   idle      process CPU time and context switches of the pool's threads
//!             over a window in which the main thread sleeps (bench/idle.c)
//!   wake      latency from rayon::join pushing a job while the other
//!             workers sleep to that job starting on another thread
//!
//! Output and CSV follow bench/tree_sum.c (--csv columns
//! workload,n,impl,threads,heartbeat_us,median_ns_per_node,min,max,
//! ratio_to_baseline,samples); impl is "rayon", and "rust_baseline" for the
//! sequential Rust code in this binary (ratios are to that baseline).
//!
//! Usage: clove-rayon-bench WORKLOAD [-n N]... [-t T]... [--baseline]
//!        [--min-time S] [--max-rounds R] [--csv FILE] [--quick]
//!        clove-rayon-bench idle [-t T] [--sleep S] [--nodes N]
//!        clove-rayon-bench wake [-t T] [--samples K] [--gap-ms G]

use std::fs::File;
use std::io::Write;
use std::process::exit;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------
// Workloads
// ---------------------------------------------------------------------------

struct Node {
    value: i64,
    left: Option<Box<Node>>,
    right: Option<Box<Node>>,
}

/// Pre-order allocation (the node before its subtrees), value = middle of
/// the range: the same shape and values as tree_build in bench/tree.c.
fn tree_build(lo: i64, hi: i64) -> Option<Box<Node>> {
    if lo > hi {
        return None;
    }
    let mid = lo + (hi - lo) / 2;
    let mut n = Box::new(Node { value: mid, left: None, right: None });
    n.left = tree_build(lo, mid - 1);
    n.right = tree_build(mid + 1, hi);
    Some(n)
}

fn tree_sum_seq(n: &Node) -> i64 {
    let mut s = n.value;
    if let Some(l) = &n.left {
        s += tree_sum_seq(l);
    }
    if let Some(r) = &n.right {
        s += tree_sum_seq(r);
    }
    s
}

fn tree_sum_rayon(n: &Node) -> i64 {
    match (&n.left, &n.right) {
        (Some(l), Some(r)) => {
            let (a, b) = rayon::join(|| tree_sum_rayon(l), || tree_sum_rayon(r));
            n.value + a + b
        }
        (Some(l), None) => n.value + tree_sum_rayon(l),
        (None, Some(r)) => n.value + tree_sum_rayon(r),
        (None, None) => n.value,
    }
}

fn fib_seq(n: u64) -> u64 {
    if n < 2 {
        n
    } else {
        fib_seq(n - 1) + fib_seq(n - 2)
    }
}

fn fib_rayon(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = rayon::join(|| fib_rayon(n - 1), || fib_rayon(n - 2));
    a + b
}

fn nq_seq(all: u32, cols: u32, d1: u32, d2: u32) -> u64 {
    if cols == all {
        return 1;
    }
    let mut s = 0;
    let mut avail = all & !(cols | d1 | d2);
    while avail != 0 {
        let bit = avail & avail.wrapping_neg();
        avail ^= bit;
        s += nq_seq(all, cols | bit, ((d1 | bit) << 1) & all, (d2 | bit) >> 1);
    }
    s
}

/// Search nodes (calls of the recursion), the unit of bench/nqueens.c.
fn nq_nodes(all: u32, cols: u32, d1: u32, d2: u32) -> u64 {
    if cols == all {
        return 1;
    }
    let mut s = 1;
    let mut avail = all & !(cols | d1 | d2);
    while avail != 0 {
        let bit = avail & avail.wrapping_neg();
        avail ^= bit;
        s += nq_nodes(all, cols | bit, ((d1 | bit) << 1) & all, (d2 | bit) >> 1);
    }
    s
}

fn nq_rayon(all: u32, cols: u32, d1: u32, d2: u32) -> u64 {
    if cols == all {
        return 1;
    }
    let avail = all & !(cols | d1 | d2);
    if avail == 0 {
        return 0;
    }
    nq_branches(all, cols, d1, d2, avail)
}

/// The branches of one row: join(first, rest) until one is left, which runs
/// here: one join per valid placement but the last.
fn nq_branches(all: u32, cols: u32, d1: u32, d2: u32, avail: u32) -> u64 {
    let bit = avail & avail.wrapping_neg();
    let rest = avail ^ bit;
    let here = move || nq_rayon(all, cols | bit, ((d1 | bit) << 1) & all, (d2 | bit) >> 1);
    if rest == 0 {
        return here();
    }
    let (a, b) = rayon::join(here, || nq_branches(all, cols, d1, d2, rest));
    a + b
}

// ---------------------------------------------------------------------------
// Measurement (as bench/tree_sum.c: warm-up, interleaved rounds, medians)
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq)]
enum Work {
    TreeSum,
    Fib,
    NQueens,
}

impl Work {
    fn name(self) -> &'static str {
        match self {
            Work::TreeSum => "tree_sum",
            Work::Fib => "fib",
            Work::NQueens => "nqueens",
        }
    }
    fn unit(self) -> &'static str {
        match self {
            Work::TreeSum | Work::NQueens => "node",
            Work::Fib => "call",
        }
    }
}

struct Input {
    work: Work,
    n: u64,
    tree: Option<Box<Node>>,
    expect: u64,
    units: f64,
}

impl Input {
    fn new(work: Work, n: u64) -> Input {
        match work {
            Work::TreeSum => {
                let tree = tree_build(1, n as i64);
                Input { work, n, tree, expect: n * (n + 1) / 2, units: n as f64 }
            }
            Work::Fib => {
                let expect = fib_seq(n);
                let (mut a, mut b) = (0u64, 1u64);
                for _ in 0..n {
                    let c = a + b;
                    a = b;
                    b = c;
                }
                if a != expect {
                    eprintln!("fib: WRONG RESULT by iteration");
                    std::process::abort();
                }
                Input { work, n, tree: None, expect, units: 2.0 * b as f64 - 1.0 }
            }
            Work::NQueens => {
                let all = (1u32 << n) - 1;
                let expect = nq_seq(all, 0, 0, 0);
                let known: [u64; 15] =
                    [1, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712, 365596];
                if (n as usize) < known.len() && expect != known[n as usize] {
                    eprintln!("nqueens: WRONG RESULT {} for n = {}", expect, n);
                    std::process::abort();
                }
                let units = nq_nodes(all, 0, 0, 0) as f64;
                Input { work, n, tree: None, expect, units }
            }
        }
    }

    #[inline(never)]
    fn run_seq(&self) -> u64 {
        match self.work {
            Work::TreeSum => tree_sum_seq(self.tree.as_ref().unwrap()) as u64,
            Work::Fib => fib_seq(std::hint::black_box(self.n)),
            Work::NQueens => nq_seq((1u32 << self.n) - 1, 0, 0, 0),
        }
    }

    #[inline(never)]
    fn run_rayon(&self, pool: &rayon::ThreadPool) -> u64 {
        pool.install(|| match self.work {
            Work::TreeSum => tree_sum_rayon(self.tree.as_ref().unwrap()) as u64,
            Work::Fib => fib_rayon(std::hint::black_box(self.n)),
            Work::NQueens => nq_rayon((1u32 << self.n) - 1, 0, 0, 0),
        })
    }
}

struct Cfg {
    impl_name: &'static str,
    threads: usize,
    pool: Option<rayon::ThreadPool>,
    samples: Vec<f64>, // ns per unit
    spent: f64,        // seconds sampled
}

fn sample(inp: &Input, c: &Cfg, batch: u32) -> f64 {
    let t0 = Instant::now();
    for _ in 0..batch {
        let r = match &c.pool {
            None => inp.run_seq(),
            Some(p) => inp.run_rayon(p),
        };
        if r != inp.expect {
            eprintln!(
                "{}: WRONG RESULT {} (expected {}), n = {}, {} {} threads",
                inp.work.name(),
                r,
                inp.expect,
                inp.n,
                c.impl_name,
                c.threads
            );
            std::process::abort();
        }
    }
    t0.elapsed().as_nanos() as f64
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let m = v.len();
    if m % 2 == 1 {
        v[m / 2]
    } else {
        (v[m / 2 - 1] + v[m / 2]) / 2.0
    }
}

fn make_pool(t: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(t)
        .stack_size(64 << 20)
        .build()
        .unwrap_or_else(|e| {
            eprintln!("rayon: ThreadPoolBuilder::build({}): {}", t, e);
            exit(2)
        })
}

struct Opts {
    ns: Vec<u64>,
    threads: Vec<usize>,
    baseline: bool,
    min_time: f64,
    max_rounds: usize,
    min_samples: usize,
    csv: Option<String>,
    quick: bool,
    sleep: f64,
    nodes: u64,
    samples: usize,
    gap_ms: u64,
}

fn bench(work: Work, o: &Opts) {
    let ns: Vec<u64> = if !o.ns.is_empty() {
        o.ns.clone()
    } else if o.quick {
        vec![match work {
            Work::TreeSum => 1000,
            Work::Fib => 20,
            Work::NQueens => 8,
        }]
    } else {
        vec![match work {
            Work::TreeSum => 10_000_000,
            Work::Fib => 30,
            Work::NQueens => 12,
        }]
    };
    let threads = if o.threads.is_empty() { vec![1, 2, 4, 8, 16, 32] } else { o.threads.clone() };
    let mut csv = o.csv.as_ref().map(|p| {
        let mut f = File::create(p).unwrap_or_else(|e| {
            eprintln!("cannot open {}: {}", p, e);
            exit(2)
        });
        writeln!(
            f,
            "workload,n,impl,threads,heartbeat_us,median_ns_per_node,min,max,\
             ratio_to_baseline,samples"
        )
        .unwrap();
        f
    });
    let mut cfg: Vec<Cfg> = Vec::new();
    if o.baseline {
        cfg.push(Cfg { impl_name: "rust_baseline", threads: 1, pool: None, samples: vec![], spent: 0.0 });
    }
    for &t in &threads {
        cfg.push(Cfg { impl_name: "rayon", threads: t, pool: Some(make_pool(t)), samples: vec![], spent: 0.0 });
    }
    println!(
        "{} (rayon {}, {}): ns per {}; samples interleaved across configurations",
        work.name(),
        "1.6 (Debian librust-rayon-dev)",
        option_env!("CLOVE_RUSTC_VERSION").unwrap_or("rustc ?"),
        work.unit()
    );
    for &n in &ns {
        if work == Work::NQueens && !(1..=20).contains(&n) || work == Work::Fib && n > 50 {
            eprintln!("{}: n = {} out of range", work.name(), n);
            exit(2);
        }
        let inp = Input::new(work, n);
        // A sample is one run for >= 100000 units, else enough runs for ~1M.
        let batch: u32 = if inp.units >= 1e5 { 1 } else { (1e6 / inp.units).ceil() as u32 };
        for c in cfg.iter_mut() {
            c.samples.clear();
            c.spent = 0.0;
            sample(&inp, c, 1); // warm-up, untimed
        }
        let (min_samples, min_time, max_rounds) =
            if o.quick { (3, 0.0, 3) } else { (o.min_samples, o.min_time, o.max_rounds) };
        // Rounds: one sample of every configuration that still needs one
        // (fewer than min_samples, or less than min_time spent).
        let t_all = Instant::now();
        for _round in 0..max_rounds {
            let mut any = false;
            for c in cfg.iter_mut() {
                if c.samples.len() >= min_samples && c.spent >= min_time {
                    continue;
                }
                any = true;
                let ns_total = sample(&inp, c, batch);
                c.spent += ns_total / 1e9;
                c.samples.push(ns_total / (batch as f64 * inp.units));
            }
            if !any {
                break;
            }
        }
        println!(
            "\n{} n = {} ({} {}s), {} run{} per sample, {:.1} s sampling",
            work.name(),
            n,
            inp.units,
            work.unit(),
            batch,
            if batch == 1 { "" } else { "s" },
            t_all.elapsed().as_secs_f64()
        );
        println!(
            "  {:<14} {:>7} {:>10} {:>10} {:>10} {:>12} {:>8}",
            "impl", "threads", "median", "min", "max", "vs baseline", "samples"
        );
        let mut base = 0.0;
        for c in cfg.iter_mut() {
            let m = c.samples.len();
            let med = median(&mut c.samples);
            if c.pool.is_none() {
                base = med;
            }
            let ratio = if base > 0.0 { format!("{:.2}x", med / base) } else { "-".into() };
            println!(
                "  {:<14} {:>7} {:>10.3} {:>10.3} {:>10.3} {:>12} {:>8}",
                c.impl_name, c.threads, med, c.samples[0], c.samples[m - 1], ratio, m
            );
            if let Some(f) = csv.as_mut() {
                write!(
                    f,
                    "{},{},{},{},0,{:.4},{:.4},{:.4},",
                    work.name(),
                    n,
                    c.impl_name,
                    c.threads,
                    med,
                    c.samples[0],
                    c.samples[m - 1]
                )
                .unwrap();
                if base > 0.0 {
                    write!(f, "{:.4}", med / base).unwrap();
                }
                writeln!(f, ",{}", m).unwrap();
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Idle pool and wake latency
// ---------------------------------------------------------------------------

fn cpu_ms() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec we pass.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 * 1e3 + ts.tv_nsec as f64 / 1e6
}

fn gettid() -> i64 {
    // SAFETY: no arguments, always succeeds.
    unsafe { libc::syscall(libc::SYS_gettid) }
}

/// Context switches (voluntary + nonvoluntary) of every thread but `main`,
/// and of `main`, from /proc/self/task/*/status; and the thread count.
fn switches(main: i64) -> (i64, i64, usize) {
    let (mut others, mut me, mut n) = (0i64, 0i64, 0usize);
    let dir = std::fs::read_dir("/proc/self/task").unwrap_or_else(|e| {
        eprintln!("/proc/self/task: {}", e);
        exit(2)
    });
    for e in dir.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let Ok(text) = std::fs::read_to_string(format!("/proc/self/task/{}/status", name)) else {
            continue;
        };
        let mut v = 0i64;
        for line in text.lines() {
            for key in ["voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:"] {
                if let Some(rest) = line.strip_prefix(key) {
                    v += rest.trim().parse::<i64>().unwrap_or(0);
                }
            }
        }
        n += 1;
        if name.parse::<i64>().ok() == Some(main) {
            me += v;
        } else {
            others += v;
        }
    }
    (others, me, n)
}

fn window(label: &str, secs: f64, threads: usize) {
    let main = gettid();
    let c0 = switches(main);
    let (cpu0, w0) = (cpu_ms(), Instant::now());
    std::thread::sleep(Duration::from_secs_f64(secs));
    let (cpu1, w) = (cpu_ms(), w0.elapsed().as_secs_f64());
    let c1 = switches(main);
    println!(
        "  rayon {:<6} {:>3} threads ({} in process): {:.2} s window: CPU {:.3} ms, \
         context switches {} (other threads) + {} (main thread, its own sleep)",
        label,
        threads,
        c1.2,
        w,
        cpu1 - cpu0,
        c1.0 - c0.0,
        c1.1 - c0.1
    );
    println!(
        "IDLE,rayon,{},{},{:.3},{},{:.2}",
        label,
        threads,
        cpu1 - cpu0,
        c1.0 - c0.0,
        w
    );
}

fn idle(o: &Opts) {
    let t = o.threads.first().copied().unwrap_or(16);
    println!(
        "idle: rayon ThreadPool of {} threads; CPU time of the whole process and context \
         switches of the pool's threads while the main thread sleeps",
        t
    );
    {
        let pool = make_pool(t);
        std::thread::sleep(Duration::from_millis(100));
        window("fresh", o.sleep, t);
        drop(pool);
    }
    let tree = tree_build(1, o.nodes as i64).unwrap();
    let pool = make_pool(t);
    std::thread::sleep(Duration::from_millis(100));
    let main = gettid();
    let c0 = switches(main);
    let (cpu0, w0) = (cpu_ms(), Instant::now());
    let s = pool.install(|| tree_sum_rayon(&tree));
    let (cpu1, w) = (cpu_ms(), w0.elapsed().as_secs_f64());
    let c1 = switches(main);
    let n = o.nodes;
    if s as u64 != n * (n + 1) / 2 {
        eprintln!("idle: WRONG SUM {}", s);
        std::process::abort();
    }
    println!(
        "  job: tree sum of {} nodes, {:.2} ms wall, {:.2} ms CPU, {} context switches \
         (other threads), sum checked",
        n,
        w * 1e3,
        cpu1 - cpu0,
        c1.0 - c0.0
    );
    window("after", o.sleep, t);
    drop(pool);
}

/// Wake latency: inside the pool, with the other workers asleep (after a gap
/// of gap_ms in which the pool has no work), take t0 and call rayon::join(a,
/// b): join pushes b on this worker's deque, where a sleeping worker must be
/// woken to steal it, and runs a, which spins until b has started elsewhere
/// (bounded by 100 ms; then the sample counts as "not taken" and join runs b
/// here). Latency = the time b starts on another thread minus t0.
fn wake(o: &Opts) {
    let t = o.threads.first().copied().unwrap_or(2);
    if t < 2 {
        eprintln!("wake: needs at least 2 threads");
        exit(2);
    }
    let pool = make_pool(t);
    let base = Instant::now();
    let mut lat: Vec<f64> = Vec::new();
    let mut not_taken = 0usize;
    pool.install(|| {
        let me = rayon::current_thread_index();
        for i in 0..o.samples + 1 {
            std::thread::sleep(Duration::from_millis(o.gap_ms));
            let started = AtomicBool::new(false);
            let t_start = AtomicU64::new(0);
            let other = AtomicBool::new(false);
            let t0 = base.elapsed().as_nanos() as u64;
            rayon::join(
                || {
                    let limit = Instant::now() + Duration::from_millis(100);
                    while !started.load(Ordering::Acquire) && Instant::now() < limit {
                        std::hint::spin_loop();
                    }
                },
                || {
                    t_start.store(base.elapsed().as_nanos() as u64, Ordering::Relaxed);
                    other.store(rayon::current_thread_index() != me, Ordering::Relaxed);
                    started.store(true, Ordering::Release);
                },
            );
            if i == 0 {
                continue; // warm-up
            }
            if other.load(Ordering::Relaxed) {
                lat.push((t_start.load(Ordering::Relaxed) - t0) as f64 / 1e3);
            } else {
                not_taken += 1;
            }
        }
    });
    let k = lat.len();
    if k == 0 {
        println!("wake: rayon {} threads: no job was taken by another thread", t);
        return;
    }
    let med = median(&mut lat);
    let p90 = lat[(k * 9 / 10).min(k - 1)];
    println!(
        "wake: rayon {} threads, gap {} ms: join -> job start on another thread: \
         median {:.1} us, min {:.1}, p90 {:.1}, max {:.1} ({} samples, {} not taken within 100 ms)",
        t, o.gap_ms, med, lat[0], p90, lat[k - 1], k, not_taken
    );
    println!("WAKE,rayon,{},{:.2},{:.2},{:.2},{:.2},{}", t, med, lat[0], p90, lat[k - 1], k);
}

// ---------------------------------------------------------------------------

fn usage() -> ! {
    eprintln!(
        "usage: clove-rayon-bench tree_sum|fib|nqueens [-n N]... [-t T]... [--baseline]\n\
         \x20                         [--min-time S] [--max-rounds R] [--min-samples K]\n\
         \x20                         [--csv FILE] [--quick]\n\
         \x20      clove-rayon-bench idle [-t T] [--sleep S] [--nodes N]\n\
         \x20      clove-rayon-bench wake [-t T] [--samples K] [--gap-ms G]"
    );
    exit(2)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() {
        usage();
    }
    let mut o = Opts {
        ns: vec![],
        threads: vec![],
        baseline: false,
        min_time: 0.5,
        max_rounds: 2000,
        min_samples: 5,
        csv: None,
        quick: false,
        sleep: 2.0,
        nodes: 1_000_000,
        samples: 100,
        gap_ms: 20,
    };
    let mut i = 1;
    let next = |i: &mut usize| -> String {
        *i += 1;
        args.get(*i).cloned().unwrap_or_else(|| usage())
    };
    fn num<T: std::str::FromStr>(s: String) -> T {
        // accept 1e7 style for integers too
        s.parse::<T>().ok().or_else(|| s.parse::<f64>().ok().and_then(|f| format!("{}", f as u64).parse().ok())).unwrap_or_else(|| usage())
    }
    while i < args.len() {
        match args[i].as_str() {
            "-n" => o.ns.push(num(next(&mut i))),
            "-t" => {
                let t: usize = num(next(&mut i));
                if t == 0 || t > 4096 {
                    usage();
                }
                o.threads.push(t)
            }
            "--baseline" => o.baseline = true,
            "--min-time" => o.min_time = num(next(&mut i)),
            "--max-rounds" => o.max_rounds = num(next(&mut i)),
            "--min-samples" => o.min_samples = num(next(&mut i)),
            "--csv" => o.csv = Some(next(&mut i)),
            "--quick" => o.quick = true,
            "--sleep" => o.sleep = num(next(&mut i)),
            "--nodes" => o.nodes = num(next(&mut i)),
            "--samples" => o.samples = num(next(&mut i)),
            "--gap-ms" => o.gap_ms = num(next(&mut i)),
            _ => usage(),
        }
        i += 1;
    }
    match args[0].as_str() {
        "tree_sum" => bench(Work::TreeSum, &o),
        "fib" => bench(Work::Fib, &o),
        "nqueens" => bench(Work::NQueens, &o),
        "idle" => idle(&o),
        "wake" => wake(&o),
        _ => usage(),
    }
}
