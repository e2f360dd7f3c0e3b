"""Ops that combine elements with a body region: reduce, reduce_window, select_and_scatter,
sort and map."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from loom.dialects.stablehlo.assembly import parse_region_argument, print_functional_type
from loom.dialects.stablehlo.attributes import dims_text, i64_array, i64_attr, padding_attr
from loom.dialects.stablehlo.base import StableHLOOp, build_region, check_body, reducer_types, scalar_tensor
from loom.dialects.stablehlo.contraction import window_output_size
from loom.dialects.stablehlo.properties import prop_int, prop_ints, prop_padding
from loom.dialects.stablehlo.types import (
    AnyTensor,
    BoolAttr_,
    I64Array,
    I64Attr,
    I64Elements,
    ShapeError,
    check_dims_in_range,
    check_same_element_type,
    compatible,
    dim_eq,
    element_type,
    parse_i64_list,
    shape_text,
    with_element_type,
)
from loom.ir.attributes import Attribute, BoolAttr, Location, keyword_or_string
from loom.ir.builder import Builder
from loom.ir.core import Block, Operation, Region, Value
from loom.ir.opdef import Pure, lookup_op, opt_prop, prop, region_def, result_def, var_operand, var_result
from loom.ir.opdef import operand as operand_def
from loom.ir.types import FloatType, IntegerType, RankedTensorType, Type, UnrankedTensorType, i1

__all__ = ["ReduceOp", "ReduceWindowOp", "SelectAndScatterOp", "SortOp", "MapOp"]


def _promotable(src: Type, dst: Type) -> bool:
    """Whether reduction inputs of element type `src` may accumulate in `dst` (same or wider, same kind)."""
    if src is dst:
        return True
    if isinstance(src, FloatType) and isinstance(dst, FloatType):
        return dst.width >= src.width and dst.precision >= src.precision
    if isinstance(src, IntegerType) and isinstance(dst, IntegerType):
        return src.signedness == dst.signedness and dst.width >= src.width
    return False


def _split_variadic(types: Sequence[Type], what: str) -> tuple[Sequence[Type], Sequence[Type]]:
    if len(types) % 2:
        raise ShapeError(f"expects as many {what} as inputs, but got {len(types)} operands in all")
    n = len(types) // 2
    return types[:n], types[n:]


def _reduction_element_types(inputs: Sequence[Type], inits: Sequence[Type], regions: Sequence[Region],
                             what: str = "body") -> list[Type]:
    """Check init values (rank-0, the inputs' element types) and the body; the result element types."""
    for i, (x, init) in enumerate(zip(inputs, inits)):
        if isinstance(init, RankedTensorType) and init.rank != 0:
            raise ShapeError(f"init_values #{i} must be a rank-0 tensor, but got '{init}'")
        check_same_element_type(x, init, f"inputs #{i} and init_values #{i}")
    if not regions:
        return [element_type(t) for t in inits]
    body = reducer_types(regions[0], what, [element_type(t) for t in inits])
    for i, (x, et) in enumerate(zip(inputs, body)):
        if not _promotable(element_type(x), et):
            raise ShapeError(f"{what} accumulates in '{et}', which input #{i} '{x}' cannot be promoted to")
    return body


class ReduceOp(StableHLOOp):
    """Reduces `inputs` along `dimensions` with the `body` region, starting from `init_values`."""

    name = "stablehlo.reduce"
    inputs = var_operand(AnyTensor)
    init_values = var_operand(AnyTensor)
    dimensions = prop(I64Array)
    results_ = var_result(AnyTensor)
    body = region_def()
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        inputs, inits = _split_variadic(operand_types, "init_values")
        if not inputs:
            raise ShapeError("expects at least one input")
        dims = prop_ints(properties, "dimensions")
        ranked = [t for t in inputs if isinstance(t, RankedTensorType)]
        for t in ranked[1:]:
            if not compatible(with_element_type(t, i1), with_element_type(ranked[0], i1)):
                raise ShapeError(f"all inputs must have the same shape, but got '{ranked[0]}' and '{t}'")
        ets = _reduction_element_types(inputs, inits, regions)
        if not ranked:
            return [UnrankedTensorType(et) for et in ets]
        shape = ranked[0].shape
        check_dims_in_range(dims, len(shape), f"dimensions {list(dims)} (inputs '{ranked[0]}')")
        kept = tuple(d for i, d in enumerate(shape) if i not in dims)
        return [RankedTensorType(kept, et, None) for et in ets]

    @classmethod
    def build(cls, builder: Builder | None, inputs: Sequence[Value], init_values: Sequence[Value],
              dimensions: Sequence[int], body: Callable[[Builder, list[Value]], Sequence[Value]],
              location: Location | None = None) -> Operation:
        """`body(builder, [acc..., x...])` returns the combined values (rank-0 tensors)."""
        arg_types = [scalar_tensor(element_type(v.type)) for v in init_values] * 2
        region = build_region(arg_types, body)
        return cls.insert(builder, [*inputs, *init_values], {"dimensions": i64_array(dimensions)},
                          regions=[region], location=location)

    # `stablehlo.reduce(%x init: %c) applies stablehlo.add across dimensions = [1] : (...) -> ...`
    # when the body is one commutative binary op of the dialect; else the body follows as
    # ` reducer(%a: t, %b: t) {...}` (AssemblyFormat.cpp's printReduceOp / parseReduceOp).
    def _compact_op(self) -> Operation | None:
        block = self.regions[0].blocks[0] if self.regions[0].blocks else None
        inputs = self.inputs
        if block is None or not inputs:
            return None
        ops = list(block.ops)
        if len(ops) != 2:
            return None
        inner, ret = ops
        t = inner.results[0].type if len(inner.results) == 1 else None
        if (inner.name.split(".")[0] != "stablehlo" or not getattr(type(inner), "commutative", False)
                or len(inner.operands) != 2 or inner.regions or t is None
                or any(v.type is not t for v in inner.operands)
                or t is not scalar_tensor(element_type(inputs[0].type))
                or list(inner.operands) != list(block.args) or ret.name != "stablehlo.return"
                or list(ret.operands) != list(inner.results)):
            return None
        return inner

    def asm_printed_regions(self) -> list:
        if self._compact_op() is not None:
            return ["none"]
        n = len(self.operands) // 2
        return [[i + k * n for i in range(n) for k in (0, 1)]]  # printed in (input, init) pairs

    def print_custom(self, p: Any) -> None:
        n = len(self.operands) // 2
        ops = self.operands
        p.write(p.op_name(self) + ", ".join(f"({p.value(ops[i])} init: {p.value(ops[i + n])})" for i in range(n)))
        inner = self._compact_op()
        if inner is not None:
            p.write(" applies " + keyword_or_string(inner.name))
        p.write(" across dimensions = " + dims_text(self.properties["dimensions"].values))
        shown = {**self.read_properties(), **self.read_attributes()}
        p.attr_dict({k: v for k, v in shown.items() if k != "dimensions"})
        p.write(" : ")
        print_functional_type(p, self)
        if inner is None:
            p.newline()
            p.write(" reducer")
            args = self.regions[0].blocks[0].args
            for i in range(n):
                p.write("(" + p.region_argument(args[i]) + ", " + p.region_argument(args[i + n]) + ") ")
            p.write(" ")
            p.region(self.regions[0], print_entry_args=False)

    @classmethod
    def parse_custom(cls, parser: Any, n_results: int) -> Operation:
        loc = parser.loc_at(parser.ws())
        inputs, inits = [], []

        def pair() -> None:
            inputs.append(parser.parse_operand_ref())
            parser.expect_keyword("init")
            parser.expect(":")
            inits.append(parser.parse_operand_ref())
            parser.expect(")")
        parser.expect("(")
        pair()
        while parser.accept(","):
            parser.expect("(")
            pair()
        inner_name = None
        if parser.accept_keyword("applies"):
            pos = parser.ws()
            inner_name = parser.parse_string() if parser.peek('"') else parser.parse_bare_id("op name")
            inner_cls = lookup_op(inner_name)
            if inner_cls is None or not inner_name.startswith("stablehlo.") or not getattr(inner_cls, "commutative",
                                                                                          False):
                raise parser.error("expected the inner-op to be a commutative binary-op from the stablehlo dialect, "
                                   "with zero region, producing single result", pos)
        parser.expect_keyword("across")
        parser.expect_keyword("dimensions")
        parser.expect("=")
        props: dict[str, Attribute] = {"dimensions": i64_array(parse_i64_list(parser))}
        attrs = parser.parse_optional_attr_dict()
        for k in [k for k in attrs if k in cls.definition.prop_names]:
            props[k] = attrs.pop(k)
        parser.expect(":")
        ins, outs = parser.parse_signature()
        refs = inputs + inits
        if len(ins) != len(refs):
            raise parser.error(f"expected {len(refs)} operand types but had {len(ins)}")
        operands = [parser.resolve_operand(r, t) for r, t in zip(refs, ins)]
        if inner_name is not None:
            t = scalar_tensor(element_type(ins[0]))
            block = Block()
            a, b = block.add_argument(t, loc), block.add_argument(t, loc)
            inner = Operation.create(inner_name, [a, b], [t], location=loc)
            block.append(inner)
            block.append(Operation.create("stablehlo.return", list(inner.results), [], location=loc))
            region = Region([block])
        else:
            parser.expect_keyword("reducer")
            firsts, seconds = [], []
            while parser.accept("("):
                firsts.append(parse_region_argument(parser))
                parser.expect(",")
                seconds.append(parse_region_argument(parser))
                parser.expect(")")
            region = parser.parse_region(entry_args=firsts + seconds)
        # MLIR's parseReduceOp locates the op where its operands begin.
        return Operation.create(cls.name, operands, list(outs), props, attrs, [region], location=loc)


def _window_attrs(props: dict[str, Attribute], rank: int, names: Sequence[str]) -> list[list[int]]:
    out = []
    for name in names:
        values = list(prop_ints(props, name, [1] * rank))
        if len(values) != rank:
            raise ShapeError(f"{name} must have {rank} elements (one per operand dimension), but has {len(values)}")
        if any(v <= 0 for v in values):
            raise ShapeError(f"{name} must be positive, but got {values}")
        out.append(values)
    return out


class ReduceWindowOp(StableHLOOp):
    """Reduces each window of `inputs` (sizes, strides, dilations, padding) with the `body`."""

    name = "stablehlo.reduce_window"
    inputs = var_operand(AnyTensor)
    init_values = var_operand(AnyTensor)
    window_dimensions = prop(I64Array)
    window_strides = opt_prop(I64Array)
    base_dilations = opt_prop(I64Array)
    window_dilations = opt_prop(I64Array)
    padding = opt_prop(I64Elements)
    results_ = var_result(AnyTensor)
    body = region_def()
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        inputs, inits = _split_variadic(operand_types, "init_values")
        if not inputs:
            raise ShapeError("expects at least one input")
        ets = _reduction_element_types(inputs, inits, regions)
        t = inputs[0]
        if not isinstance(t, RankedTensorType):
            return [UnrankedTensorType(et) for et in ets]
        for x in inputs[1:]:
            if not compatible(with_element_type(x, i1), with_element_type(t, i1)):
                raise ShapeError(f"all inputs must have the same shape, but got '{t}' and '{x}'")
        window, strides, base, wdil = _window_attrs(properties, t.rank, ("window_dimensions", "window_strides",
                                                                        "base_dilations", "window_dilations"))
        padding = prop_padding(properties, "padding", t.rank)
        shape = tuple(window_output_size(*args) for args in zip(t.shape, window, strides, padding, base, wdil))
        return [RankedTensorType(shape, et, None) for et in ets]

    @classmethod
    def build(cls, builder: Builder | None, inputs: Sequence[Value], init_values: Sequence[Value],
              window_dimensions: Sequence[int], body: Callable[[Builder, list[Value]], Sequence[Value]],
              window_strides: Sequence[int] | None = None, base_dilations: Sequence[int] | None = None,
              window_dilations: Sequence[int] | None = None, padding: Sequence[tuple[int, int]] | None = None,
              location: Location | None = None) -> Operation:
        props: dict[str, Attribute | None] = {
            "window_dimensions": i64_array(window_dimensions),
            "window_strides": None if window_strides is None else i64_array(window_strides),
            "base_dilations": None if base_dilations is None else i64_array(base_dilations),
            "window_dilations": None if window_dilations is None else i64_array(window_dilations),
            "padding": None if padding is None else padding_attr(padding)}
        arg_types = [scalar_tensor(element_type(v.type)) for v in init_values] * 2
        return cls.insert(builder, [*inputs, *init_values], props, regions=[build_region(arg_types, body)],
                          location=location)


class SelectAndScatterOp(StableHLOOp):
    """Picks one element per window of `operand` with `select`, and scatters `source` there,
    combining with `scatter` starting from `init_value`."""

    name = "stablehlo.select_and_scatter"
    operand = operand_def(AnyTensor)
    source = operand_def(AnyTensor)
    init_value = operand_def(AnyTensor)
    window_dimensions = opt_prop(I64Array)
    window_strides = opt_prop(I64Array)
    padding = opt_prop(I64Elements)
    result = result_def(AnyTensor)
    select = region_def()
    scatter = region_def()
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        t, source, init = operand_types
        check_same_element_type(t, init, "operand and init_value")
        if isinstance(t, RankedTensorType):
            window, strides = _window_attrs(properties, t.rank, ("window_dimensions", "window_strides"))
            padding = prop_padding(properties, "padding", t.rank)
            shape = tuple(window_output_size(d, w, s, p) for d, w, s, p in zip(t.shape, window, strides, padding))
            if isinstance(source, RankedTensorType) and (source.rank != len(shape) or
                                                         not all(map(dim_eq, source.shape, shape))):
                raise ShapeError(f"source '{source}' must have the shape of the windows of operand '{t}', "
                                 f"{shape_text(shape)}")
        if len(regions) == 2:
            scalar = scalar_tensor(element_type(t))
            check_body(regions[0], "select", [scalar, scalar], result_types=[scalar_tensor(i1)])
            reducer_types(regions[1], "scatter", [element_type(source)])
        return [t]


class SortOp(StableHLOOp):
    """Sorts `inputs` together along `dimension` by the `comparator` region (`is_stable` keeps the
    order of equal elements)."""

    name = "stablehlo.sort"
    inputs = var_operand(AnyTensor)
    dimension = opt_prop(I64Attr)
    is_stable = opt_prop(BoolAttr_)
    results_ = var_result(AnyTensor)
    comparator = region_def()
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        if not operand_types:
            raise ShapeError("expects at least one input")
        first = operand_types[0]
        for t in operand_types[1:]:
            if not compatible(with_element_type(t, i1), with_element_type(first, i1)):
                raise ShapeError(f"all inputs must have the same shape, but got '{first}' and '{t}'")
        d = prop_int(properties, "dimension", -1)
        if isinstance(first, RankedTensorType) and not -first.rank <= d < max(first.rank, 1):
            raise ShapeError(f"dimension {d} is out of range for inputs '{first}'")
        if regions:
            args = [scalar_tensor(element_type(t)) for t in operand_types for _ in (0, 1)]
            check_body(regions[0], "comparator", args, result_types=[scalar_tensor(i1)])
        return list(operand_types)

    @classmethod
    def build(cls, builder: Builder | None, inputs: Sequence[Value], dimension: int,
              comparator: Callable[[Builder, list[Value]], Sequence[Value]], is_stable: bool = False,
              location: Location | None = None) -> Operation:
        """`comparator(builder, [lhs0, rhs0, lhs1, rhs1, ...])` returns one `tensor<i1>`."""
        args = [scalar_tensor(element_type(v.type)) for v in inputs for _ in (0, 1)]
        props = {"dimension": i64_attr(dimension), "is_stable": BoolAttr(is_stable)}
        return cls.insert(builder, list(inputs), props, regions=[build_region(args, comparator)],
                          location=location)


class MapOp(StableHLOOp):
    """Applies the scalar `computation` elementwise over `inputs` (all `dimensions`)."""

    name = "stablehlo.map"
    inputs = var_operand(AnyTensor)
    dimensions = prop(I64Array)
    result = result_def(AnyTensor)
    computation = region_def()
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        if not operand_types:
            raise ShapeError("expects at least one input")
        first = operand_types[0]
        et = element_type(first)
        if regions:
            rets = check_body(regions[0], "computation", [scalar_tensor(element_type(t)) for t in operand_types], 1)
            et = element_type(rets[0])
        return [with_element_type(first, et)]
