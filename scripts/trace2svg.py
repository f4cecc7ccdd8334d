#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Render a clove trace (Chrome trace-event JSON, as written by a pool with
config.trace_path or CLOVE_TRACE set) as an SVG timeline: one row per
worker, "job" spans in green, "wait" in orange, "sleep" in grey, the
clove_pool_run calls in light blue, share
instants as blue ticks and unanswered heartbeats as light ticks.

    python3 scripts/trace2svg.py trace.json out.svg [--from US] [--to US]

Perfetto (ui.perfetto.dev) and chrome://tracing open the JSON itself; this
is for pictures in documents."""
import json
import sys


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    opts = dict(zip(argv[1::1], argv[2::1]))
    if len(args) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    src, dst = args[0], args[1]
    t_from = float(opts.get("--from", "nan"))
    t_to = float(opts.get("--to", "nan"))
    with open(src) as f:
        events = json.load(f)["traceEvents"]
    names, spans, instants = {}, [], []
    title = "clove trace"
    for e in events:
        if e["ph"] == "M":
            if e["name"] == "thread_name":
                names[e["tid"]] = e["args"]["name"]
            elif e["name"] == "process_name":
                title = e["args"]["name"]
        elif e["ph"] == "X":
            spans.append((e["tid"], e["ts"], e["dur"], e["name"]))
        elif e["ph"] == "i":
            instants.append((e["tid"], e["ts"], e["name"]))
    # By default show the time something other than sleeping happened.
    busy = [s for s in spans if s[3] != "sleep"] or spans
    times = [s[1] for s in busy] + [s[1] + s[2] for s in busy] + [i[1] for i in instants]
    if not times:
        times = [0.0, 1.0]
    lo = min(times) if t_from != t_from else t_from
    hi = max(times) if t_to != t_to else t_to
    if hi <= lo:
        hi = lo + 1
    tids = sorted(names) or sorted({s[0] for s in spans})
    width, left, row, top = 1000, 130, 26, 40
    height = top + row * len(tids) + 40
    x = lambda t: left + (t - lo) / (hi - lo) * (width - left - 10)
    colors = {"run": "#7fb3e0", "job": "#3a9a4a", "wait": "#e08a2c", "sleep": "#c8c8c8"}
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="10" y="20" font-size="14">{title}: {hi - lo:.0f} us shown</text>']
    order = {"run": 0, "sleep": 1, "wait": 2, "job": 3}
    for r, tid in enumerate(tids):
        y = top + r * row
        out.append(f'<text x="10" y="{y + 16}">{names.get(tid, tid)}</text>')
        out.append(f'<line x1="{left}" y1="{y + row - 2}" x2="{width - 10}" '
                   f'y2="{y + row - 2}" stroke="#eee"/>')
        mine = sorted((s for s in spans if s[0] == tid), key=lambda s: (order[s[3]], s[1]))
        for _, ts, dur, name in mine:
            a, b = max(ts, lo), min(ts + dur, hi)
            if b <= a:
                continue
            inset = {"run": 2, "sleep": 2, "wait": 4, "job": 6}[name]
            out.append(f'<rect x="{x(a):.1f}" y="{y + inset}" width="{max(x(b) - x(a), 0.5):.1f}" '
                       f'height="{row - 2 * inset - 2}" fill="{colors[name]}"/>')
        for itid, ts, name in instants:
            if itid != tid or not lo <= ts <= hi:
                continue
            c = {"share": "#2050d0", "stolen": "#d02020"}.get(name, "#9ab")
            out.append(f'<line x1="{x(ts):.1f}" y1="{y}" x2="{x(ts):.1f}" y2="{y + 6}" '
                       f'stroke="{c}"/>')
    ly = top + row * len(tids) + 20
    for k, (label, c) in enumerate([("clove_pool_run", colors["run"]), ("shared job run", colors["job"]), ("waiting in a join", colors["wait"]),
                                    ("asleep", colors["sleep"]), ("share", "#2050d0"),
                                    ("stolen", "#d02020"), ("heartbeat", "#9ab")]):
        out.append(f'<rect x="{left + k * 140}" y="{ly - 10}" width="12" height="12" fill="{c}"/>')
        out.append(f'<text x="{left + k * 140 + 16}" y="{ly}">{label}</text>')
    out.append("</svg>")
    with open(dst, "w") as f:
        f.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
