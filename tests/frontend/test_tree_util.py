"""`loom.tree_util` against `jax.tree_util`: the same leaves, order and structure for tuples,
lists, sorted-key dicts, namedtuples, None and registered classes; tree_map over several trees;
mismatched structures are an error, not a silent truncation."""

from __future__ import annotations

import collections

import pytest

jax = pytest.importorskip("jax")

from loom import tree_util  # noqa: E402

Point = collections.namedtuple("Point", "x y")


class Box:
    def __init__(self, a, b):
        self.a, self.b = a, b


tree_util.register_pytree_node(Box, lambda b: ((b.a, b.b), None), lambda _, kids: Box(*kids))
jax.tree_util.register_pytree_node(Box, lambda b: ((b.a, b.b), None), lambda _, kids: Box(*kids))

TREES = [
    {"b": [1, (2, None)], "a": Point(3, {"z": 4, "y": 5})},
    [Box(1, [2, 3]), (), {}, None, 6],
    (1.5,),
    7,
]


@pytest.mark.parametrize("tree", TREES, ids=range(len(TREES)))
def test_leaves_and_map_match_jax(tree):
    assert tree_util.tree_leaves(tree) == jax.tree_util.tree_leaves(tree)
    assert tree_util.tree_structure(tree).num_leaves == jax.tree_util.tree_structure(tree).num_leaves
    doubled = tree_util.tree_map(lambda a, b: a + b, tree, tree)
    assert tree_util.tree_leaves(doubled) == jax.tree_util.tree_leaves(jax.tree_util.tree_map(lambda a: 2 * a, tree))
    leaves, treedef = tree_util.tree_flatten(tree)
    assert tree_util.tree_leaves(tree_util.tree_unflatten(treedef, leaves)) == leaves
    assert tree_util.tree_leaves(tree, is_leaf=lambda v: v is None) == \
        jax.tree_util.tree_leaves(tree, is_leaf=lambda v: v is None)


def test_tree_map_of_different_structures_is_an_error():
    with pytest.raises(ValueError, match="tree 1 has structure"):
        tree_util.tree_map(lambda a, b: a, [1, 2, 3], [1, 2])
    with pytest.raises(ValueError):
        jax.tree_util.tree_map(lambda a, b: a, [1, 2, 3], [1, 2])
