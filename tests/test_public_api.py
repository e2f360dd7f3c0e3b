"""The public namespaces of loom.numpy, loom.numpy.linalg, loom.lax and loom.scipy.* hold exactly
the names recorded in tests/data/public_names.json (`_public` of each module): a reorganisation
loses none, and a new public name is added there on purpose."""

from __future__ import annotations
import __future__

import importlib
import json
import types
import typing

import pytest
from support.paths import DATA

SNAPSHOT = json.loads((DATA / "public_names.json").read_text())


def _public(module: types.ModuleType) -> set[str]:
    """Non-underscore names of `module`, less the incidental ones an implementation imports for
    itself: third-party or sibling modules (`np`, `stablehlo`; a module's own submodules count)
    and typing helpers (`Any`, `Sequence`, `annotations`)."""
    out = set()
    for name in dir(module):
        value = getattr(module, name)
        if name.startswith("_"):
            continue
        if isinstance(value, types.ModuleType) and not value.__name__.startswith(module.__name__ + "."):
            continue
        if isinstance(value, type(__future__.annotations)) or value is typing.Any:
            continue
        if getattr(value, "__module__", None) in ("typing", "collections.abc"):
            continue
        out.add(name)
    return out


@pytest.mark.parametrize("name", sorted(SNAPSHOT))
def test_public_names_unchanged(name: str) -> None:
    now = _public(importlib.import_module(name))
    before = set(SNAPSHOT[name])
    assert sorted(now - before) == [], f"{name} gained public names"
    assert sorted(before - now) == [], f"{name} lost public names"


def test_sharding_names_at_the_top() -> None:
    """`loom.sharding` is the module (as jax.sharding) and `loom.make_mesh` its mesh maker."""
    import loom
    import loom.sharding as sharding
    assert loom.sharding is sharding and isinstance(sharding, types.ModuleType)
    assert loom.make_mesh is sharding.make_mesh
    assert {"Mesh", "NamedSharding", "P", "PartitionSpec", "make_mesh"} <= _public(sharding)
    assert sharding.P is sharding.PartitionSpec
