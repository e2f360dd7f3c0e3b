"""`loom.custom_vjp` and `loom.custom_jvp`: functions whose derivative the user writes, as
`jax.custom_vjp` and `jax.custom_jvp`.

    @loom.custom_vjp
    def clip_gradient(x):
        return x

    def fwd(x):
        return x, None                        # (output, residuals for bwd)

    def bwd(residuals, g):
        return (lnp.clip(g, -1.0, 1.0),)      # one cotangent per argument (None: zero)

    clip_gradient.defvjp(fwd, bwd)

    @loom.custom_jvp
    def relu(x):
        return lnp.maximum(x, 0.0)

    relu.defjvps(lambda g, ans, x: lnp.where(x > 0, g, 0.0))

Called while a function is traced (inside `jit`, `grad`, `vmap`), a custom_vjp function traces
`fwd` in place and `bwd` into the region of an `ad.custom_vjp` op (loom.dialects.ad) whose results
are `fwd`'s outputs: reverse mode inlines `bwd`, forward mode (`jvp`) refuses it, as JAX does. A
custom_jvp function traces itself in place and its JVP rule into the region of an `ad.custom_jvp`
op: forward mode inlines the rule, reverse mode transposes it (it must be linear in the tangents,
as JAX requires). Both ops batch under `vmap` and run as the identity on their outputs. Called on
concrete arrays outside any trace, the function itself runs; called from inside its own `fwd` or
JVP rule (JAX's examples do), it is the plain function. `nondiff_argnums` name positional
arguments that are static Python values (not arrays): they are passed first to `bwd` (before the
residuals) or to the JVP rule (before the primals) and get no derivative.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from loom.dialects import ad, stablehlo
from loom.frontend.grad import inline_module
from loom.frontend.jit import Jitted
from loom.frontend.pytree import keystr, tree_flatten, tree_flatten_with_path, tree_map, tree_unflatten
from loom.frontend.tracing import Tracer, current_trace, filled_like, is_floating, lift, promote, trace_of, user_line
from loom.ir.builder import Builder, InsertionPoint
from loom.ir.core import Block, Region


class _CustomDerivative:
    """What custom_vjp and custom_jvp share: the wrapped function, static arguments, lifting the
    array arguments into the trace, and tracing a rule into a region."""

    KIND = ""

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = ()) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(sorted(nondiff_argnums))
        self._in_rule = 0

    def _ready(self) -> bool:
        raise NotImplementedError

    def __call__(self, *args: Any) -> Any:
        if not self._ready():
            rule = "defvjp(fwd, bwd)" if self.KIND == "custom_vjp" else "defjvp(jvp) or defjvps(...)"
            raise TypeError(f"{self.KIND} function {self.__name__} called before {rule} (at {user_line()})")
        trace = current_trace()
        if trace is None or self._in_rule:
            return self.fun(*args)
        for i in self.nondiff_argnums:
            if not -len(args) <= i < len(args):
                raise ValueError(f"nondiff_argnums {i} is out of range for {len(args)} arguments")
        static = [i % len(args) for i in self.nondiff_argnums]
        for i in static:
            if any(isinstance(leaf, Tracer) for leaf in tree_flatten(args[i])[0]):
                raise TypeError(f"argument {i} of {self.__name__} is in nondiff_argnums but is a traced array "
                                f"(at {user_line()}); nondiff_argnums are for static Python values")
        diff = [i for i in range(len(args)) if i not in static]
        pairs, tree = tree_flatten_with_path(tuple(args[i] for i in diff))
        inputs = [lift(trace, leaf) for _, leaf in pairs]
        return self._traced(trace, args, static, diff, pairs, tree, inputs)

    def _traced(self, trace: Any, args: tuple, static: list[int], diff: list[int], pairs: list, tree: Any,
                inputs: list[Tracer]) -> Any:
        raise NotImplementedError

    @staticmethod
    def _with(args: tuple, diff: list[int], values: Any) -> list[Any]:
        """`args` with the differentiable ones replaced by `values` (a tuple of them)."""
        out = list(args)
        for i, v in zip(diff, values):
            out[i] = v
        return out

    @contextlib.contextmanager
    def _rule(self, trace: Any, block: Block | None = None) -> Iterator[None]:
        """While a rule runs: the function is plain, and ops go into `block` when given."""
        saved = trace.builder
        if block is not None:
            trace.builder = Builder(InsertionPoint.at_end(block), saved.location)
        self._in_rule += 1
        try:
            yield
        finally:
            self._in_rule -= 1
            trace.builder = saved

    def _like_inputs(self, trace: Any, got: Any, what: str, args: list[Any], pairs: list, inputs: list[Tracer]
                     ) -> list[Tracer]:
        """A rule's per-argument result (a tuple with one pytree per argument; None, for an
        argument or any leaf, is zeros) as one tracer per input leaf, of its shape and dtype."""
        if not isinstance(got, (tuple, list)) or len(got) != len(args):
            raise TypeError(f"the {what} of {self.__name__} must return a tuple with one cotangent per "
                            f"differentiable argument ({len(args)}), got {_kind(got)} (at {user_line()})")
        flat: list[Any] = []
        for k, (ct, arg) in enumerate(zip(got, args)):
            arg_tree = tree_flatten(arg)[1]
            flat.extend(self._leaves(ct, arg_tree, f"a cotangent for argument {k}", what))
        return self._matched(trace, flat, [(keystr(p), x) for (p, _), x in zip(pairs, inputs)], what, "cotangent")

    def _leaves(self, value: Any, tree: Any, name: str, what: str) -> list[Any]:
        if value is None:
            return [None] * tree.num_leaves
        leaves, got = tree_flatten(value, is_leaf=lambda v: v is None)  # None leaves: zeros
        if got != tree:
            raise TypeError(f"the {what} of {self.__name__} returned {name} with structure {got}, expected {tree} "
                            f"(at {user_line()})")
        return leaves

    def _matched(self, trace: Any, values: list[Any], like: list[tuple[str, Tracer]], what: str, noun: str
                 ) -> list[Tracer]:
        out = []
        for v, (path, x) in zip(values, like):
            if v is None or not is_floating(x.dtype):
                out.append(filled_like(x, 0))
                continue
            v = lift(trace, v)
            if v.shape != x.shape:
                raise TypeError(f"the {what} of {self.__name__} returned a {noun} of shape {v.shape} for "
                                f"{'input' if noun == 'cotangent' else 'output'}{path} of shape {x.shape} "
                                f"(at {user_line()})")
            out.append(v if v.dtype == x.dtype else lift(trace, v, x.dtype))
        return out


class custom_vjp(_CustomDerivative):  # noqa: N801 - jax.custom_vjp's name
    """A function with a reverse-mode derivative given by `defvjp(fwd, bwd)`."""

    KIND = "custom_vjp"

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = ()) -> None:
        super().__init__(fun, nondiff_argnums)
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None

    def defvjp(self, fwd: Callable[..., Any], bwd: Callable[..., Any]) -> None:
        """`fwd(*args) -> (output, residuals)`; `bwd(*nondiff_args, residuals, output_cotangent)
        -> a tuple with one cotangent per differentiable argument`, of the argument's structure;
        None, for a whole argument or any of its leaves, is a zero cotangent."""
        self.fwd, self.bwd = fwd, bwd

    def _ready(self) -> bool:
        return self.fwd is not None

    def _traced(self, trace, args, static, diff, pairs, tree, inputs):
        with self._rule(trace):
            pair = self.fwd(*self._with(args, diff, tree_unflatten(tree, inputs)))
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
            raise TypeError(f"the fwd function of {self.__name__} must return a pair (output, residuals), "
                            f"got {type(pair).__name__} (at {user_line()})")
        out, residuals = pair
        out_leaves, out_tree = tree_flatten(out)
        outputs = [lift(trace, leaf) for leaf in out_leaves]
        res_leaves, res_tree = tree_flatten(residuals)
        res = [lift(trace, leaf) for leaf in res_leaves]
        region = Region()
        block = region.add_block(Block([*(t.value.type for t in res), *(t.value.type for t in outputs)]))
        with self._rule(trace, block):
            n = len(res)
            res_in = tree_unflatten(res_tree, [Tracer(a, trace, t.weak) for a, t in zip(block.args[:n], res)])
            cts_in = tree_unflatten(out_tree, [Tracer(a, trace, t.weak) for a, t in zip(block.args[n:], outputs)])
            got = self.bwd(*(args[i] for i in static), res_in, cts_in)
            cts = self._like_inputs(trace, got, "bwd function", [args[i] for i in diff], pairs, inputs)
            stablehlo.return_(trace.emit(), [c.value for c in cts])
        op = ad.CustomVjpOp.build(trace.emit(), [t.value for t in inputs], [t.value for t in outputs],
                                  [t.value for t in res], region)
        return tree_unflatten(out_tree, [Tracer(r, trace, t.weak) for r, t in zip(op.results, outputs)])


class custom_jvp(_CustomDerivative):  # noqa: N801 - jax.custom_jvp's name
    """A function with a forward-mode derivative given by `defjvp(jvp)` or `defjvps(*jvps)`;
    reverse mode transposes it."""

    KIND = "custom_jvp"

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = ()) -> None:
        super().__init__(fun, nondiff_argnums)
        self.jvp: Callable[..., Any] | None = None

    def defjvp(self, jvp: Callable[..., Any]) -> Callable[..., Any]:
        """`jvp(*nondiff_args, primals, tangents) -> (primal_out, tangent_out)`, primals and
        tangents tuples of the differentiable arguments; `tangent_out` linear in `tangents`.
        Returns `jvp`, so that it can be used as a decorator."""
        self.jvp = jvp
        return jvp

    def defjvps(self, *jvps: Callable[..., Any] | None) -> None:
        """One rule per argument, `jvp_i(tangent_i, primal_out, *primals) -> its contribution`
        to the output tangent (None: none); the contributions are summed."""
        def jvp(primals: tuple, tangents: tuple) -> tuple:
            out = self.fun(*primals)
            total = None
            for rule, t in zip(jvps, tangents):
                if rule is not None:
                    part = rule(t, out, *primals)
                    total = part if total is None else _tree_add(total, part)
            return out, total
        self.jvp = jvp

    def _ready(self) -> bool:
        return self.jvp is not None

    def _traced(self, trace, args, static, diff, pairs, tree, inputs):
        out = self.fun(*self._with(args, diff, tree_unflatten(tree, inputs)))
        out_leaves, out_tree = tree_flatten(out)
        outputs = [lift(trace, leaf) for leaf in out_leaves]
        region = Region()
        block = region.add_block(Block([t.value.type for t in inputs] * 2))
        n = len(inputs)
        with self._rule(trace, block):
            primals = tree_unflatten(tree, [Tracer(a, trace, t.weak) for a, t in zip(block.args[:n], inputs)])
            tangents = tree_unflatten(tree, [Tracer(a, trace, t.weak) for a, t in zip(block.args[n:], inputs)])
            got = self.jvp(*(args[i] for i in static), tuple(primals), tuple(tangents))
            if not (isinstance(got, (tuple, list)) and len(got) == 2):
                raise TypeError(f"the jvp rule of {self.__name__} must return a pair (primal_out, tangent_out), "
                                f"got {_kind(got)} (at {user_line()})")
            tangent_out = self._leaves(got[1], out_tree, "a tangent_out", "jvp rule")
            paths = [keystr(p) for p, _ in tree_flatten_with_path(out)[0]]
            ts = self._matched(trace, tangent_out, list(zip(paths, outputs)), "jvp rule", "tangent")
            stablehlo.return_(trace.emit(), [t.value for t in ts])
        op = ad.CustomJvpOp.build(trace.emit(), [t.value for t in inputs], [t.value for t in outputs], region)
        return tree_unflatten(out_tree, [Tracer(r, trace, t.weak) for r, t in zip(op.results, outputs)])


def closure_convert(fun: Callable[..., Any], *example_args: Any) -> tuple[Callable[..., Any], list[Any]]:
    """`(converted, consts)`, as `jax.closure_convert`: the traced values `fun` closes over
    (`consts`) become explicit trailing arguments, `converted(*args, *consts) == fun(*args)`, so
    that a custom_vjp or custom_jvp function can take them as inputs (and differentiate them)
    instead of closing over them. Outside any trace nothing is traced: `(fun, [])`.
    `example_args` give the shapes and dtypes the converted function is called with."""
    if current_trace() is None:
        return fun, []
    lowered = Jitted(fun).lower(*example_args)
    consts = list(lowered.captures)
    n = len(consts)

    def converted(*args: Any) -> Any:
        if len(args) != len(example_args) + n:
            raise TypeError(f"the closure-converted {getattr(fun, '__name__', 'function')} takes "
                            f"{len(example_args)} arguments and {n} consts, got {len(args)} (at {user_line()})")
        leaves = tree_flatten((list(args[:len(args) - n]), {}))[0]
        return tree_unflatten(lowered.out_tree, inline_module(lowered.module, [*leaves, *args[len(args) - n:]]))
    return converted, consts


def _tree_add(a: Any, b: Any) -> Any:
    return tree_map(_add, a, b)


def _add(x: Any, y: Any) -> Any:
    """`x + y` with JAX's promotion (a tangent contribution of each argument, summed)."""
    trace = trace_of(x, y)
    if trace is None:
        return np.add(x, y)
    a, b = promote(trace, x, y)
    return Tracer(stablehlo.add(trace.emit(), a.value, b.value), trace, a.weak and b.weak)


def _kind(x: Any) -> str:
    return f"a {type(x).__name__} of length {len(x)}" if isinstance(x, (tuple, list)) else type(x).__name__


__all__ = ["closure_convert", "custom_jvp", "custom_vjp"]
