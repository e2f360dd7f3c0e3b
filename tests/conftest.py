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
