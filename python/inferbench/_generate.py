"""A generative model driven from Python, measured by the library's
generation method (docs/generate.md): its operations are Python callables,
made the slots of the public table ib_gen_callbacks (include/inferbench.h)
and opened with ib_gen_open_callbacks. The library then does everything
else as for llama.cpp: the cold first prefill and step apart, warm-up
until steady, the timed requests (the host clock around each call and its
synchronize), the sequences and their search, the pitfalls, the reports.

As in _backend.py, no exception may leave a callback: each slot catches,
keeps it for the caller, and returns a status with one line.
"""

import ctypes
import os

from . import _lib as L
from ._backend import Failures, describe_exception
from ._cuda import Stream
from ._errors import CallableError, InferbenchError

# ib_gen_info's fields a caller may state (info=), and what the binding
# computes from: kv_bytes_per_token (kv_bytes = it x the context's tokens,
# after every change of the sequences).
_INFO_TEXT = ("model", "arch", "model_type", "weights_type", "kv_type", "runtime_version", "runtime_library")
_INFO_INT = ("n_params", "model_bytes", "n_layers", "n_embd", "n_vocab", "n_ctx_train", "n_gpu_layers", "n_ctx",
             "n_seq_max", "n_batch", "n_ubatch", "kv_bytes", "n_threads", "n_threads_default", "n_cpus_allowed")
_INFO_BOOL = ("flash_attn",)


def gen_info(info, settings, device, device_id, name):
    """The ib_gen_info of what the caller states (a dict of its fields,
    settings: the options in effect as strings), and kv_bytes_per_token."""
    info = dict(info or {})
    per_token = info.pop("kv_bytes_per_token", None)
    g = L.GenInfo()
    for key, value in info.items():
        if key in _INFO_TEXT:
            setattr(g, key, str(value).encode("utf-8", "replace")[:getattr(L.GenInfo, key).size - 1])
        elif key in _INFO_INT:
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InferbenchError(f"info {key}={value!r}: expected a whole number of at least 0")
            setattr(g, key, value)
        elif key in _INFO_BOOL:
            setattr(g, key, bool(value))
        else:
            raise InferbenchError(f"info: unknown key {key!r} (known: {', '.join(_INFO_TEXT + _INFO_INT + _INFO_BOOL)}, "
                                  "kv_bytes_per_token)")
    if name and "model" not in info:
        g.model = name.encode("utf-8", "replace")[:255]
    g.device, g.device_id = (L.IB_DEVICE_CUDA if device == "cuda" else L.IB_DEVICE_CPU), device_id
    if "n_cpus_allowed" not in info:
        g.n_cpus_allowed = cpus_allowed()
    for key, value in (settings or {}).items():
        _set_option(g.options, str(key), str(value))
    if per_token is not None and (isinstance(per_token, bool) or not isinstance(per_token, int) or per_token < 0):
        raise InferbenchError(f"info kv_bytes_per_token={per_token!r}: expected a whole number of at least 0")
    return g, per_token


def _set_option(options, key, value):
    if not key or len(key) >= L.IB_OPTION_KEY_LEN or len(value) >= L.IB_OPTION_VALUE_LEN:
        raise InferbenchError(f"settings {key}={value}: keys are 1 to {L.IB_OPTION_KEY_LEN - 1} characters, values "
                              f"at most {L.IB_OPTION_VALUE_LEN - 1}")
    if options.n == L.IB_MAX_OPTIONS:
        raise InferbenchError(f"settings: at most {L.IB_MAX_OPTIONS}")
    item = options.items[options.n]
    item.key, item.value = key.encode(), value.encode()
    options.n += 1


class GenerationCallbacks(Failures):
    """The callables as the slots of one ib_gen_callbacks table."""

    who = "the callable"

    def __init__(self, *, prefill, step, clear, synchronize, fork, set_sequences, sample, reopen, set_threads,
                 device, device_id, stream, clock, info, per_token, decode_batch=None, remove_sequence=None):
        if device not in ("cpu", "cuda"):
            raise InferbenchError(f"device {device!r}: expected 'cpu' or 'cuda'")
        given = dict(prefill=prefill, step=step, clear=clear)
        for key, fn in given.items():
            if not callable(fn):
                raise InferbenchError(f"{key}={fn!r} is not callable (required)")
        optional = dict(synchronize=synchronize, fork=fork, set_sequences=set_sequences, sample=sample,
                        reopen=reopen, set_threads=set_threads, clock=clock, decode_batch=decode_batch,
                        remove_sequence=remove_sequence)
        for key, fn in optional.items():
            if fn is not None and not callable(fn):
                raise InferbenchError(f"{key}={fn!r} is not callable")
        self.stream = Stream(stream, device_id) if device == "cuda" else None
        # On the GPU the calls return once queued: the timed stream's
        # synchronize is what waits for the logits, unless one is given.
        if synchronize is None and self.stream is not None:
            synchronize = self.stream.synchronize
        self.fns = dict(given, **optional)
        self.fns["synchronize"] = synchronize
        self.info, self.per_token = info, per_token
        self.clock_failure = None
        self._failures_init()
        self.table = self._table()

    def _slot(self, name, what):
        """The ctypes function of slot `name`: fn(*args), its exception a
        status; `what` says where, from the arguments."""
        fn = self.fns[name]

        def slot(user, *args):
            err = args[-1]
            try:
                fn(*args[:-1])
                return L.IB_OK
            except BaseException as e:
                detail = what(*args[:-1])
                return self._fail(e, err, f"in {name}: {detail}" if detail else f"in {name}")

        return slot

    def _decode_batch(self, user, entries, n, err):
        """decode_batch(entries): the mixed batch as a list of (seq, pos,
        n_tokens, logits) tuples, in the engine's order."""
        batch = [(e.seq, e.pos, e.n_tokens, e.logits) for e in entries[:n]]
        try:
            self.fns["decode_batch"](batch)
            return L.IB_OK
        except BaseException as e:
            return self._fail(e, err, f"in decode_batch: {len(batch)} entries, {sum(b[2] for b in batch)} tokens")

    def _describe(self, user, info):
        if self.per_token is not None:
            info.contents.kv_bytes = self.per_token * info.contents.n_ctx

    def _now(self, user):
        try:
            return float(self.fns["clock"]())
        except BaseException as e:
            # A clock cannot fail in the library: this one ends the
            # measurement at the next check, and is raised then.
            self.clock_failure = self.clock_failure or e
            self.cancel.value = 1
            return float("nan")

    def raise_failure(self, status, err, result):
        if self.clock_failure is not None:
            raise CallableError(f"the clock raised {describe_exception(self.clock_failure)}", result,
                                L.status_name(status)) from self.clock_failure
        super().raise_failure(status, err, result)

    def _table(self):
        cb = L.GenCallbacks()
        L.lib().ib_gen_callbacks_init(ctypes.byref(cb))
        where = {
            "clear": (L.GenStatusFn, lambda: ""),
            "prefill": (L.GenPrefillFn, lambda seq, pos, n: f"sequence {seq}, position {pos}, {n} tokens"),
            "step": (L.GenTwoFn, lambda n, pos: f"{n} sequences at position {pos}"),
            "synchronize": (L.GenStatusFn, lambda: ""),
            "fork": (L.GenTwoFn, lambda n, pos: f"{n} sequences, {pos} positions"),
            "set_sequences": (L.GenTwoFn, lambda n, ctx: f"{n} sequences of {ctx} tokens"),
            "sample": (L.GenOneFn, lambda seq: f"sequence {seq}"),
            "reopen": (L.GenStatusFn, lambda: ""),
            "set_threads": (L.GenOneFn, lambda n: f"{n} threads"),
            "remove_sequence": (L.GenTwoFn, lambda seq, pos: f"sequence {seq} from position {pos}"),
        }
        self._callbacks = []  # kept alive as long as the table
        for name, (kind, what) in where.items():
            if self.fns[name] is not None:
                f = kind(self._slot(name, what))
                self._callbacks.append(f)
                setattr(cb, name, f)
        if self.fns["decode_batch"] is not None:
            f = L.GenBatchFn(self._decode_batch)
            self._callbacks.append(f)
            cb.decode_batch = f
        f = L.GenDescribeFn(self._describe)
        self._callbacks.append(f)
        cb.describe = f
        if self.fns["clock"] is not None:
            f = L.GenNowFn(self._now)
            self._callbacks.append(f)
            cb.now_ms = f
        return cb

    def open(self):
        """The library's generation workload (ib_gen_destroy releases it)."""
        g, err = ctypes.c_void_p(), L.Error()
        st = L.lib().ib_gen_open_callbacks(ctypes.byref(self.table), ctypes.byref(self.info), ctypes.byref(g),
                                           ctypes.byref(err))
        if st != L.IB_OK:
            self.raise_failure(st, err, result=None)
        return g


def gen_config(*, prompt_tokens, new_tokens, depth, ctx_per_seq, sequences, search_sequences, max_sequences,
               sequence_runs, tpot_budget_ms, time_sampling, pitfalls):
    """The ib_gen_config (its run left to the caller) and the array of
    sequence counts it points to (keep it alive while measuring)."""
    cfg = L.GenConfig()
    L.lib().ib_gen_config_init(ctypes.byref(cfg))
    for key, value in dict(prompt_tokens=prompt_tokens, new_tokens=new_tokens, depth=depth, ctx_per_seq=ctx_per_seq,
                           max_sequences=max_sequences, sequence_runs=sequence_runs).items():
        if value is not None:
            if isinstance(value, bool) or not isinstance(value, int):
                raise InferbenchError(f"{key}={value!r}: expected a whole number")
            setattr(cfg, key, value)  # the library judges the range, with one message
    array = None
    if sequences is not None:
        counts = list(sequences)
        if not counts or any(isinstance(n, bool) or not isinstance(n, int) for n in counts):
            raise InferbenchError(f"sequences={sequences!r}: expected a list of whole numbers")
        array = (ctypes.c_int32 * len(counts))(*counts)
        cfg.sequences, cfg.n_sequences = ctypes.cast(array, ctypes.POINTER(ctypes.c_int32)), len(counts)
    cfg.search = bool(search_sequences)
    cfg.tpot_budget_ms = float(tpot_budget_ms)
    cfg.time_sampling, cfg.pitfalls = bool(time_sampling), bool(pitfalls)
    return cfg, array


def cpus_allowed():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 0
