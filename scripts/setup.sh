#!/usr/bin/env bash
# Installs what simpler needs from Debian's packages (idempotent: installs only what is
# missing). It writes nothing into Python's site-packages (see the end).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)

packages=(cmake ninja-build g++ libgtest-dev libgmock-dev libbenchmark-dev
          pybind11-dev python3-dev python3-pytest python3-numpy
          clang-14 clang-format-14 clang-tidy-14 flake8 libfuzzer-14-dev libclang-rt-14-dev
          libtbb-dev libdlpack-dev nlohmann-json3-dev libssl-dev
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

# Nothing is written into Python's site-packages: the two commands (scripts/example.sh,
# scripts/test.sh) run with PYTHONPATH=python, and an install is `pip install .` into a
# venv (README). An older setup wrote a global simpler-dev.pth pointing at the checkout
# that ran it last; remove it when it points at this checkout (another checkout's stays).
site=$(/usr/bin/python3 -c 'import sysconfig; print(sysconfig.get_path("purelib", "posix_local"))' 2>/dev/null || true)
old_pth="$site/simpler-dev.pth"
if [ -n "$site" ] && [ -f "$old_pth" ] && [ "$(cat "$old_pth")" = "$here/python" ]; then
  rm -f "$old_pth" 2>/dev/null && echo "setup: removed $old_pth (use PYTHONPATH=$here/python or pip install)" || true
fi
