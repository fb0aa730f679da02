#!/usr/bin/env bash
# usage: scripts/archive_result.sh results/<experiment>/<file>.json [NAME]
#
# Retires a result whose sources have since changed: moves it to
# archive/<NAME>/results/<experiment>/<file>.json and copies the exact versions of the files its
# manifest lists as measured into archive/<NAME>/, in the same relative layout, so that
# `kbench verify` can still trace its numbers to code. NAME defaults to <today>-<file stem>.
#
# Each measured file comes from git at the commit recorded in meta.git.commit, or else from the
# working tree (with a warning), and only if it hashes as the manifest recorded (SHA-256 of the
# LF-normalised content, as kbench does). If no version matches, nothing is moved: an archive
# that verify would reject is worse than none.
set -euo pipefail

die() { echo "archive_result: $*" >&2; exit 2; }
usage="usage: scripts/archive_result.sh results/<experiment>/<file>.json [NAME]"
[[ $# -ge 1 && $# -le 2 ]] || die "$usage"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
[[ -f $1 ]] || die "$1 is not a file"
result="$(realpath -e -- "$1")"
case "$result" in
  "$root"/results/*.json) ;;
  *) die "$1 is not a .json file under $root/results/" ;;
esac
relative="${result#"$root"/}"
name="${2:-$(date -u +%Y-%m-%d)-$(basename "$result" .json)}"
[[ $name =~ ^[A-Za-z0-9._-]+$ && $name != . && $name != .. ]] \
  || die "NAME '$name' must be one folder name of letters, digits, '.', '_' or '-'"
dest="$root/archive/$name"
[[ ! -e "$dest/$relative" ]] || die "archive/$name/$relative already exists"

mkdir -p "$root/archive"
staging="$(mktemp -d "$root/archive/.staging-XXXXXX")"
trap 'rm -rf -- "$staging"' EXIT

# Collects every measured file into the staging folder; exits 1 (moving nothing) if one of
# them cannot be recovered at its recorded hash.
python3 - "$root" "$result" "$dest" "$staging" <<'PY'
import hashlib, json, os, subprocess, sys

root, result_path, dest, staging = sys.argv[1:5]
shown = os.path.relpath(result_path, root)

def fail(message):
    print(f"archive_result: {message}", file=sys.stderr)
    sys.exit(1)

try:
    with open(result_path, "rb") as f:
        result = json.load(f)
except (OSError, ValueError) as e:
    fail(f"{shown}: cannot read it as JSON: {e}")

manifest = result.get("manifest") or {}
files, measured = manifest.get("files"), manifest.get("measured")
if not isinstance(files, dict) or not isinstance(measured, dict):
    fail(f"{shown}: manifest has no 'files' and 'measured' blocks, so its sources are unknown")
commit = ((result.get("meta") or {}).get("git") or {}).get("commit") or ""

def lf_sha256(data):
    return hashlib.sha256(data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")).hexdigest()

def from_git(path):
    if not commit or commit == "unknown":
        return None
    try:
        shown_file = subprocess.run(
            ["git", "-C", root, "--no-optional-locks", "show", f"{commit}:{path}"],
            capture_output=True)
    except OSError:
        return None
    return shown_file.stdout if shown_file.returncode == 0 else None

def from_tree(path):
    try:
        with open(os.path.join(root, path), "rb") as f:
            return f.read()
    except OSError:
        return None

paths = sorted({p for listed in measured.values() for p in listed})
problems = []
for path in paths:
    if os.path.isabs(path) or ".." in path.split("/"):
        problems.append(f"{path}: not a path inside the tree")
        continue
    want = files.get(path)
    found = next(((where, data) for where, data in
                  ((f"git {commit[:12]}", from_git(path)), ("the working tree", from_tree(path)))
                  if data is not None and lf_sha256(data) == want), None)
    if found is None:
        problems.append(f"{path}: no version in git ({commit or 'no commit recorded'}) or the "
                        "working tree matches the recorded hash")
        continue
    where, data = found
    existing = os.path.join(dest, path)
    if os.path.exists(existing):
        with open(existing, "rb") as f:
            if lf_sha256(f.read()) != want:
                problems.append(f"{path}: archive/{os.path.basename(dest)} already holds another "
                                "version; choose another NAME")
        continue
    if where == "the working tree":
        print(f"archive_result: warning: {path} copied from the working tree, not from git",
              file=sys.stderr)
    os.makedirs(os.path.dirname(os.path.join(staging, path)), exist_ok=True)
    with open(os.path.join(staging, path), "wb") as f:
        f.write(data)

if problems:
    for p in problems:
        print(f"archive_result: {p}", file=sys.stderr)
    fail(f"{shown} cannot be archived faithfully; nothing was moved (re-measure instead)")
print(f"archive_result: {len(paths)} measured files recovered")
PY

mkdir -p "$dest/$(dirname "$relative")"
cp -R -- "$staging"/. "$dest"/
mv -- "$result" "$dest/$relative"
echo "archived $relative -> archive/$name/$relative; run kbench verify, then commit archive/$name"
