#!/usr/bin/env bash
# Installs what simpler needs from Debian's packages (idempotent: installs only what is
# missing), then makes `import simpler` work from /usr/bin/python3 for this checkout.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)

packages=(cmake ninja-build g++ libgtest-dev libgmock-dev libbenchmark-dev
          pybind11-dev python3-dev python3-pytest python3-numpy
          clang-14 clang-format-14 clang-tidy-14 flake8 libfuzzer-14-dev libclang-rt-14-dev
          libtbb-dev libdlpack-dev nlohmann-json3-dev
          openmpi-bin libopenmpi-dev python3-mpi4py
          python3-setuptools python3-wheel python3-build python3-venv python3-pip
          python3-torch graphviz strace)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Point Debian's python at this checkout's package (python/simpler); the native module is
# built into that folder by scripts/build.sh.
site=$(/usr/bin/python3 -c 'import sysconfig; print(sysconfig.get_path("purelib", "posix_local"))' 2>/dev/null || true)
if [ -n "$site" ] && { [ -w "$site" ] || [ -w "$(dirname "$site")" ]; }; then
  mkdir -p "$site"
  echo "$here/python" > "$site/simpler-dev.pth"
fi
