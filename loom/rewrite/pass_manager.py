"""The pass manager: runs passes and nested per-op pipelines, verifies after each pass, and
drives instrumentation (IR printing, timing)."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from typing import TextIO, TypeVar

from loom.ir.core import Operation, paused_gc
from loom.ir.diagnostics import VerifyError
from loom.rewrite.instrumentation import IRPrinting, PassInstrumentation, PassTiming
from loom.rewrite.passes import OptionError, Pass, PassManagerError, PassVerifyError, lookup_pass
from loom.rewrite.pipeline import PipelineElement, PipelineParseError, parse_pipeline_text

_Instrumentation = TypeVar("_Instrumentation", bound=PassInstrumentation)


class OpPassManager:
    """An ordered list of passes and nested pass managers anchored on an op name ("any" matches
    every op). A nested manager runs on each op of its anchor directly nested in the regions of
    the op its parent runs on."""

    def __init__(self, anchor: str = "any") -> None:
        self.anchor = anchor
        self.items: list[Pass | OpPassManager] = []

    def add(self, item: Pass | OpPassManager) -> Pass | OpPassManager:
        """Append a pass (or a nested manager). A pass restricted to another op kind is refused."""
        if isinstance(item, OpPassManager):
            self.items.append(item)
            return item
        if not isinstance(item, Pass):
            raise TypeError(f"expected a Pass, got {item!r}")
        if item.op_name is not None and self.anchor != "any" and item.op_name != self.anchor:
            raise PassManagerError(f"can't add pass '{item.name}' restricted to '{item.op_name}' on a pass manager "
                                   f"intended to run on '{self.anchor}', did you intend to nest?")
        self.items.append(item)
        return item

    def nest(self, anchor: str) -> OpPassManager:
        """A new manager for ops named `anchor` nested in this one's op; add passes to it."""
        nested = OpPassManager(anchor)
        self.items.append(nested)
        return nested

    def add_pipeline(self, text: str) -> None:
        """Append the passes of pipeline text (`cse,func.func(canonicalize)`) to this manager."""
        _add_elements(self, parse_pipeline_text(text), text)

    @property
    def passes(self) -> list[Pass | OpPassManager]:
        return list(self.items)

    def __iter__(self) -> Iterator[Pass | OpPassManager]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def pipeline_text(self) -> str:
        """`anchor(pass,nested(...))` as MLIR prints a pipeline."""
        return f"{self.anchor}({','.join(i.pipeline_text() for i in self.items)})"

    def __str__(self) -> str:
        return self.pipeline_text()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.pipeline_text()}>"


class PassManager(OpPassManager):
    """The top-level pass manager.

        pm = PassManager.parse("builtin.module(func.func(canonicalize,cse),symbol-dce)")
        pm.enable_ir_printing(print_after=["cse"])
        pm.enable_timing()
        pm.run(module)

    The verifier runs on the op each pass ran on after the pass (`verify=False` disables it),
    unless the pass said it left the IR unchanged (`Pass.mark_all_analyses_preserved`), as in
    MLIR; a failure raises `PassVerifyError` naming the pass."""

    def __init__(self, anchor: str = "builtin.module", verify: bool = True) -> None:
        super().__init__(anchor)
        self.verify = verify
        self.instrumentations: list[PassInstrumentation] = []

    @classmethod
    def parse(cls, text: str, verify: bool = True) -> PassManager:
        """A pass manager from MLIR pipeline text. `builtin.module(...)` anchors it on the op
        named outside the parentheses; a bare list (`canonicalize,cse`) runs on a module."""
        elements = parse_pipeline_text(text)
        if len(elements) == 1 and elements[0].children is not None:
            pm = cls(elements[0].name, verify)
            _add_elements(pm, elements[0].children, text)
        else:
            pm = cls("builtin.module", verify)
            _add_elements(pm, elements, text)
        return pm

    # Instrumentation ---------------------------------------------------------------------
    def enable_verifier(self, enabled: bool = True) -> None:
        self.verify = enabled

    def add_instrumentation(self, instrumentation: _Instrumentation) -> _Instrumentation:
        self.instrumentations.append(instrumentation)
        return instrumentation

    def enable_ir_printing(self, stream: TextIO | None = None, print_after_all: bool | None = None,
                           print_after: Iterable[str] = (), print_before_all: bool = False,
                           print_before: Iterable[str] = (), print_module_scope: bool = False,
                           print_after_change: bool = False, print_after_failure: bool = False,
                           generic: bool = False, debuginfo: bool = False) -> IRPrinting:
        """Print the IR after every pass (default), or after/before the named passes, to `stream`
        (stderr by default)."""
        print_after = tuple(print_after)
        print_before = tuple(print_before)
        if print_after_all is None:
            print_after_all = not print_after and not print_before and not print_before_all
        return self.add_instrumentation(IRPrinting(stream, print_before_all, print_after_all, print_before,
                                                   print_after, print_module_scope, print_after_change,
                                                   print_after_failure, generic, debuginfo))

    def enable_timing(self, stream: TextIO | None = None, report: bool = True) -> PassTiming:
        """Time each pass and print an execution time report to `stream` (stderr) after `run`."""
        return self.add_instrumentation(PassTiming(stream, report))

    # Running ------------------------------------------------------------------------------
    def run(self, op: Operation) -> None:
        """Run the pipeline on `op`, whose name must match the anchor."""
        if self.anchor != "any" and op.name != self.anchor:
            raise PassManagerError(f"can't run a pass manager anchored on '{self.anchor}' on a '{op.name}' op; "
                                   f"nest it, as in 'builtin.module({self.anchor}(...))'")
        start = time.perf_counter()
        try:
            with paused_gc():
                _Runner(self).run_items(self, op)
        finally:
            total = time.perf_counter() - start
            for inst in self.instrumentations:
                inst.run_after_all(total)


class _Runner:
    def __init__(self, pm: PassManager | None = None) -> None:
        self.verify = pm.verify if pm is not None else True
        self.instrumentations = pm.instrumentations if pm is not None else []

    def run_pipeline(self, pipeline: OpPassManager, op: Operation) -> None:
        """Run `pipeline` on `op` itself, as a nested pipeline."""
        if pipeline.anchor != "any" and op.name != pipeline.anchor:
            raise PassManagerError(f"can't run a pipeline anchored on '{pipeline.anchor}' on a '{op.name}' op")
        insts = self.instrumentations
        for inst in insts:
            inst.run_before_pipeline(op.name, op)
        try:
            self.run_items(pipeline, op)
        finally:
            for inst in reversed(insts):
                inst.run_after_pipeline(op.name, op)

    def run_items(self, pm: OpPassManager, op: Operation) -> None:
        for item in _coalesce(pm.items):
            if isinstance(item, OpPassManager):
                self.run_nested(item, op)
            else:
                self.run_pass(item, op)

    def run_nested(self, nested: OpPassManager, op: Operation) -> None:
        anchor = nested.anchor
        insts = self.instrumentations
        for region in op.regions:
            for block in region.blocks:
                for child in list(block.ops):
                    if anchor != "any" and child.name != anchor:
                        continue
                    for inst in insts:
                        inst.run_before_pipeline(anchor, child)
                    try:
                        self.run_items(nested, child)
                    finally:
                        for inst in reversed(insts):
                            inst.run_after_pipeline(anchor, child)

    def run_pass(self, p: Pass, op: Operation) -> None:
        if p.op_name is not None and op.name != p.op_name:
            raise PassManagerError(f"pass '{p.name}' runs on '{p.op_name}' ops, not on '{op.name}'")
        if not p.can_schedule_on(op):
            raise PassManagerError(f"pass '{p.name}' cannot run on '{op.name}'")
        insts = self.instrumentations
        for inst in insts:
            inst.run_before_pass(p, op)
        saved, p._runner = p._runner, self
        p._preserved_all = False
        try:
            p.run(op)
            p._runner = saved
            if self.verify and not p._preserved_all:
                try:
                    op.verify()
                except VerifyError as e:
                    raise PassVerifyError(e, p) from e
        except BaseException:
            p._runner = saved
            for inst in reversed(insts):
                inst.run_after_pass_failed(p, op)
            raise
        for inst in reversed(insts):
            inst.run_after_pass(p, op)


def _coalesce(items: list[Pass | OpPassManager]) -> list[Pass | OpPassManager]:
    """Merge adjacent nested managers with the same anchor, as MLIR does, so that
    `func.func(cse),func.func(canonicalize)` runs both passes on one function before the next."""
    out: list[Pass | OpPassManager] = []
    for item in items:
        prev = out[-1] if out else None
        if isinstance(item, OpPassManager) and isinstance(prev, OpPassManager) and prev.anchor == item.anchor \
                and item.anchor != "any":
            merged = OpPassManager(item.anchor)
            merged.items = [*prev.items, *item.items]
            out[-1] = merged
        else:
            out.append(item)
    return out


def _add_elements(pm: OpPassManager, elements: list[PipelineElement], text: str) -> None:
    for el in elements:
        if el.children is not None:
            _add_elements(pm.nest(el.name), el.children, text)
            continue
        cls = lookup_pass(el.name)
        if cls is None:
            raise PipelineParseError(f"'{el.name}' does not refer to a registered pass or pass pipeline", text,
                                     el.position)
        try:
            p = cls.from_options_text(el.options) if el.options is not None else cls()
        except OptionError as e:
            raise PipelineParseError(str(e), text, el.options_position) from None
        try:
            pm.add(p)
        except PassManagerError as e:
            raise PipelineParseError(str(e), text, el.position) from None


__all__ = ["OpPassManager", "PassManager"]
