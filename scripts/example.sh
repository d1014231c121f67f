#!/usr/bin/env bash
# Sets up, builds and runs the main example: kernel mode on the simulated chip (a framework
# owns device 0 and a stream; simpler enqueues a whole chip program on that stream).
# Usage: scripts/example.sh [example-name]   (default: kernel_mode)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/scripts/setup.sh"
"$here/scripts/build.sh" >/dev/null
name="${1:-kernel_mode}"
if [ "$name" = "driver_demo" ]; then
  script="$here/examples/driver_demo.py"
else
  script="$here/examples/$name/main.py"
fi
[ -f "$script" ] || { echo "example.sh: no example '$name' (looked for $script)" >&2; exit 2; }
PYTHONPATH="$here/python" exec /usr/bin/python3 "$script"
