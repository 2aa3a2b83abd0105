"""python -m inferbench COMMAND SPEC [options]: a model measured with no code.

SPEC is FILE.py:FUNCTION or a module name and a function (pkg.mod:FUNCTION),
for example a torchvision-style constructor (torchvision.models:resnet50).
The function is called with no argument and returns the model. With torch,
the model is put in eval mode on the device and called on a random float32
tensor of --input-shape (its first dimension is the batch) under
torch.inference_mode(); without torch it is called with the shape as a
tuple (a plain callable, as the tests use). --cuda-graph captures the
call in one CUDA graph first (latency, pitfalls). Exit codes as the C program's
(docs/cli.md): 0 measured, 1 failed while measuring, 2 bad input, 130
interrupted (the partial result still written).
"""

import argparse
import importlib
import importlib.util
import os
import sys

import inferbench
from ._cuda import import_torch
from ._errors import InferbenchError, Interrupted


class BadInput(Exception):
    pass


def _parser():
    p = argparse.ArgumentParser(prog="python -m inferbench", description="Measure a Python model with inferbench.")
    p.add_argument("command", choices=["latency", "throughput", "pitfalls", "calibrate"])
    p.add_argument("spec", nargs="?", help="FILE.py:FUNCTION or module:FUNCTION returning the model")
    p.add_argument("--input-shape", help="the input's shape, batch first: 1x3x224x224")
    p.add_argument("--device", choices=["cpu", "cuda"], default=None, help="default: cuda when torch has one")
    p.add_argument("--runs", type=int)
    p.add_argument("--warmup-ms", type=float)
    p.add_argument("--warmup-runs", type=int)
    p.add_argument("--max-batch", type=int, help="throughput: the search's bound")
    p.add_argument("--batches", help="throughput: these batches (1,8,64), no search")
    p.add_argument("--cuda-graph", action="store_true",
                   help="latency, pitfalls: the call captured in one CUDA graph (inferbench.cuda_graph)")
    p.add_argument("--json", help="write the JSON result here")
    p.add_argument("--html", help="write the HTML page here")
    return p


def _parse_shape(text):
    try:
        dims = [int(d) for d in text.split("x")]
    except ValueError:
        dims = []
    if not dims or min(dims) < 1:
        raise BadInput(f"--input-shape '{text}': expected positive dimensions such as 1x3x224x224")
    return dims


def _load_constructor(spec):
    where, sep, name = spec.rpartition(":")
    if not sep or not where or not name:
        raise BadInput(f"'{spec}': expected FILE.py:FUNCTION or module:FUNCTION")
    try:
        if where.endswith(".py"):
            if not os.path.isfile(where):
                raise BadInput(f"'{where}': no such file")
            loaded = importlib.util.spec_from_file_location(os.path.basename(where)[:-3], where)
            module = importlib.util.module_from_spec(loaded)
            loaded.loader.exec_module(module)
        else:
            module = importlib.import_module(where)
    except BadInput:
        raise
    except Exception as e:
        raise BadInput(f"'{where}' did not load: {type(e).__name__}: {e}") from None
    constructor = getattr(module, name, None)
    if not callable(constructor):
        raise BadInput(f"'{where}' has no function '{name}'")
    return constructor


def _torch_model(torch, model, shape, device):
    model = model.eval().to(device)
    x = torch.randn(*shape, device=device)

    def call(batch=None):
        with torch.inference_mode():
            return model(x if batch is None else batch)

    def make_batch(n):
        return torch.randn(n, *shape[1:], device=device)

    return call, make_batch


def _callable(args):
    if not args.spec or not args.input_shape:
        raise BadInput(f"{args.command} needs SPEC and --input-shape")
    shape = _parse_shape(args.input_shape)
    torch = import_torch() if args.device != "cpu" else _torch_cpu()
    device = args.device or ("cuda" if torch is not None and torch.cuda.is_available() else "cpu")
    model = _load_constructor(args.spec)()
    if torch is not None and isinstance(model, torch.nn.Module):
        call, make_batch = _torch_model(torch, model, shape, device)
    else:
        def call(batch=None):
            return model(tuple(shape) if batch is None else batch)

        def make_batch(n):
            return (n, *shape[1:])
    return call, make_batch, shape, device, args.spec.rpartition(":")[2]


def _torch_cpu():
    try:
        import torch
        return torch
    except ImportError:
        return None


def _measure(args):
    if args.command == "calibrate":
        return inferbench.calibrate(device=args.device or "cpu", runs=args.runs)
    if args.cuda_graph and args.command == "throughput":
        raise BadInput("--cuda-graph: latency and pitfalls only (a graph replays the tensors of one batch)")
    call, make_batch, shape, device, name = _callable(args)
    if args.cuda_graph:
        if device != "cuda":
            raise BadInput("--cuda-graph needs the GPU: --device cuda, with PyTorch")
        call = inferbench.cuda_graph(call)
    common = dict(device=device, name=name, runs=args.runs, warmup_ms=args.warmup_ms,
                  warmup_runs=args.warmup_runs, input_shape=shape)
    if args.command == "latency":
        return inferbench.latency(call, batch=shape[0], **common)
    if args.command == "pitfalls":
        return inferbench.pitfalls(call, **common)
    batches = None
    if args.batches:
        try:
            batches = [int(b) for b in args.batches.split(",")]
        except ValueError:
            raise BadInput(f"--batches '{args.batches}': expected batch sizes such as 1,8,64") from None
    return inferbench.throughput(call, batches=batches, make_batch=make_batch, max_batch=args.max_batch, **common)


def _write(result, args):
    result.print()
    if args.json:
        result.save_json(args.json)
    if args.html and args.command != "calibrate":
        result.save_html(args.html)


def _check_outputs(args):
    for path in (args.json, args.html):
        if path and not os.access(os.path.dirname(os.path.abspath(path)), os.W_OK):
            raise BadInput(f"'{path}': its folder cannot be written")


def main(argv=None):
    args = _parser().parse_args(argv)
    try:
        _check_outputs(args)
        result = _measure(args)
    except BadInput as e:
        print(f"inferbench: {e}", file=sys.stderr)
        return 2
    except Interrupted as e:
        if e.result is not None:
            _write(e.result, args)
        print("inferbench: interrupted", file=sys.stderr)
        return 130
    except InferbenchError as e:
        if e.result is not None:
            _write(e.result, args)
        print(f"inferbench: {e}", file=sys.stderr)
        return 1 if e.status not in (None, "invalid argument") else 2
    _write(result, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
