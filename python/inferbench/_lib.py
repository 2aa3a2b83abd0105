"""The shared library, found and loaded with ctypes, and the mirrors of the
public structs the binding fills (include/inferbench.h and
include/inferbench_backend.h).

The mirrors are checked against the library's own sizes (ib_struct_size)
when it is loaded: a header changed since this file was written is refused
with a clear message rather than misread. Results are never mirrored: they
are allocated with the library's size and read back through the JSON
report the C program writes too.
"""

import ctypes
import ctypes.util
import os

from ._errors import InferbenchError

IB_OK = 0
IB_ERR_DEVICE_OOM = -7
IB_ERR_RUNTIME = -8
IB_ERR_INTERRUPTED = -10
IB_ERR_NOT_MET = -12

IB_DEVICE_CPU, IB_DEVICE_CUDA = 1, 2

IB_CAP_GPU = 1 << 0
IB_CAP_CUDA_STREAM = 1 << 1
IB_CAP_DEVICE_TIMING = 1 << 2
IB_CAP_ASYNC_RUN = 1 << 3
IB_CAP_BATCH_DIM = 1 << 6

IB_BACKEND_ABI_VERSION = 4
IB_MAX_RANK = 8
IB_MAX_TENSORS = 16

# Where the library is looked for, in order (INFERBENCH_LIBRARY first).
_LIBRARY_ENV = "INFERBENCH_LIBRARY"
_HERE = os.path.dirname(os.path.abspath(__file__))
_BUILD_COPIES = [os.path.join(_HERE, "..", "..", "build", "libinferbench.so")]
_INSTALLED_NAMES = ["libinferbench.so.0", "libinferbench.so"]


class Error(ctypes.Structure):
    _fields_ = [("message", ctypes.c_char * 512)]

    def text(self):
        return self.message.decode("utf-8", "replace")


ProgressFn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)


class Config(ctypes.Structure):
    _fields_ = [
        ("warmup_runs", ctypes.c_int64),
        ("warmup_ms", ctypes.c_double),
        ("warmup_until_steady", ctypes.c_bool),
        ("warmup_max_ms", ctypes.c_double),
        ("runs", ctypes.c_int64),
        ("precision", ctypes.c_double),
        ("min_runs", ctypes.c_int64),
        ("max_runs", ctypes.c_int64),
        ("max_time_ms", ctypes.c_double),
        ("flush_l2", ctypes.c_bool),
        ("exclude_launch", ctypes.c_bool),
        ("sample_gpu_state", ctypes.c_bool),
        ("measure_energy", ctypes.c_bool),
        ("cancel", ctypes.POINTER(ctypes.c_int)),
        ("progress", ctypes.c_void_p),
        ("progress_user", ctypes.c_void_p),
        ("sync", ctypes.c_void_p),  # a fleet's barrier (docs/fleet.md): NULL here
        ("sync_user", ctypes.c_void_p),
    ]


class ThroughputConfig(ctypes.Structure):
    _fields_ = [
        ("run", Config),
        ("max_batch", ctypes.c_int64),
        ("latency_budget_ms", ctypes.c_double),
        ("knee_fraction", ctypes.c_double),
        ("batches", ctypes.POINTER(ctypes.c_int64)),
        ("n_batches", ctypes.c_size_t),
        ("from_top", ctypes.c_bool),
        ("items_only", ctypes.c_bool),
        ("max_time_ms", ctypes.c_double),
    ]


class TensorInfo(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char * 128),
        ("type", ctypes.c_char * 16),
        ("rank", ctypes.c_int),
        ("dims", ctypes.c_int64 * IB_MAX_RANK),
        ("dim_names", (ctypes.c_char * 32) * IB_MAX_RANK),
        ("values", ctypes.c_char * 256),
    ]


IB_MAX_OPTIONS = 16
IB_OPTION_KEY_LEN = 32
IB_OPTION_VALUE_LEN = 64


class OptionItem(ctypes.Structure):
    _fields_ = [("key", ctypes.c_char * IB_OPTION_KEY_LEN), ("value", ctypes.c_char * IB_OPTION_VALUE_LEN)]


class OptionList(ctypes.Structure):
    _fields_ = [("n", ctypes.c_size_t), ("items", OptionItem * IB_MAX_OPTIONS)]


class WorkloadInfo(ctypes.Structure):
    _fields_ = [
        ("model", ctypes.c_char * 256),
        ("provider", ctypes.c_char * 64),
        ("device", ctypes.c_int),
        ("batch", ctypes.c_int64),
        ("has_batch_dim", ctypes.c_bool),
        ("n_inputs", ctypes.c_int),
        ("n_outputs", ctypes.c_int),
        ("inputs", TensorInfo * IB_MAX_TENSORS),
        ("outputs", TensorInfo * IB_MAX_TENSORS),
        ("flops_per_item", ctypes.c_double),
        ("options", OptionList),
        ("math", ctypes.c_char * 8),
        ("math_default", ctypes.c_bool),
        ("math_of_model", ctypes.c_bool),
    ]


class BackendOption(ctypes.Structure):
    _fields_ = [("key", ctypes.c_char_p), ("value", ctypes.c_char_p)]


class BackendOpenArgs(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("model", ctypes.c_char_p),
        ("options", ctypes.POINTER(BackendOption)),
        ("n_options", ctypes.c_size_t),
        ("device", ctypes.c_int),
        ("device_id", ctypes.c_int),
        ("batch", ctypes.c_int64),
        ("seed", ctypes.c_uint64),
    ]


class BackendHandle(ctypes.Structure):
    _fields_ = [
        ("state", ctypes.c_void_p),
        ("caps", ctypes.c_uint64),
        ("stream", ctypes.c_void_p),
        ("device_id", ctypes.c_int),
    ]


ErrorP = ctypes.POINTER(Error)
OpenFn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(BackendOpenArgs), ctypes.POINTER(BackendHandle), ErrorP)
DescribeFn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.POINTER(WorkloadInfo))
SetBatchFn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int64, ErrorP)
RunFn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ErrorP)
SetRunSyncFn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_bool, ErrorP)
FillFn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_bool, ErrorP)
CloseFn = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
ConfigureFn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ErrorP)


class Backend(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("abi_version", ctypes.c_uint32),
        ("name", ctypes.c_char_p),
        ("description", ctypes.c_char_p),
        ("open", OpenFn),
        ("describe", DescribeFn),
        ("set_batch", SetBatchFn),
        ("run", RunFn),
        ("set_run_sync", SetRunSyncFn),
        ("run_with_copies", RunFn),
        ("reopen", RunFn),
        ("fill_inputs", FillFn),
        ("close", CloseFn),
        ("options", ctypes.c_void_p),  # const ib_backend_option_decl *: a callable declares none
        ("n_options", ctypes.c_size_t),
        ("configure", ConfigureFn),
    ]


class GenInfo(ctypes.Structure):
    """ib_gen_info: what the caller states about its generative model."""
    _fields_ = [
        ("model", ctypes.c_char * 256),
        ("arch", ctypes.c_char * 32),
        ("model_type", ctypes.c_char * 64),
        ("weights_type", ctypes.c_char * 16),
        ("n_params", ctypes.c_uint64),
        ("model_bytes", ctypes.c_uint64),
        ("n_layers", ctypes.c_int32),
        ("n_embd", ctypes.c_int32),
        ("n_vocab", ctypes.c_int32),
        ("n_ctx_train", ctypes.c_int32),
        ("device", ctypes.c_int),
        ("device_id", ctypes.c_int),
        ("n_gpu_layers", ctypes.c_int32),
        ("n_ctx", ctypes.c_int32),
        ("n_seq_max", ctypes.c_int32),
        ("n_batch", ctypes.c_int32),
        ("n_ubatch", ctypes.c_int32),
        ("flash_attn", ctypes.c_bool),
        ("kv_type", ctypes.c_char * 16),
        ("kv_bytes", ctypes.c_uint64),
        ("n_threads", ctypes.c_int32),
        ("n_threads_default", ctypes.c_int32),
        ("n_cpus_allowed", ctypes.c_int32),
        ("runtime_version", ctypes.c_char * 64),
        ("runtime_library", ctypes.c_char * 256),
        ("options", OptionList),
    ]


class GenConfig(ctypes.Structure):
    _fields_ = [
        ("run", Config),
        ("prompt_tokens", ctypes.c_int32),
        ("new_tokens", ctypes.c_int32),
        ("depth", ctypes.c_int32),
        ("ctx_per_seq", ctypes.c_int32),
        ("sequences", ctypes.POINTER(ctypes.c_int32)),
        ("n_sequences", ctypes.c_size_t),
        ("search", ctypes.c_bool),
        ("max_sequences", ctypes.c_int32),
        ("sequence_runs", ctypes.c_int64),
        ("tpot_budget_ms", ctypes.c_double),
        ("knee_fraction", ctypes.c_double),
        ("time_sampling", ctypes.c_bool),
        ("pitfalls", ctypes.c_bool),
        ("engine_cost", ctypes.c_bool),
    ]


GenStatusFn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ErrorP)
GenPrefillFn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32, ctypes.c_int32, ErrorP)
GenTwoFn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32, ErrorP)
GenOneFn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int32, ErrorP)
GenDescribeFn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.POINTER(GenInfo))
GenNowFn = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_void_p)
GenDestroyFn = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class GenBatchEntry(ctypes.Structure):
    """ib_gen_batch_entry: one entry of a mixed batch."""
    _fields_ = [("seq", ctypes.c_int32), ("pos", ctypes.c_int32), ("n_tokens", ctypes.c_int32),
                ("logits", ctypes.c_bool), ("request", ctypes.c_uint32), ("shared", ctypes.c_int32)]


GenBatchFn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(GenBatchEntry), ctypes.c_size_t,
                              ErrorP)
IB_GEN_CALLBACKS_VERSION = 1


class GenCallbacks(ctypes.Structure):
    """ib_gen_callbacks: a generative model's operations (the slots)."""
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("version", ctypes.c_uint32),
        ("user", ctypes.c_void_p),
        ("clear", GenStatusFn),
        ("prefill", GenPrefillFn),
        ("step", GenTwoFn),
        ("synchronize", GenStatusFn),
        ("fork", GenTwoFn),
        ("set_sequences", GenTwoFn),
        ("sample", GenOneFn),
        ("reopen", GenStatusFn),
        ("set_threads", GenOneFn),
        ("describe", GenDescribeFn),
        ("now_ms", GenNowFn),
        ("clock_resolution_ms", ctypes.c_double),
        ("destroy", GenDestroyFn),
        ("decode_batch", GenBatchFn),
        ("remove_sequence", GenTwoFn),
    ]


IB_RESULT_GENERATION = 11
IB_RESULT_GEN_SERVE = 14
IB_ARRIVALS_POISSON, IB_ARRIVALS_CONSTANT, IB_ARRIVALS_TRACE = 0, 1, 2


class _GenServeResultHead(ctypes.Structure):
    """The first members of ib_gen_serve_result: whether it served (its
    requests set) is read from it, the rest from its reports."""
    _fields_ = [("info", GenInfo), ("settings", ctypes.c_int32 * 4), ("requests", ctypes.c_void_p)]


GEN_SERVE_REQUESTS_OFFSET = _GenServeResultHead.requests.offset


class GenRequestSpec(ctypes.Structure):
    """ib_gen_request_spec: one request of a trace."""
    _fields_ = [("arrival_ms", ctypes.c_double), ("prompt_tokens", ctypes.c_int32), ("output_tokens", ctypes.c_int32)]


class GenServeConfig(ctypes.Structure):
    """ib_gen_serve_config: a generative model served under load."""
    _fields_ = [
        ("run", Config),
        ("arrivals", ctypes.c_int),
        ("rate", ctypes.c_double),
        ("burstiness", ctypes.c_double),
        ("seed", ctypes.c_uint64),
        ("requests", ctypes.c_int64),
        ("prompt_min", ctypes.c_int32),
        ("prompt_max", ctypes.c_int32),
        ("output_min", ctypes.c_int32),
        ("output_max", ctypes.c_int32),
        ("trace", ctypes.POINTER(GenRequestSpec)),
        ("n_trace", ctypes.c_size_t),
        ("slots", ctypes.c_int32),
        ("prefill_chunk", ctypes.c_int32),
        ("ctx_per_slot", ctypes.c_int32),
        ("warmup_requests", ctypes.c_int32),
        ("slo_ttft_ms", ctypes.c_double),
        ("slo_tpot_ms", ctypes.c_double),
        ("slo_e2e_ms", ctypes.c_double),
        ("shared_prefix", ctypes.c_int32),
        ("prefix_cache", ctypes.c_bool),
        ("pitfalls", ctypes.c_bool),
        ("engine_cost", ctypes.c_bool),
        ("sample_greedy", ctypes.c_bool),
    ]


class ResultRef(ctypes.Structure):
    """ib_result: which result a report is of (only generation's are set
    here: the other kinds have reports of their own)."""
    _fields_ = [("kind", ctypes.c_int)] + [(name, ctypes.c_void_p) for name in (
        "latency", "throughput", "pitfalls", "calibration", "comparison", "info", "cfg", "throughput_cfg", "a", "b",
        "a_name", "b_name", "sessions_json", "sessions", "serve", "serve_cfg", "best", "best_cfg", "fleet",
        "generation", "gen_cfg", "gen_comparison", "gen_a", "gen_b", "gen_serve", "gen_serve_cfg", "endpoint",
        "gen_serve_comparison", "gen_serve_a", "gen_serve_b", "gen_serve_rates", "gen_serve_rates_cfg",
        "best_serve", "best_serve_cfg")]


_MIRRORS = {
    "ib_error": Error,
    "ib_config": Config,
    "ib_throughput_config": ThroughputConfig,
    "ib_tensor_info": TensorInfo,
    "ib_workload_info": WorkloadInfo,
    "ib_backend": Backend,
    "ib_backend_open_args": BackendOpenArgs,
    "ib_backend_handle": BackendHandle,
    "ib_gen_info": GenInfo,
    "ib_gen_config": GenConfig,
    "ib_gen_callbacks": GenCallbacks,
    "ib_gen_batch_entry": GenBatchEntry,
    "ib_gen_serve_config": GenServeConfig,
    "ib_result": ResultRef,
}

_vp, _cp, _int = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int
_SIGNATURES = {
    "ib_struct_size": (ctypes.c_size_t, [_cp]),
    "ib_status_str": (_cp, [_int]),
    "ib_config_init": (None, [ctypes.POINTER(Config)]),
    "ib_throughput_config_init": (None, [ctypes.POINTER(ThroughputConfig)]),
    "ib_backend_open_args_init": (None, [ctypes.POINTER(BackendOpenArgs)]),
    "ib_workload_open_backend": (_int, [ctypes.POINTER(Backend), ctypes.POINTER(BackendOpenArgs), ctypes.POINTER(_vp), ErrorP]),
    "ib_workload_destroy": (None, [_vp]),
    "ib_workload_get_info": (_vp, [_vp]),
    "ib_measure_latency": (_int, [_vp, ctypes.POINTER(Config), _vp, ErrorP]),
    "ib_latency_result_free": (None, [_vp]),
    "ib_measure_throughput": (_int, [_vp, ctypes.POINTER(ThroughputConfig), _vp, ErrorP]),
    "ib_measure_pitfalls": (_int, [_vp, ctypes.POINTER(Config), _vp, ErrorP]),
    "ib_pitfalls_result_free": (None, [_vp]),
    "ib_calibrate": (_int, [_int, ctypes.POINTER(Config), _vp, ctypes.c_size_t, _vp, ErrorP]),
    "ib_latency_report_text": (_vp, [_vp, _vp]),
    "ib_latency_report_json": (_vp, [_vp, _vp, ctypes.POINTER(Config)]),
    "ib_latency_report_html": (_vp, [_vp, _vp]),
    "ib_throughput_report_text": (_vp, [_vp, _vp]),
    "ib_throughput_report_json": (_vp, [_vp, _vp, ctypes.POINTER(ThroughputConfig)]),
    "ib_throughput_report_html": (_vp, [_vp, _vp]),
    "ib_pitfalls_report_text": (_vp, [_vp, _vp]),
    "ib_pitfalls_report_json": (_vp, [_vp, _vp, ctypes.POINTER(Config)]),
    "ib_pitfalls_report_html": (_vp, [_vp, _vp]),
    "ib_calibration_report_text": (_vp, [_vp]),
    "ib_calibration_report_json": (_vp, [_vp, ctypes.POINTER(Config)]),
    "ib_env_probe": (None, [_int, _vp, ctypes.POINTER(ctypes.c_bool)]),
    "ib_free": (None, [_vp]),
    "ib_gen_callbacks_init": (None, [ctypes.POINTER(GenCallbacks)]),
    "ib_gen_open_callbacks": (_int, [ctypes.POINTER(GenCallbacks), ctypes.POINTER(GenInfo), ctypes.POINTER(_vp), ErrorP]),
    "ib_gen_get_info": (ctypes.POINTER(GenInfo), [_vp]),
    "ib_gen_destroy": (None, [_vp]),
    "ib_gen_config_init": (None, [ctypes.POINTER(GenConfig)]),
    "ib_measure_generation": (_int, [_vp, ctypes.POINTER(GenConfig), _vp, ErrorP]),
    "ib_gen_result_free": (None, [_vp]),
    "ib_gen_serve_config_init": (None, [ctypes.POINTER(GenServeConfig)]),
    "ib_measure_gen_serve": (_int, [_vp, ctypes.POINTER(GenServeConfig), _vp, ErrorP]),
    "ib_gen_serve_result_free": (None, [_vp]),
    "ib_report": (_vp, [ctypes.POINTER(ResultRef), _cp]),
}

_lib = None


def _candidates():
    given = os.environ.get(_LIBRARY_ENV)
    if given:
        return [given]
    found = [p for p in _BUILD_COPIES if os.path.exists(p)]
    system = ctypes.util.find_library("inferbench")
    return found + _INSTALLED_NAMES + ([system] if system else [])


def _open_first():
    tried = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            tried.append(f"{path} ({str(e).split(':')[-1].strip()})")
    raise InferbenchError(
        "libinferbench.so not found: build it (make build) or set INFERBENCH_LIBRARY to its path; tried "
        + ", ".join(tried)
    )


def _declare(lib):
    for name, (restype, argtypes) in _SIGNATURES.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            raise InferbenchError(f"{lib._name} lacks {name}: an older libinferbench.so than this binding") from None
        fn.restype, fn.argtypes = restype, argtypes


def _check_mirrors(lib):
    for name, mirror in _MIRRORS.items():
        size = lib.ib_struct_size(name.encode())
        if size != ctypes.sizeof(mirror):
            raise InferbenchError(
                f"{lib._name}: {name} is {size} bytes, this binding's mirror {ctypes.sizeof(mirror)}: "
                "the binding and the library are of different versions"
            )


def lib():
    """The loaded library, its signatures declared and its structs checked."""
    global _lib
    if _lib is None:
        candidate = _open_first()
        _declare(candidate)
        _check_mirrors(candidate)
        _lib = candidate
    return _lib


def struct_size(name):
    return lib().ib_struct_size(name.encode())


def take_string(ptr):
    """The text of a malloc'ed C string the library returned, freed."""
    if not ptr:
        raise InferbenchError("the library ran out of memory writing a report")
    try:
        return ctypes.string_at(ptr).decode("utf-8", "replace")
    finally:
        lib().ib_free(ptr)


def status_name(status):
    return lib().ib_status_str(status).decode()
