"""Pytrees, as in JAX: nested tuples, lists, dicts (sorted keys), None and namedtuples, plus user
classes registered with `register_pytree_node`. Anything else is a leaf.

`tree_flatten(tree)` gives the leaves and a `PyTreeDef` (hashable, comparable) that
`tree_unflatten(treedef, leaves)` rebuilds the tree from; `tree_flatten_with_path` also gives each
leaf's key path, which `keystr` renders as `['a'][0]` for error messages.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import Any, NamedTuple

# cls -> (flatten(node) -> (children, aux_data), unflatten(aux_data, children) -> node)
_REGISTRY: dict[type, tuple[Callable[[Any], tuple[Iterable[Any], Hashable]], Callable[[Hashable, Iterable[Any]], Any]]]
_REGISTRY = {}


def register_pytree_node(cls: type, flatten: Callable[[Any], tuple[Iterable[Any], Hashable]],
                         unflatten: Callable[[Hashable, Iterable[Any]], Any]) -> None:
    """Make instances of `cls` pytree nodes: `flatten(x)` returns `(children, aux_data)` (aux_data
    hashable) and `unflatten(aux_data, children)` rebuilds an instance."""
    _REGISTRY[cls] = (flatten, unflatten)


def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


class PyTreeDef:
    """The structure of a pytree: a node kind, its auxiliary data and child structures
    (`kind` is None for a leaf)."""

    __slots__ = ("kind", "aux", "children", "_hash")

    def __init__(self, kind: Any, aux: Hashable, children: tuple[PyTreeDef, ...]) -> None:
        self.kind = kind
        self.aux = aux
        self.children = children
        self._hash = hash((kind, aux, children))

    @property
    def num_leaves(self) -> int:
        if self.kind is None:
            return 1
        return sum(c.num_leaves for c in self.children)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, PyTreeDef) and self._hash == other._hash and self.kind == other.kind
                and self.aux == other.aux and self.children == other.children)

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        if self.kind is None:
            return "*"
        inner = ", ".join(map(repr, self.children))
        name = getattr(self.kind, "__name__", str(self.kind))
        return f"PyTreeDef({name}[{inner}])" if self.aux is None else f"PyTreeDef({name}{self.aux!r}[{inner}])"


LEAF = PyTreeDef(None, None, ())


class SequenceKey(NamedTuple):
    """A key path entry for a tuple or list element."""
    index: int

    def __str__(self) -> str:
        return f"[{self.index}]"


class DictKey(NamedTuple):
    """A key path entry for a dict value."""
    key: Any

    def __str__(self) -> str:
        return f"[{self.key!r}]"


class GetAttrKey(NamedTuple):
    """A key path entry for a namedtuple field."""
    name: str

    def __str__(self) -> str:
        return f".{self.name}"


def keystr(path: tuple[Any, ...]) -> str:
    """A key path as text: `['a'][0].field`."""
    return "".join(str(k) for k in path)


def node_children(x: Any) -> tuple[Any, Hashable, list[Any], list[Any]] | None:
    """(kind, aux, children, keys) of a node, or None for a leaf."""
    if x is None:
        return type(None), None, [], []
    t = type(x)
    if t is tuple or t is list:
        return t, None, list(x), [SequenceKey(i) for i in range(len(x))]
    if t is dict:
        keys = sorted(x)
        return dict, tuple(keys), [x[k] for k in keys], [DictKey(k) for k in keys]
    if t in _REGISTRY:
        children, aux = _REGISTRY[t][0](x)
        children = list(children)
        return t, aux, children, [SequenceKey(i) for i in range(len(children))]
    if _is_namedtuple(x):
        return t, None, list(x), [GetAttrKey(f) for f in t._fields]
    return None


def tree_flatten_with_path(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                           ) -> tuple[list[tuple[tuple[Any, ...], Any]], PyTreeDef]:
    """`([(key_path, leaf), ...], treedef)`."""
    out: list[tuple[tuple[Any, ...], Any]] = []

    def walk(x: Any, path: tuple[Any, ...]) -> PyTreeDef:
        node = None if is_leaf is not None and is_leaf(x) else node_children(x)
        if node is None:
            out.append((path, x))
            return LEAF
        kind, aux, children, keys = node
        return PyTreeDef(kind, aux, tuple(walk(c, (*path, k)) for c, k in zip(children, keys)))

    treedef = walk(tree, ())
    return out, treedef


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> tuple[list[Any], PyTreeDef]:
    """`(leaves, treedef)`, leaves in order (dict keys sorted)."""
    pairs, treedef = tree_flatten_with_path(tree, is_leaf)
    return [leaf for _, leaf in pairs], treedef


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """Rebuild a tree of structure `treedef` from `leaves`."""
    it = iter(leaves)

    def build(td: PyTreeDef) -> Any:
        if td.kind is None:
            return next(it)
        children = [build(c) for c in td.children]
        kind = td.kind
        if kind is type(None):
            return None
        if kind is tuple or kind is list:
            return kind(children)
        if kind is dict:
            return dict(zip(td.aux, children))
        if kind in _REGISTRY:
            return _REGISTRY[kind][1](td.aux, children)
        return kind(*children)  # namedtuple

    result = build(treedef)
    if next(it, _SENTINEL) is not _SENTINEL:
        raise ValueError("too many leaves for the tree structure")
    return result


_SENTINEL = object()


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """The leaves of `tree`, in flattening order."""
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """The `PyTreeDef` of `tree`."""
    return tree_flatten(tree, is_leaf)[1]


def tree_map(fn: Callable[..., Any], tree: Any, *rest: Any, is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Apply `fn` to the leaves of `tree` and the matching leaves of `rest` (trees of the same
    structure, else a ValueError), keeping the structure."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = []
    for i, r in enumerate(rest):
        r_leaves, r_def = tree_flatten(r, is_leaf)
        if r_def != treedef:
            raise ValueError(f"tree_map: tree {i + 1} has structure {r_def}, but the first tree has {treedef}")
        others.append(r_leaves)
    return tree_unflatten(treedef, [fn(*xs) for xs in zip(leaves, *others)])


__all__ = ["DictKey", "GetAttrKey", "PyTreeDef", "SequenceKey", "keystr", "register_pytree_node", "tree_flatten",
           "tree_flatten_with_path", "tree_leaves", "tree_map", "tree_structure", "tree_unflatten"]
