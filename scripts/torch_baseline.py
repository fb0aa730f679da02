#!/usr/bin/env python3
"""PyTorch side by side: times kbench's ops with PyTorch, by kbench's method, in its schema.

Reads the sweep config that `kbench run --config` reads and times the same (op, dtype, shape)
cases with PyTorch: `torch.eager` (the plain PyTorch op or composition), `torch.rms_norm`
(F.rms_norm, RMSNorm forward only) and `torch.compile` (the eager function compiled; compile
and autotuning happen while preparing, never inside a timing). The training steps
(softmax_step, rmsnorm_step) run the forward on leaf tensors that require grad, then
torch.autograd.grad: eager autograd, or the forward compiled (AOTAutograd compiles the backward). The result is a schema v1 file
(DESIGN.md) that `kbench report` sets beside kbench's own run of the same config:

    python3 scripts/torch_baseline.py --config configs/sweep.json --out results/sweep

The method follows kbench's: every case is prepared and checked against a float64 reference
before any timing; the GPU is warmed up; cold samples flush L2 first (graph mode also rotates
input sets totalling >= 3x L2); event-pair and CUDA-graph timers; each (case, cache, timer) is
visited several times in an order shuffled from a recorded seed, with its variants back to
back in shuffled order; every raw sample is kept; nvidia-smi load is recorded around the run.

Needs only the standard library and torch (triton comes with it). `--dry-run` lists the cases
without importing torch.
"""

from __future__ import annotations

import argparse
import ctypes
import datetime
import hashlib
import json
import math
import os
import random
import re
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import types
from dataclasses import dataclass, field
from pathlib import Path

PROG = "torch_baseline.py"
SCRIPT_PATH = Path(__file__).resolve()
REPO_ROOT = SCRIPT_PATH.parent.parent
SCRIPT_MANIFEST_NAME = "scripts/torch_baseline.py"

DTYPES = ("float32", "float16", "bfloat16")
DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2}
CACHE_MODES = ("cold", "warm")
TIMERS = ("events", "graph")
# The ops this script knows, with the rank of their shape: [n], [rows, cols] or [M, N, K].
SHAPE_RANK = {"copy": 1, "add": 1, "row_sum": 2, "softmax": 2, "softmax_backward": 2,
              "rmsnorm": 2, "rmsnorm_backward": 2, "softmax_step": 2, "rmsnorm_step": 2,
              "gemm": 3}
# Training steps: a forward, then its backward through autograd (step_function below).
STEP_OPS = ("softmax_step", "rmsnorm_step")
RMSNORM_EPS = 1e-6

WARMUP_MIN_MS = 300.0
WARMUP_MAX_MS = 5000.0
# A graph replays enough calls to last about this long, so that the two events around the
# replay cost little next to it: kbench's rule (graph_launch_count below).
GRAPH_TARGET_US = 2000.0
GRAPH_MIN_LAUNCHES = 4
GRAPH_MAX_LAUNCHES = 500
# Cold graph mode: input sets totalling >= 3x L2, so that no set is still cached when its turn
# comes again. Tiny cases would need millions of sets; past this cap the flush before each
# replay (every set is read once per replay) is what keeps them cold.
ROTATION_L2_MULTIPLE = 3
ROTATION_MAX_SETS = 1024
BUSY_UTILIZATION_PCT = 10
LOAD_SETTLE_S = 1.0  # nvidia-smi's utilization covers the last ~1 s: let our own work fall out

torch = None  # imported by require_torch(), after --dry-run has had its chance to run without it


class UsageError(Exception):
    """Bad input: one line on stderr, exit status 2."""


def warn(message: str) -> None:
    print(f"{PROG}: warning: {message}", file=sys.stderr)


def progress(message: str) -> None:
    """Progress on a terminal only: logs of long runs stay quiet."""
    if sys.stderr.isatty():
        print(f"\r\033[K{message}", end="", file=sys.stderr, flush=True)


# --- config and cases ---------------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    op: str
    dtype: str
    shape: tuple
    params: tuple = ()  # (name, value) pairs, sorted: what check_params says is timed


    def label(self) -> str:
        return f"{self.op} {self.dtype} {'x'.join(map(str, self.shape))}"


@dataclass
class Plan:
    experiment: str
    description: str
    cases: list
    cache: list
    timer: list
    visits: int
    samples: int
    seed: int
    skipped_ops: list  # ops in the config that this script does not know


def variants_for(op: str) -> list:
    if op == "copy":
        return ["torch.eager"]  # the memcpy-equivalent roofline: nothing to compile
    if op == "rmsnorm":
        return ["torch.eager", "torch.rms_norm", "torch.compile"]
    return ["torch.eager", "torch.compile"]


# --- the config schema --------------------------------------------------------------------
# configs/schema/sweep.schema.json is the one format of sweep configs: kbench compiles it in and
# checks every config against it with valijson (src/core/json_schema.cpp); this script checks
# against the same file. Not through the jsonschema package: the GPU machine's Python has none
# and nothing can be installed there, and one code path on every machine refuses the same
# configs everywhere. So this is a small interpreter of the draft-7 keywords that schema file
# uses (SCHEMA_KEYWORDS): a schema that uses another is refused outright rather than half
# applied, and a CPU test (tests/cpu/test_torch_script.cpp) holds its verdicts equal to
# kbench's over the bad-input corpus. Like valijson, an "integer" is a JSON number written
# without a fraction or exponent (2.0 is not one), and messages are worded as kbench's:
# "'<JSON pointer>' must be <the property's description>, got <value>".
CONFIG_SCHEMA = REPO_ROOT / "configs" / "schema" / "sweep.schema.json"
SCHEMA_KEYWORDS = {"$schema", "$id", "$comment", "$ref", "title", "description", "definitions", "type",
                   "enum", "const", "anyOf", "minimum", "maximum", "exclusiveMinimum", "minLength",
                   "maxLength", "pattern", "items", "minItems", "maxItems", "uniqueItems", "properties",
                   "additionalProperties", "required"}


def _schema_keywords(node, path="#"):
    """Every keyword the schema uses that schema_problem does not implement, as paths."""
    if isinstance(node, list):
        return [p for i, m in enumerate(node) for p in _schema_keywords(m, f"{path}/{i}")]
    if not isinstance(node, dict):
        return []
    unknown = [f"{path}/{k}" for k in node if k not in SCHEMA_KEYWORDS]
    for key, value in node.items():
        if key in ("properties", "definitions"):
            for name, member in value.items():
                unknown += _schema_keywords(member, f"{path}/{key}/{name}")
        elif key in ("items", "additionalProperties", "anyOf"):
            unknown += _schema_keywords(value, f"{path}/{key}")
    return unknown


def load_schema(path: Path) -> dict:
    with open(path, encoding="utf-8") as f:
        schema = json.load(f)
    unknown = _schema_keywords(schema)
    if unknown:  # a bug in this script, not bad input
        raise RuntimeError(f"{path} uses keywords this script does not implement: {', '.join(unknown)}")
    return schema


def _has_type(value, name: str) -> bool:
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, {"object": dict, "array": list, "string": str, "boolean": bool,
                              "null": type(None)}[name])


def _pointer(tokens) -> str:
    """A JSON pointer, each token escaped (~0, ~1) and printable (a key may hold ESC)."""
    return "".join("/" + json.dumps(str(t).replace("~", "~0").replace("/", "~1"))[1:-1] for t in tokens)


def _shown(value) -> str:
    text = json.dumps(value, ensure_ascii=True, separators=(",", ":"))
    return text if len(text) <= 60 else text[:57] + "..."


def _same_json(a, b) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def schema_problem(value, schema: dict):
    """The first way `value` breaks `schema`, worded as kbench words it, or None."""
    def resolve(node):
        while "$ref" in node:
            target = schema
            for token in node["$ref"].lstrip("#").split("/")[1:]:
                target = target[token.replace("~1", "/").replace("~0", "~")]
            node = target
        return node

    def fits(value, node) -> bool:  # the keywords about the value itself, not its members
        node = resolve(node)
        types = node.get("type")
        if types is not None and not any(_has_type(value, t) for t in (types if isinstance(types, list) else [types])):
            return False
        if "enum" in node and not any(_same_json(value, e) for e in node["enum"]):
            return False
        if "const" in node and not _same_json(value, node["const"]):
            return False
        if "anyOf" in node and not any(check(value, m, []) is None for m in node["anyOf"]):
            return False
        if _has_type(value, "number"):
            if "minimum" in node and value < node["minimum"]:
                return False
            if "maximum" in node and value > node["maximum"]:
                return False
            if "exclusiveMinimum" in node and value <= node["exclusiveMinimum"]:
                return False
        if isinstance(value, str):
            if not node.get("minLength", 0) <= len(value) <= node.get("maxLength", len(value)):
                return False
            # ECMAScript's $ ends the text; Python's also matches before a final newline.
            pattern = node.get("pattern")
            if pattern is not None and not re.search(pattern[:-1] + r"\Z" if pattern.endswith("$") else pattern, value):
                return False
        if isinstance(value, list):
            if not node.get("minItems", 0) <= len(value) <= node.get("maxItems", len(value)):
                return False
            if node.get("uniqueItems") and len({json.dumps(v, sort_keys=True) for v in value}) < len(value):
                return False
        return True

    def check(value, node, tokens):
        own = resolve(node)
        at = _pointer(tokens)
        if not fits(value, own):
            what = node.get("description") or own.get("description", "valid")
            return (f"'{at}' " if at else "") + f"must be {what}, got {_shown(value)}"
        if isinstance(value, dict):
            properties = own.get("properties", {})
            extra = own.get("additionalProperties", True)
            if extra is False:
                for key in value:
                    if key not in properties:
                        return (f"unknown key '{at}{_pointer([key])}' (expected one of "
                                f"{', '.join(sorted(properties))})")
            for key in own.get("required", []):
                if key not in value:
                    what = properties.get(key, {})
                    what = what.get("description") or resolve(what).get("description", "")
                    return f"'{at}{_pointer([key])}' is missing" + (f" ({what})" if what else "")
            for key, member in value.items():
                sub = properties.get(key, extra if isinstance(extra, dict) else None)
                if sub is not None and (problem := check(member, sub, tokens + [key])):
                    return problem
        if isinstance(value, list) and isinstance(own.get("items"), dict):
            for i, member in enumerate(value):
                if problem := check(member, own["items"], tokens + [i]):
                    return problem
        return None

    return check(value, schema, [])


def _modes(value, expand: dict, where: str, key: str) -> list:
    """A config's cache modes or timers (the schema has checked the names) expanded, each once:
    a mode named twice through "both" or "all" is refused, as kbench refuses it."""
    out = []
    for name in [value] if isinstance(value, str) else value:
        for one in expand.get(name, [name]):
            if one in out:
                raise UsageError(f"{where}: '/{key}' names '{one}' twice")
            out.append(one)
    return out


def check_params(op: str, params, where: str) -> tuple:
    """The ops' parameters this script times (kbench's Op::params; defaults eps 1e-6, dh 1,
    frozen 0): PyTorch's composition here has eps RMSNORM_EPS and a backward without dh that
    computes dw, so a config asking for anything else would compare different work. Returns
    every parameter of the op with its value, sorted by name, as kbench's records state them
    (so that a report pairs these records with kbench's of the same work)."""
    wanted = {"eps": RMSNORM_EPS, "dh": 1, "frozen": 0} if op.startswith("rmsnorm") else {}
    if not wanted and params:
        raise UsageError(f"{where}: {op} takes no parameters, got {params}")
    actual = dict(wanted, **params)
    if op == "rmsnorm":
        actual.pop("dh"), actual.pop("frozen")
    if set(actual) - set(wanted) or actual.get("eps", RMSNORM_EPS) != RMSNORM_EPS:
        raise UsageError(f"{where}: this script times {op} with eps {RMSNORM_EPS} only, got {params}")
    if op == "rmsnorm_backward" and (actual["dh"] != 0 or actual["frozen"] != 0):
        raise UsageError(f"{where}: this script times rmsnorm_backward without dh and with dw "
                         f"(params dh 0, frozen 0), got {params}")
    if op == "rmsnorm_step" and (actual["dh"] != 1 or actual["frozen"] != 0):
        raise UsageError(f"{where}: this script times rmsnorm_step with the residual gradient dh "
                         f"and with dw (params dh 1, frozen 0: the defaults), got {params}")
    return tuple(sorted((name, float(value)) for name, value in actual.items()))


def _no_constant(name):
    raise ValueError(f"{name} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:20]} is too large to read")
    return value


def parse_config_text(text: str):
    """A config's JSON as kbench reads it: Python's NaN and Infinity extensions refused, and a
    number past a double's range too (1e432 would be inf; nlohmann refuses it)."""
    return json.loads(text, parse_constant=_no_constant, parse_float=_finite)


def load_plan(args) -> Plan:
    path = args.config
    try:
        with open(path, encoding="utf-8") as f:
            config = parse_config_text(f.read())
    except OSError as e:
        raise UsageError(f"cannot read config {path}: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise UsageError(f"config {path} is not valid JSON: {e.msg} at line {e.lineno}") from None
    except (ValueError, UnicodeDecodeError) as e:  # NaN, Infinity; bytes that are not UTF-8
        raise UsageError(f"config {path} is not valid JSON: {e}") from None
    where = f"config '{path}'"
    # Keys, types and ranges are the schema's (the same file kbench checks against); what
    # follows converts, and checks what this script alone cannot time.
    problem = schema_problem(config, load_schema(CONFIG_SCHEMA))
    if problem:
        raise UsageError(f"{where}{' ' if problem.startswith('must be') else ': '}{problem}")

    cases, skipped_ops = [], []
    for i, entry in enumerate(config["cases"]):
        at = f"{where}: '/cases/{i}"
        op = entry["op"]
        shapes = entry["shapes"]
        for j, shape in enumerate(shapes):
            if op in SHAPE_RANK and len(shape) != SHAPE_RANK[op]:
                raise UsageError(f"{at}/shapes/{j}': {op} takes {SHAPE_RANK[op]} dimensions, "
                                 f"got {len(shape)}")
        if op not in SHAPE_RANK:
            skipped_ops.append(op)
            continue
        params = check_params(op, entry.get("params", {}), f"{at}/params'")
        # "variants" in the config name kbench's variants; this script times its own.
        for dtype in entry.get("dtypes", ["float32"]):
            for shape in shapes:
                cases.append(Case(op, dtype, tuple(shape), params))

    if args.ops:
        cases = [c for c in cases if c.op in args.ops]
    if args.dtype:
        cases = [c for c in cases if c.dtype in args.dtype]
    cases = list(dict.fromkeys(cases))  # a case listed twice is timed once
    if not cases:
        raise UsageError(f"{where}: no cases left to time (after --ops/--dtype and skipped ops)")

    def count(name, cli_value, default, smallest):
        if cli_value is None:
            return config.get(name, default)
        if not isinstance(cli_value, int) or cli_value < smallest:
            raise UsageError(f"--{name} must be a whole number of at least {smallest}, got {cli_value!r}")
        return cli_value

    cache = (list(CACHE_MODES) if args.cache == "both" else [args.cache]) if args.cache else \
        _modes(config.get("cache", list(CACHE_MODES)), {"both": list(CACHE_MODES)}, where, "cache")
    timer = (list(TIMERS) if args.timer == "both" else [args.timer]) if args.timer else \
        _modes(config.get("timer", list(TIMERS)), {"both": list(TIMERS), "all": [*TIMERS, "cupti"]},
               where, "timer")
    if "cupti" in timer:  # kbench's CUPTI activity timer has no counterpart here
        timer.remove("cupti")
        if not timer:
            raise UsageError(f"{where}: '/timer' asks for cupti only, which this script does not have "
                             f"(it times {' and '.join(TIMERS)})")
        warn("the cupti timer is kbench's alone: this script times " + " and ".join(timer))
    return Plan(
        experiment=config.get("experiment", "sweep"),
        description=config.get("description", ""),
        cases=cases,
        cache=cache,
        timer=timer,
        visits=count("visits", args.visits, 3, 1),
        samples=count("samples", args.samples, 3, 1),
        seed=count("seed", args.seed, 1, 0),
        skipped_ops=list(dict.fromkeys(skipped_ops)),
    )


def bytes_moved(case: Case) -> int:
    """The bytes an op must move: each input read once, each output written once."""
    s = DTYPE_BYTES[case.dtype]
    if case.op == "gemm":
        m, n, k = case.shape
        return (m * k + k * n + m * n) * s
    if len(case.shape) == 1:
        n = case.shape[0]
        return {"copy": 2 * n, "add": 3 * n}[case.op] * s
    rows, cols = case.shape
    elements = {
        "row_sum": rows * cols + rows,
        "softmax": 2 * rows * cols,
        "softmax_backward": 3 * rows * cols,    # read y and dy, write dx
        "rmsnorm": 4 * rows * cols + cols,      # read x, r, w; write h, y
        "rmsnorm_backward": 3 * rows * cols + 2 * cols,  # read h, w, dy; write dh, dw
        # The steps: the sum of their two ops' bytes, as kbench counts them (the forward's y or
        # h is written, then read again by the backward).
        "softmax_step": (2 + 3) * rows * cols,
        "rmsnorm_step": (4 * rows * cols + cols) + (4 * rows * cols + 2 * cols),  # + dh read
    }[case.op]
    return elements * s


def flops_done(case: Case) -> int:
    if case.op == "gemm":
        m, n, k = case.shape
        return 2 * m * n * k
    return 0


# --- the ops in PyTorch ---------------------------------------------------------------------
# Each eager function is what a PyTorch user would write; torch.compile compiles the same one.

def copy_eager(x, out):
    return out.copy_(x)


def add_eager(x, y):
    return x + y


def row_sum_eager(x):
    return x.sum(dim=-1)  # 16-bit inputs accumulate in float32 inside PyTorch's reduction


def softmax_eager(x):
    return torch.softmax(x, dim=-1)


def softmax_backward_eager(y, dy):
    return torch._softmax_backward_data(dy, y, -1, y.dtype)


def rmsnorm_eager(x, r, w):
    h = x + r
    hf = h.float()  # the usual composition: statistics in float32, result in the input dtype
    y = (hf * torch.rsqrt(hf.pow(2).mean(-1, keepdim=True) + RMSNORM_EPS)).to(h.dtype) * w
    return h, y


def rmsnorm_rms_norm(x, r, w):
    h = x + r
    return h, torch.nn.functional.rms_norm(h, (h.shape[-1],), w, RMSNORM_EPS)


def rmsnorm_backward_eager(h, w, dy):
    """The gradient through the norm, recomputing the inverse RMS: dh (= dx = dr) and dw."""
    hf, dyf = h.float(), dy.float()
    inv_rms = torch.rsqrt(hf.pow(2).mean(-1, keepdim=True) + RMSNORM_EPS)
    normed = hf * inv_rms
    dnormed = dyf * w.float()
    dh = inv_rms * (dnormed - normed * (dnormed * normed).mean(-1, keepdim=True))
    dw = (dyf * normed).sum(0)
    return dh.to(h.dtype), dw.to(w.dtype)


def gemm_eager(a, b):
    return torch.mm(a, b)


# The training steps' forwards: the eager ops above. torch.compile compiles the forward only;
# AOTAutograd then compiles its backward, which runs inside torch.autograd.grad.
STEP_FORWARD = {"softmax_step": softmax_eager, "rmsnorm_step": rmsnorm_eager}


def step_function(op: str, forward):
    """A training step of `op` around `forward` (eager or compiled): the forward on inputs that
    are leaf tensors requiring grad (make_inputs), then torch.autograd.grad of its outputs with
    the upstream gradients, as a training framework runs the pair; dx (and dw) come back with
    the forward's outputs. The script times under inference mode, which autograd cannot run in
    (it records nothing and makes inference tensors), so the step leaves it for the call."""
    if op == "softmax_step":
        def step(x, dy):
            with torch.inference_mode(False), torch.enable_grad():
                y = forward(x)
                (dx,) = torch.autograd.grad(y, x, dy)
            return y.detach(), dx
        return step
    if op == "rmsnorm_step":
        def step(x, r, w, dy, dh):
            # h feeds the next block too, so its gradient dh joins the one through the norm.
            with torch.inference_mode(False), torch.enable_grad():
                h, y = forward(x, r, w)
                dx, dw = torch.autograd.grad((h, y), (x, w), (dh, dy))
            return h.detach(), y.detach(), dx, dw
        return step
    raise AssertionError(op)


EAGER = {"copy": copy_eager, "add": add_eager, "row_sum": row_sum_eager,
         "softmax": softmax_eager, "softmax_backward": softmax_backward_eager,
         "rmsnorm": rmsnorm_eager, "rmsnorm_backward": rmsnorm_backward_eager,
         "gemm": gemm_eager}


def reference(op: str, inputs) -> tuple:
    """float64 results from the inputs exactly as the GPU sees them (already rounded)."""
    d = [t.detach().double() for t in inputs]  # the steps' inputs require grad
    if op == "copy":
        return (d[0],)
    if op == "add":
        return (d[0] + d[1],)
    if op == "row_sum":
        return (d[0].sum(-1),)
    if op == "softmax":
        return (torch.softmax(d[0], -1),)
    if op == "softmax_backward":
        y, dy = d
        return (y * (dy - (y * dy).sum(-1, keepdim=True)),)
    if op == "rmsnorm":
        x, r, w = d
        h = x + r
        return (h, h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + RMSNORM_EPS) * w)
    if op == "rmsnorm_backward":
        h, w, dy = d
        inv_rms = torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + RMSNORM_EPS)
        normed, dnormed = h * inv_rms, dy * w
        dh = inv_rms * (dnormed - normed * (dnormed * normed).mean(-1, keepdim=True))
        return (dh, (dy * normed).sum(0))
    if op == "gemm":
        return (d[0] @ d[1],)
    if op == "softmax_step":
        y, = reference("softmax", inputs[:1])
        dx, = reference("softmax_backward", (y, inputs[1]))
        return (y, dx)
    if op == "rmsnorm_step":
        x, r, w, dy, dh = inputs
        h, y = reference("rmsnorm", (x, r, w))
        # The backward reads h as stored: x + r rounded to the dtype, as the GPU computes it.
        dh_norm, dw = reference("rmsnorm_backward", ((x + r).detach(), w, dy))
        return (h, y, dh_norm + dh.double(), dw)
    raise AssertionError(op)


def reduction_lengths(case: Case) -> tuple:
    """How many terms each output element sums: rounding error grows with its square root."""
    if case.op == "gemm":
        return (case.shape[2],)
    if len(case.shape) == 1:
        return (1,)
    rows, cols = case.shape
    return {"row_sum": (cols,), "softmax": (cols,), "softmax_backward": (cols,),
            "rmsnorm": (1, cols), "rmsnorm_backward": (cols, rows),
            "softmax_step": (cols, cols), "rmsnorm_step": (1, cols, cols, rows)}[case.op]


def make_inputs(case: Case, generator) -> tuple:
    """Fresh random inputs (never zeros), in the case's dtype, on the current GPU."""
    dtype = getattr(torch, case.dtype)

    def randn(*shape):
        return torch.randn(shape, generator=generator, device="cuda").to(dtype)

    if case.op in ("copy", "add"):
        n = case.shape[0]
        if case.op == "copy":
            return randn(n), torch.empty(n, device="cuda", dtype=dtype)
        return randn(n), randn(n)
    if case.op == "gemm":
        m, n, k = case.shape
        return randn(m, k), randn(k, n)
    rows, cols = case.shape
    if case.op in ("row_sum", "softmax"):
        return (randn(rows, cols),)
    if case.op == "softmax_backward":
        y = torch.softmax(torch.randn((rows, cols), generator=generator, device="cuda"), -1)
        return y.to(dtype), randn(rows, cols)
    if case.op == "rmsnorm":
        return randn(rows, cols), randn(rows, cols), randn(cols)
    if case.op == "rmsnorm_backward":
        return randn(rows, cols), randn(cols), randn(rows, cols)
    if case.op in STEP_OPS:
        # Outside inference mode: autograd cannot save inference tensors for the backward.
        with torch.inference_mode(False):
            if case.op == "softmax_step":
                return randn(rows, cols).requires_grad_(), randn(rows, cols)
            return (randn(rows, cols).requires_grad_(), randn(rows, cols).requires_grad_(),
                    randn(cols).requires_grad_(), randn(rows, cols), randn(rows, cols))
    raise AssertionError(case.op)


def as_tuple(outputs) -> tuple:
    return outputs if isinstance(outputs, tuple) else (outputs,)


# Relative tolerance per dtype: a few units in the last place of the output. float32 gets more
# (about 80 ulp) because torch.compile's exp and rsqrt are approximate instructions.
RTOL = {"float32": 1e-5, "float16": 4 * 2.0 ** -10, "bfloat16": 4 * 2.0 ** -7}
FLOAT32_EPS = 2.0 ** -24


def check_outputs(case: Case, outputs: tuple, refs: tuple) -> dict:
    """|out - ref| <= rtol*|ref| + atol, atol = (rtol + 2*sqrt(terms)*eps32) * max|ref|: a few
    ulp at the output's largest value, plus float32 summation error growing with sqrt(terms)."""
    rtol = RTOL[case.dtype]
    result = {"passed": True, "max_err": 0.0, "tolerance": 0.0}
    for index, (out, ref, terms) in enumerate(zip(outputs, refs, reduction_lengths(case))):
        if tuple(out.shape) != tuple(ref.shape):
            return {"passed": False, "max_err": None, "tolerance": 0.0,
                    "detail": f"output {index} has shape {tuple(out.shape)}, "
                              f"expected {tuple(ref.shape)}"}
        magnitude = ref.abs()
        atol = (rtol + 2 * math.sqrt(terms) * FLOAT32_EPS) * magnitude.max().item()
        tol = rtol * magnitude + atol
        err = torch.nan_to_num((out.double() - ref).abs(), nan=math.inf, posinf=math.inf)
        worst = int(err.argmax())
        worst_err, worst_tol = err.flatten()[worst].item(), tol.flatten()[worst].item()
        if worst_err > result["max_err"] or index == 0:
            result["max_err"], result["tolerance"] = worst_err, worst_tol
        failing = (err > tol).flatten()
        if result["passed"] and bool(failing.any()):
            first = int(failing.to(torch.uint8).argmax())  # argmax gives the first maximum
            result["passed"] = False
            result["detail"] = (f"output {index} element {first}: got {out.flatten()[first].item()}"
                                f", expected {ref.flatten()[first].item()}, "
                                f"tolerance {tol.flatten()[first].item():.3g}")
    return result


# --- preparing cases ------------------------------------------------------------------------

def graph_launch_count(launch_us: float, sets: int) -> int:
    """The calls one graph replay makes, as kbench's graph timer counts them
    (graph_launch_count in src/harness/runner.hpp; a CPU test holds the two equal): about
    GRAPH_TARGET_US of calls within the bounds, a multiple of the input sets they rotate
    through. Cold, each replay used to make one call per set, after a flush: at the shapes of
    one set (4096x4096 and up) a single call, where kbench's timer replays 11-40 back to back,
    each paying the write-back of the previous call's output: two measurements, not one."""
    count = math.ceil(GRAPH_TARGET_US / max(launch_us, 0.5))
    count = min(max(count, GRAPH_MIN_LAUNCHES), GRAPH_MAX_LAUNCHES)
    n = max(sets, 1)
    count = (count + n - 1) // n * n
    if count > GRAPH_MAX_LAUNCHES and n <= GRAPH_MAX_LAUNCHES:
        count = GRAPH_MAX_LAUNCHES // n * n
    return count


@dataclass
class Prepared:
    case: Case
    inputs: tuple
    functions: dict                 # variant -> callable, compiled and warmed up
    checks: dict                    # variant -> check block
    warm_graph_launches: int = 1
    cold_graph_launches: int = 1
    rotation: list = field(default_factory=list)  # input sets for cold graph mode


def build_function(case: Case, variant: str):
    if case.op in STEP_OPS:
        forward = STEP_FORWARD[case.op]
        if variant == "torch.compile":
            forward = torch.compile(own_code_copy(forward), dynamic=False)
        return step_function(case.op, forward)
    if variant == "torch.eager":
        return EAGER[case.op]
    if variant == "torch.rms_norm":
        return rmsnorm_rms_norm
    if variant == "torch.compile":
        # dynamic=False: one kernel specialised per shape, as the user who compiles for a fixed
        # shape gets; without it the second shape would switch to a generic dynamic kernel.
        return torch.compile(own_code_copy(EAGER[case.op]), dynamic=False)
    raise AssertionError(variant)


def own_code_copy(fn):
    """fn with a code object of its own. Dynamo keeps compiled graphs per code object and
    checks their guards one by one on every call; sharing one code object across all the
    shapes of an op would put that search, growing with the number of cases, into the timings."""
    return types.FunctionType(fn.__code__.replace(), fn.__globals__, fn.__name__,
                              fn.__defaults__, fn.__closure__)


def median(values) -> float:
    ordered = sorted(values)
    return quantile(ordered, 0.5)


def quantile(ordered, q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def estimate_us(fn, inputs, calls: int = 5) -> float:
    pairs = []
    for _ in range(calls):
        start, end = (torch.cuda.Event(enable_timing=True) for _ in range(2))
        start.record()
        fn(*inputs)
        end.record()
        pairs.append((start, end))
    torch.cuda.synchronize()
    return median(s.elapsed_time(e) * 1000.0 for s, e in pairs)


def warm_up_side_stream(fn, inputs) -> None:
    """CUDA graph capture needs lazily created state (cuBLAS workspaces, compiled kernels'
    first launch) to exist already: run a few calls on a side stream first, as PyTorch's docs
    ask."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn(*inputs)
    torch.cuda.current_stream().wait_stream(side)


def prepare(case: Case, index: int, plan: Plan, l2_bytes: int) -> Prepared:
    generator = torch.Generator(device="cuda")
    generator.manual_seed(plan.seed * 1_000_003 + index)
    inputs = make_inputs(case, generator)
    refs = reference(case.op, inputs)
    prepared = Prepared(case, inputs, {}, {})
    estimates = []
    for variant in variants_for(case.op):
        fn = build_function(case, variant)
        if case.op == "copy":
            inputs[1].fill_(math.nan)  # a copy that writes nothing must not pass the check
        outputs = as_tuple(fn(*inputs))  # compiles torch.compile's function here
        torch.cuda.synchronize()
        prepared.checks[variant] = check_outputs(case, outputs, refs)
        if not prepared.checks[variant]["passed"]:
            warn(f"{case.label()} {variant} fails its check: {prepared.checks[variant]['detail']}")
        del outputs
        if "graph" in plan.timer:
            warm_up_side_stream(fn, inputs)
        estimates.append(estimate_us(fn, inputs))
        prepared.functions[variant] = fn
    del refs
    fastest_us = max(min(estimates), 1e-3)
    prepared.warm_graph_launches = graph_launch_count(fastest_us, 1)
    if "graph" in plan.timer and "cold" in plan.cache:
        sets = math.ceil(ROTATION_L2_MULTIPLE * l2_bytes / bytes_moved(case))
        sets = max(1, min(ROTATION_MAX_SETS, sets))
        prepared.rotation = [inputs] + [make_inputs(case, generator) for _ in range(sets - 1)]
        prepared.cold_graph_launches = graph_launch_count(fastest_us, sets)
    torch.cuda.synchronize()
    return prepared


# --- timing ---------------------------------------------------------------------------------

TIMER_NOTES = {
    "events": "CUDA event pair around one call from Python: includes PyTorch's dispatch and "
              "launch latency whenever the GPU waits for the host",
    "graph": "calls captured in one CUDA graph and replayed between two events; the time per "
             "call, without Python or launch overhead",
}


class L2Flusher:
    """Evicts the L2 as kbench does (src/harness/l2_flush.cu): by reading a buffer twice the
    L2's size. Zeroing an L2-sized buffer, as triton's do_bench does, leaves the L2 full of
    dirty lines whose write-back then lands inside the next timed call."""

    def __init__(self, l2_bytes: int):
        self.buffer = torch.zeros(max(1, 2 * l2_bytes // 4), dtype=torch.int32, device="cuda")
        self.total = None

    def flush(self) -> None:
        self.total = self.buffer.sum()  # one read of the buffer; the result is never used


def sample_events(fn, inputs, cache: str, samples: int, flusher: L2Flusher) -> tuple:
    if cache == "warm":
        fn(*inputs)  # untimed: brings this case's buffers into L2 after the previous case
    pairs = []
    for _ in range(samples):
        if cache == "cold":
            flusher.flush()
        start, end = (torch.cuda.Event(enable_timing=True) for _ in range(2))
        start.record()
        fn(*inputs)
        end.record()
        pairs.append((start, end))
    torch.cuda.synchronize()
    return [s.elapsed_time(e) * 1000.0 for s, e in pairs], 1


def sample_graph(fn, prepared: Prepared, cache: str, samples: int, flusher: L2Flusher) -> tuple:
    """Cold: the captured calls rotate through the input sets (totalling >= 3x L2, so that
    none is still cached when its turn comes again) and keep their outputs, and L2 is flushed
    before each replay. Warm: the same inputs every call. Capture is outside the timed region
    and the graph is freed after the visit, so only one case's graph memory exists at a time."""
    if cache == "cold":
        input_sets, launches = prepared.rotation, prepared.cold_graph_launches
    else:
        input_sets, launches = [prepared.inputs], prepared.warm_graph_launches
    graph = torch.cuda.CUDAGraph()
    kept_outputs = []
    with torch.cuda.graph(graph):
        for i in range(launches):
            outputs = fn(*input_sets[i % len(input_sets)])
            if cache == "cold":
                kept_outputs.append(outputs)
    graph.replay()  # untimed: the first replay uploads the graph
    pairs = []
    for _ in range(samples):
        if cache == "cold":
            flusher.flush()
        start, end = (torch.cuda.Event(enable_timing=True) for _ in range(2))
        start.record()
        graph.replay()
        end.record()
        pairs.append((start, end))
    torch.cuda.synchronize()
    times = [s.elapsed_time(e) * 1000.0 / launches for s, e in pairs]
    del graph, kept_outputs
    return times, launches


@dataclass
class Series:
    samples_us: list = field(default_factory=list)
    sample_visits: list = field(default_factory=list)
    launches: int = 1


def run_visits(plan: Plan, prepared: list, flusher: L2Flusher) -> dict:
    """Returns {(case index, variant, cache, timer): Series}."""
    rng = random.Random(plan.seed)
    units = [(i, cache, timer) for i in range(len(prepared))
             for cache in plan.cache for timer in plan.timer]
    series = {}
    for visit in range(plan.visits):
        for done, (i, cache, timer) in enumerate(rng.sample(units, len(units))):
            p = prepared[i]
            for variant in rng.sample(list(p.functions), len(p.functions)):
                fn = p.functions[variant]
                if timer == "events":
                    times, launches = sample_events(fn, p.inputs, cache, plan.samples, flusher)
                else:
                    times, launches = sample_graph(fn, p, cache, plan.samples, flusher)
                s = series.setdefault((i, variant, cache, timer), Series())
                s.samples_us += times
                s.sample_visits += [visit] * len(times)
                s.launches = launches
            progress(f"visit {visit + 1}/{plan.visits}: {done + 1}/{len(units)}")
    progress("")
    return series


def build_records(prepared: list, series: dict) -> list:
    records = []
    for (i, variant, cache, timer), s in series.items():
        case = prepared[i].case
        ordered = sorted(s.samples_us)
        mid = quantile(ordered, 0.5)
        note = TIMER_NOTES[timer]
        if timer == "graph" and cache == "cold":
            sets = len(prepared[i].rotation)
            note += f"; {s.launches} calls rotate through {sets} input sets totalling >= 3x L2, " \
                    "L2 flushed before each replay"
        records.append({
            "op": case.op, "variant": variant, "baseline": True, "dtype": case.dtype,
            "shape": list(case.shape), "cache": cache, "timer": timer, "timer_note": note,
            "launches_per_sample": s.launches, "samples_us": s.samples_us,
            "sample_visits": s.sample_visits, "median_us": mid,
            "q1_us": quantile(ordered, 0.25), "q3_us": quantile(ordered, 0.75),
            "min_us": ordered[0], "bytes": bytes_moved(case), "flops": flops_done(case),
            "gbps": bytes_moved(case) / mid / 1e3, "tflops": flops_done(case) / mid / 1e6,
            "copy_fraction": 0.0, "check": prepared[i].checks[variant],
            **({"params": dict(case.params)} if case.params else {}),
        })
    records.sort(key=lambda r: (r["op"], r["dtype"], r["shape"], r["cache"], r["timer"],
                                r["variant"]))
    add_copy_fractions(records)
    return records


def add_copy_fractions(records: list) -> None:
    """Memory-bound records as a fraction of this run's copy bandwidth: the largest copy case
    timed with the same cache mode and timer. GEMM is compute-bound and keeps 0."""
    for cache in CACHE_MODES:
        for timer in TIMERS:
            copies = [r for r in records
                      if r["op"] == "copy" and r["cache"] == cache and r["timer"] == timer]
            if not copies:
                continue
            roof = max(copies, key=lambda r: r["bytes"])["gbps"]
            for r in records:
                if r["cache"] == cache and r["timer"] == timer and r["flops"] == 0:
                    r["copy_fraction"] = r["gbps"] / roof


# --- the GPU and its surroundings -----------------------------------------------------------

def run_nvidia_smi(args: list) -> str | None:
    try:
        done = subprocess.run(["nvidia-smi", *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def _number(token: str):
    try:
        value = float(token)
    except ValueError:
        return None  # "[N/A]", "[Not Supported]"
    return int(value) if value.is_integer() else value


REASON_BITS = {0x1: "gpu_idle", 0x2: "applications_clocks_setting", 0x4: "sw_power_cap",
               0x8: "hw_slowdown", 0x10: "sync_boost", 0x20: "sw_thermal_slowdown",
               0x40: "hw_thermal_slowdown", 0x80: "hw_power_brake_slowdown",
               0x100: "display_clock_setting"}
LIMITING_REASONS = {"sw_power_cap", "hw_slowdown", "sw_thermal_slowdown", "hw_thermal_slowdown",
                    "hw_power_brake_slowdown"}


def gpu_load(gpu_id: str) -> dict:
    """The same snapshot as kbench's src/device/gpu_load.cpp writes; gpu_id is a uuid or an
    index as nvidia-smi numbers them."""
    text = run_nvidia_smi(["--query-gpu=utilization.gpu,utilization.memory,clocks.sm,clocks.mem,"
                           "temperature.gpu,power.draw,memory.used,clocks_event_reasons.active,"
                           "uuid", "--format=csv,noheader,nounits", "-i", gpu_id])
    if not text or len(text.splitlines()[0].split(",")) != 9:
        return {"available": False, "reason": "nvidia-smi did not answer"}
    f = [t.strip() for t in text.splitlines()[0].split(",")]
    reasons = None
    if f[7].lower().startswith("0x"):
        bits = int(f[7], 16)
        reasons = {"hex": f[7], "names": [n for b, n in REASON_BITS.items() if bits & b]}
    snapshot = {"utilization_pct": _number(f[0]), "memory_utilization_pct": _number(f[1]),
                "sm_clock_mhz": _number(f[2]), "mem_clock_mhz": _number(f[3]),
                "temperature_c": _number(f[4]), "power_w": _number(f[5]),
                "memory_used_mib": _number(f[6]), "clock_event_reasons": reasons,
                "uuid": f[8], "available": True,
                "time": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
    apps = run_nvidia_smi(["--query-compute-apps=gpu_uuid,pid,process_name,used_memory",
                           "--format=csv,noheader,nounits"])
    processes = []
    for line in (apps or "").splitlines():
        parts = [t.strip() for t in line.split(",")]
        if len(parts) >= 4 and parts[0] == f[8] and _number(parts[1]) is not None:
            processes.append({"pid": _number(parts[1]), "name": ",".join(parts[2:-1]),
                              "used_mib": _number(parts[-1])})
    snapshot["processes"] = processes if apps is not None else None
    return snapshot


def load_warnings(before: dict, after: dict) -> list:
    warnings = []
    if not (before.get("available") and after.get("available")):
        warnings.append("GPU load not recorded (nvidia-smi did not answer): a busy or throttled "
                        "GPU would go unnoticed")
    busy = before.get("utilization_pct")
    if isinstance(busy, (int, float)) and busy > BUSY_UTILIZATION_PCT:
        warnings.append(f"GPU was {busy}% busy before the run: other work may have inflated the "
                        "timings")
    others = {}
    for snapshot in (before, after):
        for p in snapshot.get("processes") or []:
            if p["pid"] != os.getpid():
                others[p["pid"]] = f"pid {p['pid']} ({p['name']}, {p['used_mib']} MiB)"
    if others:
        warnings.append("other processes use this GPU: " + ", ".join(others.values()))
    for snapshot, when in ((before, "before"), (after, "after")):
        names = (snapshot.get("clock_event_reasons") or {}).get("names", [])
        limits = [n for n in names if n in LIMITING_REASONS]
        if limits:
            warnings.append(f"clocks were held down {when} the run by {', '.join(limits)}")
    return warnings


def sm_clock_mhz(gpu_id: str):
    text = run_nvidia_smi(["--query-gpu=clocks.sm", "--format=csv,noheader,nounits", "-i", gpu_id])
    return _number(text.strip()) if text else None


def warm_up(gpu_id: str) -> dict:
    """Elementwise bursts until >= 300 ms have passed and three clock readings, each taken while
    a burst still runs, agree within 1% (or 5 s pass): after idle the SM clock climbs for a
    while, and samples taken meanwhile would be slow for reasons unrelated to the op.
    The bursts stream memory, like the row ops timed after them and unlike a matmul: float16
    matmul bursts held the H200 at its power limit, about 1425 MHz, while kbench's warm-up
    (FMA on every SM) read 1978 MHz, so the two sides recorded different warm-up clocks."""
    torch.mm(torch.ones((64, 64), device="cuda"), torch.ones((64, 64), device="cuda"))  # loads cuBLAS
    a = torch.zeros(64 << 20, device="cuda", dtype=torch.float32)  # 256 MiB, over 4x L2
    trace, steady = [], False
    start = time.perf_counter()
    while True:
        for _ in range(800):  # ~100 ms (512 MiB moved each): outlasts the nvidia-smi call below
            a.add_(1.0)
        clock = sm_clock_mhz(gpu_id)
        torch.cuda.synchronize()
        if clock is not None:
            trace.append(clock)
        elapsed_ms = (time.perf_counter() - start) * 1000.0
        last = trace[-3:]
        steady = len(last) == 3 and max(last) <= 1.01 * min(last)
        if (elapsed_ms >= WARMUP_MIN_MS and (steady or not trace)) or elapsed_ms >= WARMUP_MAX_MS:
            break
    if not steady:
        warn(f"the SM clock did not settle during warm-up: {trace}")
    return {"ms": elapsed_ms, "sm_clock_mhz": trace[-1] if trace else 0, "steady": steady,
            "clock_trace_mhz": trace}


def _version_string(version: int) -> str:
    return f"{version // 1000}.{version % 1000 // 10}"


def cublas_version() -> str:
    """The cuBLAS that torch loaded, asked through ctypes (torch does not expose it)."""
    try:
        with open("/proc/self/maps", encoding="utf-8") as f:
            paths = {line.split()[-1] for line in f if "libcublas.so" in line}
        library = ctypes.CDLL(sorted(paths)[0])
        parts = []
        for kind in range(3):  # MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL
            value = ctypes.c_int()
            if library.cublasGetProperty(kind, ctypes.byref(value)) != 0:
                return ""
            parts.append(str(value.value))
        return ".".join(parts)
    except (OSError, IndexError, AttributeError):
        return ""


def device_block(index: int) -> dict:
    props = torch.cuda.get_device_properties(index)
    uuid = str(getattr(props, "uuid", "") or "")
    if uuid and not uuid.startswith("GPU-"):
        uuid = "GPU-" + uuid  # as nvidia-smi prints it, so that kbench's files compare equal
    driver = ctypes.c_int()
    try:
        ctypes.CDLL("libcuda.so.1").cuDriverGetVersion(ctypes.byref(driver))
    except OSError:
        pass
    block = {"name": props.name, "cc": f"{props.major}.{props.minor}",
             "sms": props.multi_processor_count, "l2_bytes": props.L2_cache_size,
             "memory_bytes": props.total_memory, "uuid": uuid,
             "driver": _version_string(driver.value) if driver.value else "",
             "cuda_runtime": torch.version.cuda or "", "cublas": ""}  # known after a matmul
    text = run_nvidia_smi(["--query-gpu=driver_version", "--format=csv,noheader,nounits",
                           "-i", uuid])
    if text and text.strip():
        block["driver_version"] = text.strip()
    return block


def lf_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes().replace(b"\r\n", b"\n")).hexdigest()


# The manifest's scope, as kSourceScope in src/record/manifest.hpp, plus this script: the
# sources whose difference from the commit provenance records (docs/schema.md, "meta.git").
SOURCE_SCOPE = ("src", "kernels", "experiments", "cmake", "CMakeLists.txt", "CMakePresets.json",
                "tests/CMakeLists.txt", SCRIPT_MANIFEST_NAME)
GIT_TIMEOUT_S = 120


class CompareError(Exception):
    """The tree could not be compared with the commit; the message says why."""


def _git(root: Path, *args, env=None) -> bytes:
    """git --no-optional-locks ARGS in root (argument vector, no shell); its stdout, or
    CompareError with the first line it said."""
    environment = {**os.environ, "GIT_LITERAL_PATHSPECS": "1", **(env or {})}
    try:
        done = subprocess.run(["git", "--no-optional-locks", *args], cwd=root, env=environment,
                              capture_output=True, timeout=GIT_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise CompareError(f"git {args[0]} could not run: {e}") from None
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise CompareError(said[0] if said else f"git {args[0]} failed")
    return done.stdout


def _resolve_commit(root: Path, rev: str):
    if not rev or rev.startswith("-"):
        return None
    try:
        return _git(root, "rev-parse", "--verify", "--quiet", rev + "^{commit}").decode().strip()
    except CompareError:
        return None


def _is_checkout(root: Path) -> bool:
    try:
        top = _git(root, "rev-parse", "--show-toplevel").decode("utf-8", "replace").strip()
    except CompareError:
        return False
    return Path(top).resolve() == root.resolve()


def compare_worktree(root: Path, commit: str) -> dict:
    """As compare_worktree in src/record/git_history.cpp: the scope of the working tree against
    the commit in a temporary index (read-tree, add -A, diff-index), never the real one.
    Returns {"changed": [...], "diff": str}; raises CompareError."""
    full = _resolve_commit(root, commit)
    if not full:
        raise CompareError(f"commit {commit} is not in this repository")
    listed = _git(root, "ls-tree", "-z", "--name-only", full, "--", *SOURCE_SCOPE)
    in_commit = set(listed.decode("utf-8", "surrogateescape").split("\0"))
    present = [p for p in SOURCE_SCOPE if p in in_commit or os.path.lexists(root / p)]
    with tempfile.TemporaryDirectory(prefix="kbench-index-") as scratch:
        env = {"GIT_INDEX_FILE": os.path.join(scratch, "index")}
        _git(root, "read-tree", full, env=env)
        if present:
            _git(root, "add", "-A", "--", *present, env=env)
        diff_index = ("diff-index", "--cached", "--no-renames")
        names = _git(root, *diff_index, "-z", "--name-only", full, "--", *SOURCE_SCOPE, env=env)
        changed = [n for n in names.decode("utf-8", "surrogateescape").split("\0") if n]
        diff = b""
        if changed:
            diff = _git(root, *diff_index, "-p", "--binary", "--full-index", full, "--",
                        *SOURCE_SCOPE, env=env)
    return {"changed": changed, "diff": diff}


def marker_commit(root: Path):
    marker_file = root / ".kbench-git-commit"
    if marker_file.is_file():
        lines = marker_file.read_text(encoding="utf-8", errors="replace").splitlines()
        if lines and lines[0].strip():
            return lines[0].strip()
    return None


def _add_comparison(git: dict, root: Path, commit: str) -> None:
    try:
        c = compare_worktree(root, commit)
    except CompareError as e:
        git.update({"dirty": True, "compare_error": str(e)})  # not compared is not clean
        return
    git.update({"dirty": bool(c["changed"]), "changed": c["changed"]})
    if not c["changed"]:
        return
    try:
        diff = c["diff"].decode("utf-8")
    except UnicodeDecodeError:
        git["diff_error"] = "the diff is not UTF-8 text, so a JSON string cannot hold it"
        return
    git.update({"diff": diff, "diff_sha256": hashlib.sha256(c["diff"]).hexdigest()})


def git_provenance(root: Path = REPO_ROOT) -> dict:
    """As kbench's provenance (src/record/provenance.cpp; docs/schema.md, "meta.git"): the base
    commit is the marker's (.kbench-git-commit) when git has no HEAD or the marker differs
    from it, else HEAD; the scope is compared with it in a temporary index, dirty is false only
    when that comparison found nothing, and a dirty tree records its diff."""
    checkout = _is_checkout(root)
    head = _resolve_commit(root, "HEAD") if checkout else None
    marker = marker_commit(root)
    marked = (_resolve_commit(root, marker) or marker) if marker else None
    if marker and (not head or marked != head):
        git = {"commit": marked, "source": ".kbench-git-commit"}
        if head:
            at_head = {}
            _add_comparison(at_head, root, head)
            git.update({"git_head": head, "git_dirty": at_head["dirty"]})
    elif head:
        git = {"commit": head, "source": "git"}
    else:
        why = "git has no HEAD commit" if checkout else "not a git checkout"
        return {"commit": "unknown", "dirty": True, "source": "none",
                "compare_error": f"{why} and there is no .kbench-git-commit"}
    if not checkout:
        git.update({"dirty": True, "compare_error":
                    "not a git checkout: the tree cannot be compared with the commit"})
        return git
    _add_comparison(git, root, git["commit"])
    return git


def file_records_digest(path: Path) -> str:
    """records_digest of a result file's records, recomputed (its own integrity is not read)."""
    try:
        with open(path, encoding="utf-8") as f:
            return records_digest(json.load(f)["records"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise UsageError(f"cannot take the records digest of {path}: {e!r}") from None


def _canonical_number(x) -> str:
    return "null" if x is None or not math.isfinite(x) else "%.17g" % x


def records_digest(records: list) -> str:
    """SHA-256 of the records' canonical text (docs/schema.md, "Integrity"), as kbench's
    records_digest (src/record/result.cpp): one tab-separated line per record."""
    lines = []
    for r in records:
        fields = [r["op"], r["variant"], "1" if r["baseline"] else "0", r["dtype"],
                  "x".join(str(d) for d in r["shape"]), r["cache"], r["timer"],
                  ",".join(_canonical_number(x) for x in r["samples_us"]),
                  ",".join(str(v) for v in r.get("sample_visits", [])),
                  *(_canonical_number(r[k]) for k in ("median_us", "q1_us", "q3_us", "min_us",
                                                       "bytes", "flops", "gbps")),
                  "1" if r["check"]["passed"] else "0"]
        lines.append("\t".join(fields) + "\n")
    return hashlib.sha256("".join(lines).encode("utf-8")).hexdigest()


def utc_now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


def iso(moment: datetime.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def finite_or_null(value):
    """JSON has no NaN or infinity; kbench's reader takes null as NaN."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite_or_null(v) for k, v in value.items()}
    if isinstance(value, list):
        return [finite_or_null(v) for v in value]
    return value


def result_text(result: dict) -> str:
    """kbench's layout (src/record/result.cpp, result_text): a record a line, every other
    top-level part on one line, keys sorted as kbench writes them."""
    def one(value) -> str:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    parts = []
    for key in sorted(result):
        value = result[key]
        if key == "records" and isinstance(value, list) and value:
            body = "[\n" + ",\n".join("  " + one(r) for r in value) + "\n ]"
        else:
            body = one(value)
        parts.append(" " + json.dumps(key, ensure_ascii=False) + ": " + body)
    return "{\n" + ",\n".join(parts) + "\n}\n"


def write_atomically(result: dict, out_dir: Path, experiment: str) -> Path:
    """<out>/<experiment>-torch-<UTC time>-<6 hex>.json via a temporary file and os.replace, so
    that a reader never sees half a file; the random part keeps runs from overwriting."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stamp = utc_now().strftime("%Y%m%dT%H%M%SZ")
    while True:
        target = out_dir / f"{experiment}-torch-{stamp}-{secrets.token_hex(3)}.json"
        if not target.exists():
            break
    handle, temp = tempfile.mkstemp(dir=out_dir, prefix=".torch-", suffix=".json.tmp")
    try:
        os.chmod(temp, 0o644)  # mkstemp's 0600 would hide the result from other users
        with os.fdopen(handle, "w", encoding="utf-8") as f:
            f.write(result_text(finite_or_null(result)))
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, target)
    except BaseException:
        os.unlink(temp)
        raise
    return target


# --- main -----------------------------------------------------------------------------------

class OneLineParser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def parse_args(argv):
    parser = OneLineParser(prog=PROG, description="Time kbench's ops with PyTorch (eager, "
                           "F.rms_norm, torch.compile) and write a kbench schema v1 result.")
    parser.add_argument("--config", help="sweep config (configs/*.json); required unless "
                        "--records-digest")
    parser.add_argument("--out", help="folder for the result file (required unless --dry-run)")
    parser.add_argument("--ops", nargs="+", help="only these ops")
    parser.add_argument("--dtype", nargs="+", choices=DTYPES, help="only these dtypes")
    parser.add_argument("--visits", type=int, help="visits per case (overrides the config)")
    parser.add_argument("--samples", type=int, help="samples per variant per visit")
    parser.add_argument("--seed", type=int, help="seed of the visit order and the inputs")
    parser.add_argument("--cache", choices=("cold", "warm", "both"))
    parser.add_argument("--timer", choices=("events", "graph", "both"))
    parser.add_argument("--device", type=int, default=0, help="CUDA device index")
    parser.add_argument("--dry-run", action="store_true",
                        help="list the cases that would be timed, without importing torch")
    parser.add_argument("--records-digest", metavar="RESULT",
                        help="print the integrity digest of a result file's records "
                        "(docs/schema.md) and exit; needs no torch")
    args = parser.parse_args(argv)
    if args.records_digest:
        return args
    if not args.config:
        raise UsageError("--config is required (the sweep config to time)")
    if not args.dry_run and not args.out:
        raise UsageError("--out is required (the folder for the result file)")
    return args


def require_torch(device: int) -> None:
    global torch
    try:
        import torch as torch_module
    except ImportError:
        raise UsageError(f"PyTorch is not installed for {sys.executable}; this script needs "
                         "torch with CUDA (--dry-run works without it)") from None
    torch = torch_module
    if not torch.cuda.is_available():
        raise UsageError("no CUDA GPU visible to PyTorch: this script times on a GPU")
    if not 0 <= device < torch.cuda.device_count():
        raise UsageError(f"device {device} does not exist: {torch.cuda.device_count()} visible")
    torch.cuda.set_device(device)


def allow_many_compiles() -> None:
    """Every (op, dtype, shape) is its own compiled graph; were Dynamo's default limits (8
    recompiles per function) reached, it would silently fall back to eager."""
    import torch._dynamo  # a lazily loaded submodule
    config = torch._dynamo.config
    for name in ("recompile_limit", "cache_size_limit"):
        if hasattr(config, name):
            setattr(config, name, 4096)
    if hasattr(config, "accumulated_recompile_limit"):
        config.accumulated_recompile_limit = 1 << 16


def versions() -> dict:
    try:
        import triton
        triton_version = triton.__version__
    except ImportError:
        triton_version = ""
    return {"torch": torch.__version__, "triton": triton_version, "cuda": torch.version.cuda or "",
            "python": sys.version.split()[0]}


def measure(plan: Plan, args, argv: list) -> Path:
    started = utc_now()
    device = device_block(args.device)
    # nvidia-smi by uuid: its indices ignore CUDA_VISIBLE_DEVICES, torch's follow it.
    gpu_id = device["uuid"] or str(args.device)
    load_before = gpu_load(gpu_id)
    allow_many_compiles()

    prepared = []
    for index, case in enumerate(plan.cases):
        progress(f"preparing {index + 1}/{len(plan.cases)}: {case.label()}")
        prepared.append(prepare(case, index, plan, device["l2_bytes"]))
    flusher = L2Flusher(device["l2_bytes"])
    warmup = warm_up(gpu_id)
    device["cublas"] = cublas_version()  # torch loads cuBLAS at its first matmul (the warm-up)
    series = run_visits(plan, prepared, flusher)
    records = build_records(prepared, series)
    torch.cuda.synchronize()
    del prepared, flusher

    time.sleep(LOAD_SETTLE_S)
    load_after = gpu_load(gpu_id)
    warnings = load_warnings(load_before, load_after)
    for w in warnings:
        warn(w)
    ops = sorted({case.op for case in plan.cases})
    result = {
        "schema": "kbench/result/v1",
        "experiment": plan.experiment,
        "meta": {
            "argv": argv, "started": iso(started), "finished": iso(utc_now()),
            "host": socket.gethostname(), "git": git_provenance(), "seed": plan.seed,
            "tool": SCRIPT_MANIFEST_NAME,
            "settings": {
                "config": args.config, "description": plan.description, "cache": plan.cache,
                "timer": plan.timer, "visits": plan.visits, "samples": plan.samples,
                "l2_flush_bytes": device["l2_bytes"], "graph_target_us": GRAPH_TARGET_US,
                "rotation_l2_multiple": ROTATION_L2_MULTIPLE,
                "rotation_max_sets": ROTATION_MAX_SETS, "rmsnorm_eps": RMSNORM_EPS,
                "compile": {"mode": "default", "dynamic": False},
                "matmul_allow_tf32": torch.backends.cuda.matmul.allow_tf32,
                "matmul_fp16_reduced_precision_reduction":
                    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
            },
        },
        "device": device,
        "warmup": warmup,
        "load": {"before": load_before, "after": load_after, "warnings": warnings},
        "manifest": {
            "algorithm": "sha256",
            "files": {SCRIPT_MANIFEST_NAME: lf_sha256(SCRIPT_PATH)},
            "versions": versions(),
            "measured": {op: [SCRIPT_MANIFEST_NAME] for op in ops},
        },
        "records": records,
        "integrity": {"algorithm": "sha256", "records": records_digest(records)},
    }
    return write_atomically(result, Path(args.out), plan.experiment)


def main(argv: list) -> int:
    try:
        args = parse_args(argv[1:])
        if args.records_digest:
            print(file_records_digest(Path(args.records_digest)))
            return 0
        plan = load_plan(args)
        if not args.dry_run:
            require_torch(args.device)  # before the notes: no torch must be one line
        for op in plan.skipped_ops:
            print(f"{PROG}: note: skipping op '{op}' (this script does not know it)",
                  file=sys.stderr)
        if args.dry_run:
            for case in plan.cases:
                print(f"{case.label()} {','.join(variants_for(case.op))}")
            print(f"{PROG}: {len(plan.cases)} cases; cache {','.join(plan.cache)}; timer "
                  f"{','.join(plan.timer)}; {plan.visits} visits x {plan.samples} samples; "
                  f"seed {plan.seed} (dry run: nothing timed)", file=sys.stderr)
            return 0
        with torch.inference_mode():
            path = measure(plan, args, argv)
    except UsageError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
