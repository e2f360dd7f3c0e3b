"""`loom.tree_util`: pytrees, as `jax.tree_util` (tuples, lists, dicts with sorted keys,
namedtuples, None as an empty node, and classes registered with `register_pytree_node`)."""

from loom.frontend.pytree import (
    DictKey,
    GetAttrKey,
    PyTreeDef,
    SequenceKey,
    keystr,
    register_pytree_node,
    tree_flatten,
    tree_flatten_with_path,
    tree_leaves,
    tree_map,
    tree_structure,
    tree_unflatten,
)

__all__ = ["DictKey", "GetAttrKey", "PyTreeDef", "SequenceKey", "keystr", "register_pytree_node", "tree_flatten",
           "tree_flatten_with_path", "tree_leaves", "tree_map", "tree_structure", "tree_unflatten"]
