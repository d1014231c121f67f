#!/usr/bin/env bash
# Usage: consumer_test.sh <build dir> <source dir>
# Installs the build into a scratch prefix, moves it (the package must not name its install
# path), and builds + runs the C++ example of docs/api.md against it both ways.
set -euo pipefail
build=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log"
# Every file inside the prefix, and only the C++ layout there: include/ and lib/ (the Python
# module belongs to the wheel's layout, setup.py's component; it landed at the prefix root).
if grep -E '^-- (Installing|Up-to-date|Set runtime path)' "$tmp/install.log" | grep -v -F "$tmp/prefix/"; then
  echo "cmake --install wrote outside the prefix" >&2; exit 1
fi
extra=$(cd "$tmp/prefix" && ls -A | grep -v -x -e include -e lib || true)
[ -z "$extra" ] || { echo "unexpected at the prefix root: $extra" >&2; exit 1; }
mv "$tmp/prefix" "$tmp/moved"
prefix=$tmp/moved

# The first ```cpp block and the first ```cmake block with find_package of docs/api.md.
block() {
  awk -v lang="$1" -v want="$2" '
    $0 == "```" lang { inside = 1; text = ""; next }
    inside && $0 == "```" { inside = 0; if (index(text, want)) { printf "%s", text; exit } next }
    inside { text = text $0 "\n" }' "$src/docs/api.md"
}
mkdir "$tmp/app"
block cpp "kernel mode supported" >"$tmp/app/app.cpp"
block cmake "find_package(simpler" >"$tmp/app/CMakeLists.txt"
test -s "$tmp/app/app.cpp" && test -s "$tmp/app/CMakeLists.txt"

check() {  # the example's own output
  out=$("$1")
  grep -q "kernel mode supported: 1" <<<"$out" && grep -q "tensors: 1" <<<"$out" ||
    { echo "unexpected output of $1: $out" >&2; exit 1; }
}

cmake -S "$tmp/app" -B "$tmp/out" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$tmp/out" >/dev/null
check "$tmp/out/app"

flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs simpler)
# shellcheck disable=SC2086
c++ -std=c++20 "$tmp/app/app.cpp" $flags -o "$tmp/app/app"
check "$tmp/app/app"
echo "install: find_package and pkg-config from a moved prefix work"
