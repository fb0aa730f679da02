#!/usr/bin/env python3
"""Prints the Triton code torch.compile generates for the row ops kbench races it on, so that
a kernel kbench loses to can be read (issue 14: "find out how its kernel does it").

Usage: python3 scripts/torch_kernel_dump.py OP:DTYPE:ROWSxCOLS [...]
  e.g. softmax_backward:float32:4096x4096 softmax_backward:float16:8192x8192
OP: row_sum, softmax or softmax_backward.

The functions are torch_baseline.py's own (EAGER), compiled as it compiles them
(dynamic=False); inductor's generated module (its Triton kernels with their launch heuristics)
goes to stderr through TORCH_LOGS=output_code.
"""
import os
import sys

os.environ.setdefault("TORCH_LOGS", "output_code")

import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
import torch_baseline as tb  # noqa: E402

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


def inputs_for(op: str, dtype, rows: int, cols: int):
    g = torch.Generator(device="cuda").manual_seed(1)
    t = lambda: torch.randn(rows, cols, device="cuda", dtype=dtype, generator=g)  # noqa: E731
    if op == "softmax_backward":
        return (torch.softmax(t().float(), -1).to(dtype), t())
    if op in ("softmax", "row_sum"):
        return (t(),)
    raise SystemExit(f"torch_kernel_dump: no inputs for op '{op}' (softmax, softmax_backward, row_sum)")


def main(argv) -> int:
    if not argv:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    tb.require_torch(0)  # torch_baseline.py imports torch lazily; its functions see it from here on
    tb.allow_many_compiles()
    for spec in argv:
        try:
            op, dtype, shape = spec.split(":")
            rows, cols = (int(v) for v in shape.split("x"))
            dt = DTYPES[dtype]
        except (ValueError, KeyError):
            print(f"torch_kernel_dump: bad spec '{spec}' (OP:DTYPE:ROWSxCOLS)", file=sys.stderr)
            return 2
        print(f"===== {spec}", flush=True)
        torch._dynamo.reset()
        fn = torch.compile(tb.EAGER[op], dynamic=False)
        fn(*inputs_for(op, dt, rows, cols))
        torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
