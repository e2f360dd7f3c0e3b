"""Fixtures shared by the test modules."""

from __future__ import annotations

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


# Suites that check float64 results (finite differences, int64 indices) and predate loom's
# 32-bit default: 64-bit values on for each of their tests (a module can instead say
# `pytestmark = pytest.mark.usefixtures("loom_x64")`).
_FLOAT64_MODULES = {"test_knn", "test_offload_policy", "test_rules_indexing"}


@pytest.fixture
def loom_x64():
    """64-bit values in loom (`loom.config` enable_x64) for one test."""
    import loom
    with loom.config.override(enable_x64=True):
        yield


@pytest.fixture(autouse=True)
def _float64_suites(request):
    if request.module.__name__.rsplit(".", 1)[-1] in _FLOAT64_MODULES:
        request.getfixturevalue("loom_x64")
    yield
