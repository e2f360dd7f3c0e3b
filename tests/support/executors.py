"""One program text run by every executor: the compiled numpy code, the reference interpreter and
the compiled torch code (its tensors brought back as numpy arrays)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from loom.backend.api import execute

EXECUTORS = [("compiled", "numpy"), ("interpreter", "numpy"), ("compiled", "torch")]


def run_everywhere(text: str, *args: Any) -> Iterator[tuple[str, Any]]:
    """`(where, results)` per executor, results as numpy arrays (a tuple for several)."""
    from loom.backend.kernels_torch import to_numpy
    for executor, backend in EXECUTORS:
        yield f"{executor}/{backend}", to_numpy(execute(text, *args, executor=executor, backend=backend))


def one_op_program(op: str, operand_type: str, n: int, arity: int, result_type: str | None = None) -> str:
    """`@main` applying `stablehlo.<op>` (generic form) to `arity` operands of `tensor<n x operand_type>`."""
    tt, rt = f"tensor<{n}x{operand_type}>", f"tensor<{n}x{result_type or operand_type}>"
    params = ", ".join(f"%a{i}: {tt}" for i in range(arity))
    operands = ", ".join(f"%a{i}" for i in range(arity))
    return (f"func.func @main({params}) -> {rt} {{\n"
            f"  %0 = \"stablehlo.{op}\"({operands}) : ({', '.join([tt] * arity)}) -> {rt}\n"
            f"  return %0 : {rt}\n}}")
