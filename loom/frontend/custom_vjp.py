"""`loom.custom_vjp`: a function whose reverse-mode derivative the user writes, as
`jax.custom_vjp`.

    @loom.custom_vjp
    def clip_gradient(x):
        return x

    def fwd(x):
        return x, None                        # (output, residuals for bwd)

    def bwd(residuals, g):
        return (lnp.clip(g, -1.0, 1.0),)      # one cotangent per argument (None: zero)

    clip_gradient.defvjp(fwd, bwd)

Called while a function is traced (inside `jit`, `grad`, `vmap`), `fwd` is traced in place and
`bwd` into the region of an `ad.custom_vjp` op (loom.dialects.ad), whose results are `fwd`'s
outputs: reverse mode inlines `bwd` there, forward mode (`jvp`) refuses it, as JAX does, and the
executors run it as the identity. Called on concrete arrays outside any trace, the function itself
runs. `nondiff_argnums` name positional arguments that are static Python values (not arrays): they
are passed to `fwd` as usual and to `bwd` first, before the residuals, and get no cotangent.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from loom.dialects import ad, stablehlo
from loom.frontend.pytree import keystr, tree_flatten, tree_flatten_with_path, tree_unflatten
from loom.frontend.tracing import Tracer, current_trace, is_floating, user_line
from loom.ir.builder import Builder, InsertionPoint
from loom.ir.core import Block, Region


class custom_vjp:  # noqa: N801 - jax.custom_vjp's name
    """A function with a reverse-mode derivative given by `defvjp(fwd, bwd)`."""

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = ()) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(sorted(nondiff_argnums))
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None
        self._in_fwd = 0

    def defvjp(self, fwd: Callable[..., Any], bwd: Callable[..., Any]) -> None:
        """`fwd(*args) -> (output, residuals)`; `bwd(*nondiff_args, residuals, output_cotangent)
        -> a tuple with one cotangent per differentiable argument`, of the argument's structure;
        None, for a whole argument or any of its leaves, is a zero cotangent."""
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args: Any) -> Any:
        if self.fwd is None:
            raise TypeError(f"custom_vjp function {self.__name__} called before defvjp(fwd, bwd) (at {user_line()})")
        trace = current_trace()
        if trace is None or self._in_fwd:
            return self.fun(*args)
        for i in self.nondiff_argnums:
            if not -len(args) <= i < len(args):
                raise ValueError(f"nondiff_argnums {i} is out of range for {len(args)} arguments")
        static = [i % len(args) for i in self.nondiff_argnums]
        for i in static:
            if any(isinstance(leaf, Tracer) for leaf in tree_flatten(args[i])[0]):
                raise TypeError(f"argument {i} of {self.__name__} is in nondiff_argnums but is a traced array "
                                f"(at {user_line()}); nondiff_argnums are for static Python values")
        from loom.numpy import _lift
        diff = [i for i in range(len(args)) if i not in static]
        in_pairs, _ = tree_flatten_with_path(tuple(args[i] for i in diff))
        inputs = [_lift(trace, leaf) for _, leaf in in_pairs]
        it = iter(inputs)
        lifted_diff = tree_unflatten(tree_flatten(tuple(args[i] for i in diff))[1], [next(it) for _ in in_pairs])
        call_args = list(args)
        for i, a in zip(diff, lifted_diff):
            call_args[i] = a

        self._in_fwd += 1  # fwd may call the function itself (JAX's examples do): that call is plain
        try:
            pair = self.fwd(*call_args)
        finally:
            self._in_fwd -= 1
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
            raise TypeError(f"the fwd function of {self.__name__} must return a pair (output, residuals), "
                            f"got {type(pair).__name__} (at {user_line()})")
        out, residuals = pair
        out_leaves, out_tree = tree_flatten(out)
        outputs = [_lift(trace, leaf) for leaf in out_leaves]
        res_leaves, res_tree = tree_flatten(residuals)
        res = [_lift(trace, leaf) for leaf in res_leaves]

        region = Region()
        block = region.add_block(Block([*(t.value.type for t in res), *(t.value.type for t in outputs)]))
        saved = trace.builder
        trace.builder = Builder(InsertionPoint.at_end(block), saved.location)
        try:
            n = len(res)
            res_in = tree_unflatten(res_tree, [Tracer(a, trace, t.weak) for a, t in zip(block.args[:n], res)])
            cts_in = tree_unflatten(out_tree, [Tracer(a, trace, t.weak) for a, t in zip(block.args[n:], outputs)])
            got = self.bwd(*(args[i] for i in static), res_in, cts_in)
            cts = self._input_cotangents(trace, got, [args[i] for i in diff], in_pairs, inputs)
            stablehlo.return_(trace.emit(), [c.value for c in cts])
        finally:
            trace.builder = saved
        op = ad.CustomVjpOp.build(trace.emit(), [t.value for t in inputs], [t.value for t in outputs],
                                  [t.value for t in res], region)
        return tree_unflatten(out_tree, [Tracer(r, trace, t.weak) for r, t in zip(op.results, outputs)])

    def _input_cotangents(self, trace: Any, got: Any, diff_args: list[Any], in_pairs: list, inputs: list[Tracer]
                          ) -> list[Tracer]:
        """bwd's result as one tracer per input leaf, checked against the arguments' structure
        (None: zeros), converted to the inputs' dtypes where only the weak type differs."""
        from loom.numpy import _lift, astype, zeros_like
        if not isinstance(got, (tuple, list)) or len(got) != len(diff_args):
            raise TypeError(f"the bwd function of {self.__name__} must return a tuple with one cotangent per "
                            f"differentiable argument ({len(diff_args)}), got {_kind(got)} (at {user_line()})")
        flat: list[Any] = []
        for k, (ct, arg) in enumerate(zip(got, diff_args)):
            arg_tree = tree_flatten(arg)[1]
            n = arg_tree.num_leaves
            if ct is None:
                flat.extend([None] * n)
                continue
            leaves, tree = tree_flatten(ct, is_leaf=lambda v: v is None)  # None leaves: zeros
            if tree != arg_tree:
                raise TypeError(f"the bwd function of {self.__name__} returned a cotangent for argument {k} with "
                                f"structure {tree}, expected {arg_tree} (at {user_line()})")
            flat.extend(leaves)
        out = []
        for (path, _), x, ct in zip(in_pairs, inputs, flat):
            if ct is None or not is_floating(x.dtype):
                out.append(zeros_like(x))
                continue
            ct = _lift(trace, ct)
            if ct.shape != x.shape:
                raise TypeError(f"the bwd function of {self.__name__} returned a cotangent of shape {ct.shape} "
                                f"for input{keystr(path)} of shape {x.shape} (at {user_line()})")
            out.append(ct if ct.dtype == x.dtype else astype(ct, x.dtype))
        return out


def _kind(x: Any) -> str:
    return f"a {type(x).__name__} of length {len(x)}" if isinstance(x, (tuple, list)) else type(x).__name__


__all__ = ["custom_vjp"]
