"""GPU test of the Python module `kbench` (src/python/, docs/python.md), run by ctest (label gpu)
with the Python that holds PyTorch: torch.add timed by kbench's harness, cold and warm, with the
events, graph and cupti timers, checked against a float64 reference first; the check made to fail
(a wrong op, an output left half unwritten); an exception from the callable; bfloat16 through
DLPack on the default stream; callables that allocate (a + b, an autograd training step) timed
with the graph timer; several cases in one kbench.time_cases run, a failing variant left out of
it; and every result valid by src/record/result.schema.json.
Exits 77 (skipped) without the module, PyTorch or a GPU; KBENCH_REQUIRE_GPU=1 makes that a failure."""
import json
import os
import sys
import tempfile
import unittest

REQUIRE_GPU = os.environ.get("KBENCH_REQUIRE_GPU") == "1"


def skip(why):
    print(("FAIL (KBENCH_REQUIRE_GPU=1): " if REQUIRE_GPU else "SKIP: ") + why)
    sys.exit(1 if REQUIRE_GPU else 77)


try:
    import kbench
except ImportError as e:
    skip(f"the module kbench is not built for {sys.executable} or not on PYTHONPATH ({e})")
try:
    import torch
except ImportError:
    skip(f"PyTorch is not installed for {sys.executable}")
if not torch.cuda.is_available():
    skip("no CUDA device visible to PyTorch")

N = 1 << 20  # 12 MiB a set: cold graph timing must rotate through sets covering 3x L2
# float32 addition rounds once: at most half an ulp of the sum, 2^-24 relative.
RTOL_F32 = 2.0 ** -24
# bfloat16 rounds its inputs (drawn in bfloat16, so exact) and its sum once: 2^-8 relative.
RTOL_BF16 = 2.0 ** -8
DEVICE = torch.device("cuda")


def make_inputs(dtype=torch.float32, n=N):
    def inputs():
        return (torch.randn(n, device=DEVICE, dtype=dtype), torch.randn(n, device=DEVICE, dtype=dtype),
                torch.empty(n, device=DEVICE, dtype=dtype))
    return inputs


def add(a, b, c):
    return torch.add(a, b, out=c)


def add_in_place(a, b, c):  # the same sum as two kernels: a copy, then an in-place add
    return c.copy_(a).add_(b)


def reference(a, b, c):
    return a.double() + b.double()


def schema_validate(result):
    """kbench's own check (the schema compiled into the module), and jsonschema's where installed."""
    kbench.validate_result(result)
    try:
        import jsonschema
    except ImportError:
        return
    with open(os.environ.get("KBENCH_SCHEMA", os.path.join(os.path.dirname(__file__), "..", "..", "src",
                                                            "record", "result.schema.json"))) as f:
        jsonschema.validate(result, json.load(f))


class TorchAdd(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        torch.manual_seed(0)
        cls.stream = torch.cuda.Stream()
        cls.out = tempfile.mkdtemp(prefix="kbench-python-")
        with torch.cuda.stream(cls.stream):
            cls.result = kbench.time({"torch.add": add, "torch.add_in_place": add_in_place}, stream=cls.stream.cuda_stream,
                                     op="add", dtype="float32", shape=[N], bytes=3 * 4 * N, inputs=make_inputs(),
                                     reference=reference, atol=0, rtol=RTOL_F32, cache="both", timer="all",
                                     visits=3, samples=3, seed=5, experiment="python-test", out=cls.out,
                                     settings={"test": "tests/gpu/test_python_module.py"})

    def test_records(self):
        records = self.result["records"]
        self.assertEqual(len(records), 2 * 2 * 3, [(r["variant"], r["cache"], r["timer"]) for r in records])
        seen = {(r["variant"], r["cache"], r["timer"]) for r in records}
        for variant in ("torch.add", "torch.add_in_place"):
            for cache in ("cold", "warm"):
                for timer in ("events", "graph", "cupti"):
                    self.assertIn((variant, cache, timer), seen)
        for r in records:
            what = f"{r['variant']} {r['cache']} {r['timer']}"
            self.assertEqual((r["op"], r["dtype"], r["shape"], r["bytes"]), ("add", "float32", [N], 3 * 4 * N))
            self.assertTrue(r["check"]["passed"], what)
            self.assertLessEqual(r["check"]["max_err"], r["check"]["tolerance"], what)
            if not r.get("discarded_samples"):  # the clock filter takes a visit again, or drops it
                self.assertEqual(len(r["samples_us"]), 3 * 3, what)
            self.assertGreater(r["median_us"], 0, what)
            self.assertAlmostEqual(r["gbps"], r["bytes"] / (r["median_us"] * 1e3), delta=1e-6 * r["gbps"])
            # Cold, every byte comes from HBM (under 5 TB/s on any GPU today): a faster figure means
            # the timer did not see the work, as when the callable enqueues on another stream.
            if r["cache"] == "cold":
                self.assertLess(r["gbps"], 5000, what)
            self.assertEqual(len(r["sample_floor_us"]), len(r["samples_us"]), what)
        cold_graph = [r for r in records if r["cache"] == "cold" and r["timer"] == "graph"]
        for r in cold_graph:
            self.assertIn("rotate through", r["timer_note"])
            self.assertEqual(r["launches_per_sample"] % self.result["extra"]["python"]["input_sets"], 0)

    def test_result_block(self):
        python = self.result["extra"]["python"]
        l2 = self.result["device"]["l2_bytes"]
        self.assertGreaterEqual(python["input_sets"] * 3 * 4 * N, 3 * l2)
        self.assertEqual(python["stream"], self.stream.cuda_stream)
        self.assertEqual([c["poisoned"] for c in python["checks"]], [True, True])  # both write into c
        self.assertEqual(self.result["meta"]["settings"]["caller"], {"test": "tests/gpu/test_python_module.py"})
        self.assertIn("src/python/module.cpp", self.result["manifest"]["files"])
        self.assertGreater(self.result["warmup"]["sm_clock_mhz"], 0)
        self.assertIn("before", self.result["load"])

    def test_schema(self):
        schema_validate(self.result)
        written = self.result["extra"]["python"]["written"]
        self.assertTrue(written.startswith(self.out) and written.endswith(".json"), written)
        kbench.validate_result(written)
        with open(written) as f:
            schema_validate(json.load(f))


class Checks(unittest.TestCase):
    def time(self, fn, **changes):
        kwargs = dict(stream=torch.cuda.current_stream().cuda_stream, op="add", dtype="float32", shape=[N],
                      bytes=3 * 4 * N, inputs=make_inputs(), reference=reference, atol=0, rtol=RTOL_F32,
                      cache="warm", timer="events", visits=1, samples=2)
        kwargs.update(changes)
        return kbench.time(fn, **kwargs)

    def test_a_wrong_op_fails_before_timing(self):
        with self.assertRaisesRegex(kbench.CheckError, r"variant 'python': output 0 element \d+: got .*nothing was timed"):
            self.time(lambda a, b, c: torch.sub(a, b, out=c))

    def test_an_output_left_half_unwritten_is_caught_by_the_poison(self):
        def half(a, b, c):
            torch.add(a[: N // 2], b[: N // 2], out=c[: N // 2])
            return c
        with self.assertRaisesRegex(kbench.CheckError, r"output 0 element %d: got -?nan" % (N // 2)):
            self.time(half)

    def test_the_callables_exception_is_raised_as_it_is(self):
        calls = []

        def fails_when_timed(a, b, c):
            calls.append(1)
            if len(calls) > 3:  # the check calls it three times; the harness's first launch raises
                raise ZeroDivisionError("raised by the callable")
            return add(a, b, c)
        with self.assertRaisesRegex(ZeroDivisionError, "raised by the callable"):
            self.time(fails_when_timed)

    def test_bfloat16_through_dlpack_on_the_default_stream(self):
        result = self.time(add, dtype="bfloat16", bytes=3 * 2 * N, inputs=make_inputs(torch.bfloat16),
                           rtol=RTOL_BF16, stream=0, timer=["events", "cupti"])
        self.assertEqual([(r["dtype"], r["timer"]) for r in result["records"]],
                         [("bfloat16", "events"), ("bfloat16", "cupti")])
        schema_validate(result)


def add_new(a, b, c=None):  # PyTorch's plain op: a new tensor each call
    return a + b


def softmax_step(x, dy):  # a training step: autograd's backward runs on PyTorch's device thread
    with torch.enable_grad():
        y = torch.softmax(x, -1)
        (dx,) = torch.autograd.grad(y, x, dy)
    return y.detach(), dx


def softmax_step_inputs(rows=4096, cols=1024):
    def inputs():
        return torch.randn(rows, cols, device=DEVICE).requires_grad_(), torch.randn(rows, cols, device=DEVICE)
    return inputs


def softmax_step_reference(x, dy):
    y = torch.softmax(x.detach().double(), -1)
    return y, y * (dy.double() - (y * dy.double()).sum(-1, keepdim=True))


class AllocatingCallables(unittest.TestCase):
    """What PyTorch users time: ops that return new tensors, and autograd, captured into graphs in
    relaxed mode, with what each captured launch returned kept until the run ends."""

    def test_a_plus_b_in_every_timer(self):
        stream = torch.cuda.Stream()
        with torch.cuda.stream(stream):
            result = kbench.time({"a + b": add_new}, stream=stream, op="add", dtype="float32", shape=[N],
                                 bytes=3 * 4 * N, inputs=make_inputs(), reference=reference, atol=0, rtol=RTOL_F32,
                                 cache="both", timer="all", visits=2, samples=2)
        seen = {(r["cache"], r["timer"]) for r in result["records"]}
        self.assertEqual(seen, {(c, t) for c in ("cold", "warm") for t in ("events", "graph", "cupti")})
        for r in result["records"]:
            self.assertTrue(r["check"]["passed"])
            if r["cache"] == "cold":
                self.assertLess(r["gbps"], 5000, r["timer"])
        self.assertEqual([c["poisoned"] for c in result["extra"]["python"]["checks"]], [False])  # fresh outputs
        schema_validate(result)

    def test_an_autograd_step_in_a_graph(self):
        stream = torch.cuda.Stream()
        rows, cols = 4096, 1024
        with torch.cuda.stream(stream):
            result = kbench.time({"step": softmax_step}, stream=stream, op="softmax_step", dtype="float32",
                                 shape=[rows, cols], bytes=5 * 4 * rows * cols, inputs=softmax_step_inputs(rows, cols),
                                 reference=softmax_step_reference, atol=[1e-6, 1e-5], rtol=1e-5, cache="both",
                                 timer="graph", visits=2, samples=2)
        self.assertEqual({r["cache"] for r in result["records"]}, {"cold", "warm"})
        for r in result["records"]:
            self.assertTrue(r["check"]["passed"])
            self.assertGreater(r["median_us"], 0)
        self.assertEqual(result["extra"]["python"]["tolerance"], {"atol": [1e-6, 1e-5], "rtol": 1e-5})


class SeveralCases(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        torch.manual_seed(0)
        cls.stream = torch.cuda.Stream()
        cls.out = tempfile.mkdtemp(prefix="kbench-python-cases-")
        cases = [
            dict(fn={"torch.add": add, "a + b": add_new}, baseline="torch.add", op="add", dtype="float32",
                 shape=[N], bytes=3 * 4 * N, inputs=make_inputs(), reference=reference, atol=0, rtol=RTOL_F32),
            dict(fn={"a + b": add_new, "wrong": lambda a, b, c: a - b}, op="add", dtype="bfloat16", shape=[N],
                 bytes=3 * 2 * N, inputs=make_inputs(torch.bfloat16), reference=reference, rtol=RTOL_BF16,
                 params={"p": 1}),
        ]
        with torch.cuda.stream(cls.stream):
            cls.result = kbench.time_cases(cases, stream=cls.stream, cache="both", timer="all", visits=3, samples=2,
                                           seed=3, experiment="python-test", out=cls.out, tag="cases",
                                           tool="tests/gpu/test_python_module.py")

    def test_records_for_every_case(self):
        got = {(r["dtype"], r["variant"], r["cache"], r["timer"]) for r in self.result["records"]}
        want = {(d, v, c, t) for d, variants in (("float32", ("torch.add", "a + b")), ("bfloat16", ("a + b",)))
                for v in variants for c in ("cold", "warm") for t in ("events", "graph", "cupti")}
        self.assertEqual(got, want)
        for r in self.result["records"]:
            self.assertTrue(r["check"]["passed"])
            self.assertEqual(r["baseline"], r["variant"] == "torch.add")
            self.assertEqual(r.get("params", {}), {"p": 1} if r["dtype"] == "bfloat16" else {})
            if r["cache"] == "cold":
                self.assertLess(r["gbps"], 5000)

    def test_one_run_visits_every_case(self):
        # one schedule for both cases: every record's samples come from visits 0..2 of the one run
        # (a visit the clock filter dropped may be missing)
        for r in self.result["records"]:
            self.assertTrue(set(r["sample_visits"]) <= {0, 1, 2} and r["sample_visits"], r["variant"])
        self.assertGreater(self.result["warmup"]["sm_clock_mhz"], 0)
        cases = self.result["extra"]["python"]["cases"]
        self.assertEqual([(c["op"], c["dtype"]) for c in cases], [("add", "float32"), ("add", "bfloat16")])
        self.assertEqual(len(self.result["meta"]["settings"]["cases"]), 2)

    def test_a_failing_variant_is_listed_and_not_timed(self):
        failures = self.result["extra"]["check_failures"]
        self.assertEqual([(f["variant"], f["dtype"]) for f in failures], [("wrong", "bfloat16")])
        self.assertNotIn("wrong", {r["variant"] for r in self.result["records"]})

    def test_the_file(self):
        written = self.result["extra"]["python"]["written"]
        self.assertRegex(os.path.basename(written), r"^python-test-cases-\d{8}T\d{6}Z-[0-9a-f]{6}\.json$")
        self.assertEqual(self.result["meta"]["tool"], "tests/gpu/test_python_module.py")
        kbench.validate_result(written)
        schema_validate(self.result)


if __name__ == "__main__":
    sys.exit(0 if unittest.main(exit=False, verbosity=2).result.wasSuccessful() else 1)
