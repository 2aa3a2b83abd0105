#!/usr/bin/env python3
"""Export one PyTorch model so that inferbench measures the same network
three ways: ONNX (ONNX Runtime, the C program), eager or torch.compile
(python/inferbench), and AOTInductor (.pt2, the aoti backend).

    python3 tools/export_pytorch.py torchvision.models:efficientnet_b0 \\
        --input-shape 1x3x224x224 --out exports --variants fp32,fp16,fp16-cl
    python3 tools/export_pytorch.py mymodels.py:make_model --input-shape 8x128 --formats onnx

MODEL is module:FUNCTION or FILE.py:FUNCTION, called with no argument.
Variants: fp32, fp16 (weights and inputs in half), and "-cl" for
channels-last (4-D inputs; AOTInductor only: an ONNX graph has no memory
format, ONNX Runtime's own NHWC choice is --prefer-nhwc). --dynamic-batch
exports a symbolic first dimension (ONNX "batch", torch.export Dim) so
that `inferbench throughput` can search. For each file written it prints
the inferbench command that measures it.

Not run by this repository's tests (the build machine has no PyTorch).
On the H200 (PyTorch 2.11, docs/measurements.md, "AOTInductor from C" and
"The ONNX path of export_pytorch.py"): `--variants fp16-cl --formats pt2` and the command it printed
(94-95 s, then 1.46-1.59 ms at batch 1 from C, 404 us with `--option
cuda_graph=yes`); the same with `--dynamic-batch` (102 s; 29,823 inputs/s
at batch 1024 with the graph); `--formats onnx --variants fp32,fp16
--dynamic-batch` (20-22 s; 1.742 and 1.815 ms at batch 1).
"""

import argparse
import importlib
import importlib.util
import os
import sys


def load_constructor(spec):
    where, _, name = spec.rpartition(":")
    if not where or not name:
        sys.exit(f"export_pytorch: '{spec}': expected module:FUNCTION or FILE.py:FUNCTION")
    if where.endswith(".py"):
        loaded = importlib.util.spec_from_file_location(os.path.basename(where)[:-3], where)
        module = importlib.util.module_from_spec(loaded)
        loaded.loader.exec_module(module)
    else:
        module = importlib.import_module(where)
    return getattr(module, name), name


def parse_shape(text):
    try:
        dims = [int(d) for d in text.split("x")]
    except ValueError:
        dims = []
    if not dims or min(dims) < 1:
        sys.exit(f"export_pytorch: --input-shape '{text}': expected positive dimensions such as 1x3x224x224")
    return dims


def prepare(torch, constructor, shape, variant, device):
    """The model and an example input of variant ("fp32", "fp16", "-cl" suffix)."""
    model = constructor().eval().to(device)
    x = torch.randn(*shape, device=device)
    if variant.startswith("fp16"):
        model, x = model.half(), x.half()
    if variant.endswith("-cl"):
        if len(shape) != 4:
            sys.exit(f"export_pytorch: {variant}: channels-last needs a 4-D input, not {len(shape)}-D")
        model = model.to(memory_format=torch.channels_last)
        x = x.to(memory_format=torch.channels_last)
    return model, x


def export_onnx(torch, model, x, path, dynamic):
    dynamic_axes = {"input": {0: "batch"}, "output": {0: "batch"}} if dynamic else None
    kwargs = dict(input_names=["input"], output_names=["output"], opset_version=17, dynamic_axes=dynamic_axes)
    # no_grad, not inference_mode: the TorchScript exporter traces the model,
    # and tracing is not made for inference tensors (tests/gpu/latency_gpu.sh,
    # whose export ran on the H200, uses neither).
    with torch.no_grad():
        try:  # the TorchScript exporter, as docs/measurements.md's exports used
            torch.onnx.export(model, (x,), path, dynamo=False, **kwargs)
        except TypeError:  # a PyTorch without the dynamo switch
            torch.onnx.export(model, (x,), path, **kwargs)


def export_pt2(torch, model, x, path, dynamic):
    dynamic_shapes = ({0: torch.export.Dim("batch", min=1, max=4096)},) if dynamic else None
    if dynamic and x.shape[0] == 1:
        # torch.export specialises a dimension of size 1 to a constant: the
        # example batch is made 2 for a batch that stays symbolic.
        layout = torch.channels_last if not x.is_contiguous() else torch.contiguous_format
        x = torch.cat([x, x]).contiguous(memory_format=layout)
    with torch.inference_mode():
        program = torch.export.export(model, (x,), dynamic_shapes=dynamic_shapes)
        torch._inductor.aoti_compile_and_package(program, package_path=path)


def measure_command(fmt, path, shape, variant, dynamic, device, torch):
    if fmt == "onnx":
        return f"inferbench latency {path} --device {device}"
    lib = os.path.join(os.path.dirname(torch.__file__), "lib")
    options = [f"--option libtorch={lib}", f"--option shape={'x'.join(map(str, shape))}"]
    if variant.startswith("fp16"):
        options.append("--option dtype=float16")
    if variant.endswith("-cl"):
        options.append("--option channels_last=yes")
    if dynamic:
        options.append("--option dynamic_batch=yes")
    return f"inferbench latency {path} --backend aoti {' '.join(options)} --device {device}"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model", help="module:FUNCTION or FILE.py:FUNCTION returning the model")
    p.add_argument("--input-shape", required=True, help="1x3x224x224 (batch first)")
    p.add_argument("--out", default="exports", help="folder for the files (default exports/)")
    p.add_argument("--variants", default="fp32,fp16,fp16-cl", help="fp32, fp16, fp32-cl, fp16-cl")
    p.add_argument("--formats", default="onnx,pt2", help="onnx, pt2")
    p.add_argument("--dynamic-batch", action="store_true", help="a symbolic first dimension")
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    args = p.parse_args()

    import torch

    shape = parse_shape(args.input_shape)
    constructor, name = load_constructor(args.model)
    os.makedirs(args.out, exist_ok=True)
    known = {"fp32", "fp16", "fp32-cl", "fp16-cl"}
    for variant in args.variants.split(","):
        if variant not in known:
            sys.exit(f"export_pytorch: variant '{variant}': expected one of {', '.join(sorted(known))}")
        for fmt in args.formats.split(","):
            if fmt == "onnx" and variant.endswith("-cl"):
                continue  # no memory format in an ONNX graph
            model, x = prepare(torch, constructor, shape, variant, args.device)
            path = os.path.join(args.out, f"{name}-{variant}.{fmt}")
            if fmt == "onnx":
                export_onnx(torch, model, x, path, args.dynamic_batch)
            elif fmt == "pt2":
                export_pt2(torch, model, x, path, args.dynamic_batch)
            else:
                sys.exit(f"export_pytorch: format '{fmt}': expected onnx or pt2")
            print(f"{path}\n  {measure_command(fmt, path, shape, variant, args.dynamic_batch, args.device, torch)}")


if __name__ == "__main__":
    main()
