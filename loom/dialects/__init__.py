"""Dialects shipped with loom. Importing this package registers them."""

from loom.dialects import builtin  # noqa: F401
