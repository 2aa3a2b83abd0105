# Backends by name and out-of-tree plugins, end to end on the CPU: the
# example GEMM plugin under latency, throughput and pitfalls, and every way a
# backend or a plugin is refused (one line, exit 2).
. "$(dirname "$0")/lib.sh"
gemm=${IB_GEMM_PLUGIN:?the example plugin (tests/CMakeLists.txt sets it)}
bad=${IB_TEST_PLUGINS:?the refused test plugins (tests/CMakeLists.txt sets it)}
small="--backend plugin:$gemm --option m=64 --option n=64 --option k=64 --device cpu"
fast="--warmup-runs 2 --warmup-ms 0 --warmup-max-ms 200"

expect_exit 0 "backends lists the built-in ones" -- "$IB" backends
expect_grep "^onnxruntime " "$TMP/out" "onnxruntime listed"
expect_grep "^spin " "$TMP/out" "spin listed"
expect_grep "^aoti " "$TMP/out" "aoti listed"
"$IB" info >"$TMP/info" 2>&1
expect_grep "^backends +onnxruntime, spin, fake, aoti " "$TMP/info" "info lists the backends"

# shellcheck disable=SC2086 # option lists are words
expect_exit 0 "latency of the GEMM plugin" -- "$IB" latency $small $fast --runs 30 --json "$TMP/l.json"
expect_grep "^inferbench latency: gemm m=64 n=64 k=64 fp32, batch 1, C loop" "$TMP/out" "text: what was measured"
json_check "$TMP/l.json" "d['latency_ms']['n'] == 30 and d['timing'] == 'host-clock'" "json: 30 host-clock samples"
json_check "$TMP/l.json" "d['latency_ms']['p50'] > 0.001" "json: the GEMM ran (2 x 64^3 FLOPs take more than 1 us on a CPU)"
json_check "$TMP/l.json" "d['workload']['model'] == 'gemm m=64 n=64 k=64 fp32' and d['workload']['flops_per_item'] == 2 * 64 ** 3" "json: the plugin's description and FLOPs"
json_check "$TMP/l.json" "d['workload']['backend_options'] == {'m': '64', 'n': '64', 'k': '64', 'dtype': 'fp32'}" "json: the plugin's own options, the default dtype too"
expect_grep "^runtime options: m=64, n=64, k=64, dtype=fp32$" "$TMP/out" "text: the plugin's options as key=value"
# shellcheck disable=SC2086
expect_exit 0 "latency at batch 3 (three GEMMs a run)" -- "$IB" latency $small $fast --runs 10 --batch 3 --json "$TMP/b3.json"
json_check "$TMP/b3.json" "d['workload']['batch'] == 3 and d['workload']['inputs'][0]['shape'][0] == 3" "json: batch 3 bound"

# shellcheck disable=SC2086
expect_exit 0 "throughput search on the plugin's batch dimension" -- \
  "$IB" throughput $small $fast --runs 5 --max-batch 8 --json "$TMP/t.json"
json_check "$TMP/t.json" "d['search']['searched'] and [p['batch'] for p in d['curve']] == [1, 2, 4, 8] and all(p['status'] == 'ok' for p in d['curve'])" "json: searched up to 8, every point measured"

# shellcheck disable=SC2086
expect_exit 0 "pitfalls on the plugin" -- "$IB" pitfalls $small $fast --runs 20 --json "$TMP/p.json"
expect_grep "no warm-up +N/A: this backend cannot open a fresh session" "$TMP/out" "text: no fresh session, the row says why"
json_check "$TMP/p.json" "{r['kind']: r['applies'] for r in d['rows']} == {'correct': True, 'host_no_sync': False, 'copies': False, 'no_warmup': False, 'single_sample': True, 'zero_input': True, 'tf32': False}" "json: correct, single sample and zero-filled input apply, the others do not on a CPU plugin"
json_check "$TMP/p.json" "d['rows'][5]['status'] == 'ok' and d['rows'][5]['stats']['n'] == 20" "json: the plugin refilled its inputs with zeros"

# shellcheck disable=SC2086
expect_exit 2 "an unknown option, refused in the plugin's words" -- "$IB" latency $small --option tile=8
expect_grep "^inferbench: gemm: unknown option 'tile' \(known: m, n, k, dtype\)$" "$TMP/err" "the plugin names the option"
# shellcheck disable=SC2086
expect_exit 2 "fp16 on the CPU refused" -- "$IB" latency $small --option dtype=fp16
expect_grep "fp16 needs the GPU" "$TMP/err" "says why"
expect_exit 2 "--option without =" -- "$IB" latency $small --option m64
expect_grep "^inferbench: --option 'm64': expected KEY=VALUE$" "$TMP/err" "names the malformed option"
expect_exit 2 "--option with an empty key" -- "$IB" latency $small --option =64
expect_exit 2 "an onnxruntime flag given to a plugin" -- "$IB" latency $small --threads 2
expect_grep "^inferbench: gemm: unknown option 'threads'" "$TMP/err" "the flag is its option, refused by the plugin in its words"

expect_exit 2 "an unknown backend" -- "$IB" latency --backend tensorrt
expect_grep "^inferbench: unknown backend 'tensorrt' \(known: onnxruntime, spin, fake, aoti; or plugin:PATH.so\)$" "$TMP/err" "lists the known ones"
expect_exit 2 "a missing plugin file" -- "$IB" latency --backend plugin:"$TMP/nothing.so"
expect_grep "^inferbench: plugin '.*/nothing.so': no such file$" "$TMP/err" "names the file"
expect_exit 2 "a file that is not a shared object" -- "$IB" latency --backend "$TMP/l.json"
expect_grep "^inferbench: plugin '.*l.json': " "$TMP/err" "dlopen's reason"
expect_exit 2 "a plugin of another ABI version (its table)" -- "$IB" latency --backend "$bad/wrong_version.so"
expect_grep "backend ABI version 5, but this inferbench speaks version 4" "$TMP/err" "names both versions"
expect_exit 2 "a plugin of another ABI version (its entry symbol)" -- "$IB" latency --backend "$bad/abi_v1.so"
expect_grep "built for backend ABI version 1 \(it exports inferbench_backend_v1\)" "$TMP/err" "names the version it was built for"
expect_exit 2 "a shared object without the entry symbol" -- "$IB" latency --backend "plugin:$bad/no_entry.so"
expect_grep "no entry symbol inferbench_backend_v4: not an inferbench backend plugin" "$TMP/err" "says what is missing"
expect_exit 2 "a plugin of ABI version 2 (before option declarations)" -- "$IB" latency --backend "$bad/abi_v2.so"
expect_grep "^inferbench: plugin '.*abi_v2.so': built for backend ABI version 2 \(it exports inferbench_backend_v2\), but this inferbench speaks version 4$" "$TMP/err" "names version 2, one line"

# onnxruntime through its table: settings as --option, unknown ones refused.
expect_exit 0 "onnxruntime by name with --option" -- \
  "$IB" latency zoo:mlp --backend onnxruntime --option threads=1 --device cpu $fast --runs 10 --json "$TMP/o.json"
json_check "$TMP/o.json" "d['workload']['backend_options'] == {'threads': '1'}" "json: the option reached ONNX Runtime"
expect_exit 2 "onnxruntime refuses an unknown option" -- "$IB" latency zoo:mlp --backend onnxruntime --option x=1 --device cpu
expect_grep "onnxruntime: unknown option 'x'" "$TMP/err" "in its words"
finish
