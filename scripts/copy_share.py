#!/usr/bin/env python3
"""Each case's variants as a share of the best copy of the 2^28-element roofline in the same
result file and timer (how issue 14's "% of copy" targets are read): median us, GB/s, share.

Usage: python3 scripts/copy_share.py RESULT.json [--op OP] [--variant NAME ...]
"""
import argparse
import json
import sys


def main(argv) -> int:
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument("result")
    ap.add_argument("--op")
    ap.add_argument("--variant", nargs="+")
    a = ap.parse_args(argv)
    try:
        records = json.load(open(a.result))["records"]
    except (OSError, ValueError, KeyError) as e:
        print(f"copy_share: cannot read {a.result}: {e}", file=sys.stderr)
        return 2
    best = {}
    for r in records:
        if r["op"] == "copy" and r["shape"] == [1 << 28]:
            key = (r["cache"], r["timer"])
            best[key] = max(best.get(key, 0.0), r["gbps"])
    print("| op | dtype | shape | timer | variant | median | GB/s | of best copy |\n|---|---|---|---|---|---|---|---|")
    for r in records:
        if r["op"] == "copy" or (a.op and r["op"] != a.op) or (a.variant and r["variant"] not in a.variant):
            continue
        copy = best.get((r["cache"], r["timer"]))
        share = f"{100 * r['gbps'] / copy:.1f}%" if copy else "—"
        shape = "x".join(str(s) for s in r["shape"])
        print(f"| {r['op']} | {r['dtype']} | {shape} | {r['timer']} | {r['variant']} | {r['median_us']:.2f} us | "
              f"{r['gbps']:.0f} | {share} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
