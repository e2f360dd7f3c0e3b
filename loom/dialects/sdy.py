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
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from loom.ir.attributes import Attribute
from loom.ir.opdef import (
    Dialect,
    IsolatedFromAbove,
    OpBase,
    Terminator,
    prop,
    region_def,
    register_dialect,
    result_def,
    var_operand,
    var_result,
)
from loom.ir.opdef import operand as operand_def


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
        mesh = f"@{self.mesh}" if isinstance(self.mesh, str) else f"mesh<{self.mesh.body()}>"
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

class _Reader:
    """A small recursive-descent reader over an attribute body; raises ValueError on bad text."""

    _NUMBER = re.compile(r"-?\d+")
    _STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

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
            raise ValueError(f"expected '{s}' at offset {self.pos} of {self.text!r}")

    def number(self) -> int:
        self.ws()
        m = self._NUMBER.match(self.text, self.pos)
        if not m:
            raise ValueError(f"expected an integer at offset {self.pos} of {self.text!r}")
        self.pos = m.end()
        return int(m.group())

    def string(self) -> str:
        self.ws()
        m = self._STRING.match(self.text, self.pos)
        if not m:
            raise ValueError(f"expected a quoted axis name at offset {self.pos} of {self.text!r}")
        self.pos = m.end()
        return m.group(1)

    def symbol(self) -> str:
        self.expect("@")
        if self.peek('"'):
            return self.string()
        m = re.compile(r"[A-Za-z_][\w$.-]*").match(self.text, self.pos)
        if not m:
            raise ValueError(f"expected a symbol name at offset {self.pos} of {self.text!r}")
        self.pos = m.end()
        return m.group()

    def done(self) -> None:
        self.ws()
        if self.pos != len(self.text):
            raise ValueError(f"unexpected text at offset {self.pos} of {self.text!r}")

    # grammar ---------------------------------------------------------------------------------
    def mesh_body(self) -> MeshAttr:
        self.expect("[")
        axes: list[tuple[str, int]] = []
        while not self.take("]"):
            if axes:
                self.expect(",")
            name = self.string()
            self.expect("=")
            axes.append((name, self.number()))
        device_ids: list[int] = []
        if self.take(","):
            self.expect("device_ids")
            self.expect("=")
            self.expect("[")
            while not self.take("]"):
                if device_ids:
                    self.expect(",")
                device_ids.append(self.number())
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
        axes: list[AxisRef] = []
        while not self.take("}"):
            if axes:
                self.expect(",")
            axes.append(self.axis())
        return tuple(axes)

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
        dims: list[DimSharding] = []
        while not self.take("]"):
            if dims:
                self.expect(",")
            dims.append(self.dim())
        replicated: tuple[AxisRef, ...] = ()
        unreduced: tuple[AxisRef, ...] = ()
        while self.take(","):
            if self.take("replicated"):
                self.expect("=")
                replicated = self.axis_list()
            else:
                self.expect("unreduced")
                self.expect("=")
                unreduced = self.axis_list()
        return TensorShardingAttr(mesh, tuple(dims), replicated, unreduced)


def _whole(text: str, read) -> Attribute:
    r = _Reader(text)
    value = read(r)
    r.done()
    return value


def _per_value(r: _Reader) -> TensorShardingPerValueAttr:
    r.expect("[")
    items: list[TensorShardingAttr] = []
    while not r.take("]"):
        if items:
            r.expect(",")
        r.expect("<")
        items.append(r.sharding_body())
        r.expect(">")
    return TensorShardingPerValueAttr(tuple(items))


def _manual_axes(r: _Reader) -> ManualAxesAttr:
    return ManualAxesAttr(tuple(a.name for a in r.axis_list()))


_PARSERS = {"#sdy.mesh<": lambda r: r.mesh_body(), "#sdy.sharding<": lambda r: r.sharding_body(),
            "#sdy.sharding_per_value<": _per_value, "#sdy<manual_axes": _manual_axes}


def parse_attribute(text: str) -> Attribute | None:
    """The dialect's attribute parser: the full `#sdy...` text to an attribute, None for the
    attributes loom keeps opaque; malformed text raises ValueError with the offset."""
    for prefix, read in _PARSERS.items():
        if text.startswith(prefix) and text.endswith(">"):
            return _whole(text[len(prefix):-1], read)
    return None


# Ops ----------------------------------------------------------------------------------------

def _is(cls: type) -> object:
    from loom.ir.opdef import Constraint
    return Constraint(lambda a: isinstance(a, cls), cls.__name__)


class SdyOp(OpBase):
    """Base of the sdy ops."""


class MeshOp(SdyOp):
    """`sdy.mesh @name = <[...]>`: a named mesh, referred to by shardings as `@name`."""

    name = "sdy.mesh"
    sym_name = prop()
    mesh = prop(_is(MeshAttr))


class ShardingConstraintOp(SdyOp):
    """Constrains the sharding of a value (`lax.with_sharding_constraint`); an identity on values."""

    name = "sdy.sharding_constraint"
    input = operand_def()
    sharding = prop(_is(TensorShardingAttr))
    result = result_def()


class ReshardOp(SdyOp):
    """Reshards a value to the given sharding; an identity on values."""

    name = "sdy.reshard"
    input = operand_def()
    sharding = prop(_is(TensorShardingAttr))
    result = result_def()


class ManualComputationOp(SdyOp):
    """A region run per device over `manual_axes` (what `shard_map` lowers to): operands split by
    `in_shardings`, the body sees local shards, results assembled by `out_shardings`."""

    name = "sdy.manual_computation"
    tensors = var_operand()
    in_shardings = prop(_is(TensorShardingPerValueAttr))
    out_shardings = prop(_is(TensorShardingPerValueAttr))
    manual_axes = prop(_is(ManualAxesAttr))
    results_ = var_result()
    body = region_def()
    traits = (IsolatedFromAbove,)


class ReturnOp(SdyOp):
    """Terminates the body of an sdy op with region."""

    name = "sdy.return"
    results_ = var_operand()
    traits = (Terminator,)


register_dialect(Dialect("sdy", [MeshOp, ShardingConstraintOp, ReshardOp, ManualComputationOp, ReturnOp],
                         attribute_parser=parse_attribute))

__all__ = ["AxisRef", "DimSharding", "ManualAxesAttr", "ManualComputationOp", "MeshAttr", "MeshOp", "ReshardOp",
           "ReturnOp", "ShardingConstraintOp", "TensorShardingAttr", "TensorShardingPerValueAttr",
           "parse_attribute"]
