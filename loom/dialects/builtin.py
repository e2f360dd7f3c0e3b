"""The builtin dialect: `builtin.module` and `builtin.unrealized_conversion_cast`."""

from __future__ import annotations

from loom.ir.attributes import UNKNOWN_LOC, Location, StringAttr
from loom.ir.core import Block, Operation, Region
from loom.ir.opdef import (
    GraphRegions,
    IsolatedFromAbove,
    NoTerminator,
    OpBase,
    SingleBlock,
    SymbolTable,
    opt_prop,
    region_def,
    var_operand,
    var_result,
)


class ModuleOp(OpBase):
    """A top-level container of ops, with an optional symbol name."""

    name = "builtin.module"
    sym_name = opt_prop(StringAttr)
    sym_visibility = opt_prop(StringAttr)
    body_region = region_def()
    traits = (IsolatedFromAbove, NoTerminator, SymbolTable, SingleBlock, GraphRegions)

    __slots__ = ("_resources",)

    @property
    def resources(self) -> dict | None:
        """The file's `{-# dialect_resources ... #-}` section, as the parser read it."""
        return getattr(self, "_resources", None)

    @resources.setter
    def resources(self, value: dict | None) -> None:
        self._resources = value

    @staticmethod
    def build(ops: list[Operation] = (), sym_name: str | None = None, location: Location = UNKNOWN_LOC) -> ModuleOp:
        props = {"sym_name": StringAttr(sym_name)} if sym_name else {}
        op = Operation.create("builtin.module", (), (), props, {}, [Region([Block()])], (), location)
        for o in ops:
            op.body.append(o)
        return op

    @property
    def body(self) -> Block:
        region = self.regions[0]
        if not region.blocks:
            region.add_block(Block())
        return region.blocks[0]

    def verify_(self) -> None:
        if self.regions[0].blocks and self.regions[0].blocks[0].args:
            self.emit_error("expects the body to have no arguments")

    @classmethod
    def parse_custom(cls, parser, n_results: int) -> Operation:
        props = {}
        if parser.peek("@"):
            props["sym_name"] = StringAttr(parser.parse_symbol_name())
        attrs = {}
        if parser.accept_keyword("attributes"):
            attrs = parser.parse_optional_attr_dict()
        for k in [k for k in attrs if k in ("sym_name", "sym_visibility")]:
            props[k] = attrs.pop(k)
        region = parser.parse_region(isolated=True)
        if not region.blocks:
            region.add_block(Block())
        return Operation.create(cls.name, (), (), props, attrs, [region])

    def print_custom(self, p) -> None:
        p.write("module")
        name = self.read_properties().get("sym_name")
        if name is not None:
            from loom.ir.attributes import keyword_or_string
            p.write(" @" + keyword_or_string(name.value))
        p.attr_dict(self.read_attributes(), keyword=True)
        p.write(" ")
        p.region(self.regions[0], print_entry_args=False, print_terminators=False)


class UnrealizedConversionCastOp(OpBase):
    """Casts values between type systems during partial conversion; folds away in pairs."""

    name = "builtin.unrealized_conversion_cast"
    inputs = var_operand()
    outputs = var_result()
