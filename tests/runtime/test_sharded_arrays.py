"""Many CPU devices (LOOM_NUM_CPU_DEVICES), meshes, sharded arrays (device_put with a
NamedSharding) against jax.device_put on 8 fake devices, and MeshExecutable running a
partitioned program on global values."""

from __future__ import annotations

import json

import numpy as np
import pytest
from support.spmd_programs import run_with_devices

import loom
from loom.runtime.devices import Device, ShardedArray, device_of
from loom.runtime.local import MeshExecutable
from loom.sharding import Mesh, NamedSharding, P, shard_slices

DEVICES = [Device("cpu", i, "numpy") for i in range(8)]  # what LOOM_NUM_CPU_DEVICES=8 lists

# (mesh shape, axis names, spec, global shape)
CASES = [
    ((8,), ("x",), ("x",), (16, 3)),
    ((2, 4), ("a", "b"), ("a", "b"), (4, 8)),
    ((2, 4), ("a", "b"), ("b", None), (8, 8)),
    ((2, 4), ("a", "b"), (None, "a"), (3, 4)),
    ((2, 4), ("a", "b"), (("a", "b"),), (16,)),
    ((2, 4), ("a", "b"), (("b", "a"), None), (8, 2)),
    ((2, 2, 2), ("x", "y", "z"), ("z", None, ("y", "x")), (2, 3, 8)),
    ((2, 4), ("a", "b"), (), (5, 3)),
]

JAX_SHARDS = """
import json, numpy as np, jax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
out = []
for mesh_shape, names, spec, shape in json.loads({cases!r}):
    mesh = Mesh(np.array(jax.devices()[:int(np.prod(mesh_shape))]).reshape(mesh_shape), tuple(names))
    spec = P(*[tuple(s) if isinstance(s, list) else s for s in spec])
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    a = jax.device_put(x, NamedSharding(mesh, spec))
    out.append([[s.device.id, [[i.start, i.stop] for i in s.index], s.replica_id, np.asarray(s.data).tolist()]
                for s in a.addressable_shards])
errors = []
mesh = Mesh(np.array(jax.devices()[:4]), ("x",))
for spec, shape in [(P("x"), (10,)), (P(None, "x"), (4, 6))]:
    try:
        jax.device_put(np.zeros(shape), NamedSharding(mesh, spec))
        errors.append("accepted")
    except ValueError:
        errors.append("ValueError")
mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("a", "b"))
x = np.arange(8 * 16, dtype=np.float32).reshape(8, 16) % 7 - 3
w = np.arange(16 * 4, dtype=np.float32).reshape(16, 4) % 5 - 2
f = jax.jit(lambda x, w: x @ w, in_shardings=(NamedSharding(mesh, P(None, "b")), NamedSharding(mesh, P("b", None))),
            out_shardings=NamedSharding(mesh, P("a", None)))
matmul = [[s.device.id, [[i.start, i.stop] for i in s.index], np.asarray(s.data).tolist()]
          for s in f(x, w).addressable_shards]
print(json.dumps([out, errors, matmul]))
"""


@pytest.fixture(scope="module")
def jax_shards():
    return run_with_devices(JAX_SHARDS.format(cases=json.dumps(CASES)))


def _spec(spec):
    return P(*spec)


@pytest.mark.parametrize("case", range(len(CASES)))
def test_device_put_matches_jax_addressable_shards(jax_shards, case):
    mesh_shape, names, spec, shape = CASES[case]
    mesh = loom.make_mesh(mesh_shape, names, devices=DEVICES)
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    a = loom.device_put(x, NamedSharding(mesh, _spec(spec)))
    assert isinstance(a, loom.Array) and isinstance(a, ShardedArray)
    assert a.shape == shape and a.dtype == np.float32 and a.ndim == len(shape)
    expected = jax_shards[0][case]
    assert len(a.addressable_shards) == len(expected)
    for shard, (device_id, index, replica_id, data) in zip(a.addressable_shards, expected):
        assert shard.device.id == device_id
        assert [[i.start, i.stop] for i in shard.index] == index
        assert shard.replica_id == replica_id
        np.testing.assert_array_equal(shard.data, np.array(data, np.float32).reshape(shard.data.shape))
        assert not np.shares_memory(shard.data, x)
    np.testing.assert_array_equal(np.asarray(a), x)


def test_uneven_device_put_is_an_error_as_in_jax(jax_shards):
    assert jax_shards[1] == ["ValueError", "ValueError"]  # jax refuses both
    mesh = loom.make_mesh((4,), ("x",), devices=DEVICES)
    with pytest.raises(ValueError, match=r"device_put argument x: PartitionSpec\('x'\) splits dimension 0 of shape "
                                         r"\(10,\) into 4 pieces"):
        loom.device_put(np.zeros(10), NamedSharding(mesh, P("x")))
    with pytest.raises(ValueError, match=r"device_put argument x\['b'\]\[1\]: .*dimension 1 of shape \(4, 6\)"):
        loom.device_put({"b": [np.zeros((2, 8)), np.zeros((4, 6))]}, NamedSharding(mesh, P(None, "x")))


def test_spec_longer_than_the_array_names_the_argument():
    mesh = loom.make_mesh((2, 4), ("a", "b"), devices=DEVICES)
    with pytest.raises(ValueError, match=r"device_put argument x\['w'\]: the sharding PartitionSpec\('a', 'b'\) has "
                                         r"2 entries, but the array has rank 1"):
        loom.device_put({"w": np.ones(4)}, NamedSharding(mesh, P("a", "b")))


def test_mesh_larger_than_the_devices_names_the_sizes():
    with pytest.raises(ValueError, match=r"a mesh of shape \(2, 4\) needs 8 devices, but 1 is available .*"
                                         "LOOM_NUM_CPU_DEVICES"):
        loom.make_mesh((2, 4), ("a", "b"))  # the default: LOOM_NUM_CPU_DEVICES unset, one CPU device
    with pytest.raises(ValueError, match=r"needs 16 devices, but 8 are available"):
        loom.make_mesh((4, 4), ("a", "b"), devices=DEVICES)


def test_sharded_array_behaves_as_an_array():
    mesh = loom.make_mesh((2, 4), ("a", "b"), devices=DEVICES)
    x = np.arange(32, dtype=np.int32).reshape(4, 8)
    a = loom.device_put(x, NamedSharding(mesh, P("a", "b")))
    assert a.sharding == NamedSharding(mesh, P("a", "b"))
    assert a.device == a.sharding and a.devices() == set(DEVICES) and a.size == 32
    assert device_of(a) is None  # host memory: it goes where the computation goes
    np.testing.assert_array_equal(a + 1, x + 1)
    np.testing.assert_array_equal(2 * a, 2 * x)
    np.testing.assert_array_equal(a[1], x[1])
    text = repr(a)
    assert text.startswith("ShardedArray([[ 0,  1,") and "dtype=int32" and "PartitionSpec('a', 'b')" in text
    host = np.asarray(a)
    host[0, 0] = 99  # a fresh host value each time
    assert np.asarray(a)[0, 0] == 0


def test_cpu_devices_from_the_environment():
    script = """
import json, loom
mesh = loom.make_mesh((2, 4), ("data", "model"))
print(json.dumps([[repr(d) for d in loom.devices("numpy")], [d.id for d in mesh.device_list],
                  str(loom.devices("numpy")[3])]))
"""
    listed, mesh_ids, third = run_with_devices(script, env={"LOOM_NUM_CPU_DEVICES": "8"})
    assert listed == [f"CpuDevice(id={i})" for i in range(8)]
    assert mesh_ids == list(range(8)) and third == "cpu:3"


@pytest.mark.parametrize("value", ["none", "0", "-2"])
def test_a_bad_device_count_is_an_error(monkeypatch, value):
    import sys
    monkeypatch.setenv("LOOM_NUM_CPU_DEVICES", value)
    with pytest.raises(ValueError, match=rf"LOOM_NUM_CPU_DEVICES='{value}': expected a positive number"):
        sys.modules["loom.runtime.devices"]._num_cpu_devices()


def test_cpu_devices_lead_every_listing(monkeypatch):
    """devices(), devices("cpu") and devices("numpy") list the CPU devices first, ids 0..N-1."""
    import sys
    module = sys.modules["loom.runtime.devices"]
    monkeypatch.setattr(module, "CPU_DEVICES", tuple(DEVICES))
    for listing in (loom.devices(), loom.devices("cpu"), loom.devices("numpy")):
        assert listing[:8] == DEVICES
    assert [str(d) for d in DEVICES] == ["cpu"] + [f"cpu:{i}" for i in range(1, 8)]
    assert loom.devices("numpy") == DEVICES
    assert module.get_device("cpu:5") is DEVICES[5] and module.get_device("cpu") == DEVICES[0]
    with pytest.raises(ValueError, match=r"device 'cpu:9' is not available: there are 8 CPU devices"):
        module.get_device("cpu:9")


def test_default_is_one_cpu_device():
    assert [d for d in loom.devices("numpy")] == [loom.devices()[0]]


# MeshExecutable -------------------------------------------------------------------------------

SUM = """({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%s) : (tensor<f32>) -> ()
    })"""

# A partitioned program of f(x) = (2 * x, sum(x)) for x: f32[10, 6] split in rows over 4 devices
# (3 rows each, the last device's padded with two rows of zeros).
PARTITIONED = f'''"builtin.module"() ({{
  "sdy.mesh"() <{{mesh = #sdy.mesh<["x"=4]>, sym_name = "mesh"}}> : () -> ()
  "func.func"() <{{arg_attrs = [{{loom.global_type = tensor<10x6xf32>, sdy.sharding = #sdy.sharding<@mesh, [{{"x"}}, {{}}]>}}], function_type = (tensor<3x6xf32>) -> (tensor<3x6xf32>, tensor<f32>), res_attrs = [{{loom.global_type = tensor<10x6xf32>, sdy.sharding = #sdy.sharding<@mesh, [{{"x"}}, {{}}]>}}, {{loom.global_type = tensor<f32>, sdy.sharding = #sdy.sharding<@mesh, []>}}], sym_name = "main"}}> ({{
  ^bb0(%arg0: tensor<3x6xf32>):
    %0 = "stablehlo.add"(%arg0, %arg0) : (tensor<3x6xf32>, tensor<3x6xf32>) -> tensor<3x6xf32>
    %z = "stablehlo.constant"() <{{value = dense<0.0> : tensor<f32>}}> : () -> tensor<f32>
    %1 = "stablehlo.reduce"(%arg0, %z) <{{dimensions = array<i64: 0, 1>}}> {SUM} : (tensor<3x6xf32>, tensor<f32>) -> tensor<f32>
    %2 = "stablehlo.all_reduce"(%1) <{{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}}> {SUM} : (tensor<f32>) -> tensor<f32>
    "func.return"(%0, %2) : (tensor<3x6xf32>, tensor<f32>) -> ()
  }}) : () -> ()
}}) {{mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32}} : () -> ()
'''  # noqa: E501


@pytest.mark.parametrize("executor", ["compiled", "interpreter"])
def test_mesh_executable_splits_pads_and_assembles(executor):
    mesh = loom.make_mesh((4,), ("x",), devices=DEVICES)
    exe = MeshExecutable(PARTITIONED, mesh, executor=executor)
    x = np.arange(60, dtype=np.float32).reshape(10, 6)
    doubled, total = exe(x)
    assert isinstance(doubled, ShardedArray) and doubled.shape == (10, 6)
    assert doubled.sharding == NamedSharding(mesh, P("x"))
    assert [s.index[0] for s in doubled.addressable_shards] == [slice(0, 3), slice(3, 6), slice(6, 9), slice(9, 10)]
    assert [s.data.shape for s in doubled.addressable_shards] == [(3, 6)] * 3 + [(1, 6)]  # padding dropped
    np.testing.assert_array_equal(np.asarray(doubled), 2 * x)
    assert total.shape == () and float(np.asarray(total)) == float(x.sum())  # the padding adds zeros
    assert total.sharding == NamedSharding(mesh, P())
    again, _ = exe(doubled)  # a sharded argument with the program's sharding: its shards as they are
    np.testing.assert_array_equal(np.asarray(again), 4 * x)


def test_mesh_executable_errors():
    mesh = loom.make_mesh((4,), ("x",), devices=DEVICES)
    exe = MeshExecutable(PARTITIONED, mesh)
    with pytest.raises(ValueError, match=r"argument 0 of @main has shape \(10, 5\) and dtype float32, but the program "
                                         r"takes \(10, 6\) float32"):
        exe(np.zeros((10, 5), np.float32))
    with pytest.raises(ValueError, match="partitioned for 4 partitions .* has 2 devices"):
        MeshExecutable(PARTITIONED, Mesh(DEVICES[:2], ("x",)))
    bare = PARTITIONED.replace("loom.global_type = tensor<10x6xf32>, ", "", 1)
    with pytest.raises(ValueError, match="argument 0 of @main has no sdy.sharding and loom.global_type"):
        MeshExecutable(bare, mesh)
    wrong_local = PARTITIONED.replace("tensor<10x6xf32>, sdy", "tensor<14x6xf32>, sdy", 1)
    with pytest.raises(ValueError, match=r"argument 0 of @main: the local type tensor<3x6xf32> does not match .* "
                                         r"\(expected shape \(4, 6\)\)"):
        MeshExecutable(wrong_local, mesh)
    with pytest.raises(ValueError, match=r"dtype int64, but the program takes \(10, 6\) float32"):
        exe(np.zeros((10, 6), np.int64))


# The partitioned program of x @ w for x: f32[8, 16] split in columns over "b", w: f32[16, 4] in
# rows over "b", the result in rows over "a" (mesh a=2 x b=4): a partial dot, an all_reduce over
# "b", and each partition's rows by its "a" index.
MATMUL = """"builtin.module"() ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["a"=2, "b"=4]>, sym_name = "mesh"}> : () -> ()
  "func.func"() <{arg_attrs = [{loom.global_type = tensor<8x16xf32>, sdy.sharding = #sdy.sharding<@mesh, [{}, {"b"}]>}, {loom.global_type = tensor<16x4xf32>, sdy.sharding = #sdy.sharding<@mesh, [{"b"}, {}]>}], function_type = (tensor<8x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>, res_attrs = [{loom.global_type = tensor<8x4xf32>, sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}], sym_name = "main"}> ({
  ^bb0(%x: tensor<8x4xf32>, %w: tensor<4x4xf32>):
    %partial = "stablehlo.dot_general"(%x, %w) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<8x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
    %full = "stablehlo.all_reduce"(%partial) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3], [4, 5, 6, 7]]> : tensor<2x4xi64>, use_global_device_ids}> SUM : (tensor<8x4xf32>) -> tensor<8x4xf32>
    %pid = "stablehlo.partition_id"() : () -> tensor<ui32>
    %four = "stablehlo.constant"() <{value = dense<4> : tensor<ui32>}> : () -> tensor<ui32>
    %a = "stablehlo.divide"(%pid, %four) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %row = "stablehlo.multiply"(%a, %four) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    %row32 = "stablehlo.convert"(%row) : (tensor<ui32>) -> tensor<i32>
    %zero = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %y = "stablehlo.dynamic_slice"(%full, %row32, %zero) <{slice_sizes = array<i64: 4, 4>}> : (tensor<8x4xf32>, tensor<i32>, tensor<i32>) -> tensor<4x4xf32>
    "func.return"(%y) : (tensor<4x4xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
""".replace("SUM", SUM)  # noqa: E501


@pytest.mark.parametrize("executor", ["compiled", "interpreter"])
def test_mesh_executable_matches_xla_shards(jax_shards, executor):
    mesh = loom.make_mesh((2, 4), ("a", "b"), devices=DEVICES)
    x = np.arange(8 * 16, dtype=np.float32).reshape(8, 16) % 7 - 3
    w = np.arange(16 * 4, dtype=np.float32).reshape(16, 4) % 5 - 2
    y = MeshExecutable(MATMUL, mesh, executor=executor)(loom.device_put(x, NamedSharding(mesh, P(None, "b"))), w)
    assert y.sharding == NamedSharding(mesh, P("a"))
    np.testing.assert_array_equal(np.asarray(y), x @ w)
    for shard, (device_id, index, data) in zip(y.addressable_shards, jax_shards[2], strict=True):
        assert shard.device.id == device_id
        assert [[i.start, i.stop] for i in shard.index] == index
        np.testing.assert_array_equal(shard.data, np.array(data, np.float32))


def test_shard_slices_of_sub_axes():
    """A sub-axis "x":(pre)size is the middle factor of x = (pre, size, rest), major to minor:
    "x":(1)2 splits by the major half of x's coordinate, "x":(2)2 by its minor one."""
    major = shard_slices({"x": 4}, [[("x", 1, 2)]], (8,))
    minor = shard_slices({"x": 4}, [[("x", 2, 2)]], (8,))
    assert [s[0] for s in major] == [slice(0, 4), slice(0, 4), slice(4, 8), slice(4, 8)]
    assert [s[0] for s in minor] == [slice(0, 4), slice(4, 8), slice(0, 4), slice(4, 8)]
    # rows over ("b":(2)2, "a"): piece = (b % 2) * 2 + a, partition p = a * 4 + b
    both = shard_slices({"a": 2, "b": 4}, [[("b", 2, 2), ("a", None, None)], []], (8, 3))
    assert [s[0] for s in both] == [slice(0, 2), slice(4, 6), slice(0, 2), slice(4, 6),
                                    slice(2, 4), slice(6, 8), slice(2, 4), slice(6, 8)]
    assert all(s[1] == slice(None) for s in both)


def test_a_block_several_devices_hold_is_read_from_the_first():
    """Copies of a replicated block that disagree (a program whose out_specs claim a replication
    that does not hold) read as the first device's copy, as JAX reads them."""
    mesh = Mesh(np.array(DEVICES[:4]).reshape(2, 2), ("x", "y"))
    sharding = NamedSharding(mesh, P("x"))
    indices = [(slice(0, 1), slice(None))] * 2 + [(slice(1, 2), slice(None))] * 2
    datas = [np.full((1, 3), float(i), np.float32) for i in range(4)]
    a = ShardedArray.from_shard_data((2, 3), sharding, indices, datas)
    np.testing.assert_array_equal(np.asarray(a), [[0.0] * 3, [2.0] * 3])
