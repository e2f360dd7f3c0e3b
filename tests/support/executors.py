"""One program text run by every executor: the compiled numpy code, the reference interpreter and
the compiled torch code (its tensors brought back as numpy arrays), and compared with an oracle."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from loom.runtime.executable import execute

EXECUTORS = [("compiled", "numpy"), ("interpreter", "numpy"), ("compiled", "torch")]


def module(body: str) -> str:
    return "module {\n" + body + "\n}"


def to_numpy(x: Any) -> Any:
    if isinstance(x, tuple):
        return tuple(to_numpy(v) for v in x)
    if hasattr(x, "detach"):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def run_all(text: str, args: Sequence) -> list:
    """The results of `text`'s @main on `args` in every executor, as numpy arrays."""
    return [to_numpy(execute(text, *args, executor=ex, backend=be)) for ex, be in EXECUTORS]


def assert_all_close(text: str, args: Sequence, expected: Any, rtol: float = 1e-6, atol: float = 1e-6) -> None:
    """Every executor's results match `expected` (one array or a tuple), NaNs in place."""
    for (ex, be), got in zip(EXECUTORS, run_all(text, args)):
        got = got if isinstance(got, tuple) else (got,)
        want = expected if isinstance(expected, (tuple, list)) else (expected,)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            w = np.asarray(w)
            assert g.shape == w.shape and g.dtype == w.dtype, (ex, be, g.shape, g.dtype, w.shape, w.dtype)
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True, err_msg=f"{ex} on {be}")


def run_everywhere(text: str, *args: Any) -> Iterator[tuple[str, Any]]:
    """`(where, results)` per executor, results as numpy arrays (a tuple for several)."""
    from loom.backend.torch_kernels import to_numpy
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
