"""A callable captured in one CUDA graph (PyTorch), so that each measured
run is one launch: no Python between a run's events but the replay. A
call whose Python work before its kernels is a large part of its run
reads the host's speed, which varies between processes (docs/python.md,
"The binding's own cost, and when it matters"): on the H200, EfficientNet-B0
replayed this way read 0.418-0.427 ms at batch 1 in three processes, through
torch.compile's own CUDA-graph trees 0.536-0.809 ms."""

from . import _lib as L
from ._backend import describe_exception
from ._cuda import import_torch
from ._errors import CallableError, InferbenchError


def cuda_graph(fn, *, warmup_calls=3):
    """fn() (no argument; its tensors already on the GPU, and staying the
    same tensors) called warmup_calls times on a side stream (compiling and
    warming what it calls), then captured in one CUDA graph. Returns a
    callable that replays the graph on the current stream: what
    inferbench.latency(..., device="cuda") measures. Raises CallableError
    (fn raised while warming), InferbenchError (no PyTorch with CUDA, or fn
    cannot be captured: a host synchronisation, a CPU tensor, work on
    another stream inside it)."""
    if not callable(fn):
        raise InferbenchError(f"{fn!r} is not callable")
    if isinstance(warmup_calls, bool) or not isinstance(warmup_calls, int) or warmup_calls < 1:
        raise InferbenchError(f"warmup_calls={warmup_calls!r}: expected a whole number of at least 1")
    torch = import_torch()
    if torch is None:
        raise InferbenchError("cuda_graph needs PyTorch with CUDA (torch.cuda.CUDAGraph)")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    try:
        with torch.cuda.stream(side):
            for _ in range(warmup_calls):
                fn()
    except Exception as e:
        raise CallableError(f"the callable raised {describe_exception(e)} (warming up for the CUDA graph)", None,
                            L.status_name(L.IB_ERR_RUNTIME)) from e
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(graph):
            fn()
    except Exception as e:
        raise InferbenchError(f"the callable cannot be captured in a CUDA graph: {describe_exception(e)} "
                              "(a host synchronisation, a CPU tensor or another stream inside it?)") from e

    def replay():
        graph.replay()

    replay.__qualname__ = f"{getattr(fn, '__qualname__', type(fn).__name__)} (CUDA graph)"
    return replay
