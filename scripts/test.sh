#!/usr/bin/env bash
# Sets up, builds and runs every test: the lint (scripts/lint.sh), C++ via ctest, Python
# via pytest, and a bounded libFuzzer run of each harness (scripts/fuzz.sh).
# Usage: scripts/test.sh [--lint | --sanitize=address|thread]
#   --lint                only the lint (clang-format, flake8, clang-tidy)
#   --sanitize=address    C++ tests under ASan+UBSan (build-asan/), then the Python subset
#                         ASAN_PYTHON_TESTS with the ASan module and libasan preloaded
#   --sanitize=thread     C++ tests under TSan (build-tsan/)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
mode="${1:-}"
"$here/scripts/setup.sh"
case "$mode" in
  --lint)
    "$here/scripts/build.sh" >/dev/null
    exec "$here/scripts/lint.sh" ;;
  ""|--sanitize=address|--sanitize=thread) ;;
  *) echo "test.sh: unknown argument $mode (use --lint, --sanitize=address|thread)" >&2; exit 2 ;;
esac
"$here/scripts/build.sh" ${mode:+"$mode"} >/dev/null
dir="$here/build"
case "$mode" in
  --sanitize=address) dir="$here/build-asan" ;;
  --sanitize=thread) dir="$here/build-tsan" ;;
esac
export SIMPLER_BUILD_DIR="$dir"
status=0
if [ -z "$mode" ]; then
  "$here/scripts/lint.sh" || status=1
fi
(cd "$dir" && ctest --output-on-failure -j 2 --timeout 300) || status=1
if [ "$mode" = --sanitize=address ]; then
  # The interpreter itself is not instrumented: libasan must be loaded first (LD_PRELOAD)
  # and its leak checker off (CPython keeps its objects until exit by design). The module
  # and the runtime builds come from build-asan/ (build-asan/python/simpler links to the
  # package's .py files). The subset runs the native layers without torch / MPI.
  asan_python_tests=(test_status_list.py test_errors.py test_task_interface.py
                     test_typed_signatures.py test_builds.py test_kernel_compiler.py
                     test_chip_worker.py test_worker_program.py test_kernel_mode.py
                     test_kernel_mode_lifecycle.py test_sim.py test_from_kernel.py)
  LD_PRELOAD="$(g++ -print-file-name=libasan.so)" \
    ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    PYTHONPATH="$dir/python" /usr/bin/python3 -m pytest \
    "${asan_python_tests[@]/#/$here/tests/python/}" -q -p no:cacheprovider || status=1
fi
if [ -z "$mode" ]; then
  PYTHONPATH="$here/python" /usr/bin/python3 -m pytest "$here/tests/python" "$here/tests/scenes" -q -p no:cacheprovider || status=1
  "$here/scripts/fuzz.sh" || status=1
fi
exit $status
