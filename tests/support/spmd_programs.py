"""Per-device (partitioned) programs written by hand, in the generic form JAX's shard_map lowering
prints: collectives with `replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>`, a
`channel_handle` and `use_global_device_ids`; and a runner of scripts in a subprocess with 8 fake
XLA CPU devices (the oracle for meshes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

CHANNEL = "channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>"


def ids(rows: Sequence[Sequence[int]]) -> str:
    """`dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>` (rows of equal length)."""
    rows = [list(r) for r in rows]
    width = len(rows[0]) if rows else 0
    return f"dense<{rows}> : tensor<{len(rows)}x{width}xi64>"


def groups_attr(groups: Sequence[Sequence[int]] | None, channel: bool = True, global_ids: bool = True) -> str:
    """The process-group attributes: `replica_groups` (None: `dense<>`-free empty groups), and the
    channel handle and use_global_device_ids when asked."""
    parts = [CHANNEL] if channel else []
    parts.append(f"replica_groups = {ids(groups)}" if groups else "replica_groups = dense<> : tensor<0x0xi64>")
    if global_ids:
        parts.append("use_global_device_ids")
    return ", ".join(parts)


def tensor(shape: Sequence[int], element: str) -> str:
    return f"tensor<{'x'.join(map(str, shape))}{'x' if shape else ''}{element}>"


def reducer(body_ops: Sequence[str], element: str) -> str:
    """A reducer region over %lhs, %rhs of `tensor<element>`. `body_ops`: lines defining values,
    the last one's result `%r` is returned."""
    t = f"tensor<{element}>"
    lines = "\n".join(f"        {line}" for line in body_ops)
    return (f"({{\n      ^bb0(%lhs: {t}, %rhs: {t}):\n{lines}\n"
            f"        \"stablehlo.return\"(%r) : ({t}) -> ()\n      }})")


def binary_reducer(op: str, element: str) -> str:
    """The reducer `return op(lhs, rhs)`."""
    t = f"tensor<{element}>"
    return reducer([f'%r = "stablehlo.{op}"(%lhs, %rhs) : ({t}, {t}) -> {t}'], element)


def module(num_partitions: int, arg_types: Sequence[str], result_types: Sequence[str], body: Sequence[str]) -> str:
    """A module with `func.func @main(%arg0, ...)`; `body` lines end with their own
    `"func.return"(...)`."""
    args = ", ".join(f"%arg{i}: {t}" for i, t in enumerate(arg_types))
    sig = f"({', '.join(arg_types)}) -> ({', '.join(result_types)})"
    lines = "\n".join(f"      {line}" for line in body)
    return (f'"builtin.module"() ({{\n  "func.func"() <{{function_type = {sig}, sym_name = "main"}}> ({{\n'
            f"    ^bb0({args}):\n{lines}\n  }}) : () -> ()\n}}) {{mhlo.num_partitions = {num_partitions} : i32, "
            "mhlo.num_replicas = 1 : i32} : () -> ()\n")


def one_op(num_partitions: int, op: str, attrs: str, in_type: str, out_type: str, region: str = "") -> str:
    """A module whose @main applies one op to its one argument and returns the result."""
    return module(num_partitions, [in_type], [out_type], [
        f'%0 = "stablehlo.{op}"(%arg0) <{{{attrs}}}> {region} : ({in_type}) -> {out_type}',
        f'"func.return"(%0) : ({out_type}) -> ()'])


def mesh_groups(shape: Sequence[int], axes: Sequence[int]) -> list[list[int]]:
    """The partition groups of a row-major mesh of `shape` along mesh dimensions `axes` (as JAX
    writes them for a collective over those axes): partitions that differ only along `axes`."""
    ids_ = np.arange(int(np.prod(shape))).reshape(shape)
    others = [d for d in range(len(shape)) if d not in axes]
    moved = np.transpose(ids_, others + list(axes))
    return moved.reshape(-1, int(np.prod([shape[a] for a in axes]))).tolist()


def run_with_devices(script: str, env: dict[str, str] | None = None, timeout: float = 120) -> Any:
    """Run a Python `script` in a fresh interpreter with 8 fake XLA CPU devices (and `env`);
    return the JSON it prints on its last line."""
    full_env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8", JAX_PLATFORMS="cpu",
                    **(env or {}))
    done = subprocess.run([sys.executable, "-c", script], env=full_env, capture_output=True, text=True,
                          timeout=timeout, check=False)
    if done.returncode != 0:
        raise AssertionError(f"the subprocess failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])
