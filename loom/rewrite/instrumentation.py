"""Pass instrumentation: hooks around passes and nested pipelines, IR printing and timing."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, TextIO

from loom.ir.core import Operation

if TYPE_CHECKING:
    from loom.rewrite.passes import Pass


class PassInstrumentation:
    """Hooks the pass manager calls. `before` hooks run in the order instrumentations were added,
    `after` hooks in reverse order. All default to no-ops."""

    def run_before_pipeline(self, anchor: str, op: Operation) -> None:
        """A nested pipeline anchored on `anchor` is about to run on `op`."""

    def run_after_pipeline(self, anchor: str, op: Operation) -> None:
        """A nested pipeline finished on `op`."""

    def run_before_pass(self, pass_: Pass, op: Operation) -> None:
        """`pass_` is about to run on `op`."""

    def run_after_pass(self, pass_: Pass, op: Operation) -> None:
        """`pass_` ran on `op` and the IR verified."""

    def run_after_pass_failed(self, pass_: Pass, op: Operation) -> None:
        """`pass_` raised, or the IR failed to verify after it."""

    def run_after_all(self, total_seconds: float) -> None:
        """The whole pass manager run finished."""


def _stream(stream: TextIO | None) -> TextIO:
    return stream if stream is not None else sys.stderr


class IRPrinting(PassInstrumentation):
    """Prints the IR before and/or after passes, as MLIR's `--mlir-print-ir-*` options:

        // -----// IR Dump After CSEPass: cse //----- //
        <the op the pass ran on>

    `print_before` / `print_after` select passes by pipeline name or display name (in addition to
    the `*_all` flags). `print_module_scope` prints the top-level op instead, `print_after_change`
    only prints when the pass changed the IR, `print_after_failure` prints after a failed pass."""

    def __init__(self, stream: TextIO | None = None, print_before_all: bool = False, print_after_all: bool = True,
                 print_before: Iterable[str] = (), print_after: Iterable[str] = (),
                 print_module_scope: bool = False, print_after_change: bool = False,
                 print_after_failure: bool = False, generic: bool = False, debuginfo: bool = False) -> None:
        self.stream = stream
        self.print_before_all = print_before_all
        self.print_after_all = print_after_all
        self.print_before = frozenset(print_before)
        self.print_after = frozenset(print_after)
        self.print_module_scope = print_module_scope
        self.print_after_change = print_after_change
        self.print_after_failure = print_after_failure
        self.generic = generic
        self.debuginfo = debuginfo
        self._before_text: list[str | None] = []

    def _selected(self, pass_: Pass, all_: bool, names: frozenset[str]) -> bool:
        return all_ or pass_.name in names or pass_.display_name in names

    def ir_text(self, op: Operation) -> str:
        """The op as MLIR's IR printer writes it: a nested op in its local scope (no trailing
        newline), a top-level op with its trailing newline."""
        from loom.ir.printer import print_op
        if self.print_module_scope:
            while op.parent_op is not None:
                op = op.parent_op
        if op.parent is None:
            return print_op(op, generic=self.generic, debuginfo=self.debuginfo)
        return print_op(op, generic=self.generic, debuginfo=self.debuginfo, nested=True)

    def _dump(self, title: str, pass_: Pass | _FailedName, op: Operation, text: str | None = None) -> None:
        header = f"// -----// IR Dump {title} {pass_.display_name}: {pass_.pipeline_text()}"
        if self.print_module_scope:
            header += f" ('{op.name}' operation"
            sym = op.properties.get("sym_name") or op.attributes.get("sym_name")
            if sym is not None and hasattr(sym, "value"):
                header += f": @{sym.value}"
            header += ")"
        if text is None:
            text = self.ir_text(op)
        out = _stream(self.stream)
        out.write(header + " //----- //\n" + text + "\n\n")
        out.flush()

    def run_before_pass(self, pass_: Pass, op: Operation) -> None:
        if self._selected(pass_, self.print_before_all, self.print_before):
            self._dump("Before", pass_, op)
        after = self._selected(pass_, self.print_after_all, self.print_after)
        self._before_text.append(self.ir_text(op) if after and self.print_after_change else None)

    def run_after_pass(self, pass_: Pass, op: Operation) -> None:
        before = self._before_text.pop() if self._before_text else None
        if not self._selected(pass_, self.print_after_all, self.print_after):
            return
        text = self.ir_text(op)
        if self.print_after_change and before == text:
            return
        self._dump("After", pass_, op, text)

    def run_after_pass_failed(self, pass_: Pass, op: Operation) -> None:
        if self._before_text:
            self._before_text.pop()
        if self.print_after_failure:
            from loom.ir.printer import print_op
            try:
                text = self.ir_text(op)
            except Exception:  # the IR may be too broken to print in full
                text = print_op(op, generic=True, nested=True, skip_regions=True)
            self._dump("After", _FailedName(pass_), op, text)


class _FailedName:
    """A pass seen through the failure header: `IR Dump After CSEPass Failed: cse`."""

    def __init__(self, pass_: Pass) -> None:
        self.display_name = pass_.display_name + " Failed"
        self.pipeline_text = pass_.pipeline_text


class _Timer:
    __slots__ = ("name", "seconds", "children")

    def __init__(self, name: str) -> None:
        self.name = name
        self.seconds = 0.0
        self.children: dict[str, _Timer] = {}


class PassTiming(PassInstrumentation):
    """Wall time per pass and per nested pipeline, reported as MLIR's `--mlir-timing` does (tree
    display): times of a pass over all the ops it ran on are added up."""

    def __init__(self, stream: TextIO | None = None, report: bool = True) -> None:
        self.stream = stream
        self.print_report = report
        self.root = _Timer("Total")
        self._stack: list[tuple[_Timer, float]] = []
        self.total = 0.0
        self.last_report = ""

    def _enter(self, name: str) -> None:
        parent = self._stack[-1][0] if self._stack else self.root
        node = parent.children.get(name)
        if node is None:
            node = parent.children[name] = _Timer(name)
        self._stack.append((node, time.perf_counter()))

    def _exit(self) -> None:
        node, start = self._stack.pop()
        node.seconds += time.perf_counter() - start

    def run_before_pipeline(self, anchor: str, op: Operation) -> None:
        self._enter(f"'{anchor}' Pipeline")

    def run_after_pipeline(self, anchor: str, op: Operation) -> None:
        self._exit()

    def run_before_pass(self, pass_: Pass, op: Operation) -> None:
        self._enter(pass_.display_name)

    def run_after_pass(self, pass_: Pass, op: Operation) -> None:
        self._exit()

    def run_after_pass_failed(self, pass_: Pass, op: Operation) -> None:
        self._exit()

    def run_after_all(self, total_seconds: float) -> None:
        self.total = total_seconds
        self.last_report = self.report()
        if self.print_report:
            out = _stream(self.stream)
            out.write(self.last_report)
            out.flush()
        self.root = _Timer("Total")
        self._stack = []

    def report(self) -> str:
        """The execution time report of the timers so far."""
        total = self.total
        lines = ["===" + "-" * 73 + "===", " " * 25 + "... Execution time report ...", "===" + "-" * 73 + "===",
                 f"  Total Execution Time: {total:.4f} seconds", "", "  ----Wall Time----  ----Name----"]

        def row(seconds: float, name: str, depth: int) -> str:
            percent = 100.0 * seconds / total if total > 0 else 0.0
            return f"  {seconds:8.4f} ({percent:5.1f}%)  " + "  " * depth + name

        def emit(node: _Timer, depth: int) -> None:
            for child in node.children.values():
                lines.append(row(child.seconds, child.name, depth))
                emit(child, depth + 1)

        emit(self.root, 0)
        rest = max(total - sum(c.seconds for c in self.root.children.values()), 0.0)
        lines.append(row(rest, "Rest", 0))
        lines.append(f"  {total:8.4f} (100.0%)  Total")
        return "\n".join(lines) + "\n"


__all__ = ["IRPrinting", "PassInstrumentation", "PassTiming"]
