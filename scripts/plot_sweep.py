#!/usr/bin/env python3
"""Plots of a `kbench run` (sweep) result: for each op, one panel per dtype, the rate of every
variant against the case (GB/s for memory-bound ops, TFLOP/s for ops that count flops), one
cache mode and timer at a time, with the ceilings drawn: the run's own best copy bandwidth (the
copy roofline, same cache and timer) and each case's same-traffic roofline (the stream of its
read:write mix at its bytes, where the record has one) on GB/s panels, and on TFLOP/s panels the
fastest baseline of each case (cuBLAS at its best, for GEMM). Records that failed their check
are left out, and so are the rooflines' own copy and stream records.
Needs matplotlib (the GPU machine's image has it); without it, --csv writes the points as CSV.

    python3 scripts/plot_sweep.py results/sweep/sweep-....json --op gemm --variant auto --variant cublas_best \
        --out docs/images/sweep_gemm.png
    python3 scripts/plot_sweep.py results/sweep/sweep-....json --csv points.csv
"""
import argparse
import csv
import json
import sys


def load(path):
    with open(path) as f:
        result = json.load(f)
    if result.get("experiment") != "sweep":
        sys.exit(f"plot_sweep: {path} is not a sweep result (experiment {result.get('experiment')!r})")
    return result


def shape_label(shape, params):
    text = "x".join(str(d) for d in shape)
    if params:
        text += " " + " ".join(f"{k}={v:g}" for k, v in sorted(params.items()))
    return text


def points(result, cache, timer, ops=None, variants=None):
    """(op, dtype, case label, variant, baseline, rate, unit, same-traffic GB/s or None) for every
    checked record."""
    out = []
    for r in result["records"]:
        if r["cache"] != cache or r["timer"] != timer or r["op"] in ("copy", "stream"):
            continue
        if (ops and r["op"] not in ops) or (variants and r["variant"] not in variants):
            continue
        if not r.get("check", {}).get("passed", False) or not r.get("median_us"):
            continue
        flops = r.get("flops", 0) > 0
        rate = r.get("tflops") if flops else r.get("gbps")
        roof = (r.get("roofline") or {}).get("gbps")
        out.append((r["op"], r["dtype"], shape_label(r["shape"], r.get("params")), r["variant"],
                    bool(r.get("baseline")), rate, "TFLOP/s" if flops else "GB/s", roof))
    return out


def copy_roofline(result, cache, timer):
    """The run's best copy GB/s in this cache mode and timer (0 when the run has no copy)."""
    rates = [r.get("gbps", 0) for r in result["records"]
             if r["op"] == "copy" and r["cache"] == cache and r["timer"] == timer and r.get("check", {}).get("passed")]
    return max(rates, default=0)


def write_csv(pts, out):
    with open(out, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["op", "dtype", "case", "variant", "baseline", "rate", "unit", "same_traffic_gbps"])
        for p in pts:
            w.writerow(list(p[:4]) + [int(p[4]), p[5], p[6], "" if p[7] is None else p[7]])


def plot(pts, roof, cache, timer, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ops = sorted({p[0] for p in pts})
    panels = [(op, dt) for op in ops for dt in sorted({p[1] for p in pts if p[0] == op})]
    fig, axes = plt.subplots(len(panels), 1, figsize=(12, 3.4 * len(panels)), squeeze=False)
    for ax, (op, dtype) in zip(axes[:, 0], panels):
        mine = [p for p in pts if p[0] == op and p[1] == dtype]
        cases = list(dict.fromkeys(p[2] for p in mine))  # in file order
        unit = mine[0][6]
        for variant in sorted({p[3] for p in mine}):
            xs, ys = [], []
            for p in mine:
                if p[3] == variant:
                    xs.append(cases.index(p[2]))
                    ys.append(p[5])
            baseline = any(p[4] for p in mine if p[3] == variant)
            # Points only: the cases are categories, and a line would bridge the ones a variant skips.
            ax.plot(xs, ys, marker="s" if baseline else "o", linestyle="none", markersize=5,
                    label=variant + (" (baseline)" if baseline else ""))
        if unit == "GB/s" and roof > 0:
            ax.axhline(roof, color="black", linewidth=1.2, label=f"copy roofline {roof:.0f} GB/s")
        same = [max((p[7] for p in mine if p[2] == c and p[7]), default=float("nan")) for c in cases]
        if unit == "GB/s" and any(v == v for v in same):  # NaN where a case has none
            ax.plot(range(len(cases)), same, color="black", marker="_", markersize=18, linestyle="none",
                    label="same-traffic roofline")
        if unit == "TFLOP/s":
            best = [max((p[5] for p in mine if p[2] == c and p[4]), default=float("nan")) for c in cases]
            ax.plot(range(len(cases)), best, color="black", marker="_", markersize=18, linestyle="none",
                    label="fastest baseline")
        ax.set_xticks(range(len(cases)), cases, rotation=30, ha="right", fontsize=7)
        ax.set_ylabel(unit)
        ax.set_ylim(bottom=0)
        ax.set_title(f"{op} {dtype} ({cache}, {timer} timer)", fontsize=9)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=120)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("result")
    p.add_argument("--op", action="append", help="only this op (repeatable)")
    p.add_argument("--variant", action="append", help="only this variant (repeatable)")
    p.add_argument("--cache", default="cold")
    p.add_argument("--timer", default="graph")
    p.add_argument("--out", help="PNG to write")
    p.add_argument("--csv", help="CSV of the points to write instead (no matplotlib needed)")
    a = p.parse_args()
    result = load(a.result)
    pts = points(result, a.cache, a.timer, a.op, a.variant)
    if not pts:
        sys.exit(f"plot_sweep: no checked records of {a.op or 'any op'} in {a.cache} cache and {a.timer} timer")
    if a.csv:
        write_csv(pts, a.csv)
    else:
        plot(pts, copy_roofline(result, a.cache, a.timer), a.cache, a.timer,
             a.out or a.result.rsplit(".", 1)[0] + ".png")


if __name__ == "__main__":
    main()
