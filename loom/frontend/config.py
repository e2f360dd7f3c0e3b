"""loom's configuration, as `jax.config`: `loom.config.update("enable_x64", True)` or the
environment variable `LOOM_ENABLE_X64=1` (read at import) makes every value 64-bit; by default
64-bit inputs (float64, int64, uint64, complex128 arrays, Python ints and floats) are
canonicalized to 32-bit, in eager calls and under `jit` alike. `loom.config.enable_x64` reads the
flag; `with loom.config.override(enable_x64=True): ...` sets it for a block (tests)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any


def _env_flag(name: str) -> bool:
    value = os.environ.get(name, "").strip().lower()
    if value in ("", "0", "false", "no", "off"):
        return False
    if value in ("1", "true", "yes", "on"):
        return True
    raise ValueError(f"environment variable {name}={os.environ[name]!r}: expected 1 / 0, true / false")


class Config:
    """The flags; `generation` counts changes, so caches keyed by traced programs can tell."""

    _FLAGS = ("enable_x64",)

    def __init__(self) -> None:
        self.enable_x64: bool = _env_flag("LOOM_ENABLE_X64")
        self.generation = 0

    def update(self, name: str, value: Any) -> None:
        """Set flag `name` (as `jax.config.update`; the `jax_` prefix is accepted)."""
        flag = name.removeprefix("jax_")
        if flag not in self._FLAGS:
            raise AttributeError(f"loom.config has no flag {name!r}; flags: {', '.join(self._FLAGS)}")
        if not isinstance(value, bool):
            raise TypeError(f"loom.config.update({name!r}, ...) takes a bool, got {value!r}")
        if getattr(self, flag) != value:
            setattr(self, flag, value)
            self.generation += 1

    @contextlib.contextmanager
    def override(self, **flags: bool) -> Iterator[None]:
        """The flags set for the duration of a `with` block, restored after it."""
        before = {name: getattr(self, name) for name in flags}
        try:
            for name, value in flags.items():
                self.update(name, value)
            yield
        finally:
            for name, value in before.items():
                self.update(name, value)


config = Config()

__all__ = ["Config", "config"]
