#!/usr/bin/env python3
"""Moves superseded results from results/ to archive/, gzip-compressed, and points the docs at them.

results/ keeps the latest run of each config; archive/<experiment>/ keeps older runs as
<file>.json.gz (kbench reads both; git holds the sources they measured). The working tree that a
device call carries is limited to 64 MiB, and raw samples make result files large, so older runs
compress about 6x here.

A result is superseded when a newer one in the same folder has the same command line (less
--out), the same tool (kbench or the PyTorch script) and the same device name. Kept whatever
their age: a result that a report in results/ (SUMMARY*.md), docs/results.md or a current fit
result names.

Without --apply it lists what it would move; --check (CI) fails, exit 1, when there is any. With --apply it writes archive/<experiment>/<file>.gz
(gzip -9n, so the bytes do not depend on the time), `git rm`s the original, and rewrites
results/<experiment>/<file> to archive/<experiment>/<file>.gz in README.md, docs/ (less the raw
logs and JSON under docs/records/) and comments in kernels/. Run `kbench verify` after it: a
figure that an archived result holds must be cited in its paragraph (docs/schema.md, verify).
"""
import argparse
import collections
import glob
import gzip
import json
import os
import re
import shutil
import subprocess
import sys

NAME = re.compile(r"(([a-z]+)(?:-torch)?-\d{8}T\d{6}Z-[0-9a-f]{6}\.json)")


def load(path):
    with open(path) as f:
        return json.load(f)


def named_elsewhere():
    """Results that reports, docs/results.md or fit results name: never archived."""
    named = set()
    for md in glob.glob("results/*/*.md") + glob.glob("docs/results.md"):
        for name, experiment in NAME.findall(open(md).read()):
            named.add(f"results/{experiment}/{name}")
    for path in glob.glob("results/fit/*.json"):
        for arg in load(path).get("meta", {}).get("argv", []):
            if NAME.search(arg):
                named.add("results/grid/" + os.path.basename(arg))
    return named


def superseded():
    groups = collections.defaultdict(list)
    for path in sorted(glob.glob("results/*/*.json")):
        result = load(path)
        argv, skip = [], False
        for arg in result.get("meta", {}).get("argv", [])[1:]:
            if skip:
                skip = False
            elif arg == "--out":
                skip = True
            else:
                argv.append(arg)
        torch = os.path.basename(path).startswith(result["experiment"] + "-torch-")
        key = (os.path.dirname(path), tuple(argv), torch, result["device"]["name"])
        groups[key].append(path)
    keep = named_elsewhere()
    old = []
    for paths in groups.values():
        paths.sort(key=lambda p: os.path.basename(p).split("-")[-2])  # by time stamp
        old += [p for p in paths[:-1] if p not in keep]
    return sorted(old)


def text_files():
    files = ["README.md"] + glob.glob("docs/**/*.md", recursive=True)
    files += glob.glob("kernels/**/*.c*", recursive=True) + glob.glob("kernels/**/*.cuh", recursive=True)
    return [f for f in files if os.path.isfile(f)]


def apply(paths):
    for path in paths:
        experiment, name = path.split("/")[1:3]
        target = f"archive/{experiment}/{name}.gz"
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(path, "rb") as src, open(target, "wb") as raw:
            with gzip.GzipFile(filename="", mode="wb", compresslevel=9, fileobj=raw, mtime=0) as dst:
                shutil.copyfileobj(src, dst)
        subprocess.run(["git", "add", target], check=True)
        subprocess.run(["git", "rm", "-q", path], check=True)
    for doc in text_files():
        text = original = open(doc).read()
        for path in paths:
            experiment, name = path.split("/")[1:3]
            text = re.sub(rf"results/{experiment}/{re.escape(name)}(?!\.gz)",
                          f"archive/{experiment}/{name}.gz", text)
            text = text.replace(f"`{name}`", f"`archive/{experiment}/{name}.gz`")
        if text != original:
            open(doc, "w").write(text)
            print(f"rewrote {doc}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apply", action="store_true", help="move them (default: list them)")
    parser.add_argument("--check", action="store_true", help="exit 1 if there are any (CI)")
    args = parser.parse_args()
    if not os.path.isdir("results") or not os.path.isdir(".git"):
        sys.exit("archive_superseded: run it from the repository's root")
    paths = superseded()
    if args.check:
        if paths:
            sys.exit(f"archive_superseded: {len(paths)} superseded result(s) in results/ "
                     f"({', '.join(paths)}); run scripts/archive_superseded.py --apply")
        return
    for path in paths:
        print(("archive " if args.apply else "superseded ") + path)
    if args.apply:
        apply(paths)
    elif not paths:
        print("archive_superseded: nothing superseded")


if __name__ == "__main__":
    main()
