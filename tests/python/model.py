"""Constructors for `python -m inferbench` in the tests (no torch here):
each returns a callable that is called with the input shape."""
import time


def make_model():
    def model(shape):
        assert isinstance(shape, tuple)
        end = time.perf_counter() + 200e-6
        while time.perf_counter() < end:
            pass

    return model


def make_failing():
    return lambda shape: 1 / 0
