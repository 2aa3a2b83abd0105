"""A Python callable as an inferbench backend: a table of the public backend
ABI (include/inferbench_backend.h) whose slots are ctypes callbacks, opened
with ib_workload_open_backend. The measurement core then drives it exactly
as it drives ONNX Runtime: cold run, warm-up until steady, timed runs on
the host clock (CPU) or between CUDA events on the stream (GPU).

A callback must never let an exception out (ctypes would print it and
return 0, which reads as success): every slot catches, keeps the exception
for the caller, and returns a status with a one-line message.
"""

import ctypes
import statistics
import time

from . import _lib as L
from ._cuda import Stream
from ._errors import CallableError, InferbenchError, Interrupted


def _is_out_of_memory(e):
    return isinstance(e, MemoryError) or type(e).__name__ == "OutOfMemoryError"


def describe_exception(e):
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0]}" if text else type(e).__name__


class Failures:
    """What a table of ctypes callbacks shares: a slot's exception made a
    status with one line (never raised out of a callback), and raised again
    for the caller once the library returned. self.stream is the timed
    CUDA stream (None on the CPU); self.who names what raised."""

    who = "the callable"

    def _failures_init(self):
        self.failure = None  # what the callable raised, for the caller
        self.interrupted = False
        self.cancel = ctypes.c_int(0)

    def _fail(self, e, err, what):
        """The status for exception e (never raised out of a callback)."""
        if isinstance(e, KeyboardInterrupt):
            self.interrupted = True
            self.cancel.value = 1
            return self._say(err, L.IB_ERR_INTERRUPTED, "interrupted")
        if _is_out_of_memory(e):
            if self.stream is not None:
                self.stream.release_memory()
            return self._say(err, L.IB_ERR_DEVICE_OOM, f"{what}: out of memory ({describe_exception(e)})")
        self.failure = e
        return self._say(err, L.IB_ERR_RUNTIME, f"{self.who} raised {describe_exception(e)} ({what})")

    @staticmethod
    def _say(err, status, message):
        if err:
            err.contents.message = message.encode("utf-8", "replace")[:511]
        return status

    def current(self):
        """The context to measure in: the stream made current (torch)."""
        return self.stream.current() if self.stream else _nothing()

    def raise_failure(self, status, err, result):
        """Raises what ended the measurement: Interrupted, the callable's own
        exception (as the cause of a CallableError), or the library's error."""
        if self.interrupted:
            raise Interrupted(result)
        if self.failure is not None and not isinstance(self.failure, Exception):
            raise self.failure  # SystemExit and the like keep their meaning
        message = err.text() or L.status_name(status)
        if self.failure is not None:
            raise CallableError(message, result, L.status_name(status)) from self.failure
        raise InferbenchError(message, result, L.status_name(status))


class CallableWorkload(Failures):
    """fn as a workload. batched: fn takes one argument, make_batch(n) (or
    n itself without make_batch), and the batch dimension can change."""

    def __init__(self, fn, *, name, device, device_id=0, stream=None, batch=1, batched=False,
                 make_batch=None, input_shape=None):
        if not callable(fn):
            raise InferbenchError(f"{fn!r} is not callable")
        if device not in ("cpu", "cuda"):
            raise InferbenchError(f"device {device!r}: expected 'cpu' or 'cuda'")
        if batch < 1:
            raise InferbenchError(f"batch {batch}: a batch is at least 1")
        self.fn, self.name, self.batched, self.make_batch = fn, name, batched, make_batch
        self.input_shape = input_shape
        self.stream = Stream(stream, device_id) if device == "cuda" else None
        self.device_id, self.first_batch = device_id, batch
        self.batch, self.arg, self.sync = batch, None, True
        self._failures_init()
        self.table = self._table()

    # --- the slots ------------------------------------------------------
    def _bind(self, batch):
        self.arg = self.make_batch(batch) if self.make_batch is not None else batch
        self.batch = batch

    def _open(self, args, out, err):
        try:
            self._bind(args.contents.batch)
        except BaseException as e:
            return self._fail(e, err, f"make_batch({args.contents.batch})")
        caps = L.IB_CAP_BATCH_DIM if self.batched else 0
        h = out.contents
        if self.stream is not None:
            caps |= L.IB_CAP_GPU | L.IB_CAP_CUDA_STREAM | L.IB_CAP_DEVICE_TIMING | L.IB_CAP_ASYNC_RUN
            h.stream, h.device_id = self.stream.handle, self.device_id
        h.caps = caps
        return L.IB_OK

    def _describe(self, state, info):
        i = info.contents
        i.model = self.name.encode("utf-8", "replace")[:255]
        i.provider = (f"python ({self.stream.runtime_name()})" if self.stream else "python").encode()[:63]
        i.batch = self.batch
        if self.input_shape:
            t = i.inputs[0]
            t.name, t.type, t.rank = b"input", b"float32", len(self.input_shape)
            for d, v in enumerate(self.input_shape):
                t.dims[d] = self.batch if d == 0 and self.batched else v
            t.values = b"random"
            i.n_inputs = 1

    def _set_batch(self, state, batch, err):
        try:
            self._bind(batch)
            return L.IB_OK
        except BaseException as e:
            return self._fail(e, err, f"make_batch({batch})")

    def _run(self, state, err):
        try:
            if self.batched:
                self.fn(self.arg)
            else:
                self.fn()
            if self.sync and self.stream is not None:
                self.stream.synchronize()
            return L.IB_OK
        except BaseException as e:
            return self._fail(e, err, f"at batch {self.batch}")

    def _set_run_sync(self, state, sync, err):
        self.sync = bool(sync)
        return L.IB_OK

    def _close(self, state):
        self.arg = None

    def _table(self):
        gpu = self.stream is not None
        self._callbacks = [
            L.OpenFn(self._open),
            L.DescribeFn(self._describe),
            L.SetBatchFn(self._set_batch),
            L.RunFn(self._run),
            L.SetRunSyncFn(self._set_run_sync) if gpu else L.SetRunSyncFn(),
            L.CloseFn(self._close),
        ]
        open_, describe, set_batch, run, set_run_sync, close = self._callbacks
        return L.Backend(
            struct_size=ctypes.sizeof(L.Backend), abi_version=L.IB_BACKEND_ABI_VERSION,
            name=b"python", description=b"a Python callable (python/inferbench)",
            open=open_, describe=describe, set_batch=set_batch, run=run,
            set_run_sync=set_run_sync, close=close,
        )

    # --- for the caller -------------------------------------------------
    def open(self):
        """The library's workload handle (ib_workload_destroy releases it)."""
        lib = L.lib()
        args = L.BackendOpenArgs()
        lib.ib_backend_open_args_init(ctypes.byref(args))
        args.device = L.IB_DEVICE_CUDA if self.stream else L.IB_DEVICE_CPU
        args.device_id, args.batch = self.device_id, self.first_batch
        w, err = ctypes.c_void_p(), L.Error()
        st = lib.ib_workload_open_backend(ctypes.byref(self.table), ctypes.byref(args), ctypes.byref(w), ctypes.byref(err))
        if st != L.IB_OK:
            self.raise_failure(st, err, result=None)
        return w

    def probe_calls_ms(self, calls=5):
        """Medians over `calls` calls from an idle device, in ms: how long
        fn() takes to return (its work queued), to the end of the timed
        stream, and how long the device stays busy after that until every
        stream is done (work the callable queued on another stream)."""
        queued_ms, stream_ms, after_ms = [], [], []
        with self.current():
            for _ in range(calls):
                self.stream.synchronize_device()
                t0 = time.perf_counter()
                self.fn(self.arg) if self.batched else self.fn()
                tq = time.perf_counter()
                self.stream.synchronize()
                t1 = time.perf_counter()
                self.stream.synchronize_device()
                t2 = time.perf_counter()
                queued_ms.append((tq - t0) * 1e3)
                stream_ms.append((t1 - t0) * 1e3)
                after_ms.append((t2 - t1) * 1e3)
        return statistics.median(queued_ms), statistics.median(stream_ms), statistics.median(after_ms)


class _nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False
