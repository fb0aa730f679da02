#!/usr/bin/env python3
"""Markdown tables of the figures docs quote, printed straight from saved result files, so
that a figure in docs/ is copied from a result rather than typed (kbench verify then checks
each one against the saved medians). Each table is preceded by a line naming it and where it
goes; the tables are the ones docs/results.md and docs/kernels.md show, in their order (all but
kernels.md's split-pieces table, which is history: an archived run with a scratch variant).

    scripts/doc_tables.py foundation RESULT.json
    scripts/doc_tables.py rows RESULT.json
    scripts/doc_tables.py torch KBENCH_RESULT.json... TORCH_RESULT.json
"""
import json
import sys
from collections import defaultdict


def load(paths):
    records = []
    for p in paths:
        with open(p) as f:
            records += json.load(f)["records"]
    return records


def shape(r):
    return "x".join(str(d) for d in r["shape"])


def title(text):
    print(f"\n<!-- {text} -->")


def foundation_table(records, keep):
    print("| op | variant | dtype | elements | cache | timer | median | GB/s | of copy |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in records:
        if r["variant"] == "scalar" or not keep(r):
            continue
        print(f"| {r['op']} | {r['variant']} | {r['dtype']} | {shape(r)} | {r['cache']} | {r['timer']} "
              f"| {r['median_us']:.3f} us | {r['gbps']:.1f} GB/s | {100 * r['copy_fraction']:.1f}% |")


# The launch-overhead table: the copy in float32, and the vec16 add in float32 and float16.
LAUNCH_ROWS = {("copy", "memcpy", "float32"), ("copy", "vec16", "float32"),
               ("add", "vec16", "float32"), ("add", "vec16", "float16")}


def foundation(records):
    title("results.md, Copy and add: 2^28 elements, cold, events")
    foundation_table(records, lambda r: r["shape"][0] == 1 << 28 and r["cache"] == "cold"
                     and r["timer"] == "events")
    title("results.md, Launch overhead at 2^20 elements (cold, both timers)")
    launch = sorted((r for r in records if r["shape"][0] == 1 << 20 and r["cache"] == "cold"
                     and (r["op"], r["variant"], r["dtype"]) in LAUNCH_ROWS),
                    key=lambda r: (r["op"] != "copy", r["dtype"] != "float32", r["variant"] != "memcpy",
                                   r["timer"]))
    foundation_table(launch, lambda r: True)


TARGET_SHAPES = {"4096x4096", "8192x8192", "16384x1024"}  # issue 3's speed targets


def rows(records):
    cells = defaultdict(dict)
    for r in records:
        if r["op"] != "copy" and r["cache"] == "cold":
            cells[(r["op"], shape(r), r["dtype"], r["timer"])][r["variant"]] = r
    parts = [("kernels.md, Target shapes, events timer",
              lambda k: k[1] in TARGET_SHAPES and k[3] == "events"),
             ("kernels.md, Target shapes, graph timer",
              lambda k: k[1] in TARGET_SHAPES and k[3] == "graph"),
             ("kernels.md, Few-row and wide shapes, both timers",
              lambda k: k[1] not in TARGET_SHAPES)]
    for name, keep in parts:
        title(name)
        print("| op | shape | dtype | timer | auto | GB/s | of copy | baseline | speed-up |")
        print("|---|---|---|---|---|---|---|---|---|")
        for (op, shp, dt, timer), v in cells.items():
            if not keep((op, shp, dt, timer)):
                continue
            base = "cub" if op == "row_sum" else "eager"
            a, b = v["auto"], v[base]
            print(f"| {op} | {shp} | {dt} | {timer} | {a['median_us']:.2f} us | {a['gbps']:.0f} GB/s "
                  f"| {100 * a['copy_fraction']:.1f}% | {base} {b['median_us']:.2f} us "
                  f"| {b['median_us'] / a['median_us']:.2f}x |")
    # The copies the rows config adds of the bytes its target shapes move (memcpy below 2^28
    # elements, cold): the events median and its fraction of the run's copy, the graph median.
    copies = defaultdict(dict)
    for r in records:
        if r["op"] == "copy" and r["variant"] == "memcpy" and r["cache"] == "cold" \
                and r["shape"][0] < 1 << 28:
            copies[(r["shape"][0], r["dtype"])][r["timer"]] = r
    title("kernels.md, Copies of the same bytes (memcpy, cold)")
    print("| copy | elements | dtype | events | of copy | graph |")
    print("|---|---|---|---|---|---|")
    for (n, dt), t in sorted(copies.items(), key=lambda kv: (-kv[0][0], kv[0][1] != "float32")):
        e, g = t.get("events"), t.get("graph")
        print(f"| memcpy | {n} | {dt} | " + (f"{e['median_us']:.3f} us | {100 * e['copy_fraction']:.1f}%" if e else "— | —")
              + " | " + (f"{g['median_us']:.3f} us" if g else "—") + " |")


def torch(records):
    kb = defaultdict(list)
    tv = defaultdict(dict)
    for r in records:
        key = (r["op"], shape(r), r["dtype"], r["cache"], r["timer"])
        if r["variant"].startswith("torch."):
            tv[key][r["variant"]] = r
        elif not r["baseline"]:
            kb[key].append(r)
    # Graph replay only: it times kernels without host dispatch, the fair comparison (results.md).
    title("results.md, PyTorch side by side (graph timer)")
    print("| op | shape | dtype | timer | kbench best | torch.eager | torch.compile | vs eager | vs compile |")
    print("|---|---|---|---|---|---|---|---|---|")
    for key, t in sorted(tv.items()):
        if key[0] == "copy" or not kb.get(key) or key[3] != "cold" or key[4] != "graph":
            continue
        best = min(kb[key], key=lambda r: r["median_us"])
        e, c = t.get("torch.eager"), t.get("torch.compile")
        cell = lambda x: f"{x['median_us']:.2f} us" if x else "—"
        ratio = lambda x: f"{x['median_us'] / best['median_us']:.2f}x" if x else "—"
        print(f"| {key[0]} | {key[1]} | {key[2]} | {key[4]} | {best['variant']} {best['median_us']:.2f} us "
              f"| {cell(e)} | {cell(c)} | {ratio(e)} | {ratio(c)} |")


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("foundation", "rows", "torch"):
        sys.exit(__doc__)
    {"foundation": foundation, "rows": rows, "torch": torch}[sys.argv[1]](load(sys.argv[2:]))
