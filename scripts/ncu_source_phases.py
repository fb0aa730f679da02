#!/usr/bin/env python3
"""Where a kernel's warps stall, by phase, from Nsight Compute's source page as CSV:

    ncu --import-source yes --section WarpStateStats --section SourceCounters -k regex:NAME -c 1 -o rep ...
    ncu -i rep.ncu-rep --page source --csv --print-source sass > NAME-sass.csv
    python3 scripts/ncu_source_phases.py NAME-sass.csv [more.csv ...]

Stall samples are taken at a fixed interval per scheduler, so a kernel's sample count is in
proportion to its duration, and two kernels' counts compare as their times do. Each instruction
is put in a phase by where it lies and how often it ran: the row loop runs from the first
instruction executed as often as the most frequent global load to the last branch executed
exactly that often (its back edge); the start is what lies before, the end what lies after. Prints each phase's share of
the samples, the stall reasons overall and the instructions that took the most samples.
"""
import csv
import sys
from collections import Counter

SAMPLES = "Warp Stall Sampling (All Samples)"


def read(path):
    rows = list(csv.reader(open(path)))
    header = rows[1]  # rows[0] names the kernel
    return rows[0][1] if len(rows[0]) > 1 else path, header, [r for r in rows[2:] if len(r) == len(header)]


def report(path):
    kernel, header, data = read(path)
    col = {h: i for i, h in enumerate(header)}
    num = lambda r, k: float(r[col[k]].replace(",", "") or 0)  # noqa: E731
    samples = [num(r, SAMPLES) for r in data]
    executed = [num(r, "Instructions Executed") for r in data]
    total = sum(samples)
    loads = [executed[i] for i, r in enumerate(data) if "LDG" in r[col["Source"]]]
    per_row = max(loads) if loads else max(executed)
    # From the first instruction run as often as the loads to the loop's back edge: the last branch
    # run exactly that often (the end may hold loops of its own that run more).
    loop = [i for i, e in enumerate(executed) if e >= per_row]
    edges = [i for i in loop if executed[i] == per_row and "BRA" in data[i][col["Source"]]]
    first, last = (min(loop), max(edges or loop)) if loop else (0, len(data) - 1)
    phase = lambda a, b: sum(samples[a:b])  # noqa: E731
    print(f"== {path}: {kernel[:110]}")
    print(f"   {total:.0f} samples, {sum(executed):.0f} warp instructions executed")
    print(f"   start {phase(0, first) / total:.1%}, row loop {phase(first, last + 1) / total:.1%}, "
          f"end {phase(last + 1, len(data)) / total:.1%} ({phase(last + 1, len(data)):.0f} samples)")
    reasons = [h for h in header if h.startswith("stall_") and "Not Issued" not in h]
    overall = Counter({h: sum(num(r, h) for r in data) for h in reasons})
    print("   " + ", ".join(f"{h[6:]} {v / total:.1%}" for h, v in overall.most_common(6)))
    for i in sorted(range(len(data)), key=lambda i: -samples[i])[:12]:
        where = "start" if i < first else "end" if i > last else "loop"
        top = max(reasons, key=lambda h: num(data[i], h))[6:]
        print(f"   {samples[i] / total:6.1%} {where:5s} {data[i][col['Source']].strip()[:64]:64s} {top}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for p in sys.argv[1:]:
        report(p)
