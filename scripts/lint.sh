#!/usr/bin/env bash
# The house rules, checked: clang-format (formatting), flake8 (Python), clang-tidy (bug
# patterns in the library sources). Usage: scripts/lint.sh [--fix] [--no-tidy]
#   --fix       rewrite files with clang-format instead of failing on a difference
#   --no-tidy   skip clang-tidy (the slow part)
# clang-tidy reads build/compile_commands.json: run scripts/build.sh first.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
fix=0
tidy=1
for a in "$@"; do
  case "$a" in
    --fix) fix=1 ;;
    --no-tidy) tidy=0 ;;
    *) echo "lint.sh: unknown argument $a (use --fix, --no-tidy)" >&2; exit 2 ;;
  esac
done
status=0
mapfile -t cxx < <(git ls-files '*.cpp' '*.h' '*.c' '*.inc')
if [ "$fix" = 1 ]; then
  clang-format-14 -i "${cxx[@]}"
else
  clang-format-14 --dry-run --Werror "${cxx[@]}" || { echo "lint: clang-format differences (fix: scripts/lint.sh --fix)"; status=1; }
fi
flake8 setup.py python tests examples bench scripts || { echo "lint: flake8 findings"; status=1; }
if [ "$tidy" = 1 ]; then
  if [ ! -f build/compile_commands.json ]; then
    echo "lint: build/compile_commands.json missing (run scripts/build.sh)" >&2
    exit 1
  fi
  mapfile -t srcs < <(git ls-files 'src/*.cpp')
  # clang-tidy exits non-zero on findings (warnings are errors), and so does xargs: read
  # the findings from the output rather than from the pipeline's status.
  findings=$(printf '%s\n' "${srcs[@]}" | xargs -P "$(nproc)" -n 4 clang-tidy-14 -p build --quiet \
    2>/dev/null | grep -E '^(/|src/).*(warning|error):' || true)
  if [ -n "$findings" ]; then
    printf '%s\n' "$findings"
    echo "lint: clang-tidy findings"
    status=1
  fi
fi
[ "$status" = 0 ] && echo "lint: clean"
exit $status
