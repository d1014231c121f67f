#!/usr/bin/env bash
# Sets up, builds and runs every test (C++ via ctest, Python via pytest).
# Usage: scripts/test.sh [--sanitize=address|thread]   (sanitizer runs cover the C++ tests)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/scripts/setup.sh"
"$here/scripts/build.sh" "$@" >/dev/null
dir="$here/build"
case "${1:-}" in
  --sanitize=address) dir="$here/build-asan" ;;
  --sanitize=thread) dir="$here/build-tsan" ;;
esac
export SIMPLER_BUILD_DIR="$dir"
status=0
(cd "$dir" && ctest --output-on-failure -j 2 --timeout 300) || status=1
if [ -z "${1:-}" ]; then
  PYTHONPATH="$here/python" /usr/bin/python3 -m pytest "$here/tests/python" -q -p no:cacheprovider || status=1
fi
exit $status
