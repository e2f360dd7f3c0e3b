"""A mesh of torch devices in one process (loom.runtime.device_mesh), on torch's CPU: the same
partitioned programs as the host's mesh, each partition's values tensors on its device and the
collectives computed on them (`TensorCommunicator`), against JAX's values for the sharded-program
corpus (tests/transforms/spmd_corpus) and the host's mesh for the forms that go through the host.
The devices are `Device("cpu", i)`, which all compute on torch's CPU, and, on a machine with
GPUs, its CUDA devices (the tests marked "cuda")."""

from __future__ import annotations

import json
import pathlib
import sys
from collections import Counter

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import loom  # noqa: E402
from loom.runtime import device_mesh  # noqa: E402
from loom.runtime.communicator import CollectiveError, PartitionError  # noqa: E402
from loom.runtime.devices import Device  # noqa: E402
from loom.runtime.local import run_spmd  # noqa: E402
from loom.sharding import NamedSharding, P, make_mesh, partition  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "transforms"))
from spmd_run import run_global  # noqa: E402

CORPUS = pathlib.Path(__file__).resolve().parent.parent / "transforms" / "spmd_corpus"
PROGRAMS = {r["name"]: r for r in json.loads((CORPUS / "programs.json").read_text())}
VALUES = np.load(CORPUS / "values.npz")
DEVICES = [Device("cpu", i, "torch") for i in range(8)]
# The same tests on the machine's GPUs, where it has any (partitions share them round-robin: one GPU
# runs a mesh of 8 partitions too, its copies between partitions on the device).
KINDS = ["torch:cpu", pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(),
                                                                    reason="needs a CUDA device"))]


def _devices(kind: str) -> list[Device]:
    if kind == "torch:cpu":
        return DEVICES
    return [Device("cuda", i % torch.cuda.device_count()) for i in range(8)]


@pytest.fixture
def on_devices(monkeypatch):
    """The collectives the TensorCommunicator computed on tensors, by name."""
    seen: Counter = Counter()
    original = device_mesh.TensorCommunicator._on_devices

    def spy(self, me, group, x, signature, result):
        assert isinstance(x, torch.Tensor)
        seen[signature[0]] += 1
        return original(self, me, group, x, signature, result)

    monkeypatch.setattr(device_mesh.TensorCommunicator, "_on_devices", spy)
    return seen


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_partitioned_program_on_torch_devices_gives_jax_values(name, kind):
    local = partition(loom.ir.parse(PROGRAMS[name]["text"]))
    inputs = [VALUES[f"{name}/in{i}"] for i in range(PROGRAMS[name]["num_inputs"])]
    got = run_global(local, *inputs, devices=_devices(kind))
    assert len(got) == PROGRAMS[name]["num_outputs"]
    for i, g in enumerate(got):
        np.testing.assert_allclose(g, VALUES[f"{name}/out{i}"], rtol=1e-4, atol=1e-4, err_msg=f"{name} result {i}")


def _program(n: int, body: str, result: str, operand: str = "tensor<8x6xf32>") -> str:
    return f'''"builtin.module"() ({{
  "func.func"() <{{function_type = ({operand}) -> {result}, sym_name = "main"}}> ({{
  ^bb0(%x: {operand}):
{body}
  }}) : () -> ()
}}) {{mhlo.num_partitions = {n} : i32, mhlo.num_replicas = 1 : i32}} : () -> ()
'''


def _groups(n: int) -> str:
    return (f"channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = "
            f"dense<[{list(range(n))}]> : tensor<1x{n}xi64>, use_global_device_ids")


def _reducer(op: str, e: str = "f32") -> str:
    return f'''({{
    ^bb0(%a: tensor<{e}>, %b: tensor<{e}>):
      %s = "stablehlo.{op}"(%a, %b) : (tensor<{e}>, tensor<{e}>) -> tensor<{e}>
      "stablehlo.return"(%s) : (tensor<{e}>) -> ()
    }})'''


def _every_collective(n: int, e: str = "f32", reduction: str = "add") -> str:
    t = f"tensor<8x6x{e}>"
    results = f"({t}, tensor<{8 * n}x6x{e}>, tensor<{8 // n}x6x{e}>, tensor<{8 // n}x{6 * n}x{e}>, {t}, {t})"
    pairs = ", ".join(f"[{p}, {(p + 1) % n}]" for p in range(n - 1))  # the last partition receives nothing
    body = f'''    %0 = "stablehlo.all_reduce"(%x) <{{{_groups(n)}}}> {_reducer(reduction, e)} : ({t}) -> {t}
    %1 = "stablehlo.all_gather"(%x) <{{all_gather_dim = 0 : i64, {_groups(n)}}}> : ({t}) -> tensor<{8 * n}x6x{e}>
    %2 = "stablehlo.reduce_scatter"(%x) <{{scatter_dimension = 0 : i64, {_groups(n)}}}> {_reducer(reduction, e)} : ({t}) -> tensor<{8 // n}x6x{e}>
    %3 = "stablehlo.all_to_all"(%x) <{{split_dimension = 0 : i64, concat_dimension = 1 : i64, split_count = {n} : i64, replica_groups = dense<[{list(range(n))}]> : tensor<1x{n}xi64>, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>}}> : ({t}) -> tensor<{8 // n}x{6 * n}x{e}>
    %4 = "stablehlo.collective_permute"(%x) <{{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, source_target_pairs = dense<[{pairs}]> : tensor<{n - 1}x2xi64>}}> : ({t}) -> {t}
    %5 = "stablehlo.collective_broadcast"(%x) <{{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[{list(range(n))}]> : tensor<1x{n}xi64>}}> : ({t}) -> {t}
    "func.return"(%0, %1, %2, %3, %4, %5) : {results} -> ()'''  # noqa: E501
    return _program(n, body, results, t)


def _operands(n: int, dtype) -> list[list[np.ndarray]]:
    rng = np.random.default_rng(n)
    return [[(rng.standard_normal((8, 6)) * 4).astype(dtype)] for _ in range(n)]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n", [2, 4])
def test_every_collective_runs_on_the_devices_with_the_host_mesh_values(n, kind, on_devices):
    """all_reduce, all_gather, reduce_scatter, all_to_all, collective_permute (a partition that
    receives nothing gets zeros) and collective_broadcast: each partition's results are tensors on
    its device, bit for bit the host mesh's (the same reduction order), and the communicator
    computed every one of them on tensors."""
    text = _every_collective(n)
    args = _operands(n, np.float32)
    want = run_spmd(text, args)
    devices = _devices(kind)[:n]
    got = run_spmd(text, args, devices=devices)
    for p in range(n):
        for k, (w, g) in enumerate(zip(want[p], got[p])):
            assert isinstance(g, torch.Tensor) and g.device == devices[p].torch_device
            np.testing.assert_array_equal(g.cpu().numpy(), w, err_msg=f"partition {p} result {k}")
    assert on_devices == {c: n for c in ("all_reduce", "all_gather", "reduce_scatter", "all_to_all",
                                         "collective_permute", "collective_broadcast")}


@pytest.mark.parametrize("e, dtype, reduction", [("bf16", "bfloat16", "add"), ("i32", np.int32, "maximum"),
                                                 ("i1", np.bool_, "or"), ("ui32", np.uint32, "add"),
                                                 ("f8E4M3FN", "float8_e4m3fn", "add")])
def test_element_types_and_reductions_on_the_devices_or_through_the_host(e, dtype, reduction, on_devices):
    """bfloat16, int32 max and boolean or reduce on the devices; uint32 (no torch arithmetic) and
    float8 (held in float32, each sum rounded) go through the host: the same values as the host
    mesh either way."""
    import ml_dtypes
    dtype = np.dtype(getattr(ml_dtypes, dtype)) if isinstance(dtype, str) else np.dtype(dtype)
    n = 4
    text = _every_collective(n, e, reduction)
    args = [[a.astype(dtype)] for [a] in _operands(n, np.float32)] if dtype.kind != "b" else \
        [[a > 0] for [a] in _operands(n, np.float32)]
    want = run_spmd(text, args)
    got = run_spmd(text, args, devices=DEVICES[:n])
    from loom.backend.torch_kernels import to_numpy
    for p in range(n):
        for k, (w, g) in enumerate(zip(want[p], got[p])):
            assert isinstance(g, torch.Tensor)
            np.testing.assert_array_equal(to_numpy(g).astype(np.float64), np.asarray(w).astype(np.float64),
                                          err_msg=f"{e}: partition {p} result {k}")
    on_device = e in ("bf16", "i32", "i1")
    assert (sum(on_devices.values()) == 6 * n) if on_device else not on_devices


def test_a_reducer_region_of_its_own_goes_through_the_host():
    """A reducer that is none of the communicator's reductions (a + b + 1, applied pairwise in
    group order): the values the host mesh gives."""
    n, t = 4, "tensor<8x6xf32>"
    reducer = '''({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %one = "stablehlo.constant"() <{value = dense<1.0> : tensor<f32>}> : () -> tensor<f32>
      %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      %r = "stablehlo.add"(%s, %one) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    })'''
    body = f'''    %0 = "stablehlo.all_reduce"(%x) <{{{_groups(n)}}}> {reducer} : ({t}) -> {t}
    "func.return"(%0) : ({t}) -> ()'''
    text = _program(n, body, t)
    args = _operands(n, np.float32)
    want = run_spmd(text, args)
    got = run_spmd(text, args, devices=DEVICES[:n])
    for p in range(n):
        np.testing.assert_array_equal(got[p][0].numpy(), want[p][0])


def test_jit_on_a_mesh_of_torch_devices_keeps_the_shards_there():
    """loom.jit with shardings on a mesh of torch devices: a Megatron MLP step's value and
    gradient equal numpy's (float32, as JAX traces by default), and every shard of the results is a
    tensor on its device."""
    mesh = make_mesh((2, 2), ("data", "model"), devices=DEVICES[:4])
    rng = np.random.default_rng(0)
    x, w1, w2 = (rng.standard_normal(s).astype(np.float32) for s in ((8, 6), (6, 12), (12, 6)))

    def loss(x, w1, w2):
        return loom.numpy.sum(loom.numpy.tanh(x @ w1) @ w2)

    shardings = (NamedSharding(mesh, P("data", None)), NamedSharding(mesh, P(None, "model")),
                 NamedSharding(mesh, P("model", None)))
    value, grads = loom.jit(loom.value_and_grad(loss, argnums=(1, 2)), in_shardings=shardings)(x, w1, w2)
    h = np.tanh(x @ w1)
    np.testing.assert_allclose(np.asarray(value), np.sum(h @ w2), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(grads[0]), x.T @ ((1 - h * h) * w2.sum(axis=1)), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(grads[1]), h.T @ np.ones((8, 6), np.float32), rtol=1e-5, atol=1e-5)
    for g in grads:
        for shard in g.addressable_shards:
            assert isinstance(shard.data, torch.Tensor) and shard.device in DEVICES[:4]


def test_a_mesh_of_host_and_torch_devices_is_refused():
    mixed = [loom.devices("numpy")[0], DEVICES[1]]
    with pytest.raises(ValueError, match="host \\(numpy\\) and torch devices"):
        run_spmd(_every_collective(2), _operands(2, np.float32), devices=mixed)
    x = np.ones((4, 2), np.float32)
    with pytest.raises(ValueError, match="host \\(numpy\\) and torch devices"):
        loom.jit(lambda x: x * 2, in_shardings=NamedSharding(make_mesh((2,), ("x",), devices=mixed), P("x")))(x)


def test_a_partition_that_calls_another_collective_is_named():
    """Partition 1 reaches a reduce_scatter where the others reach an all_gather: every partition
    stops with an error naming the mismatch, none waits forever."""
    n, t = 2, "tensor<8x6xf32>"
    body = f'''    %p = "stablehlo.partition_id"() : () -> tensor<ui32>
    %zero = "stablehlo.constant"() <{{value = dense<0> : tensor<ui32>}}> : () -> tensor<ui32>
    %first = "stablehlo.compare"(%p, %zero) <{{comparison_direction = #stablehlo<comparison_direction EQ>}}> : (tensor<ui32>, tensor<ui32>) -> tensor<i1>
    %r = "stablehlo.if"(%first) ({{
      %g = "stablehlo.all_gather"(%x) <{{all_gather_dim = 0 : i64, {_groups(n)}}}> : ({t}) -> tensor<16x6xf32>
      %s = "stablehlo.slice"(%g) <{{start_indices = array<i64: 0, 0>, limit_indices = array<i64: 4, 6>, strides = array<i64: 1, 1>}}> : (tensor<16x6xf32>) -> tensor<4x6xf32>
      "stablehlo.return"(%s) : (tensor<4x6xf32>) -> ()
    }}, {{
      %s = "stablehlo.reduce_scatter"(%x) <{{scatter_dimension = 0 : i64, {_groups(n)}}}> {_reducer("add")} : ({t}) -> tensor<4x6xf32>
      "stablehlo.return"(%s) : (tensor<4x6xf32>) -> ()
    }}) : (tensor<i1>) -> tensor<4x6xf32>
    "func.return"(%r) : (tensor<4x6xf32>) -> ()'''  # noqa: E501
    with pytest.raises(PartitionError) as info:
        run_spmd(_program(n, body, "tensor<4x6xf32>"), _operands(n, np.float32), devices=DEVICES[:n], timeout=20)
    assert isinstance(info.value.__cause__, CollectiveError)
    assert "all_gather" in str(info.value) and "reduce_scatter" in str(info.value)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", ["matmul_reduce_scatter", "mlp_2d_grad", "sequence_parallel_mlp"])
def test_decomposed_and_scheduled_programs_on_torch_devices_give_jax_values(name, kind, on_devices):
    """Collective matmul (loops of collective_permute start / done pairs, the latency-hiding
    schedule): the permutes run on the devices, and the values are JAX's."""
    from loom.rewrite.pass_manager import PassManager
    module = partition(loom.ir.parse(PROGRAMS[name]["text"]))
    PassManager.parse("builtin.module(decompose-collective-matmul{mode=on bidirectional=true},"
                      "schedule-latency-hiding)").run(module)
    assert any(op.name == "comm.collective_permute_start" for op in module.walk())
    inputs = [VALUES[f"{name}/in{i}"] for i in range(PROGRAMS[name]["num_inputs"])]
    for i, g in enumerate(run_global(module, *inputs, devices=_devices(kind))):
        np.testing.assert_allclose(g, VALUES[f"{name}/out{i}"], rtol=1e-4, atol=1e-4, err_msg=f"{name} result {i}")
    assert on_devices["collective_permute"] > 0


def test_torch_cpu_devices_are_named_apart():
    assert [str(d) for d in DEVICES[:3]] == ["torch:cpu", "torch:cpu:1", "torch:cpu:2"]
    assert loom.runtime.devices.get_device("torch:cpu:5") == DEVICES[5]


def test_device_put_on_a_mesh_of_torch_devices_puts_tensors_there():
    """loom.device_put with a sharding over torch devices: each shard a tensor on its device, which
    a jitted function on that mesh takes as it is; the values are numpy's."""
    mesh = make_mesh((2, 2), ("x", "y"), devices=DEVICES[:4])
    x = np.arange(48, dtype=np.float32).reshape(8, 6)
    placed = loom.device_put(x, NamedSharding(mesh, P("x", None)))
    assert all(isinstance(s.data, torch.Tensor) and s.data.shape == (4, 6) for s in placed.addressable_shards)
    np.testing.assert_array_equal(np.asarray(placed), x)
    doubled = loom.jit(lambda v: v * 2 + 1, out_shardings=NamedSharding(mesh, P(None, "y")))(placed)
    assert all(isinstance(s.data, torch.Tensor) for s in doubled.addressable_shards)
    np.testing.assert_array_equal(np.asarray(doubled), x * 2 + 1)


def test_uneven_shards_on_torch_devices_are_padded_and_unpadded():
    """10 rows over 4 devices (a partitioned program pads them to 3 each): the result's shards hold
    3, 3, 3 and 1 rows as tensors; handed to the next call they are padded again. The values are
    numpy's."""
    from loom.runtime.local import MeshExecutable
    from loom.sharding import Mesh
    text = """module {
  sdy.mesh @mesh = <["x"=4]>
  func.func @main(%arg0: tensor<10x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
      -> (tensor<10x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
    %c = stablehlo.constant dense<2.0> : tensor<10x3xf32>
    %0 = stablehlo.multiply %arg0, %c : tensor<10x3xf32>
    return %0 : tensor<10x3xf32>
  }
}"""
    step = MeshExecutable(partition(loom.ir.parse(text)), Mesh(np.array(DEVICES[:4], dtype=object), ("x",)))
    x = np.arange(30, dtype=np.float32).reshape(10, 3)
    once = step(x)
    assert [tuple(s.data.shape) for s in once.addressable_shards] == [(3, 3), (3, 3), (3, 3), (1, 3)]
    assert all(isinstance(s.data, torch.Tensor) for s in once.addressable_shards)
    np.testing.assert_array_equal(np.asarray(step(once)), x * 4)
