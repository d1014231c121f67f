#!/usr/bin/env bash
# Sets up, builds and runs every test: the lint (scripts/lint.sh), C++ via ctest, Python
# via pytest, and a bounded libFuzzer run of each harness (scripts/fuzz.sh).
# Usage: scripts/test.sh [--lint | --sanitize=address|thread]
#   --lint                only the lint (clang-format, flake8, clang-tidy)
#   --sanitize=address    C++ tests under ASan+UBSan (build-asan/), then the Python suite
#                         with the ASan module and Debian's libasan preloaded
#   --sanitize=thread     C++ tests under TSan (build-tsan/)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
mode="${1:-}"
case "$mode" in  # before setup: a mistyped option installs and builds nothing
  ""|--lint|--sanitize=address|--sanitize=thread) ;;
  *) echo "test.sh: unknown argument $mode (use --lint, --sanitize=address|thread)" >&2; exit 2 ;;
esac
[ $# -le 1 ] || { echo "test.sh: one argument at most, got: $*" >&2; exit 2; }
"$here/scripts/setup.sh"
if [ "$mode" = --lint ]; then
  "$here/scripts/build.sh" >/dev/null
  exec "$here/scripts/lint.sh"
fi
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
  # The Python suite against the ASan build (its module in build-asan/python/simpler, found
  # through SIMPLER_BUILD_DIR; its runtime builds in build-asan/lib). The interpreter is not
  # instrumented, so Debian's libasan must be loaded first (LD_PRELOAD, inherited by the
  # suite's subprocesses), with libstdc++ right after it: python3 does not link libstdc++,
  # and ASan's __cxa_throw interceptor needs it loaded when ASan starts (else the first
  # C++ exception aborts with "real___cxa_throw != 0"). LeakSanitizer is off: CPython keeps
  # objects alive until exit by design, which it would report as leaks (the C++ tests above
  # run with it on). Reports go to files (pytest's output capture would swallow them when
  # a test process aborts); any report fails the run and is printed.
  # Excluded: test_packaging.py builds and installs wheels with a fresh, uninstrumented
  # CMake build (minutes, and nothing of it runs under ASan); the two test_docs.py tests
  # that link a C++ program against the build's libraries (pkg-config, find_package): the
  # ASan-instrumented libraries only link into a program built with -fsanitize=address,
  # which a user's build of the documented example is not (they check the build files).
  reports="$dir/sanitizer-reports"
  rm -rf "$reports" && mkdir -p "$reports"
  LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(g++ -print-file-name=libstdc++.so)" \
    ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:allow_user_segv_handler=1:log_path=$reports/asan" \
    UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$reports/ubsan" \
    PYTHONPATH="$here/python" /usr/bin/python3 -m pytest "$here/tests/python" "$here/tests/scenes" \
    --ignore="$here/tests/python/test_packaging.py" \
    --deselect="tests/python/test_docs.py::test_cpp_example_links_through_pkg_config" \
    --deselect="tests/python/test_docs.py::test_cpp_example_builds_with_find_package" \
    -q -p no:cacheprovider || status=1
  # One known line is not a report: ASan's interceptor of swapcontext warns once per process
  # that it "doesn't fully support makecontext/swapcontext" (the cluster fibers switch with
  # it and annotate each switch where they do not switch registers themselves, i.e. off
  # x86-64: src/engine/fiber.cpp). A file holding nothing else is dropped.
  for report in "$reports"/*; do
    [ -e "$report" ] || continue
    if ! grep -qv "WARNING: ASan doesn't fully support makecontext/swapcontext" "$report"; then
      rm -f "$report"
    fi
  done
  if compgen -G "$reports/*" >/dev/null; then
    cat "$reports"/* >&2
    status=1
  fi
fi
if [ -z "$mode" ]; then
  PYTHONPATH="$here/python" /usr/bin/python3 -m pytest "$here/tests/python" "$here/tests/scenes" -q -p no:cacheprovider || status=1
  "$here/scripts/fuzz.sh" || status=1
fi
exit $status
