#!/usr/bin/env python3
"""Runs the scenes and reports per-round time: ``run_scenes.py [--rounds N] [--scene NAME]``.

Checks every result against numpy; exit status 1 on any mismatch."""
from __future__ import annotations

import argparse
import pathlib
import statistics
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from scene import MODES, check_outputs, run_scene, supports  # noqa: E402
from scenes import SCENES  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=1, help="runs per scene/runtime/mode")
    parser.add_argument("--scene", action="append", help="only these scenes (repeatable)")
    parser.add_argument("--dtype", action="append", help="only these dtypes (repeatable)")
    options = parser.parse_args()
    # What would run nothing (or crash on an empty median) is bad usage: exit 2, named.
    if options.rounds < 1:
        parser.error(f"--rounds must be at least 1, got {options.rounds}")
    for given, known in ((options.scene, {s.name for s in SCENES}),
                         (options.dtype, {d for s in SCENES for d in s.dtypes})):
        unknown = sorted(set(given or ()) - known)
        if unknown:
            parser.error(f"unknown {unknown}; choose from {sorted(known)}")
    chosen = [(scene, dtype) for scene in SCENES if not options.scene or scene.name in options.scene
              for dtype in scene.dtypes if not options.dtype or dtype in options.dtype]
    if not chosen:
        parser.error(f"no chosen scene has a chosen dtype ({', '.join(options.scene)} in "
                     f"{', '.join(options.dtype)}): nothing would run")
    failed = 0
    print(f"{'scene':24} {'runtime':7} {'mode':8} {'dtype':9} {'tasks':>6} "
          f"{'median ms/round':>16} {'min ms':>8}  result")
    for scene in SCENES:
        if options.scene and scene.name not in options.scene:
            continue
        for runtime, mode in MODES:
            if not supports(scene, mode):
                continue
            for dtype in scene.dtypes:
                if options.dtype and dtype not in options.dtype:
                    continue
                inputs, outputs, seconds = run_scene(scene, runtime, mode, dtype, options.rounds)
                reports = check_outputs(scene, inputs, outputs, dtype)
                failed += bool(reports)
                print(f"{scene.name:24} {runtime:7} {mode:8} {dtype:9} {scene.tasks:6} "
                      f"{statistics.median(seconds) * 1e3:16.2f} {min(seconds) * 1e3:8.2f}  "
                      f"{'OK' if not reports else 'MISMATCH'}")
                for report in reports:
                    print("   ", report)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
