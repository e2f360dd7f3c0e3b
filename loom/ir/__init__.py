"""loom's IR core: values, operations, blocks, regions, types, attributes, text and verifier."""

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
    FlatSymbolRefAttr,
    FloatAttr,
    FusedLoc,
    IntegerAttr,
    Location,
    NameLoc,
    OpaqueBuiltinAttr,
    StringAttr,
    SymbolRefAttr,
    TypeAttr,
    UnitAttr,
    UnknownLoc,
)
from loom.ir.builder import Builder, InsertionPoint
from loom.ir.core import Block, BlockArgument, IRError, Operation, OpResult, Region, Use, Value
from loom.ir.diagnostics import LoomError, ParseError, VerifyError
from loom.ir.opdef import (
    Commutative,
    ConstantLike,
    Dialect,
    HasParent,
    IsolatedFromAbove,
    NoTerminator,
    OpBase,
    Pure,
    SameOperandsAndResultType,
    Symbol,
    SymbolTable,
    Terminator,
    Trait,
    has_trait,
    operand,
    opt_operand,
    opt_prop,
    prop,
    region_def,
    register_dialect,
    result_def,
    successor_def,
    var_operand,
    var_result,
)
from loom.ir.parser import parse
from loom.ir.printer import print_op
from loom.ir.types import (
    DYNAMIC,
    ComplexType,
    DialectType,
    FloatType,
    FunctionType,
    IndexType,
    IntegerType,
    MemRefType,
    NoneType,
    RankedTensorType,
    TupleType,
    Type,
    UnrankedMemRefType,
    UnrankedTensorType,
    VectorType,
    bf16,
    f16,
    f32,
    f64,
    i1,
    i8,
    i16,
    i32,
    i64,
    index,
    none,
    tensor,
)


def print(op: Operation, generic: bool = False, debuginfo: bool = False) -> str:  # noqa: A001
    """Text of `op` as MLIR prints it: custom forms where ops define them unless `generic`,
    locations only with `debuginfo`."""
    return print_op(op, generic=generic, debuginfo=debuginfo)


__all__ = [
    "DYNAMIC", "bf16", "f16", "f32", "f64", "i1", "i8", "i16", "i32", "i64", "index", "none", "tensor",
    "UNIT", "UNKNOWN_LOC", "ArrayAttr", "Attribute", "Block", "BlockArgument", "BoolAttr", "Builder", "CallSiteLoc",
    "Commutative", "ComplexType", "ConstantLike", "DenseArrayAttr", "DenseElementsAttr", "DenseResourceAttr",
    "DenseStringElementsAttr", "Dialect", "DialectAttr", "DialectType", "DictionaryAttr", "FileLineColLoc",
    "FlatSymbolRefAttr", "FloatAttr", "FloatType", "FunctionType", "FusedLoc", "HasParent", "IRError", "IndexType",
    "InsertionPoint", "IntegerAttr", "IntegerType", "IsolatedFromAbove", "Location", "LoomError", "MemRefType",
    "NameLoc", "NoTerminator", "NoneType", "OpBase", "OpResult", "OpaqueBuiltinAttr", "Operation", "ParseError",
    "Pure", "RankedTensorType", "Region", "SameOperandsAndResultType", "StringAttr", "Symbol", "SymbolRefAttr",
    "SymbolTable", "Terminator", "Trait", "TupleType", "Type", "TypeAttr", "UnitAttr", "UnknownLoc",
    "UnrankedMemRefType", "UnrankedTensorType", "Use", "Value", "VectorType", "VerifyError", "has_trait", "operand",
    "opt_operand", "opt_prop", "parse", "print", "print_op", "prop", "region_def", "register_dialect", "result_def",
    "successor_def", "var_operand", "var_result",
]
