"""The plain CUDA-event loop the binding is checked against (imported by
tests/gpu/python_gpu.sh's check and tests/gpu/pytorch_record.py)."""

import statistics

import torch


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
