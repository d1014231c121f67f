#!/usr/bin/env bash
# Sets up, builds and runs the main example: kernel mode on the simulated chip (a framework
# owns device 0 and a stream; simpler enqueues a whole chip program on that stream).
# Usage: scripts/example.sh [example-name]   (default: kernel_mode)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
name="${1:-kernel_mode}"
step() { echo "example.sh: $*" >&2; }
if [ "$name" = "driver_demo" ]; then
  script="$here/examples/driver_demo.py"
else
  script="$here/examples/$name/main.py"
fi
# Before setup and the build: a mistyped name should not cost minutes of building first.
if [ ! -f "$script" ]; then
  known=$(cd "$here/examples" && for d in */main.py; do if [ -e "$d" ]; then printf '%s ' "${d%/main.py}"; fi; done)
  echo "example.sh: no example '$name' (looked for $script); the examples: ${known}driver_demo" >&2
  exit 2
fi
step "1/3 setup: Debian packages (installs only what is missing)"
"$here/scripts/setup.sh" >&2
# Only what an example needs: the Python module (with the sim driver and the worker) and
# the two runtime builds; no tests, no benchmarks. A first build on a 2-core machine takes
# about 2 minutes (124 of the project's 323 build steps); later runs take seconds.
# multi_host also needs simpler._mpi_native, a target of its own (only when CMake found MPI):
# simpler_python_modules builds every extension of the configuration.
module=simpler_native
[ "$name" = "multi_host" ] && module=simpler_python_modules
step "2/3 build: the Python module and the runtime builds (ninja's [done/total] lines follow)"
"$here/scripts/build.sh" --target="$module" --target=simpler_rt_tensormap_and_ringbuffer \
  --target=simpler_rt_host_build_graph >&2
step "3/3 run: $name"
# The build just made, whatever SIMPLER_BUILD_DIR the shell has (e.g. left from an ASan run).
SIMPLER_BUILD_DIR="$here/build" PYTHONPATH="$here/python" exec /usr/bin/python3 "$script"
