#!/usr/bin/env bash
# serve on the GPU records the machine as latency does (issue 35): the
# environment block (the GPU, its driver, the samples of its state over
# warm-up and every rate, taken into the result's own environment) and the
# machine's warnings, in the JSON, the text and the HTML. Prints its
# summary, the samples' count among it (0 where NVML cannot be read; the
# lead runs it: no GPU on the development machine).
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/require_device.sh"
m=(zoo:mlp --device cuda --rates 100,400 --requests 200)
expect_exit 0 "serve on the GPU, json and html" -- "$IB" serve "${m[@]}" --json "$TMP/s.json" --html "$TMP/s.html"
json_check "$TMP/s.json" "d['environment']['devices'] and d['environment']['devices'][0]['name']" "json: the GPU in the environment"
json_check "$TMP/s.json" "isinstance(d['warnings'], list) and isinstance(d['notes'], list)" "json: warnings and notes"
expect_grep "^machine: .+ \(driver .+, CUDA driver [0-9.]+, runtime [0-9.]+\), onnxruntime " "$TMP/out" "text: the GPU's machine line"
expect_grep "<td>GPU</td>" "$TMP/s.html" "html: the machine table"
python3 - "$TMP/s.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
e = d["environment"]
print("record: serve environment keys:", sorted(e))
print("record: warnings:", d["warnings"], "notes:", d["notes"])
for dev in e.get("devices", []):
    print("record: device:", {k: v for k, v in dev.items() if not isinstance(v, list)},
          "gpu_samples:", len(dev.get("gpu_samples", [])))
PY
grep -E "^machine:|^warning:" "$TMP/out" | sed 's/^/record: text: /'
finish
