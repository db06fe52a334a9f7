#!/usr/bin/env python3
"""plot_timeline.py — draws a tristream Chrome trace (tristream count --trace FILE) as a PNG
timeline: one lane per stage (decompress, transform, upload, kernel, wait), one bar per unit; with
several workers (--devices, --hybrid) one group of lanes per worker.

usage: scripts/plot_timeline.py TRACE.json [-o OUT.png] [--title TEXT] [--max-units N]

Needs matplotlib; when it is missing, says how to install it (nothing is installed for you).
"""
import argparse
import json
import sys


def need_matplotlib():
    try:
        import matplotlib
    except ImportError:
        sys.exit(
            "plot_timeline: matplotlib is not installed. Install it with one of\n"
            "  python3 -m pip install --user matplotlib\n"
            "  sudo apt-get install python3-matplotlib     (Debian, Ubuntu)\n"
            "  conda install matplotlib\n"
            "or inside a virtual environment: python3 -m venv venv && venv/bin/pip install "
            "matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


COLORS = {
    "decompress": "#8c6bb1",
    "transform": "#41ab5d",
    "upload": "#fd8d3c",
    "kernel": "#2171b5",
    "wait": "#bdbdbd",
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("-o", "--output", help="PNG to write [TRACE with .png]")
    ap.add_argument("--title", help="plot title [the trace's process name]")
    ap.add_argument("--max-units", type=int, default=0,
                    help="only draw spans of the first N units (0 = all)")
    args = ap.parse_args()

    with open(args.trace) as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    # lanes keyed by (pid, tid): a process per worker when there are several
    lanes, procs, title = {}, {}, "tristream"
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            lanes[(e.get("pid", 1), e["tid"])] = e["args"]["name"]
        if e.get("ph") == "M" and e.get("name") == "process_name":
            procs[e.get("pid", 1)] = e["args"]["name"]
    if len(procs) == 1:
        title = next(iter(procs.values()))
    elif procs:
        # (process 0, when present, is the host block store the workers share)
        workers = sum(1 for n in procs.values() if n.startswith("worker "))
        title = "tristream, %d workers" % (workers or len(procs))
    spans = [e for e in events if e.get("ph") == "X"]
    if args.max_units > 0:
        spans = [e for e in spans if e.get("args", {}).get("unit", 0) < args.max_units]
    if not spans:
        sys.exit("plot_timeline: no spans in " + args.trace)
    plt = need_matplotlib()

    used = {(e.get("pid", 1), e["tid"]) for e in spans}
    order = sorted(k for k in lanes if k in used or len(procs) <= 1) if lanes else sorted(used)
    ypos = {tid: i for i, tid in enumerate(reversed(order))}
    fig, ax = plt.subplots(figsize=(14, 0.7 * len(order) + 1.8))
    t0 = min(e["ts"] for e in spans)

    def label(key):
        name = lanes.get(key, str(key[1]))
        return "w%d %s" % (key[0] - 1, name) if len(procs) > 1 else name

    for tid in order:
        mine = [e for e in spans if (e.get("pid", 1), e["tid"]) == tid]
        name = lanes.get(tid, str(tid[1]))
        bars = [((e["ts"] - t0) / 1000.0, max(e["dur"] / 1000.0, 1e-3)) for e in mine]
        ax.broken_barh(bars, (ypos[tid] - 0.35, 0.7), facecolors=COLORS.get(name, "#969696"),
                       edgecolors="white", linewidth=0.3)
    ax.set_yticks([ypos[t] for t in order])
    ax.set_yticklabels([label(t) for t in order])
    ax.set_xlabel("time (ms)")
    other = trace.get("otherData", {}) if isinstance(trace, dict) else {}
    sub = ""
    if other:
        sub = "  wall %.3f s, exposed transfer %.3f s, overlap %.0f%%" % (
            other.get("wall_s", 0), other.get("exposed_transfer_s", 0),
            100.0 * (other.get("overlap", 0) or 0))
    ax.set_title((args.title or title) + sub)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    out = args.output or (args.trace.rsplit(".", 1)[0] + ".png")
    fig.savefig(out, dpi=120)
    print(out)


if __name__ == "__main__":
    main()
