"""A stand-in for the part of torch that inferbench.hf_generation uses
(test_generate.py), without torch: tensors are shapes only, so that the
helper's bookkeeping (the ids it slices, the caches it grows and forks,
what it states) is checked against a model that checks what it is fed."""
import contextlib
import types

__version__ = "0.0-fake"


class dtype:
    def __init__(self, name, size):
        self.name, self.size = name, size

    def __str__(self):
        return f"torch.{self.name}"


float16 = dtype("float16", 2)
int64 = dtype("int64", 8)
_CPU = types.SimpleNamespace(type="cpu", index=None)


class Tensor:
    def __init__(self, shape, dtype=float16, device=_CPU):
        self.shape, self.dtype, self.device = tuple(shape), dtype, device

    def __getitem__(self, index):
        index = index if isinstance(index, tuple) else (index,)
        shape = list(self.shape)
        for d, s in enumerate(index):
            start, stop, _ = s.indices(shape[d])
            shape[d] = max(0, stop - start)
        return Tensor(shape, self.dtype, self.device)

    def to(self, device):
        return self

    def expand(self, *sizes):
        return Tensor([n if s == -1 else s for s, n in zip(sizes, self.shape)], self.dtype, self.device)

    def contiguous(self):
        return self

    def numel(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    def element_size(self):
        return self.dtype.size


def cat(tensors, dim):
    shape = list(tensors[0].shape)
    shape[dim] = sum(t.shape[dim] for t in tensors)
    return Tensor(shape, tensors[0].dtype)


class Generator:
    def __init__(self, device=None):
        pass

    def manual_seed(self, seed):
        return self


def randint(low, high, size, generator=None):
    return Tensor(size, int64)


def tensor(values, dtype=float16):
    return Tensor([len(values)], dtype)


def inference_mode():
    return contextlib.nullcontext()


def get_num_threads():
    return 3


class cuda:
    @staticmethod
    def empty_cache():
        pass
