#!/usr/bin/env bash
# Runtime words outside the backends' folders (issue 12): the core, env,
# the timer, the reports, the zoo and the program name no model runtime.
# Each line of code or comment outside src/backend/<name>/ that names ONNX
# Runtime, cuDNN or their identifiers fails this test unless
# runtime_words.allow lists it (a file, a piece of the line or * for any,
# and why); an
# entry that matches nothing any more fails too, so the list stays short.
# Usage: runtime_words.sh SOURCE_ROOT
set -u
root=${1:?usage: runtime_words.sh SOURCE_ROOT}
allow="$(dirname "$0")/runtime_words.allow"
words='ONNX Runtime|onnxruntime|[Cc][Uu][Dd][Nn][Nn]|\bOrt[A-Z]|\bort_|\bORT\b|ExecutionProvider|execution provider|cuda_graph|prefer_nhwc|I/O binding'

cd "$root" || exit 2
hits=$(grep -rnE "$words" src cli include --include='*.c' --include='*.h' |
  grep -vE '^src/backend/(onnxruntime|aoti|spin|fake|llama)/')

# The allowlist without its comments and blank lines: PATH|PIECE|WHY.
entries=$(grep -vE '^(#|$)' "$allow")
status=0
used=""
while IFS= read -r hit; do
  [ -n "$hit" ] || continue
  file=${hit%%:*}
  text=${hit#*:*:}
  ok=""
  while IFS='|' read -r path piece why; do
    if [ "$path" = "$file" ] && { [ "$piece" = "*" ] || [[ "$text" == *"$piece"* ]]; }; then
      ok=1
      used+="$path|$piece"$'\n'
      break
    fi
  done <<<"$entries"
  if [ -z "$ok" ]; then
    echo "FAIL runtime word outside a backend's folder: $hit"
    status=1
  fi
done <<<"$hits"

while IFS='|' read -r path piece why; do
  [ -n "$path" ] || continue
  if [ -z "$why" ]; then
    echo "FAIL allowlist entry without a reason: $path|$piece"
    status=1
  elif ! grep -qxF "$path|$piece" <<<"$used"; then
    echo "FAIL allowlist entry matches nothing any more: $path|$piece"
    status=1
  fi
done <<<"$entries"

[ $status = 0 ] && echo "PASS no runtime word outside the backends' folders but the $(wc -l <<<"$entries") allowed"
exit $status
