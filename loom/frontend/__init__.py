"""loom's front end: pytrees, tracing Python into the IR, and `jit`."""

from loom.frontend.jit import Compiled, Jitted, Lowered, jit
from loom.frontend.pytree import (
    register_pytree_node,
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_structure,
    tree_unflatten,
)
from loom.frontend.tracing import Tracer, TracerBoolConversionError, TracerError

__all__ = ["Compiled", "Jitted", "Lowered", "Tracer", "TracerBoolConversionError", "TracerError", "jit",
           "register_pytree_node", "tree_flatten", "tree_leaves", "tree_map", "tree_structure", "tree_unflatten"]
