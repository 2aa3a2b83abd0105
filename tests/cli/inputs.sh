# --input NAME=SPEC end to end on the CPU: every SPEC form on a tiny model
# whose inputs index a table (valid_lookup: ids int64[batch] and int64(x),
# x float32[batch], Gather rows of W[4,4]), so that a value outside -4..3
# fails the run with ONNX Runtime's "idx=N": the values a run used are
# seen, not assumed. The refusals (one line, exit 2), the JSON record, the
# report headers, --seed, throughput's refusal of files, and the pitfalls'
# zero-filled input row.
. "$(dirname "$0")/lib.sh"

make_models
L="$M/valid_lookup.onnx"
run=(--device cpu --runs 5 --warmup-runs 1 --warmup-ms 0 --no-steady)

# used IDX OPTION...: the run fails on the out-of-range index IDX, which
# is the value the input held.
used() {
  local idx=$1; shift
  expect_exit 1 "$*: the run used it" -- "$IB" latency "$L" "${run[@]}" "$@" || return
  expect_grep "idx=$idx must be within" "$TMP/err" "$*: the index was $idx"
}

# --- each SPEC form ---------------------------------------------------------
expect_exit 0 "default (random: ids in {0,1}, x in [-1,1))" -- "$IB" latency "$L" "${run[@]}" --batch 64
expect_grep "^input values: ids=random, x=random$" "$TMP/out" "the text header says random"
used 7 --input ids=7
used -5 --input ids=-5
used 9 --input x=9.5
expect_exit 0 "numbers in range" -- "$IB" latency "$L" "${run[@]}" --input ids=3 --input x=-4
used 1000 --input ids=1e3
used 1000 --input ids=random:1000..1000
expect_exit 0 "ids=random:-4..3 at batch 256 (inclusive range, all in the table)" -- \
  "$IB" latency "$L" "${run[@]}" --batch 256 --input ids=random:-4..3 --input x=random:-4..3.99
used 4 --batch 256 --input ids=random:0..4
used 100 --input x=random:100..100.5
expect_exit 0 "zeros and ones" -- "$IB" latency "$L" "${run[@]}" --batch 8 --input ids=zeros --input x=ones \
  --json "$TMP/zo.json"
expect_grep "^input values: ids=zeros, x=ones$" "$TMP/out" "the text header says zeros and ones"
json_check "$TMP/zo.json" "[i['values'] for i in d['workload']['inputs']] == ['zeros', 'ones']" "json: workload.inputs[].values"
json_check "$TMP/zo.json" "'values' not in d['workload']['outputs'][0]" "json: outputs have no values"

# --- --seed: same seed same values, another seed other values ---------------
seed_index() {
  "$IB" latency "$L" "${run[@]}" --input x=random:100..1000000 --seed "$1" 2>&1 >/dev/null |
    sed -n 's/.*idx=\([0-9]*\).*/\1/p' >"$2"
}
seed_index 1 "$TMP/seed.1.1"
seed_index 1 "$TMP/seed.1.2"
seed_index 2 "$TMP/seed.2.3"
a=$(cat "$TMP/seed.1.1") b=$(cat "$TMP/seed.1.2") c=$(cat "$TMP/seed.2.3")
if [ -n "$a" ] && [ "$a" = "$b" ]; then pass "--seed 1 twice: the same value ($a)"; else fail "--seed 1 twice: '$a' vs '$b'"; fi
if [ -n "$c" ] && [ "$a" != "$c" ]; then pass "--seed 2: another value ($c)"; else fail "--seed 2: '$c' vs '$a'"; fi

# --- files --------------------------------------------------------------------
python3 - "$TMP" <<'PY'
import struct, sys
d = sys.argv[1]
def npy(path, descr, shape, data, major=1):
    h = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    pre = 10 if major == 1 else 12
    h += ' ' * ((64 - (pre + len(h) + 1) % 64) % 64) + '\n'
    ln = struct.pack('<H' if major == 1 else '<I', len(h))
    open(path, 'wb').write(b'\x93NUMPY' + bytes([major, 0]) + ln + h.encode() + data)
open(d + '/ids_1_6.bin', 'wb').write(struct.pack('<2q', 1, 6))
open(d + '/ids_1_2.bin', 'wb').write(struct.pack('<2q', 1, 2))
open(d + '/short.bin', 'wb').write(struct.pack('<q', 1))
npy(d + '/ids_2_5.npy', '<i8', '(2,)', struct.pack('<2q', 2, 5))
npy(d + '/ids_v2.npy', '<i8', '(2,)', struct.pack('<2q', 0, 3), major=2)
npy(d + '/x_300.npy', '<f4', '(2,)', struct.pack('<2f', 300.0, 1.0))
npy(d + '/f4.npy', '<f4', '(2,)', struct.pack('<2f', 0, 0))
npy(d + '/shape3.npy', '<i8', '(3,)', struct.pack('<3q', 0, 0, 0))
npy(d + '/long.npy', '<i8', '(1,)', struct.pack('<2q', 0, 0))
npy(d + '/short.npy', '<i8', '(2,)', struct.pack('<q', 0))
npy(d + '/fortran.npy', '<i8', '(2,)', struct.pack('<2q', 0, 0))
b = open(d + '/fortran.npy', 'rb').read().replace(b'False', b'True ')
open(d + '/fortran.npy', 'wb').write(b)
open(d + '/bad.npy', 'wb').write(b'\x93NUMPY\x01\x00\x10\x00{"descr": <f8}\n' + b'\0' * 16)
npy(d + '/big.npy', '>i8', '(2,)', struct.pack('>2q', 0, 0))
PY
used 6 --batch 2 --input ids=@"$TMP/ids_1_6.bin"
expect_exit 2 "a .bin at batch 1 for an input of batch 2 is refused" -- \
  "$IB" latency "$L" "${run[@]}" --input ids=@"$TMP/ids_1_6.bin"
expect_grep "input 'ids' is int64 of shape \(1,\) at batch 1, 8 bytes of values, but the file holds 16 bytes" "$TMP/err" ".bin size: says both sizes"
expect_exit 0 "a .bin of the right size, values in range" -- \
  "$IB" latency "$L" "${run[@]}" --batch 2 --input ids=@"$TMP/ids_1_2.bin" --json "$TMP/f.json"
json_check "$TMP/f.json" "d['workload']['inputs'][0]['values'] == '@$TMP/ids_1_2.bin'" "json: a file is recorded as @path"
expect_exit 2 "a short .bin is refused" -- "$IB" latency "$L" "${run[@]}" --batch 2 --input ids=@"$TMP/short.bin"
used 5 --batch 2 --input ids=@"$TMP/ids_2_5.npy"
used 300 --batch 2 --input x=@"$TMP/x_300.npy"
expect_exit 0 "a version 2.0 .npy" -- "$IB" latency "$L" "${run[@]}" --batch 2 --input ids=@"$TMP/ids_v2.npy"

# refused FILE-OPTIONS PATTERN: exit 2, one line matching PATTERN
refused() {
  local pattern=$1; shift
  expect_exit 2 "refused: $*" -- "$IB" latency "$L" "${run[@]}" "$@" || return
  expect_grep "^inferbench: .*$pattern" "$TMP/err" "refused: $*: says why"
}
refused "input 'ids' is int64 \(numpy '<i8'\) but the file holds '<f4'" --batch 2 --input ids=@"$TMP/f4.npy"
refused "input 'ids' has shape \(2,\) at batch 2 but the file holds \(3,\)" --batch 2 --input ids=@"$TMP/shape3.npy"
refused "8 bytes of values, but the file holds 16 bytes after its header" --batch 1 --input ids=@"$TMP/long.npy"
refused "16 bytes of values, but the file holds 8 bytes after its header" --batch 2 --input ids=@"$TMP/short.npy"
refused "is not a valid .npy file: it is in Fortran order" --batch 2 --input ids=@"$TMP/fortran.npy"
refused "is not a valid .npy file" --batch 2 --input ids=@"$TMP/bad.npy"
refused "its data is big-endian" --batch 2 --input ids=@"$TMP/big.npy"
refused "cannot open '$TMP/none.bin': No such file" --input ids=@"$TMP/none.bin"
refused "'$TMP' is not a regular file" --input ids=@"$TMP"

# --- values that do not fit, names, syntax -------------------------------------
refused "names input 'nope', but the model's inputs are: ids, x" --input nope=1
refused "input given twice" --input ids=1 --input ids=2
refused "input 'ids' is int64 and 3.5 is not an integer" --input ids=3.5
refused "input 'ids' is int64 and nan is not an integer" --input ids=nan
refused "input 'ids' is int64 and inf is not an integer" --input ids=random:0..inf
refused "input 'ids' is int64 and 9223372036854775808 is out of its range -9223372036854775808..9223372036854775807" \
  --input ids=9223372036854775808
refused "input 'x' is float32 and 1e39 is out of its range" --input x=1e39
refused "input 'x' is float32 and nan is not a finite number" --input x=nan
refused "LO 3 is not <= HI 1" --input ids=random:3..1
refused "the SPEC after '=' is empty" --input ids=
refused "'abc' is not a number, random, random:LO..HI, zeros, ones or @FILE" --input ids=abc
refused "expected NAME=SPEC" --input ids
refused "expected random:LO..HI" --input ids=random:5

# --- the headers of the other commands and formats -----------------------------
expect_exit 0 "throughput with a generated spec" -- "$IB" throughput "$L" "${run[@]}" --batches 1,4 \
  --input ids=random:0..3 --html "$TMP/t.html"
expect_grep "^input values: ids=random:0..3, x=random$" "$TMP/out" "throughput: the text header"
expect_grep "<td>input values</td><td>ids=random:0..3, x=random</td>" "$TMP/t.html" "html: the header row"
expect_exit 2 "throughput refuses a file input" -- "$IB" throughput "$L" "${run[@]}" --input ids=@"$TMP/ids_1_2.bin"
expect_grep "^inferbench: --input ids=@.*throughput runs other batches than the one a file holds" "$TMP/err" "throughput: says why"
expect_exit 0 "plain inferbench MODEL takes --input" -- "$IB" "$L" "${run[@]}" --input ids=2
expect_grep "^input values: ids=2, x=random$" "$TMP/out" "plain: the text header"

# --- pitfalls: the zero-filled input row, measured --------------------------------
expect_exit 0 "pitfalls with --input" -- "$IB" pitfalls "$L" --device cpu --runs 30 --batch 64 \
  --input ids=random:-4..3 --json "$TMP/p.json"
expect_grep "^zero-filled input +30 " "$TMP/out" "pitfalls: the zero-filled input row, 30 runs"
json_check "$TMP/p.json" "(lambda r: r['status'] == 'ok' and r['stats']['n'] == 30 and r['stats']['p50'] > 0 and r['error_pct'] == r['error_pct'] and r['verdict'] in ('reads low', 'reads high', 'within noise') and 'GPU' not in r['why'])([r for r in d['rows'] if r['kind'] == 'zero_input'][0])" \
  "pitfalls json: zero_input measured (n 30, a positive median, an error read by its interval, in the CPU's words)"
finish
