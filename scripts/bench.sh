#!/usr/bin/env bash
# Builds simpler (scripts/build.sh, default build dir) and runs every benchmark, printing
# their tables. Benchmarks are not tests: they print figures and ratios to anchors
# measured in the same run. See docs/performance.md.
# Usage: scripts/bench.sh [--quick] [--no-build] [--build-dir DIR]
#   --quick       short runs (smoke check of the benchmarks themselves)
#   --no-build    use an existing build
#   --build-dir   a build other than build/ (implies --no-build)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
quick=()
build=1
dir="$here/build"
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=(--quick) ;;
    --no-build) build=0 ;;
    --build-dir) dir=$(cd "$2" && pwd); build=0; shift ;;
    *) echo "bench.sh: unknown argument $1 (use --quick, --no-build, --build-dir DIR)" >&2; exit 2 ;;
  esac
  shift
done
if [ "$build" = 1 ]; then
  "$here/scripts/build.sh" >/dev/null
fi
bin="$dir/bin"
for b in tensor_map_bench task_overhead_bench kernel_launch_bench; do
  if [ ! -x "$bin/$b" ]; then
    echo "bench.sh: $bin/$b is missing (build it: scripts/build.sh)" >&2
    exit 1
  fi
done
export OMP_NUM_THREADS=2
failed=()
# One failing benchmark does not hide the others' tables.
run() {
  local name=$1
  shift
  "$@" || { echo "bench.sh: $name failed (exit $?)"; failed+=("$name"); }
}

echo "== machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) (start)"
echo
echo "== tensor map (bench/tensor_map)"
run tensor_map_bench "$bin/tensor_map_bench" "${quick[@]}"
echo
echo "== per-task overhead vs oneTBB, libgomp and the serial floor (bench/task_overhead)"
run task_overhead_bench "$bin/task_overhead_bench" "${quick[@]}"
echo
if [ ${#quick[@]} -eq 0 ]; then
  # Runs short enough to fit a scheduler time slice: on a loaded machine a 20,000-task run
  # is preempted several times, which inflates every runtime's figure alike.
  echo "== the same, short runs (2,000 tasks, median of 15)"
  run task_overhead_short "$bin/task_overhead_bench" --tasks 2000 --reps 15
  echo
fi
echo "== per-task cost against tasks per run and dependencies per task (bench/task_overhead --scaling)"
run task_overhead_scaling "$bin/task_overhead_bench" --scaling "${quick[@]}"
echo
echo "== decoder layer end to end: simpler vs serial floor vs oneTBB flow graph vs ideal; pipelined decode loop (bench/scenes)"
if [ -x "$bin/scene_bench" ]; then
  run scene_bench "$bin/scene_bench" "${quick[@]}"
else
  echo "scene_bench not built (needs libtbb-dev)"
fi
echo
echo "== kernel_launch from C++ (bench/kernel_launch)"
run kernel_launch_bench "$bin/kernel_launch_bench" "${quick[@]}"
echo

# futex system calls made by the launching thread while the device is busy: strace the
# probe mode, which brackets each window with getppid() on the launching thread.
echo "== futex calls per launch on the caller's thread, device busy (strace)"
probe_launches=2000
[ ${#quick[@]} -gt 0 ] && probe_launches=200
if command -v strace >/dev/null 2>&1; then
  trace=$(mktemp)
  out=$(mktemp)
  trap 'rm -f "$trace" "$out"' EXIT
  if strace -f -qq -e trace=futex,getppid -o "$trace" \
      "$bin/kernel_launch_bench" --futex-probe "$probe_launches" >"$out" 2>&1; then
    tid=$(awk '/^caller_tid/ {print $2}' "$out")
    # Window 1 lies between the 1st and 2nd getppid of the caller, window 2 between the
    # 3rd and 4th. A blocking futex shows as "futex(... <unfinished ...>" (counted once).
    awk -v tid="$tid" -v n="$probe_launches" '
      $1 == tid && /getppid\(/ { m++; next }
      $1 == tid && /futex\(/ { if (m == 1) held++; else if (m == 3) running++ }
      END {
        printf "stream held by a host function:   %d futex calls in %d launches (%.4f per launch)\n", held, n, held / n
        printf "stream running earlier launches:  %d futex calls in %d launches (%.4f per launch)\n", running, n, running / n
        # Held: a launch must never block the caller. Running: the executor parks between
        # bursts and a launch that finds it parked wakes it (one futex): counted, no target.
        printf "target 0 per launch while the stream is held: %s\n", (held == 0) ? "met" : "MISSED"
        printf "(while it runs, each futex is a launch waking the executor parked between bursts)\n"
      }' "$trace"
  else
    echo "strace could not trace the probe (ptrace not permitted?):"
    sed -n 1,5p "$out"
    echo "see the getrusage voluntary-context-switch line of kernel_launch_bench instead"
  fi
else
  echo "strace is not installed (apt-get install strace); see the getrusage voluntary-"
  echo "context-switch line of kernel_launch_bench instead"
fi
echo

echo "== kernel_launch from Python (bench/kernel_launch/launch_bench.py)"
# The Python module of this build: $dir/python/simpler/_native*.so, found by the package in
# python/simpler through SIMPLER_BUILD_DIR (so the module and the runtime builds share one
# sim driver, as kernel mode requires).
if ! ls "$dir"/python/simpler/_native*.so >/dev/null 2>&1; then
  echo "the Python module is not built in $dir (scripts/build.sh builds it into build/python/simpler)"
else
  run launch_bench.py env SIMPLER_BUILD_DIR="$dir" /usr/bin/python3 \
    "$here/bench/kernel_launch/launch_bench.py" "${quick[@]}"
  echo
  echo "== several chips in parallel (bench/multi_chip/multi_chip_bench.py)"
  multi_repeat=()
  [ ${#quick[@]} -gt 0 ] && multi_repeat=(--repeat 2)
  run multi_chip_bench.py env SIMPLER_BUILD_DIR="$dir" /usr/bin/python3 "$here/bench/multi_chip/multi_chip_bench.py" \
    "${multi_repeat[@]}"
  echo
  echo "== several hosts on Open MPI vs bare mpi4py (bench/multi_host/multi_host_bench.py)"
  run multi_host_bench.py /usr/bin/python3 "$here/bench/multi_host/multi_host_bench.py" \
    "${quick[@]}"
fi
echo
echo "== machine: load average $(cut -d' ' -f1-3 /proc/loadavg) (end)"
if [ ${#failed[@]} -gt 0 ]; then
  echo "bench.sh: failed: ${failed[*]}"
  exit 1
fi
