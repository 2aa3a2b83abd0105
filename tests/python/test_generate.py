"""inferbench.generate (python/inferbench/_generate.py): Python callables
measured by the library's generation method through ib_gen_callbacks, on
a scripted clock (exact figures) and on the host's, with Debian's python3
alone. Run by ctest as test_binding.py is (tests/CMakeLists.txt)."""

import importlib.util
import json
import os
import signal
import subprocess
import sys
import threading
import time
import unittest

import inferbench
from test_binding import Tmp  # a temporary folder a test

IB = os.environ["IB"]
HERE = os.path.dirname(os.path.abspath(__file__))
P, N = 64, 16
# The cold run is one prefill and one step; 3 warm-up runs, then the timed.
EXACT = dict(prompt_tokens=P, new_tokens=N, runs=10, warmup_runs=3, warmup_ms=0, steady=False)


def step_ms(seqs, pos):
    return 1 + (seqs - 1) / 8 + pos / 1024


class Model:
    """A generative model on a scripted clock: a prefill of n tokens takes
    2 + n/128 ms, a step of s sequences at position p 1 + (s-1)/8 + p/1024
    ms, half of each queued (only synchronize waits for it). It checks what
    it is fed, as the C fake does. Dyadic numbers: every sum is exact."""

    def __init__(self, capacity_tokens=0, fail=None):
        self.now = self.done = 0.0
        self.filled, self.n_seqs = [0] * 256, 1
        self.capacity_tokens, self.fail = capacity_tokens, fail  # fail: (call index, exception)
        self.calls, self.counts = 0, {}

    def keywords(self):
        return dict(prefill=self.prefill, step=self.step, clear=self.clear, synchronize=self.synchronize,
                    fork=self.fork, set_sequences=self.set_sequences, clock=self.clock)

    def clock(self):
        return self.now

    def _count(self, what):
        self.counts[what] = self.counts.get(what, 0) + 1

    def _run(self, ms):
        if self.fail and self.calls == self.fail[0]:
            self.calls += 1
            raise self.fail[1]
        self.calls += 1
        self.now += ms / 2
        self.done = max(self.done, self.now) + ms / 2

    def clear(self):
        self.filled = [0] * 256
        self._count("clear")

    def prefill(self, seq, pos, n):
        assert seq == 0 and pos == self.filled[0], (seq, pos, self.filled[0])
        self._run(2 + n / 128)
        self.filled[0] += n
        self._count("prefill")

    def step(self, n_seqs, pos):
        assert n_seqs <= self.n_seqs and all(self.filled[s] == pos for s in range(n_seqs)), (n_seqs, pos)
        self._run(step_ms(n_seqs, pos))
        for s in range(n_seqs):
            self.filled[s] += 1
        self._count("step")

    def synchronize(self):
        self.now = max(self.now, self.done)
        self._count("synchronize")

    def fork(self, n_seqs, n_pos):
        for s in range(1, n_seqs):
            self.filled[s] = n_pos
        self._count("fork")

    def set_sequences(self, n_seqs, ctx):
        self._count("set_sequences")
        if self.capacity_tokens and n_seqs * ctx > self.capacity_tokens:
            raise MemoryError(f"{n_seqs} x {ctx} tokens")
        self.n_seqs, self.filled = n_seqs, [0] * 256


class Figures(Tmp):
    def test_counts_and_figures_on_the_scripted_clock(self):
        m = Model()
        r = inferbench.generate(**m.keywords(), **EXACT)
        d = r.data
        self.assertEqual(d["schema"], "inferbench.generation/1")
        self.assertFalse(r.partial)
        self.assertEqual(d["runs"], 10)
        self.assertEqual(d["settings"]["prompt_tokens"], P)
        self.assertEqual(d["settings"]["new_tokens"], N)
        self.assertEqual(d["settings"]["depth"], P)
        self.assertEqual(d["cold_prefill_ms"], 2.5)
        self.assertEqual(d["cold_step_ms"], step_ms(1, P))
        tokens = d["samples"]["token_ms"]
        self.assertEqual(len(tokens), 10)
        for run in tokens:
            self.assertEqual(run, [step_ms(1, P + i) for i in range(N)])
        self.assertEqual(d["samples"]["ttft_ms"], [2.5] * 10)  # the queued half waited for
        # TTFT + the N - 1 later tokens; rates as tokens over their time.
        self.assertEqual(d["samples"]["request_ms"], [2.5 + sum(step_ms(1, P + i) for i in range(N - 1))] * 10)
        flat = [t for run in tokens for t in run]
        self.assertAlmostEqual(r.tokens_per_s, 10 * N / sum(flat) * 1e3, delta=1e-9 * r.tokens_per_s)
        self.assertAlmostEqual(d["prompt_tokens_per_s"], P * 10 / 25.0 * 1e3, delta=1e-9)
        self.assertEqual(r.ttft_ms["n"], 10)
        self.assertEqual(r.token_ms["n"], 10 * N)
        # Every call: the cold run, 3 warm-up runs, 10 timed.
        self.assertEqual(m.counts["prefill"], 1 + 3 + 10)
        self.assertEqual(m.counts["clear"], 14)
        self.assertEqual(m.counts["step"], 1 + 13 * N)
        self.assertEqual(m.counts["set_sequences"], 1)

    def test_precision_and_the_run_options_reach_the_library(self):
        # Every TTFT equal and the steps a ramp: 1% is met at the fewest runs.
        r = inferbench.generate(**Model().keywords(), prompt_tokens=P, new_tokens=N, precision=0.01, min_runs=12,
                                max_runs=50, warmup_runs=1, warmup_ms=0, steady=False)
        self.assertEqual(r.data["runs"], 12)
        self.assertTrue(r.data["precision"]["met"])
        run = r.data["settings"]["run"]
        self.assertEqual((run["precision"], run["min_runs"], run["max_runs"], run["warmup_runs"]), (0.01, 12, 50, 1))

    def test_info_and_settings_are_stated(self):
        m = Model()
        r = inferbench.generate(**m.keywords(), **EXACT, name="tiny",
                                info={"arch": "llama", "n_layers": 4, "n_vocab": 1000, "weights_type": "float16",
                                      "kv_bytes_per_token": 512}, settings={"attention": "sdpa"})
        w = r.data["workload"]
        self.assertEqual((w["model"], w["arch"], w["n_layers"], w["n_vocab"]), ("tiny", "llama", 4, 1000))
        self.assertEqual(w["kv_bytes"], 512 * (P + N))  # per token x the context
        self.assertEqual(w["options"], {"attention": "sdpa"})
        self.assertEqual(w["device"], "cpu")
        self.assertEqual(w["n_cpus_allowed"], len(os.sched_getaffinity(0)))

    def test_reports(self):
        r = inferbench.generate(**Model().keywords(), **EXACT, name="tiny")
        # The callables state no architecture, runtime, KV cache, batches,
        # attention, threads or model size: none is said of them, not even
        # as "?" (issue 35: "(, ?)", "runtime ?", "KV cache ? 0 MB").
        self.assertRegex(r.report(), r"(?m)^inferbench generate: tiny$")
        self.assertRegex(r.report(), r"(?m)^device cpu\ncontext 80 \(1 x 80\)$")  # its own line, after the machine's
        for unsaid in ("n_batch", "flash attention", "threads", "model 0 MB", "layers offloaded", "?", "runtime ",
                       "KV cache"):
            self.assertNotIn(unsaid, r.report())
        self.assertRegex(r.report(), r"(?m)^binding: python ")
        r.save_json(self.path("g.json"))
        r.save_html(self.path("g.html"))
        with open(self.path("g.json")) as f:
            self.assertEqual(json.load(f)["runs"], 10)
        with open(self.path("g.html")) as f:
            self.assertIn("Latency by token position", f.read())
        self.assertIn("tokens/s runs=10", repr(r))
        # compare reads the binding's generation results as its own.
        inferbench.generate(**Model().keywords(), **EXACT, name="tiny").save_json(self.path("h.json"))
        p = subprocess.run([IB, "compare", self.path("g.json"), self.path("h.json")], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("TTFT", p.stdout)

    def test_synchronous_callables_on_the_host_clock(self):
        # No clock, no synchronize: the host's clock around calls that
        # return when done. Counts only: no timing is asserted.
        calls = []
        r = inferbench.generate(prefill=lambda s, p, n: calls.append("p"), step=lambda n, p: calls.append("s"),
                                clear=lambda: None, prompt_tokens=8, new_tokens=4, runs=5, warmup_runs=2,
                                warmup_ms=0, steady=False)
        self.assertEqual(r.data["runs"], 5)
        self.assertEqual(calls.count("p"), 1 + 2 + 5)
        self.assertEqual(calls.count("s"), 1 + 7 * 4)
        self.assertEqual(r.data["timing"], "host-clock-synchronized")

    def test_pitfalls_and_sampling(self):
        m = Model()
        reopened, sampled = [], []
        r = inferbench.generate(**m.keywords(), **EXACT, pitfalls=True, reopen=lambda: reopened.append(1),
                                sample=lambda seq: sampled.append(seq), time_sampling=True)
        rows = {row["key"]: row for row in r.data["pitfalls"]}
        self.assertEqual(len(rows), 9)
        self.assertTrue(rows["no_warmup"]["applies"])
        # The callables' prefill costs the same after a step: back to back reads the requests' TTFT.
        self.assertEqual(rows["back_to_back_prefill"]["reports"], rows["back_to_back_prefill"]["correct"])
        # ... within noise, its interval [0, 0] (docs/generate.md, "Pitfalls"), and said so in the words for it.
        b2b = rows["back_to_back_prefill"]
        self.assertEqual((b2b["verdict"], b2b["error_ci95_pct"]), ("within noise", [0, 0]))
        self.assertIn("costs nothing measurable", b2b["why"])
        self.assertEqual(rows["one_run"]["verdict"], "no interval")
        # What tests/gpu/python_generate_gpu.sh checks of the two measured rows, on the H200's decoder.
        self.assertEqual(rows["no_sync"]["correct"], r.token_ms["p50"])
        self.assertEqual(rows["back_to_back_prefill"]["correct"], r.ttft_ms["p50"])
        ns = rows["no_sync"]
        self.assertLess(abs(ns["error_pct"] - (ns["reports"] / ns["correct"] - 1) * 100), 1e-9)
        self.assertEqual(reopened, [1])
        self.assertFalse(rows["threads"]["applies"])  # no set_threads given
        self.assertEqual(rows["empty_context"]["reports"], step_ms(1, N // 2 - 1) / 2 + step_ms(1, N // 2) / 2)
        self.assertEqual(len(sampled), 10 * N)


class Sequences(Tmp):
    def test_memory_error_in_set_sequences_ends_the_search(self):
        m = Model(capacity_tokens=5 * (P + N))
        r = inferbench.generate(**m.keywords(), **EXACT, search_sequences=True, sequence_runs=1)
        s = r.data["sequences"]
        self.assertTrue(s["searched"])
        self.assertEqual(s["largest_fitting"], 5)
        self.assertIn("out of memory (MemoryError: 6 x 80 tokens)", s["limit_reason"])
        self.assertEqual([p["sequences"] for p in s["points"]], [1, 2, 4, 5])
        point = s["points"][-1]
        self.assertAlmostEqual(point["tokens_per_s"], 5 * N / sum(step_ms(5, P + i) for i in range(N)) * 1e3,
                               delta=1e-9)
        self.assertGreater(m.counts["fork"], 0)

    def test_torchs_out_of_memory_error_is_does_not_fit(self):
        class OutOfMemoryError(RuntimeError):  # torch.OutOfMemoryError, by its name
            pass

        m = Model()

        def set_sequences(n, ctx):
            if n > 3:
                raise OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
            m.set_sequences(n, ctx)

        kw = dict(m.keywords(), set_sequences=set_sequences)
        r = inferbench.generate(**kw, **EXACT, search_sequences=True, max_sequences=16, sequence_runs=1)
        self.assertEqual(r.data["sequences"]["largest_fitting"], 3)

    def test_a_list_without_fork(self):
        m = Model()
        kw = dict(m.keywords(), fork=None)
        r = inferbench.generate(**kw, **EXACT, sequences=[1, 2], sequence_runs=1)
        self.assertEqual([p["status"] for p in r.data["sequences"]["points"]], ["ok", "unsupported"])


class Errors(Tmp):
    def test_a_raising_step_keeps_the_runs_before_it(self):
        # The cold run's 2 calls, 3 warm-up runs of 1 + N, 4 timed runs, then the 6th call of the 5th.
        m = Model(fail=(2 + 3 * (1 + N) + 4 * (1 + N) + 5, ValueError("boom")))
        with self.assertRaises(inferbench.CallableError) as cm:
            inferbench.generate(**m.keywords(), **EXACT)
        e = cm.exception
        self.assertIsInstance(e.__cause__, ValueError)
        self.assertEqual(str(e), f"the callable raised ValueError: boom (in step: 1 sequences at position {P + 4})")
        self.assertTrue(e.result.partial)
        self.assertEqual(e.result.data["runs"], 4)
        self.assertEqual(e.result.data["stop_reason"], "runtime error")
        # The library is usable again.
        self.assertEqual(inferbench.generate(**Model().keywords(), **EXACT).data["runs"], 10)

    def test_a_raising_prefill_in_warm_up_has_no_result(self):
        m = Model(fail=(2, KeyError("k")))
        with self.assertRaises(inferbench.CallableError) as cm:
            inferbench.generate(**m.keywords(), **EXACT)
        self.assertIsNone(cm.exception.result)
        self.assertIn("in prefill: sequence 0, position 0, 64 tokens", str(cm.exception))

    def test_system_exit_is_raised_as_it_is(self):
        m = Model(fail=(3, SystemExit(3)))
        with self.assertRaises(SystemExit):
            inferbench.generate(**m.keywords(), **EXACT)

    def test_keyboard_interrupt_from_a_callable_keeps_partial_results(self):
        m = Model(fail=(2 + 3 * (1 + N) + 2 * (1 + N), KeyboardInterrupt()))
        with self.assertRaises(inferbench.Interrupted) as cm:
            inferbench.generate(**m.keywords(), **EXACT)
        self.assertEqual(cm.exception.result.data["runs"], 2)
        self.assertTrue(cm.exception.result.partial)

    def test_sigint_during_a_measurement(self):
        timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        try:
            with self.assertRaises(inferbench.Interrupted) as cm:
                inferbench.generate(prefill=lambda s, p, n: time.sleep(0.001), step=lambda n, p: time.sleep(0.001),
                                    clear=lambda: None, prompt_tokens=8, new_tokens=8, runs=100000, warmup_runs=2,
                                    warmup_ms=0, steady=False)
        finally:
            timer.cancel()
        self.assertTrue(cm.exception.result.partial)
        self.assertGreater(cm.exception.result.data["runs"], 0)

    def test_a_raising_clock(self):
        m = Model()
        ticks = []

        def clock():
            ticks.append(1)
            if len(ticks) > 50:
                raise OSError("clock gone")
            return m.now

        with self.assertRaises(inferbench.CallableError) as cm:
            inferbench.generate(**dict(m.keywords(), clock=clock), **EXACT)
        self.assertEqual(str(cm.exception), "the clock raised OSError: clock gone")

    def test_bad_arguments(self):
        m = Model()
        cases = [
            (dict(m.keywords(), prefill=3), "prefill=3 is not callable (required)"),
            (dict(m.keywords(), fork="f"), "fork='f' is not callable"),
            (dict(m.keywords(), device="tpu"), "device 'tpu'"),
            (dict(m.keywords(), info={"colour": 1}), "info: unknown key 'colour'"),
            (dict(m.keywords(), info={"n_layers": -1}), "info n_layers=-1"),
            (dict(m.keywords(), settings={"k" * 40: "v"}), "settings "),
            (dict(m.keywords(), runs=0), "runs=0"),
            (dict(m.keywords(), prompt_tokens=0), "the prompt must be 1 to"),
            (dict(m.keywords(), sequences=[0]), "0 sequences: a count is 1 to 256"),
            (dict(m.keywords(), sequences=[1.5]), "sequences=[1.5]"),
            (dict(m.keywords(), depth=8), "depth 8 is below the prompt"),
            (dict(m.keywords(), tpot_budget_ms=5), "a TPOT budget picks among sequence counts"),
            (dict(m.keywords(), time_sampling=True), "cannot sample"),
        ]
        for kw, words in cases:
            with self.subTest(words=words), self.assertRaises(inferbench.InferbenchError) as cm:
                inferbench.generate(**kw)
            self.assertIn(words, str(cm.exception))
            self.assertNotIn("\n", str(cm.exception))
        self.assertEqual(m.calls, 0)  # refused before anything ran


class TorchStream(unittest.TestCase):
    """device="cuda" with the stand-in torch (fake_torch/): the stream made
    current around the measurement, its synchronize the default one."""

    def test_the_timed_streams_synchronize_is_the_default(self):
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.environ["PYTHONPATH"], os.path.join(HERE, "fake_torch")]))
        code = ("import inferbench, torch\n"
                "r = inferbench.generate(prefill=lambda s, p, n: None, step=lambda n, p: None, clear=lambda: None,\n"
                "    device='cuda', prompt_tokens=8, new_tokens=2, runs=3, warmup_runs=1, warmup_ms=0, steady=False)\n"
                "print(r.data['workload']['device'], r.data['binding']['stream'], r.data['binding']['runtime'])\n"
                "print(torch.log[:3])\n"
                "print(sum(1 for e in torch.log if e == ('synchronize', 0x5000)))\n")
        p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        device, log, syncs = p.stdout.splitlines()
        self.assertEqual(device, "cuda 20480 torch 0.0-fake")
        self.assertEqual(log, "[('wait_stream', 20480, 0), ('external', 20480), ('current', 20480)]")
        # Each run: the prefill's, the fill's, one a step (2); cold run
        # (1 step) + 1 warm-up + 3 timed runs.
        self.assertEqual(int(syncs), (1 + 1 + 1) + 4 * (1 + 1 + 2))


class HuggingFace(unittest.TestCase):
    """hf_generation over a causal LM with transformers' calling convention,
    on stand-ins of torch and transformers (fake_hf/: shapes only)."""

    def run_with_fake_hf(self, cache):
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.environ["PYTHONPATH"], os.path.join(HERE, "fake_hf")]))
        code = ("import json, inferbench, tiny_lm\n"
                "m = tiny_lm.TinyLM()\n"
                f"kw = inferbench.hf_generation(m, cache={cache!r})\n"
                "r = inferbench.generate(**kw, prompt_tokens=8, new_tokens=4, runs=3, warmup_runs=1, warmup_ms=0,\n"
                "    steady=False, sequences=[1, 3], sequence_runs=1)\n"
                "print(json.dumps({'calls': m.calls, 'eval': m.evaluated, 'runs': r.data['runs'],\n"
                "    'workload': r.data['workload'], 'points': [p['status'] for p in r.data['sequences']['points']]}))\n")
        p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        return json.loads(p.stdout)

    def test_the_calls_and_what_is_stated(self):
        for cache in ("dynamic", "legacy"):
            with self.subTest(cache=cache):
                d = self.run_with_fake_hf(cache)
                calls = [tuple(c) for c in d["calls"]]
                request = [(1, 8, 0, 1)] + [(1, 1, 8 + i, 1) for i in range(4)]
                # The cold run (a prefill, a step), 1 warm-up and 3 timed
                # requests; then at 1 sequence and at 3 (forked from the
                # first: the steps have 3 rows over its 8 tokens), each
                # its cold run, at least one warm-up run and one timed.
                self.assertEqual(calls[:2], request[:2])
                self.assertEqual(calls[2:2 + 4 * 5], request * 4)
                three = [(3, 1, 8 + i, 1) for i in range(4)]
                tail = calls[2 + 4 * 5:]
                self.assertEqual(tail[-5:], [(1, 8, 0, 1)] + three)
                self.assertGreaterEqual(sum(1 for c in tail if c == (3, 1, 8, 1)), 3)
                self.assertTrue(d["eval"])
                self.assertEqual(d["runs"], 3)
                self.assertEqual(d["points"], ["ok", "ok"])
                w = d["workload"]
                self.assertEqual((w["model"], w["arch"], w["n_layers"], w["n_vocab"]), ("tiny-lm", "llama", 2, 100))
                self.assertEqual((w["weights_type"], w["n_params"], w["model_bytes"]), ("float16", 864, 1728))
                self.assertEqual(w["n_threads"], 3)
                # 2 (key, value) x 2 layers x 2 KV heads x 4 x 2 bytes a token, x the 12 tokens of the one sequence.
                self.assertEqual(w["kv_bytes"], 64 * 12)
                self.assertEqual(w["options"]["cache"], cache)

    @unittest.skipIf(importlib.util.find_spec("transformers"), "transformers is installed here")
    def test_without_transformers_a_clear_error_at_call_time(self):
        with self.assertRaises(inferbench.InferbenchError) as cm:
            inferbench.hf_generation(object())
        self.assertIn("hf_generation needs torch and transformers", str(cm.exception))
        self.assertNotIn("\n", str(cm.exception))


class Serving(unittest.TestCase):
    """serve_generation: the library's serving engine driving Python
    callables through decode_batch and remove_sequence, on a scripted clock:
    a mixed batch costs 1 ms + 0.5 a decode token + 0.1 a prompt token
    (tests/unit/test_gen_serve.c's engine), so test_engine_by_hand's three
    requests give their exact times: TTFT 2, 7 and 8 ms, the third after 6
    ms waiting for a slot."""

    def serve(self, decode_batch=None, **kw):
        state = dict(now=0.0, filled={}, batches=[], removed=[])

        def batch(entries):
            ms = 1.0
            for seq, pos, n, logits in entries:
                self.assertEqual(pos, state["filled"].get(seq, 0))
                ms += 0.5 if n == 1 else 0.1 * n
            state["now"] += ms
            state["batches"].append(entries)
            for seq, pos, n, logits in entries:
                state["filled"][seq] = pos + n

        def unused(*args):
            raise AssertionError("the engine calls decode_batch, not prefill or step")

        result = inferbench.serve_generation(
            prefill=unused, step=unused, clear=lambda: None, decode_batch=decode_batch or batch,
            remove_sequence=lambda seq, pos: (state["removed"].append((seq, pos)), state["filled"].update({seq: pos})),
            set_sequences=lambda n, ctx: None, clock=lambda: state["now"], trace=[(0, 10, 3), (0, 20, 2), (1, 5, 2)],
            slots=2, prefill_chunk=10, warmup_requests=0, **kw)
        return result, state

    def test_by_hand(self):
        r, state = self.serve(slo_ttft_ms=7.5, slo_tpot_ms=2.5)
        self.assertEqual(r.kind, "serve_generative")
        self.assertEqual([q["ttft_ms"] for q in r.data["requests"]], [2, 7, 8])
        self.assertEqual([q["queue_ms"] for q in r.data["requests"]], [0, 0, 6])
        self.assertEqual(r.data["figures"]["good_requests"], 2)
        self.assertAlmostEqual(r.data["figures"]["goodput_rate"], 2000 / 10.5)
        # The second step: R0's decode token (logits read), R1's first chunk of 10 (no logits).
        self.assertEqual(state["batches"][1], [(0, 10, 1, True), (1, 0, 10, False)])
        # Every removal empties its sequence: the prompts share no prefix to keep.
        self.assertEqual(set(state["removed"]), {(0, 0), (1, 0)})
        self.assertIn("goodput within TTFT <= 7.5 ms, TPOT <= 2.5 ms: 190.5 requests/s", r.text)

    def test_a_raising_decode_batch(self):
        def broken(entries):
            raise ValueError("no batch today")
        with self.assertRaises(inferbench.CallableError) as e:
            self.serve(decode_batch=broken)
        self.assertIn("no batch today", str(e.exception))
        self.assertIn("in decode_batch: 1 entries, 10 tokens", str(e.exception))

    def test_needs_both_callables(self):
        with self.assertRaises(inferbench.InferbenchError):
            inferbench.serve_generation(prefill=print, step=print, clear=print, decode_batch=print,
                                        remove_sequence=None, rate=5)


if __name__ == "__main__":
    unittest.main()
