"""The sdy dialect (Shardy): meshes and shardings as JAX writes them.

    sdy.mesh @mesh = <["x"=2, "y"=2]>
    func.func @main(%arg0: tensor<8x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) ...
    %1 = sdy.sharding_constraint %0 <@mesh, [{}, {"y"}]> : tensor<8x6xf32>

A mesh names its axes and their sizes (`#sdy.mesh<["x"=2, "y"=2]>`, optionally `device_ids=[...]`).
A tensor sharding (`#sdy.sharding<@mesh, [{"x"}, {}], replicated={"y"}>`) lists, per dimension,
the mesh axes it is split over, major to minor (`{}`: not split); a dimension whose sharding
propagation may still extend is open (`{"x", ?}`, `{?}`), and a `p<N>` suffix gives it a
priority. An axis may be a sub-axis (`"x":(1)2`: the first factor of size 2 of axis "x").

The attributes here are the data model the partitioner reads; `parse_attribute` is the dialect's
attribute parser, and every attribute prints back exactly as jaxlib prints it.

The ops print and parse in the custom form JAX's `lowered.as_text()` shows (and in the generic
form): `sdy.mesh`, `sdy.sharding_constraint`, `sdy.reshard`, `sdy.sharding_group`,
`sdy.manual_computation` (what shard_map lowers to: its body sees each operand's local shape, the
global one divided by the manual axes splitting it; see `local_type`) and `sdy.return`. Each has a
`build` classmethod. Their verifiers check what Shardy's do: a sharding names a mesh of the module
(or is inline), has one dimension sharding per dimension, uses each axis (or sub-axis) of that
mesh at most once and none a surrounding manual computation is manual over; a dimension need not
divide evenly (XLA pads); a mesh has positive axis sizes, unique names and a permutation for
device ids; a manual computation has one in/out sharding per operand/result on one mesh, known
manual axes first in each dimension, and local types that divide. Shardings in a function's
`arg_attrs` / `res_attrs` (and `#sdy.sharding_per_value` on ops) are not seen by `verify()`:
`verify_shardings(module)` checks them; `func_shardings` / `set_func_shardings` read and write
them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from loom.ir.attributes import (
    UNKNOWN_LOC,
    ArrayAttr,
    Attribute,
    DictionaryAttr,
    IntegerAttr,
    Location,
    StringAttr,
    keyword_or_string,
)
from loom.ir.builder import Builder, InsertionPoint
from loom.ir.core import Block, Operation, Region, Value
from loom.ir.diagnostics import VerifyError
from loom.ir.opdef import (
    AttrSyntax,
    Constraint,
    Dialect,
    HasParent,
    IsolatedFromAbove,
    OpBase,
    Pure,
    SameOperandsAndResultType,
    SingleBlock,
    Symbol,
    Terminator,
    prop,
    region_def,
    register_dialect,
    result_def,
    var_operand,
    var_result,
)
from loom.ir.opdef import operand as operand_def
from loom.ir.printer import signature_text
from loom.ir.types import DYNAMIC, RankedTensorType, ShapedType, Type, UnrankedTensorType, i64

AnyRankedTensor = Constraint(lambda t: isinstance(t, RankedTensorType), "ranked tensor")


class AxisRef(NamedTuple):
    """A mesh axis, or the sub-axis `"name":(pre_size)size` of it (pre_size: product of the
    factors before it)."""

    name: str
    pre_size: int | None = None
    size: int | None = None

    def __str__(self) -> str:
        if self.size is None:
            return f'"{self.name}"'
        return f'"{self.name}":({self.pre_size}){self.size}'


class DimSharding(NamedTuple):
    """The sharding of one tensor dimension: the axes it is split over (major to minor), whether
    it is closed (propagation may not add axes), and its priority (None: none given)."""

    axes: tuple[AxisRef, ...] = ()
    closed: bool = True
    priority: int | None = None

    def __str__(self) -> str:
        items = [str(a) for a in self.axes]
        if not self.closed:
            items.append("?")
        text = "{" + ", ".join(items) + "}"
        return text if self.priority is None else f"{text}p{self.priority}"


def _axes_text(axes: Sequence[AxisRef]) -> str:
    return "{" + ", ".join(str(a) for a in axes) + "}"


class MeshAttr(Attribute):
    """`#sdy.mesh<["x"=2, "y"=4]>`: named axes with their sizes, and optionally the device ids
    in mesh order (`device_ids=[...]`; none: iota)."""

    __slots__ = ("axes", "device_ids")
    _canonical_args = True

    def __init__(self, axes: tuple[tuple[str, int], ...], device_ids: tuple[int, ...] = ()) -> None:
        self.axes = tuple((str(n), int(s)) for n, s in axes)
        self.device_ids = tuple(int(d) for d in device_ids)

    @property
    def shape(self) -> dict[str, int]:
        return dict(self.axes)

    def body(self) -> str:
        text = "[" + ", ".join(f'"{n}"={s}' for n, s in self.axes) + "]"
        if self.device_ids:
            text += ", device_ids=[" + ", ".join(map(str, self.device_ids)) + "]"
        return text

    def _render(self, elide_type: bool) -> str:
        return f"#sdy.mesh<{self.body()}>"


class TensorShardingAttr(Attribute):
    """`#sdy.sharding<@mesh, [{"x"}, {}]>`: how a tensor is split over a mesh, one `DimSharding`
    per dimension; `mesh` is the name of an `sdy.mesh` symbol or an inline `MeshAttr`;
    `replicated` / `unreduced` list axes explicitly replicated / holding partial sums."""

    __slots__ = ("mesh", "dims", "replicated", "unreduced")
    _canonical_args = True

    def __init__(self, mesh: str | MeshAttr, dims: tuple[DimSharding, ...],
                 replicated: tuple[AxisRef, ...] = (), unreduced: tuple[AxisRef, ...] = ()) -> None:
        self.mesh = mesh
        self.dims = tuple(dims)
        self.replicated = tuple(replicated)
        self.unreduced = tuple(unreduced)

    @classmethod
    def get(cls, mesh: str | MeshAttr, dims: Sequence[Sequence[str]], replicated: Sequence[str] = ()) -> \
            TensorShardingAttr:
        """From axis names per dimension: `get("mesh", [["x"], []])` is `<@mesh, [{"x"}, {}]>`."""
        return cls(mesh, tuple(DimSharding(tuple(AxisRef(a) for a in d)) for d in dims),
                   tuple(AxisRef(a) for a in replicated))

    @property
    def mesh_name(self) -> str | None:
        return self.mesh if isinstance(self.mesh, str) else None

    def dim_axes(self) -> tuple[tuple[str, ...], ...]:
        """The axis names splitting each dimension (sub-axes by their axis' name)."""
        return tuple(tuple(a.name for a in d.axes) for d in self.dims)

    def body(self) -> str:
        mesh = f"@{keyword_or_string(self.mesh)}" if isinstance(self.mesh, str) else f"mesh<{self.mesh.body()}>"
        text = f"{mesh}, [" + ", ".join(str(d) for d in self.dims) + "]"
        if self.replicated:
            text += ", replicated=" + _axes_text(self.replicated)
        if self.unreduced:
            text += ", unreduced=" + _axes_text(self.unreduced)
        return text

    def _render(self, elide_type: bool) -> str:
        return f"#sdy.sharding<{self.body()}>"


class TensorShardingPerValueAttr(Attribute):
    """`#sdy.sharding_per_value<[<@mesh, [...]>, ...]>`: one sharding per result (or operand)."""

    __slots__ = ("shardings",)
    _canonical_args = True

    def __init__(self, shardings: tuple[TensorShardingAttr, ...]) -> None:
        self.shardings = tuple(shardings)

    def body(self) -> str:
        return "[" + ", ".join(f"<{s.body()}>" for s in self.shardings) + "]"

    def _render(self, elide_type: bool) -> str:
        return f"#sdy.sharding_per_value<{self.body()}>"


class ManualAxesAttr(Attribute):
    """`#sdy<manual_axes{"x", "y"}>`: the mesh axes a manual computation (shard_map) is manual over."""

    __slots__ = ("axes",)
    _canonical_args = True

    def __init__(self, axes: tuple[str, ...]) -> None:
        self.axes = tuple(axes)

    def body(self) -> str:
        return "{" + ", ".join(f'"{a}"' for a in self.axes) + "}"

    def _render(self, elide_type: bool) -> str:
        return f"#sdy<manual_axes{self.body()}>"


# Parsing ------------------------------------------------------------------------------------

class SdySyntaxError(ValueError):
    """Malformed sdy attribute text; `offset` is where, in the text read."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.offset = offset


class _Reader:
    """A small recursive-descent reader over attribute text from `pos`; raises SdySyntaxError."""

    _NUMBER = re.compile(r"-?\d+")
    _STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
    _SYMBOL = re.compile(r"[A-Za-z_][\w$.-]*")

    def __init__(self, text: str, pos: int = 0) -> None:
        self.text = text
        self.pos = pos

    def fail(self, message: str) -> SdySyntaxError:
        return SdySyntaxError(message, self.pos)

    def ws(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self, s: str) -> bool:
        self.ws()
        return self.text.startswith(s, self.pos)

    def take(self, s: str) -> bool:
        if self.peek(s):
            self.pos += len(s)
            return True
        return False

    def expect(self, s: str) -> None:
        if not self.take(s):
            raise self.fail(f"expected '{s}'")

    def number(self) -> int:
        self.ws()
        m = self._NUMBER.match(self.text, self.pos)
        if not m:
            raise self.fail("expected an integer")
        self.pos = m.end()
        return int(m.group())

    def string(self) -> str:
        self.ws()
        m = self._STRING.match(self.text, self.pos)
        if not m:
            raise self.fail("expected a quoted axis name")
        self.pos = m.end()
        return m.group(1)

    def symbol(self) -> str:
        self.expect("@")
        if self.text.startswith('"', self.pos):
            return self.string()
        m = self._SYMBOL.match(self.text, self.pos)
        if not m:
            raise self.fail("expected a symbol name")
        self.pos = m.end()
        return m.group()

    def done(self) -> None:
        self.ws()
        if self.pos != len(self.text):
            raise self.fail("unexpected text")

    def items(self, close: str, item) -> list:
        """`item, item, ...` up to `close` (the opening bracket already read)."""
        out: list = []
        while not self.take(close):
            if out:
                self.expect(",")
            out.append(item())
        return out

    # grammar ---------------------------------------------------------------------------------
    def mesh_body(self) -> MeshAttr:
        self.expect("[")

        def axis() -> tuple[str, int]:
            name = self.string()
            self.expect("=")
            return name, self.number()
        axes = self.items("]", axis)
        device_ids: list[int] = []
        if self.take(","):
            self.expect("device_ids")
            self.expect("=")
            self.expect("[")
            device_ids = self.items("]", self.number)
        return MeshAttr(tuple(axes), tuple(device_ids))

    def axis(self) -> AxisRef:
        name = self.string()
        if self.take(":"):
            self.expect("(")
            pre = self.number()
            self.expect(")")
            return AxisRef(name, pre, self.number())
        return AxisRef(name)

    def axis_list(self) -> tuple[AxisRef, ...]:
        self.expect("{")
        return tuple(self.items("}", self.axis))

    def dim(self) -> DimSharding:
        self.expect("{")
        axes: list[AxisRef] = []
        closed = True
        while not self.take("}"):
            if axes or not closed:
                self.expect(",")
            if self.take("?"):
                closed = False
                continue
            if not closed:
                raise self.fail("expected '}' after '?'")
            axes.append(self.axis())
        priority = None
        if self.peek("p") and self.text[self.pos + 1:self.pos + 2].isdigit():
            self.pos += 1
            priority = self.number()
        return DimSharding(tuple(axes), closed, priority)

    def sharding_body(self) -> TensorShardingAttr:
        mesh: str | MeshAttr
        if self.peek("@"):
            mesh = self.symbol()
        else:
            self.expect("mesh")
            self.expect("<")
            mesh = self.mesh_body()
            self.expect(">")
        self.expect(",")
        self.expect("[")
        dims = self.items("]", self.dim)
        replicated: tuple[AxisRef, ...] = ()
        unreduced: tuple[AxisRef, ...] = ()
        while self.take(","):
            if self.take("replicated"):
                self.expect("=")
                replicated = self.axis_list()
            elif self.take("unreduced"):
                self.expect("=")
                unreduced = self.axis_list()
            else:
                raise self.fail("expected 'replicated' or 'unreduced'")
        return TensorShardingAttr(mesh, tuple(dims), replicated, unreduced)

    def sharding(self) -> TensorShardingAttr:
        """`<@mesh, [...]>`: a sharding without its `#sdy.sharding` prefix."""
        self.expect("<")
        s = self.sharding_body()
        self.expect(">")
        return s

    def per_value(self) -> TensorShardingPerValueAttr:
        self.expect("[")
        return TensorShardingPerValueAttr(tuple(self.items("]", self.sharding)))

    def manual_axes(self) -> ManualAxesAttr:
        return ManualAxesAttr(tuple(a.name for a in self.axis_list()))

    def stripped_mesh(self) -> MeshAttr:
        self.expect("<")
        mesh = self.mesh_body()
        self.expect(">")
        return mesh


_PARSERS = {"#sdy.mesh": _Reader.stripped_mesh, "#sdy.sharding": _Reader.sharding,
            "#sdy.sharding_per_value<": lambda r: _closed(r, r.per_value),
            "#sdy<manual_axes": lambda r: _closed(r, r.manual_axes)}


def _closed(r: _Reader, read):
    value = read()
    r.expect(">")
    return value


def parse_attribute(text: str) -> Attribute | None:
    """The dialect's attribute parser: the full `#sdy...` text to an attribute, None for the
    attributes loom keeps opaque; malformed text raises SdySyntaxError (a ValueError) whose
    `offset` is the position of the problem in `text`."""
    for prefix, read in _PARSERS.items():
        if text.startswith(prefix) and (prefix.endswith("<") or text[len(prefix):len(prefix) + 1] in "<{"):
            r = _Reader(text, len(prefix))
            try:
                value = read(r)
                r.done()
            except SdySyntaxError as e:
                raise SdySyntaxError(f"{e} at offset {e.offset} of {text!r}", e.offset) from None
            return value
    return None


def _read(parser: Any, read) -> Any:
    """Reads a stripped sdy attribute (`<@mesh, [...]>`) at the parser's position; errors are
    located where the text goes wrong."""
    r = _Reader(parser.src, parser.ws())
    try:
        value = read(r)
    except SdySyntaxError as e:
        raise parser.error(str(e), e.offset) from None
    parser.pos = r.pos
    return value


# Checking shardings against meshes and types --------------------------------------------------

def _enclosing_module(op: Operation) -> Operation | None:
    p = op if op.name == "builtin.module" else op.parent_op
    while p is not None and p.name != "builtin.module":
        p = p.parent_op
    return p


def lookup_mesh(op: Operation, name: str) -> MeshAttr | None:
    """The mesh of the `sdy.mesh @name` in the module enclosing `op` (or `op` itself if it is a
    module), None if there is none."""
    module = _enclosing_module(op)
    if module is None or not module.regions or not module.regions[0].blocks:
        return None
    for o in module.regions[0].blocks[0].ops:
        if o.name == "sdy.mesh":
            sym = o.read_properties().get("sym_name")
            if isinstance(sym, StringAttr) and sym.value == name:
                mesh = o.read_properties().get("mesh")
                return mesh if isinstance(mesh, MeshAttr) else None
    return None


def mesh_of(sharding: TensorShardingAttr, op: Operation) -> MeshAttr | None:
    """The mesh a sharding refers to, as seen from `op`: inline, or looked up by name."""
    return sharding.mesh if isinstance(sharding.mesh, MeshAttr) else lookup_mesh(op, sharding.mesh)


def _axis_size(axis: AxisRef, mesh: MeshAttr) -> int:
    return axis.size if axis.size is not None else mesh.shape[axis.name]


def mesh_error(mesh: MeshAttr) -> str | None:
    """What is wrong with a mesh (axis sizes, names, device ids), or None."""
    names: set[str] = set()
    for name, size in mesh.axes:
        if size < 1:
            return f"axis size must be at least 1, got: {size}"
        if name in names:
            return f'duplicate axis name: "{name}"'
        names.add(name)
    if not mesh.device_ids:
        return None
    if any(d < 0 for d in mesh.device_ids):
        return f"device id must be non-negative, got: {min(mesh.device_ids)}"
    total = math.prod(size for _, size in mesh.axes)
    if total != len(mesh.device_ids):
        return (f"total product of axis sizes must match total number of device ids, got: {total} != "
                f"{len(mesh.device_ids)}")
    if mesh.axes and sorted(mesh.device_ids) != list(range(total)):
        return f"sorted device ids must be iota(product(axes)), got: {sorted(mesh.device_ids)}"
    return None


def _axis_list_error(axes: Sequence[AxisRef], mesh: MeshAttr, seen: set[AxisRef],
                     sub_axes: dict[str, list[AxisRef]]) -> str | None:
    shape = mesh.shape
    for a in axes:
        if a.name not in shape:
            return f'unknown axis name: "{a.name}"'
        if a in seen:
            return f"duplicate axis ref: {a}"
        seen.add(a)
        if a.size is not None:
            sub_axes.setdefault(a.name, []).append(a)
    return None


def _sub_axes_error(name: str, subs: list[AxisRef], mesh: MeshAttr, seen: set[AxisRef]) -> str | None:
    full = mesh.shape[name]
    if AxisRef(name) in seen:
        return f'both sub-axis and full-axis are used for axis name: "{name}"'
    next_pre = 1
    for a in sorted(subs, key=lambda a: (a.pre_size, a.size)):
        assert a.pre_size is not None and a.size is not None
        if a.pre_size < 1:
            return f"sub-axis pre-size must be at least 1: {a}"
        if a.size <= 1:
            return f"sub-axis sizes must be greater than 1: {a}"
        if full % (a.pre_size * a.size):
            return f"sub-axis next pre-size {a.pre_size * a.size} doesn't divide the size of the full axis {full}: {a}"
        if a.size == full:
            return f"sub-axis size is equal to the full axis size: {a}"
        if next_pre > a.pre_size:
            return f"overlapping sub-axes: {a}"
        next_pre = a.pre_size * a.size
    return None


def _mesh_order(axes: Sequence[AxisRef], mesh: MeshAttr) -> list[tuple[int, int]]:
    index = {n: i for i, (n, _) in enumerate(mesh.axes)}
    return [(index.get(a.name, -1), a.pre_size or 1) for a in axes]


def sharding_error(sharding: TensorShardingAttr, type: Type, mesh: MeshAttr,
                   manual_axes_above: Sequence[str] = ()) -> str | None:
    """What is wrong with `sharding` for a value of `type` on `mesh`, or None: the number of
    dimension shardings must be the rank; axes must exist in the mesh, appear once in the whole
    sharding (dimensions, replicated, unreduced) and not be manual in an enclosing
    `sdy.manual_computation` (`manual_axes_above`); sub-axes must fit their axis. A dimension need
    not divide evenly: XLA pads."""
    if isinstance(type, UnrankedTensorType):
        return f"only ranked tensors can have a sharding, got '{type}'"
    if (not mesh.axes and mesh.device_ids) or not isinstance(type, ShapedType):
        if sharding.dims or sharding.replicated or sharding.unreduced:
            what = "a maximal mesh" if isinstance(type, ShapedType) else f"the non-shaped type '{type}'"
            return f"a sharding on {what} can only have rank 0 and no replicated or unreduced axes"
        return None
    if len(sharding.dims) != type.rank:
        return f"sharding doesn't match tensor rank: {len(sharding.dims)} != {type.rank}"
    seen: set[AxisRef] = set()
    sub_axes: dict[str, list[AxisRef]] = {}
    for i, d in enumerate(sharding.dims):
        if d.priority is not None and d.closed and not d.axes:
            return f"dim {i} is empty and closed but has a priority"
        err = _axis_list_error(d.axes, mesh, seen, sub_axes)
        if err:
            return err
    for what, axes in (("replicated", sharding.replicated), ("unreduced", sharding.unreduced)):
        err = _axis_list_error(axes, mesh, seen, sub_axes)
        if err:
            return err
        order = _mesh_order(axes, mesh)
        if order != sorted(order):
            return f"{what} axes are not ordered w.r.t. mesh"
    for name, subs in sub_axes.items():
        err = _sub_axes_error(name, subs, mesh, seen)
        if err:
            return err
    for a in seen:
        if a.name in manual_axes_above:
            return f'operates on axis "{a.name}" which is already bound by a parent sdy.manual_computation op'
    return None


def _manual_axes_above(op: Operation) -> list[str]:
    axes: list[str] = []
    p = op.parent_op
    while p is not None:
        if p.name == "sdy.manual_computation":
            m = p.read_properties().get("manual_axes")
            if isinstance(m, ManualAxesAttr):
                axes.extend(m.axes)
        p = p.parent_op
    return axes


def check_sharding(op: Operation, sharding: TensorShardingAttr, type: Type, what: str = "") -> str | None:
    """`sharding_error` for a sharding used by `op` (its mesh looked up from there); `what` prefixes
    the message (`"operand 0 - "`)."""
    mesh = mesh_of(sharding, op)
    if mesh is None:
        return f"{what}unknown mesh: @{sharding.mesh}"
    err = sharding_error(sharding, type, mesh, _manual_axes_above(op))
    return f"{what}{err}" if err else None


def _manual_factors(sharding: TensorShardingAttr, manual_axes: Sequence[str], mesh: MeshAttr) -> list[int]:
    """Per dimension, the product of the sizes of the manual axes splitting it."""
    return [math.prod(_axis_size(a, mesh) for a in d.axes if a.name in manual_axes) for d in sharding.dims]


def local_type(global_type: RankedTensorType, sharding: TensorShardingAttr, manual_axes: Sequence[str],
               mesh: MeshAttr) -> RankedTensorType:
    """The per-device type inside an `sdy.manual_computation` of a value of `global_type`: each
    dimension divided by the manual axes splitting it (ValueError if one does not divide)."""
    shape = []
    for i, (n, f) in enumerate(zip(global_type.shape, _manual_factors(sharding, manual_axes, mesh))):
        if n != DYNAMIC and n % f:
            raise ValueError(f"dimension {i} of size {n} is not divisible by the manual axes size {f}")
        shape.append(n if n == DYNAMIC else n // f)
    return RankedTensorType(tuple(shape), global_type.element_type, global_type.encoding)


def global_type(local: RankedTensorType, sharding: TensorShardingAttr, manual_axes: Sequence[str],
                mesh: MeshAttr) -> RankedTensorType:
    """The inverse of `local_type`: each dimension times the manual axes splitting it."""
    shape = tuple(n if n == DYNAMIC else n * f
                  for n, f in zip(local.shape, _manual_factors(sharding, manual_axes, mesh)))
    return RankedTensorType(shape, local.element_type, local.encoding)


def _attr_dicts(func: Operation, key: str, n: int) -> list[dict[str, Attribute]]:
    """The `arg_attrs` / `res_attrs` of a `func.func` as n dictionaries."""
    a = func.read_properties().get(key)
    dicts = [d.as_dict() if isinstance(d, DictionaryAttr) else {} for d in a.elements] if isinstance(a, ArrayAttr) \
        else []
    return dicts + [{} for _ in range(n - len(dicts))]


def func_shardings(func: Operation) -> tuple[list[Attribute | None], list[Attribute | None]]:
    """The `sdy.sharding` of each argument and each result of a `func.func` (None where it has
    none; normally a TensorShardingAttr)."""
    fn_type = func.properties["function_type"].value
    return ([d.get("sdy.sharding") for d in _attr_dicts(func, "arg_attrs", len(fn_type.inputs))],
            [d.get("sdy.sharding") for d in _attr_dicts(func, "res_attrs", len(fn_type.results))])


def set_func_shardings(func: Operation, args: Sequence[TensorShardingAttr | None] | None = None,
                       results: Sequence[TensorShardingAttr | None] | None = None) -> None:
    """Sets (or, for None, removes) the `sdy.sharding` of each argument / result of a `func.func`,
    keeping their other attributes; `args` / `results` None leaves that side as it is."""
    fn_type = func.properties["function_type"].value
    for key, n, shardings in (("arg_attrs", len(fn_type.inputs), args), ("res_attrs", len(fn_type.results), results)):
        if shardings is None:
            continue
        if len(shardings) != n:
            raise ValueError(f"{key}: {len(shardings)} shardings for {n} values")
        dicts = _attr_dicts(func, key, n)
        for d, s in zip(dicts, shardings):
            d.pop("sdy.sharding", None)
            if s is not None:
                d["sdy.sharding"] = s
        if any(dicts):  # MLIR drops the array when every dictionary is empty
            func.properties[key] = ArrayAttr(tuple(DictionaryAttr.get(d) for d in dicts))
        else:
            func.properties.pop(key, None)


def verify_shardings(module: Operation) -> None:
    """Checks every `sdy.sharding` a module carries outside sdy ops: in the `arg_attrs` and
    `res_attrs` of its `func.func` ops (a `#sdy.sharding` for that argument or result) and on any
    op's attributes (a `#sdy.sharding_per_value` for its results), as `sharding_error` does.
    Raises VerifyError naming the op; the ops of the sdy dialect check themselves in `verify()`."""
    for op in module.walk():
        if op.name == "func.func":
            fn_type = op.properties["function_type"].value
            for what, types, shardings in zip(("arg", "result"), (fn_type.inputs, fn_type.results),
                                              func_shardings(op)):
                for i, (t, s) in enumerate(zip(types, shardings)):
                    if s is None:
                        continue
                    if not isinstance(s, TensorShardingAttr):
                        raise VerifyError(op, f"{what} {i} - should have a sharding attribute of type "
                                              f"TensorShardingAttr")
                    err = check_sharding(op, s, t, f"{what} {i} - ")
                    if err:
                        raise VerifyError(op, err)
        s = op.read_attributes().get("sdy.sharding")
        if isinstance(s, TensorShardingPerValueAttr):
            if len(s.shardings) != len(op.results):
                raise VerifyError(op, f"sdy.sharding has {len(s.shardings)} shardings for {len(op.results)} "
                                      f"results")
            for i, (sh, r) in enumerate(zip(s.shardings, op.results)):
                err = check_sharding(op, sh, r.type, f"result {i} - ")
                if err:
                    raise VerifyError(op, err)


# Ops ----------------------------------------------------------------------------------------

def _is(cls: type, syntax: AttrSyntax | None = None) -> Constraint:
    return Constraint(lambda a: isinstance(a, cls), cls.__name__, syntax)


_SYMBOL_NAME = AttrSyntax(lambda a: "@" + keyword_or_string(a.value), lambda p: StringAttr(p.parse_symbol_name()))
_STRIPPED_MESH = AttrSyntax(lambda a: f"<{a.body()}>", lambda p: _read(p, _Reader.stripped_mesh))


class SdyOp(OpBase):
    """Base of the sdy ops."""


def _insert(builder: Builder | None, op: Operation) -> Operation:
    if builder is not None:
        builder.insert(op)
    return op


def _where(builder: Builder | None, location: Location | None) -> Location:
    return location if location is not None else builder.location if builder is not None else UNKNOWN_LOC


class MeshOp(SdyOp):
    """`sdy.mesh @name = <["x"=2, "y"=4]>`: a named mesh, referred to by shardings as `@name`."""

    name = "sdy.mesh"
    sym_name = prop(Constraint(lambda a: isinstance(a, StringAttr), "symbol name", _SYMBOL_NAME))
    mesh = prop(_is(MeshAttr, _STRIPPED_MESH))
    traits = (Symbol, HasParent("builtin.module"))
    assembly_format = "$sym_name `=` $mesh attr-dict"

    def verify_(self) -> None:
        err = mesh_error(self.mesh)
        if err:
            self.emit_error(err)

    @classmethod
    def build(cls, builder: Builder | None, sym_name: str, mesh: MeshAttr | Sequence[tuple[str, int]],
              location: Location | None = None) -> Operation:
        """`sdy.mesh @sym_name = <mesh>` (a MeshAttr, or its axes as (name, size) pairs)."""
        if not isinstance(mesh, MeshAttr):
            mesh = MeshAttr(tuple(mesh))
        op = Operation.create(cls.name, (), (), {"sym_name": StringAttr(sym_name), "mesh": mesh}, {}, (), (),
                              _where(builder, location))
        return _insert(builder, op)


class _ShardedValueOp(SdyOp):
    """`sdy.<op> %x <@mesh, [...]> : tensor<...>`: a value with a sharding, an identity on values."""

    input = operand_def(AnyRankedTensor)
    sharding = prop(_is(TensorShardingAttr))
    result = result_def(AnyRankedTensor)
    traits = (SameOperandsAndResultType,)

    def verify_(self) -> None:
        err = check_sharding(self, self.sharding, self.result.type)
        if err:
            self.emit_error(err)

    @classmethod
    def build(cls, builder: Builder | None, value: Value, sharding: TensorShardingAttr,
              location: Location | None = None) -> Operation:
        op = Operation.create(cls.name, [value], [value.type], {"sharding": sharding}, {}, (), (),
                              _where(builder, location))
        return _insert(builder, op)

    def print_custom(self, p: Any) -> None:
        p.write(f"{p.op_name(self)} {p.value(self.input)} <{self.sharding.body()}>")
        p.attr_dict(self.read_attributes())
        p.write(f" : {self.result.type}")

    @classmethod
    def parse_custom(cls, parser: Any, n_results: int) -> Operation:
        ref = parser.parse_operand_ref()
        props: dict[str, Attribute] = {"sharding": _read(parser, _Reader.sharding)}
        attrs = parser.parse_optional_attr_dict()
        if "sharding" in attrs:
            props["sharding"] = attrs.pop("sharding")
        parser.expect(":")
        t = parser.parse_type()
        return Operation.create(cls.name, [parser.resolve_operand(ref, t)], [t], props, attrs)


class ShardingConstraintOp(_ShardedValueOp):
    """Constrains the sharding of a value (`lax.with_sharding_constraint`); an identity on values."""

    name = "sdy.sharding_constraint"


class ReshardOp(_ShardedValueOp):
    """Reshards a value to the given sharding; an identity on values."""

    name = "sdy.reshard"
    traits = (Pure,)


class ShardingGroupOp(SdyOp):
    """`sdy.sharding_group %x group_id=0 : tensor<...>`: puts a value in a group whose members
    must all be sharded alike (what `shard_alike` lowers to); it has no result."""

    name = "sdy.sharding_group"
    input = operand_def(AnyRankedTensor)
    group_id = prop(Constraint(lambda a: isinstance(a, IntegerAttr) and a.type is i64, "64-bit integer attribute"))

    @classmethod
    def build(cls, builder: Builder | None, value: Value, group_id: int, location: Location | None = None) -> Operation:
        op = Operation.create(cls.name, [value], [], {"group_id": IntegerAttr.get(group_id, i64)}, {}, (), (),
                              _where(builder, location))
        return _insert(builder, op)

    def print_custom(self, p: Any) -> None:
        p.write(f"{p.op_name(self)} {p.value(self.input)} group_id={self.group_id.value}")
        p.attr_dict(self.read_attributes())
        p.write(f" : {self.input.type}")

    @classmethod
    def parse_custom(cls, parser: Any, n_results: int) -> Operation:
        ref = parser.parse_operand_ref()
        parser.expect_keyword("group_id")
        parser.expect("=")
        props: dict[str, Attribute] = {"group_id": IntegerAttr.get(parser.parse_int(), i64)}
        attrs = parser.parse_optional_attr_dict()
        parser.expect(":")
        t = parser.parse_type()
        return Operation.create(cls.name, [parser.resolve_operand(ref, t)], [], props, attrs)


class ReturnOp(SdyOp):
    """Terminates the body of an sdy op with a region: `sdy.return %a, %b : t1, t2`."""

    name = "sdy.return"
    results_ = var_operand()
    traits = (Pure, Terminator)
    assembly_format = "attr-dict ($results_^ `:` type($results_))?"

    @classmethod
    def build(cls, builder: Builder | None, values: Sequence[Value], location: Location | None = None) -> Operation:
        return _insert(builder, Operation.create(cls.name, list(values), (), {}, {}, (), (),
                                                 _where(builder, location)))


class ManualComputationOp(SdyOp):
    """A region run per device over `manual_axes` (what `shard_map` lowers to): operands split by
    `in_shardings`, the body sees local shards (each dimension divided by the manual axes
    splitting it) and returns local results, assembled by `out_shardings`.

        %1 = sdy.manual_computation(%0) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[<@mesh, [{"x"}]>]
               manual_axes={"x"} (%arg1: tensor<2xf32>) { ... sdy.return %2 : tensor<2xf32> }
               : (tensor<4xf32>) -> tensor<4xf32>
    """

    name = "sdy.manual_computation"
    tensors = var_operand(AnyRankedTensor)
    in_shardings = prop(_is(TensorShardingPerValueAttr))
    out_shardings = prop(_is(TensorShardingPerValueAttr))
    manual_axes = prop(_is(ManualAxesAttr))
    results_ = var_result(AnyRankedTensor)
    body = region_def()
    traits = (IsolatedFromAbove, SingleBlock)

    @property
    def mesh(self) -> MeshAttr | None:
        """The mesh of its shardings (None when it has none, or they disagree)."""
        meshes = {mesh_of(s, self) for s in self.in_shardings.shardings + self.out_shardings.shardings}
        return meshes.pop() if len(meshes) == 1 else None

    def verify_(self) -> None:
        manual = self.manual_axes.axes
        above = _manual_axes_above(self)
        for a in manual:
            if a in above:
                self.emit_error(f'operates on axis "{a}" which is already bound by a parent sdy.manual_computation op')
        block = self.body.blocks[0] if self.body.blocks else None
        if block is None or block.last_op is None or block.last_op.name != "sdy.return":
            self.emit_error("body must end with 'sdy.return'")
        values = (("operand", self.operand_types, [a.type for a in block.args], self.in_shardings.shardings),
                  ("result", self.result_types, list(block.last_op.operand_types), self.out_shardings.shardings))
        for what, globals_, locals_, shardings in values:
            if len(shardings) != len(globals_):
                self.emit_error(f"{what} shardings don't match number of values: {len(shardings)} shardings vs "
                                f"{len(globals_)} values")
            for i, (s, t) in enumerate(zip(shardings, globals_)):
                err = check_sharding(self, s, t, f"{what} {i} - ")
                if err:
                    self.emit_error(err)
            if len(globals_) != len(locals_):
                self.emit_error(f"number of op {what}s and region {what}s must match. Op has {len(globals_)} op "
                                f"{what}s and {len(locals_)} region {what}s")
        mesh = self.mesh
        if mesh is None and (self.in_shardings.shardings or self.out_shardings.shardings):
            self.emit_error("all in and out shardings must be bound to the same mesh")
        if mesh is None:
            return
        for a in manual:
            if a not in mesh.shape:
                self.emit_error(f'unknown manual axis: "{a}"')
        for what, globals_, locals_, shardings in values:
            for i, (s, g, local) in enumerate(zip(shardings, globals_, locals_)):
                for d, dim in enumerate(s.dims):
                    names = [a.name for a in dim.axes]
                    free = [k for k, n in enumerate(names) if n not in manual]
                    if free and any(n in manual for n in names[free[0]:]):
                        self.emit_error(f"{what} sharding at index {i} must have all manual axes come before free "
                                        f"axes in its dimension sharding at index {d}")
                try:
                    expected = local_type(g, s, manual, mesh)
                except ValueError as e:
                    self.emit_error(f"{what} {i} - {e}")
                if local is not expected:
                    self.emit_error(f"{what} shape, corresponding sharding, and region {what} shape at index {i} must "
                                    f"match. Expected local shape {expected}, actual local shape {local}")

    @classmethod
    def build(cls, builder: Builder | None, operands: Sequence[Value], in_shardings: Sequence[TensorShardingAttr],
              out_shardings: Sequence[TensorShardingAttr], manual_axes: Sequence[str], mesh: MeshAttr,
              body: Callable[[Builder, list[Value]], Sequence[Value]], location: Location | None = None) -> Operation:
        """The op over `operands`, its body built by `body(builder, local_args)` returning the local
        results (`sdy.return` is added); `mesh` is the one the shardings name, used to compute the
        local argument types and the global result types."""
        manual = tuple(manual_axes)
        where = _where(builder, location)
        arg_types = [local_type(v.type, s, manual, mesh) for v, s in zip(operands, in_shardings)]
        region = Region()
        block = region.add_block(Block(arg_types))
        inner = Builder(InsertionPoint.at_end(block), where)
        results = list(body(inner, list(block.args)))
        ReturnOp.build(inner, results)
        result_types = [global_type(v.type, s, manual, mesh) for v, s in zip(results, out_shardings)]
        props = {"in_shardings": TensorShardingPerValueAttr(tuple(in_shardings)),
                 "out_shardings": TensorShardingPerValueAttr(tuple(out_shardings)),
                 "manual_axes": ManualAxesAttr(manual)}
        return _insert(builder, Operation.create(cls.name, list(operands), result_types, props, {}, [region], (),
                                                 where))

    # `(operands) in_shardings=[...] out_shardings=[...] manual_axes={...} (%arg: type, ...) {body}
    # attr-dict : functional-type`, Shardy's format with its SingleBlockRegionNoBlockId region.
    def print_custom(self, p: Any) -> None:
        block = self.body.blocks[0]
        p.write(f"{p.op_name(self)}({', '.join(p.value(v) for v in self.operands)})"
                f" in_shardings={self.in_shardings.body()} out_shardings={self.out_shardings.body()}"
                f" manual_axes={self.manual_axes.body()}"
                f" ({', '.join(p.region_argument(a) for a in block.args)}) ")
        p.region(self.body, print_entry_args=False)
        p.attr_dict(self.read_attributes())
        p.write(" : " + signature_text(tuple(self.operand_types), tuple(self.result_types)))

    @classmethod
    def parse_custom(cls, parser: Any, n_results: int) -> Operation:
        parser.expect("(")
        refs = [] if parser.peek(")") else [parser.parse_operand_ref()]
        while parser.accept(","):
            refs.append(parser.parse_operand_ref())
        parser.expect(")")
        props: dict[str, Attribute] = {}
        for key, read in (("in_shardings", _Reader.per_value), ("out_shardings", _Reader.per_value),
                          ("manual_axes", _Reader.manual_axes)):
            parser.expect_keyword(key)
            parser.expect("=")
            props[key] = _read(parser, read)
        parser.expect("(")
        args: list = []
        while not parser.accept(")"):
            if args:
                parser.expect(",")
            ref = parser.parse_operand_ref()
            parser.expect(":")
            t = parser.parse_type()
            args.append((ref, t, parser.parse_optional_trailing_loc() or parser.loc_at(ref[2])))
        region = parser.parse_region(isolated=True, entry_args=args)
        attrs = parser.parse_optional_attr_dict()
        parser.expect(":")
        ins, outs = parser.parse_signature()
        if len(ins) != len(refs):
            raise parser.error(f"expected {len(refs)} operand types but had {len(ins)}")
        operands = [parser.resolve_operand(r, t) for r, t in zip(refs, ins)]
        return Operation.create(cls.name, operands, outs, props, attrs, [region])


register_dialect(Dialect("sdy", [MeshOp, ShardingConstraintOp, ReshardOp, ShardingGroupOp, ManualComputationOp,
                                ReturnOp], attribute_parser=parse_attribute))

__all__ = ["AxisRef", "DimSharding", "ManualAxesAttr", "ManualComputationOp", "MeshAttr", "MeshOp", "ReshardOp",
           "ReturnOp", "SdySyntaxError", "ShardingConstraintOp", "ShardingGroupOp", "TensorShardingAttr",
           "TensorShardingPerValueAttr", "check_sharding", "func_shardings", "global_type", "local_type", "lookup_mesh",
           "mesh_error", "mesh_of", "parse_attribute", "set_func_shardings", "sharding_error", "verify_shardings"]
