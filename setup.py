"""Builds the native part of simpler with CMake (the rest is in pyproject.toml).

build_ext configures a CMake build (libraries and the Python module only: no tests, no
benchmarks) in setuptools' build_temp and runs `cmake --install` of the component
`simpler_package` into the package directory of the wheel, giving the self-contained,
relocatable layout the package finds at run time (paths relative to simpler.__file__):

    simpler/_native*.so                    RPATH $ORIGIN/lib
    simpler/lib/libsimpler_worker.so, libsimpler_sim.so
    simpler/lib/runtimes/a2a3sim/<runtime>/libhost_runtime.so
    simpler/include/simpler/...            kernel / orchestration headers

Environment: SIMPLER_CMAKE_ARGS (extra configure arguments), CMAKE_BUILD_PARALLEL_LEVEL.
"""
from __future__ import annotations

import os
import pathlib
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


class CMakeExtension(Extension):
    """The native module; its sources are CMake's business."""

    def __init__(self, name: str) -> None:
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext: Extension) -> None:
        if shutil.which("cmake") is None:
            raise RuntimeError("building simpler needs cmake (Debian: apt-get install cmake ninja-build)")
        package_dir = pathlib.Path(self.get_ext_fullpath(ext.name)).resolve().parent
        build_dir = pathlib.Path(self.build_temp).resolve() / "cmake"
        build_dir.mkdir(parents=True, exist_ok=True)
        configure = ["cmake", "-S", str(ROOT), "-B", str(build_dir),
                     # -O2 as the development build (scripts/build.sh): the code is
                     # warning-clean (-Werror) with it, and ccache can share objects.
                     "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG",
                     "-DCMAKE_C_FLAGS_RELEASE=-O2 -DNDEBUG",
                     "-DSIMPLER_BUILD_PYTHON=ON", "-DSIMPLER_BUILD_TESTS=OFF",
                     "-DSIMPLER_BUILD_BENCH=OFF",
                     f"-DPython_EXECUTABLE={sys.executable}",
                     f"-DCMAKE_INSTALL_PREFIX={package_dir}"]
        if shutil.which("ninja"):
            configure += ["-G", "Ninja"]
        configure += shlex.split(os.environ.get("SIMPLER_CMAKE_ARGS", ""))
        subprocess.run(configure, check=True)
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "simpler_python_modules",
                        "simpler_rt_tensormap_and_ringbuffer", "simpler_rt_host_build_graph",
                        "simpler_headers"], check=True)
        subprocess.run(["cmake", "--install", str(build_dir), "--component", "simpler_package"],
                       check=True)
        built = package_dir / pathlib.Path(self.get_ext_fullpath(ext.name)).name
        if not built.exists():
            raise RuntimeError(f"the CMake build did not produce {built}")


setup(ext_modules=[CMakeExtension("simpler._native")], cmdclass={"build_ext": CMakeBuild},
      options={"build": {"build_base": "build/setuptools"}})
