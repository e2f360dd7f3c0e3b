"""The `offload` memory policy of loom.lax loops: gradients (against save_all bit for bit, jax.grad
and float64 finite differences) on the numpy and the torch backend, the `offload` mark on the
stacks in the IR (printed, parsed back, verified), the torch executor routing the pushes and pops
of marked stacks through `stack_kernels.OFFLOAD`, the stacks' own bookkeeping, and on a CUDA
device (only where one is available) the pinned host copies and their streams."""

from __future__ import annotations

import numpy as np
import pytest
from support.oracles import finite_differences

import loom
import loom.ir as lir
import loom.numpy as lnp
from loom import lax
from loom.backend.compiled import Executable
from loom.frontend.grad import _Differentiable
from loom.ops import stack as stack_kernels
from loom.ops.stack import HostOffload, SavedStack
from loom.runtime.devices import _OFFLOAD_STREAMS, OffloadedValue, offload

jax = pytest.importorskip("jax")
torch = pytest.importorskip("torch")
jnp = jax.numpy

CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


pytestmark = pytest.mark.usefixtures("jax_x64", "loom_x64")


LIMIT = 30.0  # the loop runs until the squared norm of its carry passes this


def _step(m, v, a):
    return m.sin(v) * a + v * 1.1


def _loss(m, v):
    return m.sum(v * m.cos(v))


def loop(policy):
    """A while loop whose trip count depends on the data (on both arguments)."""
    def f(x, a):
        v = lax.while_loop(lambda v: lnp.sum(v * v) < LIMIT, lambda v: _step(lnp, v, a), x, policy=policy)
        return _loss(lnp, v)
    return f


def trips(x, a):
    """The loop's trip count, in numpy."""
    v, n = np.array(x, np.float64), 0
    while np.sum(v * v) < LIMIT:
        v, n = _step(np, v, a), n + 1
        assert n < 1000, "the loop does not stop from this point"
    return n


def jax_grad(x, a):
    """jax.grad of the same loop run for its trip count (a constant near the point, so the
    gradient is the loop's)."""
    n = trips(x, a)

    def f(x, a):
        return _loss(jnp, jax.lax.fori_loop(0, n, lambda i, v: _step(jnp, v, a), x))
    return [np.asarray(g) for g in jax.grad(f, (0, 1))(jnp.asarray(x), jnp.asarray(a))]


POINTS = [(np.array([0.5, -0.3, 0.8]), np.float64(0.7)), (np.array([0.3, -0.2]), np.float64(0.5))]


def _host(gs):
    return [np.asarray(g) for g in gs]


@pytest.mark.parametrize("point", range(len(POINTS)))
@pytest.mark.parametrize("device", ["cpu", "torch:cpu"])
def test_offload_gradients_match_save_all_jax_and_finite_differences(point, device):
    x, a = POINTS[point]
    assert trips(x, a) >= 5
    args = loom.device_put((x, a), device)
    offload = loom.grad(loop("offload"), (0, 1))(*args)
    save_all = loom.grad(loop("save_all"), (0, 1))(*args)
    if device == "torch:cpu":
        assert all(isinstance(g, loom.Array) and str(g.device) == "torch:cpu" for g in offload)
    for got, want in zip(_host(offload), _host(save_all)):
        np.testing.assert_array_equal(got, want)
    for got, want in zip(_host(offload), jax_grad(x, a)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    for k in (0, 1):
        fd = finite_differences(loop("offload"), (x, a), k)
        np.testing.assert_allclose(_host(offload)[k], fd, rtol=1e-6, atol=1e-8)
    with lax.checkpoint_policy("offload"):  # the context manager's way of choosing the policy
        context = loom.grad(loop(None), (0, 1))(*args)
    for got, want in zip(_host(context), _host(save_all)):
        np.testing.assert_array_equal(got, want)
    assert lax.saved_bytes() == 0


def test_offload_second_order_matches_save_all_on_torch():
    def scalar(policy):
        def f(v):
            return lax.while_loop(lambda v: v < 50.0, lambda v: v * v * 0.5 + lnp.sin(v) + 1.0, v, policy=policy)
        return f
    x = loom.device_put(np.float64(1.2), "torch:cpu")
    got = loom.grad(loom.grad(scalar("offload")))(x)
    want = loom.grad(loom.grad(scalar("save_all")))(x)
    host = loom.grad(loom.grad(scalar("save_all")))(np.float64(1.2))
    assert float(np.asarray(got)) == float(np.asarray(want))
    np.testing.assert_allclose(float(np.asarray(got)), float(host), rtol=1e-12)


# --- the mark in the IR ------------------------------------------------------------------------------


def _backward_text(f, args):
    traced, _, _ = _Differentiable(f, False).prepare(tuple(args), {}, (0, 1))
    return traced, lir.print(traced.module, generic=True)


def test_differentiation_marks_the_stacks_and_the_mark_round_trips():
    traced, text = _backward_text(loop("offload"), POINTS[0])
    news = [line for line in text.splitlines() if '"stack.new"' in line]
    assert news and all('"stack.new"() <{offload}> :' in line for line in news)
    # the forward and the backward loop both keep the policy (for second order)
    assert text.count("stablehlo.while") == 2 and text.count('loom.memory_policy = "offload"') == 2
    module = lir.parse(text)
    assert lir.print(module, generic=True) == text
    module.verify()
    marked = [op for op in module.walk() if op.name == "stack.new"]
    assert marked and all(isinstance(op.properties["offload"], lir.UnitAttr) for op in marked)

    for policy in ("save_all", "checkpoint"):
        _, other = _backward_text(loop(policy), POINTS[0])
        assert '"stack.new"' in other and "offload" not in other


def test_second_order_differentiation_marks_every_stack():
    def f(v):
        return lax.while_loop(lambda v: v < 100.0, lambda v: v * v + lnp.sin(v), v, policy="offload")
    text = loom.jit(loom.grad(loom.grad(f))).lower(np.float64(2.0)).as_text(generic=True)
    assert text.count('"stack.new"') >= 3
    assert text.count('"stack.new"() <{offload}>') == text.count('"stack.new"')


def test_the_mark_is_verified():
    good = '''func.func @f() {
  %0 = "stack.new"() <{offload}> : () -> !stack.stack<tensor<f32>>
  func.return
}'''
    op = next(o for o in lir.parse(good).walk() if o.name == "stack.new")
    assert isinstance(op.properties["offload"], lir.UnitAttr)
    bad = good.replace("<{offload}>", "<{offload = 1 : i32}>")
    with pytest.raises(lir.VerifyError, match="attribute 'offload' failed to satisfy constraint: unit attribute"):
        lir.parse(bad)


# --- routing through OFFLOAD on the torch executor ---------------------------------------------------


class Recording(HostOffload):
    """The default policy, recording each call; with `copy`, CPU tensors go through
    `loom.runtime.devices.offload` too (it keeps a copy and hands back an `OffloadedValue`), so the
    handle path runs on the CPU."""

    def __init__(self, copy: bool = False) -> None:
        self.copy = copy
        self.stored: list = []
        self.loaded: list = []
        self.prefetched: list = []
        self.waited = 0

    def store(self, value):
        out = offload(value) if self.copy and isinstance(value, torch.Tensor) else super().store(value)
        self.stored.append((value, out))
        return out

    def wait(self, stored):
        self.waited += 1
        super().wait(stored)

    def prefetch(self, stored):
        self.prefetched.append(stored)
        return super().prefetch(stored)

    def load(self, stored):
        out = super().load(stored)
        self.loaded.append((stored, out))
        return out


def _run_backward(policy, backend, hook, monkeypatch):
    """The backward program of `loop(policy)` run by the compiled executor on `backend` with
    `hook` as `stack_kernels.OFFLOAD`; its gradients."""
    x, a = POINTS[0]
    traced, leaves, _ = _Differentiable(loop(policy), False).prepare((x, a), {}, (0, 1))
    monkeypatch.setattr(stack_kernels, "OFFLOAD", hook)
    out = Executable(traced.module, "main", backend=backend)(*leaves, np.float64(1))
    return [np.asarray(o) for o in out[-2:]]


@pytest.mark.parametrize("copy", [False, True])
def test_torch_executor_routes_marked_stacks_through_offload(copy, monkeypatch):
    x, a = POINTS[0]
    n = trips(x, a)
    want = _run_backward("save_all", "numpy", HostOffload(), monkeypatch)
    hook = Recording(copy)
    got = _run_backward("offload", "torch", hook, monkeypatch)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    pushes = len(hook.stored)
    assert pushes > 0 and pushes % n == 0  # every iteration pushes each residual through the hook
    assert len(hook.loaded) == pushes and hook.waited == pushes - pushes // n
    assert len(hook.prefetched) == pushes - pushes // n  # every pop but a stack's last prefetches
    assert all(isinstance(v, torch.Tensor) for v, _ in hook.stored)
    if copy:
        assert all(isinstance(s, OffloadedValue) for _, s in hook.stored)
        assert all(s.host is not v and torch.equal(s.host, v) for v, s in hook.stored)
        # what each pop gives back is what was pushed, in reverse order per stack
        loaded = {id(s): out for s, out in hook.loaded}
        assert all(torch.equal(loaded[id(s)], v) for v, s in hook.stored)
    else:
        assert all(s is v for v, s in hook.stored)  # CPU tensors stay where they are, uncopied
        assert all(s is out for s, out in hook.loaded)
    assert lax.saved_bytes() == 0


def test_unmarked_stacks_and_the_numpy_executor_do_not_offload(monkeypatch):
    hook = Recording(copy=True)
    want = _run_backward("save_all", "numpy", hook, monkeypatch)
    for policy, backend in (("save_all", "torch"), ("offload", "numpy")):
        got = _run_backward(policy, backend, hook, monkeypatch)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
    assert hook.stored == [] and hook.loaded == []


def test_torch_executor_keeps_saved_tensors_as_tensors(monkeypatch):
    # the torch executor's stacks hold the tensors themselves, not numpy copies
    seen = []
    real_push = SavedStack.push

    def push(self, value):
        seen.append(type(value))
        real_push(self, value)
    monkeypatch.setattr(SavedStack, "push", push)
    _run_backward("save_all", "torch", HostOffload(), monkeypatch)
    assert seen and all(t is torch.Tensor for t in seen)


# --- the stacks themselves ---------------------------------------------------------------------------


class Tagging(HostOffload):
    """Wraps values so the test sees which path each one took."""

    def store(self, value):
        return ("stored", value)

    def prefetch(self, stored):
        return ("prefetched", stored)

    def load(self, stored):
        if stored[0] == "prefetched":
            return ("via prefetch", stored[1][1])
        return ("direct", stored[1])


def test_offloaded_stack_prefetches_the_next_pop():
    s = SavedStack(Tagging())
    for v in (1, 2, 3):
        s.push(np.float32(v))
    assert [float(v) for _, v in s.items] == [1, 2, 3]
    assert s.pop() == ("direct", 3)
    assert s.pop() == ("via prefetch", 2)
    s.push(np.float32(4))  # a push between pops: the prefetched value is no longer on top
    assert s.pop() == ("direct", 4)
    assert s.pop() == ("via prefetch", 1)
    with pytest.raises(IndexError, match="empty stack"):
        s.pop()
    assert stack_kernels.stack_companion(s).offload is s.offload  # cotangents live where the values do


def test_saved_bytes_split_by_memory():
    lax.reset_saved_bytes()
    base_device, base_host = lax.saved_bytes("device"), lax.saved_bytes("host")
    s = SavedStack()
    s.push(np.zeros(4, np.float64))  # 32 bytes of host memory
    s.push(torch.zeros(3, dtype=torch.float32))  # 12 bytes, a CPU tensor: host memory too
    s.push(torch.empty(5, dtype=torch.float64, device="meta"))  # 40 bytes on a device that is not the host
    assert lax.saved_bytes("host") - base_host == 44 and lax.saved_bytes("device") - base_device == 40
    assert lax.saved_bytes() == lax.saved_bytes("host") + lax.saved_bytes("device")
    s.pop()
    s.pop()
    assert lax.saved_bytes("device") == base_device and lax.saved_bytes("host") - base_host == 32
    assert lax.peak_saved_bytes("device") - base_device == 40 and lax.peak_saved_bytes("host") - base_host == 44
    assert lax.peak_saved_bytes() - base_device - base_host == 84
    del s
    assert (lax.saved_bytes("device"), lax.saved_bytes("host")) == (base_device, base_host)
    with pytest.raises(ValueError, match="memory must be"):
        lax.saved_bytes("gpu")


# --- CUDA only ---------------------------------------------------------------------------------------


@CUDA
def test_cuda_offload_keeps_values_in_pinned_host_memory():
    device = torch.device("cuda", torch.cuda.current_device())
    base_device, base_host = lax.saved_bytes("device"), lax.saved_bytes("host")
    s = SavedStack(HostOffload())
    values = [torch.randn(256, device=device) * k for k in range(4)]
    for v in values:
        s.push(v)
    assert all(isinstance(item, OffloadedValue) and item.host.is_pinned() for item in s.items)
    assert lax.saved_bytes("device") == base_device and lax.saved_bytes("host") - base_host == 4 * 256 * 4
    # the copies ran on the offload side stream, not on the compute stream
    side = _OFFLOAD_STREAMS[device]
    assert side != torch.cuda.current_stream(device)
    first = s.pop()
    assert first.device == device and torch.equal(first, values[3])
    ready = s._ready[1]
    assert isinstance(ready, stack_kernels._Prefetched) and ready.tensor.device == device
    for k in (2, 1, 0):
        assert torch.equal(s.pop(), values[k])
    assert (lax.saved_bytes("device"), lax.saved_bytes("host")) == (base_device, base_host)


@CUDA
def test_cuda_offload_survives_reuse_of_the_pushed_memory():
    # values freed right after their push: their memory is handed out again at once, and the
    # copies to the host must still read what was pushed
    device = torch.device("cuda", torch.cuda.current_device())
    s = SavedStack(HostOffload())
    want = []
    for k in range(32):
        v = torch.full((1 << 16,), float(k), device=device)
        want.append(float(k))
        s.push(v)
        del v
        torch.full((1 << 16,), -1.0, device=device)  # likely to reuse the freed block
    got = [float(s.pop()[0]) for _ in range(32)][::-1]
    assert got == want


@CUDA
def test_cuda_gradients_and_where_the_bytes_are():
    x, a = POINTS[0]
    args = loom.device_put((x, a), "cuda")
    peaks = {}
    grads = {}
    for policy in ("save_all", "offload"):
        grads[policy] = _host(loom.grad(loop(policy), (0, 1))(*args))
        lax.reset_saved_bytes()
        loom.grad(loop(policy), (0, 1))(*args)
        peaks[policy] = (lax.peak_saved_bytes("device"), lax.peak_saved_bytes("host"))
    for g, w in zip(grads["offload"], grads["save_all"]):
        np.testing.assert_array_equal(g, w)
    for g, w in zip(grads["offload"], jax_grad(x, a)):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    # save_all holds its values on the device; offload holds the same bytes on the host instead
    assert peaks["save_all"][0] > 0 and peaks["offload"] == (0, sum(peaks["save_all"]))
