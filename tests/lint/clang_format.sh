# The C sources are in the style of .clang-format (docs/testing.md): every
# tracked .c, .h and .cu file outside the fuzz corpora, checked with the
# clang-format the set-up installs (Debian's, major version 14: another
# major version formats some constructs differently). Lists each file that
# differs and how to fix it.
cd "$(dirname "$0")/../.." || exit 2
cf=${CLANG_FORMAT:-clang-format}
version=$("$cf" --version 2>/dev/null | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
if [ -z "$version" ]; then
  echo "clang-format not found: scripts/setup.sh installs it"
  exit 1
fi
[ "$version" = 14 ] || { echo "clang-format $version is not 14: the style is checked with 14 only"; exit 77; }
files=$(git ls-files '*.c' '*.h' '*.cu' | grep -v '^tests/fuzz/corpus/')
bad=0
for f in $files; do
  if ! "$cf" --dry-run --Werror "$f" 2>/dev/null; then
    echo "not formatted: $f (clang-format -i $f)"
    bad=$((bad + 1))
  fi
done
echo "$(echo "$files" | wc -l) files, $bad not formatted"
[ $bad -eq 0 ]
