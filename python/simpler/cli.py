"""The ``simpler`` command line (``python -m simpler`` or the ``simpler`` console script).

Subcommands (each has ``--help``; see docs/cli.md):

    info                      version, platforms, runtime builds (ABI version, kernel mode),
                              simulated devices
    probe --platform P --runtime R
                              the pre-init kernel-mode probe: exit 0 when supported, 1 when not
    compile ...               kernel / orchestration sources -> image files, on a thread pool,
                              one progress line per source
    trace FILE                summary of a swimlane trace: tasks per core, busy %, longest gaps

Results go to stdout; errors go to stderr with exit status 2 (bad usage or input) or 1
(the operation ran and failed).
"""
from __future__ import annotations

import argparse
import ctypes
import json
import os
import pathlib
import sys
from typing import Any, Dict, List, Optional, Sequence

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


class CliError(Exception):
    """A refusal of the command line: printed to stderr, exit status ``code``."""

    def __init__(self, message: str, code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.code = code


# ---------------------------------------------------------------------------------- info


class _ApiHead(ctypes.Structure):
    # The first fields of SimplerApi (include/simpler/abi/runtime_abi.h).
    _fields_ = [("struct_size", ctypes.c_size_t), ("major", ctypes.c_uint32),
                ("minor", ctypes.c_uint32)]


# The C ABI major this package speaks (SIMPLER_API_MAJOR of its headers).
_API_MAJOR = 2


def runtime_abi_version(host_lib_path: str) -> Optional[str]:
    """The C ABI version of a runtime build, ``"major.minor"`` (from the table its
    ``simpler_get_api`` returns), or None when it does not answer."""
    try:
        lib = ctypes.CDLL(host_lib_path, mode=os.RTLD_LOCAL)
    except OSError:
        return None
    get_api = getattr(lib, "simpler_get_api", None)
    if get_api is not None:
        get_api.argtypes = [ctypes.c_uint32, ctypes.c_uint32,
                            ctypes.POINTER(ctypes.POINTER(_ApiHead)),
                            ctypes.POINTER(ctypes.c_char_p)]
        get_api.restype = ctypes.c_int
        table = ctypes.POINTER(_ApiHead)()
        message = ctypes.c_char_p()
        if get_api(_API_MAJOR, 0, ctypes.byref(table), ctypes.byref(message)) == 0 and table:
            return f"{table.contents.major}.{table.contents.minor}"
        return None
    legacy = getattr(lib, "simpler_runtime_abi_version", None)  # ABI v1 builds
    if legacy is None:
        return None
    legacy.argtypes = [ctypes.POINTER(ctypes.c_uint32)]
    legacy.restype = ctypes.c_int
    version = ctypes.c_uint32(0)
    return f"{version.value}" if legacy(ctypes.byref(version)) == 0 else None


def collect_info() -> Dict[str, Any]:
    """What ``simpler info`` reports, as a dict (``--json`` prints it as is)."""
    import simpler
    from simpler import builds, kernel_compiler, sim
    from simpler.chip_worker import ChipWorker

    info: Dict[str, Any] = {
        "version": simpler.__version__,
        "package": str(pathlib.Path(simpler.__file__).resolve().parent),
        "python": sys.version.split()[0],
        "lib_dir": builds.default_lib_dir(),
        "include_dir": kernel_compiler.kernel_include_dir(),
        "kernel_compiler": kernel_compiler.KernelCompiler(use_cache=False).compiler,
        "platforms": [],
        "runtimes": [],
    }
    for platform in builds.known_platforms():
        entry: Dict[str, Any] = {"name": platform, "available": False}
        for runtime in builds.known_runtimes():
            try:
                bins = builds.find_build(platform, runtime)
            except (ValueError, FileNotFoundError) as e:
                entry.setdefault("reason", str(e).split(";")[0])
                continue
            entry["available"] = True
            entry.pop("reason", None)
            try:
                kernel_mode: Optional[bool] = bool(ChipWorker.probe_kernel_mode_supported(bins))
            except Exception:  # noqa: BLE001 - reported as unknown
                kernel_mode = None
            info["runtimes"].append({
                "platform": platform, "runtime": runtime, "path": bins.host_lib_path,
                "abi_version": runtime_abi_version(bins.host_lib_path),
                "kernel_mode": kernel_mode,
            })
        info["platforms"].append(entry)
    config = sim.get_config()
    devices = []
    for device in range(sim.device_count()):
        topology = sim.device_topology(device)
        devices.append({"device": device, "clusters": topology.clusters,
                        "aic_cores": topology.aic_cores, "aiv_cores": topology.aiv_cores,
                        "aicpu_threads": topology.aicpu_threads})
    info["sim"] = {"driver_api_version": sim.api_version(),
                   "device_memory_bytes": config.device_memory_bytes, "devices": devices}
    info["level4"] = _level4()
    return info


def _level4() -> Dict[str, Any]:
    """Whether Worker(level=4) can run here; MPI is not initialized (importing mpi4py would)."""
    import importlib.metadata
    import importlib.util
    try:
        from simpler import _mpi_native  # noqa: F401 - loads libmpi only
    except ImportError:
        # A missing module is not missing MPI: scripts/example.sh builds only simpler_native.
        return {"available": False, "reason": "simpler._mpi_native is not built: build it with "
                "scripts/build.sh (or bash scripts/example.sh multi_host); CMake builds it only "
                "when it finds MPI (Debian: libopenmpi-dev, scripts/setup.sh)"}
    if importlib.util.find_spec("mpi4py") is None:
        return {"available": False, "reason": "mpi4py is missing (Debian: python3-mpi4py)"}
    try:
        version: Optional[str] = importlib.metadata.version("mpi4py")
    except importlib.metadata.PackageNotFoundError:
        version = None
    return {"available": True, "mpi4py": version}


def _yes_no(value: Optional[bool]) -> str:
    return "unknown" if value is None else ("yes" if value else "no")


def cmd_info(args: argparse.Namespace) -> int:
    info = collect_info()
    if args.json:
        print(json.dumps(info, indent=2))
        return EXIT_OK
    print(f"simpler {info['version']} (python {info['python']})")
    print(f"  package      {info['package']}")
    print(f"  lib dir      {info['lib_dir']}")
    print(f"  include dir  {info['include_dir']}")
    print(f"  kernel c++   {info['kernel_compiler']}")
    print("platforms")
    for p in info["platforms"]:
        note = "built" if p["available"] else f"not available: {p.get('reason', '')}"
        print(f"  {p['name']:<10} {note}")
    print("runtimes")
    for r in info["runtimes"]:
        abi = "?" if r["abi_version"] is None else r["abi_version"]
        print(f"  {r['platform']}/{r['runtime']:<26} ABI {abi}  kernel mode: "
              f"{_yes_no(r['kernel_mode']):<4} {r['path']}")
    s = info["sim"]
    print(f"sim devices (driver API {s['driver_api_version']}, "
          f"{s['device_memory_bytes'] // (1 << 20)} MiB each)")
    for d in s["devices"]:
        print(f"  device {d['device']}: {d['clusters']} clusters ({d['aic_cores']} AIC + "
              f"{d['aiv_cores']} AIV cores), {d['aicpu_threads']} AICPU threads")
    l4 = info["level4"]
    print("level 4 (several hosts, Open MPI)")
    print(f"  yes: simpler._mpi_native built, mpi4py {l4['mpi4py'] or 'found'}" if l4["available"]
          else f"  not available: {l4['reason']}")
    return EXIT_OK


# --------------------------------------------------------------------------------- probe


def cmd_probe(args: argparse.Namespace) -> int:
    from simpler import builds
    from simpler.chip_worker import ChipWorker

    try:
        bins = builds.find_build(args.platform, args.runtime, args.lib_dir)
    except (ValueError, FileNotFoundError) as e:
        raise CliError(str(e)) from None
    supported = bool(ChipWorker.probe_kernel_mode_supported(bins))
    if not args.quiet:
        state = "supported" if supported else "not supported"
        print(f"kernel mode {state}: platform={args.platform} runtime={args.runtime} "
              f"({bins.host_lib_path})")
    return EXIT_OK if supported else EXIT_FAILED


# ------------------------------------------------------------------------------- compile


def _parse_kernel_spec(spec: str) -> "tuple[str, str]":
    kind, sep, path = spec.partition(":")
    if not sep or kind.lower() not in ("aic", "aiv", "mix") or not path:
        raise CliError(f"--kernel expects CORE:FILE with CORE 'aic' or 'aiv' (or 'mix' for a "
                       f"cluster task kernel), got {spec!r} (example: --kernel aiv:kernels/add.cpp)")
    return kind.lower(), path


def _parse_orchestration_spec(spec: str) -> "tuple[str, Optional[str]]":
    path, sep, entry = spec.rpartition(":")
    if not sep:
        return spec, None
    if not path or not entry:
        raise CliError(f"--orchestration expects FILE or FILE:ENTRY, got {spec!r}")
    return path, entry


def cmd_compile(args: argparse.Namespace) -> int:
    from simpler.kernel_compiler import CompileJob, CompileResult, KernelCompiler, compile_many

    planned: List["tuple[CompileJob, pathlib.Path]"] = []
    specs = [(kind, path, None) for kind, path in map(_parse_kernel_spec, args.kernel or [])]
    specs += [("orchestration", path, entry)
              for path, entry in map(_parse_orchestration_spec, args.orchestration or [])]
    if not specs:
        raise CliError("nothing to compile: give --kernel CORE:FILE and/or "
                       "--orchestration FILE[:ENTRY]")
    out_dir = pathlib.Path(args.output)
    names: Dict[str, str] = {}
    for kind, path, entry in specs:
        source_path = pathlib.Path(path)
        try:
            source = source_path.read_text()
        except OSError as e:
            raise CliError(f"cannot read {path}: {e.strerror}") from None
        target = out_dir / f"{source_path.stem}.{kind}.so"
        if str(target) in names:
            raise CliError(f"{path} and {names[str(target)]} would both write {target}; "
                           "rename one source")
        names[str(target)] = path
        planned.append((CompileJob(source, kind, entry, name=path), target))
    if args.jobs is not None and args.jobs < 1:
        raise CliError(f"--jobs must be >= 1, got {args.jobs}")

    try:
        compiler = KernelCompiler(cache_dir=args.cache_dir, use_cache=not args.no_cache)
    except ValueError as e:
        raise CliError(str(e)) from None
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise CliError(f"cannot create the output directory {out_dir}: {e.strerror}") from None

    failures: List[CompileResult] = []

    def progress(result: CompileResult, done: int, total: int) -> None:
        target = planned[result.index][1]
        width = len(str(total))
        label = f"[{done:>{width}}/{total}] {result.job.name} ({result.job.kind})"
        if result.ok:
            assert result.image is not None
            target.write_bytes(result.image)
            print(f"{label} -> {target} ({len(result.image)} bytes, {result.seconds:.2f} s)",
                  flush=True)
        else:
            failures.append(result)
            print(f"{label} FAILED ({result.seconds:.2f} s)", flush=True)

    compile_many(compiler, [job for job, _ in planned], max_workers=args.jobs, progress=progress)
    stats = compiler.stats
    print(f"{len(planned) - len(failures)}/{len(planned)} compiled "
          f"({stats['compiler_runs']} compiler runs, {stats['cache_hits']} cache hits)")
    for result in sorted(failures, key=lambda r: r.index):
        print(f"simpler compile: {result.job.name}: {result.error}", file=sys.stderr)
    return EXIT_FAILED if failures else EXIT_OK


# --------------------------------------------------------------------------------- trace


def cmd_trace(args: argparse.Namespace) -> int:
    from simpler import trace

    try:
        summary = trace.summarize(args.file, gaps=args.gaps)
    except (OSError, ValueError) as e:
        raise CliError(f"{args.file}: {e}") from None
    if args.json:
        print(json.dumps(summary.as_dict(), indent=2))
    else:
        print(summary.format())
    return EXIT_OK


# ---------------------------------------------------------------------------------- main


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="simpler", description="simpler: a task runtime for AI accelerator chips "
        "(simulated chip: platform a2a3sim). See docs/cli.md.")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("info", help="version, platforms, runtime builds, simulated devices",
                       description="What is installed and what it sees: the version, the "
                       "platforms, the runtime builds found (ABI version, kernel-mode "
                       "support) and the simulated devices.")
    p.add_argument("--json", action="store_true", help="print a JSON object instead of text")
    p.set_defaults(func=cmd_info)

    p = sub.add_parser("probe", help="the pre-init kernel-mode probe (exit 0 supported, 1 not)",
                       description="Asks a runtime build whether it supports kernel mode, "
                       "before any init and without taking a device. Exit status 0 when "
                       "supported, 1 when not, 2 on bad input (unknown platform/runtime, "
                       "missing build).")
    p.add_argument("--platform", required=True, help="platform name, e.g. a2a3sim")
    p.add_argument("--runtime", required=True, help="runtime name, e.g. tensormap_and_ringbuffer")
    p.add_argument("--lib-dir", default=None, help="lib/ directory of the runtime builds "
                   "(default: $SIMPLER_LIB_DIR, else the package's own)")
    p.add_argument("-q", "--quiet", action="store_true", help="no output, exit status only")
    p.set_defaults(func=cmd_probe)

    p = sub.add_parser("compile", help="compile kernel / orchestration sources to images",
                       description="Compiles sources into simulator images "
                       "(OUTPUT/<stem>.<aic|aiv|mix|orchestration>.so) on a thread pool, printing "
                       "one progress line per source as it finishes. Results are cached "
                       "by content ($SIMPLER_CACHE_DIR or ~/.cache/simpler/kernels).")
    p.add_argument("--kernel", "-k", action="append", metavar="CORE:FILE",
                   help="a kernel source for core type aic, aiv or mix (repeatable)")
    p.add_argument("--orchestration", "-O", action="append", metavar="FILE[:ENTRY]",
                   help="an orchestration source; ENTRY, when given, must be exported "
                   "(repeatable)")
    p.add_argument("-o", "--output", default=".", help="output directory (default: .)")
    p.add_argument("-j", "--jobs", type=int, default=None,
                   help="parallel compilations (default: the number of CPUs)")
    p.add_argument("--cache-dir", default=None, help="kernel cache directory")
    p.add_argument("--no-cache", action="store_true", help="always run the compiler")
    p.set_defaults(func=cmd_compile)

    p = sub.add_parser("trace", help="summarize a swimlane trace (tasks per core, busy %%, gaps)",
                       description="Summarizes a swimlane trace written by a run with "
                       "CallConfig enable_swimlane on (<output_prefix>/swimlane.json): per core the "
                       "number of kernel blocks, busy time and busy % of the run's span, "
                       "and the longest idle gaps.")
    p.add_argument("file", help="the swimlane JSON file")
    p.add_argument("--gaps", type=int, default=5, help="how many longest gaps to list (default 5)")
    p.add_argument("--json", action="store_true", help="print a JSON object instead of text")
    p.set_defaults(func=cmd_trace)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Runs the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.version:
        from simpler._version import __version__
        print(f"simpler {__version__}")
        return EXIT_OK
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return int(args.func(args))
    except CliError as e:
        print(f"simpler {args.command}: {e}", file=sys.stderr)
        return e.code
    except BrokenPipeError:
        return EXIT_FAILED
    except Exception as e:  # noqa: BLE001 - one line on stderr, not a traceback
        print(f"simpler {args.command}: {type(e).__name__}: {e}", file=sys.stderr)
        return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
