"""A stand-in for torch's CUDA stream API, enough for the binding's CUDA
path to run on a machine without a GPU or torch (test_binding.py): it
records what the binding asked of it. Its streams are made-up handles, so
the library's first CUDA call on them fails, as it must without a GPU."""
import contextlib
import time

__version__ = "0.0-fake"
log = []


class _Stream:
    def __init__(self, handle):
        self.cuda_stream = handle

    def wait_stream(self, other):
        log.append(("wait_stream", self.cuda_stream, other.cuda_stream))

    def query(self):
        if self.cuda_stream == 0xBAD:
            raise RuntimeError("CUDA error: invalid resource handle\nmore lines")
        return True

    def synchronize(self):
        # A wait as long as the work the last call queued (stream_wait_s, set
        # by a test's callable), then the stream is idle.
        log.append(("synchronize", self.cuda_stream))
        time.sleep(cuda.stream_wait_s)
        cuda.stream_wait_s = 0.0


class _Graph:
    def replay(self):
        log.append(("replay",))


class cuda:
    current = _Stream(0)
    stream_wait_s = 0.0  # the next wait on a stream: the work queued on it
    capturing = False  # inside torch.cuda.graph: a callable that syncs raises, as torch's does

    @staticmethod
    def is_available():
        return True

    @staticmethod
    def current_stream(device=None):
        return cuda.current

    @staticmethod
    def Stream(device=None):
        return _Stream(0x5000)

    @staticmethod
    def ExternalStream(handle, device=None):
        log.append(("external", handle))
        return _Stream(handle)

    @staticmethod
    @contextlib.contextmanager
    def stream(s):
        log.append(("current", s.cuda_stream))
        yield

    @staticmethod
    def synchronize(device=None):
        log.append(("device_synchronize", device))

    @staticmethod
    def empty_cache():
        log.append(("empty_cache",))

    @staticmethod
    def CUDAGraph():
        return _Graph()

    @staticmethod
    @contextlib.contextmanager
    def graph(g):
        log.append(("capture_begin",))
        cuda.capturing = True
        try:
            yield
        finally:
            cuda.capturing = False
        log.append(("capture_end",))
