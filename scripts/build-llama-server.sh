#!/usr/bin/env bash
# llama-server (llama.cpp's OpenAI-compatible server, tools/server) for the
# tests of an HTTP endpoint (issue 37; docs/backend-llama.md, "llama-server for
# the tests"), built for the CPU from the git bundle set-up keeps (the
# release of the library inferbench loads), once a machine: into a cache
# outside the checkout, which every clone on the machine finds,
#
#   ${XDG_CACHE_HOME:-$HOME/.cache}/inferbench/llama-server-3.22.1-cpu/llama-server
#
# (the folder keyed by the release; a build of other switches or another
# commit is made again). One static executable: nothing of the build is
# kept but it, its build-info and the build's log and times.
#
#   scripts/build-llama-server.sh              # builds it when missing; prints its path
#   scripts/build-llama-server.sh --find       # prints its path; exit 1, a line, when not built
#   scripts/build-llama-server.sh --optional   # as the first, but without set-up's llama.cpp
#                                              # says so and exits 0 (make test: its test skips)
#
# IB_LLAMA_SERVER=PATH uses the user's own llama-server instead (never
# built): any build that serves /v1/completions and /health.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
llama_npm=3.22.1 # set-up's node-llama-cpp release (scripts/setup.sh)
release=$here/.cache/llama-cpp-$llama_npm
cache_root=${XDG_CACHE_HOME:-$HOME/.cache}
case $cache_root in /*) ;; *) cache_root=$HOME/.cache ;; esac
dest=$cache_root/inferbench/llama-server-$llama_npm-cpu
mode=build
case ${1:-} in
  "") ;;
  --find) mode=find ;;
  --optional) mode=optional ;;
  *) echo "build-llama-server: unknown argument $1 (--find, --optional)" >&2; exit 2 ;;
esac

log() { printf 'build-llama-server: %s\n' "$*" >&2; }

if [ -n "${IB_LLAMA_SERVER:-}" ]; then
  [ -x "$IB_LLAMA_SERVER" ] || { log "IB_LLAMA_SERVER=$IB_LLAMA_SERVER is not an executable file"; exit 2; }
  echo "$IB_LLAMA_SERVER"; exit 0
fi

# The switches: the issue's CPU build (no network parts, portable code),
# the server alone (no tests, examples or web UI: the UI's assets would be
# downloaded), static, so that the one file is the whole server.
flags=(-DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=OFF -DLLAMA_CURL=OFF
       -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF
       -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF)

# What the cached server must have been built from and with.
commit() { sed -n 's/^commit=//p' "$release/release"; }
wanted_info() { printf 'commit=%s\nflags=%s\n' "$(commit)" "${flags[*]}"; }

built() {
  [ -x "$dest/llama-server" ] && [ -f "$dest/build-info" ] && [ "$(cat "$dest/build-info")" = "$(wanted_info)" ]
}

if [ ! -f "$release/gitRelease.bundle" ] || [ ! -f "$release/release" ]; then
  [ "$mode" = optional ] && { log "no llama.cpp source in $release (scripts/setup.sh): llama-server not built, its tests skip"; exit 0; }
  log "no $release/gitRelease.bundle: run scripts/setup.sh first"; exit 2
fi
if [ "$mode" = find ]; then
  built || { log "no llama-server built in $dest: scripts/build-llama-server.sh builds it (or set IB_LLAMA_SERVER)"; exit 1; }
  echo "$dest/llama-server"; exit 0
fi

mkdir -p "$dest"
# One build at a time a machine: a second clone's make test waits for the
# first's build and then finds it.
exec 9>"$dest/.lock"
flock 9
if ! built; then
  log "building llama-server for the CPU into $dest (once a machine; minutes of CPU)"
  # A build cut short (an interrupted make test) goes on where it was.
  if [ "$(git -C "$dest/src" rev-parse HEAD 2>/dev/null)" != "$(commit)" ]; then
    rm -rf "$dest/src" "$dest/build"
    git clone -q "$release/gitRelease.bundle" "$dest/src" 2>/dev/null
  fi
  gen=()
  command -v ninja >/dev/null && gen=(-G Ninja)
  {
    cmake -S "$dest/src" -B "$dest/build" "${gen[@]}" "${flags[@]}"
    TIMEFORMAT='llama-server build: %R s wall, %U s user, %S s system'
    time nice -n 10 cmake --build "$dest/build" -j "$(nproc)" --target llama-server
  } >"$dest/build.log" 2>&1 || { log "the build failed: $dest/build.log"; tail -5 "$dest/build.log" >&2; exit 1; }
  cp "$dest/build/bin/llama-server" "$dest/llama-server.tmp"
  mv -f "$dest/llama-server.tmp" "$dest/llama-server"
  wanted_info >"$dest/build-info"
  rm -rf "$dest/src" "$dest/build"
  log "$(tail -1 "$dest/build.log")"
fi
echo "$dest/llama-server"
