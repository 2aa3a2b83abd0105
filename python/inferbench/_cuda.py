"""The CUDA stream a callable's work goes on.

The library records its events on the stream the binding hands it, so the
callable must enqueue its work there: with PyTorch the binding makes that
stream current around the measurement (torch.cuda.stream), so that a
model called inside enqueues on it. Without PyTorch a stream handle must
be given, and the callable must use it itself; the CUDA runtime (libcudart)
is then loaded to wait on it.
"""

import contextlib
import ctypes
import ctypes.util

from ._errors import InferbenchError

_CUDA_ERROR_NOT_READY = 600


def import_torch():
    """torch when it is importable and has CUDA, else None."""
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def _load_cudart():
    names = ["libcudart.so", "libcudart.so.13", "libcudart.so.12"]
    found = ctypes.util.find_library("cudart")
    for name in ([found] if found else []) + names:
        try:
            rt = ctypes.CDLL(name)
        except OSError:
            continue
        for fn in ("cudaStreamSynchronize", "cudaStreamQuery"):
            getattr(rt, fn).argtypes = [ctypes.c_void_p]
            getattr(rt, fn).restype = ctypes.c_int
        rt.cudaDeviceSynchronize.argtypes = []
        rt.cudaDeviceSynchronize.restype = ctypes.c_int
        rt.cudaGetErrorString.argtypes = [ctypes.c_int]
        rt.cudaGetErrorString.restype = ctypes.c_char_p
        return rt
    raise InferbenchError("device 'cuda' without torch needs the CUDA runtime (libcudart.so): not found")


def stream_handle(stream):
    """The cudaStream_t of stream: an int, or an object with .cuda_stream
    (torch.cuda.Stream, cupy's streams have .ptr)."""
    for attr in ("cuda_stream", "ptr"):
        if hasattr(stream, attr):
            stream = getattr(stream, attr)
            break
    if isinstance(stream, bool) or not isinstance(stream, int) or stream < 0:
        raise InferbenchError(f"stream {stream!r} is not a CUDA stream handle (an int, or an object with .cuda_stream)")
    return stream


class Stream:
    """The stream a measurement runs on, made current around it."""

    def __init__(self, stream, device_id):
        self.torch = import_torch()
        self.device_id = device_id
        if stream is None and self.torch is None:
            raise InferbenchError("device 'cuda' needs torch with CUDA, or a stream handle given (stream=...)")
        handle = stream_handle(stream) if stream is not None else self.torch.cuda.current_stream(device_id).cuda_stream
        self.own = None
        if handle == 0:
            handle = self._own_stream(given=stream is not None)
        self.handle = handle
        if self.torch is not None:
            self.torch_stream = self.torch.cuda.ExternalStream(handle, device=device_id)
        else:
            self.cudart = _load_cudart()
        self._check()

    def _own_stream(self, given):
        # The legacy default stream (0) cannot carry the library's events
        # apart from other work: the measurement gets a stream of its own,
        # ordered after what is already queued on the default one.
        if self.torch is None:
            raise InferbenchError("stream 0 is the legacy default stream: give a created stream")
        self.own = self.torch.cuda.Stream(device=self.device_id)
        self.own.wait_stream(self.torch.cuda.current_stream(self.device_id))
        return self.own.cuda_stream

    def _check(self):
        if self.torch is not None:
            try:
                self.torch_stream.query()
            except RuntimeError as e:
                first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                raise InferbenchError(f"stream {self.handle:#x} is not a CUDA stream: {first}") from None
            return
        status = self.cudart.cudaStreamQuery(self.handle)
        if status not in (0, _CUDA_ERROR_NOT_READY):
            why = self.cudart.cudaGetErrorString(status).decode()
            raise InferbenchError(f"stream {self.handle:#x} is not a CUDA stream: {why}")

    def current(self):
        """A context in which the stream is the current one (torch), or
        nothing to do (the callable uses the handle it was given)."""
        if self.torch is None:
            return contextlib.nullcontext()
        return self.torch.cuda.stream(self.torch_stream)

    def synchronize(self):
        if self.torch is not None:
            self.torch_stream.synchronize()
            return
        status = self.cudart.cudaStreamSynchronize(self.handle)
        if status != 0:
            raise RuntimeError(f"cudaStreamSynchronize: {self.cudart.cudaGetErrorString(status).decode()}")

    def synchronize_device(self):
        """Waits for every stream of the device (this process's work)."""
        if self.torch is not None:
            self.torch.cuda.synchronize(self.device_id)
            return
        status = self.cudart.cudaDeviceSynchronize()
        if status != 0:
            raise RuntimeError(f"cudaDeviceSynchronize: {self.cudart.cudaGetErrorString(status).decode()}")

    def release_memory(self):
        """After an out-of-memory: the cached blocks back to the device, so
        that a smaller batch fits again."""
        if self.torch is not None:
            self.torch.cuda.empty_cache()

    def runtime_name(self):
        return f"torch {self.torch.__version__}" if self.torch is not None else "CUDA stream given"
