"""`loom.compile` / `loom.execute` of a sharded program as JAX exports it (sdy mesh and shardings):
partitioned and run over the first CPU devices, global arrays in and out, with JAX's values
(tests/transforms/spmd_corpus: programs lowered by jax.jit with shardings on 8 fake CPU devices,
their inputs and JAX's outputs); `partition=False` runs the global program on one device; too few
devices, several meshes and `partition=True` without a mesh are errors that say so."""

from __future__ import annotations

import json
import pathlib
import sys

import numpy as np
import pytest

import loom
from loom.backend.common import ExecutionError
from loom.dialects.sdy import TensorShardingAttr
from loom.runtime.devices import Device
from loom.sharding import NamedSharding

CORPUS = pathlib.Path(__file__).parents[1] / "transforms" / "spmd_corpus"
PROGRAMS = {r["name"]: r for r in json.loads((CORPUS / "programs.json").read_text())}
VALUES = np.load(CORPUS / "values.npz")
NAMES = sorted(PROGRAMS)[::4]  # a spread of the corpus (test_spmd_partition runs all of it)


def _inputs(name: str) -> list[np.ndarray]:
    return [VALUES[f"{name}/in{i}"] for i in range(PROGRAMS[name]["num_inputs"])]


@pytest.fixture
def eight_devices(monkeypatch):
    """What LOOM_NUM_CPU_DEVICES=8 gives at import."""
    monkeypatch.setattr(sys.modules["loom.runtime.devices"], "CPU_DEVICES",
                        tuple(Device("cpu", i, "numpy") for i in range(8)))


@pytest.mark.parametrize("name", NAMES)
def test_a_sharded_program_runs_partitioned_with_jax_values(name, eight_devices):
    text = PROGRAMS[name]["text"]
    run = loom.compile(text)
    assert type(run).__name__ == "MeshExecutable"
    got = run(*_inputs(name))
    got = list(got) if isinstance(got, tuple) else [got]
    assert len(got) == PROGRAMS[name]["num_outputs"]
    module = loom.ir.parse(text)
    main = next(op for op in module.walk() if op.name == "func.func" and op.get_attr("sym_name").value == "main")
    for i, g in enumerate(got):
        assert isinstance(g, loom.Array) and isinstance(g.sharding, NamedSharding)
        declared = main.get_attr("res_attrs")[i].get_value("sdy.sharding")
        if isinstance(declared, TensorShardingAttr) and all(d.closed for d in declared.dims):
            assert g.sharding == NamedSharding.from_sdy(g.sharding.mesh, declared), (name, i)
        np.testing.assert_allclose(np.asarray(g), VALUES[f"{name}/out{i}"], rtol=1e-4, atol=1e-4,
                                   err_msg=f"{name} result {i}")
    whole = loom.execute(text, *_inputs(name), partition=False)
    for i, w in enumerate(whole if isinstance(whole, tuple) else [whole]):
        np.testing.assert_allclose(np.asarray(got[i]), w, rtol=1e-4, atol=1e-4, err_msg=f"{name} result {i}, whole")


def test_too_few_devices_is_an_error_naming_the_setting():
    name = NAMES[0]
    with pytest.raises(ExecutionError, match=r"needs 8 devices but 1 is available; set LOOM_NUM_CPU_DEVICES=8"):
        loom.compile(PROGRAMS[name]["text"])
    whole = loom.execute(PROGRAMS[name]["text"], *_inputs(name), partition=False)
    np.testing.assert_allclose(whole if not isinstance(whole, tuple) else whole[0], VALUES[f"{name}/out0"],
                               rtol=1e-4, atol=1e-4)


def test_partition_needs_a_mesh_and_one_mesh_only(eight_devices):
    plain = "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n  return %x : tensor<4xf32>\n}"
    with pytest.raises(ExecutionError, match="declares no mesh"):
        loom.compile(plain, partition=True)
    two = ('sdy.mesh @a = <["x"=2]>\nsdy.mesh @b = <["y"=4]>\n' + plain)
    with pytest.raises(ExecutionError, match=r"declares 2 meshes \(@a, @b\)"):
        loom.compile(two)
