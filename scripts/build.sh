#!/usr/bin/env bash
# Configures and builds simpler.
# Usage: scripts/build.sh [--sanitize=address|thread] [--target=NAME ...]
#   --target=NAME (repeatable) builds only those CMake targets (and what they need)
#   default      -> build/        (Release with debug info; Python module in build/python/simpler)
#   address      -> build-asan/   (ASan + UBSan; its Python module in build-asan/python/simpler)
#   thread       -> build-tsan/   (TSan, C++ only)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
sanitize=""
targets=()
for a in "$@"; do
  case "$a" in
    --sanitize=*) sanitize="${a#--sanitize=}" ;;
    --target=*) targets+=(--target "${a#--target=}") ;;
    *) echo "build.sh: unknown argument $a" >&2; exit 2 ;;
  esac
done
case "$sanitize" in
  "") dir="$here/build"; extra=(-DSIMPLER_BUILD_PYTHON=ON) ;;
  address) dir="$here/build-asan"; extra=(-DSIMPLER_SANITIZE=address -DSIMPLER_BUILD_PYTHON=ON) ;;
  thread) dir="$here/build-tsan"; extra=(-DSIMPLER_SANITIZE=thread -DSIMPLER_BUILD_PYTHON=OFF) ;;
  *) echo "build.sh: --sanitize must be address or thread" >&2; exit 2 ;;
esac
cmake -S "$here" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${extra[@]}" >/dev/null
cmake --build "$dir" -j "$(nproc)" "${targets[@]}"
echo "$dir"
