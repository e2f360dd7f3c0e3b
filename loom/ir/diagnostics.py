"""loom's error types: every one says where (file:line:col and the source line, or the op)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from loom.ir.core import Operation


class LoomError(Exception):
    """Base of loom's own errors."""


class ParseError(LoomError):
    """Malformed text, located at `filename:line:column`."""

    def __init__(self, message: str, filename: str, line: int, column: int, source_line: str) -> None:
        self.message = message
        self.filename = filename
        self.line = line
        self.column = column
        self.source_line = source_line
        super().__init__(self.render())

    def render(self) -> str:
        caret = " " * (self.column - 1) + "^"
        return f"{self.filename}:{self.line}:{self.column}: error: {self.message}\n{self.source_line}\n{caret}"


class VerifyError(LoomError):
    """An op that breaks an invariant; names the op, gives its location and prints it."""

    def __init__(self, op: Operation, message: str) -> None:
        self.op = op
        self.message = message
        super().__init__(self.render())

    @property
    def location_prefix(self) -> str:
        from loom.ir.attributes import location_line_col
        where = location_line_col(self.op.location)
        return f"{where[0]}:{where[1]}:{where[2]}" if where else f"loc({self.op.location})"

    def render(self) -> str:
        from loom.ir.printer import Printer
        try:
            root = self.op
            while root.parent_op is not None:
                root = root.parent_op
            p = Printer(generic=True, skip_regions=True)
            p.number(root)  # name values as they appear in the whole program
            p.op(self.op)
            text = "".join(p.out).strip()
        except Exception as e:  # the op may be too broken to print
            text = f"<unprintable: {e}>"
        return f"{self.location_prefix}: error: '{self.op.name}' op {self.message}\n  see current operation: {text}"


class Remark:
    """A note about how a pass treated an op (MLIR's `remark`), located like a VerifyError."""

    def __init__(self, op: Operation, message: str) -> None:
        self.op_name = op.name
        self.message = message
        from loom.ir.attributes import location_line_col
        where = location_line_col(op.location)
        self.where = f"{where[0]}:{where[1]}:{where[2]}" if where else f"loc({op.location})"

    def __str__(self) -> str:
        return f"{self.where}: remark: '{self.op_name}' op {self.message}"


_remark_sinks: list[list[Remark]] = []


def emit_remark(op: Operation, message: str) -> None:
    """Record a remark for every `collect_remarks()` block open now (none open: dropped)."""
    for sink in _remark_sinks:
        sink.append(Remark(op, message))


@contextlib.contextmanager
def collect_remarks() -> Iterator[list[Remark]]:
    """`with collect_remarks() as remarks:` gathers the remarks emitted inside the block."""
    sink: list[Remark] = []
    _remark_sinks.append(sink)
    try:
        yield sink
    finally:
        _remark_sinks.remove(sink)
