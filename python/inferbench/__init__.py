"""inferbench for Python callables: the C library's method (warm-up until
steady, CUDA events on the very stream, statistics, throughput search,
pitfalls, reports) applied to a callable, through ctypes over
libinferbench.so. docs/python.md says how to use it and when the binding's
own overhead matters.

    import inferbench
    r = inferbench.latency(lambda: model(x), device="cuda")
    r.print(); r.save_json("r.json"); r.save_html("r.html")
"""

import ctypes
import platform
import time

from . import _lib as L
from ._backend import CallableWorkload
from ._errors import CallableError, InferbenchError, Interrupted
from ._generate import GenerationCallbacks, gen_config, gen_info
from ._graph import cuda_graph
from ._hf import hf_generation
from ._result import Result

__all__ = ["latency", "throughput", "pitfalls", "generate", "serve_generation", "hf_generation", "calibrate",
           "binding_overhead", "cuda_graph", "Result", "InferbenchError", "CallableError", "Interrupted"]
__version__ = "0.1.0"

_REPORTS = {  # kind: (result struct, measure, text, json, html, free)
    "latency": ("ib_latency_result", "ib_measure_latency", "ib_latency_report_text", "ib_latency_report_json",
                "ib_latency_report_html", "ib_latency_result_free"),
    "throughput": ("ib_throughput_result", "ib_measure_throughput", "ib_throughput_report_text",
                   "ib_throughput_report_json", "ib_throughput_report_html", None),
    "pitfalls": ("ib_pitfalls_result", "ib_measure_pitfalls", "ib_pitfalls_report_text",
                 "ib_pitfalls_report_json", "ib_pitfalls_report_html", "ib_pitfalls_result_free"),
}


def _config(runs, warmup_runs, warmup_ms, warmup_max_ms, precision, max_time_ms, exclude_launch, flush_l2,
            steady=True, cfg=None, energy=None):
    """The run options given set on cfg (a fresh ib_config when None,
    else one whose defaults another init filled). energy: whether the
    energy counters are read (False: --no-energy; None: the init's)."""
    if cfg is None:
        cfg = L.Config()
        L.lib().ib_config_init(ctypes.byref(cfg))
    cfg.warmup_until_steady = steady
    given = dict(runs=runs, warmup_runs=warmup_runs, warmup_ms=warmup_ms, warmup_max_ms=warmup_max_ms,
                 precision=precision, max_time_ms=max_time_ms)
    for key, value in given.items():
        if value is not None:
            if value < 0 or (key == "runs" and value < 1):
                raise InferbenchError(f"{key}={value}: expected a {'positive' if key == 'runs' else 'non-negative'} number")
            setattr(cfg, key, value)
    cfg.exclude_launch, cfg.flush_l2 = exclude_launch, flush_l2
    if energy is not None:
        cfg.measure_energy = bool(energy)
    return cfg


def _measure(kind, workload, cfg, measure_cfg):
    """Opens workload, measures it as kind, and returns its Result; raises
    (with the partial result) when the measurement failed."""
    lib = L.lib()
    names = _REPORTS[kind]
    overhead = binding_overhead()
    cfg.cancel = ctypes.pointer(workload.cancel)
    w = workload.open()
    out = ctypes.create_string_buffer(L.struct_size(names[0]))
    err = L.Error()
    try:
        with workload.current():
            status = getattr(lib, names[1])(w, ctypes.byref(measure_cfg), out, ctypes.byref(err))
        info = lib.ib_workload_get_info(w)
        result = Result(kind, L.take_string(getattr(lib, names[3])(out, info, ctypes.byref(measure_cfg))),
                        L.take_string(getattr(lib, names[2])(out, info)),
                        L.take_string(getattr(lib, names[4])(out, info)),
                        _binding_facts(workload, overhead))
    finally:
        if names[5]:
            getattr(lib, names[5])(out)
        lib.ib_workload_destroy(w)
    if status not in (L.IB_OK, L.IB_ERR_NOT_MET):
        workload.raise_failure(status, err, result if _measured_some(result) else None)
    _warn_after_latency(workload, result)
    return result


def _measured_some(result):
    if result.kind == "generation":
        return bool(result.data.get("runs"))
    if result.kind == "latency":
        return bool(result.latency_ms and result.latency_ms.get("n"))
    return True


def _binding_facts(workload, overhead):
    facts = {"language": "python", "python": platform.python_version(),
             "host_overhead_us": overhead[0], "plain_call_us": overhead[1], "warnings": []}
    if workload.stream is not None:
        facts["stream"] = workload.stream.handle
        facts["runtime"] = workload.stream.runtime_name()
    return facts


def _other_stream_warning(stream_ms, after_ms):
    """The warning for work left on the device once the timed stream was
    done (medians in ms, from CallableWorkload.probe_calls_ms), or None.
    Events on an idle stream read the host's own time between them, so
    they cannot tell work queued elsewhere; what still runs after the timed
    stream is done can."""
    if after_ms > max(0.05, 0.1 * stream_ms):
        return (f"the device was still busy {after_ms * 1000:.1f} us after the timed stream was done "
                f"({stream_ms * 1000:.1f} us): the callable queued work on another stream than the one timed, "
                "and the events do not cover it")
    return None


def _warn_after_latency(workload, result):
    """The binding's own check of a latency timed with events: a few more
    calls, each from an idle device, for work left on another stream.
    Whether the GPU waited for the host is the library's judgement (its
    `host_bound` warning: the same calls with their launch held against
    them as they are, docs/method.md), not the binding's: how long a call
    takes to return says nothing of it when the host queues faster than
    the GPU runs."""
    if result.kind != "latency" or result.data.get("timing") != "device-events" or not result.latency_ms:
        return
    try:
        _, stream_ms, after_ms = workload.probe_calls_ms()
    except Exception:  # the callable failing now is not this check's to report
        return
    warning = _other_stream_warning(stream_ms, after_ms)
    if warning:
        result.data["binding"]["warnings"].append(warning)


def latency(fn, device="cpu", *, stream=None, device_id=0, name=None, batch=1, runs=None, warmup_runs=None,
            warmup_ms=None, warmup_max_ms=None, precision=None, max_time_ms=None, exclude_launch=False,
            flush_l2=False, steady=True, input_shape=None, energy=True):
    """The latency of fn() (no argument), measured as the C program measures
    a model: one cold run apart, warm-up until steady, then `runs` timed
    runs (default 300), or until the median is known to `precision`.
    device "cuda": fn enqueues its work on the current CUDA stream, which is
    `stream` (a handle, or an object with .cuda_stream) or PyTorch's
    current stream, made current around the measurement; the runs are timed
    with CUDA events on it. device "cpu": the host clock around each call.
    batch: what one call processes (reported). steady=False: the warm-up
    ends after warmup_runs and warmup_ms, steady or not (--no-steady).
    energy: read the energy counters (the GPU's on "cuda", the CPU
    package's where readable) around the timed runs: Result.energy,
    .joules_per_item (docs/energy.md); False: not read (--no-energy; their
    step and the idle power cost a few hundred ms). Returns a Result; raises
    CallableError (fn raised), Interrupted (Ctrl-C; .result keeps what was
    measured) or InferbenchError."""
    cfg = _config(runs, warmup_runs, warmup_ms, warmup_max_ms, precision, max_time_ms, exclude_launch, flush_l2,
                  steady, energy=energy)
    workload = CallableWorkload(fn, name=name or _name_of(fn), device=device, device_id=device_id, stream=stream,
                                batch=batch, input_shape=input_shape)
    return _measure("latency", workload, cfg, cfg)


def throughput(fn, device="cpu", *, batches=None, make_batch=None, max_batch=None, latency_budget_ms=0.0,
               stream=None, device_id=0, name=None, runs=None, warmup_runs=None, warmup_ms=None,
               warmup_max_ms=None, input_shape=None, energy=True):
    """The throughput of fn(b) at the batches given (no search), or at the
    batches a search finds up to max_batch (default 4096; out of memory
    ends the growth: make_batch or fn raising MemoryError or torch's
    OutOfMemoryError is the answer "does not fit"). b is make_batch(n) when
    make_batch is given, else the batch size n. energy: each point's
    energy (Result.energy_by_batch, .most_efficient; .energy: the peak's),
    as latency's. Returns a Result."""
    tcfg = L.ThroughputConfig()
    L.lib().ib_throughput_config_init(ctypes.byref(tcfg))
    tcfg.run = _config(runs, warmup_runs, warmup_ms, warmup_max_ms, None, None, False, False, energy=energy)
    if max_batch is not None:
        tcfg.max_batch = max_batch
    tcfg.latency_budget_ms = latency_budget_ms
    if batches is not None:
        batches = [int(b) for b in batches]
        if not batches or min(batches) < 1:
            raise InferbenchError(f"batches {batches}: expected batch sizes of at least 1")
        array = (ctypes.c_int64 * len(batches))(*batches)
        tcfg.batches, tcfg.n_batches = ctypes.cast(array, ctypes.POINTER(ctypes.c_int64)), len(batches)
    workload = CallableWorkload(fn, name=name or _name_of(fn), device=device, device_id=device_id, stream=stream,
                                batch=batches[0] if batches else 1, batched=True, make_batch=make_batch,
                                input_shape=input_shape)
    return _measure("throughput", workload, tcfg.run, tcfg)


def pitfalls(fn, device="cpu", *, stream=None, device_id=0, name=None, runs=None, warmup_runs=None,
             warmup_ms=None, warmup_max_ms=None, input_shape=None, energy=True):
    """fn measured the correct way and each classic wrong way that applies
    to a callable (on CUDA: the host clock without a sync; everywhere: one
    run taken as the answer), and the energy rows where there is a counter
    (Result.energy: the correct row's). Each compared row carries the 95%
    interval of its difference (error_ci95_pct, as compare computes it) and
    its verdict ("reads low", "reads high", "within noise" when the interval
    holds 0, "no interval"), docs/pitfalls.md. Returns a Result."""
    cfg = _config(runs, warmup_runs, warmup_ms, warmup_max_ms, None, None, False, False, energy=energy)
    workload = CallableWorkload(fn, name=name or _name_of(fn), device=device, device_id=device_id, stream=stream,
                                input_shape=input_shape)
    return _measure("pitfalls", workload, cfg, cfg)


def generate(*, prefill, step, clear, synchronize=None, fork=None, set_sequences=None, sample=None, reopen=None,
             set_threads=None, device="cpu", stream=None, device_id=0, name=None, info=None, settings=None,
             clock=None, clock_resolution_ms=0.0, prompt_tokens=None, new_tokens=None, depth=None, ctx_per_seq=None,
             sequences=None, search_sequences=False, max_sequences=None, sequence_runs=None, tpot_budget_ms=0.0,
             time_sampling=False, pitfalls=False, runs=None, warmup_runs=None, warmup_ms=None, warmup_max_ms=None,
             precision=None, max_time_ms=None, min_runs=None, max_runs=None, steady=True):
    """A generative model measured token by token by the library's
    generation method (docs/generate.md), its operations given as callables
    (docs/python.md, "Generative models"): prefill(seq, pos, n_tokens),
    step(n_seqs, pos), clear(); synchronize() (default on "cuda": the timed
    stream's, that stream made current around the measurement; on "cpu":
    none, the calls are synchronous); fork(n_seqs, n_pos) and
    set_sequences(n_seqs, ctx_per_seq) for sequences decoded together
    (MemoryError or torch's OutOfMemoryError from set_sequences: "does not
    fit"); sample(seq), reopen(), set_threads(n) optional. info: what the
    result states about the model (ib_gen_info's fields, and
    kv_bytes_per_token); settings: the options in effect, as strings.
    clock: a clock of your own in ms (default the host's monotonic clock).
    Returns a Result of kind "generation"; raises CallableError,
    Interrupted or InferbenchError as latency does."""
    g_info, per_token = gen_info(info, settings, device, device_id, name or "python callables")
    workload = GenerationCallbacks(prefill=prefill, step=step, clear=clear, synchronize=synchronize, fork=fork,
                                   set_sequences=set_sequences, sample=sample, reopen=reopen,
                                   set_threads=set_threads, device=device, device_id=device_id, stream=stream,
                                   clock=clock, info=g_info, per_token=per_token)
    workload.table.clock_resolution_ms = clock_resolution_ms
    cfg, counts = gen_config(prompt_tokens=prompt_tokens, new_tokens=new_tokens, depth=depth, ctx_per_seq=ctx_per_seq,
                             sequences=sequences, search_sequences=search_sequences, max_sequences=max_sequences,
                             sequence_runs=sequence_runs, tpot_budget_ms=tpot_budget_ms, time_sampling=time_sampling,
                             pitfalls=pitfalls)
    _config(runs, warmup_runs, warmup_ms, warmup_max_ms, precision, max_time_ms, False, False, steady, cfg=cfg.run)
    for key, value in dict(min_runs=min_runs, max_runs=max_runs).items():
        if value is not None:
            setattr(cfg.run, key, value)
    return _measure_generation(workload, cfg)


def _lengths(what, value):
    """(min, max) of a fixed count or a (lo, hi) range of tokens."""
    lo, hi = (value, value) if isinstance(value, int) else tuple(value)
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (lo, hi)):
        raise InferbenchError(f"{what}={value!r}: a whole number or a (lo, hi) pair of them")
    return lo, hi


def _serve_config(*, rate, arrivals, trace, burstiness, seed, requests, prompt_tokens, new_tokens, slots,
                  prefill_chunk, ctx_per_slot, warmup_requests, slo_ttft_ms, slo_tpot_ms, slo_e2e_ms):
    """The ib_gen_serve_config and the trace it points to (keep it alive)."""
    cfg = L.GenServeConfig()
    L.lib().ib_gen_serve_config_init(ctypes.byref(cfg))
    specs = None
    if trace is not None:
        specs = (L.GenRequestSpec * len(trace))(*[L.GenRequestSpec(float(a), int(p), int(o)) for a, p, o in trace])
        cfg.arrivals, cfg.trace, cfg.n_trace = L.IB_ARRIVALS_TRACE, specs, len(trace)
    elif arrivals not in ("poisson", "constant"):
        raise InferbenchError(f"arrivals={arrivals!r}: 'poisson', 'constant', or give trace=")
    else:
        cfg.arrivals = L.IB_ARRIVALS_POISSON if arrivals == "poisson" else L.IB_ARRIVALS_CONSTANT
        cfg.rate = float(rate or 0)
    cfg.prompt_min, cfg.prompt_max = _lengths("prompt_tokens", prompt_tokens)
    cfg.output_min, cfg.output_max = _lengths("new_tokens", new_tokens)
    for key, value in dict(burstiness=burstiness, seed=seed, requests=requests, slots=slots,
                           prefill_chunk=prefill_chunk, ctx_per_slot=ctx_per_slot, warmup_requests=warmup_requests,
                           slo_ttft_ms=slo_ttft_ms, slo_tpot_ms=slo_tpot_ms, slo_e2e_ms=slo_e2e_ms).items():
        if value is not None:
            setattr(cfg, key, value)
    return cfg, specs


def serve_generation(*, prefill, step, clear, decode_batch, remove_sequence, synchronize=None, set_sequences=None,
                     device="cpu", stream=None, device_id=0, name=None, info=None, settings=None, clock=None,
                     clock_resolution_ms=0.0, rate=None, arrivals="poisson", trace=None, burstiness=None, seed=None,
                     requests=None, prompt_tokens=512, new_tokens=128, slots=None, prefill_chunk=None,
                     ctx_per_slot=None, warmup_requests=None, slo_ttft_ms=None, slo_tpot_ms=None, slo_e2e_ms=None):
    """A generative model served under load by the library's engine
    (docs/serve-generative.md; docs/python.md, "Serving a generative
    model"): requests on a seeded schedule (rate=, arrivals="poisson" or
    "constant", burstiness=, seed=, requests=, prompt_tokens= and
    new_tokens= a count or a (lo, hi) range) or a trace (a list of
    (arrival_ms, prompt_tokens, output_tokens)), decoded together:
    decode_batch(entries) gets each step's mixed batch as a list of (seq,
    pos, n_tokens, logits) tuples, remove_sequence(seq, from_pos) drops a
    sequence's positions from from_pos on (0: all, when its request ends); prefill, step and clear as generate's (the method's
    contract requires them, the engine does not call them). info states
    n_batch, the most tokens one decode_batch takes (default 1048576: none
    of its own). Returns a Result of kind "serve_generative"."""
    info = dict(info or {})
    info.setdefault("n_batch", 1 << 20)
    g_info, per_token = gen_info(info, settings, device, device_id, name or "python callables")
    if not callable(decode_batch) or not callable(remove_sequence):
        raise InferbenchError("serve_generation needs decode_batch and remove_sequence callables")
    workload = GenerationCallbacks(prefill=prefill, step=step, clear=clear, synchronize=synchronize, fork=None,
                                   set_sequences=set_sequences, sample=None, reopen=None, set_threads=None,
                                   device=device, device_id=device_id, stream=stream, clock=clock, info=g_info,
                                   per_token=per_token, decode_batch=decode_batch, remove_sequence=remove_sequence)
    workload.table.clock_resolution_ms = clock_resolution_ms
    cfg, specs = _serve_config(rate=rate, arrivals=arrivals, trace=trace, burstiness=burstiness, seed=seed,
                               requests=requests, prompt_tokens=prompt_tokens, new_tokens=new_tokens, slots=slots,
                               prefill_chunk=prefill_chunk, ctx_per_slot=ctx_per_slot,
                               warmup_requests=warmup_requests, slo_ttft_ms=slo_ttft_ms, slo_tpot_ms=slo_tpot_ms,
                               slo_e2e_ms=slo_e2e_ms)
    lib = L.lib()
    overhead = binding_overhead()
    cfg.run.cancel = ctypes.pointer(workload.cancel)
    g = workload.open()
    out = ctypes.create_string_buffer(L.struct_size("ib_gen_serve_result"))
    err = L.Error()
    result = None
    try:
        with workload.current():
            status = lib.ib_measure_gen_serve(g, ctypes.byref(cfg), out, ctypes.byref(err))
        ref = L.ResultRef(kind=L.IB_RESULT_GEN_SERVE, gen_serve=ctypes.addressof(out),
                          gen_serve_cfg=ctypes.addressof(cfg))
        served = ctypes.c_void_p.from_buffer(out, L.GEN_SERVE_REQUESTS_OFFSET).value is not None
        if served:
            reports = [L.take_string(lib.ib_report(ctypes.byref(ref), fmt)) for fmt in (b"json", b"text")]
            result = Result("serve_generative", reports[0], reports[1], None, _binding_facts(workload, overhead))
    finally:
        lib.ib_gen_serve_result_free(out)
        lib.ib_gen_destroy(g)
    del specs  # the trace lived as long as the measurement
    if status != L.IB_OK:
        workload.raise_failure(status, err, result)
    return result


def _measure_generation(workload, cfg):
    lib = L.lib()
    overhead = binding_overhead()
    cfg.run.cancel = ctypes.pointer(workload.cancel)
    g = workload.open()
    out = ctypes.create_string_buffer(L.struct_size("ib_gen_result"))
    err = L.Error()
    try:
        with workload.current():
            status = lib.ib_measure_generation(g, ctypes.byref(cfg), out, ctypes.byref(err))
        ref = L.ResultRef(kind=L.IB_RESULT_GENERATION, generation=ctypes.addressof(out),
                          gen_cfg=ctypes.addressof(cfg))
        reports = [L.take_string(lib.ib_report(ctypes.byref(ref), fmt)) for fmt in (b"json", b"text", b"html")]
        result = Result("generation", reports[0], reports[1], reports[2], _binding_facts(workload, overhead))
    finally:
        lib.ib_gen_result_free(out)
        lib.ib_gen_destroy(g)
    if status not in (L.IB_OK, L.IB_ERR_NOT_MET):
        workload.raise_failure(status, err, result if _measured_some(result) else None)
    return result


def _name_of(fn):
    return getattr(fn, "__qualname__", None) or type(fn).__name__


_overhead = None


def _empty():
    pass


def binding_overhead():
    """(through the binding, plain loop): the host time one run of an empty
    callable takes timed by the library through the binding, and called in
    a plain Python loop, in microseconds; measured once per process."""
    global _overhead
    if _overhead is None:
        cfg = _config(300, 20, 20.0, 500.0, None, None, False, False, energy=False)  # its energy means nothing
        cfg.sample_gpu_state = False
        workload = CallableWorkload(_empty, name="empty callable", device="cpu")
        lib = L.lib()
        w = workload.open()
        out = ctypes.create_string_buffer(L.struct_size("ib_latency_result"))
        try:
            err = L.Error()
            status = lib.ib_measure_latency(w, ctypes.byref(cfg), out, ctypes.byref(err))
            if status != L.IB_OK:
                workload.raise_failure(status, err, None)
            import json
            doc = json.loads(L.take_string(lib.ib_latency_report_json(out, lib.ib_workload_get_info(w), ctypes.byref(cfg))))
        finally:
            lib.ib_latency_result_free(out)
            lib.ib_workload_destroy(w)
        _overhead = (doc["latency_ms"]["p50"] * 1000.0, _plain_call_us())
    return _overhead


def _plain_call_us(n=2000):
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter_ns()
        for _ in range(n):
            _empty()
        best = min(best, (time.perf_counter_ns() - t0) / n / 1000.0)
    return best


def calibrate(device="cpu", device_id=0, runs=None):
    """The tool's accuracy and the binding's overhead. On "cuda": the C
    program's calibration (spin kernels of known duration, the harness's
    own cost, the timer's resolution) with the binding's row added; on
    "cpu": the binding's row alone. Returns a Result of kind calibration."""
    overhead = binding_overhead()
    facts = {"language": "python", "python": platform.python_version(), "host_overhead_us": overhead[0],
             "plain_call_us": overhead[1], "warnings": []}
    if device != "cuda":
        import json
        return Result("calibration", json.dumps({"schema": "inferbench.binding/1"}),
                      "inferbench calibrate: the Python binding (no GPU calibration on the CPU)\n", None, facts)
    lib = L.lib()
    cfg = _config(runs, None, None, None, None, None, False, False)
    out = ctypes.create_string_buffer(L.struct_size("ib_calibration_result"))
    err = L.Error()
    status = lib.ib_calibrate(device_id, ctypes.byref(cfg), None, 0, out, ctypes.byref(err))
    if status != L.IB_OK:
        raise InferbenchError(err.text() or L.status_name(status), None, L.status_name(status))
    return Result("calibration", L.take_string(lib.ib_calibration_report_json(out, ctypes.byref(cfg))),
                  L.take_string(lib.ib_calibration_report_text(out)), None, facts)
