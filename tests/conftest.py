"""Fixtures shared by the test modules, and the markers of every test (registered in pyproject.toml).

Markers are given here, not in the test files: `jax` / `torch` to the tests of a module that
imports them, `gpu` to tests skipped without a CUDA device, `multiprocess` to tests that start
processes of their own, and `slow` to the modules and tests listed in SLOW (measured, see there).
`make test-fast` runs `-m "not slow"`.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest


@pytest.fixture
def jax_x64():
    """float64 in jax for one test (other tests compare against float32 jax): modules that need it
    throughout say `pytestmark = pytest.mark.usefixtures("jax_x64")`."""
    jax = pytest.importorskip("jax")
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", previous)


# Measured with `pytest -n 2 --durations=80` on a shared 2-core machine: whole modules (their tests
# together take a minute or more) and single tests (10 s or more), as "module" or "module::test"
# (every parametrization of the test).
SLOW = frozenset({
})

_MODULE_MARKERS = {
    "jax": re.compile(r"^\s*(import jax|from jax)|importorskip\(\"jax", re.M),
    "torch": re.compile(r"^\s*(import torch|from torch)|importorskip\(\"torch", re.M),
    "multiprocess": re.compile(r"torch\.distributed|torchrun|multiprocessing"),
}
_NEEDS_GPU = re.compile(r"needs a CUDA|needs a GPU|CUDA GPU")


def _module_markers(path: Path, cache: dict[Path, list[str]] = {}) -> list[str]:  # noqa: B006 (a cache)
    found = cache.get(path)
    if found is None:
        source = path.read_text(encoding="utf-8")
        found = cache[path] = [name for name, pattern in _MODULE_MARKERS.items() if pattern.search(source)]
    return found


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        path = Path(str(item.fspath))
        for name in _module_markers(path):
            item.add_marker(name)
        if any(_NEEDS_GPU.search(str(m.kwargs.get("reason", ""))) for m in item.iter_markers("skipif")):
            item.add_marker("gpu")
        module = path.name
        test = item.nodeid.split("::", 1)[-1].split("[", 1)[0]
        if module in SLOW or f"{module}::{test}" in SLOW:
            item.add_marker("slow")
