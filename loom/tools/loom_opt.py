"""loom-opt: parse, verify, transform and print MLIR text, in the habits of mlir-opt.

    loom-opt in.mlir --pass-pipeline='builtin.module(func.func(canonicalize,cse))' -o out.mlir
    loom-opt --split-input-file --verify-diagnostics tests.mlir

Errors print as `file:line:col: error: message`, then the source line and a caret; the exit
status is 1. Anything unexpected is `loom-opt: internal error: ...` with status 2 (set LOOM_DEBUG=1
for the Python traceback).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import traceback
from dataclasses import dataclass, field
from typing import Any, TextIO

from loom.ir.attributes import location_line_col
from loom.ir.core import Operation
from loom.ir.diagnostics import LoomError, ParseError, VerifyError
from loom.ir.parser import decode_source

SPLIT_MARKER = "// -----"
_SPLIT_LINE = re.compile(r"^[ \t]*// -----[ \t]*$", re.M)


# Diagnostics --------------------------------------------------------------------------------

@dataclass
class Diagnostic:
    """One error with its location (`line` 0 when it has none) and attached notes."""

    message: str
    filename: str = ""
    line: int = 0
    column: int = 0
    kind: str = "error"
    prefix: str = ""  # location text for diagnostics without file:line:col
    notes: list[str] = field(default_factory=list)

    def render(self, sources: dict[str, list[str]]) -> str:
        where = f"{self.filename}:{self.line}:{self.column}" if self.line else (self.prefix or "<unknown>")
        lines = [f"{where}: {self.kind}: {self.message}"]
        source = sources.get(self.filename)
        if self.line and source is not None and 0 < self.line <= len(source):
            lines.append(source[self.line - 1])
            lines.append(" " * max(self.column - 1, 0) + "^")
        lines.extend(f"{where}: note: {note}" for note in self.notes)
        return "\n".join(lines)


def diagnostic_from_error(error: LoomError) -> Diagnostic:
    """A ParseError, VerifyError (or any LoomError naming an op) as a located diagnostic."""
    if isinstance(error, ParseError):
        return Diagnostic(error.message, error.filename, error.line, error.column)
    op = getattr(error, "op", None)
    pass_name = getattr(error, "pass_name", None)
    if isinstance(op, Operation):
        message = getattr(error, "message", str(error))
        notes = [f"see current operation: {_op_text(error, op)}"]
        if pass_name is not None:
            notes.append(f"the IR failed to verify after pass '{pass_name}'" if isinstance(error, VerifyError)
                         else f"in pass '{pass_name}'")
        where = location_line_col(op.location)
        if where is None:
            return Diagnostic(f"'{op.name}' op {message}", prefix=f"loc({op.location})", notes=notes)
        return Diagnostic(f"'{op.name}' op {message}", where[0], where[1], where[2], notes=notes)
    return Diagnostic(str(error), prefix="loom-opt")


def _op_text(error: LoomError, op: Operation) -> str:
    """The op as the error's own rendering shows it (values named as in the whole program)."""
    if isinstance(error, VerifyError):
        rendered = error.render()
        if "see current operation: " in rendered:
            return rendered.split("see current operation: ", 1)[1]
    from loom.ir.printer import print_op
    try:
        return print_op(op, generic=True, nested=True, skip_regions=True).rstrip("\n")
    except Exception as e:  # a broken op may not print
        return f"<unprintable: {e}>"


# Splitting and expected diagnostics ---------------------------------------------------------

def split_input(text: str) -> list[str]:
    """Chunks separated by `// -----` lines. Each chunk is padded with the newlines that precede
    it, so that line numbers in it (in errors and in locations) are those of the whole file."""
    chunks = []
    start = 0
    for m in _SPLIT_LINE.finditer(text):
        chunks.append((start, m.start()))
        start = m.end() + 1 if m.end() < len(text) else m.end()
    chunks.append((start, len(text)))
    return ["\n" * text.count("\n", 0, s) + text[s:e] for s, e in chunks]


_EXPECTED = re.compile(r"expected-(error|note|remark|warning)(-re)?[ \t]*([0-9]+)?[ \t]*"
                       r"(@(?:[+-][0-9]+|above|below))?[ \t]*\{\{(.*)\}\}")


@dataclass
class Expectation:
    kind: str
    pattern: re.Pattern[str]
    text: str
    line: int  # the line the diagnostic is expected on
    comment_line: int
    comment_column: int
    count: int = 1
    seen: int = 0


def _expectation_pattern(text: str, is_regex: bool) -> re.Pattern[str]:
    if not is_regex:
        return re.compile(re.escape(text))
    # `-re` form: literal text with `{{regex}}` parts, as MLIR's verifier.
    parts = re.split(r"\{\{(.*?)\}\}", text)
    return re.compile("".join(p if i % 2 else re.escape(p) for i, p in enumerate(parts)))


def parse_expectations(text: str, filename: str = "-") -> list[Expectation]:
    """The `// expected-error {{...}}` comments of `text` (MLIR's -verify-diagnostics syntax). A
    `-re` comment whose regex does not compile is a ParseError located at its text."""
    lines = text.split("\n")
    out: list[Expectation] = []
    last_plain_line = 0
    pending_below: list[Expectation] = []
    for i, source in enumerate(lines, start=1):
        m = _EXPECTED.search(source)
        if m is None:
            last_plain_line = i
            for e in pending_below:
                e.line = i
            pending_below.clear()
            continue
        kind, is_regex, count, designator, message = m.groups()
        try:
            pattern = _expectation_pattern(message, bool(is_regex))
        except re.error as error:
            raise ParseError(f"invalid regex: {error.msg}", filename, i, m.start(5) + 1, source) from None
        e = Expectation(kind, pattern, message, i, i, m.start() + 1, int(count) if count else 1)
        if designator == "@above":
            e.line = last_plain_line
        elif designator == "@below":
            e.line = len(lines)
            pending_below.append(e)
        elif designator:
            e.line = i + int(designator[1:])
        out.append(e)
    return out


def check_expectations(diagnostics: list[Diagnostic], expectations: list[Expectation], filename: str) -> list[
        Diagnostic]:
    """Match produced diagnostics against expectations; returns the mismatches as errors."""
    problems: list[Diagnostic] = []
    for d in diagnostics:
        for e in expectations:
            if (e.seen < e.count and e.kind == d.kind and d.filename == filename and e.line == d.line
                    and e.pattern.search(d.message)):
                e.seen += 1
                break
        else:
            problems.append(Diagnostic(f"unexpected {d.kind}: {d.message}", d.filename, d.line, d.column,
                                       prefix=d.prefix))
    for e in expectations:
        if e.seen < e.count:
            problems.append(Diagnostic(f'expected {e.kind} "{e.text}" was not produced', filename, e.comment_line,
                                       e.comment_column))
    return problems


# Pass pipelines -----------------------------------------------------------------------------

class PipelineUnavailable(LoomError):
    """loom.rewrite (the pass manager) is not importable in this checkout."""


def build_pass_manager(pipeline: str, timing: bool = False, print_ir_after_all: bool = False,
                       stream: TextIO | None = None, generic: bool = False, debuginfo: bool = False) -> Any:
    """A loom.rewrite.PassManager for MLIR pipeline text, with timing (reported to `stream` after each
    run) and IR printing after each pass. Raises PipelineParseError (located) when malformed."""
    try:
        from loom.rewrite import PassManager
    except ImportError as e:
        raise PipelineUnavailable(f"pass pipelines are not available: {e}") from None
    pm = PassManager.parse(pipeline)
    if print_ir_after_all:
        pm.enable_ir_printing(stream=stream, print_after_all=True, generic=generic, debuginfo=debuginfo)
    if timing:
        pm.enable_timing(stream=stream, report=stream is not None)
    return pm


def run_pass_manager(pm: Any, root: Operation) -> None:
    pm.run(root)


def timing_report(pm: Any) -> str:
    """The timing report of the pass manager's last run ('' without timing)."""
    from loom.rewrite.instrumentation import PassTiming
    for inst in pm.instrumentations:
        if isinstance(inst, PassTiming):
            return inst.last_report
    return ""


# The tool -----------------------------------------------------------------------------------

def make_parser(prog: str = "loom-opt") -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog=prog, description="loom modular optimizer driver (in the habits of mlir-opt)",
                                 allow_abbrev=False)
    ap.add_argument("input", nargs="?", default="-", help="input file, or - for stdin (default)")
    ap.add_argument("-o", dest="output", default="-", metavar="FILE", help="output file (written atomically)")
    ap.add_argument("--pass-pipeline", "-pass-pipeline", default=None, metavar="PIPELINE",
                    help="textual pass pipeline, e.g. 'builtin.module(func.func(canonicalize,cse))'")
    ap.add_argument("--mlir-print-op-generic", "-mlir-print-op-generic", action="store_true",
                    help="print every op in the generic form")
    ap.add_argument("--mlir-print-debuginfo", "-mlir-print-debuginfo", action="store_true",
                    help="print locations")
    ap.add_argument("--allow-unregistered-dialect", "-allow-unregistered-dialect", action="store_true",
                    help="accept ops of dialects loom does not know")
    ap.add_argument("--split-input-file", "-split-input-file", action="store_true",
                    help="process each chunk between '// -----' lines independently")
    ap.add_argument("--verify-diagnostics", "-verify-diagnostics", action="store_true",
                    help="check the errors against '// expected-error {{...}}' comments")
    ap.add_argument("--mlir-timing", "-mlir-timing", action="store_true",
                    help="print the time of each pass to stderr")
    ap.add_argument("--mlir-print-ir-after-all", "-mlir-print-ir-after-all", action="store_true",
                    help="print the IR to stderr after each pass")
    ap.add_argument("--remarks", "-remarks", action="store_true",
                    help="print the remarks passes emit (e.g. ops spmd-partition runs replicated) to stderr")
    ap.add_argument("--no-implicit-module", "-no-implicit-module", action="store_true",
                    help="use the single top-level op of the input as the root instead of wrapping in a module")
    return ap


class _Driver:
    def __init__(self, args: argparse.Namespace, filename: str, text: str, stderr: TextIO) -> None:
        self.args = args
        self.filename = filename
        self.sources = {filename: text.split("\n")}
        self.stderr = stderr
        self.pass_manager: Any = None

    def emit(self, d: Diagnostic) -> None:
        self.stderr.write(d.render(self.sources) + "\n")

    def build_pipeline(self) -> bool:
        """Parse --pass-pipeline; False (after reporting) when it is malformed."""
        try:
            args = self.args
            self.pass_manager = build_pass_manager(args.pass_pipeline, timing=args.mlir_timing,
                                                   print_ir_after_all=args.mlir_print_ir_after_all,
                                                   stream=self.stderr, generic=args.mlir_print_op_generic,
                                                   debuginfo=args.mlir_print_debuginfo)
        except LoomError as e:
            self.stderr.write((e.render() if hasattr(e, "render") else f"loom-opt: error: {e}") + "\n")
            return False
        return True

    def process(self, chunk: str) -> tuple[str | None, list[Diagnostic]]:
        """Parse, verify, run the pipeline and print one chunk: (output or None, diagnostics)."""
        import loom.ir as ir
        args = self.args
        try:
            root = ir.parse(chunk, allow_unregistered=args.allow_unregistered_dialect, filename=self.filename)
            if args.no_implicit_module:
                root = _explicit_root(root, self.filename)
            if self.pass_manager is not None:
                from loom.ir.diagnostics import collect_remarks
                with collect_remarks() as remarks:
                    run_pass_manager(self.pass_manager, root)
                for remark in remarks if args.remarks else ():
                    self.stderr.write(f"{remark}\n")
            return ir.print(root, generic=args.mlir_print_op_generic, debuginfo=args.mlir_print_debuginfo), []
        except LoomError as e:
            return None, [diagnostic_from_error(e)]

    def run(self, text: str) -> tuple[int, str]:
        args = self.args
        chunks = split_input(text) if args.split_input_file else [text]
        outputs: list[str] = []
        failed = False
        for chunk in chunks:
            out, diagnostics = self.process(chunk)
            if out is not None:
                outputs.append(out)
            if args.verify_diagnostics:
                try:
                    expectations = parse_expectations(chunk, self.filename)
                except ParseError as e:
                    diagnostics = [diagnostic_from_error(e)]
                else:
                    diagnostics = check_expectations(diagnostics, expectations, self.filename)
            for d in diagnostics:
                self.emit(d)
            failed = failed or bool(diagnostics)
        return (1 if failed else 0), (SPLIT_MARKER + "\n").join(outputs)


def _explicit_root(module: Operation, filename: str) -> Operation:
    """With --no-implicit-module: the input's single top-level op, not a module wrapped around it."""
    loc = location_line_col(module.location)
    if loc is None or loc[1] != 0:  # the text itself had one top-level op (a module)
        return module
    ops = list(module.regions[0].blocks[0].ops) if module.regions[0].blocks else []
    if len(ops) != 1:
        raise ParseError("source must contain a single top-level operation when --no-implicit-module is given",
                         filename, 1, 1, "")
    return ops[0].detach()


def write_atomically(path: str, text: str) -> None:
    """Write `text` to `path` through a temporary file in the same folder and a rename, so that
    readers see the old file or the whole new one, never a part."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(path) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        try:
            mode = os.stat(path).st_mode & 0o7777
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def run(argv: list[str], prog: str = "loom-opt") -> int:
    """The tool without the internal-error guard; returns the exit status."""
    try:
        args = make_parser(prog).parse_args(argv)
    except SystemExit as e:  # --help or a usage error (argparse printed it)
        return e.code if isinstance(e.code, int) else 2
    data: bytes | str
    if args.input == "-":
        buffer = getattr(sys.stdin, "buffer", None)  # a text-only stream (as in embedding) has none
        filename, data = "<stdin>", buffer.read() if buffer is not None else sys.stdin.read()
    else:
        filename = args.input
        try:
            with open(args.input, "rb") as f:
                data = f.read()
        except OSError as e:
            sys.stderr.write(f"{prog}: error: could not open input file '{args.input}': {e.strerror}\n")
            return 1
    try:
        text = decode_source(data, filename) if isinstance(data, bytes) else data
    except ParseError as e:
        sys.stderr.write(e.render() + "\n")
        return 1
    driver = _Driver(args, filename, text, sys.stderr)
    if args.pass_pipeline is not None and not driver.build_pipeline():
        return 1
    status, output = driver.run(text)
    if args.output == "-":
        # As mlir-opt: with --split-input-file the chunks that succeeded are still printed.
        sys.stdout.write(output)
        sys.stdout.flush()
    elif status == 0:  # a failed run leaves an existing output file as it was
        try:
            write_atomically(args.output, output)
        except OSError as e:
            sys.stderr.write(f"{prog}: error: could not write output file '{args.output}': {e.strerror}\n")
            return 1
    return status


def main(argv: list[str] | None = None, prog: str = "loom-opt") -> int:
    """Entry point of `loom-opt`: returns 0 on success, 1 on errors in the input, 2 on internal errors."""
    try:
        return run(sys.argv[1:] if argv is None else list(argv), prog)
    except KeyboardInterrupt:
        return 130
    except Exception as e:
        if os.environ.get("LOOM_DEBUG") == "1":
            traceback.print_exc()
        sys.stderr.write(f"{prog}: internal error: {type(e).__name__}: {e}\n")
        if os.environ.get("LOOM_DEBUG") != "1":
            sys.stderr.write("(set LOOM_DEBUG=1 to see the Python traceback)\n")
        return 2


if __name__ == "__main__":
    sys.exit(main())
