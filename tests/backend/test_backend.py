"""The executors on hand-written StableHLO (ops JAX does not emit: if, tuple, map, custom_call,
integer power, logistic, ...), the compiled executor's fallbacks, and the Python API.

Where jaxlib is installed, each program also runs on XLA and the results must agree.
"""

# ruff: noqa: E501  (the tests embed MLIR text, whose lines are long)

from __future__ import annotations

import numpy as np
import pytest
from support.oracles import run_xla
from support.paths import CORPUS as CORPUS_ROOT

import loom.ir
from loom.backend import register_custom_call
from loom.backend.custom_calls import CUSTOM_CALLS
from loom.ops import reductions
from loom.runtime.executable import compile as loom_compile
from loom.runtime.executable import execute

try:
    import jax
except ImportError:  # pragma: no cover - jax is a test extra
    jax = None


def as_list(out):
    return list(out) if isinstance(out, tuple) else [out]


def check(text: str, *args, xla: bool = True, expected=None, tol: float = 1e-6) -> list[np.ndarray]:
    """Run `text` in both executors (and on XLA); they must agree; return the results."""
    module = loom.ir.parse(text)
    module.verify()
    compiled = as_list(loom_compile(module)(*args))
    interpreted = as_list(loom_compile(module, executor="interpreter")(*args))
    references = [("interpreter", interpreted)]
    if expected is not None:
        references.append(("expected", expected))
    if xla and jax is not None:
        references.append(("xla", run_xla(loom.ir.print(module, generic=True), args)))
    for who, ref in references:
        assert len(ref) == len(compiled)
        for got, want in zip(compiled, ref):
            want = np.asarray(want)
            assert got.dtype == want.dtype and got.shape == want.shape, (who, got, want)
            if got.dtype.kind in "fc":
                np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True, err_msg=who)
            else:
                np.testing.assert_array_equal(got, want, err_msg=who)
    return compiled


def module(body: str, signature: str, results: str) -> str:
    return (f'"builtin.module"() ({{\n  "func.func"() <{{function_type = {signature}, sym_name = "main"}}> ({{\n'
            f'  ^bb0{results}:\n{body}\n  }}) : () -> ()\n}}) : () -> ()\n')


F32 = np.float32


def test_if_with_captured_values():
    text = module('''    %c = "stablehlo.constant"() <{value = dense<2.0> : tensor<3xf32>}> : () -> tensor<3xf32>
    %0 = "stablehlo.if"(%arg0) ({
      %1 = "stablehlo.multiply"(%arg1, %c) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
      "stablehlo.return"(%1) : (tensor<3xf32>) -> ()
    }, {
      %2 = "stablehlo.negate"(%arg1) : (tensor<3xf32>) -> tensor<3xf32>
      "stablehlo.return"(%2) : (tensor<3xf32>) -> ()
    }) : (tensor<i1>) -> tensor<3xf32>
    "func.return"(%0) : (tensor<3xf32>) -> ()''', "(tensor<i1>, tensor<3xf32>) -> tensor<3xf32>",
                  "(%arg0: tensor<i1>, %arg1: tensor<3xf32>)")
    x = np.array([1, -2, 3], F32)
    check(text, np.array(True), x, expected=[x * 2])
    check(text, np.array(False), x, expected=[-x])


def test_case_index_out_of_range_runs_last_branch():
    text = module('''    %0 = "stablehlo.case"(%arg0) ({
      %c = "stablehlo.constant"() <{value = dense<10> : tensor<i32>}> : () -> tensor<i32>
      "stablehlo.return"(%c) : (tensor<i32>) -> ()
    }, {
      %c = "stablehlo.constant"() <{value = dense<20> : tensor<i32>}> : () -> tensor<i32>
      "stablehlo.return"(%c) : (tensor<i32>) -> ()
    }, {
      %c = "stablehlo.constant"() <{value = dense<30> : tensor<i32>}> : () -> tensor<i32>
      "stablehlo.return"(%c) : (tensor<i32>) -> ()
    }) : (tensor<i32>) -> tensor<i32>
    "func.return"(%0) : (tensor<i32>) -> ()''', "(tensor<i32>) -> tensor<i32>", "(%arg0: tensor<i32>)")
    for index, want in [(0, 10), (1, 20), (2, 30), (3, 30), (-1, 30), (99, 30)]:
        check(text, np.array(index, np.int32), expected=[np.array(want, np.int32)])


def test_tuple_and_get_tuple_element():
    text = module('''    %t = "stablehlo.tuple"(%arg0, %arg1) : (tensor<2xf32>, tensor<i32>) -> tuple<tensor<2xf32>, tensor<i32>>
    %a = "stablehlo.get_tuple_element"(%t) <{index = 0 : i32}> : (tuple<tensor<2xf32>, tensor<i32>>) -> tensor<2xf32>
    %b = "stablehlo.get_tuple_element"(%t) <{index = 1 : i32}> : (tuple<tensor<2xf32>, tensor<i32>>) -> tensor<i32>
    "func.return"(%b, %a) : (tensor<i32>, tensor<2xf32>) -> ()''', "(tensor<2xf32>, tensor<i32>) -> (tensor<i32>, "
                  "tensor<2xf32>)", "(%arg0: tensor<2xf32>, %arg1: tensor<i32>)")
    x, i = np.array([1.5, 2.5], F32), np.array(7, np.int32)
    check(text, x, i, expected=[i, x])


def test_map():
    text = module('''    %0 = "stablehlo.map"(%arg0, %arg1) <{dimensions = array<i64: 0, 1>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %1 = "stablehlo.multiply"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      %2 = "stablehlo.add"(%1, %a) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%2) : (tensor<f32>) -> ()
    }) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    "func.return"(%0) : (tensor<2x3xf32>) -> ()''', "(tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>",
                  "(%arg0: tensor<2x3xf32>, %arg1: tensor<2x3xf32>)")
    x, y = np.arange(6, dtype=F32).reshape(2, 3), np.full((2, 3), 2, F32)
    check(text, x, y, expected=[x * y + x])


def _binary(op: str, dtype: str) -> str:
    t = f"tensor<6x{dtype}>"
    return module(f'''    %0 = "stablehlo.{op}"(%arg0, %arg1) : ({t}, {t}) -> {t}
    "func.return"(%0) : ({t}) -> ()''', f"({t}, {t}) -> {t}", f"(%arg0: {t}, %arg1: {t})")


@pytest.mark.parametrize("dtype,np_dtype", [("i32", np.int32), ("i8", np.int8), ("i64", np.int64), ("ui8", np.uint8)])
def test_integer_power(dtype, np_dtype):
    signed = np.dtype(np_dtype).kind == "i"
    base = np.array([2, -2 if signed else 3, 1, -1 if signed else 0, 3, 7], np_dtype)
    exponent = np.array([3, 5, -4 if signed else 4, -3 if signed else 2, 0, 40], np_dtype)
    check(_binary("power", dtype), base, exponent)


def test_logistic_and_unary_chlo_free_forms():
    t = "tensor<5xf32>"
    text = module(f'''    %0 = "stablehlo.logistic"(%arg0) : ({t}) -> {t}
    %1 = "stablehlo.round_nearest_afz"(%arg0) : ({t}) -> {t}
    "func.return"(%0, %1) : ({t}, {t}) -> ()''', f"({t}) -> ({t}, {t})", f"(%arg0: {t})")
    x = np.array([-30.0, -2.5, 0.0, 0.5, 40.0], F32)
    check(text, x, expected=[1 / (1 + np.exp(-x.astype(np.float64))).astype(F32), np.array([-30, -3, 0, 1, 40], F32)])


def test_compare_total_order():
    t = "tensor<6xf32>"
    text = module(f'''    %0 = "stablehlo.compare"(%arg0, %arg1) <{{compare_type = #stablehlo<comparison_type TOTALORDER>, comparison_direction = #stablehlo<comparison_direction LT>}}> : ({t}, {t}) -> tensor<6xi1>
    "func.return"(%0) : (tensor<6xi1>) -> ()''', f"({t}, {t}) -> tensor<6xi1>", f"(%arg0: {t}, %arg1: {t})")
    nan = np.float32(np.nan)
    x = np.array([-0.0, 0.0, nan, -nan, -np.inf, 1.0], F32)
    y = np.array([0.0, -0.0, np.inf, -np.inf, -nan, nan], F32)
    check(text, x, y, expected=[np.array([True, False, False, True, False, True])])


def test_rng_bit_generator_philox_three_word_state():
    text = module('''    %0:2 = "stablehlo.rng_bit_generator"(%arg0) <{rng_algorithm = #stablehlo<rng_algorithm PHILOX>}> : (tensor<3xui64>) -> (tensor<3xui64>, tensor<5x3xui32>)
    "func.return"(%0#0, %0#1) : (tensor<3xui64>, tensor<5x3xui32>) -> ()''',
                  "(tensor<3xui64>) -> (tensor<3xui64>, tensor<5x3xui32>)", "(%arg0: tensor<3xui64>)")
    check(text, np.array([42, 2 ** 64 - 3, 7], np.uint64))


def _non_elementwise_reducer() -> str:
    # A reducer body with a reshape to another shape: not applicable to whole arrays at once.
    return module('''    %init = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
    %0 = "stablehlo.reduce"(%arg0, %init) <{dimensions = array<i64: 1>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.reshape"(%a) : (tensor<f32>) -> tensor<1xf32>
      %s = "stablehlo.reshape"(%r) : (tensor<1xf32>) -> tensor<f32>
      %1 = "stablehlo.add"(%s, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%1) : (tensor<f32>) -> ()
    }) : (tensor<3x4xf32>, tensor<f32>) -> tensor<3xf32>
    "func.return"(%0) : (tensor<3xf32>) -> ()''', "(tensor<3x4xf32>) -> tensor<3xf32>", "(%arg0: tensor<3x4xf32>)")


def test_reduce_with_non_elementwise_body_runs_through_the_interpreter():
    text = _non_elementwise_reducer()
    x = np.arange(12, dtype=F32).reshape(3, 4)
    check(text, x, expected=[x.sum(axis=1)])
    assert "interpreted_reduce" in loom_compile(text).source


def test_variadic_reduce_window_and_scatter():
    text = module('''    %z = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
    %o = "stablehlo.constant"() <{value = dense<1.0> : tensor<f32>}> : () -> tensor<f32>
    %0:2 = "stablehlo.reduce_window"(%arg0, %arg1, %z, %o) <{window_dimensions = array<i64: 2>, window_strides = array<i64: 1>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<f32>, %d: tensor<f32>):
      %1 = "stablehlo.add"(%a, %c) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      %2 = "stablehlo.multiply"(%b, %d) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%1, %2) : (tensor<f32>, tensor<f32>) -> ()
    }) : (tensor<5xf32>, tensor<5xf32>, tensor<f32>, tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>)
    %idx = "stablehlo.constant"() <{value = dense<[[1], [3], [1]]> : tensor<3x1xi32>}> : () -> tensor<3x1xi32>
    %3:2 = "stablehlo.scatter"(%arg0, %arg1, %idx, %arg2, %arg2) <{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<f32>, %d: tensor<f32>):
      %4 = "stablehlo.add"(%a, %c) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      %5 = "stablehlo.maximum"(%b, %d) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%4, %5) : (tensor<f32>, tensor<f32>) -> ()
    }) : (tensor<5xf32>, tensor<5xf32>, tensor<3x1xi32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<5xf32>, tensor<5xf32>)
    "func.return"(%0#0, %0#1, %3#0, %3#1) : (tensor<4xf32>, tensor<4xf32>, tensor<5xf32>, tensor<5xf32>) -> ()''',
                  "(tensor<5xf32>, tensor<5xf32>, tensor<3xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<5xf32>, "
                  "tensor<5xf32>)", "(%arg0: tensor<5xf32>, %arg1: tensor<5xf32>, %arg2: tensor<3xf32>)")
    x = np.array([1, 2, 3, 4, 5], F32)
    y = np.array([2, 3, 4, 5, 6], F32)
    u = np.array([10, 20, 30], F32)
    added = x.copy()
    added[1] += 40
    added[3] += 20
    check(text, x, y, u, expected=[x[:-1] + x[1:], y[:-1] * y[1:], added, np.array([2, 30, 4, 20, 6], F32)])


def test_sort_fallbacks(monkeypatch):
    # A two-key comparator (lexicographic) is not a single sort key: the n x n comparison matrix
    # is used, and above the size limit the interpreter.
    text = module('''    %0:2 = "stablehlo.sort"(%arg0, %arg1) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%a: tensor<i32>, %b: tensor<i32>, %c: tensor<f32>, %d: tensor<f32>):
      %lt = "stablehlo.compare"(%a, %b) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %eq = "stablehlo.compare"(%a, %b) <{comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %gt = "stablehlo.compare"(%c, %d) <{comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %and = "stablehlo.and"(%eq, %gt) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %or = "stablehlo.or"(%lt, %and) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      "stablehlo.return"(%or) : (tensor<i1>) -> ()
    }) : (tensor<6xi32>, tensor<6xf32>) -> (tensor<6xi32>, tensor<6xf32>)
    "func.return"(%0#0, %0#1) : (tensor<6xi32>, tensor<6xf32>) -> ()''', "(tensor<6xi32>, tensor<6xf32>) -> "
                  "(tensor<6xi32>, tensor<6xf32>)", "(%arg0: tensor<6xi32>, %arg1: tensor<6xf32>)")
    keys = np.array([2, 1, 2, 0, 1, 2], np.int32)
    values = np.array([0.5, 3.0, 1.5, 2.0, 4.0, -1.0], F32)
    expected = [np.array([0, 1, 1, 2, 2, 2], np.int32), np.array([2.0, 4.0, 3.0, 1.5, 0.5, -1.0], F32)]
    check(text, keys, values, expected=expected)
    assert "sort_pairwise" in loom_compile(text).source
    monkeypatch.setattr(reductions, "PAIRWISE_SORT_LIMIT", 4)
    fresh = loom.ir.parse(text)
    assert "interpreted_sort" in loom_compile(fresh).source
    for got, want in zip(loom_compile(fresh)(keys, values), expected):
        np.testing.assert_array_equal(got, want)


def test_select_and_scatter_with_nan_falls_back_to_the_interpreter():
    text = module('''    %z = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
    %0 = "stablehlo.select_and_scatter"(%arg0, %arg1, %z) <{padding = dense<[[0, 1]]> : tensor<1x2xi64>, window_dimensions = array<i64: 2>, window_strides = array<i64: 2>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %c = "stablehlo.compare"(%a, %b) <{comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      "stablehlo.return"(%c) : (tensor<i1>) -> ()
    }, {
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%s) : (tensor<f32>) -> ()
    }) : (tensor<5xf32>, tensor<3xf32>, tensor<f32>) -> tensor<5xf32>
    "func.return"(%0) : (tensor<5xf32>) -> ()''', "(tensor<5xf32>, tensor<3xf32>) -> tensor<5xf32>",
                  "(%arg0: tensor<5xf32>, %arg1: tensor<3xf32>)")
    source = np.array([10, 20, 30], F32)
    check(text, np.array([1, 3, 3, 2, 5], F32), source, expected=[np.array([0, 10, 20, 0, 30], F32)])
    check(text, np.array([np.nan, 1, 2, np.nan, 4], F32), source)


def test_custom_call_with_a_registered_kernel():
    register_custom_call("loom_test.axpy", lambda a, x, y: a * x + y)
    try:
        text = module('''    %0 = "stablehlo.custom_call"(%arg0, %arg1, %arg2) <{call_target_name = "loom_test.axpy"}> : (tensor<f32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    "func.return"(%0) : (tensor<3xf32>) -> ()''', "(tensor<f32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>",
                      "(%arg0: tensor<f32>, %arg1: tensor<3xf32>, %arg2: tensor<3xf32>)")
        a, x, y = np.array(2.0, F32), np.array([1, 2, 3], F32), np.array([1, 1, 1], F32)
        check(text, a, x, y, xla=False, expected=[np.array([3, 5, 7], F32)])
    finally:
        CUSTOM_CALLS.pop("loom_test.axpy")


# The Python API -----------------------------------------------------------------------------------

ADD = _binary("add", "f32")


def test_compile_caches_per_module_and_shows_source():
    m = loom.ir.parse(ADD)
    exe = loom_compile(m)
    assert loom_compile(m) is exe
    assert "np_add(" in exe.source and "def f_main" in exe.source
    x = np.arange(6, dtype=F32)
    np.testing.assert_array_equal(execute(m, x, x), x + x)
    np.testing.assert_array_equal(execute(ADD, x, x, executor="interpreter"), x + x)


def test_results_are_fresh_writeable_arrays():
    t = "tensor<3xf32>"
    text = module(f'''    %0 = "stablehlo.reshape"(%arg0) : ({t}) -> {t}
    %c = "stablehlo.constant"() <{{value = dense<1.0> : {t}}}> : () -> {t}
    "func.return"(%arg0, %0, %c) : ({t}, {t}, {t}) -> ()''', f"({t}) -> ({t}, {t}, {t})", f"(%arg0: {t})")
    x = np.arange(3, dtype=F32)
    for executor in ("compiled", "interpreter"):
        outs = loom_compile(text, executor=executor)(x)
        for out in outs:
            assert isinstance(out, np.ndarray) and out.flags.writeable
            assert not np.shares_memory(out, x)
        outs[2][0] = 5.0
        np.testing.assert_array_equal(loom_compile(text, executor=executor)(x)[2], np.ones(3, F32))


def test_entry_other_than_main_and_calls():
    text = '''"builtin.module"() ({
  "func.func"() <{function_type = (tensor<2xi32>) -> tensor<2xi32>, sym_name = "double"}> ({
  ^bb0(%arg0: tensor<2xi32>):
    %0 = "stablehlo.add"(%arg0, %arg0) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
    "func.return"(%0) : (tensor<2xi32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<2xi32>) -> tensor<2xi32>, sym_name = "quadruple"}> ({
  ^bb0(%arg0: tensor<2xi32>):
    %0 = "func.call"(%arg0) <{callee = @double}> : (tensor<2xi32>) -> tensor<2xi32>
    %1 = "func.call"(%0) <{callee = @double}> : (tensor<2xi32>) -> tensor<2xi32>
    "func.return"(%1) : (tensor<2xi32>) -> ()
  }) : () -> ()
}) : () -> ()
'''
    x = np.array([1, -3], np.int32)
    for executor in ("compiled", "interpreter"):
        np.testing.assert_array_equal(execute(text, x, entry="quadruple", executor=executor), 4 * x)


def test_python_scalars_and_lists_are_converted():
    x = np.arange(6, dtype=F32)
    np.testing.assert_array_equal(execute(ADD, x, [1, 2, 3, 4, 5, 6]), x + np.arange(1, 7, dtype=F32))


def test_interpreter_defines_reduce_order_element_by_element():
    # The interpreter folds a reduce element by element, so float sums follow that order exactly.
    text = _non_elementwise_reducer()
    x = np.array([[1e8, 1.0, -1e8, 1.0]] * 3, F32)
    out = loom_compile(text, executor="interpreter")(x)
    acc = np.float32(0)
    for v in x[0]:
        acc = np.float32(acc + v)
    np.testing.assert_array_equal(out, np.full(3, acc, F32))


# The JAX corpus (tests/corpus/generic/*jax*) -----------------------------------------------------

CORPUS = sorted((CORPUS_ROOT / "generic").glob("*_jax_*.mlir"))


def _random_inputs(func_type, rs, dynamic_size: int = 4) -> list[np.ndarray]:
    from loom.backend.common import dtype_of
    args = []
    for t in func_type.inputs:
        shape = tuple(dynamic_size if d < 0 else d for d in t.shape)
        dt = dtype_of(t)
        if dt.kind == "b":
            args.append(rs.rand(*shape) > 0.5)
        elif dt.kind in "iu":
            args.append(rs.randint(0, 6, shape).astype(dt))
        elif dt.kind == "c":
            args.append(np.asarray(rs.randn(*shape) + 1j * rs.randn(*shape)).astype(dt))
        else:
            args.append(np.asarray(rs.randn(*shape)).astype(dt))
    return args


@pytest.mark.parametrize("path", [p for p in CORPUS if "linalg" not in p.name], ids=lambda p: p.stem)
def test_corpus_executors_agree(path):
    """Every JAX program of the corpus (LAPACK custom calls aside) runs in both executors with
    the same results."""
    m = loom.ir.parse(path.read_text(), allow_unregistered=True)  # sdy ops: sharding metadata
    main = loom_compile(m)
    ftype = main.func.get_attr("function_type").value
    args = _random_inputs(ftype, np.random.RandomState(len(path.name)))
    compiled = as_list(main(*args))
    interpreted = as_list(loom_compile(m, executor="interpreter")(*args))
    for got, want in zip(compiled, interpreted):
        assert got.dtype == want.dtype and got.shape == want.shape
        if got.dtype.kind in "fcV":
            np.testing.assert_allclose(got.astype(np.complex128 if got.dtype.kind == "c" else np.float64),
                                       want.astype(np.complex128 if want.dtype.kind == "c" else np.float64),
                                       rtol=1e-3, atol=1e-3, equal_nan=True)
        else:
            np.testing.assert_array_equal(got, want)


def test_dynamic_shapes_from_jax_export():
    def load(suffix):
        (path,) = [p for p in CORPUS if p.name.endswith(suffix)]
        return loom.ir.parse(path.read_text())
    x = np.arange(6, dtype=np.float32)
    for executor in ("compiled", "interpreter"):
        np.testing.assert_array_equal(execute(load("_jax_export_dynamic_reshape_sum.mlir"), x, executor=executor),
                                      x.reshape(-1, 2).sum(axis=0))
        with pytest.raises(Exception, match="Division had remainder 1"):
            execute(load("_jax_export_dynamic_reshape_sum.mlir"), x[:5], executor=executor)
        i = np.array([4, 1, 7], np.int32)
        np.testing.assert_array_equal(execute(load("_jax_export_dynamic_iota_concat.mlir"), i, executor=executor),
                                      np.concatenate([i, np.arange(3, dtype=np.int32)]))
        a, w = np.ones((5, 4), np.float32), np.arange(12, dtype=np.float32).reshape(4, 3) / 20
        np.testing.assert_allclose(execute(load("_jax_export_dynamic_batch_matmul.mlir"), a, w, executor=executor),
                                   np.tanh(a @ w), rtol=1e-6)


# dot_general as one matmul over transposed views, splat constants ---------------------------------

def _dot_text(ls, rs, lb, rb, lc, rc, out, dtype="f32", out_dtype="f32"):
    def t(shape, d):
        return "tensor<" + "".join(f"{n}x" for n in shape) + d + ">"
    ints = lambda xs: "[" + ", ".join(map(str, xs)) + "]"  # noqa: E731
    dims = (f"#stablehlo.dot<lhs_batching_dimensions = {ints(lb)}, rhs_batching_dimensions = {ints(rb)}, "
            f"lhs_contracting_dimensions = {ints(lc)}, rhs_contracting_dimensions = {ints(rc)}>")
    a, b, o = t(ls, dtype), t(rs, dtype), t(out, out_dtype)
    return module(f'''    %0 = "stablehlo.dot_general"(%arg0, %arg1) <{{dot_dimension_numbers = {dims}}}> : ({a}, {b}) -> {o}
    "func.return"(%0) : ({o}) -> ()''', f"({a}, {b}) -> {o}", f"(%arg0: {a}, %arg1: {b})")


@pytest.mark.parametrize("ls,rs,lb,rb,lc,rc,spec,kernel", [
    ((5, 3), (5, 4), (), (), (0,), (0,), "ki,kj->ij", "matmul_tn"),        # the backward pass's dW
    ((3, 5), (4, 5), (), (), (1,), (1,), "ik,jk->ij", "matmul_nt"),        # its dx
    ((5, 3), (4, 5), (), (), (0,), (1,), "ki,jk->ij", "matmul_tt"),
    ((2, 3, 5), (2, 5, 4), (0,), (0,), (2,), (1,), "bik,bkj->bij", "np_matmul"),
    ((2, 5, 3), (2, 4, 5), (0,), (0,), (1,), (2,), "bki,bjk->bij", "matmul_tt"),
    ((2, 3, 5), (2, 4, 5), (0,), (0,), (2,), (2,), "bik,bjk->bij", "matmul_nt"),
    ((0, 3), (0, 4), (), (), (0,), (0,), "ki,kj->ij", "matmul_tn"),        # empty contraction: zeros
    ((2, 3, 5), (5, 2, 4), (0,), (1,), (2,), (0,), "bik,kbj->bij", "dot_general("),  # the general path
])
def test_dot_general_transposed_forms_are_one_matmul(ls, rs, lb, rb, lc, rc, spec, kernel):
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=ls).astype(F32), rng.normal(size=rs).astype(F32)
    want = np.einsum(spec, x.astype(np.float64), y.astype(np.float64)).astype(F32)
    text = _dot_text(ls, rs, lb, rb, lc, rc, want.shape)
    assert kernel in loom_compile(loom.ir.parse(text)).source
    check(text, x, y, expected=[want], tol=1e-5)


def test_dot_general_transposed_form_with_a_wider_result():
    # bf16 operands, f32 result: the operands are converted before the one matmul
    import ml_dtypes
    rng = np.random.default_rng(1)
    x = rng.normal(size=(6, 3)).astype(ml_dtypes.bfloat16)
    y = rng.normal(size=(6, 2)).astype(ml_dtypes.bfloat16)
    text = _dot_text((6, 3), (6, 2), (), (), (0,), (0,), (3, 2), "bf16", "f32")
    assert "matmul_transposed_as" in loom_compile(loom.ir.parse(text)).source
    want = x.astype(F32).T @ y.astype(F32)
    check(text, x, y, expected=[want], tol=1e-5)


def test_splat_constants_are_one_element_broadcast_lazily():
    t = "tensor<2x3xf32>"
    text = module(f'''    %c = "stablehlo.constant"() <{{value = dense<0.5> : {t}}}> : () -> {t}
    %z = "stablehlo.constant"() <{{value = dense<[[0.0, -0.0, 0.0], [0.0, 0.0, 0.0]]> : {t}}}> : () -> {t}
    %0 = "stablehlo.multiply"(%arg0, %c) : ({t}, {t}) -> {t}
    %1 = "stablehlo.add"(%0, %z) : ({t}, {t}) -> {t}
    %2 = "stablehlo.transpose"(%c) <{{permutation = array<i64: 1, 0>}}> : ({t}) -> tensor<3x2xf32>
    "func.return"(%1, %c, %2) : ({t}, {t}, tensor<3x2xf32>) -> ()''', f"({t}) -> ({t}, {t}, tensor<3x2xf32>)",
                  f"(%arg0: {t})")
    x = np.arange(6, dtype=F32).reshape(2, 3)
    exe = loom_compile(loom.ir.parse(text))
    assert "float32[2,3] = 0.5 (splat)" in exe.source  # the note names the constant's full type
    assert "float32[2,3] = 0.0 (splat)" not in exe.source  # -0.0 is a different value: no splat
    out = check(text, x, expected=[x * 0.5, np.full((2, 3), 0.5, F32), np.full((3, 2), 0.5, F32)])
    # a returned splat has its full shape, and is the caller's to write
    assert out[1].shape == (2, 3) and out[2].shape == (3, 2)
    out[1][0, 0] = 7.0
    np.testing.assert_array_equal(exe(x)[1], np.full((2, 3), 0.5, F32))
