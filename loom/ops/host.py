"""Tokens and host communication: `after_all`, `create_token`, `infeed`, `outfeed`, `send`, `recv`.

A token orders side effects; at run time it is `TOKEN`, a value with no data (the executors run
ops in program order, so the order tokens ask for is kept). Tokens made in the program
(`after_all`, `create_token`) pass between ops and into called functions; the entry function's
own arguments and results are arrays (the executors' argument checks know no token type).

The host ops call the callbacks the program's host registered (one per kind, for the whole
process; `loom.host` is the public face):

    register_infeed(fn)    fn(specs, config) -> arrays        for stablehlo.infeed
    register_outfeed(fn)   fn(arrays, config) -> None         for stablehlo.outfeed
    register_send(fn)      fn(arrays, channel) -> None        for stablehlo.send
    register_recv(fn)      fn(specs, channel) -> arrays       for stablehlo.recv

`specs` are the `(shape, dtype)` of the arrays the op expects, `config` the op's
`infeed_config` / `outfeed_config` string, `channel` the handle of its `channel_handle`. Each
`register_*` returns the callback it replaces; `None` unregisters. An op that finds no callback,
or arrays that do not match its result types, raises an `ExecutionError` naming the op, its
location and what to register. On the torch backend the ops run these kernels on the host.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from loom.backend import kernels as kn
from loom.backend.common import TOKEN, TORCH_KERNELS, ExecutionError, Token, shape_of
from loom.backend.kernels import KERNELS, Kernel
from loom.ir.core import Operation
from loom.ops.registry import declare, register, unsupported

Spec = tuple[tuple[int, ...], np.dtype]
InfeedFn = Callable[[list[Spec], str], Sequence[Any]]
OutfeedFn = Callable[[list[np.ndarray], str], None]
SendFn = Callable[[list[np.ndarray], int], None]
RecvFn = Callable[[list[Spec], int], Sequence[Any]]

# the callbacks, by the op they serve
_CALLBACKS: dict[str, Callable | None] = {"infeed": None, "outfeed": None, "send": None, "recv": None}


def _register(kind: str, fn: Callable | None) -> Callable | None:
    if fn is not None and not callable(fn):
        raise TypeError(f"register_{kind}: expected a callable or None, got {fn!r}")
    previous = _CALLBACKS[kind]
    _CALLBACKS[kind] = fn
    return previous


def register_infeed(fn: InfeedFn | None) -> InfeedFn | None:
    """Serve `stablehlo.infeed`: `fn(specs, config)` returns one array per `(shape, dtype)` spec."""
    return _register("infeed", fn)


def register_outfeed(fn: OutfeedFn | None) -> OutfeedFn | None:
    """Receive what `stablehlo.outfeed` writes: `fn(arrays, config)`."""
    return _register("outfeed", fn)


def register_send(fn: SendFn | None) -> SendFn | None:
    """Receive what `stablehlo.send` sends: `fn(arrays, channel)`."""
    return _register("send", fn)


def register_recv(fn: RecvFn | None) -> RecvFn | None:
    """Serve `stablehlo.recv`: `fn(specs, channel)` returns one array per `(shape, dtype)` spec."""
    return _register("recv", fn)


class HostOp:
    """One host op's call: the callback of its kind, the specs of its data results, its config or
    channel, and its name and location for errors."""

    def __init__(self, op: Operation, kind: str) -> None:
        self.kind = kind
        self.where = f"{op.name} (at {op.location})"
        self.specs: list[Spec] = [(shape_of(r.type), kn.dtype_of(r.type)) for r in op.results[:-1]]
        if kind in ("send", "recv"):
            handle = op.get_attr("channel_handle")
            self.detail: Any = 0 if handle is None else int(getattr(handle, "handle", 0))
        else:
            config = op.get_attr(f"{kind}_config")
            self.detail = "" if config is None else str(getattr(config, "value", config))

    def callback(self) -> Callable:
        fn = _CALLBACKS[self.kind]
        if fn is None:
            raise ExecutionError(f"{self.where}: no {self.kind} callback is registered; register one with "
                                 f"loom.host.register_{self.kind}(fn)")
        return fn

    def __call__(self, *operands: Any) -> Any:
        data = [np.asarray(x) for x in operands if not isinstance(x, Token)]
        if self.kind in ("outfeed", "send"):
            self.callback()(data, self.detail)
            return TOKEN
        arrays = list(self.callback()(list(self.specs), self.detail))
        if len(arrays) != len(self.specs):
            raise ExecutionError(f"{self.where}: the {self.kind} callback gave {len(arrays)} arrays, the op has "
                                 f"{len(self.specs)} data results")
        out = []
        for i, (x, (shape, dtype)) in enumerate(zip(arrays, self.specs)):
            x = np.asarray(x)
            if x.shape != shape or x.dtype != dtype:
                raise ExecutionError(f"{self.where}: the {self.kind} callback's array {i} is {x.dtype}{list(x.shape)}, "
                                     f"the op's result {i} is {dtype}{list(shape)}")
            out.append(x)
        return (*out, TOKEN)


def after_all(*tokens: Token) -> Token:
    return TOKEN


def _on_the_host(op: Operation) -> None:
    """The torch backend runs these kernels on the host (tokens and callbacks have no device)."""
    return None


def _host_kernel(op: Operation) -> Kernel:
    return Kernel(HostOp(op, op.name.removeprefix("stablehlo.")))


_KERNELS: dict[str, Callable[[Operation], Kernel]] = {
    "stablehlo.after_all": lambda op: Kernel(after_all),
    "stablehlo.create_token": lambda op: Kernel(after_all),
    **{f"stablehlo.{kind}": _host_kernel for kind in ("infeed", "outfeed", "send", "recv")},
}
for _name, _maker in _KERNELS.items():
    register(KERNELS, _name, _maker)
    register(TORCH_KERNELS, _name, _on_the_host)
declare(list(_KERNELS), unsupported("tokens and host communication carry no derivative and are not batched"),
        tables=("jvp", "vjp", "batching"))
declare(list(_KERNELS), unsupported("host communication runs on the host, not partitioned"), tables=("sharding",))

__all__ = ["TOKEN", "HostOp", "Token", "register_infeed", "register_outfeed", "register_recv", "register_send"]
