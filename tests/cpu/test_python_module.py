"""CPU test of the Python module `kbench` (src/python/, docs/python.md), run by ctest (label cpu)
with PYTHONPATH at the built module and no GPU visible (CUDA_VISIBLE_DEVICES empty): the API and
its docstrings, every argument rule of kbench.time and kbench.time_cases (ValueError, one line
naming the argument and the case), the check alone (kbench.compare) on host arrays, result
validation, kbench's config reader, and that timing without a GPU raises a clear RuntimeError. The GPU test (tests/gpu/test_python_module.py) times torch.add with it."""
import ctypes
import glob
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

os.environ["CUDA_VISIBLE_DEVICES"] = ""  # before the module loads the CUDA runtime
import kbench  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


# A host array that speaks DLPack, built with ctypes: the module's reading of tensor-likes
# (src/python/array_view.cpp) is tested without NumPy or a GPU. The structs are dlpack.h's.
class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


capsule_new = ctypes.pythonapi.PyCapsule_New
capsule_new.restype = ctypes.py_object
capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]

FLOAT, INT, BFLOAT = 2, 0, 4  # DLPack type codes


class HostArray:
    """values (row-major over shape) as float64, float32, float16 or bfloat16 ('d', 'f', 'e', 'bf16'),
    or int32 ('i'); strides in elements (None: row-major); offset: the first element's index."""

    def __init__(self, values, kind="d", shape=None, strides=None, offset=0):
        if kind == "bf16":  # bfloat16: the high half of a float32, truncated (the test values are exact)
            raw = b"".join(struct.pack("<f", v)[2:] for v in values)
            code, bits = BFLOAT, 16
        else:
            raw = struct.pack("<%d%s" % (len(values), kind), *values)
            code, bits = (INT, 32) if kind == "i" else (FLOAT, 8 * struct.calcsize(kind))
        self.buffer = ctypes.create_string_buffer(raw, len(raw))
        shape = list(shape or [len(values)])
        self.shape = (ctypes.c_int64 * len(shape))(*shape)
        self.strides = (ctypes.c_int64 * len(shape))(*strides) if strides else None
        tensor = DLTensor(ctypes.addressof(self.buffer), DLDevice(1, 0), len(shape), DLDataType(code, bits, 1),
                          self.shape, self.strides, offset * bits // 8)
        self.managed = DLManagedTensor(tensor, None, None)
        self.name = ctypes.create_string_buffer(b"dltensor")

    def __dlpack__(self, stream=None):
        return capsule_new(ctypes.addressof(self.managed), ctypes.addressof(self.name), None)


# What the documented keywords of kbench.time are (docs/python.md lists the same).
TIME_KEYWORDS = ["stream", "op", "dtype", "shape", "bytes", "flops", "inputs", "reference", "atol", "rtol",
                 "params", "cache", "timer", "visits", "samples", "seed", "clock_floor", "device", "variant",
                 "baseline", "experiment", "out", "tag", "tool", "settings"]
# kbench.time_cases's: the run's options (a case's own go in its dict).
TIME_CASES_KEYWORDS = ["stream", "cache", "timer", "visits", "samples", "seed", "clock_floor", "device",
                       "experiment", "out", "tag", "tool", "settings"]


def noop():
    return None


def valid(**changes):
    """A call's keyword arguments that pass every rule, with `changes` (None deletes one)."""
    kwargs = dict(stream=12345, op="add", dtype="float32", shape=[1024], bytes=3 * 4 * 1024)
    for key, value in changes.items():
        if value is None:
            kwargs.pop(key, None)
        else:
            kwargs[key] = value
    return kwargs


class Stream:  # an object with a handle in .cuda_stream, as torch.cuda.Stream has
    cuda_stream = 777


class Api(unittest.TestCase):
    def test_docstrings_give_the_signatures(self):
        self.assertIn("kbench.time(fn, *, stream, op, dtype, shape, bytes", kbench.__doc__)
        first = kbench.time.__doc__.splitlines()[0]
        self.assertTrue(first.startswith("time(fn, *, stream, op, dtype, shape, bytes, flops=0"), first)
        for keyword in TIME_KEYWORDS:
            self.assertIn(keyword + ("=" if keyword not in ("stream", "op", "dtype", "shape", "bytes") else ""),
                          first, keyword)
            self.assertRegex(kbench.time.__doc__, r"\n%s\b|, %s\b|\b%s\s" % (keyword, keyword, keyword))
        first = kbench.time_cases.__doc__.splitlines()[0]
        self.assertTrue(first.startswith("time_cases(cases, *, stream, cache='cold'"), first)
        for keyword in TIME_CASES_KEYWORDS:
            self.assertIn(keyword, first, keyword)
        self.assertIn("kbench.time_cases(cases", kbench.__doc__)
        self.assertTrue(kbench.read_sweep_config.__doc__.startswith("read_sweep_config(path)"))
        self.assertTrue(kbench.plan.__doc__.startswith("plan(config, *, ops=None, dtypes=None, cache=None"))
        self.assertIn("kbench.plan(config", kbench.__doc__)
        self.assertTrue(kbench.compare.__doc__.startswith("compare(output, reference, *, atol=0, rtol=0"))
        self.assertTrue(kbench.validate_result.__doc__.startswith("validate_result(result)"))

    def test_exceptions_and_constants(self):
        self.assertTrue(issubclass(kbench.CheckError, RuntimeError))
        self.assertEqual(kbench.constants["schema"], "kbench/result/v1")
        self.assertEqual(kbench.constants["graph_launches_max"], 500)
        self.assertGreater(kbench.constants["clock_floor"], 0)


def assert_one_line_error(test, call, prefix, *fragments):
    """call() raises ValueError with one line that starts with `prefix` and holds every fragment;
    returns the line."""
    with test.assertRaises(ValueError) as caught:
        call()
    message = str(caught.exception)
    test.assertNotIn("\n", message)
    test.assertTrue(message.startswith(prefix), message)
    for fragment in fragments:
        test.assertIn(fragment, message)
    return message


class Arguments(unittest.TestCase):
    def assert_rejected(self, fn, kwargs, *fragments):
        assert_one_line_error(self, lambda: kbench.time(fn, **kwargs), "kbench.time: ", *fragments)

    def test_every_rule(self):
        cases = [
            ("fn", 5, valid(), ["fn must be a callable", "got 5"]),
            ("fn {}", {}, valid(), ["fn must be a callable or a non-empty dict"]),
            ("fn dict value", {"a": 3}, valid(), ["fn['a'] must be a callable"]),
            ("stream missing", noop, valid(stream=None), ["stream must be the caller's CUDA stream"]),
            ("stream text", noop, valid(stream="0"), ["stream must be", "got '0'"]),
            ("stream negative", noop, valid(stream=-1), ["stream must be", "got -1"]),
            ("op missing", noop, valid(op=None), ["op must be a string"]),
            ("op empty", noop, valid(op=""), ["op must be a non-empty printable string"]),
            ("op control", noop, valid(op="a\x1bb"), ["op must be a non-empty printable string"]),
            ("dtype", noop, valid(dtype="float64"), ["dtype must be 'float32', 'float16' or 'bfloat16'"]),
            ("shape empty", noop, valid(shape=[]), ["shape must be a list of dimensions"]),
            ("shape negative", noop, valid(shape=[4, -1]), ["shape must be", "got [4, -1]"]),
            ("shape text", noop, valid(shape="4x4"), ["shape must be"]),
            ("shape float", noop, valid(shape=[1.5]), ["shape must be"]),
            ("bytes missing", noop, valid(bytes=None), ["bytes must be a number from 0 up, got None"]),
            ("bytes negative", noop, valid(bytes=-1), ["bytes must be a number from 0 up"]),
            ("bytes nan", noop, valid(bytes=float("nan")), ["bytes must be", "nan"]),
            ("bytes bool", noop, valid(bytes=True), ["bytes must be", "True"]),
            ("flops", noop, valid(flops="many"), ["flops must be a number"]),
            ("atol", noop, valid(atol=-1e-3), ["atol must be a number from 0 up"]),
            ("rtol", noop, valid(rtol=float("inf")), ["rtol must be"]),
            ("atol list empty", noop, valid(atol=[]), ["atol must be a number from 0 up, or a list of them"]),
            ("atol list negative", noop, valid(atol=[1e-3, -1]), ["atol must be", "got [0.001, -1]"]),
            ("atol list text", noop, valid(atol=[1e-3, "x"]), ["atol must be"]),
            ("rtol list length", noop, valid(atol=[0, 0], rtol=[0, 0, 0]), ["rtol must be as long a list as atol (2"]),
            ("params list", noop, valid(params=[1]), ["params must be a dict of the op's parameters"]),
            ("params text value", noop, valid(params={"eps": "small"}), ["params must be"]),
            ("params nan", noop, valid(params={"eps": float("nan")}), ["params must be"]),
            ("tag", noop, valid(tag="Torch"), ["tag must be a name of lowercase letters"]),
            ("tool", noop, valid(tool=""), ["tool must be a non-empty printable string"]),
            ("reference without tolerance", noop, valid(reference=noop), ["atol or rtol must be given with a reference"]),
            ("inputs", noop, valid(inputs=[1, 2]), ["inputs must be a callable"]),
            ("cache", noop, valid(cache="hot"), ["cache must be one of 'cold' 'warm', 'both'", "'hot'"]),
            ("cache empty", noop, valid(cache=[]), ["cache must be"]),
            ("timer", noop, valid(timer=["events", "nvtx"]), ["timer must be one of 'events' 'graph' 'cupti', 'all'"]),
            ("visits zero", noop, valid(visits=0), ["visits must be a whole number from 1 to 100000", "got 0"]),
            ("visits float", noop, valid(visits=2.5), ["visits must be a whole number"]),
            ("samples", noop, valid(samples=10 ** 6), ["samples must be a whole number from 1 to 100000"]),
            ("seed negative", noop, valid(seed=-1), ["seed must be a whole number from 0 to 9007199254740991"]),
            ("seed huge", noop, valid(seed=2 ** 53), ["seed must be"]),
            ("seed beyond 64 bits", noop, valid(seed=2 ** 70), ["seed must be"]),
            ("clock_floor", noop, valid(clock_floor=1.5), ["clock_floor must be a number from 0 to 1"]),
            ("device", noop, valid(device=-1), ["device must be a whole number from 0"]),
            ("variant", noop, valid(variant=""), ["variant must be a non-empty printable string"]),
            ("variant with dict", {"a": noop}, valid(variant="b"), ["variant must be left out when fn is a dict"]),
            ("baseline text", noop, valid(baseline="yes"), ["baseline must be True or False"]),
            ("baseline not in dict", {"a": noop}, valid(baseline="b"), ["baseline must be the names of the dict's"]),
            ("experiment", noop, valid(experiment="My Run"), ["experiment must be a name of lowercase letters"]),
            ("out", noop, valid(out=5), ["out must be a folder path"]),
            ("settings list", noop, valid(settings=[1]), ["settings must be a dict of JSON values"]),
            ("settings not JSON", noop, valid(settings={"x": {1, 2}}), ["settings must be a dict of JSON values"]),
            ("unknown", noop, valid(visit=3), ["unknown argument 'visit'"]),
            ("graph on the legacy stream", noop, valid(stream=0, timer="graph"),
             ["graph timer captures the stream", "legacy default stream (handle 0)"]),
            ("graph on cudaStreamLegacy", noop, valid(stream=1, timer="all"), ["legacy default stream (handle 1)"]),
        ]
        for name, fn, kwargs, fragments in cases:
            with self.subTest(name):
                self.assert_rejected(fn, kwargs, *fragments)

    def test_fn_is_required(self):
        with self.assertRaises(TypeError):
            kbench.time(stream=0)


def case(**changes):
    """One case of kbench.time_cases that passes every rule, with `changes` (None deletes one)."""
    c = dict(fn=noop, op="add", dtype="float32", shape=[1024], bytes=3 * 4 * 1024)
    for key, value in changes.items():
        if value is None:
            c.pop(key, None)
        else:
            c[key] = value
    return c


class TimeCasesArguments(unittest.TestCase):
    def assert_rejected(self, cases, kwargs, *fragments):
        assert_one_line_error(self, lambda: kbench.time_cases(cases, **kwargs), "kbench.time_cases: ", *fragments)

    def test_every_rule(self):
        run = dict(stream=12345)
        rules = [
            ("cases not a list", case(), run, ["cases must be a non-empty list of dicts"]),
            ("cases empty", [], run, ["cases must be a non-empty list of dicts"]),
            ("a case not a dict", [case(), noop], run, ["cases[1] must be a dict"]),
            ("a case without fn", [case(fn=None)], run, ["cases[0]: fn must be a callable"]),
            ("a case's unknown key", [case(), case(shape=[2048], visit=3)], run, ["cases[1]: unknown key 'visit'"]),
            ("a run option in a case", [case(visits=3)], run, ["cases[0]: unknown key 'visits'", "give it to time_cases once"]),
            ("a case's key for the run", [case()], dict(run, op="add"), ["'op' is a case's own argument"]),
            ("an unknown argument", [case()], dict(run, visit=3), ["unknown argument 'visit'"]),
            ("a bad case's bytes", [case(), case(shape=[2048], bytes=-1)], run, ["cases[1]: bytes must be a number from 0 up"]),
            ("a bad case's atol", [case(reference=noop, atol=[1, -1])], run, ["cases[0]: atol must be"]),
            ("reference without tolerance", [case(reference=noop)], run, ["cases[0]: atol or rtol must be given"]),
            ("the same case twice", [case(), case(fn={"b": noop})], run,
             ["cases[1]: the same op, dtype, shape and params as cases[0]"]),
            ("a bad run option", [case()], dict(run, visits=0), ["cases[0]: visits must be a whole number"]),
            ("no stream", [case()], {}, ["cases[0]: stream must be the caller's CUDA stream"]),
            ("graph on the legacy stream", [case()], dict(stream=0, timer="graph"), ["legacy default stream"]),
        ]
        for name, cases, kwargs, fragments in rules:
            with self.subTest(name):
                self.assert_rejected(cases, kwargs, *fragments)

    def test_cases_differing_in_params_alone_are_two(self):
        # an op's parameters tell its cases apart (rmsnorm_backward with and without dh): no ValueError
        with self.assertRaises(RuntimeError):
            kbench.time_cases([case(params={"dh": 0}), case(params={"dh": 1})], stream=12345)

    def test_cases_is_required(self):
        with self.assertRaises(TypeError):
            kbench.time_cases(stream=0)


class WithoutGpu(unittest.TestCase):
    def assert_no_device(self, fn, kwargs):
        with self.assertRaises(RuntimeError) as caught:
            kbench.time(fn, **kwargs)
        self.assertNotIsInstance(caught.exception, kbench.CheckError)
        message = str(caught.exception)
        self.assertTrue(message.startswith("kbench.time needs a CUDA device and none is visible ("), message)
        self.assertNotIn("\n", message)

    def test_timing_asks_for_a_gpu(self):
        called = []
        self.assert_no_device(lambda: called.append(1), valid())
        # every documented option passes its checks and still ends at the device
        self.assert_no_device({"a": noop, "b": noop}, valid(stream=Stream(), baseline=["b"], cache="both",
                                                           timer="all", visits=2, samples=1, seed=7, clock_floor=0,
                                                           inputs=lambda: (), reference=noop, atol=1e-6, rtol=0,
                                                           flops=10, device=0, experiment="py-test", out="/tmp",
                                                           settings={"why": "test"}))
        self.assertEqual(called, [], "the callable ran before a device was found")

    def test_timing_cases_asks_for_a_gpu(self):
        called = []
        cases = [case(fn=lambda: called.append(1)),
                 case(fn={"a": noop, "b": noop}, op="rmsnorm", shape=[4, 8], baseline="b", params={"eps": 1e-6},
                      inputs=lambda: (), reference=noop, atol=[0, 1e-3], rtol=2.0 ** -8, flops=1)]
        with self.assertRaises(RuntimeError) as caught:
            kbench.time_cases(cases, stream=Stream(), cache="both", timer="all", visits=2, samples=1, seed=7,
                              clock_floor=0, device=0, experiment="py-test", out="/tmp", tag="torch",
                              tool="tests/cpu/test_python_module.py", settings={"why": "test"})
        self.assertIn("needs a CUDA device and none is visible (", str(caught.exception))
        self.assertEqual(called, [], "a callable ran before a device was found")


class Compare(unittest.TestCase):
    def test_passing_and_failing(self):
        ref = [i / 7 for i in range(1000)]
        got = HostArray(ref, "f")  # rounded to float32: within 2^-24 relative
        ok = kbench.compare(got, HostArray(ref), rtol=2.0 ** -24)
        self.assertTrue(ok["passed"], ok)
        self.assertEqual(ok["detail"], "")
        self.assertGreater(ok["max_err"], 0)
        self.assertLessEqual(ok["max_err"], ok["tolerance"])
        off = kbench.compare(got, HostArray(ref), rtol=2.0 ** -30)
        self.assertFalse(off["passed"])
        self.assertRegex(off["detail"], r"^output 0 element \d+: got ")
        bad = list(ref)
        bad[417] += 0.01
        result = kbench.compare(HostArray(bad), HostArray(ref), atol=1e-6)
        self.assertFalse(result["passed"])
        self.assertIn("output 0 element 417: got 59.5814", result["detail"])

    def test_sixteen_bit_types(self):
        values = [0.5, -1.25, 3.0, 1024.0]
        for kind in ("e", "bf16"):
            with self.subTest(kind):
                self.assertTrue(kbench.compare(HostArray(values, kind), HostArray(values), atol=0)["passed"])
                wrong = kbench.compare(HostArray(values, kind), HostArray(values[::-1]), atol=0)
                self.assertIn("element 0: got 0.5, expected 1024", wrong["detail"])

    def test_nan_where_the_reference_is_finite_fails(self):
        got = HostArray([1.0, 1.0, 1.0, float("nan")], "e")
        result = kbench.compare(got, HostArray([1.0] * 4), atol=1, rtol=1)
        self.assertFalse(result["passed"])
        self.assertIn("element 3: got nan", result["detail"])
        self.assertIsNone(result["max_err"])  # infinity, which JSON writes as null
        both_nan = kbench.compare(got, HostArray([1.0, 1.0, 1.0, float("nan")]), atol=0)
        self.assertTrue(both_nan["passed"], both_nan)

    def test_strides_and_tuples(self):
        ref = HostArray([float(i) for i in range(12)], shape=[3, 4])
        # the same 3x4 values stored column by column
        column_major = HostArray([float(r * 4 + c) for c in range(4) for r in range(3)], shape=[3, 4], strides=[1, 3])
        self.assertTrue(kbench.compare(column_major, ref, atol=0)["passed"])
        # rows in reverse order: a negative row stride from the last row
        reversed_rows = HostArray([float(i) for i in range(12)], shape=[3, 4], strides=[-4, 1], offset=8)
        result = kbench.compare(reversed_rows, ref, atol=0)
        self.assertFalse(result["passed"])
        self.assertIn("element 0: got 8, expected 0", result["detail"])
        self.assertTrue(kbench.compare((ref, column_major), [ref, ref], atol=0)["passed"])

    def test_mismatches_are_value_errors(self):
        three, four = HostArray([1.0] * 3), HostArray([1.0] * 4)
        with self.assertRaisesRegex(ValueError, r"output 0 has shape \[3\], the reference \[4\]"):
            kbench.compare(three, four)
        with self.assertRaisesRegex(ValueError, r"1 output\(s\), the reference has 2"):
            kbench.compare(three, (three, three))
        with self.assertRaisesRegex(ValueError, "int32|not one the check compares"):
            kbench.compare(HostArray([1, 2, 3], "i"), three)
        with self.assertRaisesRegex(ValueError, "^the output is not a tensor-like object: it has neither __dlpack__"):
            kbench.compare(object(), three)
        with self.assertRaisesRegex(ValueError, r"^the output \[0\] is not a tensor-like object"):
            kbench.compare([1.0, 2.0], three)
        with self.assertRaisesRegex(ValueError, "kbench.compare: atol must be a number from 0 up"):
            kbench.compare(three, three, atol=-1)
        with self.assertRaisesRegex(ValueError, "kbench.compare: unknown argument 'tol'"):
            kbench.compare(three, three, tol=1)


class ReadSweepConfig(unittest.TestCase):
    """kbench run's own config reader: what the PyTorch script reads configs with."""

    def test_a_shipped_config(self):
        path = os.path.join(ROOT, "configs", "side_by_side_steps.json")
        with open(path) as f:
            raw = json.load(f)
        config = kbench.read_sweep_config(path)
        self.assertEqual(sorted(config), ["cache", "cases", "description", "experiment", "samples", "seed", "timer",
                                          "visits"])
        self.assertEqual(config["experiment"], raw.get("experiment", "sweep"))
        self.assertEqual(config["visits"], raw["visits"])
        self.assertEqual([c["op"] for c in config["cases"]], [c["op"] for c in raw["cases"]])
        for got, given in zip(config["cases"], raw["cases"]):
            self.assertEqual(got["shapes"], given["shapes"])
            self.assertEqual(got["dtypes"], given.get("dtypes", ["float32"]))
            self.assertEqual(got["params"], given.get("params", {}))

    def test_modes_are_expanded(self):
        with open(os.path.join(ROOT, "tests", "data", "configs", "torch_dry_run.json")) as f:
            raw = json.load(f)
        import tempfile
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "c.json")
            for cache, timer, caches, timers in (("both", "all", ["cold", "warm"], ["events", "graph", "cupti"]),
                                                 (["warm"], ["graph", "cupti"], ["warm"], ["graph", "cupti"])):
                with open(path, "w") as f:
                    json.dump(dict(raw, cache=cache, timer=timer), f)
                config = kbench.read_sweep_config(path)
                self.assertEqual((config["cache"], config["timer"]), (caches, timers))

    def test_bad_configs_are_one_line(self):
        for name, fragment in (("torch_bad_shape.json", "'/cases/0/shapes/0/1' must be a dimension"),
                               ("torch_not_json.json", "is not valid JSON"),
                               ("no_such_config.json", "cannot read config")):
            with self.subTest(name):
                path = os.path.join(ROOT, "tests", "data", "configs", name)
                message = assert_one_line_error(self, lambda: kbench.read_sweep_config(path), "", fragment)
                self.assertTrue(message.startswith("config '") or "cannot read config" in message, message)
        with self.assertRaisesRegex(ValueError, "path must be a file path"):
            kbench.read_sweep_config(3)


class Plan(unittest.TestCase):
    """kbench's own plan of a config, from the binary beside the module: what the PyTorch script
    times. That its bytes, flops and parameters are the registry's ops' own is held by the C++ test
    TorchScript.ModulePlanCountsAsKbenchsOps, which has the registry at hand."""

    def test_a_shipped_config_with_overrides(self):
        path = os.path.join(ROOT, "configs", "side_by_side_steps.json")
        plan = kbench.plan(path, ops=["rmsnorm_step"], dtypes=["float16"], cache="both", timer="all", visits=5,
                           samples=2, seed=0)
        self.assertEqual(plan["schema"], "kbench/plan/v1")
        self.assertEqual((plan["cache"], plan["timer"]), (["cold", "warm"], ["events", "graph", "cupti"]))
        self.assertEqual((plan["visits"], plan["samples"], plan["seed"]), (5, 2, 0))
        self.assertTrue(plan["cases"])
        for case in plan["cases"]:
            self.assertEqual((case["op"], case["dtype"]), ("rmsnorm_step", "float16"))
            self.assertEqual(case["params"], {"eps": 1e-6, "dh": 1, "frozen": 0})  # every parameter, defaults in
            rows, cols = case["shape"]  # rmsnorm then its backward with dh: (4 rows + 1) cols + (4 rows + 2) cols
            self.assertEqual(case["bytes"], ((4 * rows + 1) * cols + (4 * rows + 2) * cols) * 2)
            self.assertIsInstance(case["bytes"], int)

    def test_no_roofline_cases(self):
        plan = kbench.plan(os.path.join(ROOT, "tests", "data", "configs", "torch_dry_run.json"))
        self.assertNotIn("stream", [c["op"] for c in plan["cases"]])
        self.assertEqual([c["shape"] for c in plan["cases"] if c["op"] == "copy"], [[1048576]])

    def test_refusals_are_kbenchs_one_line(self):
        data = os.path.join(ROOT, "tests", "data", "configs")
        for name, fragment in (("torch_bad_shape.json", "'/cases/0/shapes/0/1' must be a dimension"),
                               ("no_such_config.json", "cannot read config")):
            with self.subTest(name):
                message = assert_one_line_error(self, lambda: kbench.plan(os.path.join(data, name)), "", fragment)
                self.assertFalse(message.startswith("kbench: "), message)  # kbench's prefix taken off
        dry_run = os.path.join(data, "torch_dry_run.json")
        for kwargs, fragment in ((dict(visits=0), "--visits"), (dict(ops=["not_an_op"]), "not_an_op"),
                                 (dict(ops="softmax"), "ops must be a list"), (dict(visit=3), "unknown argument 'visit'"),
                                 (dict(seed=1.5), "seed must be a string or a whole number")):
            with self.subTest(kwargs):
                assert_one_line_error(self, lambda: kbench.plan(dry_run, **kwargs), "", fragment)
        with self.assertRaisesRegex(ValueError, "config must be a file path"):
            kbench.plan(3)

    def test_a_binary_that_cannot_run_is_one_line(self):
        """A `kbench` on PATH that the system cannot execute (the module copied where no binary
        sits beside it): a ValueError of one line, not the OSError of subprocess."""
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copy(kbench.__file__, tmp)
            fake = os.path.join(tmp, "bin", "kbench")
            os.mkdir(os.path.dirname(fake))
            with open(fake, "w") as f:
                f.write("not a program\n")  # no #! line: exec fails with ENOEXEC
            os.chmod(fake, 0o755)
            code = ("import kbench\ntry:\n    kbench.plan('c.json')\nexcept ValueError as e:\n    print(e)\n")
            env = dict(os.environ, PYTHONPATH=tmp, PATH=os.path.dirname(fake))
            done = subprocess.run([sys.executable, "-c", code], cwd=tmp, env=env, capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertRegex(done.stdout, r"^kbench.plan: cannot run .*kbench: .*\n$")


class ValidateResult(unittest.TestCase):
    def committed_result(self):
        for path in sorted(glob.glob(os.path.join(ROOT, "results", "*", "*.json"))):
            with open(path) as f:
                if json.load(f)["records"]:
                    return path
        self.fail("no committed result with records to validate")

    def test_a_committed_result_passes_as_file_and_dict(self):
        path = self.committed_result()
        kbench.validate_result(path)
        with open(path) as f:
            kbench.validate_result(json.load(f))

    def test_problems_are_one_line_naming_the_pointer(self):
        with open(self.committed_result()) as f:
            result = json.load(f)
        result["records"][0]["timer"] = "stopwatch"
        with self.assertRaisesRegex(ValueError, r"^the result: '/records/0/timer' must be events, graph, cupti or none"):
            kbench.validate_result(result)
        del result["records"]
        with self.assertRaisesRegex(ValueError, "records"):
            kbench.validate_result(result)
        with self.assertRaisesRegex(ValueError, "must be a dict or a file path"):
            kbench.validate_result(3)
        with self.assertRaises(ValueError):
            kbench.validate_result("/nonexistent/result.json")


if __name__ == "__main__":
    sys.exit(0 if unittest.main(exit=False, verbosity=2).result.wasSuccessful() else 1)
