"""A data-dependent while loop (with a cond in its body) on sharded data, forward and reverse mode,
partitioned and run with one partition per process on torch.distributed (gloo on 127.0.0.1;
processes started by tests/runtime/control_flow_worker.py, every wait bounded): every process
takes the same trip count and the values and gradients are the single-device ones; a process that
dies in the middle of the loop makes the others fail naming it."""

from __future__ import annotations

import numpy as np
import pytest
from control_flow_worker import halve_while_element, halve_while_norm, launch, operands, shrink_loss

import loom

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("world", [2, 4])
def test_sharded_while_and_its_gradient_on_processes_match_one_device(world: int) -> None:
    x, w = operands()
    y, trips = loom.jit(halve_while_norm)(x)
    z, element_trips = loom.jit(halve_while_element)(x)
    gx, gw = loom.jit(loom.grad(shrink_loss, argnums=(0, 1)))(x, w)
    outcomes = launch("while", world)
    for rank in range(world):
        assert outcomes[rank][0] == "ok", outcomes[rank]
        got = outcomes[rank][1]
        assert got["trips"] == int(trips) > 1
        np.testing.assert_allclose(got["y"], y, rtol=1e-6)
        assert got["element_trips"] == int(element_trips) > 1
        np.testing.assert_allclose(got["z"], z, rtol=1e-6)
        np.testing.assert_allclose(got["gx"], gx, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got["gw"], gw, rtol=1e-5, atol=1e-6)


def test_a_process_killed_mid_loop_makes_the_others_fail_naming_it() -> None:
    timeout_s, victim, world = 3.0, 1, 2
    outcomes = launch("killed_mid_loop", world, timeout_s=timeout_s, deadline_s=60, expect_exit=frozenset({victim}))
    for rank in set(range(world)) - {victim}:
        kind, value = outcomes[rank][0], outcomes[rank][1]
        assert kind == "ok", outcomes[rank]
        assert value["missing"] == [victim], value["message"]
        assert f"rank {victim} stopped" in value["message"] and "'stablehlo.all_reduce'" in value["message"]
        assert value["seconds"] < 2 * timeout_s + 10, value
