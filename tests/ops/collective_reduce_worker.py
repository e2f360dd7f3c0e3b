"""What each process of the multi-process collective_reduce test runs (launched by
tests/runtime/distributed_worker.py's bounded launcher): one partition of the spec's example."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

PROGRAM = """module attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func @main(%x: tensor<1x2xi64>, %root: tensor<1xi32>) -> (tensor<1x2xi64>, tensor<1x2xi64>) {
    %first = "stablehlo.collective_reduce"(%x) ({
      ^bb0(%a: tensor<i64>, %b: tensor<i64>):
        %0 = stablehlo.add %a, %b : tensor<i64>
        stablehlo.return %0 : tensor<i64>
    }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>,
        channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, use_global_device_ids}
      : (tensor<1x2xi64>) -> tensor<1x2xi64>
    %dynamic = "stablehlo.collective_reduce"(%x, %root) ({
      ^bb0(%a: tensor<i64>, %b: tensor<i64>):
        %0 = stablehlo.maximum %a, %b : tensor<i64>
        stablehlo.return %0 : tensor<i64>
    }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>,
        channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>, use_global_device_ids, has_dynamic_root}
      : (tensor<1x2xi64>, tensor<1xi32>) -> tensor<1x2xi64>
    return %first, %dynamic : tensor<1x2xi64>, tensor<1x2xi64>
  }
}"""


def operand(rank: int) -> np.ndarray:
    """The spec's example: [[1, 2]], [[3, 4]], [[5, 6]], [[7, 8]]."""
    return np.array([[2 * rank + 1, 2 * rank + 2]], np.int64)


def scenario_spec_example(rank: int, world: int) -> dict[str, Any]:
    from loom.runtime.distributed import run_partitioned
    args = [operand(rank), np.array([3], np.int32)]
    return {executor: [np.asarray(r).tolist() for r in run_partitioned(PROGRAM, args, executor=executor)]
            for executor in ("compiled", "interpreter")}


SCENARIOS: dict[str, Callable[[int, int], Any]] = {"spec_example": scenario_spec_example}
