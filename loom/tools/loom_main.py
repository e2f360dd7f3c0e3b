"""loom: the showcase and the tools behind one command.

    loom demo            parse an example, run a pass pipeline on it, print before/after and timings;
                         run a StableHLO program with the compiled executor; train a small model;
                         differentiate through a data-dependent loop; nearest-neighbour search
    loom opt ARGS...     the same as loom-opt ARGS...
    loom bench NAME ARGS run benchmarks/NAME.py (from a source checkout); `ir` is ir_throughput
    loom --version
"""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
from pathlib import Path

import loom
from loom.tools import loom_opt

DEMO_EXAMPLE = "arith_canonicalize.mlir"
DEMO_PROGRAM = "mlp_forward.mlir"
DEMO_PIPELINE = "builtin.module(func.func(canonicalize,cse),symbol-dce)"
BENCHMARK_ALIASES = {"ir": "ir_throughput"}
# The parts after the IR tour, each a module with `run(out)`.
DEMO_PARTS = (
    ("train: an MLP classifier, loom.value_and_grad + SGD", "loom.tools.demo_training"),
    ("control flow: gradients through a data-dependent loop", "loom.tools.demo_control_flow"),
    ("nearest neighbours: fused approximate top-k", "loom.tools.demo_knn"),
)


def checkout_root() -> Path | None:
    """The source checkout loom runs from (it holds examples/ and benchmarks/), if any."""
    root = Path(loom.__file__).resolve().parent.parent
    return root if (root / "examples").is_dir() or (root / "benchmarks").is_dir() else None


def _load_dialects() -> list[str]:
    """Import the optional dialect modules this demo uses; the names of those missing."""
    missing = []
    for name in ("func", "arith"):
        try:
            importlib.import_module(f"loom.dialects.{name}")
        except ImportError:
            missing.append(name)
    return missing


def _header(title: str) -> None:
    print(f"\n== {title} " + "=" * max(0, 72 - len(title)))


def demo() -> int:
    """Parse examples/arith_canonicalize.mlir, run DEMO_PIPELINE, print the IR before and after."""
    import loom.ir as ir
    root = checkout_root()
    path = root / "examples" / DEMO_EXAMPLE if root else None
    if path is None or not path.is_file():
        print(f"loom demo: examples/{DEMO_EXAMPLE} not found; run it from a source checkout of loom", file=sys.stderr)
        return 1
    text = path.read_text(encoding="utf-8")
    missing = _load_dialects()
    shown = f"examples/{DEMO_EXAMPLE}"
    try:
        module = ir.parse(text, filename=shown)
    except ir.LoomError as e:
        if not missing:
            print(loom_opt.diagnostic_from_error(e).render({shown: text.split("\n")}), file=sys.stderr)
            return 1
        module = ir.parse(text, filename=shown, allow_unregistered=True)
        print(f"(note: dialects {', '.join(missing)} are not in this checkout yet; their ops are parsed as "
              "unregistered ops)")

    _header(f"input: {shown}")
    print(ir.print(module), end="")

    _header(f"pipeline: {DEMO_PIPELINE}")
    try:
        pm = loom_opt.build_pass_manager(DEMO_PIPELINE, timing=True)
    except ir.LoomError as e:  # the passes are not all in this checkout yet
        print(f"(skipped, the passes are not available yet: {getattr(e, 'message', e)})")
        return 0
    before = _count_ops(module)
    try:
        loom_opt.run_pass_manager(pm, module)
    except ir.LoomError as e:
        print(loom_opt.diagnostic_from_error(e).render({shown: text.split("\n")}), file=sys.stderr)
        return 1
    print(f"canonicalize folds constants, cse merges equal expressions, symbol-dce erases unused private "
          f"functions: {before} ops -> {_count_ops(module)} ops")

    _header("output")
    print(ir.print(module), end="")
    _header("pass timings")
    print(loom_opt.timing_report(pm), end="")
    status = _demo_execute(root)
    for title, module in DEMO_PARTS:
        _header(title)
        importlib.import_module(module).run(sys.stdout)
    return status


def _demo_execute(root: Path) -> int:
    """Run a StableHLO program (an MLP forward pass with softmax) on numpy arrays."""
    import numpy as np
    path = root / "examples" / DEMO_PROGRAM
    if not path.is_file():
        return 0
    _header(f"execute: examples/{DEMO_PROGRAM} on numpy arrays")
    executable = loom.compile(path.read_text())
    rng = np.random.default_rng(0)
    x, w1, w2 = (rng.standard_normal(shape).astype(np.float32) for shape in [(4, 3), (3, 5), (5, 2)])
    y = executable(x, w1, w2)
    z = np.tanh(x @ w1) @ w2
    e = np.exp(z - z.max(axis=1, keepdims=True))
    expected = e / e.sum(axis=1, keepdims=True)
    print("generated Python (loom's compiled executor):")
    print("    " + "\n    ".join(line for line in executable.source.splitlines() if line.startswith(("def", "    "))))
    print(f"softmax(tanh(x @ w1) @ w2), first row: {np.array2string(y[0], precision=4)}")
    print(f"max |loom - numpy| = {np.abs(y - expected).max():.2e}")
    found = loom.devices()
    print("devices found: " + ", ".join(str(d) for d in found))
    for device in found[1:]:  # the torch backend, on its CPU and on each GPU
        on_device = np.asarray(loom.compile(path.read_text(), backend="torch", device=device)(x, w1, w2))
        print(f"  the same program on {device}: max |loom - numpy| = {np.abs(on_device - expected).max():.2e}")
    return 0


def _count_ops(op) -> int:
    return sum(1 for _ in op.walk())


def bench(args: list[str]) -> int:
    """Run benchmarks/NAME.py of the checkout, passing the other `args` on."""
    root = checkout_root()
    folder = root / "benchmarks" if root else None
    if folder is None or not folder.is_dir():
        print("loom bench: no benchmarks/ here; benchmarks run from a source checkout of loom", file=sys.stderr)
        return 1
    names = sorted(p.stem for p in folder.glob("*.py")) + sorted(BENCHMARK_ALIASES)
    if not args or args[0] not in names:
        print("usage: loom bench {" + ",".join(names) + "} [options]", file=sys.stderr)
        return 2
    script = folder / f"{BENCHMARK_ALIASES.get(args[0], args[0])}.py"
    return subprocess.call([sys.executable, str(script), *args[1:]])


def main(argv: list[str] | None = None) -> int:
    """Entry point of `loom`."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] == "opt":
        return loom_opt.main(argv[1:], prog="loom opt")
    if argv and argv[0] == "bench":
        return bench(argv[1:])
    ap = argparse.ArgumentParser(prog="loom", description="loom, a machine-learning compiler stack in Python",
                                 epilog="commands: demo | opt ARGS (as loom-opt) | bench NAME [ARGS]")
    ap.add_argument("--version", action="version", version=f"loom {loom.__version__}")
    ap.add_argument("command", choices=["demo", "opt", "bench"], help="what to run")
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 2
    if args.command == "demo":
        return _guarded(demo)
    return 2


def _guarded(command) -> int:
    """Run `command`, reporting unexpected exceptions as loom-opt does (traceback with LOOM_DEBUG=1)."""
    import os
    import traceback
    try:
        return command()
    except Exception as e:
        if os.environ.get("LOOM_DEBUG") == "1":
            traceback.print_exc()
        print(f"loom: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
