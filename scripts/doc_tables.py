#!/usr/bin/env python3
"""Markdown tables of the figures docs quote, printed straight from saved result files, so
that a figure in docs/ is copied from a result rather than typed (kbench verify then checks
each one against the saved medians).

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


def foundation(records):
    print("| op | variant | dtype | elements | cache | timer | median | GB/s | of copy |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in records:
        if r["shape"][0] != 1 << 28 and not (r["shape"][0] == 1 << 20 and r["cache"] == "cold"):
            continue
        if r["variant"] == "scalar":
            continue
        print(f"| {r['op']} | {r['variant']} | {r['dtype']} | {shape(r)} | {r['cache']} | {r['timer']} "
              f"| {r['median_us']:.3f} us | {r['gbps']:.1f} GB/s | {100 * r['copy_fraction']:.1f}% |")


def rows(records):
    cells = defaultdict(dict)
    for r in records:
        if r["op"] != "copy" and r["cache"] == "cold":
            cells[(r["op"], shape(r), r["dtype"], r["timer"])][r["variant"]] = r
    print("| op | shape | dtype | timer | auto | GB/s | of copy | baseline | speed-up |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (op, shp, dt, timer), v in cells.items():
        base = "cub" if op == "row_sum" else "eager"
        a, b = v["auto"], v[base]
        print(f"| {op} | {shp} | {dt} | {timer} | {a['median_us']:.2f} us | {a['gbps']:.0f} GB/s "
              f"| {100 * a['copy_fraction']:.1f}% | {base} {b['median_us']:.2f} us "
              f"| {b['median_us'] / a['median_us']:.2f}x |")


def torch(records):
    kb = defaultdict(list)
    tv = defaultdict(dict)
    for r in records:
        key = (r["op"], shape(r), r["dtype"], r["cache"], r["timer"])
        if r["variant"].startswith("torch."):
            tv[key][r["variant"]] = r
        elif not r["baseline"]:
            kb[key].append(r)
    print("| op | shape | dtype | timer | kbench best | torch.eager | torch.compile | vs eager | vs compile |")
    print("|---|---|---|---|---|---|---|---|---|")
    for key, t in sorted(tv.items()):
        if key[0] == "copy" or not kb.get(key) or key[3] != "cold":
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
