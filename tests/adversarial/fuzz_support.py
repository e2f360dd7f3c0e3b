"""Grammar-aware mutation of MLIR text and the one check every mutant must pass (used by
test_parser_fuzz.py and by `make fuzz`).

A mutant is a corpus file with a few token-level edits: tokens deleted, duplicated, swapped,
truncated at, or replaced by tokens of the same file or by tokens known to be hard (huge numbers,
hex floats out of range, huge widths and dimensions, unregistered dialects, deep brackets,
invalid escapes). Each mutant must, within the time limit, either parse (then its printed text,
pretty and generic, parses again and prints the same; see `check` for f80 / f128) or fail with a located ParseError or a
VerifyError: never another exception, never a hang.
"""

from __future__ import annotations

import re
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import loom.dialects  # noqa: F401  (registers the dialects)
import loom.ir as ir
from loom.ir.core import paused_gc
from loom.ir.parser import Parser

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
MAX_CORPUS_FILE = 4000  # characters: small files keep each example fast

TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|%[\w$.-]+(?:[:#]\d+)?|\^[\w$.-]+|@[\w$.-]+|[#!][\w$.-]+|0x[0-9a-fA-F]+'
                   r"|-?\d+(?:\.\d*(?:[eE][-+]?\d+)?)?|[A-Za-z_][\w$.]*|->|::|\S")

HARD_TOKENS = (
    # numbers
    "0", "-0", "1.5", "-1", "4294967296", "99999999999999999999999", "9" * 5000, "1e999999999", "1.0e999999999",
    "-1.0e-999999999", "0x1E400E00", "-0x7C00", "0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF1", "0x", "1.", "0.0e",
    # types
    "i0", "i1", "i99999999", "i4000000000", "si7", "ui128", "f80", "f128", "tf32", "f8E4M3FN", "index", "none",
    "complex<i32>", "tensor<?x3xf32>", "tensor<99999999999999999999xf32>", "tensor<*xf32>", "vector<[4]xf32>",
    "memref<*xf32>", "tuple<>", "!foo.bar", "!foo.bar<1>", "!stablehlo.token", "(i32) -> i32",
    # attributes and keywords
    "dense<", "dense<[1, 2]>", "array<i8:", "array<f16: 0x7C00>", "dense_resource<x>", "affine_map<(d0) -> (d0)>",
    "#foo.bar<1>", "#undefined_alias", "!undefined_alias", "unit", "true", "false", "loc(", 'loc("f":1:2)',
    "loc(unknown)", "loc(fused[", "attributes", "private", "nested", "public", "bogus",
    # punctuation and names
    "(", ")", "{", "}", "[", "]", "<", ">", ",", ":", "=", "->", "::", "%0", "%0#5", "%0#99999999999", "%x:3",
    "^bb0", "^bb9", "@f", "@\"q\"", "//", "\n", "{-#", "#-}", '"', "\\", '"\\FF"', '"\\q"', '"\\', "\udcff",
    "\u00e9", "\x00",
)


def _kind(token: str) -> str:
    """number, string, type (a builtin scalar type) or word (keywords, names); anything else is
    punctuation."""
    c = token[:1]
    if c.isdigit() or (c == "-" and token[1:2].isdigit()):
        return "number"
    if c == '"':
        return "string"
    if re.fullmatch(r"[su]?i[0-9]+|f[0-9]+(?:E[0-9A-Z]+)?|bf16|tf32|index|none", token):
        return "type"
    if c.isalpha() or c in "!#%@^_":
        return "word"
    return "punctuation"


HARD_BY_KIND: dict[str, tuple[str, ...]] = {}
for _t in HARD_TOKENS:
    HARD_BY_KIND.setdefault(_kind(_t), ())
    HARD_BY_KIND[_kind(_t)] += (_t,)


def corpus_texts() -> list[str]:
    """The small corpus files, in a fixed order."""
    paths = sorted(p for p in CORPUS.rglob("*.mlir") if p.stat().st_size <= MAX_CORPUS_FILE)
    return [p.read_text(encoding="utf-8") for p in paths]


def tokens(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in TOKEN.finditer(text)]


def mutate(text: str, edits: list[tuple[int, int, int, int]]) -> str:
    """Apply `edits` (kind, a, b, c: ints drawn by the caller, read modulo what they index)."""
    for kind, a, b, c in edits:
        spans = tokens(text)
        if not spans:
            return text
        i, j = spans[a % len(spans)], spans[b % len(spans)]
        own = text[j[0]:j[1]]
        hard = HARD_TOKENS[c % len(HARD_TOKENS)]
        kind %= 9
        if kind == 8:    # replace a token by a hard one of its kind (a number by a number...)
            same = HARD_BY_KIND.get(_kind(text[i[0]:i[1]]), HARD_TOKENS)
            text = text[:i[0]] + same[c % len(same)] + text[i[1]:]
        elif kind == 0:  # delete a token
            text = text[:i[0]] + text[i[1]:]
        elif kind == 1:  # duplicate a token
            text = text[:i[1]] + " " + text[i[0]:i[1]] + text[i[1]:]
        elif kind == 2:  # replace a token by a hard one
            text = text[:i[0]] + hard + text[i[1]:]
        elif kind == 3:  # insert a hard token
            text = text[:i[0]] + hard + " " + text[i[0]:]
        elif kind == 4:  # replace a token by another token of the file
            text = text[:i[0]] + own + text[i[1]:]
        elif kind == 5 and i[0] < j[0]:  # swap two tokens
            text = text[:i[0]] + own + text[i[1]:j[0]] + text[i[0]:i[1]] + text[j[1]:]
        elif kind == 6:  # truncate
            text = text[:i[1]]
        elif kind == 7:  # deep brackets (bounded)
            depth = 1 + c % 400
            opener = "([{<"[b % 4]
            text = text[:i[0]] + opener * depth + text[i[0]:]
    return text


class Hang(Exception):
    """An example that ran past the time limit."""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    def fire(signum, frame):
        raise Hang(f"over {seconds} s")

    previous = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _parse_raw(text: str, allow_unregistered: bool) -> ir.Operation:
    """loom.ir.parse without its last-resort relabelling of Python exceptions as ParseError, so
    that an internal error shows as what it is."""
    p = Parser(text, "fuzz.mlir", allow_unregistered)
    with paused_gc():
        try:
            module = p.parse_top_level()
        except RecursionError:
            raise p.error("nesting too deep") from None
    module.verify()
    return module


def check(text: str, allow_unregistered: bool) -> str:
    """The outcome of one mutant ("parsed", "parse error", "verify error"); raises AssertionError
    (or the unexpected exception) when the mutant breaks a rule."""
    try:
        module = _parse_raw(text, allow_unregistered)
    except ir.ParseError as e:
        lines = text.count("\n") + 1
        assert e.filename == "fuzz.mlir" and 1 <= e.line <= lines and e.column >= 1, e
        assert e.message and str(e)
        return "parse error"
    except ir.VerifyError as e:
        assert e.message and str(e)
        return "verify error"
    for generic in (False, True):
        printed = ir.print(module, generic=generic)
        try:
            again = ir.parse(printed, allow_unregistered=allow_unregistered)
        except (ir.ParseError, ir.VerifyError) as e:
            raise AssertionError(f"printed text does not parse again:\n{printed}\n{e}") from None
        reprinted = ir.print(again, generic=generic)
        if re.search(r"\bf(80|128)\b", printed):
            # MLIR reads decimal text through a double, so an f80 / f128 value beyond a double's
            # range or precision prints as text that reads back as another value (in MLIR too):
            # the second print must be the fixed point instead.
            printed = reprinted
            reprinted = ir.print(ir.parse(printed, allow_unregistered=allow_unregistered), generic=generic)
        assert reprinted == printed, f"print is not a fixed point:\n{printed}\n{reprinted}"
    return "parsed"
