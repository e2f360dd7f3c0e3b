"""The parser: MLIR's generic form (the whole grammar of LangRef), plus custom forms of ops
that define `parse_custom`.

A position-based recursive-descent parser over the source string: each token is one
compiled-regex match at the current offset. Types, function signatures and attribute
dictionaries are cached by their source text, so a large module parses each distinct one once.
"""

from __future__ import annotations

import bisect
import re
from array import array
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, cast

from loom.ir.attributes import (
    UNIT,
    UNKNOWN_LOC,
    ArrayAttr,
    Attribute,
    BoolAttr,
    CallSiteLoc,
    DenseArrayAttr,
    DenseElementsAttr,
    DenseResourceAttr,
    DenseStringElementsAttr,
    DialectAttr,
    DictionaryAttr,
    FileLineColLoc,
    FloatAttr,
    FusedLoc,
    IntegerAttr,
    Location,
    NameLoc,
    OpaqueBuiltinAttr,
    StringAttr,
    SymbolRefAttr,
    TypeAttr,
    UnknownLoc,
    _storage_bytes,
)
from loom.ir.core import _OP_CLASSES, Block, Operation, PendingLocation, Region, Value, paused_gc
from loom.ir.diagnostics import ParseError
from loom.ir.floats import value_to_bits
from loom.ir.opdef import IsolatedFromAbove, OpBase, lookup_dialect, lookup_op
from loom.ir.printer import ExplicitProperties
from loom.ir.types import (
    DYNAMIC,
    FLOAT_KINDS,
    ComplexType,
    DialectType,
    FloatType,
    FunctionType,
    IndexType,
    IntegerType,
    MemRefType,
    NoneType,
    OpaqueType,
    RankedTensorType,
    ShapedType,
    TupleType,
    Type,
    UnrankedMemRefType,
    UnrankedTensorType,
    VectorType,
    i1,
    i64,
)

_WS = re.compile(r"(?:[ \t\r\n]+|//[^\n]*)*")
# _WS also matches the empty string, so a match never fails.
_match_ws = cast("Callable[[str, int], re.Match[str]]", _WS.match)
_BARE_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*")
_SUFFIX_ID = r"(?:[0-9]+|[A-Za-z$._-][A-Za-z0-9$._-]*)"
_VALUE_USE = re.compile(r"%(" + _SUFFIX_ID + r")(?:#([0-9]+))?")
_VALUE_DEF = re.compile(r"%(" + _SUFFIX_ID + r")(?::([0-9]+))?")
_CARET_ID = re.compile(r"\^(" + _SUFFIX_ID + r")")
_STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
_NUMBER = re.compile(r"[-+]?(?:0x[0-9a-fA-F]+|[0-9]+(\.[0-9]*([eE][-+]?[0-9]+)?)?)")
_INT = re.compile(r"-?[0-9]+")
_SIMPLE_TYPE = re.compile(r"(?:[su]?i[0-9]+|index|none|f16|bf16|f32|f64|f80|f128|tf32|f8E[0-9A-Z]+|f6E[0-9A-Z]+"
                          r"|f4E[0-9A-Z]+)(?![A-Za-z0-9_$.])")
_SHAPED_FAST = re.compile(r"(?:tensor|vector|memref|complex)<[^<>()]*>")
_DIM = re.compile(r"(\?|[0-9]+|\[[0-9]+\])x")
_SIG_FAST = re.compile(r"\((?:[^()<>\"]|<[^<>()\"]*>)*\)[ ]->[ ](?:\((?:[^()<>\"]|<[^<>()\"]*>)*\)|"
                       r"[A-Za-z!][A-Za-z0-9_$.!]*(?:<[^<>()\"]*>)?)")
# One whole generic op without regions or successors, in the form MLIR prints it: parsed with a
# single match, its dictionaries and signature looked up by their text.
_DICT_TEXT = r'\{[^{}"]*(?:"[^"\\\n]*"[^{}"]*)*\}'
_FAST_OP = re.compile(
    r'(?:%([A-Za-z0-9_$.-]+)(?::([0-9]+))? = )?"([^"\\\n]+)"\(([^()]*)\)'
    r"(?: <(" + _DICT_TEXT + r")>)?(?: (" + _DICT_TEXT + r"))? : "
    r'(\((?:[^()<>"\n]|<[^<>()"\n]*>)*\) -> (?:\((?:[^()<>"\n]|<[^<>()"\n]*>)*\)|'
    r'[A-Za-z!][A-Za-z0-9_$.!]*(?:<[^<>()"\n]*>)?))(?=[ \t]*(?:\n|$|loc\(|//))')
# ` = value` followed by `,` or `}` where value is a string, a number with an optional simple
# type, a bare keyword, a symbol, or a flat array of such: its text alone determines it.
_SIMPLE_VALUE = (r'(?:"[^"\\\n]*"|-?[0-9][0-9.eE+-]*(?: : [a-z0-9]+)?|true|false|unit|@[A-Za-z_][A-Za-z0-9_$.]*'
                 r'|[a-z][a-z0-9]*)')
_ENTRY_VALUE = re.compile(r" = (" + _SIMPLE_VALUE + r"|\[(?:" + _SIMPLE_VALUE + r"(?:, " + _SIMPLE_VALUE + r")*)?\])"
                          r"(?:(,) |(\}))")
_FAST_OP_AFTER_WS = re.compile(r"[ \t\r\n]*" + _FAST_OP.pattern)
_ALIAS_DEF = re.compile(r"^([#!])([A-Za-z_][A-Za-z0-9_$.-]*)[ \t]*=", re.M)
_ESCAPE = re.compile(r"\\(?:([0-9a-fA-F]{2})|(.))")

_SIMPLE_TYPES: dict[str, Type] = {"index": IndexType(), "none": NoneType()}
for _k in FLOAT_KINDS:
    _SIMPLE_TYPES[_k] = FloatType(_k)


MAX_INTEGER_WIDTH = 16_777_215  # MLIR's limit on an integer type's bit width
_MAX_DIM = (1 << 63) - 1  # a dimension is an int64, as in MLIR


def _count(digits: str) -> int:
    """A result count or number (`%x:2`, `%x#1`): any that does not fit in 62 bits is too large
    for every op, so it reads as 2^62 (reported as a count mismatch or an invalid number)."""
    return int(digits) if len(digits) < 19 else 1 << 62


def _dim_too_large(digits: str) -> bool:
    digits = digits.lstrip("0")
    return len(digits) > 19 or len(digits) == 19 and int(digits) > _MAX_DIM


def _simple_type(text: str) -> Type | None:
    t = _SIMPLE_TYPES.get(text)
    if t is None:
        m = re.fullmatch(r"(s|u)?i([0-9]+)", text)
        if m and len(m.group(2)) <= 8 and int(m.group(2)) <= MAX_INTEGER_WIDTH:  # else a located error
            t = _SIMPLE_TYPES[text] = IntegerType(int(m.group(2)), m.group(1) or "")
    return t


def integer_fits(magnitude: int, negative: bool, type: IntegerType | IndexType) -> bool:
    """Whether an integer literal fits `type`, by MLIR's rule: the magnitude fits the bit width; a
    negative value keeps the sign bit once negated (so down to -2^(w-1), and `-0` does not); a
    positive value of a signed type leaves the sign bit clear. A signless type takes both readings
    (-1 and 2^w - 1 are the same i32)."""
    width = 64 if isinstance(type, IndexType) else type.width
    if magnitude >> width:
        return False
    if negative:
        return 0 < magnitude <= 1 << (width - 1) if width else False
    return not (isinstance(type, IntegerType) and type.signedness == "s" and magnitude >> (width - 1))


def unescape(body: str) -> str:
    if "\\" not in body:
        return body
    out = bytearray()
    i = 0
    raw = body.encode("utf-8", "surrogateescape")
    while i < len(raw):
        c = raw[i]
        if c == 0x5C and i + 1 < len(raw):
            nxt = raw[i + 1:i + 3]
            if len(nxt) == 2 and all(chr(b) in "0123456789abcdefABCDEF" for b in nxt):
                out.append(int(nxt, 16))
                i += 3
                continue
            e = chr(raw[i + 1])
            out.append({"n": 10, "t": 9, "\\": 92, '"': 34}.get(e, raw[i + 1]))
            i += 2
            continue
        out.append(c)
        i += 1
    return out.decode("utf-8", "surrogateescape")


class _Forward(Value):
    """Placeholder for a value used before its definition."""

    __slots__ = ("pos",)
    pos: int


class _Scope:
    """Names visible in one region; `isolated` scopes do not look outward."""

    __slots__ = ("values", "parent", "isolated", "isolated_scope", "forward", "blocks", "block_forward",
                 "defined_blocks")

    def __init__(self, parent: _Scope | None, isolated: bool) -> None:
        self.values: dict[str, Sequence[Value]] = {}
        self.parent = parent
        self.isolated = isolated
        # The nearest isolated scope, this one or an ancestor: it keeps the forward references.
        self.isolated_scope: _Scope = self if isolated or parent is None else parent.isolated_scope
        self.forward: dict[str, dict[int, _Forward]] = {}  # name -> result number -> placeholder
        self.blocks: dict[str, Block] = {}
        self.block_forward: dict[str, int] = {}
        self.defined_blocks: set[str] = set()


_TYPE_CACHE: dict[str, Type] = {}
_SIG_CACHE: dict[str, tuple[tuple[Type, ...], tuple[Type, ...]]] = {}


class _SourceLines:
    """Line and column of an offset in a source text; the line starts are found on first use and
    kept as 8-byte integers (a million-line file costs 8 MB, not 40)."""

    __slots__ = ("src", "filename", "_starts")

    def __init__(self, src: str, filename: str) -> None:
        self.src = src
        self.filename = filename
        self._starts: array | None = None

    def lines(self) -> array:
        if self._starts is None:
            starts = array("q", [0])
            find = self.src.find
            i = find("\n")
            while i != -1:
                starts.append(i + 1)
                i = find("\n", i + 1)
            self._starts = starts
        return self._starts

    def line_col(self, pos: int) -> tuple[int, int]:
        starts = self.lines()
        line = bisect.bisect_right(starts, pos) - 1
        return line + 1, pos - starts[line] + 1

    def loc_at(self, pos: int) -> Location:
        line, col = self.line_col(pos)
        return FileLineColLoc(self.filename, line, col)


class Parser:
    """Parses MLIR text into loom IR. See `parse` for the entry point."""

    def __init__(self, text: str, filename: str = "-", allow_unregistered: bool = False) -> None:
        self.src = text
        self.pos = 0
        self.filename = filename
        self.allow_unregistered = allow_unregistered
        self.scope = _Scope(None, True)
        self.resources: dict[str, dict[str, str]] = {}
        self.default_dialects: list[str] = []
        self._alias_pos: dict[tuple[str, str], int] = {}
        self._aliases: dict[tuple[str, str], Any] = {}
        self._alias_busy: set[tuple[str, str]] = set()
        self._source = _SourceLines(text, filename)
        self._dict_cache: dict[str, dict[str, Attribute]] = {}
        self._value_cache: dict[str, Attribute] = {}
        # one bound method shared by every op's pending location; it keeps the text alive, not the parser
        self._resolve_loc = self._source.loc_at
        for m in _ALIAS_DEF.finditer(text):
            self._alias_pos.setdefault((m.group(1), m.group(2)), m.end())

    # Errors and positions -----------------------------------------------------------------
    def _lines(self) -> Sequence[int]:
        return self._source.lines()

    def line_col(self, pos: int) -> tuple[int, int]:
        return self._source.line_col(pos)

    def error(self, message: str, pos: int | None = None) -> ParseError:
        pos = self.pos if pos is None else pos
        line, col = self.line_col(pos)
        start = self._lines()[line - 1]
        end = self.src.find("\n", start)
        return ParseError(message, self.filename, line, col, self.src[start:end if end != -1 else len(self.src)])

    def loc_at(self, pos: int) -> Location:
        return self._source.loc_at(pos)

    # Tokens -------------------------------------------------------------------------------
    def ws(self) -> int:
        self.pos = _match_ws(self.src, self.pos).end()
        return self.pos

    def peek(self, s: str) -> bool:
        self.ws()
        return self.src.startswith(s, self.pos)

    def accept(self, s: str) -> bool:
        self.ws()
        if self.src.startswith(s, self.pos):
            self.pos += len(s)
            return True
        return False

    def expect(self, s: str, context: str = "") -> None:
        self.ws()
        if not self.src.startswith(s, self.pos):
            raise self.error(f"expected '{s}'" + (f" {context}" if context else ""))
        self.pos += len(s)

    def accept_keyword(self, kw: str) -> bool:
        self.ws()
        m = _BARE_ID.match(self.src, self.pos)
        if m and m.group() == kw:
            self.pos = m.end()
            return True
        return False

    def expect_keyword(self, kw: str) -> None:
        if not self.accept_keyword(kw):
            raise self.error(f"expected '{kw}'")

    def parse_bare_id(self, what: str = "identifier") -> str:
        self.ws()
        m = _BARE_ID.match(self.src, self.pos)
        if not m:
            raise self.error(f"expected {what}")
        self.pos = m.end()
        return m.group()

    def parse_string(self, what: str = "string") -> str:
        self.ws()
        m = _STRING.match(self.src, self.pos)
        if not m:
            raise self.error(f"expected {what}")
        self.pos = m.end()
        return unescape(m.group(1))

    def parse_int(self, max_bits: int = 64) -> int:
        """An integer literal of at most `max_bits` bits of magnitude (else a located error)."""
        pos = self.ws()
        m = _NUMBER.match(self.src, self.pos)
        if not m or m.group(1) is not None:
            raise self.error("expected integer")
        self.pos = m.end()
        return self.int_literal(m.group(), max_bits, pos)

    def int_literal(self, text: str, max_bits: int, pos: int) -> int:
        """The value of integer literal text, its length checked first so that no literal makes the
        conversion slow: text that needs more than `max_bits` + 1 bits is out of range."""
        body = text.lstrip("+-")
        is_hex = body.startswith("0x")
        digits = (body[2:] if is_hex else body).lstrip("0")
        least_bits = 4 * len(digits) - 3 if is_hex else int((len(digits) - 1) * 3.3219)
        if digits and least_bits > max_bits + 1:
            raise self.error("integer constant out of range", pos)
        return _decimal_int(text)

    def parse_list(self, close: str, element: Callable[[], Any], what: str) -> list:
        """Comma-separated elements up to `close` (the opening bracket already consumed)."""
        items: list = []
        if self.accept(close):
            return items
        while True:
            items.append(element())
            if self.accept(close):
                return items
            self.expect(",", f"or '{close}' in {what}")

    def at_end(self) -> bool:
        return self.ws() >= len(self.src)

    # Top level ----------------------------------------------------------------------------
    def parse_top_level(self) -> Operation:
        from loom.dialects.builtin import ModuleOp
        block = Block()
        while not self.at_end():
            src, pos = self.src, self.pos
            c = src[pos]
            alias = _BARE_ID.match(src, pos + 1) if c in "#!" else None
            if c in "#!" and src.startswith("=", _match_ws(src, alias.end() if alias else pos + 1).end()):
                self._parse_alias_def()
            elif src.startswith("{-#", pos):
                self._parse_resources()
            else:
                self.parse_operation(block)
        self._finish_scope(self.scope)
        ops = list(block.ops)
        if len(ops) == 1 and isinstance(ops[0], ModuleOp):
            module = ops[0]
            module.detach()
        else:
            module = ModuleOp.build(location=FileLineColLoc(self.filename, 0, 0))
            body = module.body
            for op in ops:
                body.append(op.detach())
        if self.resources:
            module.resources = self.resources
        return module

    def _parse_alias_def(self) -> None:
        kind = self.src[self.pos]
        self.pos += 1
        name = self.parse_bare_id("alias name")
        self.expect("=")
        key = (kind, name)
        if key in self._aliases:  # already parsed on first use; skip its text
            self._skip_alias_body(kind)
            return
        self._aliases[key] = self.parse_type() if kind == "!" else self._alias_attr_value()

    def _alias_attr_value(self) -> Any:
        self.ws()
        if self.src.startswith("loc(", self.pos):
            self.pos += 4
            loc = self.parse_location_body()
            self.expect(")")
            return loc
        return self.parse_attribute()

    def _skip_alias_body(self, kind: str) -> None:
        if kind == "!":
            self.parse_type()
        else:
            self._alias_attr_value()

    def _resolve_alias(self, kind: str, name: str, pos: int) -> Any:
        key = (kind, name)
        if key in self._aliases:
            return self._aliases[key]
        at = self._alias_pos.get(key)
        if at is None or key in self._alias_busy:
            what = "type" if kind == "!" else "attribute"
            raise self.error(f"undefined symbol alias id '{name}'" if kind == "#" else
                             f"undefined {what} alias '{name}'", pos)
        saved = self.pos
        self._alias_busy.add(key)
        self.pos = at
        value = self.parse_type() if kind == "!" else self._alias_attr_value()
        self._alias_busy.discard(key)
        self.pos = saved
        self._aliases[key] = value
        return value

    def _parse_resources(self) -> None:
        self.expect("{-#")
        while not self.accept("#-}"):
            section = self.parse_bare_id("resource section")
            self.expect(":")
            self.expect("{")
            while not self.accept("}"):
                dialect = self.parse_bare_id("dialect name")
                self.expect(":")
                self.expect("{")
                entries = self.resources.setdefault(dialect, {}) if section == "dialect_resources" else {}
                while not self.accept("}"):
                    self.ws()
                    key = self.parse_string() if self.src.startswith('"', self.pos) else self.parse_bare_id()
                    self.expect(":")
                    self.ws()
                    if self.src.startswith('"', self.pos):
                        entries[key] = self.parse_string()
                    else:
                        entries[key] = self.parse_bare_id()
                    self.accept(",")
                self.accept(",")
            self.accept(",")

    # Operations ---------------------------------------------------------------------------
    def parse_operation(self, block: Block) -> Operation:
        src = self.src
        start = self.ws()
        m = _FAST_OP.match(src, start)
        if m is not None:
            op = self._parse_fast(m, block)
            if op is not None:
                return op
        result_defs: list[tuple[str, int, int]] = []
        if src.startswith("%", start):
            while True:
                self.ws()
                m = _VALUE_DEF.match(src, self.pos)
                if not m:
                    raise self.error("expected SSA value name")
                result_defs.append((m.group(1), _count(m.group(2)) if m.group(2) else 1, self.pos))
                self.pos = m.end()
                if not self.accept(","):
                    break
            self.expect("=", "after SSA names")
            self.ws()
        op_pos = self.pos
        if src.startswith('"', op_pos):
            op = self._parse_generic(op_pos)
        else:
            op = self._parse_custom(op_pos, result_defs)
        self.ws()
        if src.startswith("loc(", self.pos):
            self.pos += 4
            op.location = self.parse_location_body()
            self.expect(")")
        elif op._location is UNKNOWN_LOC:
            op._location = PendingLocation(self._resolve_loc, op_pos)
        n_named = sum(n for _, n, _ in result_defs)
        if result_defs and n_named != len(op.results):
            raise self.error(f"operation defines {len(op.results)} results but was provided {n_named} to bind",
                             start)
        i = 0
        for name, n, pos in result_defs:
            self._define(name, op.results[i:i + n], pos)  # a tuple slice: the whole is no copy
            i += n
        block.append(op)
        return op

    def _cached_dict(self, text: str, pos: int) -> dict[str, Attribute]:
        d = self._dict_cache.get(text)
        if d is None:
            saved = self.pos
            self.pos = pos
            try:
                d = self._parse_dict_body_as_dict()
                if self.pos != pos + len(text):
                    raise self.error("malformed attribute dictionary", pos)
            finally:  # on an error the slow path parses the op again from where it was
                self.pos = saved
            self._dict_cache[text] = d
        return d

    def _parse_fast(self, m: re.Match, block: Block) -> Operation | None:
        """The common case of `_parse_generic` in one regex match; None falls back."""
        res_name, res_count, name, operand_text, props_text, attrs_text, sig_text = m.groups()
        cls = _OP_CLASSES.get(name)
        if cls is None and (not self.allow_unregistered or "\\" in name):
            if "\\" in name:
                return None
            self._lookup_class(name, m.start(3) - 1)
        sig = _SIG_CACHE.get(sig_text)
        try:
            if sig is None:
                saved = self.pos
                self.pos = m.start(7)
                try:
                    sig = self.parse_signature()
                finally:
                    self.pos = saved
            cache = self._dict_cache
            if props_text is not None:
                props = cache.get(props_text)
                props = dict(props if props is not None else self._cached_dict(props_text, m.start(5)))
            else:
                props = None
            if attrs_text is not None:
                attrs = cache.get(attrs_text)
                attrs = dict(attrs if attrs is not None else self._cached_dict(attrs_text, m.start(6)))
            else:
                attrs = {}
        except ParseError:
            return None
        ins, outs = sig
        operands: list[Value] = []
        if operand_text:
            tokens = operand_text.split(", ")
            if len(tokens) != len(ins):
                if len(tokens) != operand_text.count(",") + 1:
                    return None
                raise self.error(f"expected {len(tokens)} operand types but had {len(ins)}", m.start(7))
            values = self.scope.values
            for tok, t in zip(tokens, ins):
                # `%name` whose single-result definition is in this scope: one dict lookup.
                group = values.get(tok[1:])
                if group is not None and len(group) == 1 and group[0].type is t and tok[0] == "%":
                    operands.append(group[0])
                    continue
                r = _VALUE_USE.fullmatch(tok)
                if r is None:
                    if not operands:
                        return None
                    self._bad_operand(m, tok)
                vname, num = r.groups()
                pos = m.start(4) + operand_text.find(tok)
                operands.append(self.resolve_operand((vname, _count(num) if num else 0, pos), t))
        elif ins:
            raise self.error(f"expected 0 operand types but had {len(ins)}", m.start(7))
        props = _inherent_properties(cls, props, attrs)
        op: Operation
        if cls is not None:
            op = cls.__new__(cls)
            Operation.__init__(op, name, operands, outs, props, attrs)
        else:
            op = Operation(name, operands, outs, props, attrs)
        end = m.end()
        src = self.src
        if src.startswith(" loc(", end):
            self.pos = end + 5
            op._location = self.parse_location_body()
            self.expect(")")
        else:
            self.pos = end
            if not src.startswith("\n", end) and src.startswith("loc(", self.ws()):
                self.pos += 4
                op._location = self.parse_location_body()
                self.expect(")")
            else:
                op._location = PendingLocation(self._resolve_loc, m.start(3) - 1)
        if res_name is not None:
            n = _count(res_count) if res_count else 1
            if n != len(op.results):
                raise self.error(f"operation defines {len(op.results)} results but was provided {n} to bind",
                                 m.start(1) - 1)
            self._define(res_name, op.results, m.start(1) - 1)
        block.append(op)
        return op

    def _bad_operand(self, m: re.Match, tok: str) -> NoReturn:
        raise self.error("expected SSA operand", m.start(4) + m.group(4).find(tok))

    def _lookup_class(self, name: str, pos: int) -> type[OpBase] | None:
        cls = lookup_op(name)
        if cls is None and not self.allow_unregistered:
            dialect = lookup_dialect(name.split(".", 1)[0]) if "." in name else None
            if dialect is None or not dialect.allow_unknown_ops:
                if dialect is not None:
                    raise self.error(f"unregistered operation '{name}' found in dialect ('{dialect.name}') that "
                                     "does not allow unknown operations", pos)
                raise self.error(f"operation being parsed with an unregistered dialect ('{name}'). If this is "
                                 "intended, please use --allow-unregistered-dialect", pos)
        return cls

    def _parse_generic(self, op_pos: int) -> Operation:
        src = self.src
        m = _STRING.match(src, op_pos)
        if not m:
            raise self.error("expected operation name in quotes")
        name = unescape(m.group(1))
        self.pos = m.end()
        cls = self._lookup_class(name, op_pos)
        self.expect("(")
        operand_refs = self.parse_list(")", self.parse_operand_ref, "operand list")
        successors = self.parse_list("]", self.parse_successor, "successor list") if self.accept("[") else []
        props: dict[str, Attribute] | None = None
        if self.peek("<"):
            self.pos += 1
            props = self._parse_dict_body_as_dict()
            self.expect(">", "to close properties")
        regions: list[Region] = []
        isolated = cls is not None and _isolated(cls)
        if self.peek("("):
            self.pos += 1
            regions = self.parse_list(")", lambda: self.parse_region(isolated=isolated), "region list")
        attrs: dict[str, Attribute] = {}
        if self.peek("{"):
            attrs = self._parse_dict_body_as_dict()
        self.expect(":", "followed by operation type")
        sig_pos = self.ws()
        ins, outs = self.parse_signature()
        if len(ins) != len(operand_refs):
            raise self.error(f"expected {len(operand_refs)} operand types but had {len(ins)}", sig_pos)
        operands = [self.resolve_operand(ref, t) for ref, t in zip(operand_refs, ins)]
        props = _inherent_properties(cls, props, attrs)
        return Operation.create(name, operands, outs, props, attrs, regions, successors)

    def _parse_custom(self, op_pos: int, result_defs: list) -> Operation:
        src = self.src
        m = _BARE_ID.match(src, op_pos)
        if not m:
            raise self.error("expected operation name")
        name = m.group()
        cls = lookup_op(name)
        if cls is None and "." not in name:
            for d in [*self.default_dialects[-1:], "builtin"]:
                cls = lookup_op(f"{d}.{name}")
                if cls is not None:
                    break
        if cls is None or cls.parse_custom is None:
            if cls is None:  # as MLIR: unknown ops can only be written in the generic form
                raise self.error(f"custom op '{name}' is unknown", op_pos)
            raise self.error(f"custom op '{name}' has no custom assembly form; use the generic form", op_pos)
        self.pos = m.end()
        n_results = sum(n for _, n, _ in result_defs)
        # Within a custom op's regions no dialect prefix may be left out unless the op names a
        # default dialect (func.func pushes "func" for its body), as in MLIR's parser.
        self.default_dialects.append("")
        try:
            return cls.parse_custom(self, n_results)
        finally:
            self.default_dialects.pop()

    # Values -------------------------------------------------------------------------------
    def parse_operand_ref(self) -> tuple[str, int, int]:
        self.ws()
        m = _VALUE_USE.match(self.src, self.pos)
        if not m:
            raise self.error("expected SSA operand")
        self.pos = m.end()
        return m.group(1), _count(m.group(2)) if m.group(2) else 0, m.start()

    def resolve_operand(self, ref: tuple[str, int, int], type: Type) -> Value:
        name, num, pos = ref
        scope = self.scope
        s: _Scope | None = scope
        while s is not None:
            group = s.values.get(name)
            if group is not None:
                if num >= len(group):
                    raise self.error(f"reference to invalid result number #{num} of '%{name}'", pos)
                v = group[num]
                if v.type is not type:
                    raise self.error(f"use of value '%{name}' expects different type than prior uses: '{type}' vs "
                                     f"'{v.type}'", pos)
                return v
            if s.isolated:
                break
            s = s.parent
        # Forward reference, resolved when the definition appears.
        refs = scope.isolated_scope.forward.setdefault(name, {})
        fwd = refs.get(num)
        if fwd is None:
            fwd = refs[num] = _Forward(type)
            fwd.pos = pos
        elif fwd.type is not type:
            raise self.error(f"use of value '%{name}' expects different type than prior uses: '{type}' vs "
                             f"'{fwd.type}'", pos)
        return fwd

    def _define(self, name: str, values: Sequence[Value], pos: int) -> None:
        scope = self.scope
        if scope.isolated and not scope.forward and name not in scope.values:
            scope.values[name] = values  # the common case: no shadowing, no pending forward uses
            return
        s: _Scope | None = scope
        while s is not None:
            if name in s.values:
                raise self.error(f"redefinition of SSA value '%{name}'", pos)
            if s.isolated:
                break
            s = s.parent
        scope.values[name] = values
        fwds = scope.isolated_scope.forward.pop(name, None)
        if fwds:
            for i, f in sorted(fwds.items()):
                if i >= len(values):
                    raise self.error(f"reference to invalid result number #{i} of '%{name}'", f.pos)
                if f.type is not values[i].type:
                    raise self.error(f"definition of SSA value '%{name}#{i}' has type '{values[i].type}' but a prior "
                                     f"use expects '{f.type}'", pos)
                f.replace_all_uses_with(values[i])

    def _finish_scope(self, scope: _Scope) -> None:
        if scope.isolated:
            for name, refs in scope.forward.items():
                for f in refs.values():
                    raise self.error(f"use of undeclared SSA value name '%{name}'", f.pos)
        for name, pos in scope.block_forward.items():
            if name not in scope.defined_blocks:
                raise self.error(f"reference to an undefined block '^{name}'", pos)

    # Regions and blocks -------------------------------------------------------------------
    def push_scope(self, isolated: bool) -> _Scope:
        self.scope = _Scope(self.scope, isolated)
        return self.scope

    def pop_scope(self) -> None:
        scope = self.scope
        self._finish_scope(scope)
        assert scope.parent is not None, "pop_scope without push_scope"
        self.scope = scope.parent

    def parse_region(self, isolated: bool = False, entry_args: list[tuple[tuple[str, int, int], Type, Location]]
                     | None = None) -> Region:
        """`{ blocks }`. `entry_args` come from a custom form that names them outside (func.func)."""
        self.expect("{", "to begin a region")
        region = Region()
        self.push_scope(isolated)
        src = self.src
        if entry_args is not None:
            block = region.add_block(Block())
            for ref, t, loc in entry_args:
                arg = block.add_argument(t, loc)
                self._define(ref[0], [arg], ref[2])
            self.ws()
            if not src.startswith("^", self.pos):
                self._parse_block_ops(block)
        if self.peek("}"):
            self.pos += 1
            self.pop_scope()
            return region
        self.ws()
        if entry_args is None and not src.startswith("^", self.pos):
            block = region.add_block(Block())
            self._parse_block_ops(block)
        while self.peek("^"):
            self._parse_labeled_block(region)
        self.expect("}", "to end a region")
        self.pop_scope()
        return region

    def _parse_block_ops(self, block: Block) -> None:
        src = self.src
        ws = _match_ws
        fast = _FAST_OP_AFTER_WS.match
        parse_fast = self._parse_fast
        while True:
            m = fast(src, self.pos)
            if m is not None and parse_fast(m, block) is not None:
                continue
            pos = self.pos = ws(src, self.pos).end()
            c = src[pos:pos + 1]
            if c == "}" or c == "^" or c == "":
                return
            self.parse_operation(block)

    def _block_for(self, name: str, pos: int, defining: bool) -> Block:
        scope = self.scope
        block = scope.blocks.get(name)
        if block is None:
            block = scope.blocks[name] = Block()
        if defining:
            if name in scope.defined_blocks:
                raise self.error(f"redefinition of block '^{name}'", pos)
            scope.defined_blocks.add(name)
        else:
            scope.block_forward.setdefault(name, pos)
        return block

    def _parse_labeled_block(self, region: Region) -> None:
        self.ws()
        m = _CARET_ID.match(self.src, self.pos)
        if not m:
            raise self.error("expected block name")
        self.pos = m.end()
        block = self._block_for(m.group(1), m.start(), True)
        if block.parent is not None:
            raise self.error(f"redefinition of block '^{m.group(1)}'", m.start())
        region.add_block(block)
        if self.accept("("):
            if not self.accept(")"):
                while True:
                    self.ws()
                    vm = _VALUE_DEF.match(self.src, self.pos)
                    if not vm:
                        raise self.error("expected SSA value name for block argument")
                    arg_pos = self.pos
                    self.pos = vm.end()
                    self.expect(":", "and type for block argument")
                    t = self.parse_type()
                    loc = self.parse_optional_trailing_loc() or self.loc_at(arg_pos)
                    arg = block.add_argument(t, loc)
                    self._define(vm.group(1), [arg], arg_pos)
                    if self.accept(")"):
                        break
                    self.expect(",", "or ')' in block argument list")
        self.expect(":", "after block name")
        self._parse_block_ops(block)

    def parse_successor(self) -> Block:
        self.ws()
        m = _CARET_ID.match(self.src, self.pos)
        if not m:
            raise self.error("expected block name")
        self.pos = m.end()
        return self._block_for(m.group(1), m.start(), False)

    def parse_optional_trailing_loc(self) -> Location | None:
        self.ws()
        if self.src.startswith("loc(", self.pos):
            self.pos += 4
            loc = self.parse_location_body()
            self.expect(")")
            return loc
        return None

    # Types --------------------------------------------------------------------------------
    def parse_type(self) -> Type:
        src = self.src
        pos = self.ws()
        m = _SIMPLE_TYPE.match(src, pos)
        if m:
            t = _simple_type(m.group())
            if t is not None:  # else not a type (`f8E9Z`): the slow path reports it
                self.pos = m.end()
                return t
        m = _SHAPED_FAST.match(src, pos)
        if m:
            text = m.group()
            t = _TYPE_CACHE.get(text)
            if t is not None:
                self.pos = m.end()
                return t
            t = self._parse_type_slow()
            if self.pos == m.end():
                _TYPE_CACHE[text] = t
            return t
        return self._parse_type_slow()

    def _parse_type_slow(self) -> Type:
        src = self.src
        pos = self.ws()
        c = src[pos:pos + 1]
        if c == "(":
            ins, outs = self.parse_signature()
            return FunctionType(ins, outs)
        if c == "!":
            return self._parse_dialect_type()
        m = _BARE_ID.match(src, pos)
        if not m:
            raise self.error("expected type")
        kw = m.group()
        self.pos = m.end()
        t = _simple_type(kw)
        if t is not None:
            return t
        if re.fullmatch(r"[su]?i[0-9]+", kw):
            raise self.error(f"integer bitwidth is limited to {MAX_INTEGER_WIDTH} bits", pos)
        if kw in ("tensor", "memref", "vector"):
            return self._parse_shaped(kw, pos)
        if kw == "complex":
            self.expect("<")
            et = self.parse_type()
            self.expect(">")
            return ComplexType(et)
        if kw == "tuple":
            self.expect("<")
            return TupleType(tuple(self.parse_list(">", self.parse_type, "tuple type")))
        if kw == "opaque":
            self.expect("<")
            d = self.parse_string()
            self.expect(",")
            data = self.parse_string()
            self.expect(">")
            return OpaqueType(d, data)
        raise self.error(f"unknown type '{kw}'", pos)

    def _parse_shaped(self, kw: str, start: int) -> Type:
        self.expect("<")
        src = self.src
        self.ws()
        if src.startswith("*", self.pos):
            if kw == "vector":
                raise self.error("vector types must be ranked")
            self.pos += 1
            self.expect("x")
            et = self.parse_type()
            ms = None
            if kw == "memref" and self.accept(","):
                ms = self.parse_attribute()
            self.expect(">")
            return UnrankedTensorType(et) if kw == "tensor" else UnrankedMemRefType(et, ms)
        shape: list[int] = []
        scalable: list[bool] = []
        while True:
            m = _DIM.match(src, self.pos)
            if not m:
                break
            d = m.group(1)
            if d == "?":
                if kw == "vector":
                    raise self.error("vector types must have static shape")
                shape.append(DYNAMIC)
                scalable.append(False)
            elif d.startswith("["):
                if kw != "vector":
                    raise self.error("scalable dimensions are only allowed in vectors")
                if _dim_too_large(d[1:-1]):
                    raise self.error("invalid dimension")
                shape.append(int(d[1:-1]))
                scalable.append(True)
            else:
                if _dim_too_large(d):
                    raise self.error("invalid dimension")
                shape.append(int(d))
                scalable.append(False)
            self.pos = m.end()
        et = self.parse_type()
        if kw == "tensor":
            enc = self.parse_attribute() if self.accept(",") else None
            self.expect(">")
            return RankedTensorType(tuple(shape), et, enc)
        if kw == "vector":
            self.expect(">")
            return VectorType(tuple(shape), et, tuple(scalable))
        layout = ms = None
        if self.accept(","):
            a = self.parse_attribute()
            if self.accept(","):
                layout, ms = a, self.parse_attribute()
            elif isinstance(a, (OpaqueBuiltinAttr, DialectAttr)) and (
                    isinstance(a, DialectAttr) or a.text.startswith(("affine_map", "strided"))):
                layout = a
            else:
                ms = a
        self.expect(">")
        return MemRefType(tuple(shape), et, layout, ms)

    def _parse_dialect_type(self) -> Type:
        start = self.pos
        self.pos += 1
        m = _BARE_ID.match(self.src, self.pos)
        if not m:
            raise self.error("expected dialect type name or alias")
        self.pos = m.end()
        body_start = self.pos
        if self.src.startswith("<", self.pos):
            self._skip_balanced()
        text = self.src[start:self.pos]
        name = m.group()
        if "." not in name and body_start == self.pos:
            return self._resolve_alias("!", name, start)
        d = self._dialect_of(name, start, "!")
        if d is not None and d.type_parser is not None:
            t = self._dialect_hook(d.type_parser, text, start)
            if t is not None:
                return t
        return DialectType(text)

    def _dialect_hook(self, hook: Callable[[str], Any], text: str, start: int) -> Any:
        """A dialect's parser of its own types or attributes; the ValueError with which it rejects
        a body becomes a ParseError located where the dialect says (`offset` into the text), else
        after the text."""
        try:
            return hook(text)
        except ValueError as e:
            offset = getattr(e, "offset", None)
            raise self.error(str(e), start + offset if isinstance(offset, int) else None) from None

    def _dialect_of(self, name: str, start: int, kind: str) -> Any:
        """The registered dialect of a `!dialect.x` type or `#dialect.x` attribute; an unregistered
        one is an error unless unregistered dialects are allowed (MLIR's OpaqueType/OpaqueAttr)."""
        namespace, _, rest = name.partition(".")
        d = lookup_dialect(namespace)
        if d is None and not self.allow_unregistered:
            body = rest + self.src[start + 1 + len(name):self.pos]
            what = (f'`!"{namespace}"<"{body}">` type' if kind == "!" else
                    f"#\"{namespace}\"<\"{body}\"> : 'none' attribute")
            raise self.error(f"{what} created with unregistered dialect. If this is intended, please call "
                             "allowUnregisteredDialects() on the MLIRContext, or use -allow-unregistered-dialect "
                             "with the MLIR opt tool used", start + 1 + len(namespace) + 1)
        return d

    def _skip_balanced(self) -> None:
        """Skip a `<...>` body in which (), [], {} and <> nest and strings are opaque."""
        src = self.src
        stack = []
        pos = self.pos
        closers = {"<": ">", "(": ")", "[": "]", "{": "}"}
        while pos < len(src):
            c = src[pos]
            if c == '"':
                m = _STRING.match(src, pos)
                if not m:
                    raise self.error("unterminated string", pos)
                pos = m.end()
                continue
            if c in closers:
                if c == "<" and src.startswith("=", pos + 1):
                    pos += 2  # `<=` in an affine set
                    continue
                stack.append(closers[c])
            elif c in ">)]}":
                if c == ">" and (src[pos - 1] == "-" or src.startswith("=", pos + 1)):
                    pass  # an arrow (`->`) or `>=`, not a bracket
                elif not stack or stack[-1] != c:
                    raise self.error(f"unbalanced '{c}' in dialect body", pos)
                else:
                    stack.pop()
                    if not stack:
                        self.pos = pos + 1
                        return
            pos += 1
        raise self.error("unbalanced dialect body", self.pos)

    def parse_signature(self) -> tuple[tuple[Type, ...], tuple[Type, ...]]:
        src = self.src
        pos = self.ws()
        m = _SIG_FAST.match(src, pos)
        if m:
            text = m.group()
            sig = _SIG_CACHE.get(text)
            if sig is not None:
                self.pos = m.end()
                return sig
        self.expect("(", "to begin function type")
        ins = self._parse_type_list_rest()
        self.expect("->", "in function type")
        if self.peek("("):
            self.pos += 1
            outs = self._parse_type_list_rest()
        else:
            outs = (self.parse_type(),)
        sig = (ins, outs)
        if m and self.pos == m.end():
            _SIG_CACHE[m.group()] = sig
        return sig

    def _parse_type_list_rest(self) -> tuple[Type, ...]:
        types: list[Type] = []
        if self.accept(")"):
            return ()
        while True:
            types.append(self.parse_type())
            if self.accept(")"):
                return tuple(types)
            self.expect(",", "or ')' in type list")

    # Attributes ---------------------------------------------------------------------------
    def _parse_dict_body_as_dict(self) -> dict[str, Attribute]:
        self.expect("{")
        out: dict[str, Attribute] = {}
        if self.accept("}"):
            return out
        src = self.src
        while True:
            pos = self.ws()
            if src.startswith('"', pos):
                key = self.parse_string()
            else:
                m = _BARE_ID.match(src, pos)
                if not m:
                    raise self.error("expected attribute name")
                key = m.group()
                self.pos = m.end()
            if key in out:
                raise self.error(f"duplicate key '{key}' in dictionary attribute", pos)
            m = _ENTRY_VALUE.match(src, self.pos)
            if m is not None:
                # ` = value` with a short, self-contained value: parse each distinct text once.
                text = m.group(1)
                attr = self._value_cache.get(text)
                if attr is None:
                    self.pos = m.start(1)
                    attr = self.parse_attribute()
                    if self.pos != m.end(1):
                        raise self.error("malformed attribute value", m.start(1))
                    self._value_cache[text] = attr
                out[key] = attr
                self.pos = m.end()
                if m.group(3) is not None:
                    return out
                continue
            if self.accept("="):
                out[key] = self.parse_attribute()
            else:
                out[key] = UNIT
            if self.accept("}"):
                return out
            self.expect(",", "or '}' in attribute dictionary")

    def parse_optional_attr_dict(self) -> dict[str, Attribute]:
        return self._parse_dict_body_as_dict() if self.peek("{") else {}

    def parse_attribute(self, type: Type | None = None) -> Attribute:
        src = self.src
        pos = self.ws()
        c = src[pos:pos + 1]
        if c == "[":
            self.pos += 1
            return ArrayAttr(tuple(self.parse_list("]", self.parse_attribute, "array attribute")))
        if c == "{":
            return DictionaryAttr.get(self._parse_dict_body_as_dict())
        if c == '"':
            s = self.parse_string()
            if self.accept(":"):
                return StringAttr(s, self.parse_type())
            return StringAttr(s, None)
        if c == "@":
            return self._parse_symbol_ref()
        if c == "#":
            return self._parse_hash_attr()
        if c == "-" or c == "+" or c.isdigit():
            return self._parse_number_attr(type)
        m = _BARE_ID.match(src, pos)
        if m:
            kw = m.group()
            handler = _KEYWORD_ATTRS.get(kw)
            if handler is not None:
                self.pos = m.end()
                return handler(self, pos)
        try:
            return TypeAttr(self.parse_type())
        except ParseError:
            if c in ("!", "(") or (m is not None and m.group() in ("tensor", "memref", "vector", "complex", "tuple")):
                raise  # a type, malformed inside: its own error says where
            raise self.error("expected attribute value", pos) from None

    def _parse_symbol_ref(self) -> SymbolRefAttr:
        parts = [self.parse_symbol_name()]
        while self.src.startswith("::", self.pos):
            self.pos += 2
            parts.append(self.parse_symbol_name())
        return SymbolRefAttr(parts[0], tuple(parts[1:]))

    def parse_symbol_name(self) -> str:
        self.ws()
        if not self.src.startswith("@", self.pos):
            raise self.error("expected symbol reference")
        self.pos += 1
        if self.src.startswith('"', self.pos):
            return self.parse_string()
        m = re.compile(_SUFFIX_ID).match(self.src, self.pos)
        if not m:
            raise self.error("expected symbol name")
        self.pos = m.end()
        return m.group()

    def _parse_hash_attr(self) -> Attribute:
        start = self.pos
        self.pos += 1
        m = _BARE_ID.match(self.src, self.pos)
        if not m:
            raise self.error("expected attribute name or alias")
        self.pos = m.end()
        name = m.group()
        body_start = self.pos
        if self.src.startswith("<", self.pos):
            self._skip_balanced()
        if "." not in name and body_start == self.pos:
            return self._resolve_alias("#", name, start)
        text = self.src[start:self.pos]
        if name == "opaque" and body_start != self.pos:  # the builtin OpaqueAttr is typed
            self.expect(":")
            return OpaqueBuiltinAttr(text, self.parse_type())
        d = self._dialect_of(name, start, "#")
        if d is not None and d.attribute_parser is not None:
            a = self._dialect_hook(d.attribute_parser, text, start)
            if a is not None:
                return a
        return DialectAttr(text)

    def _parse_number_attr(self, type: Type | None) -> Attribute:
        pos = self.ws()
        m = _NUMBER.match(self.src, pos)
        if not m:
            raise self.error("expected number")
        self.pos = m.end()
        text = m.group()
        if self.accept(":"):
            type = self.parse_type()
        is_float = m.group(1) is not None
        is_hex = "0x" in text
        if type is None:
            type = FloatType("f64") if is_float else i64
        if isinstance(type, FloatType):
            if is_hex:
                return FloatAttr(type, self._hex_float_bits(text, type, pos))
            if not is_float:
                raise self.error("unexpected decimal integer literal for a floating point value; add a "
                                 "trailing dot to make the literal a float", pos)
            return FloatAttr(type, value_to_bits(type.name, text))
        if is_float:
            raise self.error(f"floating point value not valid for specified type '{type}'", pos)
        if not isinstance(type, (IntegerType, IndexType)):
            raise self.error(f"integer literal not valid for specified type '{type}'", pos)
        width = 64 if isinstance(type, IndexType) else type.width
        try:
            value = self.int_literal(text, width, pos)
        except ParseError:
            raise self.error("integer constant out of range for attribute", pos) from None
        negative = text.lstrip().startswith("-")
        if negative and isinstance(type, IntegerType) and type.is_unsigned:
            raise self.error("negative integer literal not valid for unsigned integer type", pos)
        if not integer_fits(abs(value), negative, type):
            raise self.error("integer constant out of range for attribute", pos)
        return IntegerAttr(type, type.normalize(value))

    def _hex_float_bits(self, text: str, type: FloatType, pos: int) -> int:
        """The bits a hex literal gives a float type, checked as MLIR checks them."""
        if text.startswith("-"):
            raise self.error("hexadecimal float literal should not have a leading minus", pos)
        bits = int(text.lstrip("+"), 16)
        if bits >> type.width:
            raise self.error("hexadecimal float constant out of range for type", pos)
        return bits

    def _parse_dense(self, start: int) -> Attribute:
        self.expect("<")
        src = self.src
        self.ws()
        literal: Any = None
        hex_raw: bytes | None = None
        empty = False
        if self.accept(">"):
            empty = True
        else:
            lit_pos = self.ws()
            if src.startswith('"0x', lit_pos):
                s = self.parse_string()
                try:
                    hex_raw = bytes.fromhex(s[2:])
                except ValueError:
                    literal = s
            else:
                literal = self._parse_dense_literal()
            self.expect(">")
        self.expect(":", "after dense literal")
        type_pos = self.ws()
        t = self.parse_type()
        if not isinstance(t, ShapedType) or not t.has_static_shape:
            raise self.error("dense elements require a static shaped type", type_pos)
        et = t.element_type
        if hex_raw is not None and not isinstance(et, (DialectType, OpaqueType)):
            size = _storage_bytes(et)
            if len(hex_raw) != size * t.num_elements and len(hex_raw) != size:
                raise self.error(f"elements hex data size is invalid for provided type: got {len(hex_raw)} bytes",
                                 start)
            return DenseElementsAttr.from_raw(t, hex_raw)
        if hex_raw is not None:
            literal = _Str(s)
        if empty:
            if t.num_elements != 0:
                raise self.error(f"expected {t.num_elements} elements for type '{t}'", start)
            if isinstance(et, (IntegerType, IndexType, FloatType, ComplexType)):
                return DenseElementsAttr(t, b"", False)
            return DenseStringElementsAttr(t, ())
        flat, shape = _flatten(literal)
        n = t.num_elements
        if shape and tuple(shape) != t.shape:
            raise self.error(f"inferred shape of elements literal ([{', '.join(map(str, shape))}]) does not match "
                             f"type ([{', '.join(map(str, t.shape))}])", start)
        if not isinstance(et, (IntegerType, IndexType, FloatType, ComplexType)):
            if not all(isinstance(x, _Str) for x in flat):
                raise self.error("expected string elements for this element type", start)
            return DenseStringElementsAttr(t, tuple(str(x) for x in flat))
        raw = b"".join(self._dense_element_bytes(x, et, start) for x in flat)
        if not shape and n != 1:
            return DenseElementsAttr(t, raw, True)
        return DenseElementsAttr.from_raw(t, raw)

    def _dense_element_bytes(self, x: Any, et: Type, pos: int) -> bytes:
        size = _storage_bytes(et)
        if isinstance(et, ComplexType):
            if not isinstance(x, tuple):
                raise self.error("expected complex element as (real, imag)", pos)
            return self._dense_element_bytes(x[0], et.element_type, pos) + \
                self._dense_element_bytes(x[1], et.element_type, pos)
        if isinstance(x, tuple) or isinstance(x, _Str):
            raise self.error(f"expected element of type '{et}'", pos)
        if isinstance(et, FloatType):
            if isinstance(x, bool):
                raise self.error("expected float literal", pos)
            if isinstance(x, int) and not isinstance(x, _Hex):
                raise self.error("unexpected decimal integer literal for a floating point value; add a trailing "
                                 "dot to make the literal a float", pos)
            bits = self._hex_float_bits(x.text, et, x.pos) if isinstance(x, _Hex) else value_to_bits(et.name, x)
            return bits.to_bytes(size, "little")
        if isinstance(x, str):
            raise self.error(f"expected integer elements, but parsed floating-point for type '{et}'", pos)
        v = int(x)
        assert isinstance(et, (IntegerType, IndexType))  # _storage_bytes has rejected every other type
        if v < 0 and isinstance(et, IntegerType) and et.is_unsigned:
            raise self.error("expected unsigned integer elements, but parsed negative value", pos)
        if not isinstance(x, bool) and not integer_fits(abs(v), v < 0, et):
            raise self.error("integer constant out of range for type", x.pos if isinstance(x, _Hex) else pos)
        if isinstance(et, IntegerType) and et.width == 1:
            return bytes([v & 1])
        v = et.normalize(v)
        return (v & ((1 << (8 * size)) - 1)).to_bytes(size, "little")

    def _parse_dense_literal(self) -> Any:
        src = self.src
        pos = self.ws()
        c = src[pos:pos + 1]
        if c == "[":
            self.pos += 1
            return self.parse_list("]", self._parse_dense_literal, "dense literal")
        if c == "(":
            self.pos += 1
            re_ = self._parse_dense_literal()
            self.expect(",")
            im = self._parse_dense_literal()
            self.expect(")")
            return (re_, im)
        if c == '"':
            return _Str(self.parse_string())
        if self.accept_keyword("true"):
            return True
        if self.accept_keyword("false"):
            return False
        m = _NUMBER.match(src, pos)
        if not m:
            raise self.error("expected dense element literal")
        self.pos = m.end()
        text = m.group()
        if "0x" in text:
            return _Hex(text, pos)
        if m.group(1) is not None:
            return text  # float text, rounded once the element type is known
        return self.int_literal(text, MAX_INTEGER_WIDTH, pos)

    def _parse_dense_array(self, start: int) -> Attribute:
        self.expect("<")
        type_pos = self.ws()
        et = self.parse_type()
        if not isinstance(et, (IntegerType, IndexType, FloatType)):
            raise self.error(f"expected integer or float type, got: '{et}'", type_pos)
        values: list = []
        if self.accept(":"):
            while True:
                pos = self.ws()
                if isinstance(et, FloatType):
                    m = _NUMBER.match(self.src, pos)
                    if not m:
                        raise self.error("expected float value")
                    self.pos = m.end()
                    t = m.group()
                    values.append(self._hex_float_bits(t, et, pos) if "0x" in t else value_to_bits(et.name, t))
                elif self.accept_keyword("true"):
                    values.append(1 if et is not i1 else 1)
                elif self.accept_keyword("false"):
                    values.append(0)
                else:
                    value = self.parse_int(64 if isinstance(et, IndexType) else et.width)
                    if not integer_fits(abs(value), value < 0, et):
                        raise self.error("integer constant out of range", pos)
                    values.append(et.normalize(value))
                if not self.accept(","):
                    break
        self.expect(">")
        if isinstance(et, IntegerType) and et is i1:
            values = [v & 1 for v in values]
        return DenseArrayAttr(et, tuple(values))

    def _parse_dense_resource(self, start: int) -> Attribute:
        self.expect("<")
        self.ws()
        m = re.compile(r"[A-Za-z0-9_$.-]+").match(self.src, self.pos)
        if not m:
            raise self.error("expected resource handle")
        self.pos = m.end()
        self.expect(">")
        colon_pos = self.ws()
        self.expect(":")
        t = self.parse_type()
        if not isinstance(t, (ShapedType, UnrankedTensorType, UnrankedMemRefType)):
            raise self.error("`dense_resource` expected a shaped type", colon_pos)
        return DenseResourceAttr(m.group(), t)

    def _parse_opaque_builtin(self, start: int) -> Attribute:
        """affine_map / affine_set / strided / sparse / opaque: kept as canonical text."""
        if self.src.startswith("<", self.ws()):
            self._skip_balanced()
        text = self.src[start:self.pos]
        if text.startswith(("sparse", "opaque")):
            self.expect(":")
            return OpaqueBuiltinAttr(text, self.parse_type())
        return OpaqueBuiltinAttr(text, None)

    # Locations ----------------------------------------------------------------------------
    def parse_location_body(self) -> Location:
        src = self.src
        pos = self.ws()
        if src.startswith("?", pos):
            self.pos += 1
            return UNKNOWN_LOC
        if src.startswith('"', pos):
            s = self.parse_string()
            if self.accept(":"):
                line = self.parse_int()
                col = self.parse_int() if self.accept(":") else 0
                if self.accept_keyword("to"):
                    if self.accept(":"):
                        end_line, end_col = line, self.parse_int()
                    else:
                        end_line = self.parse_int()
                        self.expect(":")
                        end_col = self.parse_int()
                    if (end_line, end_col) != (line, col):
                        return FileLineColLoc(s, line, col, end_line, end_col)
                return FileLineColLoc(s, line, col)
            if self.accept("("):
                child = self.parse_location_body()
                self.expect(")")
                return NameLoc(s, child)
            return NameLoc(s, UNKNOWN_LOC)
        if src.startswith("#", pos):
            self.pos += 1
            name = self.parse_bare_id()
            loc = self._resolve_alias("#", name, pos)
            if not isinstance(loc, Location):
                raise self.error(f"expected location, but alias '#{name}' is not one", pos)
            return loc
        kw = self.parse_bare_id("location")
        if kw == "unknown":
            return UNKNOWN_LOC
        if kw == "callsite":
            self.expect("(")
            callee = self.parse_location_body()
            self.expect_keyword("at")
            caller = self.parse_location_body()
            self.expect(")")
            return CallSiteLoc(callee, caller)
        if kw == "fused":
            meta = None
            if self.accept("<"):
                meta = self.parse_attribute()
                self.expect(">")
            self.expect("[")
            return make_fused_loc(self.parse_list("]", self.parse_location_body, "fused location"), meta)
        raise self.error(f"expected location instance, got '{kw}'", pos)


def make_fused_loc(locs: list[Location], metadata: Attribute | None = None) -> Location:
    """FusedLoc::get: inlines nested fused locations with the same metadata, drops unknowns and
    duplicates; with no metadata, collapses to unknown or the single remaining location."""
    flat: list[Location] = []
    for loc in locs:
        if isinstance(loc, FusedLoc) and loc.metadata is metadata:
            subs = loc.locations
        elif isinstance(loc, UnknownLoc):
            continue
        else:
            subs = (loc,)
        for s in subs:
            if s not in flat:
                flat.append(s)
    if not flat:
        return UNKNOWN_LOC if metadata is None else FusedLoc((UNKNOWN_LOC,), metadata)
    if len(flat) == 1 and metadata is None:
        return flat[0]
    return FusedLoc(tuple(flat), metadata)


class _Str(str):
    """A string element of a dense literal (as opposed to float text)."""


class _Hex(int):
    """A hex element of a dense literal (raw bits for float element types), with its text and
    position for the checks that depend on the element type."""

    text: str
    pos: int

    def __new__(cls, text: str, pos: int) -> _Hex:
        self = super().__new__(cls, text, 16)
        self.text, self.pos = text, pos
        return self


def _decimal_int(text: str) -> int:
    """The value of integer literal text (decimal, or hex after `0x`), without Python's limit on
    the digits of a decimal string (callers bound the length): long text converts in chunks."""
    body = text.lstrip("+-")
    if body.startswith("0x"):
        return int(text, 16)
    if len(body) <= 4000:
        return int(text, 10)
    value = 0
    for i in range(0, len(body), 4000):
        chunk = body[i:i + 4000]
        value = value * 10 ** len(chunk) + int(chunk)
    return -value if text.startswith("-") else value


def _flatten(literal: Any) -> tuple[list, list[int]]:
    if not isinstance(literal, list):
        return [literal], []
    if not literal:
        return [], [0]
    parts = [_flatten(x) for x in literal]
    shape0 = parts[0][1]
    flat: list = []
    for f, s in parts:
        if s != shape0:
            raise ValueError("non-rectangular dense literal")
        flat.extend(f)
    return flat, [len(literal), *shape0]


def _kw_true(p: Parser, pos: int) -> Attribute:
    return BoolAttr(True)


def _kw_false(p: Parser, pos: int) -> Attribute:
    return BoolAttr(False)


def _kw_unit(p: Parser, pos: int) -> Attribute:
    return UNIT


def _kw_loc(p: Parser, pos: int) -> Attribute:
    p.expect("(")
    loc = p.parse_location_body()
    p.expect(")")
    return loc


_KEYWORD_ATTRS: dict[str, Callable[[Parser, int], Attribute]] = {
    "true": _kw_true, "false": _kw_false, "unit": _kw_unit, "loc": _kw_loc,
    "dense": Parser._parse_dense, "array": Parser._parse_dense_array, "dense_resource": Parser._parse_dense_resource,
    "affine_map": Parser._parse_opaque_builtin, "affine_set": Parser._parse_opaque_builtin,
    "strided": Parser._parse_opaque_builtin, "sparse": Parser._parse_opaque_builtin,
    "opaque": Parser._parse_opaque_builtin,
}


def _inherent_properties(cls: type[OpBase] | None, props: dict[str, Attribute] | None,
                         attrs: dict[str, Attribute]) -> dict[str, Attribute] | None:
    """Properties of a parsed op. A registered op's inherent attributes written in the attribute
    dictionary move into its properties (as MLIR does); an unregistered op keeps `<{...}>` as
    written, printed back even when empty."""
    d = cls.definition if cls is not None else None
    if d is None:
        return ExplicitProperties(props) if props is not None else None
    props = {} if props is None else props
    inherent = d.prop_names
    for k in [k for k in attrs if k in inherent]:
        props[k] = attrs.pop(k)
    return props


def _isolated(cls: type[OpBase]) -> bool:
    d = cls.definition
    return d is not None and IsolatedFromAbove in d.trait_set


def decode_source(data: bytes, filename: str = "-") -> str:
    """MLIR source bytes as text; bytes that are not UTF-8 are a ParseError located at the first
    one (the column counts bytes, as MLIR's do)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        start = data.rfind(b"\n", 0, e.start) + 1
        end = data.find(b"\n", e.start)
        line = data[start:end if end != -1 else len(data)].decode("utf-8", "replace")
        raise ParseError(f"invalid UTF-8 in input (byte 0x{data[e.start]:02X})", filename,
                         data.count(b"\n", 0, e.start) + 1, e.start - start + 1, line) from None


def parse_wrapped_type(text: str, prefix: str) -> Type | None:
    """The `T` of a dialect type that wraps one type, `<prefix>T>` (`!stack.stack<T>` with prefix
    `!stack.stack<`): what a dialect's type parser needs; None when `text` is not one."""
    if not (text.startswith(prefix) and text.endswith(">")):
        return None
    p = Parser(text[len(prefix):-1])
    inner = p.parse_type()
    p.ws()
    return inner if p.pos == len(p.src) else None


def parse(text: str | bytes, allow_unregistered: bool = False, filename: str = "-", verify: bool = True) -> Operation:
    """Parse MLIR text (or UTF-8 bytes) into a top-level `builtin.module` (added when the text has
    no single module op, as MLIR does). Raises ParseError (located) or VerifyError."""
    import loom.dialects  # noqa: F401  (registers the builtin dialects)
    if isinstance(text, (bytes, bytearray)):
        text = decode_source(bytes(text), filename)
    p = Parser(text, filename, allow_unregistered)
    with paused_gc():
        try:
            module = p.parse_top_level()
        except RecursionError:
            raise p.error("nesting too deep") from None
        except (ValueError, IndexError, OverflowError) as e:
            raise p.error(str(e) if isinstance(e, ValueError) else "unexpected end of input") from None
    if verify:
        module.verify()
    return module
