#!/usr/bin/env python3
"""PyTorch side by side: kbench's ops as PyTorch computes them, timed by kbench's own harness.

`torch.eager` (the plain op or composition), `torch.rms_norm` (F.rms_norm) and `torch.compile` (the
eager function compiled, dynamic=False) over a sweep config's cases; a training step runs the forward
on leaf tensors that require grad, then torch.autograd.grad. This file holds the PyTorch definitions
of the ops and their tolerances, and nothing of the method: the cases, with their parameters, bytes
and flops, are kbench's plan (kbench.plan); checking, timing and recording are the Python module's
(docs/python.md). `kbench report` sets the result beside kbench's run (docs/torch-comparison.md):

    python3 scripts/torch_baseline.py --config configs/sweep.json --out results/sweep
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import importlib.util
import math
import sys
import types
from pathlib import Path

PROG = "torch_baseline.py"
SCRIPT_PATH = Path(__file__).resolve()
REPO_ROOT = SCRIPT_PATH.parent.parent
SCRIPT_NAME = "scripts/torch_baseline.py"
RMSNORM_EPS = 1e-6
# The parameters the PyTorch code below computes, per op (kbench's plan states every parameter
# of a case); a case asking for others would compare different work. Ops not named take none.
TIMED_PARAMS = {"rmsnorm": {"eps": RMSNORM_EPS},
                "rmsnorm_backward": {"eps": RMSNORM_EPS, "dh": 0, "frozen": 0},  # no residual gradient, with dw
                "rmsnorm_step": {"eps": RMSNORM_EPS, "dh": 1, "frozen": 0}}      # with dh and dw: the defaults
# Relative tolerance per dtype: a few units in the last place of the output. float32 gets more
# (about 80 ulp) because torch.compile's exp and rsqrt are approximate instructions.
RTOL = {"float32": 1e-5, "float16": 4 * 2.0 ** -10, "bfloat16": 4 * 2.0 ** -7}
FLOAT32_EPS = 2.0 ** -24

torch = None  # imported by require_torch(), after --dry-run has had its chance to run without it


class UsageError(Exception):
    """Bad input: one line on stderr, exit status 2."""


def variants_for(op: str) -> list:
    return {"copy": ["torch.eager"],  # the memcpy-equivalent roofline: nothing to compile
            "rmsnorm": ["torch.eager", "torch.rms_norm", "torch.compile"]}.get(op, ["torch.eager", "torch.compile"])


def plan_cases(args, kbench) -> dict:
    """The config's cases as kbench plans them (kbench.plan: its reader, filters and overrides,
    every parameter, the bytes and flops its records count), less the ops this script lacks."""
    overrides = {name: getattr(args, name) for name in ("cache", "timer", "visits", "samples", "seed")}
    try:
        plan = kbench.plan(args.config, ops=args.ops, dtypes=args.dtype, **overrides)
    except ValueError as e:  # kbench's own line
        raise UsageError(str(e)) from None
    cases = [types.SimpleNamespace(**c) for c in plan["cases"]]  # case.op, .dtype, .shape, .params, .bytes, .flops
    plan["skipped"] = list(dict.fromkeys(c.op for c in cases if c.op not in EAGER | STEP_FORWARD))
    plan["cases"] = [c for c in cases if c.op in EAGER | STEP_FORWARD]
    for c in plan["cases"]:
        if c.params != TIMED_PARAMS.get(c.op, {}):
            raise UsageError(f"config '{args.config}': this script times {c.op} with parameters "
                             f"{TIMED_PARAMS.get(c.op, {})} only, got {c.params}")
    if not plan["cases"]:
        raise UsageError(f"config '{args.config}': no cases left to time (after --ops/--dtype and skipped ops)")
    return plan


# --- the ops in PyTorch: what a PyTorch user would write; torch.compile compiles the same ------

def at_least_float32(t):
    return t.to(torch.promote_types(t.dtype, torch.float32))  # .float() to a user; float64 stays


def rmsnorm_eager(x, r, w):
    h = x + r
    hf = at_least_float32(h)  # the usual composition: statistics in float32, result in the input dtype
    y = (hf * torch.rsqrt(hf.pow(2).mean(-1, keepdim=True) + RMSNORM_EPS)).to(h.dtype) * w
    return h, y


def rmsnorm_rms_norm(x, r, w):
    h = x + r
    return h, torch.nn.functional.rms_norm(h, (h.shape[-1],), w, RMSNORM_EPS)


def rmsnorm_backward_eager(h, w, dy):
    """The gradient through the norm, recomputing the inverse RMS: dh (= dx = dr) and dw."""
    hf, dyf = at_least_float32(h), at_least_float32(dy)
    inv_rms = torch.rsqrt(hf.pow(2).mean(-1, keepdim=True) + RMSNORM_EPS)
    normed = hf * inv_rms
    dnormed = dyf * at_least_float32(w)
    dh = inv_rms * (dnormed - normed * (dnormed * normed).mean(-1, keepdim=True))
    dw = (dyf * normed).sum(0)
    return dh.to(h.dtype), dw.to(w.dtype)


EAGER = {"copy": lambda x, out: out.copy_(x),
         "add": lambda x, y: x + y,
         "row_sum": lambda x: x.sum(dim=-1),  # 16-bit inputs accumulate in float32 inside PyTorch's reduction
         "softmax": lambda x: torch.softmax(x, dim=-1),
         "softmax_backward": lambda y, dy: torch._softmax_backward_data(dy, y, -1, y.dtype),  # PyTorch's own kernel
         "rmsnorm": rmsnorm_eager, "rmsnorm_backward": rmsnorm_backward_eager,
         "gemm": lambda a, b: torch.mm(a, b)}  # cuBLAS; TF32 off, PyTorch's default
STEP_FORWARD = {"softmax_step": EAGER["softmax"], "rmsnorm_step": rmsnorm_eager}


def step_function(op: str, forward):
    """A training step around `forward` (eager or compiled): the forward on leaf tensors that
    require grad, then torch.autograd.grad of its outputs with the upstream gradients. The script
    times under inference mode, which autograd cannot run in, so the step leaves it for the call."""
    def softmax_step(x, dy):
        with torch.inference_mode(False), torch.enable_grad():
            y = forward(x)
            (dx,) = torch.autograd.grad(y, x, dy)
        return y.detach(), dx

    def rmsnorm_step(x, r, w, dy, dh):  # h feeds the next block too: its gradient dh joins in
        with torch.inference_mode(False), torch.enable_grad():
            h, y = forward(x, r, w)
            dx, dw = torch.autograd.grad((h, y), (x, w), (dh, dy))
        return h.detach(), y.detach(), dx, dw
    return {"softmax_step": softmax_step, "rmsnorm_step": rmsnorm_step}[op]


def own_code_copy(fn):
    """fn with a code object of its own: Dynamo keeps compiled graphs per code object and checks
    their guards one by one on every call, a search growing with the cases if they shared one."""
    return types.FunctionType(fn.__code__.replace(), fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)


def build_function(case, variant: str):
    # dynamic=False: one kernel specialised per shape, as the user who compiles for a fixed shape gets.
    if case.op in STEP_FORWARD:
        forward = STEP_FORWARD[case.op]
        if variant == "torch.compile":
            forward = torch.compile(own_code_copy(forward), dynamic=False)
        return step_function(case.op, forward)
    if variant == "torch.rms_norm":
        return rmsnorm_rms_norm
    fn = EAGER[case.op]
    return torch.compile(own_code_copy(fn), dynamic=False) if variant == "torch.compile" else fn


def reference(op: str, inputs) -> tuple:
    """float64 results from the inputs exactly as the GPU sees them (already rounded): the eager
    forms above, which compute in at least float32, run in float64; the steps compose them."""
    d = [t.detach().double() for t in inputs]  # the steps' inputs require grad
    if op == "softmax_step":
        y = EAGER["softmax"](d[0])
        return y, EAGER["softmax_backward"](y, d[1])
    if op == "rmsnorm_step":  # the backward reads h as stored: x + r rounded to the dtype
        x, r, w, dy, dh = d
        dh_norm, dw = rmsnorm_backward_eager((inputs[0] + inputs[1]).detach().double(), w, dy)
        return (*rmsnorm_eager(x, r, w), dh_norm + dh, dw)
    out = d[0].clone() if op == "copy" else EAGER[op](*d)
    return out if isinstance(out, tuple) else (out,)


def reduction_lengths(case) -> tuple:
    """How many terms each output element sums: rounding error grows with its square root."""
    if case.op == "gemm" or len(case.shape) == 1:
        return (case.shape[2] if case.op == "gemm" else 1,)
    rows, cols = case.shape
    return {"row_sum": (cols,), "softmax": (cols,), "softmax_backward": (cols,), "rmsnorm": (1, cols),
            "rmsnorm_backward": (cols, rows), "softmax_step": (cols, cols), "rmsnorm_step": (1, cols, cols, rows)}[case.op]


def make_inputs(case, generator) -> tuple:
    """Fresh random inputs (never zeros), in the case's dtype, on the current GPU; the steps' leaf
    tensors require grad (and are made outside inference mode: autograd cannot save those)."""
    dtype, (rows, cols) = getattr(torch, case.dtype), (case.shape[0], case.shape[-1])

    def randn(*shape, grad=False):
        with torch.inference_mode(case.op not in STEP_FORWARD):  # a step's tensors all outside it, as before
            return torch.randn(shape, generator=generator, device="cuda").to(dtype).requires_grad_(grad)
    return {"copy": lambda: (randn(rows), torch.empty(rows, device="cuda", dtype=dtype)),
            "add": lambda: (randn(rows), randn(rows)),
            "gemm": lambda: (randn(rows, case.shape[2]), randn(case.shape[2], case.shape[1])),
            "row_sum": lambda: (randn(rows, cols),), "softmax": lambda: (randn(rows, cols),),
            "softmax_backward": lambda: (torch.softmax(randn(rows, cols).float(), -1).to(dtype), randn(rows, cols)),
            "rmsnorm": lambda: (randn(rows, cols), randn(rows, cols), randn(cols)),
            "rmsnorm_backward": lambda: (randn(rows, cols), randn(cols), randn(rows, cols)),
            "softmax_step": lambda: (randn(rows, cols, grad=True), randn(rows, cols)),
            "rmsnorm_step": lambda: (randn(rows, cols, grad=True), randn(rows, cols, grad=True), randn(cols, grad=True),
                                     randn(rows, cols), randn(rows, cols))}[case.op]()


def module_case(case, index: int, seed: int) -> dict:
    """One case for kbench.time_cases. Its first input set is made here, for the reference and
    the tolerance: per output, |out - ref| <= rtol |ref| + atol with atol = (rtol + 2 sqrt(terms)
    eps32) max|ref|, a few ulp at the output's largest value plus float32 summation error."""
    generator = torch.Generator(device="cuda").manual_seed(seed * 1_000_003 + index)
    first = [make_inputs(case, generator)]
    rtol = RTOL[case.dtype]
    atol = [(rtol + 2 * math.sqrt(terms) * FLOAT32_EPS) * ref.abs().max().item()
            for ref, terms in zip(reference(case.op, first[0]), reduction_lengths(case))]
    variants = {v: build_function(case, v) for v in variants_for(case.op)}
    return {"fn": variants, "baseline": list(variants), "op": case.op, "dtype": case.dtype, "shape": case.shape,
            "bytes": case.bytes, "flops": case.flops, "params": case.params,  # as kbench's records count them
            # the first set, then fresh ones (cold graph rotation); the reference is computed again
            # when the module checks this case, so that one case's float64 tensors exist at a time
            "inputs": lambda: first.pop() if first else make_inputs(case, generator),
            "reference": lambda *inputs: reference(case.op, inputs), "atol": atol, "rtol": rtol}


def import_kbench():
    """The module from PYTHONPATH, else from this checkout's build folders (build-gpu first)."""
    folders = (REPO_ROOT / "build-gpu", *sorted(REPO_ROOT.glob("build*")))
    sys.path += [str(f) for f in folders if any(f.glob("kbench.cpython-*.so"))]  # after PYTHONPATH's
    try:
        import kbench
    except ImportError:
        raise UsageError(f"the Python module kbench is not built for {sys.executable} (docs/python.md: cmake --build "
                         "build-gpu --target kbench_python, or put its folder on PYTHONPATH)") from None
    return kbench


def require_torch(device: int) -> None:
    global torch
    try:
        torch = importlib.import_module("torch")
    except ImportError:
        raise UsageError(f"PyTorch is not installed for {sys.executable}; this script needs "
                         "torch with CUDA (--dry-run works without it)") from None
    if not torch.cuda.is_available():
        raise UsageError("no CUDA GPU visible to PyTorch: this script times on a GPU")
    if not 0 <= device < torch.cuda.device_count():
        raise UsageError(f"device {device} does not exist: {torch.cuda.device_count()} visible")
    torch.cuda.set_device(device)


def allow_many_compiles() -> None:
    """Every (op, dtype, shape) is its own compiled graph; were Dynamo's default limits (8
    recompiles per function) reached, it would silently fall back to eager."""
    import torch._dynamo  # a lazily loaded submodule
    for name, limit in (("recompile_limit", 4096), ("cache_size_limit", 4096), ("accumulated_recompile_limit", 1 << 16)):
        if hasattr(torch._dynamo.config, name):
            setattr(torch._dynamo.config, name, limit)


def caller_settings(args, plan) -> dict:
    """What the module cannot know: this script's version and PyTorch's settings."""
    triton = importlib.util.find_spec("triton") and importlib.import_module("triton")
    text = SCRIPT_PATH.read_bytes().replace(b"\r\n", b"\n")
    return {"config": args.config, "description": plan["description"], "rmsnorm_eps": RMSNORM_EPS,
            "script": {"path": SCRIPT_NAME, "sha256": hashlib.sha256(text).hexdigest()},
            "versions": {"torch": torch.__version__, "triton": getattr(triton, "__version__", ""), "cuda": torch.version.cuda or "",
                         "python": sys.version.split()[0]},
            "compile": {"mode": "default", "dynamic": False},
            "matmul_allow_tf32": torch.backends.cuda.matmul.allow_tf32,
            "matmul_fp16_reduced_precision_reduction": torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction}


class OneLineParser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def parse_args(argv):
    parser = OneLineParser(prog=PROG, description="Time kbench's ops with PyTorch (eager, F.rms_norm, "
                           "torch.compile) through kbench's harness and write a kbench schema v1 result.")
    parser.add_argument("--config", required=True, help="sweep config (configs/*.json)")
    parser.add_argument("--out", help="folder for the result file (required unless --dry-run)")
    parser.add_argument("--ops", nargs="+", help="only these ops")
    parser.add_argument("--dtype", nargs="+", help="only these dtypes")
    parser.add_argument("--visits", type=int, help="visits per case (overrides the config)")
    parser.add_argument("--samples", type=int, help="samples per variant per visit")
    parser.add_argument("--seed", type=int, help="seed of the visit order and the inputs")
    parser.add_argument("--cache", choices=("cold", "warm", "both"))
    parser.add_argument("--timer", choices=("events", "graph", "cupti", "both", "all"))
    parser.add_argument("--device", type=int, default=0, help="CUDA device index")
    parser.add_argument("--dry-run", action="store_true", help="list the cases, without importing torch")
    args = parser.parse_args(argv)
    if not args.dry_run and not args.out:
        raise UsageError("--out is required (the folder for the result file)")
    return args


def main(argv: list) -> int:
    try:
        args = parse_args(argv[1:])
        kbench = import_kbench()
        plan = plan_cases(args, kbench)
        if not args.dry_run:
            require_torch(args.device)  # before the notes: no torch must be one line
        for op in plan["skipped"]:
            print(f"{PROG}: note: skipping op '{op}' (this script does not know it)", file=sys.stderr)
        if args.dry_run:  # the cases and this script's variants (`kbench run --dry-run` has the rest)
            for case in plan["cases"]:
                print(f"{case.op} {case.dtype} {'x'.join(map(str, case.shape))} {','.join(variants_for(case.op))}")
            return 0
        allow_many_compiles()
        stream = torch.cuda.Stream()  # the graph timer captures it: not the default stream
        with torch.inference_mode(), torch.cuda.stream(stream):
            cases = [module_case(case, i, plan["seed"]) for i, case in enumerate(plan["cases"])]
            run = {name: plan[name] for name in ("cache", "timer", "visits", "samples", "seed", "experiment")}
            try:
                result = kbench.time_cases(cases, stream=stream.cuda_stream, device=args.device, out=args.out, tag="torch",
                                           tool=SCRIPT_NAME, settings=caller_settings(args, plan), **run)
            except ValueError as e:  # the module's one line: a case too small to rotate, an --out that is a file
                raise UsageError(str(e)) from None
            except kbench.CheckError as e:  # every variant of every case failed its check: nothing timed
                print(f"{PROG}: error: {e}", file=sys.stderr)
                return 1
    except UsageError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    print(result["extra"]["python"]["written"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
