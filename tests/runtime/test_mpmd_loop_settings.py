"""Per-loop settings of placed programs: `lax.while_loop(parallel_iterations=, devices=)`. The
single-device program (the same function, unpartitioned) is the oracle of values and gradients;
the bound of each loop is read from the order of the devices' events, with gates that hold one
device until another got somewhere it may only reach if the bound lets it (in process: threads)."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from mpmd_programs import homed, homed_loss, nested
from test_mpmd import assert_bitwise_equal

import loom
import loom.numpy as lnp
from loom import lax
from loom.dialects.mpmd import LOOP_DEVICES_ATTRIBUTE, PARALLEL_ITERATIONS_ATTRIBUTE
from loom.ir import parse
from loom.runtime.mpmd import MPMDProgram
from loom.transforms.mpmd_partition import MPMDError, device_functions, partition


def _x() -> np.ndarray:
    return np.linspace(-1, 1, 8).astype(np.float32)


@pytest.mark.parametrize("trips", [0, 1, 5])
def test_a_loop_with_devices_runs_its_control_and_unplaced_ops_on_its_home(trips: int) -> None:
    x, n = _x(), np.int32(trips)
    module = loom.jit(homed).lower(x, n).module
    loop = next(o for o in module.walk() if o.name == "stablehlo.while")
    assert [int(d) for d in loop.attributes[LOOP_DEVICES_ATTRIBUTE].values] == [0, 1]
    assert int(loop.attributes[PARALLEL_ITERATIONS_ATTRIBUTE].value) == 2
    functions = device_functions(partition(module, parallel_iterations=1))
    ops0 = [o.name for o in functions[0].walk()]
    ops1 = [o.name for o in functions[1].walk()]
    assert "stablehlo.tanh" in ops0 and "stablehlo.reduce" in ops0 and "stablehlo.tanh" not in ops1
    assert "stablehlo.sine" in ops1 and "stablehlo.sine" not in ops0
    cond1 = next(o for o in functions[1].walk() if o.name == "stablehlo.while").regions[0].entry
    assert [o.name for o in cond1.ops] == ["mpmd.recv", "stablehlo.return"]  # the predicate comes from home
    assert {int(o.properties["parallel"].value) for f in functions.values() for o in f.walk()
            if o.name == "mpmd.iteration"} == {2}  # the loop's own bound, not the program's 1
    got = MPMDProgram(str(functions[0].parent_op))(x, n, timeout=20)
    assert_bitwise_equal(got, loom.jit(homed)(x, n))
    assert int(got[0]) == trips


def test_the_gradient_through_a_loop_with_devices_matches_one_device_and_finite_differences() -> None:
    loom.config.update("enable_x64", True)
    try:
        x, n = np.linspace(-1, 1, 5), np.int32(4)
        g = loom.grad(homed_loss)
        module = partition(loom.jit(g).lower(x, n).module, parallel_iterations=1)
        loops = [o for f in device_functions(module).values() for o in f.walk() if o.name == "mpmd.iteration"]
        assert len(loops) >= 4 and {int(o.properties["parallel"].value) for o in loops} == {2}  # forward and backward
        got, = MPMDProgram(module)(x, n, timeout=20)
        assert_bitwise_equal((got,), loom.jit(g)(x, n))
        eps = 1e-6
        loss = loom.jit(homed_loss)
        fd = np.array([(float(loss(x + eps * e, n)) - float(loss(x - eps * e, n))) / (2 * eps) for e in np.eye(len(x))])
        np.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-8)
    finally:
        loom.config.update("enable_x64", False)


def test_a_body_op_placed_outside_the_loops_devices_is_an_error_naming_it() -> None:
    def f(x):
        def body(c):
            i = c[0] + 1
            with loom.placement(2):
                return i, lnp.cos(c[1])
        return lax.while_loop(lambda c: c[0] < 3, body, (lnp.int32(0), x), devices=(0, 1))
    with pytest.raises(MPMDError, match=r"stablehlo.cosine at .*test_mpmd_loop_settings.py:\d+:\d+ is placed on device "
                                        r"2, but the loop at .*test_mpmd_loop_settings.py:\d+:\d+ runs on devices "
                                        r"\[0, 1\]"):
        partition(loom.jit(f).lower(_x()).module)


@pytest.mark.parametrize("kwargs, message", [
    ({"parallel_iterations": 0}, r"parallel_iterations must be an int >= 1, not 0"),
    ({"parallel_iterations": 2.0}, r"parallel_iterations must be an int >= 1, not 2.0"),
    ({"devices": ()}, r"devices must be a non-empty sequence"),
    ({"devices": 1}, r"devices must be a non-empty sequence"),
    ({"devices": (0, -1)}, r"devices\[1\]: loom.placement takes a device number >= 0"),
])
def test_while_loop_rejects_bad_settings_naming_the_argument(kwargs, message) -> None:
    with pytest.raises(ValueError, match=message):
        loom.jit(lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1]), (lnp.int32(0), x),
                                          **kwargs)).lower(_x())


def test_settings_change_no_value_on_one_device() -> None:
    x, n = _x(), np.int32(3)
    plain = loom.jit(lambda x, n: lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, lnp.tanh(c[1]) + 0.1),
                                                 (lnp.int32(0), x)))
    placed = loom.jit(lambda x, n: lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, lnp.tanh(c[1]) + 0.1),
                                                  (lnp.int32(0), x), parallel_iterations=1, devices=(1,)))
    assert_bitwise_equal(placed(x, n), plain(x, n))
    assert_bitwise_equal(lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2.0), (np.int32(0), x),
                                        parallel_iterations=3, devices=(0,)),
                         (np.int32(3), x * 8))


def test_a_nested_loop_with_one_parallel_iteration_in_a_loop_with_four() -> None:
    """Outer loop: bound 4 (the program's default is 1): device 0 opens outer iteration 2 while
    device 1 is held in outer iteration 0. Inner loop: bound 1: its home, device 2, cannot open
    inner iteration 1 while device 1 is held in inner iteration 0, and the devices open every
    inner iteration in step."""
    x, n = _x(), np.int32(3)
    text = str(partition(loom.jit(nested).lower(x, n).module, parallel_iterations=1))
    again = parse(text)
    again.verify()
    assert str(again) == text
    bounds = {(int(o.properties["loop"].value), int(o.properties["parallel"].value)) for o in again.walk()
              if o.name == "mpmd.iteration"}
    assert bounds == {(0, 4), (1, 1)}
    prog = MPMDProgram(text)
    outer_ahead, inner_ahead = threading.Event(), threading.Event()
    gates: dict[str, bool] = {}

    def on_event(event):
        if event == (0, "iteration", 0, (2,)):
            outer_ahead.set()
        if event == (2, "iteration", 1, (0, 1)):
            inner_ahead.set()
        if event == (1, "iteration", 0, (0,)):
            gates["outer"] = outer_ahead.wait(5.0)
        if event == (1, "iteration", 1, (0, 0)):
            gates["inner"] = inner_ahead.wait(0.5)
    got = prog(x, n, timeout=20, on_event=on_event)
    assert_bitwise_equal(got, loom.jit(nested)(x, n))
    assert gates == {"outer": True, "inner": False}
    opened = [(e[0], e[2], e[3]) for e in prog.events if e[1] == "iteration"]
    for i in range(3):
        for j in range(1, 3):  # inner: neither device opens j before the other opened j - 1
            assert opened.index((1, 1, (i, j - 1))) < opened.index((2, 1, (i, j)))
            assert opened.index((2, 1, (i, j - 1))) < opened.index((1, 1, (i, j)))
    assert {(d, e) for d, loop, e in opened if loop == 1} == {(d, (i, j)) for d in (1, 2) for i in range(3)
                                                              for j in range(3)}


def test_on_gloo_processes_nested_loops_with_their_own_bounds_match_one_device() -> None:
    pytest.importorskip("torch")
    from mpmd_worker import launch
    x, n = _x(), np.int32(3)
    outcomes = launch("loop_settings", 3, deadline_s=120)
    for rank in range(3):
        assert outcomes[rank][0] == "ok", outcomes[rank]
        for p in (1, 10):
            assert_bitwise_equal(outcomes[rank][1][f"nested{p}"], loom.jit(nested)(x, n))
