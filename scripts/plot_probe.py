#!/usr/bin/env python3
"""The plot of a `kbench probe` result: per pause, the fixed kernel's time and the SM clock
(measured in the kernel, and NVML's) against time since the pause, every repetition drawn.
Needs matplotlib (the GPU machine's image has it); without it, --csv writes the series as
CSV for any other plotting tool.

    python3 scripts/plot_probe.py results/probe/probe-....json --out docs/images/probe.png
    python3 scripts/plot_probe.py results/probe/probe-....json --csv probe.csv
"""
import argparse
import csv
import json
import os
import sys


def load_series(path):
    with open(path) as f:
        result = json.load(f)
    if result.get("experiment") != "probe":
        sys.exit(f"plot_probe: {path} is not a probe result (experiment {result.get('experiment')!r})")
    probe = result["extra"]["probe"]
    return probe["series"], probe.get("analysis", {})


def write_csv(series, out):
    with open(out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["pause_s", "repetition", "position", "since_ms", "us", "sm_mhz", "nvml_mhz"])
        for s in series:
            for t, us, mhz, nvml in zip(s["since_ms"], s["us"], s["sm_mhz"], s["nvml_mhz"]):
                w.writerow([s["pause_s"], s["repetition"], s["position"], t, us, mhz, nvml])


def plot(series, analysis, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pauses = sorted({s["pause_s"] for s in series})
    colours = plt.cm.viridis([i / max(1, len(pauses) - 1) for i in range(len(pauses))])
    fig, (ax_time, ax_clock) = plt.subplots(2, 1, figsize=(9, 8), sharex=True)
    for pause, colour in zip(pauses, colours):
        for n, s in enumerate(x for x in series if x["pause_s"] == pause):
            label = f"after {pause:g} s" if n == 0 else None
            ax_time.plot(s["since_ms"], s["us"], ".-", ms=3, lw=0.6, color=colour, label=label)
            ax_clock.plot(s["since_ms"], s["sm_mhz"], ".-", ms=3, lw=0.6, color=colour)
            nvml = [(t, v) for t, v in zip(s["since_ms"], s["nvml_mhz"]) if v is not None]
            if nvml:
                ax_clock.plot(*zip(*nvml), ":", lw=0.8, color=colour)
    if "steady_us" in analysis:
        ax_time.axhline(analysis["steady_us"], color="grey", lw=0.8, ls="--", label="steady")
    needed = analysis.get("warmup_needed_ms")
    for ax in (ax_time, ax_clock):
        ax.set_xscale("symlog", linthresh=10)
        ax.set_xlim(left=0)  # time since the pause is never negative
        ax.grid(True, alpha=0.3)
        if needed is not None:
            ax.axvline(needed, color="red", lw=0.8, ls="--")
    ax_time.set_yscale("log")
    ax_time.set_ylabel("fixed kernel, us (events behind a host gate)")
    ax_clock.set_ylabel("SM clock, MHz (solid: in-kernel; dotted: NVML)")
    ax_clock.set_xlabel("time since the pause, ms (busy load between samples)")
    ax_time.legend(fontsize=8, ncol=2)
    ax_time.set_title("kbench probe: the fixed kernel after idle pauses")
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    fig.savefig(out, dpi=120)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("result")
    ap.add_argument("--out", help="PNG to write")
    ap.add_argument("--csv", help="CSV of every sample to write")
    a = ap.parse_args()
    if not a.out and not a.csv:
        ap.error("give --out FILE.png, --csv FILE.csv or both")
    series, analysis = load_series(a.result)
    if a.csv:
        write_csv(series, a.csv)
    if a.out:
        plot(series, analysis, a.out)


if __name__ == "__main__":
    main()
