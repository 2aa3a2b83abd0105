#!/usr/bin/env python3
"""PyTorch figures for docs/measurements.md (issue 17; run on the GPU
machine, not a test: it asserts nothing, it records).

For each torchvision model and configuration (eager fp32,
torch.compile(mode="reduce-overhead") fp32, the same in fp16
channels-last): the batch-1 latency through the binding
(inferbench.latency) beside a plain CUDA-event loop in Python over the same
callable, and the throughput at the given batches through the binding
(inferbench.throughput) beside the same plain loop at each batch. One line
of JSON a figure on stdout (prefix "figure "), then a Markdown table.

    PYTHONPATH=python INFERBENCH_LIBRARY=build/libinferbench.so \\
        python3 tests/gpu/pytorch_record.py --models efficientnet_b0 --batches 256,512
"""

import argparse
import copy
import json
import statistics
import sys
import time

import torch
import torchvision

import inferbench

CONFIGS = {
    # name: (dtype, channels_last, compile mode or None)
    "eager-fp32": (torch.float32, False, None),
    "compile-fp32": (torch.float32, False, "reduce-overhead"),
    "compile-fp16-cl": (torch.float16, True, "reduce-overhead"),
    "autotune-fp16-cl": (torch.float16, True, "max-autotune"),
}


def prepared(model, config):
    dtype, channels_last, mode = CONFIGS[config]
    m = copy.deepcopy(model).to(dtype)
    if channels_last:
        m = m.to(memory_format=torch.channels_last)
    torch._dynamo.reset()
    return torch.compile(m, mode=mode) if mode else m


def make_input(config, batch):
    dtype, channels_last, _ = CONFIGS[config]
    x = torch.randn(batch, 3, 224, 224, device="cuda", dtype=dtype)
    return x.contiguous(memory_format=torch.channels_last) if channels_last else x


def plain_loop_ms(fn, runs, warmup=50):
    """The median of `runs` calls, each between two CUDA events on the
    current stream, after `warmup` calls: what a careful user writes."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def emit(figures, **fields):
    figures.append(fields)
    print("figure " + json.dumps(fields), flush=True)


def record_model(name, configs, batches, runs, figures):
    model = getattr(torchvision.models, name)().eval().cuda()
    for config in configs:
        m = prepared(model, config)
        x1 = make_input(config, 1)

        def one():
            with torch.inference_mode():
                m(x1)

        t0 = time.time()
        one()  # compiles on first call: timed apart, as the library times a first run
        torch.cuda.synchronize()
        first_s = time.time() - t0
        r = inferbench.latency(one, device="cuda", name=f"{name} {config}", runs=runs)
        plain = plain_loop_ms(one, runs)
        # The binding times a stream of its own when the current one is the
        # legacy default: the plain loop on such a stream too, to tell a
        # difference of streams from one of the binding.
        with torch.cuda.stream(torch.cuda.Stream()):
            plain_side = plain_loop_ms(one, runs)
        emit(figures, model=name, config=config, batch=1, first_call_s=round(first_s, 1),
             binding_ms=r.median_ms, plain_ms=plain, plain_side_stream_ms=plain_side, ratio=r.median_ms / plain,
             overhead_us=r.data["binding"]["host_overhead_us"], warnings=r.warnings)

        xs = {}

        def make_batch(n):
            xs[n] = make_input(config, n)
            return xs[n]

        def batched(b):
            with torch.inference_mode():
                m(b)

        try:
            t = inferbench.throughput(batched, device="cuda", name=f"{name} {config}", batches=batches,
                                      make_batch=make_batch, runs=max(30, runs // 10))
        except inferbench.InferbenchError as e:
            emit(figures, model=name, config=config, batch="throughput", error=str(e))
            continue
        for point in t.data["curve"]:
            b = int(point["batch"])
            entry = dict(model=name, config=config, batch=b, status=point["status"],
                         binding_items_per_s=point.get("items_per_s"),
                         binding_items_per_s_sync=point.get("items_per_s_sync"))
            if point["status"] == "ok":
                plain = plain_loop_ms(lambda: batched(xs[b]), max(30, runs // 10), warmup=10)
                entry.update(plain_items_per_s=b / plain * 1000,
                             ratio=point["items_per_s_sync"] / (b / plain * 1000))
            emit(figures, **entry)
        del m, xs
        torch.cuda.empty_cache()


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
            print(f"| {f['model']} | {f['config']} | 1 | {f['binding_ms']:.4f} ms | | {f['plain_ms']:.4f} ms "
                  f"(on a created stream: {f['plain_side_stream_ms']:.4f} ms) | {f['ratio']:.4f} |")
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
    args = p.parse_args()
    figures = []
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}", flush=True)
    try:
        for name in args.models.split(","):
            record_model(name, args.configs.split(","), [int(b) for b in args.batches.split(",")], args.runs,
                         figures)
    finally:
        table(figures)


if __name__ == "__main__":
    sys.exit(main())
