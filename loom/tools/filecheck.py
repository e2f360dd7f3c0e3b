"""A small FileCheck, in the habits of LLVM's, and the runner of `// RUN:` lines for loom-opt tests.

A test file holds its input, the commands to run on it and the checks of their output:

    // RUN: loom-opt %s --pass-pipeline='builtin.module(cse)' | FileCheck %s
    // CHECK-LABEL: func.func @f
    // CHECK:      %[[SUM:.*]] = arith.addi
    // CHECK-NEXT: return %[[SUM]]

Directives (prefix CHECK, or --check-prefix=P): `P:` matches at or after the previous match;
`P-NEXT:` on the next line; `P-SAME:` on the same line; `P-NOT:` must not occur between the
matches around it; `P-DAG:` consecutive ones match in any order; `P-LABEL:` splits the input into
blocks that the other checks stay inside. In a pattern, `{{regex}}` is a regular expression,
`[[NAME:regex]]` binds what the regex matched and `[[NAME]]` is that text again; runs of spaces
match any run of spaces. A RUN line is `loom-opt ARGS [2>&1] [| FileCheck %s [--check-prefix=P]]`
with `%s` the file; without FileCheck the command must succeed (e.g. --verify-diagnostics).

    python -m loom.tools.filecheck test.mlir   # run a test file's RUN lines
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
import sys
from dataclasses import dataclass

_DIRECTIVE_KINDS = ("NEXT", "SAME", "NOT", "DAG", "LABEL")
_VARIABLE = re.compile(r"\[\[([A-Za-z_][A-Za-z0-9_]*)(:|\]\])")


class CheckFileError(ValueError):
    """A malformed check file or RUN line (file:line: message)."""


@dataclass
class Check:
    kind: str  # "" (plain), "NEXT", "SAME", "NOT", "DAG" or "LABEL"
    pattern: str
    line: int  # in the check file


def parse_checks(text: str, prefix: str = "CHECK", filename: str = "<checks>") -> list[Check]:
    """The `prefix:` / `prefix-KIND:` directives of `text`, in order."""
    directive = re.compile(rf"\b{re.escape(prefix)}(?:-([A-Z]+))?:(.*)$")
    checks = []
    for number, line in enumerate(text.split("\n"), start=1):
        m = directive.search(line)
        if m is None:
            continue
        kind, pattern = m.group(1) or "", m.group(2).strip()
        if kind and kind not in _DIRECTIVE_KINDS:
            raise CheckFileError(f"{filename}:{number}: unknown directive '{prefix}-{kind}'")
        if not pattern:
            raise CheckFileError(f"{filename}:{number}: found empty check string with prefix '{prefix}:'")
        if kind in ("NEXT", "SAME") and not checks:
            raise CheckFileError(f"{filename}:{number}: found '{prefix}-{kind}' without previous '{prefix}: line")
        checks.append(Check(kind, pattern, number))
    if not checks:
        raise CheckFileError(f"{filename}: no check strings found with prefix '{prefix}:'")
    return checks


def _compile(pattern: str, variables: dict[str, str]) -> tuple[re.Pattern[str], list[str]]:
    """A regex for a check pattern with the variables bound so far; the names it binds (group `v<i>`)."""
    out: list[str] = []
    bound: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("{{", i):
            end = pattern.find("}}", i + 2)
            if end < 0:
                raise CheckFileError(f"found start of regex string with no end '}}}}' in '{pattern}'")
            out.append(f"(?:{pattern[i + 2:end]})")
            i = end + 2
        elif (m := _VARIABLE.match(pattern, i)) is not None:
            name = m.group(1)
            if m.group(2) == ":":  # a binding: its regex ends at the first "]]" outside brackets
                end, depth = m.end(), 0
                while end < len(pattern) and not (depth == 0 and pattern.startswith("]]", end)):
                    depth += {"[": 1, "]": -1}.get(pattern[end], 0)
                    end += 1
                if end == len(pattern):
                    raise CheckFileError(f"unterminated variable '[[{name}:' in '{pattern}'")
                out.append(f"(?P<v{len(bound)}>{pattern[m.end():end]})")
                bound.append(name)
                i = end + 2
                continue
            if name in bound:  # bound earlier in the same pattern
                out.append(f"(?P=v{bound.index(name)})")
            elif name in variables:
                out.append(re.escape(variables[name]))
            else:
                raise CheckFileError(f"use of undefined variable '{name}' in '{pattern}'")
            i = m.end()
        elif pattern[i] in " \t":
            while i < len(pattern) and pattern[i] in " \t":
                i += 1
            out.append(r"[ \t]+")
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    try:
        return re.compile("".join(out)), bound
    except re.error as e:
        raise CheckFileError(f"invalid regex: {e.msg} in '{pattern}'") from None


class _Input:
    """The checked text, with line numbers of positions."""

    def __init__(self, text: str) -> None:
        self.text = text

    def line_of(self, pos: int) -> int:
        return self.text.count("\n", 0, pos) + 1

    def line_text(self, pos: int) -> str:
        start = self.text.rfind("\n", 0, pos) + 1
        end = self.text.find("\n", pos)
        return self.text[start:end if end >= 0 else len(self.text)]


class _Checker:
    def __init__(self, output: str, prefix: str, filename: str) -> None:
        self.input = _Input(output)
        self.prefix = prefix
        self.filename = filename
        self.variables: dict[str, str] = {}
        self.errors: list[str] = []

    def error(self, check: Check, message: str, pos: int) -> None:
        name = self.prefix + (f"-{check.kind}" if check.kind else "")
        self.errors.append(f"{self.filename}:{check.line}: error: {name}: {message}\n{name}: {check.pattern}\n"
                           f"input line {self.input.line_of(pos)}: {self.input.line_text(pos)}")

    def search(self, check: Check, lo: int, hi: int) -> re.Match[str] | None:
        try:
            regex, bound = _compile(check.pattern, self.variables)
        except CheckFileError as e:
            raise CheckFileError(f"{self.filename}:{check.line}: {e}") from None
        m = regex.search(self.input.text, lo, hi)
        if m is not None:
            self.variables.update((name, m.group(f"v{k}")) for k, name in enumerate(bound))
        return m

    def check_nots(self, nots: list[Check], lo: int, hi: int) -> None:
        for check in nots:
            m = self.search(check, lo, hi)
            if m is not None:
                self.error(check, "excluded string found in input", m.start())
        nots.clear()

    def run(self, checks: list[Check]) -> list[str]:
        # Labels first: they split the input into blocks, each checked on its own.
        text_end = len(self.input.text)
        bounds: list[tuple[int, int]] = [(0, 0)]
        pos = 0
        for check in checks:
            if check.kind == "LABEL":
                m = self.search(check, pos, text_end)
                if m is None:
                    self.error(check, "expected string not found in input", pos)
                    return self.errors
                bounds.append((m.start(), m.end()))
                pos = m.end()
        bounds.append((text_end, text_end))
        block, segment = 0, []
        for check in [*checks, Check("LABEL", "", 0)]:
            if check.kind == "LABEL":
                self.check_block(segment, bounds[block][1], bounds[block + 1][0])
                block, segment = block + 1, []
            else:
                segment.append(check)
        return self.errors

    def check_block(self, checks: list[Check], lo: int, hi: int) -> None:
        pos, nots, i = lo, [], 0
        while i < len(checks):
            check = checks[i]
            if check.kind == "NOT":
                nots.append(check)
                i += 1
                continue
            if check.kind == "DAG":
                group = []
                while i < len(checks) and checks[i].kind == "DAG":
                    group.append(checks[i])
                    i += 1
                spans = self.match_dag(group, pos, hi)
                if spans is None:
                    return
                self.check_nots(nots, pos, min(s for s, _ in spans))
                pos = max(e for _, e in spans)
                continue
            m = self.search(check, pos, hi)
            if m is None:
                self.error(check, "expected string not found in input", pos)
                return
            newlines = self.input.text.count("\n", pos, m.start())
            if check.kind == "NEXT" and newlines != 1:
                self.error(check, f"is not on the line after the previous match ({newlines} line breaks between)",
                           m.start())
                return
            if check.kind == "SAME" and newlines:
                self.error(check, "is not on the same line as the previous match", m.start())
                return
            self.check_nots(nots, pos, m.start())
            pos = m.end()
            i += 1
        self.check_nots(nots, pos, hi)

    def match_dag(self, group: list[Check], lo: int, hi: int) -> list[tuple[int, int]] | None:
        """Each check's first match at or after `lo` that overlaps no other match of the group."""
        spans: list[tuple[int, int]] = []
        for check in group:
            start = lo
            while True:
                m = self.search(check, start, hi)
                if m is None:
                    self.error(check, "expected string not found in input", lo)
                    return None
                if all(m.end() <= s or m.start() >= e for s, e in spans):
                    spans.append(m.span())
                    break
                start = m.start() + 1
        return spans


def check_output(checks: list[Check], output: str, prefix: str = "CHECK", filename: str = "<checks>") -> list[str]:
    """The failures of `checks` on `output`, as FileCheck reports them (empty when all hold)."""
    return _Checker(output, prefix, filename).run(checks)


# RUN lines ------------------------------------------------------------------------------------

def run_lines(text: str) -> list[str]:
    """The `RUN:` commands of a test file, lines ending in a backslash joined with the next."""
    commands, pending = [], ""
    for line in text.split("\n"):
        m = re.search(r"\bRUN:(.*)$", line)
        if m is None:
            continue
        part = m.group(1).strip()
        if part.endswith("\\"):
            pending += part[:-1] + " "
            continue
        commands.append(pending + part)
        pending = ""
    return commands


def run_loom_opt(args: list[str]) -> tuple[int, str, str]:
    """loom-opt in this process: (exit status, stdout, stderr)."""
    from loom.tools.loom_opt import main
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(args)
    return status, out.getvalue(), err.getvalue()


def run_file(path: str) -> list[str]:
    """Run every RUN line of the test file at `path`; the failures (empty when it passes)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    commands = run_lines(text)
    if not commands:
        return [f"{path}: no RUN lines"]
    errors: list[str] = []
    for command in commands:
        words = [path if w == "%s" else w for w in shlex.split(command)]
        stages = [words[:words.index("|")], words[words.index("|") + 1:]] if "|" in words else [words]
        tool = stages[0]
        expect_failure = tool[:1] == ["not"]
        tool = tool[1:] if expect_failure else tool
        merge = "2>&1" in tool
        tool = [w for w in tool if w != "2>&1"]
        if tool[:1] != ["loom-opt"]:
            raise CheckFileError(f"{path}: RUN line must run loom-opt: {command}")
        status, out, err = run_loom_opt(tool[1:])
        if (status != 0) != expect_failure:
            errors.append(f"{path}: RUN: {command}\nloom-opt exited with status {status}\n{err}")
            continue
        if len(stages) == 1:
            continue
        checker = stages[1]
        if checker[:1] != ["FileCheck"] or path not in checker:
            raise CheckFileError(f"{path}: RUN line must pipe into 'FileCheck %s': {command}")
        prefix = "CHECK"
        for w in checker[1:]:
            if w.startswith(("--check-prefix=", "-check-prefix=")):
                prefix = w.split("=", 1)[1]
        output = out + err if merge else out
        errors.extend(check_output(parse_checks(text, prefix, path), output, prefix, path))
    return errors


def main(argv: list[str] | None = None) -> int:
    """Run the RUN lines of each test file given; 0 when all pass."""
    failed = False
    for path in sys.argv[1:] if argv is None else argv:
        try:
            errors = run_file(path)
        except (CheckFileError, OSError) as e:
            errors = [f"error: {e}"]
        for error in errors:
            sys.stderr.write(error + "\n")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
