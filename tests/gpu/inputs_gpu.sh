# --input on the CUDA provider (values made through the staging upload, a
# .npy file read chunk by chunk into device memory) and the pitfalls'
# zero-filled input row on a GPU-bound batch, where zeros run faster
# (docs/pitfalls.md: about 3% for EfficientNet-B0 at batch 256 on an H200).
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/require_device.sh"

run=(--device cuda --runs 30 --warmup-ms 100)
expect_exit 0 "bert-base token ids random:0..30521 on cuda" -- \
  "$IB" latency zoo:bert-base "${run[@]}" --input input_ids=random:0..30521 --json "$TMP/b.json"
json_check "$TMP/b.json" "d['workload']['inputs'][0]['values'] == 'random:0..30521' and d['latency_ms']['p50'] > 0" "json: the spec, timed"

python3 - "$TMP/ids.npy" <<'PY'
import struct, sys
h = "{'descr': '<i8', 'fortran_order': False, 'shape': (4, 128), }"
h += ' ' * ((64 - (10 + len(h) + 1) % 64) % 64) + '\n'
data = struct.pack('<512q', *[(i * 7919) % 30522 for i in range(512)])
open(sys.argv[1], 'wb').write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(h)) + h.encode() + data)
PY
expect_exit 0 "bert-base token ids from a .npy file at batch 4 on cuda" -- \
  "$IB" latency zoo:bert-base "${run[@]}" --batch 4 --input input_ids=@"$TMP/ids.npy"
expect_exit 2 "the same file at batch 8 is refused" -- \
  "$IB" latency zoo:bert-base "${run[@]}" --batch 8 --input input_ids=@"$TMP/ids.npy"

expect_exit 0 "pitfalls efficientnet-b0 batch 256 on cuda" -- \
  "$IB" pitfalls zoo:efficientnet-b0 --device cuda --batch 256 --runs 100 --json "$TMP/p.json"
cat "$TMP/out"
json_check "$TMP/p.json" "(lambda r: r['status'] == 'ok' and r['stats']['n'] == 100 and r['stats']['p50'] > 0)([r for r in d['rows'] if r['kind'] == 'zero_input'][0])" \
  "zero_input measured on the GPU"
json_record "$TMP/p.json" "[r for r in d['rows'] if r['kind'] == 'zero_input'][0]['error_pct']" \
  "zero_input: error against random input, % (negative, zeros faster, about -3% on the H200 before)"
finish
