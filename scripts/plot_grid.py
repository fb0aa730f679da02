#!/usr/bin/env python3
"""The regret heatmap of a `kbench grid` result: per cell (rows x width, one panel per dtype),
the current rule's regret (its median over the best plan's, minus 1), from
extra.grid.analysis.per_cell; cells more than 10% off are outlined. Needs matplotlib (the GPU
machine's image has it); without it, --csv writes the cells as CSV.

    python3 scripts/plot_grid.py results/grid/grid-....json --out docs/images/grid_softmax.png
    python3 scripts/plot_grid.py results/grid/grid-....json --csv grid.csv
"""
import argparse
import csv
import json
import sys


def load_cells(path):
    with open(path) as f:
        result = json.load(f)
    if result.get("experiment") != "grid":
        sys.exit(f"plot_grid: {path} is not a grid result (experiment {result.get('experiment')!r})")
    analysis = result["extra"]["grid"]["analysis"]
    if not analysis.get("per_cell"):
        sys.exit(f"plot_grid: {path} has no cells with a timed rule choice")
    return analysis


def write_csv(analysis, out):
    with open(out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["dtype", "rows", "width", "best", "best_us", "choice", "choice_us", "regret"])
        for c in analysis["per_cell"]:
            w.writerow([c["dtype"], c["rows"], c["width"], c["best"], c["best_us"], c["choice"], c["choice_us"],
                        c["regret"]])


def plot(analysis, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    cells = analysis["per_cell"]
    dtypes = sorted({c["dtype"] for c in cells})
    rows = sorted({c["rows"] for c in cells})
    widths = sorted({c["width"] for c in cells})
    fig, axes = plt.subplots(1, len(dtypes), figsize=(1.0 + 0.45 * len(widths) * len(dtypes), 1.5 + 0.4 * len(rows)),
                             squeeze=False)
    vmax = max(0.3, max(c["regret"] for c in cells))
    for ax, dtype in zip(axes[0], dtypes):
        grid = [[float("nan")] * len(widths) for _ in rows]
        for c in cells:
            if c["dtype"] == dtype:
                grid[rows.index(c["rows"])][widths.index(c["width"])] = c["regret"]
        image = ax.imshow(grid, cmap="magma_r", vmin=0, vmax=vmax, aspect="auto", origin="lower")
        for c in cells:
            if c["dtype"] == dtype and c["regret"] > analysis.get("off_threshold", 0.1):
                ax.add_patch(Rectangle((widths.index(c["width"]) - 0.5, rows.index(c["rows"]) - 0.5), 1, 1,
                                       fill=False, edgecolor="cyan", linewidth=1.2))
        ax.set_xticks(range(len(widths)), [str(w) for w in widths], rotation=90, fontsize=7)
        ax.set_yticks(range(len(rows)), [str(r) for r in rows], fontsize=7)
        ax.set_xlabel("width")
        ax.set_ylabel("rows")
        ax.set_title(f"{analysis.get('op', '?')} {dtype}: mean regret {100 * analysis['mean_regret']:.1f}%, "
                     f"{analysis['cells_off']} of {analysis['cells']} cells > 10% off", fontsize=9)
        fig.colorbar(image, ax=ax, label="regret (rule / best - 1)")
    fig.tight_layout()
    fig.savefig(out, dpi=130)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("result")
    p.add_argument("--out", help="PNG to write")
    p.add_argument("--csv", help="CSV to write instead (no matplotlib needed)")
    a = p.parse_args()
    analysis = load_cells(a.result)
    if a.csv:
        write_csv(analysis, a.csv)
    else:
        plot(analysis, a.out or a.result.rsplit(".", 1)[0] + ".png")


if __name__ == "__main__":
    main()
