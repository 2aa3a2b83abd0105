"""The Python binding (python/inferbench) on CPU callables, with Debian's
python3 alone. Run by ctest (tests/CMakeLists.txt) with INFERBENCH_LIBRARY
(the built libinferbench.so), IB (the program) and IB_CPU_SPIN (the
cpu_spin.c plugin) set, and python/ on PYTHONPATH."""

import contextlib
import importlib.util
import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import types
import time
import unittest

import inferbench
from inferbench import _lib

IB = os.environ["IB"]
SPIN = os.environ["IB_CPU_SPIN"]
FAST = dict(runs=60, warmup_runs=5, warmup_ms=20, warmup_max_ms=300)
# A warm-up of exactly 5 runs: the calls are the cold one, 5, then 60 timed.
EXACT = dict(runs=60, warmup_runs=5, warmup_ms=0, steady=False)
FIRST_TIMED_CALL = 1 + 5
HERE = os.path.dirname(os.path.abspath(__file__))


def spin_fn(us):
    spin = ctypes.CDLL(SPIN).ib_test_spin_us
    spin.argtypes, spin.restype = [ctypes.c_double], None
    return lambda: spin(us)


class Raises:
    """A callable that raises exc on its call number `at` (0-based)."""

    def __init__(self, at, exc):
        self.at, self.exc, self.calls = at, exc, 0

    def __call__(self, *args):
        self.calls += 1
        if self.calls - 1 == self.at:
            raise self.exc


class Tmp(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(dir=os.environ.get("IB_TEST_TMP"))

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def path(self, name):
        return os.path.join(self.tmp, name)

    def load(self, name):
        with open(self.path(name)) as f:
            return f.read()


class Agreement(Tmp):
    US = 500.0  # the busy-wait of each run
    RUNS = 100

    def measure_both(self):
        """The same spin timed by the binding and by the C program; the
        binding's calls of the callable counted."""
        spin, self.calls = spin_fn(self.US), 0

        def counted():
            self.calls += 1
            spin()

        r = inferbench.latency(counted, name="spin", runs=self.RUNS, warmup_runs=5, warmup_ms=20,
                               warmup_max_ms=300)
        r.save_json(self.path("py.json"))
        c = subprocess.run([IB, "latency", "--backend", "plugin:" + SPIN, "--option", f"us={self.US:g}", "--device",
                            "cpu", "--runs", str(self.RUNS), "--warmup-runs", "5", "--warmup-ms", "20",
                            "--warmup-max-ms", "300", "--json", self.path("c.json")], capture_output=True, text=True)
        self.assertEqual(c.returncode, 0, c.stderr)
        return json.loads(self.load("c.json")), json.loads(self.load("py.json"))

    def test_same_work_same_figures_as_the_c_program(self):
        # The same method on the same work: one call of the callable a run
        # (cold, warm-up, timed: counted exactly), both at least the spin.
        # How close their fastest runs are (a few us on a quiet host) is
        # the machine's load as much as the binding's: printed, not judged
        # (it was a 30 us bound until issue 28: the fastest of 100 was once
        # 22 us late on this loaded machine).
        cdoc, pydoc = self.measure_both()
        cmin, pymin = cdoc["latency_ms"]["min"], pydoc["latency_ms"]["min"]
        print(f"\n  fastest of {self.RUNS} spins of {self.US:g} us: C program {cmin * 1000:.1f} us, "
              f"binding {pymin * 1000:.1f} us", file=sys.stderr)
        self.assertEqual(self.calls, 1 + pydoc["warmup"]["runs"] + pydoc["latency_ms"]["n"])
        for doc in (cdoc, pydoc):
            self.assertEqual(doc["schema"], "inferbench.latency/2")
            self.assertEqual(doc["timing"], "host-clock")
            self.assertEqual(doc["latency_ms"]["n"], self.RUNS)
            self.assertGreaterEqual(doc["latency_ms"]["min"], self.US / 1000)
            self.assertGreaterEqual(doc["latency_ms"]["p50"], self.US / 1000)
        self.assertGreater(pydoc["binding"]["host_overhead_us"], 0)
        # compare reads the Python result as one of its own.
        cmp = subprocess.run([IB, "compare", self.path("c.json"), self.path("py.json"), "--threshold", "0.05"],
                             capture_output=True, text=True)
        self.assertEqual(cmp.returncode, 0, cmp.stderr)
        self.assertRegex(cmp.stdout, "no change|faster|slower|inconclusive")

    def test_statistics_are_the_librarys_of_the_samples(self):
        r = inferbench.latency(spin_fn(300.0), **FAST)
        samples = sorted(r.data["samples"]["host_ms"])
        self.assertEqual(len(samples), 60)
        self.assertAlmostEqual(r.latency_ms["min"], samples[0], places=9)
        self.assertAlmostEqual(r.latency_ms["p50"], (samples[29] + samples[30]) / 2, places=9)
        self.assertGreaterEqual(r.latency_ms["min"], 0.3)

    def test_reports(self):
        r = inferbench.latency(spin_fn(100.0), name="spin", **FAST)
        r.save_html(self.path("r.html"))
        self.assertIn("<svg", self.load("r.html"))
        self.assertRegex(r.report(), r"(?m)^inferbench latency: spin, batch 1, python$")
        # The runtime is its own provider: named once; it states no options: no line of them.
        self.assertNotIn("python python", r.report())
        self.assertNotIn("runtime options:", r.report())
        self.assertRegex(r.report(), r"(?m)^binding: python .* us a run through the binding")


class Throughput(Tmp):
    def test_given_batches_and_make_batch(self):
        made, seen = [], []
        spin = spin_fn(50.0)

        def make_batch(n):
            made.append(n)
            return n

        def fn(b):
            seen.append(b)
            for _ in range(b):
                spin()

        r = inferbench.throughput(fn, batches=[1, 4], make_batch=make_batch, runs=20, warmup_runs=3, warmup_ms=10)
        curve = r.data["curve"]
        self.assertEqual([p["batch"] for p in curve], [1, 4])
        self.assertEqual(sorted(set(made)), [1, 4])
        self.assertTrue(all(p["status"] == "ok" for p in curve))
        # Four spins take four times one. Not their ratio (the binding's
        # call, tens of us on a loaded machine, is in both): what holds at
        # any speed. A spin waits 50 us on the wall clock, so a run at 4
        # takes at least 200 us and a slower machine only adds to both.
        # (That the fastest at 1 is below the fastest at 4 held but for all
        # 20 runs at 1 preempted: dropped in issue 28, a load-dependent
        # verdict; the calls below check the batches exactly.)
        fastest = [p["latency_ms"]["min"] for p in curve]
        self.assertGreaterEqual(fastest[0], 0.05, fastest)
        self.assertGreaterEqual(fastest[1], 4 * 0.05, fastest)
        for p in curve:
            self.assertLessEqual(p["items_per_s"], 1000 / 0.05, p)  # a spin an input: 20000/s at most
        # Every call at a batch was given that batch's input: the calls at
        # 1 (its first run, warm-up, timed runs...), then those at 4.
        at_1 = seen.index(4) if 4 in seen else len(seen)
        self.assertEqual(seen, [1] * at_1 + [4] * (len(seen) - at_1))
        for p, calls in zip(curve, (at_1, len(seen) - at_1)):
            self.assertGreaterEqual(calls, 1 + p["warmup_runs"] + p["latency_ms"]["n"], p)

    def test_search_stops_at_memory(self):
        def make_batch(n):
            if n > 8:
                raise MemoryError(f"{n} does not fit")
            return n

        r = inferbench.throughput(lambda b: None, make_batch=make_batch, max_batch=64, runs=10, warmup_runs=2,
                                  warmup_ms=5)
        self.assertTrue(r.data["search"]["searched"])
        self.assertEqual(r.data["search"]["largest_fitting"], 8)


class Pitfalls(Tmp):
    def test_cpu_rows(self):
        r = inferbench.pitfalls(spin_fn(200.0), runs=30, warmup_runs=3, warmup_ms=10)
        applies = {row["kind"]: row["applies"] for row in r.data["rows"]}
        self.assertTrue(applies["correct"] and applies["single_sample"])
        self.assertFalse(applies["host_no_sync"] or applies["no_warmup"])


class Energy(Tmp):
    """Result.energy and its figures (docs/energy.md): on documents the C
    program wrote on the fake backend's scripted counter (100 ms steps,
    60 W idle, 300 W running: the binding cannot reach the fake, whose
    counter is its own, but its results are the same documents), and on
    the binding's own measurements (a CPU callable: no GPU counter)."""

    COUNTER = ["--backend", "fake", "--option", "energy_step_ms=100", "--option", "idle_w=60", "--quiet"]

    def c_result(self, kind, *args):
        path = self.path(kind + ".json")
        c = subprocess.run([IB, kind, *self.COUNTER, *args, "--json", path], capture_output=True, text=True)
        self.assertEqual(c.returncode, 0, c.stderr)
        return inferbench.Result({"generate": "generation"}.get(kind, kind), self.load(kind + ".json"), c.stdout,
                                 None, {})

    def test_the_figures_of_the_scripted_counter(self):
        r = self.c_result("latency", "--option", "busy_w=300")
        self.assertEqual(r.energy["source"], "counter")
        self.assertAlmostEqual(r.joules_per_item, 0.3, places=12)  # 300 W x 1 ms runs
        self.assertAlmostEqual(r.items_per_joule, 1 / 0.3, places=9)
        self.assertAlmostEqual(r.energy["bound"], 1 / 400 + 1e-3 / 120, places=15)
        self.assertEqual(r.energy["idle_power_w"], 60)
        self.assertRegex(repr(r), r" 0\.3 J/input>$")
        self.assertIsNone(r.cpu_energy["source"])  # the fake counts its own: RAPL not read
        t = self.c_result("throughput", "--option", "item_us=100", "--option", "busy_w=100", "--option",
                          "busy_w_per_item=10", "--batches", "1,8,64")
        self.assertEqual(sorted(t.energy_by_batch), [1, 8, 64])
        self.assertEqual(t.most_efficient["batch"], 8)  # not the fastest, 64
        self.assertEqual(t.data["peak"]["batch"], 64)
        self.assertIs(t.energy, t.energy_by_batch[64])
        self.assertEqual(t.items_per_joule, t.data["curve"][2]["energy"]["items_per_joule"])
        self.assertEqual(t.most_efficient["items_per_joule"], t.energy_by_batch[8]["items_per_joule"])
        p = self.c_result("pitfalls", "--option", "busy_w=300")
        self.assertIs(p.energy, p.data["energy"]["correct"])
        self.assertAlmostEqual(p.joules_per_item, 0.3, places=12)
        g = self.c_result("generate", "m", "--prompt-tokens", "64", "--new-tokens", "16", "--runs", "10",
                          "--option", "busy_w=100", "--option", "pos_ns=0")
        self.assertIs(g.energy, g.data["decode_energy"])  # per output token
        self.assertEqual(g.energy["source"], "counter")
        self.assertEqual(g.joules_per_item, g.data["decode_energy"]["joules_per_item"])
        n = self.c_result("latency")  # busy_w 0: the counter reads nothing
        self.assertIsNone(n.energy["source"])
        self.assertIsNone(n.joules_per_item)
        self.assertIsNone(n.items_per_joule)

    def test_the_binding_measures_it(self):
        r = inferbench.latency(lambda: None, **FAST)
        self.assertIsNone(r.energy["source"])
        self.assertEqual(r.energy["note"], "a CPU workload: no GPU energy counter")
        self.assertIsNone(r.joules_per_item)
        self.assertIn(r.cpu_energy["source"], (None, "counter"))  # RAPL: readable or not on this machine
        self.assertTrue(r.cpu_energy["note"] or r.cpu_energy["joules_per_item"] > 0)
        self.assertNotIn("a CPU workload: no GPU energy counter", r.text)  # said in the JSON, not on every result
        off = inferbench.latency(lambda: None, energy=False, **FAST)
        self.assertEqual([off.energy["note"], off.cpu_energy["note"]], ["not measured (measure_energy off)"] * 2)
        t = inferbench.throughput(lambda b: None, batches=[1, 4], runs=20, warmup_runs=2, warmup_ms=0)
        self.assertEqual(sorted(t.energy_by_batch), [1, 4])
        self.assertEqual(t.energy["note"], "a CPU workload: no GPU energy counter")
        self.assertIsNone(t.most_efficient)
        t_off = inferbench.throughput(lambda b: None, batches=[1], runs=20, warmup_runs=2, warmup_ms=0, energy=False)
        self.assertEqual(t_off.energy["note"], "not measured (measure_energy off)")
        p = inferbench.pitfalls(lambda: None, runs=30, warmup_runs=2, warmup_ms=0)
        self.assertIs(p.energy, p.data["energy"]["correct"])
        self.assertIsNone(inferbench.calibrate().energy)


class Errors(Tmp):
    def test_a_raising_callable_in_warmup(self):
        fn = Raises(3, ValueError("boom"))
        with self.assertRaises(inferbench.CallableError) as cm:
            inferbench.latency(fn, **FAST)
        self.assertIsInstance(cm.exception.__cause__, ValueError)
        self.assertIn("the callable raised ValueError: boom", str(cm.exception))
        self.assertNotIn("\n", str(cm.exception))
        self.assertIsNone(cm.exception.result)
        # The library is still usable.
        r = inferbench.latency(spin_fn(100.0), **FAST)
        self.assertEqual(r.latency_ms["n"], 60)

    def test_a_raising_callable_in_the_timed_runs_keeps_what_was_measured(self):
        fn = Raises(FIRST_TIMED_CALL + 40, RuntimeError("late"))
        with self.assertRaises(inferbench.CallableError) as cm:
            inferbench.latency(fn, **EXACT)
        r = cm.exception.result
        self.assertIsNotNone(r)
        self.assertTrue(r.partial)
        self.assertEqual(r.latency_ms["n"], 40)
        self.assertEqual(r.data["stop_reason"], "runtime error")
        self.assertIn("the callable raised RuntimeError: late", str(cm.exception))

    def test_keyboard_interrupt_from_the_callable_keeps_partial_results(self):
        fn = Raises(FIRST_TIMED_CALL + 50, KeyboardInterrupt())
        with self.assertRaises(inferbench.Interrupted) as cm:
            inferbench.latency(fn, **EXACT)
        self.assertIsInstance(cm.exception, KeyboardInterrupt)
        self.assertEqual(cm.exception.result.latency_ms["n"], 50)
        self.assertTrue(cm.exception.result.partial)
        cm.exception.result.save_json(self.path("partial.json"))
        self.assertTrue(json.loads(self.load("partial.json"))["partial"])

    def test_sigint_during_a_measurement(self):
        # A real SIGINT, sent once the 10th timed call has begun (an event,
        # not a guess at how long warm-up takes: 0.6 s was one until issue
        # 28); Python raises it in the callable, at once.
        spin, calls = spin_fn(100.0), [0]

        def fn():
            calls[0] += 1
            if calls[0] == FIRST_TIMED_CALL + 10:
                os.kill(os.getpid(), signal.SIGINT)
            spin()

        with self.assertRaises(inferbench.Interrupted) as cm:
            inferbench.latency(fn, **dict(EXACT, runs=100000))
        self.assertTrue(cm.exception.result.partial)
        self.assertIn(cm.exception.result.latency_ms["n"], (9, 10))

    def test_bad_arguments(self):
        cases = [
            (lambda: inferbench.latency(42), "is not callable"),
            (lambda: inferbench.latency(lambda: None, device="tpu"), "device 'tpu'"),
            (lambda: inferbench.latency(lambda: None, runs=0), "runs=0"),
            (lambda: inferbench.throughput(lambda b: None, batches=[0]), "batches"),
            (lambda: inferbench.latency(lambda: None, device="cuda", stream="s"), "not a CUDA stream handle"),
            (lambda: inferbench.latency(lambda: None, device="cuda", stream=-1), "not a CUDA stream handle"),
        ]
        for call, words in cases:
            with self.assertRaises(inferbench.InferbenchError) as cm:
                call()
            self.assertIn(words, str(cm.exception))
            self.assertNotIn("\n", str(cm.exception))

    def test_library_not_found(self):
        env = dict(os.environ, INFERBENCH_LIBRARY=self.path("nothing.so"))
        p = subprocess.run([sys.executable, "-c", "import inferbench; inferbench.latency(lambda: None)"],
                           env=env, capture_output=True, text=True)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("inferbench._errors.InferbenchError: libinferbench.so not found", p.stderr)

    def test_a_mirror_that_disagrees_is_refused(self):
        class Short(ctypes.Structure):
            _fields_ = [("x", ctypes.c_int)]

        saved = _lib._MIRRORS["ib_config"]
        _lib._MIRRORS["ib_config"] = Short
        try:
            with self.assertRaises(inferbench.InferbenchError) as cm:
                _lib._check_mirrors(_lib.lib())
            self.assertIn("ib_config is", str(cm.exception))
        finally:
            _lib._MIRRORS["ib_config"] = saved


class OtherStream(unittest.TestCase):
    """Work queued on another stream: what the device still does once the
    timed stream is done (events on an idle stream cannot tell it)."""

    def test_work_left_after_the_timed_stream_warns(self):
        w = inferbench._other_stream_warning(0.02, 5.0)
        self.assertIn("still busy 5000.0 us after the timed stream was done (20.0 us)", w)
        self.assertIn("another stream", w)

    def test_an_idle_device_after_the_stream_does_not_warn(self):
        # The wait's own cost (tens of us) and a tenth of the stream's time
        # are allowed: the bound is the larger of 50 us and 10%.
        self.assertIsNone(inferbench._other_stream_warning(0.2, 0.05))
        self.assertIsNone(inferbench._other_stream_warning(2.0, 0.2))
        self.assertIsNotNone(inferbench._other_stream_warning(2.0, 0.21))
        self.assertIsNotNone(inferbench._other_stream_warning(0.2, 0.051))

    def test_the_probe_times_what_the_device_wait_adds(self):
        # The callable leaves 30 ms of work "elsewhere", which only the
        # device-wide wait sits through: on the stand-in's virtual clock,
        # exactly (it was a real sleep, and the stream's part under 10 ms,
        # until issue 28).
        stream = ScriptedStream()
        w = scripted_workload(lambda: setattr(stream, "device_s", 0.03), stream)
        with stream.virtual_clock():
            queued_ms, stream_ms, after_ms = w.probe_calls_ms(calls=3)
        self.assertEqual((queued_ms, stream_ms), (0, 0))
        self.assertAlmostEqual(after_ms, 30, places=9)
        self.assertIsNotNone(inferbench._other_stream_warning(stream_ms, after_ms))


class ScriptedStream:
    """A stand-in for the binding's Stream in CallableWorkload.probe_calls_ms:
    the callable sets how long the next wait on the timed stream
    (stream_s) and on the whole device (device_s) take. Inside
    virtual_clock() the waits move a virtual clock that the probe reads,
    so its figures are exact."""

    def __init__(self):
        self.stream_s = self.device_s = 0.0
        self.now_s = None  # the virtual clock; None: real sleeps

    def current(self):
        return contextlib.nullcontext()

    def _wait(self, s):
        if self.now_s is None:
            time.sleep(s)
        else:
            self.now_s += s

    @contextlib.contextmanager
    def virtual_clock(self):
        from inferbench import _backend

        self.now_s, real = 0.0, _backend.time
        _backend.time = types.SimpleNamespace(perf_counter=lambda: self.now_s)
        try:
            yield
        finally:
            _backend.time, self.now_s = real, None

    def synchronize(self):
        self._wait(self.stream_s)
        self.stream_s = 0.0

    def synchronize_device(self):
        self._wait(self.device_s)
        self.device_s = 0.0


def scripted_workload(fn, stream):
    from inferbench._backend import CallableWorkload

    w = CallableWorkload(fn, name="scripted", device="cpu")
    w.stream = stream
    return w


class HostBound(unittest.TestCase):
    """Whether the GPU waited for the host is the library's verdict (the
    calls with their launch held against them as they are: test_runner's
    host-wait tests), which the result carries as its `host_bound`
    warning; the binding adds no judgement of its own. How long a call
    takes to return is not it: a host that queues faster than the GPU runs
    keeps the GPU busy however long each call takes (issue 28: torchvision's
    EfficientNet-B0 at batch 256, a call returning after 8.0 ms of the
    11.7 ms its events read, four timing tools within 0.6%)."""

    def test_a_call_slow_to_return_is_not_called_host_bound(self):
        # On fake_torch: the call spends 8 ms in the host, the stream's
        # wait 3.7 ms more (the figures); the binding's probe sees
        # it and says nothing of the host.
        out = run_with_fake_torch(self, """
import json, time, torch
from inferbench._backend import CallableWorkload
from inferbench._result import Result
def call():
    time.sleep(0.008)
    torch.cuda.stream_wait_s = 0.0037
w = CallableWorkload(call, name="slow to return", device="cuda")
queued_ms, stream_ms, after_ms = w.probe_calls_ms(calls=3)
doc = {"timing": "device-events", "latency_ms": {"p50": 11.728}, "config": {"exclude_launch": False},
       "warnings": []}
r = Result("latency", json.dumps(doc), "", None, {"warnings": []})
inferbench._warn_after_latency(w, r)
print(json.dumps({"queued_ms": queued_ms, "stream_ms": stream_ms, "warnings": r.warnings}))
""")
        d = json.loads(out.splitlines()[-1])
        self.assertGreaterEqual(d["queued_ms"], 8.0)  # over a quarter of the median: the old rule warned
        self.assertGreaterEqual(d["stream_ms"], d["queued_ms"] + 3.7)
        self.assertEqual(d["warnings"], [])

    def test_the_library_verdict_is_passed_on(self):
        out = run_with_fake_torch(self, """
import json, torch
from inferbench._backend import CallableWorkload
from inferbench._result import Result
w = CallableWorkload(lambda: None, name="launch-bound", device="cuda")
doc = {"timing": "device-events", "latency_ms": {"p50": 5.0}, "config": {"exclude_launch": False},
       "warnings": ["host_bound"]}
r = Result("latency", json.dumps(doc), "", None, {"warnings": []})
inferbench._warn_after_latency(w, r)
print(json.dumps(r.warnings))
""")
        self.assertEqual(json.loads(out.splitlines()[-1]), ["host_bound"])


def run_with_fake_torch(test, code):
    """code run by a Python with fake_torch/ as its torch; its stdout."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.environ["PYTHONPATH"], os.path.join(HERE, "fake_torch")]))
    p = subprocess.run([sys.executable, "-c", "import inferbench, torch\n" + code], env=env,
                       capture_output=True, text=True)
    test.assertEqual(p.returncode, 0, p.stderr)
    return p.stdout


class TorchStreamPath(unittest.TestCase):
    """The CUDA path with torch, on fake_torch/ (no GPU, no torch here):
    what the binding asks of torch, up to the library's first CUDA call."""

    def run_with_fake_torch(self, code):
        return run_with_fake_torch(self, code)

    def test_the_current_stream_or_one_of_its_own_is_timed_and_made_current(self):
        out = self.run_with_fake_torch(
            "try:\n inferbench.latency(lambda: None, device='cuda', runs=5)\n"
            "except inferbench.InferbenchError as e:\n print(e.status, '|', e)\nprint(torch.log)")
        status, log = out.splitlines()
        # The legacy default stream (0) cannot be timed apart: a stream of
        # its own, after the work queued on the default one, made current.
        self.assertEqual(log, "[('wait_stream', 20480, 0), ('external', 20480), ('current', 20480)]")
        self.assertTrue(status.startswith("no such device | "), status)  # no GPU here

    def test_a_given_stream_is_used_as_it_is(self):
        out = self.run_with_fake_torch(
            "torch.cuda.current = torch._Stream(0x7000)\n"
            "try:\n inferbench.latency(lambda: None, device='cuda', runs=5)\n"
            "except inferbench.InferbenchError:\n pass\nprint(torch.log)")
        self.assertEqual(out.strip(), "[('external', 28672), ('current', 28672)]")

    def test_a_handle_that_is_not_a_stream(self):
        out = self.run_with_fake_torch(
            "try:\n inferbench.latency(lambda: None, device='cuda', stream=0xBAD)\n"
            "except inferbench.InferbenchError as e:\n print(e)")
        self.assertEqual(out.strip(), "stream 0xbad is not a CUDA stream: CUDA error: invalid resource handle")


class CudaGraph(unittest.TestCase):
    """inferbench.cuda_graph on fake_torch/: warm-up on a side stream,
    one capture, replays; and what it refuses."""

    run_with_fake_torch = TorchStreamPath.run_with_fake_torch

    def test_warmed_on_a_side_stream_captured_once_then_replayed(self):
        out = self.run_with_fake_torch(
            "def forward():\n torch.log.append(('forward', torch.cuda.capturing))\n"
            "g = inferbench.cuda_graph(forward)\ng(); g()\nprint(torch.log)\nprint(g.__qualname__)")
        log, name = out.splitlines()
        self.assertEqual(log, "[('wait_stream', 20480, 0), ('current', 20480), ('forward', False), "
                              "('forward', False), ('forward', False), ('wait_stream', 0, 20480), "
                              "('capture_begin',), ('forward', True), ('capture_end',), ('replay',), ('replay',)]")
        self.assertEqual(name, "forward (CUDA graph)")

    def test_a_callable_that_raises_or_cannot_be_captured(self):
        out = self.run_with_fake_torch(
            "def boom():\n raise ValueError('boom')\n"
            "def syncs():\n if torch.cuda.capturing:\n"
            "  raise RuntimeError('CUDA error: operation not permitted when stream is capturing')\n"
            "for fn, kw in ((boom, {}), (syncs, {}), (syncs, {'warmup_calls': 0}), (3, {})):\n"
            " try:\n  inferbench.cuda_graph(fn, **kw)\n"
            " except inferbench.InferbenchError as e:\n"
            "  print(type(e).__name__, type(e.__cause__).__name__, e.status, '|', e)")
        self.assertEqual(out.splitlines(), [
            "CallableError ValueError runtime error | the callable raised ValueError: boom (warming up for the "
            "CUDA graph)",
            "InferbenchError RuntimeError None | the callable cannot be captured in a CUDA graph: RuntimeError: "
            "CUDA error: operation not permitted when stream is capturing (a host synchronisation, a CPU tensor "
            "or another stream inside it?)",
            "InferbenchError NoneType None | warmup_calls=0: expected a whole number of at least 1",
            "InferbenchError NoneType None | 3 is not callable",
        ])

    @unittest.skipIf(importlib.util.find_spec("torch"), "torch is installed here")
    def test_without_torch(self):
        with self.assertRaisesRegex(inferbench.InferbenchError, "cuda_graph needs PyTorch with CUDA"):
            inferbench.cuda_graph(lambda: None)


class Command(Tmp):
    def run_main(self, *args):
        return subprocess.run([sys.executable, "-m", "inferbench", *args], capture_output=True, text=True)

    def test_latency_of_a_constructor(self):
        p = self.run_main("latency", os.path.join(HERE, "model.py") + ":make_model", "--input-shape", "2x3x8x8",
                          "--runs", "30", "--warmup-ms", "10", "--json", self.path("m.json"))
        self.assertEqual(p.returncode, 0, p.stderr)
        d = json.loads(self.load("m.json"))
        self.assertEqual(d["workload"]["inputs"][0]["shape"], [2, 3, 8, 8])
        self.assertEqual(d["batch"], 2)
        self.assertGreaterEqual(d["latency_ms"]["min"], 0.2)  # model.py spins 200 us a call

    def test_bad_input_is_one_line_exit_2(self):
        model = os.path.join(HERE, "model.py")
        cases = [
            (["latency", model + ":make_model", "--input-shape", "1xax3"], "--input-shape '1xax3'"),
            (["latency", model + ":nothing", "--input-shape", "1"], "has no function 'nothing'"),
            (["latency", self.path("none.py") + ":f", "--input-shape", "1"], "no such file"),
            (["latency", "no_such_module_x:f", "--input-shape", "1"], "did not load"),
            (["latency", model + ":make_model"], "needs SPEC and --input-shape"),
            (["latency", model + ":make_model", "--input-shape", "1", "--json", "/nonexistent/x.json"],
             "cannot be written"),
            (["throughput", model + ":make_model", "--input-shape", "1", "--cuda-graph"],
             "--cuda-graph: latency and pitfalls only"),
            (["latency", model + ":make_model", "--input-shape", "1", "--device", "cpu", "--cuda-graph"],
             "--cuda-graph needs the GPU"),
        ]
        for args, words in cases:
            p = self.run_main(*args)
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)
            self.assertTrue(p.stderr.startswith("inferbench: "), p.stderr)
            self.assertIn(words, p.stderr)

    def test_a_raising_model_exits_1_with_one_line(self):
        p = self.run_main("latency", os.path.join(HERE, "model.py") + ":make_failing", "--input-shape", "1")
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertEqual(p.stderr.strip(), "inferbench: the callable raised ZeroDivisionError: division by zero (at batch 1)")


if __name__ == "__main__":
    unittest.main()
