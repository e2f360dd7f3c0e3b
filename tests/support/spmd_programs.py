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
    `"func.return"(...)`. Arguments and results are marked `mhlo.sharding = "{manual}"`, so
    XLA runs the module as the per-device program it is (`run_xla_per_device`)."""
    args = ", ".join(f"%arg{i}: {t}" for i, t in enumerate(arg_types))
    sig = f"({', '.join(arg_types)}) -> ({', '.join(result_types)})"
    lines = "\n".join(f"      {line}" for line in body)
    # every value per-device ("manual", as XLA calls it), so XLA runs the text as it is
    manual = '{mhlo.sharding = "{manual}"}'
    attrs = "".join(f"{name} = [{', '.join([manual] * len(types))}], "
                    for name, types in (("arg_attrs", arg_types), ("res_attrs", result_types)) if types)
    return (f'"builtin.module"() ({{\n  "func.func"() <{{{attrs}function_type = {sig}, sym_name = "main"}}> ({{\n'
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


XLA_PER_DEVICE = """
import json, sys, numpy as np, jax, jax.extend as jex
from jaxlib import xla_client
backend = jex.backend.get_backend("cpu")
devices = backend.local_devices()
out = []
for text, per_device_args in json.loads(sys.stdin.read()):
    n = len(per_device_args)
    options = jex.backend.get_compile_options(num_replicas=1, num_partitions=n)
    exe = backend.compile_and_load(text, executable_devices=xla_client.DeviceList(tuple(devices[:n])),
                                   compile_options=options)
    mesh = jax.sharding.Mesh(np.array(devices[:n]), ("x",))
    args = []
    for i in range(len(per_device_args[0])):
        pieces = [np.array(a[i][0], a[i][1]).reshape(a[i][2]) for a in per_device_args]
        shape = (n * pieces[0].shape[0],) + pieces[0].shape[1:]
        args.append(jax.make_array_from_single_device_arrays(
            shape, jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("x")),
            [jax.device_put(p, d) for p, d in zip(pieces, devices)]))
    results = exe.execute_sharded(args).disassemble_into_single_device_arrays()
    out.append([[[np.asarray(r[p]).tolist(), str(np.asarray(r[p]).dtype), list(np.shape(r[p]))] for r in results]
                for p in range(n)])
print(json.dumps(out))
"""


def run_xla_per_device(cases: Sequence[tuple[str, Sequence[Sequence[np.ndarray]]]]) -> list[list[list[np.ndarray]]]:
    """Run each per-device module text on XLA's CPU backend with one partition per fake device
    (every value manual: XLA runs the program as it is, collectives included), partition p on
    `per_device_args[p]`; the results per case, per partition (one subprocess for all)."""
    payload = json.dumps([[text, [[[np.asarray(a).tolist(), str(np.asarray(a).dtype), list(np.shape(a))]
                                   for a in args] for args in per_device]] for text, per_device in cases])
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8", JAX_PLATFORMS="cpu")
    done = subprocess.run([sys.executable, "-c", XLA_PER_DEVICE], input=payload, env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    if done.returncode != 0:
        raise AssertionError(f"XLA failed:\n{done.stderr[-4000:]}")
    return [[[np.array(v, d).reshape(s) for v, d, s in results] for results in case]
            for case in json.loads(done.stdout.strip().splitlines()[-1])]
