"""loom: the showcase and the tools behind one command.

    loom demo            parse an example, run a pass pipeline on it, print before/after and timings;
                         run a StableHLO program with the compiled executor; train a small model;
                         differentiate through a data-dependent loop; nearest-neighbour search
    loom opt ARGS...     the same as loom-opt ARGS...
    loom bench NAME ARGS run benchmarks/NAME.py (from a source checkout); `ir` is ir_throughput
    loom bench report    print the latest record of each benchmark in benchmarks/results/ as a table
    loom --version
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
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
    """Run benchmarks/NAME.py of the checkout, passing the other `args` on; `report [--results
    DIR]` prints the records instead."""
    root = checkout_root()
    folder = root / "benchmarks" if root else None
    if args and args[0] == "report":
        ap = argparse.ArgumentParser(prog="loom bench report", description="the latest record of each benchmark")
        ap.add_argument("--results", type=Path, default=folder / "results" if folder else None,
                        help="the folder of records (default: benchmarks/results of the checkout)")
        ap.add_argument("--markdown", action="store_true", help="Markdown tables (as benchmarks/NOTES.md quotes them)")
        opts = ap.parse_args(args[1:])
        if opts.results is None:
            print("loom bench report: no benchmarks/results here; pass --results DIR", file=sys.stderr)
            return 1
        return bench_report(opts.results, opts.markdown)
    if folder is None or not folder.is_dir():
        print("loom bench: no benchmarks/ here; benchmarks run from a source checkout of loom", file=sys.stderr)
        return 1
    names = sorted(p.stem for p in folder.glob("*.py") if p.stem != "bench_common") + sorted(BENCHMARK_ALIASES)
    names.append("report")
    if not args or args[0] not in names:
        print("usage: loom bench {" + ",".join(names) + "} [options]", file=sys.stderr)
        return 2
    script = folder / f"{BENCHMARK_ALIASES.get(args[0], args[0])}.py"
    return subprocess.call([sys.executable, str(script), *args[1:]])


def _timing_lists(node: object, path: tuple[str, ...] = ()):
    """(path, raw timings) for every list of numbers under a "seconds" key of a record written
    without a table of rows."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _timing_lists(value, (*path, str(key)))
    elif isinstance(node, list):
        if node and "seconds" in path and all(isinstance(v, (int, float)) for v in node):
            yield path, node
        else:
            for i, value in enumerate(node):
                yield from _timing_lists(value, (*path, str(i)))


def record_table(record: dict, file_name: str, markdown: bool = False) -> str:
    """One record as text (or a Markdown table): where and when it ran, then each contender's
    median and spread (computed here from the raw timings), its other measured fields, and the
    ratios of medians."""
    machine = record.get("machine", {})
    about = (f"commit {str(record.get('commit'))[:12]}, {record.get('date')}, {machine.get('cpu')} "
             f"({machine.get('cpus')} cpus), load average {machine.get('load_average_1min', float('nan')):.2f}")
    command = " ".join(record.get("command", []))
    rows = record.get("rows")
    if rows is None:  # a record without a table: every list of timings, named by its path
        rows = [{"case": "/".join(p[:p.index("seconds")]), "contender": "/".join(p[p.index("seconds") + 1:]),
                 "seconds": ts} for p, ts in _timing_lists(record)]
    medians = {(r["case"], r["contender"]): statistics.median(r["seconds"]) for r in rows}
    ratios = [(r["case"], r["contender"], r["peer"], medians[r["case"], r["peer"]] / medians[r["case"], r["contender"]])
              for r in record.get("ratios", [])]

    def other(r: dict) -> str:
        return ", ".join(f"{key} {value:.4g}" if isinstance(value, float) else f"{key} {value}"
                         for key, value in r.items()
                         if key not in ("case", "contender", "seconds", "median", "min", "max"))

    if markdown:
        lines = [f"`{file_name}` ({about}; `{command}`)", "",
                 "| case | contender | runs | median s | min s | max s | other |", "|---|---|---|---|---|---|---|"]
        lines += [f"| {r['case']} | {r['contender']} | {len(r['seconds'])} | {statistics.median(r['seconds']):.6f} | "
                  f"{min(r['seconds']):.6f} | {max(r['seconds']):.6f} | {other(r)} |" for r in rows]
        if ratios:
            lines += ["", "| case | median of peer / median of contender | ratio |", "|---|---|---|"]
            lines += [f"| {case} | {peer} / {mine} | {value:.3f} |" for case, mine, peer, value in ratios]
        return "\n".join(lines)
    lines = [f"== {record.get('benchmark', file_name)}: {file_name}", about, "command: " + command]
    width = max([len(r["case"]) + len(r["contender"]) + 3 for r in rows] + [20])
    lines.append(f"{'case: contender':{width}s} {'runs':>4s} {'median s':>11s} {'min s':>11s} {'max s':>11s}  other")
    for r in rows:
        ts = r["seconds"]
        label = f"{r['case']}: {r['contender']}" if r["case"] else r["contender"]
        lines.append(f"{label:{width}s} {len(ts):4d} {statistics.median(ts):11.6f} {min(ts):11.6f} "
                     f"{max(ts):11.6f}  {other(r)}".rstrip())
    lines += [f"{case}: median {peer} / median {mine} = {value:.3f}" for case, mine, peer, value in ratios]
    return "\n".join(lines)


def bench_report(results: Path, markdown: bool = False) -> int:
    """Print the latest record (by the date in its file name) of each benchmark in `results`."""
    latest: dict[str, Path] = {}
    for path in sorted(results.glob("*.json")):
        name = path.stem.rsplit("-", 2)[0]
        if name not in latest or path.stem.rsplit("-", 2)[1:] >= latest[name].stem.rsplit("-", 2)[1:]:
            latest[name] = path
    if not latest:
        print(f"loom bench report: no records (*.json) in {results}", file=sys.stderr)
        return 1
    for name in sorted(latest):
        print(record_table(json.loads(latest[name].read_text(encoding="utf-8")), latest[name].name, markdown),
              end="\n\n")
    return 0


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
