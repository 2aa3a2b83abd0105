# The aoti backend on a real AOTInductor package (a GPU and PyTorch needed;
# about two minutes, most of it compiling): a small convolutional network
# (EfficientNet-B0 from torchvision with IB_AOTI_FULL=1: about 95 s more a
# compile on the H200) compiled by torch._inductor.aoti_compile_and_package
# in a fresh process, twice (a fixed batch and a dynamic one), then
# measured by the C program, with no Python in its process, libtorch
# dlopened from torch/lib: plain, and replayed from a CUDA graph
# (cuda_graph=yes: faster than plain, each batch its own graph). The
# package's layout and what the model library needs (readelf) are printed.
# With IB_AOTI_EVIDENCE=1, the evidence the issue asked for about the crash
# seen on the H200 follows (printed, not checked; 139 is the crash; it was
# recorded in docs/backend-aoti.md, and costs a third compile): whether
# the model library loads by a plain dlopen without and after `import
# torch`, by torch._inductor.aoti_load_package in a fresh process, and in
# the process that compiled it.
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/require_device.sh"
. "$(dirname "$0")/find_torch.sh"
py=$(find_torch_python) || { echo "no python3 with torch and CUDA (set IB_TORCH_PYTHON): skipped"; exit 77; }
torchlib=$("$py" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
echo "python with torch: $py, libtorch in $torchlib"

cat >"$TMP/compile.py" <<'PY'
import os, sys, time, zipfile
import torch
out, full = sys.argv[1], os.environ.get("IB_AOTI_FULL") == "1"
dynamic_out = sys.argv[2] if len(sys.argv) > 2 else None
if full:
    import torchvision
    model = torchvision.models.efficientnet_b0()
else:
    model = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Conv2d(3 if i == 0 else 32, 32, 3, padding=1),
                                                      torch.nn.BatchNorm2d(32), torch.nn.ReLU()) for i in range(6)])
model = model.eval().cuda()
x = torch.randn(1, 3, 224, 224, device="cuda")
t0 = time.time()
with torch.inference_mode():
    ep = torch.export.export(model, (x,))
    path = torch._inductor.aoti_compile_and_package(ep, package_path=out)
print(f"torch {torch.__version__}: compiled in {time.time() - t0:.1f} s, {os.path.getsize(path) / 1e6:.1f} MB")
if dynamic_out:
    # The same network with a dynamic first dimension (an example batch of
    # 2: a batch of 1 would be specialised), for the batches of throughput.
    t0 = time.time()
    with torch.inference_mode():
        ep = torch.export.export(model, (torch.randn(2, 3, 224, 224, device="cuda"),),
                                 dynamic_shapes=({0: torch.export.Dim("batch", min=1, max=64)},))
        torch._inductor.aoti_compile_and_package(ep, package_path=dynamic_out)
    print(f"dynamic batch: compiled in {time.time() - t0:.1f} s")
if os.environ.get("IB_AOTI_LOAD_HERE") == "1":
    # The evidence run: loaded in the process that compiled it (the
    # issue's crash was seen so); the exit status tells.
    runner = torch._inductor.aoti_load_package(path)
    runner(x)
    torch.cuda.synchronize()
    print("loaded and ran in the compiling process", flush=True)
for info in zipfile.ZipFile(path).infolist():
    print(f"  {info.filename} {info.file_size} bytes, method {info.compress_type}")
PY
expect_exit 0 "compile a package in a fresh process" -- "$py" "$TMP/compile.py" "$TMP/model.pt2" "$TMP/dynamic.pt2"
cat "$TMP/out" "$TMP/err"

# The model library as PyTorch stored it, and what it needs.
python3 - "$TMP/model.pt2" "$TMP/lib" <<'PY'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
for n in z.namelist():
    if n.endswith(".so"):
        z.extract(n, sys.argv[2])
        print(f"{sys.argv[2]}/{n}")
PY
so=$(find "$TMP/lib" -name '*.so' | head -1)
readelf -d "$so" | grep -E "NEEDED|RUNPATH|RPATH" || true
expect_exit 0 "the package measured by the C program (libtorch dlopened)" -- \
  "$IB" latency "$TMP/model.pt2" --backend aoti --option libtorch="$torchlib" --option shape=1x3x224x224 \
  --device cuda --runs 200 --json "$TMP/aoti.json"
cat "$TMP/out" "$TMP/err"
json_check "$TMP/aoti.json" "d['timing'] == 'device-events' and d['latency_ms']['n'] == 200" "timed with CUDA events on the backend's stream"
json_check "$TMP/aoti.json" "d['workload']['provider'] == 'AOTInductor'" "json: the provider"

# The same package replayed from one CUDA graph (cuda_graph=yes: a plain
# first run, the second captured, then one launch a run): what a deployment
# replaying a graph gets. Launch-bound from C (EfficientNet-B0 on the H200:
# 1.59 ms a run plain, 0.42 ms in one graph from Python), it must be faster.
expect_exit 0 "the package replayed from a CUDA graph (--option cuda_graph=yes)" -- \
  "$IB" latency "$TMP/model.pt2" --backend aoti --option libtorch="$torchlib" --option shape=1x3x224x224 \
  --option cuda_graph=yes --device cuda --runs 200 --json "$TMP/graph.json"
cat "$TMP/out" "$TMP/err"
json_check "$TMP/graph.json" "d['workload']['backend_options']['cuda_graph'] == 'yes' and d['timing'] == 'device-events' and d['latency_ms']['n'] == 200" "json: cuda_graph yes recorded, 200 runs timed by device events"
# How much faster the replay is is the machine's figure (recorded since
# issue 28; 1.46 against 0.40 ms on the H200).
python3 - "$TMP/aoti.json" "$TMP/graph.json" <<'PY' | while IFS= read -r line; do record "$line"; done
import json, sys
plain, graph = (json.load(open(p))["latency_ms"]["p50"] for p in sys.argv[1:])
print(f"median: plain {plain:.4f} ms, one CUDA graph {graph:.4f} ms ({plain / graph:.2f}x)")
PY
expect_exit 0 "compare names the setting" -- "$IB" compare "$TMP/aoti.json" "$TMP/graph.json"
cat "$TMP/out"
expect_grep "different backend option cuda_graph: no \(A\) vs yes \(B\)" "$TMP/out" "compare: cuda_graph no (A) vs yes (B)"
# --exclude-launch holds the stream from the second run on: the capture
# (the second run) is made behind the hold, and nothing in it may wait for
# the device (the hold would time out: exit 1, a deadlock). One launch a
# run is not launch-bound (GRAPH_CAPTURE).
expect_exit 0 "cuda_graph=yes with --exclude-launch (the capture behind the hold)" -- \
  "$IB" latency "$TMP/model.pt2" --backend aoti --option libtorch="$torchlib" --option shape=1x3x224x224 \
  --option cuda_graph=yes --device cuda --exclude-launch --runs 50 --json "$TMP/graph_held.json"
cat "$TMP/out" "$TMP/err"
json_check "$TMP/graph_held.json" "d['launch_overhead_ms'] is not None and 'session_dependent' not in d['warnings'] + d['notes']" "json: launch overhead measured, not called launch-bound (session-dependent)"
if grep -q "^launch-bound" "$TMP/out"; then fail "text: a graph replay called launch-bound"; else pass "text: not called launch-bound"; fi
# Each batch captures its own graph (set_batch reallocates the inputs the
# graph reads): a batch of 8 replaying batch 1's graph would take batch 1's
# time, or read freed memory.
expect_exit 0 "throughput at batches 1 and 8, each replayed from its own graph" -- \
  "$IB" throughput "$TMP/dynamic.pt2" --backend aoti --option libtorch="$torchlib" --option shape=1x3x224x224 \
  --option dynamic_batch=yes --option cuda_graph=yes --device cuda --batches 1,8 --runs 50 --json "$TMP/graph_t.json"
cat "$TMP/out" "$TMP/err"
json_check "$TMP/graph_t.json" "[p['status'] for p in d['curve']] == ['ok', 'ok']" "json: batches 1 and 8 measured, each from its own graph"
json_record "$TMP/graph_t.json" "round(d['curve'][1]['back_to_back_ms_per_run'] / d['curve'][0]['back_to_back_ms_per_run'], 3)" "batch 8's run over batch 1's (over 1.2 before: batch 1's graph replayed would read 1)"
expect_exit 0 "pitfalls on the replayed package" -- \
  "$IB" pitfalls "$TMP/model.pt2" --backend aoti --option libtorch="$torchlib" --option shape=1x3x224x224 \
  --option cuda_graph=yes --device cuda --runs 50
cat "$TMP/out"
expect_exit 0 "pitfalls on the package" -- \
  "$IB" pitfalls "$TMP/model.pt2" --backend aoti --option libtorch="$torchlib" --option shape=1x3x224x224 \
  --device cuda --runs 50
cat "$TMP/out"
# Evidence about the crash the issue reports (printed, not checked).
if [ "${IB_AOTI_EVIDENCE:-0}" != 1 ]; then finish; exit; fi
echo "plain dlopen of the model library without torch imported:"
LD_LIBRARY_PATH="$torchlib" timeout 60 python3 -c "import ctypes, sys; ctypes.CDLL(sys.argv[1]); print('loaded')" "$so"
echo "exit status $?"
echo "plain dlopen of the model library after import torch (the crash the issue reports):"
timeout 60 "$py" -c "import torch, ctypes, sys; ctypes.CDLL(sys.argv[1]); print('loaded')" "$so"
echo "exit status $?"
echo "torch._inductor.aoti_load_package in a fresh process, then one run:"
timeout 90 "$py" -c "
import sys, torch
runner = torch._inductor.aoti_load_package(sys.argv[1])
out = runner(torch.randn(1, 3, 224, 224, device='cuda'))
torch.cuda.synchronize()
print('loaded and ran:', tuple(out[0].shape) if isinstance(out, (list, tuple)) else tuple(out.shape))" "$TMP/model.pt2"
echo "exit status $?"

echo "compiled and loaded in one process (IB_AOTI_LOAD_HERE=1):"
IB_AOTI_LOAD_HERE=1 timeout 150 "$py" "$TMP/compile.py" "$TMP/again.pt2" 2>&1 | grep -v Warning | tail -3
echo "exit status ${PIPESTATUS[0]}"
finish
