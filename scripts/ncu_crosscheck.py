#!/usr/bin/env python3
"""The cupti timer against Nsight Compute, kernel by kernel (issue 17).

On the GPU machine (scripts/gpu_session.sh does this with NCU_CHECK=1):
    kbench run --config configs/timer_check.json --out OUT            # events, graph, cupti
    ncu --clock-control none --metrics gpu__time_duration.sum --csv --log-file ncu.csv \\
        kbench check --config configs/timer_check.json > check.log
    python3 scripts/ncu_crosscheck.py --ncu ncu.csv --check check.log --result OUT/sweep/<file>.json

`kbench check` launches each variant twice (the check, then the repeat that must give the same
bits); every variant of the config launches one kernel, so the kernels ncu profiled pair with
the check's "ok" lines in order, two per line. ncu flushes the caches before each kernel it
profiles (its default cache control), so its times are set against the cold cupti medians.
Prints a table with ncu's offset (ncu minus cupti) per kernel and exits 1 when a kernel of
--min-us or more (default 10) differs by more than --within (default 2%), when fewer than
--at-least (default 10, issue 17's count) such kernels were judged, or when the launches do not
pair up. Kernels under --min-us are listed, not judged: a config puts a near-empty one there to
show ncu's fixed offset whole (a 2 us kernel carries all of it and next to no work).
"""
import argparse
import csv
import json
import re
import statistics
import sys

# ncu 2025 writes ns/us/ms/s; older versions the long names.
UNIT_US = {"nsecond": 1e-3, "usecond": 1.0, "msecond": 1e3, "second": 1e6, "ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}


def ncu_durations(path):
    """[(kernel name, microseconds)] in launch order from ncu's --csv output."""
    with open(path, newline="") as f:
        lines = [line for line in f if line.startswith('"')]  # ncu's own ==PROF== lines are not CSV
    out = {}
    for row in csv.DictReader(lines):
        if row.get("Metric Name") != "gpu__time_duration.sum":
            continue
        scale = UNIT_US.get(row["Metric Unit"])
        if scale is None:
            sys.exit(f"ncu_crosscheck: unknown unit {row['Metric Unit']!r} in {path}")
        out[int(row["ID"])] = (row["Kernel Name"], float(row["Metric Value"].replace(",", "")) * scale)
    return [out[k] for k in sorted(out)]


def check_lines(path):
    """The (case label, variant) of every passed check, in order."""
    pattern = re.compile(r"^ok\s+(.*?)\s{2,}(\S+)\s+max_err")
    found = []
    with open(path) as f:
        for line in f:
            m = pattern.match(line.strip())
            if m:
                found.append((m.group(1).strip(), m.group(2)))
            elif line.startswith("FAIL"):
                sys.exit(f"ncu_crosscheck: a check failed under ncu: {line.strip()}")
    return found


def cupti_medians(path):
    with open(path) as f:
        result = json.load(f)
    medians = {}
    for r in result["records"]:
        if r["timer"] == "cupti" and r["cache"] == "cold":
            params = tuple(sorted((k, float(v)) for k, v in (r.get("params") or {}).items()))
            case = (r["op"], r["dtype"], "x".join(str(d) for d in r["shape"]), params)
            medians[(case, r["variant"])] = r["median_us"]
    return medians


def check_case(label):
    """A check line's case, "op dtype shape k=v ...", as cupti_medians keys it: the parameters
    matter (two stream cases of one size differ only in reads= and writes=)."""
    op, dtype, shape, *rest = label.split()
    params = tuple(sorted((k, float(v)) for k, v in (item.split("=", 1) for item in rest)))
    return (op, dtype, shape, params)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ncu", required=True, help="ncu --csv log of kbench check")
    ap.add_argument("--check", required=True, help="kbench check's output")
    ap.add_argument("--result", required=True, help="the sweep result with cupti records")
    ap.add_argument("--within", type=float, default=2.0, help="allowed difference, percent")
    ap.add_argument("--min-us", type=float, default=10.0, help="judge kernels of at least this many us (ncu)")
    ap.add_argument("--at-least", type=int, default=10, help="the fewest kernels that must be judged")
    a = ap.parse_args()

    kernels = ncu_durations(a.ncu)
    checks = check_lines(a.check)
    if len(kernels) != 2 * len(checks):
        sys.exit(f"ncu_crosscheck: {len(kernels)} kernels profiled for {len(checks)} checks (expected two each): "
                 "a variant of the config launches more than one kernel, or something else launched")
    medians = cupti_medians(a.result)
    print("| case | variant | kernel | ncu us | cupti us | ncu - cupti us | cupti / ncu |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    worst = 0.0
    judged = 0
    for i, (label, variant) in enumerate(checks):
        (name, t0), (name1, t1) = kernels[2 * i], kernels[2 * i + 1]
        if name != name1:
            sys.exit(f"ncu_crosscheck: the two launches of {label} {variant} ran different kernels ({name}, {name1})")
        key = (check_case(label), variant)
        if key not in medians:
            sys.exit(f"ncu_crosscheck: no cold cupti record of {label} {variant} in {a.result}")
        ncu_us = statistics.mean([t0, t1])
        ratio = medians[key] / ncu_us
        note = ""
        if ncu_us >= a.min_us:
            worst = max(worst, abs(ratio - 1))
            judged += 1
        else:
            note = " (not judged: under --min-us)"
        print(f"| {label} | {variant} | {name.split('(')[0][:40]} | {ncu_us:.2f} | {medians[key]:.2f} "
              f"| {ncu_us - medians[key]:.2f} | {ratio:.4f}{note} |")
    print(f"\nworst difference {100 * worst:.2f}% over {judged} kernels of {a.min_us:g} us or more "
          f"(allowed {a.within}%, at least {a.at_least} kernels)")
    sys.exit(0 if 100 * worst <= a.within and judged >= a.at_least else 1)


if __name__ == "__main__":
    main()
