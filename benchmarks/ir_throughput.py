"""IR throughput: parse, verify, print (generic form) and canonicalize, for loom, xDSL and MLIR (C++,
through jaxlib's Python bindings), on the same generated module in one run.

    python benchmarks/ir_throughput.py                      # 20k and 200k ops; xDSL on 20k only
    python benchmarks/ir_throughput.py --sizes 20000 --repeat 5
    python benchmarks/ir_throughput.py --xdsl-large         # xDSL on 200k ops too (minutes)
    python benchmarks/ir_throughput.py --sizes '' --memory-ops 1160000 --tools loom,mlir
                                                            # peak memory of a parse only, each tool alone

The module is generic-form MLIR: `func.func` ops whose bodies chain `arith.constant`, `arith.addi`,
`arith.muli` with unregistered ops carrying attributes (`test.op`), multi-result ops (`test.pair`)
and ops with nested regions (`test.region`). Every tool parses it with unregistered ops allowed and
with func/arith registered where it has them, so canonicalize folds the same constants in all three.

Notes on what each step includes:
- MLIR's `Module.parse` also verifies (MLIR verifies after parsing); its print uses
  `assume_verified=True` so it does not verify again.
- loom's and xDSL's parse do not verify; verify is timed on its own.
- canonicalize runs on a freshly parsed module (the parse is not timed).
"""

from __future__ import annotations

import argparse
import gc
import io
import itertools
import os
import platform
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bench_common import cpu_name, spread, write_record  # noqa: E402

STEPS = ("parse", "verify", "print", "canonicalize")
GROUP_OPS = 12  # ops in one group of `_group`


def _group(lines: list[str], k: int, prev: str, fresh: Callable[[], str], indent: str) -> str:
    """One group of 12 ops consuming `prev`; returns the value the next group consumes."""
    c1, c0, add, mul, tag, pair, reg, arg, inner, add0, cc, out = (fresh() for _ in range(12))
    lines += [
        f'{indent}{c1} = "arith.constant"() <{{value = {k % 97 + 1} : i32}}> : () -> i32',
        f'{indent}{c0} = "arith.constant"() <{{value = 0 : i32}}> : () -> i32',
        f'{indent}{add} = "arith.addi"({prev}, {c1}) : (i32, i32) -> i32',
        f'{indent}{mul} = "arith.muli"({add}, %arg1) : (i32, i32) -> i32',
        f'{indent}{tag} = "test.op"({mul}, {add}) {{dims = [1, {k % 7}], name = "g{k % 13}", n = {k} : i64, '
        f'scale = 2.500000e+00 : f32}} : (i32, i32) -> i32',
        f'{indent}{pair}:2 = "test.pair"({tag}) : (i32) -> (i32, i32)',
        f'{indent}{reg} = "test.region"({pair}#0) ({{',
        f'{indent}^bb0({arg}: i32):',
        f'{indent}  {inner} = "arith.addi"({arg}, {pair}#1) : (i32, i32) -> i32',
        f'{indent}  "test.yield"({inner}) : (i32) -> ()',
        f'{indent}}}) {{kind = "loop"}} : (i32) -> i32',
        f'{indent}{add0} = "arith.addi"({reg}, {c0}) : (i32, i32) -> i32',
        f'{indent}{cc} = "arith.addi"({c1}, {c1}) : (i32, i32) -> i32',
        f'{indent}{out} = "arith.muli"({add0}, {cc}) : (i32, i32) -> i32',
    ]
    return out


def build_module_text(n_ops: int, groups_per_func: int = 40) -> str:
    """Generic-form text of a module with about `n_ops` ops."""
    n_funcs = max(1, round((n_ops - 1) / (groups_per_func * GROUP_OPS + 2)))  # + func.func and func.return
    groups_per_func = max(1, round(((n_ops - 1) / n_funcs - 2) / GROUP_OPS))
    lines = ['"builtin.module"() ({']
    k = 0
    for f in range(n_funcs):
        fresh = (f"%{i}" for i in itertools.count()).__next__  # SSA names, unique in the function
        lines.append(f'  "func.func"() <{{function_type = (i32, i32) -> i32, sym_name = "f{f}"}}> ({{')
        lines.append("  ^bb0(%arg0: i32, %arg1: i32):")
        prev = "%arg0"
        for _ in range(groups_per_func):
            prev = _group(lines, k, prev, fresh, "    ")
            k += 1
        lines.append(f'    "func.return"({prev}) : (i32) -> ()')
        lines.append("  }) : () -> ()")
    lines.append("}) : () -> ()")
    return "\n".join(lines) + "\n"


_OP_LINE = re.compile(r'^[ ]*(?:%[^=\n]*= )?"', re.M)


def count_ops(generic_text: str) -> int:
    """Ops in generic-form text (one op starts each line that begins with a quoted name)."""
    return len(_OP_LINE.findall(generic_text))


def first_difference(a: str, b: str) -> str:
    """'yes', or 'no' with the first line that differs."""
    if a == b:
        return "yes"
    for i, (x, y) in enumerate(zip(a.splitlines(), b.splitlines()), start=1):
        if x != y:
            return f"no; first difference at line {i}:\n  loom: {x.strip()}\n  MLIR: {y.strip()}"
    return "no (one output is a prefix of the other)"


# Tools ----------------------------------------------------------------------------------------

class Tool:
    name = ""

    def parse(self, text: str) -> Any: ...
    def verify(self, module: Any) -> None: ...
    def print(self, module: Any) -> str: ...
    def canonicalize(self, module: Any) -> None: ...


class Loom(Tool):
    name = "loom"

    def __init__(self) -> None:
        import loom.dialects  # noqa: F401
        import loom.ir
        self.ir = loom.ir
        for name in ("func", "arith"):
            try:
                __import__(f"loom.dialects.{name}")
            except ImportError:
                pass
        try:
            from loom.rewrite import PassManager
            self.pass_manager = PassManager.parse("builtin.module(canonicalize)")
        except ImportError:
            self.pass_manager = None

    def parse(self, text: str) -> Any:
        return self.ir.parse(text, allow_unregistered=True, verify=False)

    def verify(self, module: Any) -> None:
        module.verify()

    def print(self, module: Any) -> str:
        return self.ir.print(module, generic=True)

    def canonicalize(self, module: Any) -> None:
        if self.pass_manager is None:
            raise NotImplementedError("loom.rewrite.PassManager is not available")
        self.pass_manager.run(module)


class XDSL(Tool):
    name = "xDSL"

    def __init__(self) -> None:
        from xdsl.context import Context
        from xdsl.dialects.arith import Arith
        from xdsl.dialects.builtin import Builtin
        from xdsl.dialects.func import Func
        from xdsl.parser import Parser
        from xdsl.printer import Printer
        from xdsl.transforms.canonicalize import CanonicalizePass
        self.ctx = Context(allow_unregistered=True)
        for d in (Builtin, Func, Arith):
            self.ctx.load_dialect(d)
        self.Parser, self.Printer, self.CanonicalizePass = Parser, Printer, CanonicalizePass

    def parse(self, text: str) -> Any:
        return self.Parser(self.ctx, text).parse_module()

    def verify(self, module: Any) -> None:
        module.verify()

    def print(self, module: Any) -> str:
        out = io.StringIO()
        self.Printer(stream=out, print_generic_format=True).print_op(module)
        return out.getvalue()

    def canonicalize(self, module: Any) -> None:
        self.CanonicalizePass().apply(self.ctx, module)


class MLIR(Tool):
    name = "MLIR (jaxlib)"

    def __init__(self) -> None:
        from jax._src.interpreters.mlir import make_ir_context  # upstream dialects (func, arith) loaded
        from jaxlib.mlir import ir, passmanager
        self.ir, self.passmanager = ir, passmanager
        self.ctx = make_ir_context()
        self.ctx.allow_unregistered_dialects = True

    def parse(self, text: str) -> Any:
        with self.ctx:
            return self.ir.Module.parse(text)

    def verify(self, module: Any) -> None:
        assert module.operation.verify()

    def print(self, module: Any) -> str:
        return module.operation.get_asm(print_generic_op_form=True, assume_verified=True)

    def canonicalize(self, module: Any) -> None:
        with self.ctx:
            self.passmanager.PassManager.parse("builtin.module(canonicalize)").run(module.operation)


TOOLS: dict[str, Callable[[], Tool]] = {"loom": Loom, "xdsl": XDSL, "mlir": MLIR}


# Measuring ------------------------------------------------------------------------------------

@dataclass
class Result:
    seconds: dict[str, float] = field(default_factory=dict)  # step -> best time
    rounds: dict[str, list[float]] = field(default_factory=dict)  # step -> every round's time
    notes: list[str] = field(default_factory=list)
    ops_after_canonicalize: int | None = None
    generic_text: str | None = None


def _timed(step: Callable[[Any], Any], arg: Any) -> tuple[float, Any]:
    gc.collect()
    t0 = time.perf_counter()
    value = step(arg)
    return time.perf_counter() - t0, value


def measure_round(tool: Tool, text: str, r: Result, last: bool) -> None:
    """One run of every step of `tool`; keeps the best time of each step in `r`."""
    def keep(step: str, seconds: float) -> None:
        r.seconds[step] = min(r.seconds.get(step, float("inf")), seconds)
        r.rounds.setdefault(step, []).append(seconds)

    seconds, module = _timed(tool.parse, text)
    keep("parse", seconds)
    keep("verify", _timed(tool.verify, module)[0])
    seconds, printed = _timed(tool.print, module)
    keep("print", seconds)
    if last:
        r.generic_text = printed
    module = printed = None  # free them before parsing a fresh module
    if any(n.startswith("canonicalize: n/a") for n in r.notes):
        return
    fresh = tool.parse(text)
    try:
        seconds, _ = _timed(tool.canonicalize, fresh)
    except (NotImplementedError, ImportError) as e:
        r.notes.append(f"canonicalize: n/a ({e})")
        return
    keep("canonicalize", seconds)
    if last:
        r.ops_after_canonicalize = count_ops(tool.print(fresh))


def measure(tools: dict[str, Tool], text: str, repeat: int) -> dict[str, Result]:
    """Best of `repeat` rounds; each round runs every tool once, so that a change in the machine's
    load during the run affects all tools alike."""
    results = {name: Result() for name in tools}
    for i in range(repeat):
        for name, tool in tools.items():
            measure_round(tool, text, results[name], last=i == repeat - 1)
    return results


def machine_line() -> str:
    versions = []
    for mod in ("xdsl", "jaxlib"):
        try:
            versions.append(f"{mod} {__import__(mod).__version__}")
        except Exception:
            versions.append(f"{mod} absent")
    import loom
    cpu = cpu_name()
    return (f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs ({cpu}), "
            f"Python {platform.python_version()}; "
            f"loom {loom.__version__}, " + ", ".join(versions))


def _fmt_rate(n_ops: int, seconds: float | None) -> str:
    if seconds is None:
        return "-"
    rate = n_ops / seconds
    return f"{rate / 1e3:,.0f}k ({seconds:.3f} s)" if rate >= 1e3 else f"{rate:,.0f} ({seconds:.3f} s)"


def report(n_ops: int, size_bytes: int, results: dict[str, Result], skipped: dict[str, str]) -> str:
    names = list(results)
    rows = [["step"] + names]
    for step in (*STEPS, "parse+print"):
        row = [step]
        for n in names:
            s = results[n].seconds
            t = s["parse"] + s["print"] if step == "parse+print" else s.get(step)
            row.append(_fmt_rate(n_ops, t))
        rows.append(row)
    rows.append(["ops after canonicalize"] + [str(results[n].ops_after_canonicalize or "-") for n in names])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [f"module: {n_ops:,} ops, {size_bytes / 1e6:.1f} MB of generic-form text; ops/s (best time)"]
    for i, r in enumerate(rows):
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))

    def pp(n: str) -> float | None:
        s = results[n].seconds if n in results else None
        return s["parse"] + s["print"] if s else None

    ratios = []
    if pp("loom") and pp("xDSL"):
        ratios.append(f"loom/xDSL = {pp('xDSL') / pp('loom'):.1f}x (loom's throughput over xDSL's)")
    if pp("loom") and pp("MLIR (jaxlib)"):
        ratios.append(f"MLIR/loom = {pp('loom') / pp('MLIR (jaxlib)'):.1f}x (MLIR's throughput over loom's)")
    if ratios:
        lines.append("parse+print ratios: " + "; ".join(ratios))
    texts = {n: r.generic_text for n, r in results.items() if r.generic_text is not None}
    if "loom" in texts and "MLIR (jaxlib)" in texts:
        lines.append("loom's generic output byte-identical to MLIR's: "
                     + first_difference(texts["loom"], texts["MLIR (jaxlib)"]))
    for n, r in results.items():
        lines.extend(f"note ({n}): {x}" for x in r.notes)
    lines.extend(f"note ({n}): skipped, {why}" for n, why in skipped.items())
    return "\n".join(lines)


def parse_peak_bytes(tool: str, path: str) -> int:
    """The memory a parse of `path` adds to a fresh process's peak (ru_maxrss after the parse
    minus the RSS once the tool is imported and the text read), so interpreters and libraries do
    not count."""
    import subprocess
    child = (f"import resource, sys; sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r}); "
             f"import ir_throughput as b; t = b.TOOLS[{tool!r}](); text = open({path!r}).read(); "
             "base = int(open('/proc/self/statm').read().split()[1]) * resource.getpagesize(); "
             "m = t.parse(text); print(base, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)")
    out = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=3600, check=True)
    base, peak = map(int, out.stdout.split()[-2:])
    return peak - base


def memory(n_ops: int, tools: list[str]) -> dict[str, int]:
    import tempfile
    text = build_module_text(n_ops)
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(text)
    try:
        peaks = {key: parse_peak_bytes(key, f.name) for key in tools}
    finally:
        os.unlink(f.name)
    print(f"\nparse peak memory, {n_ops:,} ops, {len(text) / 1e6:.1f} MB of text (each tool in a fresh process):")
    for key, peak in peaks.items():
        print(f"  {key:6s} {peak / 2**20:8.0f} MiB  {peak / n_ops:6.0f} B/op")
    return peaks


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="20000,200000", help="comma-separated op counts (default 20000,200000)")
    ap.add_argument("--repeat", type=int, default=3, help="best of N (default 3)")
    ap.add_argument("--tools", default="loom,xdsl,mlir", help="comma-separated subset of loom,xdsl,mlir")
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--skip-xdsl-large", dest="skip_xdsl_large", action="store_true", default=True,
                       help="run xDSL only on the smallest module (the default; it takes minutes on 200k ops)")
    group.add_argument("--xdsl-large", dest="skip_xdsl_large", action="store_false",
                       help="run xDSL on every size")
    ap.add_argument("--memory-ops", type=int, default=0,
                    help="also measure the peak memory of parsing a module of this many ops (each tool alone)")
    args = ap.parse_args(argv)
    sizes = sorted(int(s) for s in args.sizes.split(",") if s)

    print("IR throughput: parse, verify, print (generic form), canonicalize")
    print(f"machine: {machine_line()}")
    print(f"command: {' '.join([os.path.basename(sys.argv[0])] + (argv if argv is not None else sys.argv[1:]))}")
    print(f"date: {time.strftime('%Y-%m-%d %H:%M')}, best of {args.repeat} rounds (each round runs every tool once)")
    print("MLIR's parse includes its verifier (MLIR verifies after parsing).")
    tools: dict[str, Tool] = {}
    unavailable: dict[str, str] = {}
    for key in args.tools.split(","):
        try:
            tool = TOOLS[key.strip()]()
            tools[tool.name] = tool
        except ImportError as e:
            unavailable[key] = f"not installed ({e})"
    sizes_record: list[dict] = []
    for n_ops in sizes:
        text = build_module_text(n_ops)
        skipped = dict(unavailable)
        running = dict(tools)
        if "xDSL" in running and args.skip_xdsl_large and n_ops != sizes[0]:
            del running["xDSL"]
            skipped["xDSL"] = "xDSL runs on the smallest module only (pass --xdsl-large to include it)"
        results = measure(running, text, args.repeat)
        actual = next((count_ops(r.generic_text) for r in results.values() if r.generic_text), None)
        print()
        print(report(actual or n_ops, len(text), results, skipped))
        sys.stdout.flush()
        sizes_record.append({"ops": actual or n_ops, "bytes": len(text), "skipped": skipped,
                             "tools": {n: {"seconds": r.rounds, "median_spread": {k: spread(v) for k, v in
                                                                                  r.rounds.items()},
                                           "notes": r.notes} for n, r in results.items()}})
    record: dict[str, Any] = {"repeat": args.repeat, "sizes": sizes_record}
    if args.memory_ops:
        keys = [k.strip() for k in args.tools.split(",") if k.strip() != "xdsl" or not args.skip_xdsl_large]
        record["parse_peak_bytes"] = {"ops": args.memory_ops, "tools": memory(args.memory_ops, keys)}
    path = write_record("ir_throughput" if sizes else "ir_parse_memory", record)
    print(f"\nrecord: {path.relative_to(path.parent.parent.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
