"""Errors of the executors: argument checking, missing rules and kernels, bad entries."""

# ruff: noqa: E501  (the tests embed MLIR text, whose lines are long)

from __future__ import annotations

import numpy as np
import pytest

import loom.ir
from loom.backend import ArgumentError, ExecutionError, MissingRuleError
from loom.runtime.executable import compile as loom_compile
from loom.runtime.executable import execute

EXECUTORS = ("compiled", "interpreter")

ADD = '''"builtin.module"() ({
  "func.func"() <{arg_attrs = [{jax.arg_info = "x"}, {}], function_type = (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>, sym_name = "main"}> ({
  ^bb0(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>):
    %0 = "stablehlo.add"(%arg0, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    "func.return"(%0) : (tensor<4xf32>) -> ()
  }) : () -> ()
}) : () -> ()
'''

X = np.ones(4, np.float32)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_wrong_argument_count(executor):
    f = loom_compile(ADD, executor=executor)
    with pytest.raises(ArgumentError, match=r"@main takes 2 arguments, got 1"):
        f(X)
    with pytest.raises(ArgumentError, match=r"got 3"):
        f(X, X, X)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_wrong_shape_names_the_argument_and_both_types(executor):
    f = loom_compile(ADD, executor=executor)
    with pytest.raises(ArgumentError) as info:
        f(np.ones(3, np.float64), X)
    assert "argument 0 ('x')" in str(info.value)
    assert "expected tensor<4xf32>, got float64[3]" in str(info.value)
    with pytest.raises(ArgumentError, match=r"argument 1 expected tensor<4xf32>, got float32\[2,2\]"):
        f(X, np.ones((2, 2), np.float32))


@pytest.mark.parametrize("executor", EXECUTORS)
def test_wrong_dtype(executor):
    f = loom_compile(ADD, executor=executor)
    with pytest.raises(ArgumentError, match=r"argument 1 expected tensor<4xf32>, got int32\[4\]"):
        f(X, np.ones(4, np.int32))
    with pytest.raises(ArgumentError, match=r"expected tensor<4xf32>, got complex128\[4\]"):
        f(X, [1j, 2, 3, 4])  # a list converts only when no kind is lost


def test_argument_error_is_a_type_error():
    with pytest.raises(TypeError):
        execute(ADD, X, "not an array")


UNKNOWN_OP = '''"builtin.module"() ({
  "func.func"() <{function_type = (tensor<2xf32>) -> tensor<2xf32>, sym_name = "main"}> ({
  ^bb0(%arg0: tensor<2xf32>):
    %0 = "mydialect.frobnicate"(%arg0) : (tensor<2xf32>) -> tensor<2xf32>
    "func.return"(%0) : (tensor<2xf32>) -> ()
  }) : () -> ()
}) : () -> ()
'''


def test_missing_rule_names_the_op_and_the_executor():
    module = loom.ir.parse(UNKNOWN_OP, allow_unregistered=True)
    with pytest.raises(MissingRuleError, match=r"the compiled executor has no rule for op 'mydialect.frobnicate'"):
        loom_compile(module)
    f = loom_compile(module, executor="interpreter")
    with pytest.raises(MissingRuleError, match=r"the interpreter has no rule for op 'mydialect.frobnicate'"):
        f(np.ones(2, np.float32))


CUSTOM_CALL = '''"builtin.module"() ({
  "func.func"() <{function_type = (tensor<i1>, tensor<2xf32>) -> tensor<2xf32>, sym_name = "main"}> ({
  ^bb0(%arg0: tensor<i1>, %arg1: tensor<2xf32>):
    %0 = "stablehlo.if"(%arg0) ({
      %1 = "stablehlo.custom_call"(%arg1) <{call_target_name = "no_such_kernel"}> : (tensor<2xf32>) -> tensor<2xf32>
      "stablehlo.return"(%1) : (tensor<2xf32>) -> ()
    }, {
      "stablehlo.return"(%arg1) : (tensor<2xf32>) -> ()
    }) : (tensor<i1>) -> tensor<2xf32>
    "func.return"(%0) : (tensor<2xf32>) -> ()
  }) : () -> ()
}) : () -> ()
'''


@pytest.mark.parametrize("executor", EXECUTORS)
def test_custom_call_without_kernel_fails_only_when_run(executor):
    f = loom_compile(CUSTOM_CALL, executor=executor)
    x = np.ones(2, np.float32)
    np.testing.assert_array_equal(f(np.array(False), x), x)  # the branch with the call is not taken
    with pytest.raises(MissingRuleError, match=r"no kernel registered for custom_call target 'no_such_kernel'"):
        f(np.array(True), x)


SHAPE_ASSERTION = '''"builtin.module"() ({
  "func.func"() <{function_type = (tensor<i1>, tensor<i64>) -> tensor<i64>, sym_name = "main"}> ({
  ^bb0(%arg0: tensor<i1>, %arg1: tensor<i64>):
    "stablehlo.custom_call"(%arg0, %arg1) <{api_version = 2 : i32, call_target_name = "shape_assertion", has_side_effect = true}> {error_message = "dimension was {0}"} : (tensor<i1>, tensor<i64>) -> ()
    "func.return"(%arg1) : (tensor<i64>) -> ()
  }) : () -> ()
}) : () -> ()
'''


@pytest.mark.parametrize("executor", EXECUTORS)
def test_shape_assertion_custom_call(executor):
    f = loom_compile(SHAPE_ASSERTION, executor=executor)
    assert f(np.array(True), np.array(3)) == 3
    with pytest.raises(ExecutionError, match="dimension was 7"):
        f(np.array(False), np.array(7))


def test_unknown_executor_and_entry():
    with pytest.raises(ValueError, match="unknown executor 'jit'"):
        loom_compile(ADD, executor="jit")
    for executor in EXECUTORS:
        with pytest.raises(ExecutionError, match="no function @nope"):
            loom_compile(ADD, entry="nope", executor=executor)
