#!/usr/bin/env bash
# Builds the libFuzzer harnesses of fuzz/ (clang++-14, ASan+UBSan, build-fuzz/) and runs
# each for a bounded time from the committed seed corpus. Fails on any crash, leak, UB
# report or timeout; the reproducer is kept in build-fuzz/artifacts/.
# Usage: scripts/fuzz.sh [harness...]     (default: every harness)
#   SIMPLER_FUZZ_SECONDS   seconds per harness (default 20, at most 30 in CI)
#   SIMPLER_FUZZ_JOBS      parallel fuzzing processes per harness (default 1)
# Reproduce a finding: build-fuzz/<harness> build-fuzz/artifacts/<crash-file>
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
seconds="${SIMPLER_FUZZ_SECONDS:-20}"
jobs="${SIMPLER_FUZZ_JOBS:-1}"
build="$here/build-fuzz"
if ! command -v clang++-14 >/dev/null; then
  echo "fuzz.sh: clang++-14 not found (scripts/setup.sh installs clang-14 and libfuzzer-14-dev)" >&2
  exit 1
fi
cmake -S "$here/fuzz" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++-14 \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" >/dev/null
declare -A corpus=([fuzz_callable_image]=callable_image [fuzz_task_args]=task_args)
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=(fuzz_callable_image fuzz_task_args)
mkdir -p "$build/artifacts"
status=0
for h in "${harnesses[@]}"; do
  seeds="$here/fuzz/corpus/${corpus[$h]:?unknown harness $h}"
  # New inputs go to a scratch corpus; the committed seeds are only read.
  work="$build/corpus/${corpus[$h]}"
  mkdir -p "$work"
  echo "fuzz.sh: $h for ${seconds}s"
  parallel=()
  [ "$jobs" -le 1 ] || parallel=(-fork="$jobs")
  if ! (cd "$build" && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
        UBSAN_OPTIONS=print_stacktrace=1 \
        "$build/$h" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        "${parallel[@]}" -print_final_stats=1 \
        -artifact_prefix="$build/artifacts/$h-" "$work" "$seeds" \
        >"$build/$h.log" 2>&1); then
    echo "fuzz.sh: $h FAILED (reproducer in $build/artifacts/, log $build/$h.log):" >&2
    tail -40 "$build/$h.log" >&2
    status=1
  else
    grep -E "stat::number_of_executed_units|Done [0-9]+ runs" "$build/$h.log" | tail -1 || true
  fi
done
exit $status
