"""The examples of the StableHLO specification, op by op, in every executor against the spec's own
results. The examples are data (tests/data/stablehlo_spec_examples/spec_examples.json, extracted
from docs/spec.md of openxla/stablehlo by extract.py there, which names the spec's commit)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support.executors import EXECUTORS, module, to_numpy

from loom.backend.common import dtype_of
from loom.host import TOKEN, register_infeed
from loom.ir.parser import Parser, parse
from loom.ir.types import TupleType, Type
from loom.runtime.communicator import PartitionError
from loom.runtime.executable import execute
from loom.runtime.local import run_spmd

DATA = Path(__file__).parent.parent / "data" / "stablehlo_spec_examples" / "spec_examples.json"
RECORD = json.loads(DATA.read_text())
CASES = [e for e in RECORD["examples"] if "program" in e]
ONE_PROCESS = [c for c in CASES if "processes" not in c]
# Examples with values per process (replica, partition): all of them run several replicas of one
# partition, and their ops are cross-replica (no channel, or channel handle 0). loom runs one
# replica of several partitions (loom.runtime.local.run_spmd), so there they are an error naming
# the replica (test_per_process_examples_need_replicas), and their ops are in NOT_RUNNABLE.
PER_PROCESS = [c for c in CASES if "processes" in c]
NEEDS_REPLICAS = "values per replica (several replicas, one partition); loom runs one replica"

# Ops whose every spec example is no single-device program with inputs and a result: each named
# with the reason (test_not_runnable_lists_exactly_the_ops_without_a_program checks the list).
NOT_RUNNABLE = {
    "async_start": "the example (an async all_gather on 8 devices) shows no values",
    "async_done": "the example (async_start + async_done of an all_gather on 8 devices) shows no values",
    "all_gather": NEEDS_REPLICAS,
    "all_reduce": NEEDS_REPLICAS,
    "all_to_all": NEEDS_REPLICAS,
    "collective_broadcast": NEEDS_REPLICAS,
    "collective_permute": NEEDS_REPLICAS,
    "reduce_scatter": NEEDS_REPLICAS,
    "collective_reduce": "the example is no valid op: it lacks its reduction body, a comma and a `<`",
    "composite": "the example calls a decomposition @my_op it does not define, and shows no values",
    "custom_call": "the example calls a target `foo` it does not define, and shows no values",
    "outfeed": "the example gives neither its operand nor its token, and shows no values",
    "send": "the example gives neither its operand nor its token, and shows no values (it needs a peer)",
    "recv": "the example gives no token and shows no values (it needs a peer)",
    "partition_id": "the example shows no result value (one per partition)",
    "replica_id": "the example shows no result value (one per replica)",
}

# Ops whose result the spec leaves to the implementation: its example's values are one possible
# outcome, so the result is checked for its type and range [low, high) instead.
IMPLEMENTATION_DEFINED = {
    "rng": ("UNIFORM draws are implementation-defined; the example draws from [0, 2)", (0, 2)),
}

VALUE_TOKEN = re.compile(r"\s*(\[|\]|\(|\)|,|true|false|[-+]?0x[0-9A-Fa-f]+|[-+]?(?:inf|nan)"
                   r"|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)")


class Bits(int):
    """A hexadecimal literal: the bit pattern of a float element."""


def parse_value(text: str) -> Any:
    """A spec value comment as nested lists of Python scalars: `[[1, 2], [3, 4]]`, `true`, `-inf`,
    `nan`, `0x7FF0000000000000` (bits); parentheses give a Python tuple, which the value's type
    reads as a complex number `(re, im)` or a tuple value `([1.0, 2.0], (3))`."""
    tokens, pos = [], 0
    while pos < len(text.rstrip()):
        m = VALUE_TOKEN.match(text, pos)
        if not m:
            raise ValueError(f"bad value at column {pos + 1}: {text!r}")
        tokens.append(m.group(1))
        pos = m.end()
    value, rest = parse_tokens(tokens)
    if rest:
        raise ValueError(f"trailing {rest} in {text!r}")
    return value


def parse_tokens(tokens: list[str]) -> tuple[Any, list[str]]:
    head, rest = tokens[0], tokens[1:]
    if head in "[(":
        items = []
        while rest[0] != ("]" if head == "[" else ")"):
            item, rest = parse_tokens(rest)
            items.append(item)
            rest = rest[1:] if rest[0] == "," else rest
        return (tuple(items) if head == "(" else items), rest[1:]
    if head in ("true", "false"):
        return head == "true", rest
    if "0x" in head.lower():
        return Bits(int(head, 16)), rest
    if re.fullmatch(r"[-+]?\d+", head):
        return int(head), rest
    return float(head), rest


def spec_value(text: str, t: Type) -> Any:
    """A value comment of the spec as a value of type `t` (a token is written as its type)."""
    return TOKEN if text == "!stablehlo.token" else to_value(parse_value(text), t)


def to_value(value: Any, t: Type) -> Any:
    """`value` (from parse_value) as a value of type `t`: a numpy array, or a tuple for a tuple type."""
    if isinstance(t, TupleType):
        items = value if isinstance(value, tuple) else (value,)
        return tuple(to_value(v, et) for v, et in zip(items, t.types, strict=True))
    dtype = dtype_of(t)
    if dtype.kind == "c":
        value = complex_leaves(value)
    flat = np.asarray(value, dtype=object).ravel()
    if any(isinstance(v, Bits) for v in flat):  # a bit pattern: the element with those bits
        bits = np.dtype(f"u{dtype.itemsize}")
        flat = np.array([np.array(v, bits).view(dtype) if isinstance(v, Bits) else dtype.type(v) for v in flat], dtype)
    array = np.array(flat.tolist(), dtype=dtype).reshape(np.shape(value))
    # The spec writes a one-element tensor as its element (`(2.5, 0.0)` for tensor<1xcomplex<f32>>).
    return array.reshape(t.shape) if array.ndim == 0 and array.size == int(np.prod(t.shape)) else array


def complex_leaves(value: Any) -> Any:
    if isinstance(value, tuple):
        return complex(*value)
    return [complex_leaves(v) for v in value] if isinstance(value, list) else value


def parse_type(text: str) -> Type:
    return Parser(text).parse_type()


def case_id(case: dict) -> str:
    same = [c for c in CASES if c["op"] == case["op"]]
    return case["op"] if len(same) == 1 else f"{case['op']}-{same.index(case)}"


def test_examples_name_the_spec_commit() -> None:
    assert re.fullmatch(r"[0-9a-f]{40}", RECORD["spec"]["commit"])
    assert RECORD["spec"]["repository"] == "openxla/stablehlo"


def test_not_runnable_lists_exactly_the_ops_without_a_program() -> None:
    ops = {e["op"] for e in RECORD["examples"]}
    runnable = {c["op"] for c in ONE_PROCESS}
    assert set(NOT_RUNNABLE) == ops - runnable
    assert {c["op"] for c in PER_PROCESS} == {op for op, why in NOT_RUNNABLE.items() if why == NEEDS_REPLICAS}
    assert set(IMPLEMENTATION_DEFINED) <= runnable


def test_value_parser() -> None:
    assert parse_value("[[1, -2], [3, 4]]") == [[1, -2], [3, 4]]
    assert parse_value("[true, false]") == [True, False]
    assert to_value(parse_value("[(1.5, -2.0)]"), parse_type("tensor<1xcomplex<f32>>"))[0] == 1.5 - 2j
    assert parse_value("([1.0], (3))") == ([1.0], (3,))
    got = to_value(parse_value("[0xFFF0000000000000, -0.0, nan, inf]"), parse_type("tensor<4xf64>"))
    assert got[0] == -np.inf and np.signbit(got[1]) and np.isnan(got[2]) and got[3] == np.inf
    with pytest.raises(ValueError, match="column"):
        parse_value("[1, ?]")


@pytest.mark.parametrize("case", ONE_PROCESS, ids=case_id)
@pytest.mark.parametrize("executor,backend", EXECUTORS)
def test_spec_example(case: dict, executor: str, backend: str) -> None:
    text = module(case["program"])
    main = next(iter(parse(text).regions[0].blocks[0].ops))
    arg_types = [a.type for a in main.regions[0].blocks[0].args]
    args = [spec_value(a["value"], t) for a, t in zip(case["args"], arg_types)]
    queue = [parse_value(v) for v in case.get("infeed", [])]  # the host's feed, one per infeed op

    def feed(specs: Any, config: str) -> list[np.ndarray]:
        value = queue.pop(0)
        return [np.array(value, dtype=dtype).reshape(shape) for shape, dtype in specs]

    previous = register_infeed(feed)
    try:
        got = execute(text, *args, executor=executor, backend=backend)
    finally:
        register_infeed(previous)
    got = to_numpy(got) if got is not TOKEN else got
    result_types = main.function_type.value.results
    got = got if len(result_types) > 1 else (got,)
    assert len(got) == len(case["results"])
    for g, want_spec, t in zip(got, case["results"], result_types):
        assert_matches(g, spec_value(want_spec["value"], t),
                       f"{case['op']} {want_spec['name']} in {executor}/{backend}", case["op"])


@pytest.mark.parametrize("case", PER_PROCESS, ids=case_id)
@pytest.mark.parametrize("executor", ["compiled", "interpreter"])
def test_per_process_examples_need_replicas(case: dict, executor: str) -> None:
    """Run with one process per replica as partitions, the example is refused, naming a replica."""
    text = module(case["program"])
    main = next(iter(parse(text).regions[0].blocks[0].ops))
    arg_types = [a.type for a in main.regions[0].blocks[0].args]
    per_device_args = [[spec_value(a["values"][p], t) for a, t in zip(case["args"], arg_types)]
                       for p in range(len(case["processes"]))]
    with pytest.raises(PartitionError, match=r"replica (id )?\d+.*but there is one replica"):
        run_spmd(text, per_device_args, executor=executor, timeout=30)


def assert_matches(got: Any, want: Any, where: str, op: str) -> None:
    """`got` equals the spec's `want`: exactly for integers and booleans, closely for floats."""
    if want is TOKEN:
        assert got is TOKEN, where
        return
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), where
        for g, w in zip(got, want):
            assert_matches(g, w, where, op)
        return
    assert got.shape == want.shape and got.dtype == want.dtype, (where, got.shape, got.dtype, want.shape, want.dtype)
    if op in IMPLEMENTATION_DEFINED:
        low, high = IMPLEMENTATION_DEFINED[op][1]
        assert ((low <= got) & (got < high)).all(), (where, got)
    elif want.dtype.kind in "fc":
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7, equal_nan=True, err_msg=where)
    else:
        np.testing.assert_array_equal(got, want, err_msg=where)
