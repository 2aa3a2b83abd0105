#!/usr/bin/env python3
"""PyTorch figures for docs/measurements.md (issue 17; run on the GPU
machine, not a test: it asserts nothing, it records).

For each torchvision model and configuration: the batch-1 latency through
the binding (inferbench.latency) beside a plain CUDA-event loop in Python
over the same callable, measured in alternation (binding, loop, binding,
loop...: --rounds), so that a drift of the host shows in both; then the
throughput at the given batches through the binding (inferbench.throughput)
beside the same plain loop at each batch. One line of JSON a figure on
stdout (prefix "figure "), then a Markdown table.

A configuration is a name of dash-separated words (see CONFIG_WORDS):
eager, compile (torch.compile mode "reduce-overhead": CUDA graphs) or
autotune ("max-autotune"); fp32, fp16 or bf16; and any of cl
(channels-last), freeze (Inductor's freezing: weights become constants,
batch norms fold into convolutions), bench (torch.backends.cudnn.benchmark)
and graph (the model captured in one CUDA graph a shape by
inferbench.cuda_graph, replayed in one launch: no Python between the run's
events but the replay; a compiled model then compiles without its own CUDA
graphs).
Compiled models have static shapes (dynamic=False): each batch gets its
own compile, as a deployment at a fixed batch would.

    PYTHONPATH=python INFERBENCH_LIBRARY=build/libinferbench.so \\
        python3 tests/gpu/pytorch_record.py --models efficientnet_b0 --batches 256,512 \\
        --configs eager-fp32,compile-fp16-freeze --deadline-s 540
"""

import argparse
import copy
import ctypes
import json
import statistics
import sys
import threading
import time

import torch
import torchvision

import inferbench
from plain_loop import plain_loop_ms

CONFIG_WORDS = {
    "mode": {"eager": None, "compile": "reduce-overhead", "autotune": "max-autotune"},
    "dtype": {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16},
    "flags": {"cl", "freeze", "bench", "graph"},
}


def parse_config(name):
    """(compile mode or None, dtype, set of flags) of a name such as
    compile-fp16-cl-freeze; SystemExit on a word it does not know."""
    words = name.split("-")
    mode, dtype, flags = words[0], words[1] if len(words) > 1 else "", set(words[2:])
    if mode not in CONFIG_WORDS["mode"] or dtype not in CONFIG_WORDS["dtype"] or flags - CONFIG_WORDS["flags"]:
        sys.exit(f"pytorch_record: configuration '{name}': expected MODE-DTYPE[-FLAG...], MODE in "
                 f"{'/'.join(CONFIG_WORDS['mode'])}, DTYPE in {'/'.join(CONFIG_WORDS['dtype'])}, "
                 f"FLAG in {'/'.join(sorted(CONFIG_WORDS['flags']))}")
    if words[0] == "eager" and "freeze" in flags:
        sys.exit(f"pytorch_record: configuration '{name}': freeze is an Inductor pass (compile or autotune)")
    mode = CONFIG_WORDS["mode"][mode]
    if "graph" in flags and mode:  # the hand-made graph holds the CUDA graph
        mode = "default" if mode == "reduce-overhead" else "max-autotune-no-cudagraphs"
    return mode, CONFIG_WORDS["dtype"][dtype], flags


def graphed(m):
    """m as a callable that replays one CUDA graph an input tensor
    (inferbench.cuda_graph, made at its first call): the input must stay
    the same tensor, as make_input's do."""
    graphs = {}

    def call(x):
        key = (x.data_ptr(), tuple(x.shape))
        if key not in graphs:
            graphs[key] = inferbench.cuda_graph(lambda: m(x))
        graphs[key]()

    return call


def prepared(model, config):
    mode, dtype, flags = parse_config(config)
    m = copy.deepcopy(model).to(dtype)
    if "cl" in flags:
        m = m.to(memory_format=torch.channels_last)
    torch.backends.cudnn.benchmark = "bench" in flags
    torch._inductor.config.freezing = "freeze" in flags
    torch._dynamo.reset()
    m = torch.compile(m, mode=mode, dynamic=False) if mode else m
    return graphed(m) if "graph" in flags else m


def make_input(config, batch):
    _, dtype, flags = parse_config(config)
    x = torch.randn(batch, 3, 224, 224, device="cuda", dtype=dtype)
    return x.contiguous(memory_format=torch.channels_last) if "cl" in flags else x


def emit(figures, **fields):
    figures.append(fields)
    print("figure " + json.dumps(fields), flush=True)


class Deadline:
    """Starts a step only while the time left exceeds the longest step so
    far: a call to the GPU machine ends at a fixed limit, and a step cut
    there would lose its figures (the first step always starts)."""

    def __init__(self, seconds):
        self.end = time.time() + seconds if seconds else None
        self.longest = 0.0

    def allows(self):
        return self.end is None or self.end - time.time() > self.longest

    def step(self, started):
        self.longest = max(self.longest, time.time() - started)


class gil_held:
    """The library called with the GIL held (ctypes.PyDLL), where the
    binding's CDLL releases it around each call into the library, so that
    each callback takes it again: an experiment on why a host-bound callable
    can read slower through the binding (another Python thread may hold the
    GIL when a run's start event is already recorded)."""

    def __init__(self):
        normal = inferbench._lib.lib()
        cdll, inferbench._lib.ctypes.CDLL, inferbench._lib._lib = ctypes.CDLL, ctypes.PyDLL, None
        try:
            self.held = inferbench._lib.lib()
        finally:
            inferbench._lib.ctypes.CDLL, inferbench._lib._lib = cdll, normal

    def __enter__(self):
        self.normal, inferbench._lib._lib = inferbench._lib._lib, self.held

    def __exit__(self, *exc):
        inferbench._lib._lib = self.normal


def host_call_ms(fn, calls=100):
    """The median host time of one call (its work only queued): when it is
    near the run's device time, the run is host-bound and its events read
    the host's speed."""
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
        torch.cuda.synchronize()
    return statistics.median(times)


def batch1_rounds(one, name, config, runs, rounds, held):
    """Binding and plain loop in alternation, `rounds` times each (and the
    binding with the GIL held, when held is a gil_held)."""
    binding, plain, binding_held, overhead, warnings = [], [], [], [], []
    for _ in range(rounds):
        r = inferbench.latency(one, device="cuda", name=f"{name} {config}", runs=runs)
        binding.append(r.median_ms)
        overhead.append(r.data["binding"]["host_overhead_us"])
        warnings += [w for w in r.warnings if w not in warnings]
        plain.append(plain_loop_ms(one, runs))
        if held:
            with held:
                binding_held.append(inferbench.latency(one, device="cuda", name=name, runs=runs).median_ms)
    return dict(binding_ms=statistics.median(binding), plain_ms=statistics.median(plain),
                binding_rounds_ms=binding, plain_rounds_ms=plain, binding_gil_held_rounds_ms=binding_held,
                overhead_us=statistics.median(overhead), warnings=warnings,
                host_call_ms=host_call_ms(one), python_threads=[t.name for t in threading.enumerate()])


def record_model(name, configs, batches, runs, rounds, held, deadline, figures):
    model = getattr(torchvision.models, name)().eval().cuda()
    for config in configs:
        if not deadline.allows():
            emit(figures, model=name, config=config, batch="all", error="skipped: the deadline is nearer "
                 "than the longest configuration so far")
            continue
        started = time.time()
        m = prepared(model, config)
        x1 = make_input(config, 1)

        def one():
            with torch.inference_mode():
                m(x1)

        t0 = time.time()
        one()  # compiles on first call: timed apart, as the library times a first run
        torch.cuda.synchronize()
        first_s = time.time() - t0
        b1 = batch1_rounds(one, name, config, runs, rounds, held)
        # The binding times a stream of its own when the current one is the
        # legacy default: the plain loop on such a stream too, to tell a
        # difference of streams from one of the binding.
        with torch.cuda.stream(torch.cuda.Stream()):
            plain_side = plain_loop_ms(one, runs)
        emit(figures, model=name, config=config, batch=1, first_call_s=round(first_s, 1),
             plain_side_stream_ms=plain_side, ratio=b1["binding_ms"] / b1["plain_ms"], **b1)

        xs = {}

        def make_batch(n):
            xs[n] = make_input(config, n)
            return xs[n]

        def batched(b):
            with torch.inference_mode():
                m(b)

        try:
            t = inferbench.throughput(batched, device="cuda", name=f"{name} {config}", batches=batches,
                                      make_batch=make_batch, runs=max(30, runs // 10)) if batches else None
        except inferbench.InferbenchError as e:
            emit(figures, model=name, config=config, batch="throughput", error=str(e))
            t = None
        for point in t.data["curve"] if t else []:
            b = int(point["batch"])
            entry = dict(model=name, config=config, batch=b, status=point["status"],
                         binding_items_per_s=point.get("items_per_s"),
                         binding_items_per_s_sync=point.get("items_per_s_sync"))
            if point["status"] == "ok":
                plain_b = plain_loop_ms(lambda: batched(xs[b]), max(30, runs // 10), warmup=10)
                entry.update(plain_items_per_s=b / plain_b * 1000,
                             ratio=point["items_per_s_sync"] / (b / plain_b * 1000))
            emit(figures, **entry)
        del m, xs
        torch.cuda.empty_cache()
        deadline.step(started)
        print(f"# {name} {config}: {time.time() - started:.0f} s", flush=True)


def table(figures):
    # Throughput rows: back to back (the library's figure), then each run
    # synchronized (like the plain loop, which waits on each run's event):
    # the ratio compares the two that wait alike.
    print("\n| model | configuration | batch | binding | binding, each run synchronized | plain CUDA-event loop "
          "| binding/plain |")
    print("|---|---|---|---|---|---|---|")
    for f in figures:
        if "error" in f:
            print(f"| {f['model']} | {f['config']} | {f['batch']} | error: {f['error']} | | | |")
        elif f["batch"] == 1:
            rounds = ", ".join(f"{b:.4f}/{p:.4f}" for b, p in zip(f["binding_rounds_ms"], f["plain_rounds_ms"]))
            if f["binding_gil_held_rounds_ms"]:
                rounds += "; GIL held: " + ", ".join(f"{b:.4f}" for b in f["binding_gil_held_rounds_ms"])
            rounds += f"; host call {f['host_call_ms']:.4f} ms"
            print(f"| {f['model']} | {f['config']} | 1 | {f['binding_ms']:.4f} ms | | {f['plain_ms']:.4f} ms "
                  f"(on a created stream: {f['plain_side_stream_ms']:.4f} ms; rounds binding/loop: {rounds}) "
                  f"| {f['ratio']:.4f} |")
        elif f.get("plain_items_per_s"):
            print(f"| {f['model']} | {f['config']} | {f['batch']} | {f['binding_items_per_s']:,.0f}/s "
                  f"| {f['binding_items_per_s_sync']:,.0f}/s | {f['plain_items_per_s']:,.0f}/s | {f['ratio']:.4f} |")
        else:
            print(f"| {f['model']} | {f['config']} | {f['batch']} | {f['status']} | | | |")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default="efficientnet_b0,resnet50")
    p.add_argument("--configs", default="eager-fp32,compile-fp32,compile-fp16-cl")
    p.add_argument("--batches", default="256")
    p.add_argument("--runs", type=int, default=300)
    p.add_argument("--rounds", type=int, default=3, help="batch-1 rounds of binding then plain loop")
    p.add_argument("--gil-held", action="store_true", help="batch-1 rounds also through the library called "
                   "with the GIL held (an experiment: class gil_held)")
    p.add_argument("--deadline-s", type=float, default=0, help="start no configuration that would end past it")
    args = p.parse_args()
    for config in args.configs.split(","):
        parse_config(config)
    deadline = Deadline(args.deadline_s)
    figures = []
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}", flush=True)
    try:
        for name in args.models.split(","):
            record_model(name, args.configs.split(","), [int(b) for b in args.batches.split(",") if b],
                         args.runs, args.rounds, gil_held() if args.gil_held else None, deadline, figures)
    finally:
        table(figures)


if __name__ == "__main__":
    sys.exit(main())
