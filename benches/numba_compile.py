#!/usr/bin/env python3
"""numba-cuda baseline: warm compile time of one small operator to LTOIR.

Compiles `def op(a, b): return (a + b) ^ 7` as an `int32(int32, int32)` device
function with the C ABI for one compute capability (sm_90 by default), the way
a CUDA library hands a user's operator to an LTO link (cuda.compute/CCCL
does exactly this), and times:

  cold   the first compile in the process (loads libNVVM and libdevice, fills
         numba's typing caches); `import numba.cuda` is reported separately;
  warm   N further compiles, each of a *fresh* function object built from the
         same source (its own code object), so nothing is returned from a
         cache: every timed call is checked to have run libNVVM exactly once
         and to have returned LTOIR (magic 0x7F4E43ED, little endian, at
         offset 0) of the same size as the cold result;
  ptx    the same N warm compiles to PTX, for comparison.

For each it prints wall-clock median and minimum, the CPU time of the process
(less sensitive to other load on a shared machine) and the part spent inside
libNVVM (`nvvm.compile_ir`), so the Python front end (bytecode analysis,
typing, lowering to LLVM IR with llvmlite) can be told apart from NVVM.

No GPU or driver is needed: numba-cuda compiles for an explicit `cc` without
a CUDA context. Set up with benches/numba-setup.sh, then run with that venv:

  benches/numba-setup.sh
  /tmp/numba-venv/bin/python benches/numba_compile.py [--runs 50] [--cc 9.0]
"""

import argparse
import gc
import importlib.metadata
import json
import os
import re
import statistics
import struct
import sys
import time

LTOIR_MAGIC = 0x7F4E43ED
OP_SOURCE = "def op(a, b):\n    return (a + b) ^ 7\n"


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=50, help="warm compiles per output kind (default 50)")
    p.add_argument("--cc", default="9.0", help="compute capability MAJOR.MINOR (default 9.0)")
    p.add_argument("--abi-name", default="op", help="symbol name of the C-ABI wrapper (default op)")
    p.add_argument("--no-ptx", action="store_true", help="skip the PTX comparison")
    p.add_argument("--dump", metavar="DIR", help="write the last LTOIR and PTX (and versions) to DIR")
    p.add_argument("--json", action="store_true", help="also print one JSON object with every figure")
    args = p.parse_args()
    if args.runs < 1:
        p.error("--runs must be at least 1")
    try:
        major, minor = (int(x) for x in args.cc.split("."))
    except ValueError:
        p.error(f"--cc must look like 9.0, got {args.cc!r}")
    args.cc = (major, minor)
    return args


def fresh_op(serial):
    """A new function object with its own code object, identical in source.

    `compile()` of the same text yields an equal but distinct code object, so
    numba sees a function it has never compiled; `serial` only names the
    pseudo-file so that tracebacks say which instance failed."""
    namespace = {}
    exec(compile(OP_SOURCE, f"<numba-bench op #{serial}>", "exec"), namespace)
    return namespace["op"]


class NvvmMeter:
    """Counts and times calls to libNVVM made through numba's codegen."""

    def __init__(self, nvvm_module):
        self.calls = 0
        self.ns = 0
        self._nvvm = nvvm_module
        self._real = nvvm_module.compile_ir

        def timed_compile_ir(*a, **kw):
            t0 = time.perf_counter_ns()
            try:
                return self._real(*a, **kw)
            finally:
                self.ns += time.perf_counter_ns() - t0
                self.calls += 1

        # codegen calls `nvvm.compile_ir` through the module attribute, so
        # replacing it there catches both the PTX and the LTOIR path.
        nvvm_module.compile_ir = timed_compile_ir


class Sample:
    def __init__(self, wall_ns, cpu_ns, nvvm_ns):
        self.wall_ms = wall_ns / 1e6
        self.cpu_ms = cpu_ns / 1e6
        self.nvvm_ms = nvvm_ns / 1e6


def compile_once(cuda, sig, meter, serial, output, cc, abi_name):
    op = fresh_op(serial)
    calls0, nvvm0 = meter.calls, meter.ns
    w0, c0 = time.perf_counter_ns(), time.process_time_ns()
    code, resty = cuda.compile(
        op, sig, device=True, output=output, cc=cc, abi="c", abi_info={"abi_name": abi_name}
    )
    c1, w1 = time.process_time_ns(), time.perf_counter_ns()
    if meter.calls - calls0 != 1:
        raise SystemExit(
            f"numba-bench: compile #{serial} ({output}) ran libNVVM {meter.calls - calls0} times, "
            "expected exactly once: a cache answered or the pipeline changed"
        )
    return code, resty, Sample(w1 - w0, c1 - c0, meter.ns - nvvm0)


def check_ltoir(code, serial, want_len=None):
    if not isinstance(code, (bytes, bytearray)) or len(code) < 4:
        raise SystemExit(f"numba-bench: compile #{serial} returned {type(code).__name__}, not LTOIR bytes")
    (magic,) = struct.unpack_from("<I", code, 0)
    if magic != LTOIR_MAGIC:
        raise SystemExit(f"numba-bench: compile #{serial}: magic {magic:#010x}, expected LTOIR {LTOIR_MAGIC:#010x}")
    if want_len is not None and len(code) != want_len:
        raise SystemExit(f"numba-bench: compile #{serial}: LTOIR is {len(code)} bytes, the first was {want_len}")


def check_ptx(code, serial, abi_name):
    if not isinstance(code, str) or not re.search(rf"\.visible \.func\s+\(.*\)\s*{re.escape(abi_name)}\(", code):
        raise SystemExit(f"numba-bench: compile #{serial}: PTX lacks the device function {abi_name}")
    if "xor.b32" not in code:
        raise SystemExit(f"numba-bench: compile #{serial}: PTX lacks the xor of the operator")


def summarize(samples):
    wall = [s.wall_ms for s in samples]
    return {
        "runs": len(samples),
        "wall_median_ms": statistics.median(wall),
        "wall_min_ms": min(wall),
        "wall_max_ms": max(wall),
        "cpu_median_ms": statistics.median(s.cpu_ms for s in samples),
        "nvvm_median_ms": statistics.median(s.nvvm_ms for s in samples),
        "front_end_median_ms": statistics.median(s.wall_ms - s.nvvm_ms for s in samples),
    }


def loaded_library(stem):
    """Path of the shared library this process mapped for `stem` (Linux)."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.rsplit(None, 1)[-1]
                if os.path.basename(path).startswith(stem):
                    return path
    except OSError:
        pass
    return None


def dist_version(name):
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def main():
    args = parse_args()

    t0 = time.perf_counter_ns()
    try:
        from numba import cuda, int32
        from numba.cuda.cudadrv import nvvm
    except ImportError as e:
        raise SystemExit(
            f"numba-bench: cannot import numba.cuda ({e}); run benches/numba-setup.sh and use "
            "/tmp/numba-venv/bin/python"
        )
    import_ms = (time.perf_counter_ns() - t0) / 1e6

    import llvmlite
    import numba

    meter = NvvmMeter(nvvm)
    sig = int32(int32, int32)
    cc, abi_name = args.cc, args.abi_name

    ltoir, resty, cold = compile_once(cuda, sig, meter, 0, "ltoir", cc, abi_name)
    check_ltoir(ltoir, 0)
    if str(resty) != "int32":
        raise SystemExit(f"numba-bench: return type {resty}, expected int32")

    warm = []
    for i in range(1, args.runs + 1):
        gc.collect()  # outside the timed region, so no run pays for an earlier one's garbage
        code, _, s = compile_once(cuda, sig, meter, i, "ltoir", cc, abi_name)
        check_ltoir(code, i, len(ltoir))
        warm.append(s)
        ltoir = code

    ptx_samples, ptx = [], None
    if not args.no_ptx:
        for i in range(1, args.runs + 1):
            gc.collect()
            ptx, _, s = compile_once(cuda, sig, meter, args.runs + i, "ptx", cc, abi_name)
            check_ptx(ptx, args.runs + i, abi_name)
            ptx_samples.append(s)

    nvvm_obj = nvvm.NVVM()
    versions = {
        "numba-cuda": dist_version("numba-cuda"),
        "numba": numba.__version__,
        "llvmlite": llvmlite.__version__,
        "nvidia-nvvm": dist_version("nvidia-nvvm"),
        "cuda-bindings": dist_version("cuda-bindings"),
        "libnvvm_version": ".".join(map(str, nvvm_obj.get_version())),
        "nvvm_ir_version": ".".join(map(str, nvvm_obj.get_ir_version())),
        "libnvvm_path": loaded_library("libnvvm"),
        "python": sys.version.split()[0],
    }
    lto = summarize(warm)
    result = {
        "operator": OP_SOURCE.strip(),
        "signature": "int32(int32, int32)",
        "cc": f"{cc[0]}.{cc[1]}",
        "abi": "c",
        "versions": versions,
        "import_ms": import_ms,
        "cold_ms": cold.wall_ms,
        "cold_nvvm_ms": cold.nvvm_ms,
        "ltoir_bytes": len(ltoir),
        "ltoir": lto,
        "ptx": summarize(ptx_samples) if ptx_samples else None,
        "loadavg": os.getloadavg(),
        "cpus": os.cpu_count(),
    }

    v = versions
    print(
        f"numba-cuda {v['numba-cuda']} (numba {v['numba']}, llvmlite {v['llvmlite']}, libNVVM "
        f"{v['libnvvm_version']} from nvidia-nvvm {v['nvidia-nvvm']}, NVVM IR {v['nvvm_ir_version']}), "
        f"sm_{cc[0]}{cc[1]}, load average {result['loadavg'][0]:.2f} on {result['cpus']} CPUs"
    )
    print(
        f"numba-cuda {v['numba-cuda']}: warm median {lto['wall_median_ms']:.1f} ms "
        f"(min {lto['wall_min_ms']:.1f} ms) per operator to LTOIR, {lto['runs']} runs; "
        f"cold {cold.wall_ms:.0f} ms (+ import {import_ms:.0f} ms)"
    )
    print(
        f"  LTOIR {len(ltoir)} bytes; warm median: libNVVM {lto['nvvm_median_ms']:.1f} ms, "
        f"numba front end {lto['front_end_median_ms']:.1f} ms; CPU time {lto['cpu_median_ms']:.1f} ms; "
        f"max {lto['wall_max_ms']:.1f} ms"
    )
    if ptx_samples:
        p = result["ptx"]
        print(
            f"numba-cuda {v['numba-cuda']}: warm median {p['wall_median_ms']:.1f} ms "
            f"(min {p['wall_min_ms']:.1f} ms) per operator to PTX, {p['runs']} runs; "
            f"libNVVM {p['nvvm_median_ms']:.1f} ms, front end {p['front_end_median_ms']:.1f} ms"
        )
    if args.json:
        print(json.dumps(result))

    if args.dump:
        os.makedirs(args.dump, exist_ok=True)
        with open(os.path.join(args.dump, "op.ltoir"), "wb") as f:
            f.write(ltoir)
        if ptx is not None:
            with open(os.path.join(args.dump, "op.ptx"), "w") as f:
                f.write(ptx)
        with open(os.path.join(args.dump, "result.json"), "w") as f:
            json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
