"""Devices, loom.Array, device_put, DLPack, placement of jitted computations (on CPU), pinned-host
offload; CUDA graphs and pinned offload where a GPU is present."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import loom  # noqa: E402
import loom.numpy as lnp  # noqa: E402
from loom.backend.common import ArgumentError  # noqa: E402
from loom.runtime.devices import HOST, Array, Device, device_put, devices, from_dlpack, get_device, offload  # noqa: E402

TORCH_CPU = Device("cpu", 0, "torch")
cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def test_devices_lists_host_torch_cpu_and_cuda():
    all_devices = devices()
    assert all_devices[0] == HOST and str(HOST) == "cpu"
    assert TORCH_CPU in all_devices and str(TORCH_CPU) == "torch:cpu"
    assert devices("numpy") == [HOST]
    assert devices("torch")[0] == TORCH_CPU
    assert len(devices("cuda")) == torch.cuda.device_count()


def test_device_specs():
    assert get_device("cpu") == HOST
    assert get_device("torch:cpu") == TORCH_CPU
    assert get_device(torch.device("cpu")) == TORCH_CPU
    assert get_device("cuda:1") == Device("cuda", 1)
    assert get_device(Device("cuda", 0)).torch_device == torch.device("cuda", 0)
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        get_device("tpu")


def test_device_put_and_array_properties():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    a = device_put(x, "torch:cpu")
    assert isinstance(a, Array)
    assert a.shape == (2, 3) and a.dtype == np.float32 and a.ndim == 2 and a.size == 6
    assert a.device == TORCH_CPU
    np.testing.assert_array_equal(np.asarray(a), x)
    host = np.asarray(a)
    host[0, 0] = 99  # a host copy: the array is unchanged
    assert np.asarray(a)[0, 0] == 0
    back = device_put(a, "cpu")
    assert type(back) is np.ndarray
    np.testing.assert_array_equal(back, x)
    tree = device_put({"w": x, "b": [x[0]]}, "torch:cpu")
    assert isinstance(tree["w"], Array) and isinstance(tree["b"][0], Array)
    np.testing.assert_array_equal(np.asarray(tree["b"][0]), x[0])
    np.testing.assert_array_equal(np.asarray(a + 1.0), x + 1)
    np.testing.assert_array_equal(np.asarray(2.0 * a - a), x)
    np.testing.assert_array_equal(np.asarray(a[1]), x[1])
    assert float(a[1, 2]) == 5.0 and len(a) == 2
    assert "device=torch:cpu" in repr(a)


def test_dlpack_with_torch_numpy_and_jax():
    x = np.arange(4, dtype=np.float32)
    a = device_put(x, "torch:cpu")
    t = torch.from_dlpack(a)  # no copy: shares the array's memory
    assert t.data_ptr() == a.torch().data_ptr()
    np.testing.assert_array_equal(np.from_dlpack(a), x)
    b = from_dlpack(torch.arange(3, dtype=torch.int32))
    assert isinstance(b, Array) and b.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(b), [0, 1, 2])
    c = from_dlpack(np.arange(5, dtype=np.int64))
    np.testing.assert_array_equal(np.asarray(c), np.arange(5))
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    from_jax = from_dlpack(jnp.arange(3.0, dtype=jnp.float32))
    np.testing.assert_array_equal(np.asarray(from_jax), [0.0, 1.0, 2.0])
    to_jax = jnp.from_dlpack(a)
    np.testing.assert_array_equal(np.asarray(to_jax), x)
    del jax


def test_jit_follows_the_inputs_device():
    f = loom.jit(lambda x, y: lnp.sin(x) * y + 1.0)
    x, y = np.linspace(0, 1, 5, dtype=np.float32), np.float32(2.0)
    on_host = f(x, y)
    assert type(on_host) is np.ndarray
    on_torch = f(device_put(x, "torch:cpu"), y)  # the committed array decides; the scalar follows
    assert isinstance(on_torch, Array) and on_torch.device == TORCH_CPU
    np.testing.assert_allclose(np.asarray(on_torch), on_host, rtol=1e-6)
    raw = f(torch.from_numpy(x), y)  # torch tensors in, torch tensors out
    assert isinstance(raw, torch.Tensor)
    np.testing.assert_allclose(raw.numpy(), on_host, rtol=1e-6)


def test_jit_pinned_to_a_device():
    f = loom.jit(lambda x: x * 2, device="torch:cpu")
    out = f(np.ones(3, np.float32))
    assert isinstance(out, Array) and out.device == TORCH_CPU
    np.testing.assert_array_equal(np.asarray(out), [2, 2, 2])
    g = loom.jit(lambda x: x * 2, device="cpu")
    with pytest.raises(ArgumentError, match="argument x is on device torch:cpu.*jitted for device cpu"):
        g(device_put(np.ones(3, np.float32), "torch:cpu"))


def test_arguments_on_two_devices_are_an_error():
    meta = torch.zeros(3, device="meta")
    f = loom.jit(lambda x, y: x + y)
    with pytest.raises(ValueError, match="x is on torch:cpu and y is on"):
        f(device_put(np.ones(3, np.float32), "torch:cpu"), meta)


def test_offload_round_trip_on_cpu():
    t = torch.arange(6, dtype=torch.float32)
    handle = offload(t)
    t.add_(1)  # the offloaded copy keeps the value at the time of the call
    np.testing.assert_array_equal(handle.fetch().numpy(), np.arange(6))


@cuda
def test_offload_to_pinned_memory_and_back():
    t = torch.randn(1024, device="cuda")
    handle = offload(t)
    assert handle.host.is_pinned()
    np.testing.assert_array_equal(handle.fetch().cpu().numpy(), t.cpu().numpy())


@cuda
def test_cuda_graph_replays_with_new_inputs():
    def f(w, x):
        return lnp.tanh(x @ w).sum(axis=0)

    eager = loom.jit(f, device="cuda")
    graphed = loom.jit(f, device="cuda", cuda_graph=True)
    rng = np.random.default_rng(0)
    for _ in range(3):
        w = rng.normal(size=(16, 8)).astype(np.float32)
        x = rng.normal(size=(4, 16)).astype(np.float32)
        np.testing.assert_allclose(np.asarray(graphed(w, x)), np.asarray(eager(w, x)), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(np.asarray(graphed(w, x)), f_numpy(w, x), rtol=1e-4, atol=1e-4)
    compiled = next(iter(graphed._cache.values()))
    assert compiled.executable.captured


def f_numpy(w, x):
    return np.tanh(x @ w).sum(axis=0)


@cuda
def test_data_dependent_while_loop_on_cuda_runs_op_by_op_under_cuda_graph():
    from loom import lax
    f = loom.jit(lambda x: lax.while_loop(lambda c: c[1] < 50.0, lambda c: (c[0] + 1, c[1] * 2.0), (0, x)),
                 device="cuda", cuda_graph=True)
    n, v = f(np.float32(1.0))
    assert int(n) == 6 and float(v) == 64.0
    compiled = next(iter(f._cache.values()))
    assert not compiled.executable.captured and not compiled.executable.static


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error on a machine without CUDA")
def test_jit_on_a_missing_cuda_device_is_a_clear_error():
    with pytest.raises(ValueError, match="device cuda:0 is not available; loom.devices\\(\\) lists cpu, torch:cpu"):
        loom.jit(lambda x: x, device="cuda")


def test_compile_takes_a_loom_device() -> None:
    """`loom.compile(..., device=d)` with a Device from loom.devices() picks that device's backend."""
    text = """func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %y = "stablehlo.multiply"(%x, %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %y : tensor<3xf32>
}"""
    x = np.array([1.0, -2.0, 3.0], np.float32)
    for device in loom.devices():
        out = loom.compile(text, device=device)(x)
        host = out if isinstance(out, np.ndarray) else out.cpu().numpy()  # a torch tensor on its device
        np.testing.assert_array_equal(host, x * x)
        assert isinstance(out, np.ndarray) == (device.backend == "numpy")
