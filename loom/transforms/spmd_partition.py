"""spmd-partition: turn a global program whose values carry shardings (after sharding-propagation)
into the program one device runs (XLA's SPMD partitioner, on Shardy's factor rules).

Per op, the factors of its rule get shardings (candidates: as the results want them, as the
operands hold them, with the axes of factors kept whole moved to another factor, without the
reduction factors; the one moving fewer bytes wins); operands are resharded to what those
factor shardings require; the local op runs on local shapes; partial results of sharded
reduction factors are combined (reduce_scatter where the result is to be split along a dimension
that the reduction's axes split next, all_reduce otherwise); results are resharded to the
shardings propagation gave them. Resharding takes the cheapest sequence of collectives (a
search over the splits in between): all_to_all moves a split from one dimension to another,
all_gather removes splits, and the last step cuts each partition's tile (dynamic_slice at
offsets derived from `partition_id`) from a shard holding it, sent by one collective_permute
where that shard is another partition's (the device order changes) and by none where it is its
own (a split added); a value resharded once in a block is reused, and one made by resharding is
resharded from its source when that is cheaper (a gather then a slice back moves nothing).
slice, concatenate, pad, reverse, reduce_window and convolution along a split dimension keep it
split: each partition fetches the halo its piece reads from the partitions next to it
(collective_permute, XLA's halo exchange; reverse first sends each shard to the mirrored
partition; a concatenate selects each element from the operand whose part of the result holds
it), elements outside the operand masked with the padding value; a slice of a pad is folded into one pad first, as
XLA's simplifier does. Uneven dimensions are padded to
ceil(n / pieces) as XLA pads; a reduction over a padded dimension masks the padding with the
reduction's identity. An op without a rule runs replicated (its operands all-gathered) with a
remark naming it. while / if / case run their regions partitioned with the carries' shardings;
the stacks reverse mode saves loop values on hold each device's own shards (split as the values
pushed on them); a slice within one shard of its operand (an element read as a predicate) is cut
by the device holding it and sent to the others with one collective_broadcast;
`sdy.manual_computation` bodies (already per device) are inlined on the local shards; a body
manual over some axes only is partitioned over the others.

Partition p is device p of the mesh in row-major order; collectives carry `replica_groups`
(`tensor<G x N x i64>` of partition ids), a `channel_handle` (increasing) and
`use_global_device_ids`. The function's arguments and results get local types and keep, in
arg_attrs / res_attrs, their final `sdy.sharding` and `loom.global_type`.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from loom.dialects.sdy import TensorShardingAttr, TensorShardingPerValueAttr
from loom.dialects.stablehlo.attributes import ChannelHandle
from loom.dialects.stablehlo.collectives import channel_handle_attr, replica_groups_attr
from loom.dialects.stack import StackType
from loom.ir.attributes import UNIT, DenseArrayAttr, DenseElementsAttr, IntegerAttr, TypeAttr, numpy_dtype
from loom.ir.builder import Builder, InsertionPoint
from loom.ir.core import Block, BlockArgument, Operation, OpResult, Region, Value
from loom.ir.diagnostics import emit_remark
from loom.ir.types import ComplexType, FloatType, IntegerType, RankedTensorType, i1, i32, i64
from loom.rewrite.passes import Pass, register_pass
from loom.transforms.sharding_propagation import (
    ShardingError,
    ShardingRule,
    Window,
    arg_attr_dicts,
    closed_attr,
    find_mesh,
    free_axes,
    manual_axes_of,
    op_windows,
    rule_of,
    set_attr_dicts,
    windowed_rule,
)

Axes = tuple[tuple[str, ...], ...]  # per dimension, the mesh axes splitting it (major to minor)

_REDUCER_OPS = {"add": "stablehlo.add", "max": "stablehlo.maximum", "min": "stablehlo.minimum",
                "mul": "stablehlo.multiply", "and": "stablehlo.and", "or": "stablehlo.or"}


def byte_width(element_type: Any) -> int:
    if isinstance(element_type, IntegerType):
        return max(1, element_type.width // 8)
    if isinstance(element_type, (FloatType, ComplexType)):
        return int(np.dtype(numpy_dtype(element_type)).itemsize)
    return 4


@dataclass
class Shard:
    """A local value (None while only costing), the global tensor type it is a piece of, and how
    it is split."""

    value: Value | None
    type: RankedTensorType
    axes: Axes


class Partitioner:
    """Partitions one module in place (see the module's doc)."""

    def __init__(self, module: Operation) -> None:
        self.module = module
        self.mesh_name, self.mesh = find_mesh(module)
        names = list(self.mesh)
        self.stride = {a: math.prod(self.mesh[b] for b in names[i + 1:]) for i, a in enumerate(names)}
        self.num_devices = math.prod(self.mesh.values())
        self.channel = 1 + max([_handle_of(op) for op in module.walk()] + [0])
        self.env: dict[Value, Shard] = {}
        self.b: Builder | None = None       # where partitioned ops go; None while costing
        self.cost = 0.0                      # bytes per device the collectives emitted so far move
        self._index_cache: dict[tuple[str, ...], Value] = {}
        self._index_builder: Builder | None = None
        self._pid: Value | None = None
        self._zero: Value | None = None  # a tensor<i32> 0 at the top of the function
        # (local value, its axes, target axes, block) -> the value resharded there
        self._resharded: dict[tuple, Shard] = {}
        self._costing_block: Any = None  # the block emission goes to while costing
        self._source: dict[Value, Shard] = {}  # a resharded value -> the shard it was made from
        self._plans: dict[tuple, list[tuple]] = {}  # (shape, width, from, to) -> the steps of `plan`

    # --- sizes ------------------------------------------------------------------------------
    def pieces(self, axes: Sequence[str]) -> int:
        return math.prod(self.mesh[a] for a in axes)

    def local_shape(self, shape: Sequence[int], axes: Axes) -> tuple[int, ...]:
        return tuple(-(-n // self.pieces(a)) for n, a in zip(shape, axes))

    def local_type(self, t: RankedTensorType, axes: Axes) -> RankedTensorType:
        return RankedTensorType(self.local_shape(t.shape, axes), t.element_type, t.encoding)

    def nbytes(self, t: RankedTensorType, axes: Axes) -> int:
        return math.prod(self.local_shape(t.shape, axes)) * byte_width(t.element_type)

    def replicated(self, t: Any) -> Axes:
        return tuple(() for _ in shape_of_type(t))

    # --- emission helpers -------------------------------------------------------------------
    def emit(self, name: str, operands: Sequence[Value], types: Sequence[Any], props: dict | None = None,
             regions: Sequence[Region] = (), b: Builder | None = None) -> Operation:
        b = b or self.b
        assert b is not None
        op = b.create(name, list(operands), list(types), props or {}, {}, list(regions))
        return op

    def scalar_const(self, value: Any, element_type: Any, b: Builder | None = None) -> Value:
        t = RankedTensorType((), element_type)
        return self.emit("stablehlo.constant", [], [t], {"value": DenseElementsAttr.get(np.asarray(value), t)},
                         b=b).results[0]

    def groups(self, axes: Sequence[str]) -> list[list[int]]:
        """Partition ids grouped by the values of every mesh axis but `axes`; in a group, ids
        ordered by their shard index over `axes` (major first)."""
        others = [a for a in self.mesh if a not in axes]
        out = []
        for fixed in itertools.product(*(range(self.mesh[a]) for a in others)):
            base = sum(c * self.stride[a] for a, c in zip(others, fixed))
            out.append([base + sum(c * self.stride[a] for a, c in zip(axes, coords))
                        for coords in itertools.product(*(range(self.mesh[a]) for a in axes))])
        return out

    def collective_props(self, axes: Sequence[str], with_global_ids: bool = True) -> dict[str, Any]:
        props: dict[str, Any] = {"replica_groups": replica_groups_attr(self.groups(axes)),
                                 "channel_handle": channel_handle_attr(self.channel)}
        self.channel += 1
        if with_global_ids:
            props["use_global_device_ids"] = UNIT
        return props

    def reducer_region(self, kind: str, element_type: Any) -> Region:
        region = Region()
        t = RankedTensorType((), element_type)
        block = region.add_block(Block([t, t]))
        rb = Builder(InsertionPoint.at_end(block))
        r = rb.create(_REDUCER_OPS[kind], list(block.args), [t]).results[0]
        rb.create("stablehlo.return", [r], [])
        return region

    def index(self, axes: tuple[str, ...]) -> Value:
        """This partition's shard index over `axes` (major first), a tensor<i32>, computed once at
        the top of the function."""
        if axes in self._index_cache:
            return self._index_cache[axes]
        b = self._index_builder
        assert b is not None and self._pid is not None
        total: Value | None = None
        for a in axes:
            c = self._pid
            if self.stride[a] != 1:
                c = self.emit("stablehlo.divide", [c, self.scalar_const(self.stride[a], i32, b)], [_i32()],
                              b=b).results[0]
            c = self.emit("stablehlo.remainder", [c, self.scalar_const(self.mesh[a], i32, b)], [_i32()],
                          b=b).results[0]
            if total is not None:
                total = self.emit("stablehlo.multiply", [total, self.scalar_const(self.mesh[a], i32, b)], [_i32()],
                                  b=b).results[0]
                c = self.emit("stablehlo.add", [total, c], [_i32()], b=b).results[0]
            total = c
        assert total is not None
        self._index_cache[axes] = total
        return total

    def offset(self, axes: tuple[str, ...], local_size: int) -> Value:
        """The first global index of this partition's shard along a dimension split over `axes`."""
        idx = self.index(axes)
        if local_size == 1:
            return idx
        return self.emit("stablehlo.multiply", [idx, self.scalar_const(local_size, i32)], [_i32()]).results[0]

    # --- resharding -------------------------------------------------------------------------
    def all_gather(self, s: Shard, dim: int, axes: tuple[str, ...]) -> Shard:
        """Remove the minor `axes` of dimension `dim`'s split."""
        new_axes = list(s.axes)
        assert s.axes[dim][len(s.axes[dim]) - len(axes):] == axes
        new_axes[dim] = s.axes[dim][:len(s.axes[dim]) - len(axes)]
        n = self.pieces(axes)
        local = list(self.local_shape(s.type.shape, s.axes))
        local[dim] *= n
        gathered_type = RankedTensorType(tuple(local), s.type.element_type)
        self.cost += (n - 1) / n * math.prod(local) * byte_width(s.type.element_type)
        value = None
        if self.b is not None:
            props = {"all_gather_dim": IntegerAttr.get(dim), **self.collective_props(axes)}
            value = self.emit("stablehlo.all_gather", [s.value], [gathered_type], props).results[0]
        out = Shard(value, s.type, tuple(new_axes))
        want = self.local_shape(s.type.shape, out.axes)[dim]
        if want != local[dim]:  # the padding of an uneven split, now whole: cut it off
            assert want < local[dim]
            out = self.slice_prefix(out, gathered_type, dim, want)
        return out

    def slice_prefix(self, s: Shard, current: RankedTensorType, dim: int, size: int) -> Shard:
        if self.b is None:
            return s
        limits = list(current.shape)
        limits[dim] = size
        props = {"start_indices": _i64s([0] * len(limits)), "limit_indices": _i64s(limits),
                 "strides": _i64s([1] * len(limits))}
        t = RankedTensorType(tuple(limits), current.element_type)
        return Shard(self.emit("stablehlo.slice", [s.value], [t], props).results[0], s.type, s.axes)

    def all_to_all(self, s: Shard, src: int, dst: int, axes: tuple[str, ...]) -> Shard:
        """Move the minor `axes` of dimension `src`'s split to the minor end of `dst`'s."""
        n = self.pieces(axes)
        new_axes = list(s.axes)
        new_axes[src] = s.axes[src][:len(s.axes[src]) - len(axes)]
        new_axes[dst] = s.axes[dst] + axes
        local_in = self.local_shape(s.type.shape, s.axes)
        self.cost += (n - 1) / n * math.prod(local_in) * byte_width(s.type.element_type)
        value = None
        if self.b is not None:
            props = {"split_dimension": IntegerAttr.get(dst), "concat_dimension": IntegerAttr.get(src),
                     "split_count": IntegerAttr.get(n), **self.collective_props(axes, with_global_ids=False)}
            out_t = self.local_type(s.type, tuple(new_axes))
            value = self.emit("stablehlo.all_to_all", [s.value], [out_t], props).results[0]
        return Shard(value, s.type, tuple(new_axes))

    def reshard(self, s: Shard, target: Axes) -> Shard:
        """`s` split as `target` by the cheapest steps (`plan`): splits moving between dimensions
        by all_to_all, splits the target drops by all_gather, then each partition's tile cut
        (dynamic_slice) and, where the device order changes, sent by collective_permute (the costs
        add up in `cost`). A value resharded once in a block is reused by the later ops of that
        block."""
        if s.axes == target:
            return s
        block = self.b.insertion_point.block if self.b is not None and self.b.insertion_point else None
        key = (s.value, s.axes, target, block if self.b is not None else self._costing_block)
        if s.value is not None and key in self._resharded:
            return self._resharded[key]
        source = self._source.get(s.value) if s.value is not None else None
        if source is not None and source.type == s.type and \
                self.reshard_cost(source, target) < self.reshard_cost(s, target):
            s = source  # what `s` was resharded from gets there cheaper (an all_gather then a slice back)
        out = self._reshard(s, target)
        if self.b is not None and s.value is not None:
            self._resharded[key] = out
            if out.value is not None and out.value is not s.value:
                self._source.setdefault(out.value, self._source.get(s.value, s))
        return out

    def reshard_cost(self, s: Shard, target: Axes) -> float:
        saved_b, before = self.b, self.cost
        self.b = None
        try:
            self._reshard(s, target)
            return self.cost - before
        finally:
            self.b, self.cost = saved_b, before

    def _reshard(self, s: Shard, target: Axes) -> Shard:
        for step, *where in self.plan(s.type, s.axes, target):
            if step == "gather_pieces":
                return self.gather_pieces(s, target)
            if step == "exchange_pieces":
                return self.exchange_pieces(s, target)
            s = self.all_to_all(s, *where) if step == "all_to_all" else self.all_gather(s, *where)
        return self.permute_to(s, target)

    def plan(self, t: RankedTensorType, start: Axes, target: Axes) -> list[tuple]:
        """The cheapest way from `start` to `target` (Dijkstra over the splits in between; one
        search per shapes and splits): all_to_all moves a dimension's minor axes to another
        dimension's minor end (even sizes), all_gather removes a dimension's minor axes (where an
        uneven split still nests), and the last step (`permute_to`) cuts each partition's target
        tile from a tile holding it, sent by one collective_permute unless it is its own."""
        key = (t.shape, byte_width(t.element_type), start, target)
        if key in self._plans:
            return self._plans[key]
        shape, width = t.shape, byte_width(t.element_type)
        def nbytes(axes: Axes) -> int:
            return math.prod(self.local_shape(shape, axes)) * width
        done: set[Any] = set()
        heap: list[tuple[float, int, int, Any, list[tuple]]] = [(0.0, 0, 0, start, [])]
        count = itertools.count(1)
        while heap:
            cost, _, _, axes, steps = heapq.heappop(heap)
            if axes is None:
                self._plans[key] = steps
                return steps
            if axes in done:
                continue
            done.add(axes)
            moves: list[tuple[float, Any, tuple]] = []
            final = self.assignment(shape, axes, target)
            if final is not None:
                moved = any(q != p for p, (q, _) in final.items())
                moves.append((nbytes(target) if moved else 0.0, None, ()))
            pieces = self.piece_assignment(shape, axes, target)
            if pieces is not None:
                sends, _, k = pieces
                moved = any(q != p for p, q in sends.items())
                moves.append(((int(moved) + k - 1) * nbytes(axes), None, ("gather_pieces",)))
            exchange = self.exchange_assignment(shape, axes, target)
            if exchange is not None:
                sends, _, k, _, _ = exchange
                moved = any(q != p for p, q in sends.items())
                moves.append(((k - 1) / k * nbytes(axes) + (nbytes(target) if moved else 0), None,
                              ("exchange_pieces",)))
            local = self.local_shape(shape, axes)
            for d, split in enumerate(axes):
                for j in range(1, len(split) + 1):
                    keep, gone = split[:-j], split[-j:]
                    n = self.pieces(gone)
                    if not keep or local[d] * n == -(-shape[d] // self.pieces(keep)):
                        moves.append(((n - 1) * nbytes(axes), _put(axes, {d: keep}), ("all_gather", d, gone)))
                    for b in range(len(shape)):
                        if b != d and not shape[d] % self.pieces(split) and \
                                not shape[b] % (self.pieces(axes[b]) * n):
                            moves.append(((n - 1) / n * nbytes(axes), _put(axes, {d: keep, b: axes[b] + gone}),
                                          ("all_to_all", d, b, gone)))
            for extra, state, step in moves:
                if state not in done:
                    heapq.heappush(heap, (cost + extra, len(steps) + 1, next(count), state,
                                          steps + [step] if step else steps))
        raise AssertionError(f"no way from {start} to {target}")  # gathering everything always nests

    def assignment(self, shape: Sequence[int], axes: Axes, target: Axes) -> dict[int, tuple[int, list[int]]] | None:
        """Per partition p, the partition q whose shard split as `axes` holds p's tile of
        `target` and where in that shard it starts; None when some target tile straddles two
        shards. A partition keeps its own tile where it holds it; the others are served by the
        holders left, each sending once, among partitions alike on the mesh axes neither split
        names (a manual computation's axes among them)."""
        src, dst = self.local_shape(shape, axes), self.local_shape(shape, target)
        if any(a and s % t for a, s, t in zip(axes, src, dst)):
            return None
        used = {a for split in (*axes, *target) for a in split}
        alike = tuple(a for a in self.mesh if a not in used)
        holders: dict[tuple, list[int]] = {}
        needers: dict[tuple, list[tuple[int, list[int]]]] = {}
        for p in range(self.num_devices):
            group = self.shard_index(p, alike)
            own = tuple(self.shard_index(p, a) if a else 0 for a in axes)
            starts = [self.shard_index(p, t) * n for t, n in zip(target, dst)]
            tile = tuple(b // n if a else 0 for a, b, n in zip(axes, starts, src))
            holders.setdefault((group, own), []).append(p)
            needers.setdefault((group, tile), []).append((p, [b - i * n for b, i, n in zip(starts, tile, src)]))
        out = {}
        for key, wanting in needers.items():
            free = [q for q in holders.get(key, []) if q not in {p for p, _ in wanting}]
            for p, offsets in wanting:
                if p not in holders.get(key, []) and not free:
                    return None
                out[p] = (p if p in holders[key] else free.pop(0), offsets)
        return out

    def piece_assignment(self, shape: Sequence[int], axes: Axes, target: Axes
                         ) -> tuple[dict[int, int], list[list[int]], int] | None:
        """For a target whose tiles are each k > 1 whole shards of `axes` along one dimension
        (the other dimensions split alike), and held by at least k partitions each, as XLA moves
        a split onto part of another axis: (sends, groups, k) where partition p receives the
        shard of partition sends[p] (its own where it can), so that each group of k partitions
        needing one tile holds its k pieces in order, to be all-gathered in the group. None
        otherwise."""
        src, dst = self.local_shape(shape, axes), self.local_shape(shape, target)
        dims = [e for e in range(len(shape)) if axes[e] != target[e]]
        if len(dims) != 1 or dst[dims[0]] <= src[dims[0]] or dst[dims[0]] % src[dims[0]] or \
                any(shape[e] % self.pieces(target[e]) or shape[e] % self.pieces(axes[e]) for e in range(len(shape))):
            return None
        d = dims[0]
        k = dst[d] // src[d]
        used = {a for split in (*axes, *target) for a in split}
        alike = tuple(a for a in self.mesh if a not in used)
        others = tuple(a for e in range(len(shape)) if e != d for a in axes[e])
        holders: dict[tuple, list[int]] = {}
        needers: dict[tuple, list[int]] = {}
        for p in range(self.num_devices):
            key = (self.shard_index(p, alike), self.shard_index(p, others))
            holders.setdefault((*key, self.shard_index(p, axes[d])), []).append(p)
            needers.setdefault((*key, self.shard_index(p, target[d])), []).append(p)
        sends: dict[int, int] = {}
        groups: list[list[int]] = []
        for (g, o, tile), wanting in needers.items():
            if len(wanting) % k:
                return None
            left = list(wanting)
            for _ in range(len(wanting) // k):
                group = []
                for j in range(k):  # member j gets piece j: a partition holding it, if one is left
                    own = [p for p in left if p in holders.get((g, o, tile * k + j), [])]
                    group.append((own or left)[0])
                    left.remove(group[-1])
                groups.append(group)
            for group in groups[-len(wanting) // k:]:
                for j, p in enumerate(group):
                    if p in holders[(g, o, tile * k + j)]:
                        sends[p] = p
        busy = set(sends.values())
        for group in groups:
            for j, p in enumerate(group):
                if p in sends:
                    continue
                key = next((g, o) for (g, o, t), ws in needers.items() if p in ws)
                free = [q for q in holders[(*key, self.shard_index(group[0], target[d]) * k + j)] if q not in busy]
                if not free:
                    return None
                sends[p] = free[0]
                busy.add(free[0])
        return sends, groups, k

    def gather_pieces(self, s: Shard, target: Axes) -> Shard:
        """`s` split as `target` by `piece_assignment`'s plan: one collective_permute of the shards
        (none when every partition holds its piece), then an all_gather in each group."""
        sends, groups, k = self.piece_assignment(s.type.shape, s.axes, target)  # type: ignore[misc]
        d = next(e for e in range(len(target)) if s.axes[e] != target[e])
        moved = any(q != p for p, q in sends.items())
        src_bytes = self.nbytes(s.type, s.axes)
        self.cost += (int(moved) + k - 1) * src_bytes
        if self.b is None:
            return Shard(None, s.type, target)
        value = s.value
        if moved:
            value = self.permute_pairs(value, sorted((q, p) for p, q in sends.items()))
        props = {"all_gather_dim": IntegerAttr.get(d), "replica_groups": replica_groups_attr(groups),
                 "channel_handle": channel_handle_attr(self.channel), "use_global_device_ids": UNIT}
        self.channel += 1
        out_t = self.local_type(s.type, target)
        return Shard(self.emit("stablehlo.all_gather", [value], [out_t], props).results[0], s.type, target)

    def exchange_assignment(self, shape: Sequence[int], axes: Axes, target: Axes
                            ) -> tuple[dict[int, int], list[list[int]], int, int, int] | None:
        """For a target whose tiles span k > 1 shards of `axes` along one dimension c and 1/k of a
        shard along another dimension s (the other dimensions' tiles alike), as XLA swaps the
        axes of a split: (sends, groups, k, c, s) where an all_to_all in each group of the k
        partitions holding consecutive shards along c (split along s, concatenated along c)
        leaves each member a target tile, and partition p then receives the tile of partition
        sends[p] (its own where it can). None otherwise."""
        src, dst = self.local_shape(shape, axes), self.local_shape(shape, target)
        if any(shape[e] % self.pieces(target[e]) or shape[e] % self.pieces(axes[e]) for e in range(len(shape))):
            return None
        grow = [e for e in range(len(shape)) if dst[e] > src[e]]
        shrink = [e for e in range(len(shape)) if dst[e] < src[e]]
        if len(grow) != 1 or len(shrink) != 1:
            return None
        c, s = grow[0], shrink[0]
        k = dst[c] // src[c]
        if k < 2 or dst[c] % src[c] or src[s] != k * dst[s]:
            return None
        used = {a for split in (*axes, *target) for a in split}
        alike = tuple(a for a in self.mesh if a not in used)
        holders: dict[tuple, list[int]] = {}
        for p in range(self.num_devices):
            index = [self.shard_index(p, a) for a in axes]
            piece = index[c] % k
            index[c] //= k
            holders.setdefault((self.shard_index(p, alike), *index), [[] for _ in range(k)])[piece].append(p)
        groups: list[list[int]] = []
        tiles: dict[tuple, list[int]] = {}  # a target tile (alike group, index per dimension) -> its holders
        for (g, *index), by_piece in holders.items():
            if len({len(ps) for ps in by_piece}) != 1:
                return None
            for group in zip(*by_piece):
                groups.append(list(group))
                for m, p in enumerate(group):
                    tile = list(index)
                    tile[s] = index[s] * k + m
                    tiles.setdefault((g, *tile), []).append(p)
        sends: dict[int, int] = {}
        wanting = {p: (self.shard_index(p, alike), *(self.shard_index(p, t) for t in target))
                   for p in range(self.num_devices)}
        for p, tile in wanting.items():
            if p in tiles.get(tile, []):
                sends[p] = p
        busy = set(sends.values())
        for p, tile in wanting.items():
            if p not in sends:
                free = [q for q in tiles.get(tile, []) if q not in busy]
                if not free:
                    return None
                sends[p] = free[0]
                busy.add(free[0])
        return sends, groups, k, c, s

    def exchange_pieces(self, s: Shard, target: Axes) -> Shard:
        """`s` split as `target` by `exchange_assignment`'s plan: an all_to_all in each group,
        then one collective_permute of the tiles (none when every partition made its own)."""
        sends, groups, k, c, d = self.exchange_assignment(s.type.shape, s.axes, target)  # type: ignore[misc]
        moved = any(q != p for p, q in sends.items())
        self.cost += (k - 1) / k * self.nbytes(s.type, s.axes) + (self.nbytes(s.type, target) if moved else 0)
        if self.b is None:
            return Shard(None, s.type, target)
        props = {"split_dimension": IntegerAttr.get(d), "concat_dimension": IntegerAttr.get(c),
                 "split_count": IntegerAttr.get(k), "replica_groups": replica_groups_attr(groups),
                 "channel_handle": channel_handle_attr(self.channel)}
        self.channel += 1
        out_t = self.local_type(s.type, target)
        value = self.emit("stablehlo.all_to_all", [s.value], [out_t], props).results[0]
        if moved:
            value = self.permute_pairs(value, sorted((q, p) for p, q in sends.items()))
        return Shard(value, s.type, target)

    def shard_index(self, p: int, axes: Sequence[str]) -> int:
        """Partition p's shard index over `axes` (major first)."""
        index = 0
        for a in axes:
            index = index * self.mesh[a] + p // self.stride[a] % self.mesh[a]
        return index

    def permute_to(self, s: Shard, target: Axes) -> Shard:
        """`s` split as `target`, each target tile lying within one shard of `s`: every partition
        cuts from its shard the tile a partition needs (dynamic_slice, padding an uneven
        dimension first), and one collective_permute delivers them, none when each partition
        cut its own."""
        if s.axes == target:
            return s
        plan = self.assignment(s.type.shape, s.axes, target)
        assert plan is not None
        moved = any(q != p for p, (q, _) in plan.items())
        if moved:
            self.cost += self.nbytes(s.type, target)
        if self.b is None:
            return Shard(None, s.type, target)
        want = self.local_shape(s.type.shape, target)
        cuts = [[0] * len(want) for _ in range(self.num_devices)]  # what partition q cuts
        for q, offsets in plan.values():
            cuts[q] = offsets
        value, shape = s.value, list(self.local_shape(s.type.shape, s.axes))
        high = [max(0, max(c[d] for c in cuts) + want[d] - shape[d]) for d in range(len(want))]
        if any(high):
            padded = RankedTensorType(tuple(n + h for n, h in zip(shape, high)), s.type.element_type)
            value = self.emit("stablehlo.pad", [value, self.scalar_const(0, s.type.element_type)], [padded],
                              {"edge_padding_low": _i64s([0] * len(want)), "edge_padding_high": _i64s(high),
                               "interior_padding": _i64s([0] * len(want))}).results[0]
        for d in range(len(want)):
            # the offsets as a function of the shard index over as few axes as they depend on
            for axes in ((), *(target[d][k:] for k in reversed(range(len(target[d])))), tuple(self.mesh)):
                by_index = {self.shard_index(q, axes): c[d] for q, c in enumerate(cuts)}
                if len(by_index) == self.pieces(axes) and all(by_index[self.shard_index(q, axes)] == c[d]
                                                              for q, c in enumerate(cuts)):
                    break
            value = self.dynamic_slice_dim(value, d, [by_index[i] for i in range(self.pieces(axes))], want[d], axes)
        if moved:
            pairs = sorted((q, p) for p, (q, _) in plan.items())
            value = self.permute_pairs(value, pairs)
        return Shard(value, s.type, target)

    # --- ops --------------------------------------------------------------------------------
    def lookup(self, v: Value) -> Shard:
        if v not in self.env:
            raise ShardingError(f"value {v} used before it was partitioned")
        return self.env[v]

    def result_axes(self, op: Operation) -> list[Axes]:
        attr = op.attributes.get("sdy.sharding")
        if isinstance(attr, TensorShardingPerValueAttr):
            return [tuple(tuple(a.name for a in d.axes) for d in s.dims) for s in attr.shardings]
        return [self.replicated(r.type) for r in op.results]

    def partition_block(self, ops: Sequence[Operation]) -> None:
        for op in ops:
            self.partition_op(op)

    def partition_op(self, op: Operation) -> None:
        assert self.b is not None
        self.b.location = op.location
        if op.name in ("sdy.sharding_constraint", "sdy.reshard"):
            s = self.lookup(op.operands[0])
            target = tuple(tuple(a.name for a in d.axes) for d in op.properties["sharding"].dims)
            self.env[op.results[0]] = self.reshard(s, target)
            return
        if op.name == "sdy.manual_computation":
            return self.partition_manual(op)
        if op.name in ("stablehlo.while", "stablehlo.if", "stablehlo.case"):
            return self.partition_control_flow(op)
        if op.name in ("stack.new", "stack.companion", "stack.push", "stack.pop"):
            return self.partition_stack(op)
        if op.name == "stablehlo.slice" and all(self.rotation(u.owner) for u in op.results[0].uses):
            return  # read by the rotations only, which take their rows from the operand's shards
        if op.name == "stablehlo.concatenate" and self.rotation(op):
            return self.partition_rotation(op)
        if op.name == "stablehlo.slice" and self.slice_from_owner(op):
            return
        rule = rule_of(op)
        if rule is None:
            return self.partition_replicated(op, "has no sharding rule")
        if any(not isinstance(v.type, RankedTensorType) for v in (*op.operands, *op.results)):
            return self.partition_replicated(op, "has values that are not ranked tensors")
        self.partition_by_rule(op, rule)

    def partition_replicated(self, op: Operation, why: str) -> None:
        """Run `op` on whole (replicated) operands; results resharded to what they should be."""
        assert self.b is not None
        operands = [self.reshard(self.lookup(v), self.replicated(v.type)).value
                    if isinstance(v.type, RankedTensorType) else self.lookup(v).value for v in op.operands]
        emit_remark(op, f"{why}: computed replicated (its operands are all-gathered)")
        new = self.clone(op, operands, [r.type for r in op.results])
        for r, nr, target in zip(op.results, new.results, self.result_axes(op)):
            if isinstance(r.type, RankedTensorType):
                self.env[r] = self.reshard(Shard(nr, r.type, self.replicated(r.type)), target)
            else:
                self.env[r] = Shard(nr, r.type, ())

    def clone(self, op: Operation, operands: Sequence[Value | None], types: Sequence[Any]) -> Operation:
        assert self.b is not None
        new = Operation.create(op.name, list(operands), list(types), dict(op.properties),  # type: ignore[arg-type]
                               {k: v for k, v in op.attributes.items() if k != "sdy.sharding"},
                               [r.clone() for r in op.regions], location=op.location)
        return self.b.insert(_without_sdy(new))

    def factor_candidates(self, op: Operation, rule: ShardingRule) -> list[dict[int, tuple[str, ...]]]:
        """Factor shardings to try: as the results want them; as the operands hold them; as the
        operands hold them with the axes of factors that must stay whole moved to another factor
        (a sort over a split dimension sorts rows split further instead of gathering); and as the
        operands hold them but for reduction factors (gathered instead of combined)."""
        from loom.transforms.sharding_propagation import Dim, Propagation
        prop = Propagation(self.mesh)
        results = [(dims, [Dim(a) for a in axes]) for dims, axes in zip(rule.results, self.result_axes(op))]
        operands = [(dims, [Dim(a) for a in self.lookup(v).axes]) for dims, v in zip(rule.operands, op.operands)]
        raw = []
        for order in (results + operands, operands + results):
            factors: dict[int, tuple[str, ...]] = {}
            for dims, shard in order:
                for f, (axes, _) in prop.project(rule, dims, shard).items():
                    if axes and f not in factors:
                        factors[f] = axes
            raw.append(factors)
        blocked = rule.blocked() | rule.windowed
        moved = dict(raw[1])
        for f in sorted(blocked):
            axes = moved.pop(f, ())
            for g in range(len(rule.sizes)):
                if axes and g not in blocked and g not in rule.reduction and \
                        rule.sizes[g] % self.pieces(moved.get(g, ()) + axes) == 0:
                    moved[g] = moved.get(g, ()) + axes
                    break
        raw.append(moved)
        raw.append({f: a for f, a in raw[1].items() if f not in rule.reduction})  # gather instead of combining
        if rule.windowed:  # windows read whole instead of exchanging halos
            raw.append({f: a for f, a in raw[1].items() if f not in rule.windowed})
        return [self.sanitize(rule, factors) for factors in raw]

    def sanitize(self, rule: ShardingRule, factors: dict[int, tuple[str, ...]]) -> dict[int, tuple[str, ...]]:
        """Drop shardings a factor may not have: blocked factors, an axis a factor of lower
        number already uses, minor factors of a compound dimension not fully split before them."""
        blocked = rule.blocked()
        used: set[str] = set()
        out: dict[int, tuple[str, ...]] = {}
        for f in sorted(factors):
            axes = factors[f]
            if f in blocked or set(axes) & used or self.pieces(axes) > rule.sizes[f]:
                continue
            used |= set(axes)
            out[f] = axes
        for dims in (*rule.operands, *rule.results):
            for factors_of_dim in dims:
                if len(factors_of_dim) < 2:
                    continue
                ok = True
                for f in factors_of_dim:
                    if not ok or rule.sizes[f] % self.pieces(out.get(f, ())):
                        out.pop(f, None)
                        ok = False
                    elif self.pieces(out.get(f, ())) != rule.sizes[f]:
                        ok = False
        return out

    def tensor_axes(self, dims: list[list[int]], factors: dict[int, tuple[str, ...]]) -> Axes:
        return tuple(tuple(a for f in fs for a in factors.get(f, ())) for fs in dims)

    def partition_by_rule(self, op: Operation, rule: ShardingRule) -> None:
        rule = windowed_rule(rule, op_windows(op, lambda e: 1))  # a slice's too (see `rule_of`)
        saved_b = self.b
        best: tuple[float, int, dict[int, tuple[str, ...]]] | None = None
        candidates = []
        for factors in self.factor_candidates(op, rule):
            if factors not in candidates:
                candidates.append(factors)
        if len(candidates) == 1:
            return self.apply_rule(op, rule, candidates[0])
        self._costing_block = saved_b.insertion_point.block if saved_b is not None and saved_b.insertion_point else None
        for i, factors in enumerate(candidates):
            self.b, before = None, self.cost
            try:
                self.apply_rule(op, rule, factors)
                cost = self.cost - before
            finally:
                self.cost, self.b = before, saved_b
            if best is None or cost < best[0]:
                best = (cost, i, factors)
        assert best is not None
        self.apply_rule(op, rule, best[2])

    def apply_rule(self, op: Operation, rule: ShardingRule, factors: dict[int, tuple[str, ...]]) -> None:
        operands = []
        for v, dims in zip(op.operands, rule.operands):
            s = self.reshard(self.lookup(v), self.tensor_axes(dims, factors))
            operands.append(s)
        partial = tuple(a for f in sorted(rule.reduction) for a in factors.get(f, ()))
        if self.b is not None:
            self.mask_padding(op, rule, factors, operands)
        windows = [w for w in op_windows(op, lambda e: self.pieces(factors.get(rule.results[0][e][0], ())))
                   if len(w.starts) > 1] if rule.windowed else []
        result_axes = [self.tensor_axes(dims, factors) for dims in rule.results]
        local_types = [self.local_type(r.type, a) for r, a in zip(op.results, result_axes)]
        if windows:
            operands = self.fetch_windows(op, operands, windows)
            local_types = [_resized(t, {w.result_dim: w.local_size for w in windows}) for t in local_types]
        values: list[Any] = [None] * len(op.results)
        if self.b is not None:
            new = self.clone(op, [s.value for s in operands], local_types)
            values = list(new.results)
            if rule.localize is not None:
                ctx = _Offsets(self, op, result_axes, [o.axes for o in operands])
                values = rule.localize(self.b, new, ctx) or values
            if windows:
                values = self.localize_windows(op, new, values, windows, result_axes)
        for j, (r, axes, target) in enumerate(zip(op.results, result_axes, self.result_axes(op))):
            s = Shard(values[j], r.type, axes)
            if partial:
                s = self.combine_partial(s, partial, target, rule.reducer or "add")
            self.env[r] = self.reshard(s, target)

    def mask_padding(self, op: Operation, rule: ShardingRule, factors: dict[int, tuple[str, ...]],
                     operands: list[Shard]) -> None:
        """Where a sharded reduction factor is uneven, put the reduction's identity in the padding."""
        for i, (s, dims) in enumerate(zip(operands, rule.operands)):
            for d, fs in enumerate(dims):
                if not (len(fs) == 1 and fs[0] in rule.reduction and factors.get(fs[0])):
                    continue
                n, k = s.type.shape[d], self.pieces(s.axes[d])
                if n % k == 0:
                    continue
                assert rule.pad_value is not None and self.b is not None
                fill = rule.pad_value(self.b, op, [o.value for o in operands], i)
                local_t = self.local_type(s.type, s.axes)
                mask_t = RankedTensorType(local_t.shape, i1)
                int_t = RankedTensorType(local_t.shape, i32)
                pos = self.emit("stablehlo.iota", [], [int_t], {"iota_dimension": IntegerAttr.get(d)}).results[0]
                start = self.broadcast(self.offset(s.axes[d], local_t.shape[d]), int_t)
                pos = self.emit("stablehlo.add", [pos, start], [int_t]).results[0]
                limit = self.broadcast(self.scalar_const(n, i32), int_t)
                from loom.dialects.stablehlo.attributes import enum_attr
                inside = self.emit("stablehlo.compare", [pos, limit], [mask_t],
                                   {"comparison_direction": enum_attr("comparison_direction", "LT")}).results[0]
                value = self.emit("stablehlo.select", [inside, s.value, self.broadcast(fill, local_t)],
                                  [local_t]).results[0]
                operands[i] = Shard(value, s.type, s.axes)

    def broadcast(self, scalar: Value, t: RankedTensorType) -> Value:
        return self.emit("stablehlo.broadcast_in_dim", [scalar], [t], {"broadcast_dimensions": _i64s([])}).results[0]

    def combine_partial(self, s: Shard, partial: tuple[str, ...], target: Axes, kind: str) -> Shard:
        """Sum (or max, ...) the partial results over `partial`: reduce_scatter into a dimension
        the target splits next by some of these axes (evenly), all_reduce for the rest."""
        rest = list(partial)
        for d in range(len(s.axes)):
            if target[d][:len(s.axes[d])] != s.axes[d]:
                continue
            run: list[str] = []
            for a in target[d][len(s.axes[d]):]:
                if a not in rest:
                    break
                run.append(a)
            if run and s.type.shape[d] % self.pieces(s.axes[d] + tuple(run)) == 0:
                s = self.reduce_scatter(s, d, tuple(run), kind)
                rest = [a for a in rest if a not in run]
                break
        if rest:
            s = self.all_reduce(s, tuple(rest), kind)
        return s

    def all_reduce(self, s: Shard, axes: tuple[str, ...], kind: str) -> Shard:
        n = self.pieces(axes)
        nbytes = self.nbytes(s.type, s.axes)
        self.cost += 2 * (n - 1) / n * nbytes
        if self.b is None:
            return s
        t = self.local_type(s.type, s.axes)
        v = self.emit("stablehlo.all_reduce", [s.value], [t], self.collective_props(axes),
                      [self.reducer_region(kind, t.element_type)]).results[0]
        return Shard(v, s.type, s.axes)

    def reduce_scatter(self, s: Shard, dim: int, axes: tuple[str, ...], kind: str) -> Shard:
        new_axes = list(s.axes)
        new_axes[dim] = s.axes[dim] + axes
        out = Shard(None, s.type, tuple(new_axes))
        n = self.pieces(axes)
        self.cost += (n - 1) * self.nbytes(s.type, out.axes)
        if self.b is None:
            return out
        t = self.local_type(s.type, out.axes)
        props = {"scatter_dimension": IntegerAttr.get(dim), **self.collective_props(axes)}
        out.value = self.emit("stablehlo.reduce_scatter", [s.value], [t], props,
                              [self.reducer_region(kind, t.element_type)]).results[0]
        return out

    # --- windows: halo exchange -------------------------------------------------------------
    def fetch_windows(self, op: Operation, operands: list[Shard], windows: list[Window]) -> list[Shard]:
        """The operands as the local op reads them: along each windowed dimension, the elements
        of this partition's window (see `fetch_window`)."""
        operands = list(operands)
        for i, s in enumerate(operands):
            shape = list(self.local_shape(s.type.shape, s.axes))
            for w in windows:
                if i not in w.operands:
                    continue
                fill = w.fills[w.operands.index(i)]
                fill_value = None
                if fill is not None and self.b is not None:
                    fill_value = operands[fill].value if fill >= 0 else self.scalar_const(0, s.type.element_type)
                value = self.fetch_window(s, w, fill is not None, fill_value, shape)
                s = Shard(value, s.type, s.axes)
                shape[w.dim] = w.size
            operands[i] = s
        return operands

    def fetch_window(self, s: Shard, w: Window, masked: bool, fill: Value | None, shape: list[int]) -> Value | None:
        """Partition p's elements [w.starts[p], w.starts[p] + w.size) of the global operand along
        `w.dim`, which `s` splits in k pieces of L (`shape`: the local shape now). XLA's halo
        exchange: the elements next to this shard that the window needs come from the shards
        holding them, a static slice of each sent by one collective_permute per distance; the
        window is a dynamic_slice of what arrived; where that moves more than gathering the
        dimension, the dimension is all-gathered instead. Elements outside the operand read as
        `fill` when `masked`. A mirrored window (reverse) first reverses each shard and sends it
        to the mirrored partition."""
        dim, axes = w.dim, s.axes[w.dim]
        k, length = self.pieces(axes), shape[dim]
        row = math.prod(shape) // max(length, 1) * byte_width(s.type.element_type)
        value, size = s.value, s.type.shape[dim]
        if w.mirror:
            if self.b is not None:
                value = self.emit("stablehlo.reverse", [value], [value.type], {"dimensions": _i64s([dim])}).results[0]
            value = self.permute(value, axes, {q: k - 1 - q for q in range(k)}, length * row)
            size = k * length  # the reversed operand, its padding now first
        relative = [start - p * length for p, start in enumerate(w.starts)]
        low, high = min(relative), max(relative) + w.size
        # what the windows read of the operand itself (the rest is padding or masked)
        real = (size - s.type.shape[dim], size)
        reads = [(max(start, real[0]) - p * length, min(start + w.size, real[1]) - p * length)
                 for p, start in enumerate(w.starts) if max(start, real[0]) < min(start + w.size, real[1])] or [(0, 1)]
        read_low, read_high = min(r[0] for r in reads), max(r[1] for r in reads)
        distances = [d for d in range(read_low // length, (read_high - 1) // length + 1) if -k < d < k]
        halo = sum(min(read_high, (d + 1) * length) - max(read_low, d * length) for d in distances if d)
        if distances and halo <= (k - 1) * length:
            chunks = []
            for d in distances:
                first, last = max(read_low - d * length, 0), min(read_high - d * length, length)
                chunk = self.slice_dim(value, dim, first, last) if self.b is not None else None
                if d:
                    chunk = self.permute(chunk, axes, {q: q - d for q in range(k) if 0 <= q - d < k},
                                         (last - first) * row)
                chunks.append(chunk)
            before = max(read_low, distances[0] * length) - low
            after = high - min(read_high, (distances[-1] + 1) * length)
            offsets = [r - low for r in relative]
        else:
            self.cost += (k - 1) * length * row
            if self.b is not None:
                gathered = _resized(value.type, {dim: k * length})
                props = {"all_gather_dim": IntegerAttr.get(dim), **self.collective_props(axes)}
                value = self.emit("stablehlo.all_gather", [value], [gathered], props).results[0]
            chunks = [value]
            before, after = max(0, -min(w.starts)), max(0, max(w.starts) + w.size - k * length)
            offsets = [start + before for start in w.starts]
        if self.b is None:
            return None
        buffer = chunks[0] if len(chunks) == 1 else self.emit(
            "stablehlo.concatenate", chunks, [_resized(chunks[0].type, {dim: sum(c.type.shape[dim] for c in chunks)})],
            {"dimension": IntegerAttr.get(dim)}).results[0]
        if before or after:
            buffer = self.pad_dim(buffer, dim, before, after, self.scalar_const(0, s.type.element_type))
        window = self.dynamic_slice_dim(buffer, dim, offsets, w.size, axes)
        if masked and (min(w.starts) < 0 or max(w.starts) + w.size > size):
            window = self.mask_outside(window, dim, w.starts, size, fill, axes)
        return window

    def permute(self, value: Value | None, axes: tuple[str, ...], target: dict[int, int],
                nbytes: float) -> Value | None:
        """collective_permute over `axes`: shard q sends `value` to shard target[q]."""
        self.cost += nbytes
        if self.b is None:
            return None
        return self.permute_pairs(value, [(g[q], g[t]) for g in self.groups(axes) for q, t in sorted(target.items())])

    def permute_pairs(self, value: Value, pairs: list[tuple[int, int]]) -> Value:
        arr = np.array(pairs, dtype=np.int64).reshape(-1, 2)
        props = {"source_target_pairs": DenseElementsAttr.get(arr, RankedTensorType(arr.shape, i64)),
                 "channel_handle": channel_handle_attr(self.channel)}
        self.channel += 1
        return self.emit("stablehlo.collective_permute", [value], [value.type], props).results[0]

    def slice_dim(self, value: Value, dim: int, first: int, last: int) -> Value:
        shape = list(value.type.shape)
        if (first, last) == (0, shape[dim]):
            return value
        starts, limits = [0] * len(shape), list(shape)
        starts[dim], limits[dim] = first, last
        return self.emit("stablehlo.slice", [value], [_resized(value.type, {dim: last - first})],
                         {"start_indices": _i64s(starts), "limit_indices": _i64s(limits),
                          "strides": _i64s([1] * len(shape))}).results[0]

    def pad_dim(self, value: Value, dim: int, low: int, high: int, fill: Value) -> Value:
        rank = len(value.type.shape)
        lows, highs = [0] * rank, [0] * rank
        lows[dim], highs[dim] = low, high
        padded = _resized(value.type, {dim: value.type.shape[dim] + low + high})
        return self.emit("stablehlo.pad", [value, fill], [padded],
                         {"edge_padding_low": _i64s(lows), "edge_padding_high": _i64s(highs),
                          "interior_padding": _i64s([0] * rank)}).results[0]

    def dynamic_slice_dim(self, value: Value, dim: int, offsets: list[int], size: int, axes: tuple[str, ...]) -> Value:
        """`size` elements along `dim` from offsets[p] on partition p (its shard index over `axes`)."""
        if len(set(offsets)) == 1:
            return self.slice_dim(value, dim, offsets[0], offsets[0] + size)
        starts = [self.per_shard(offsets, axes) if d == dim else self._zero for d in range(len(value.type.shape))]
        sizes = list(value.type.shape)
        sizes[dim] = size
        return self.emit("stablehlo.dynamic_slice", [value, *starts], [_resized(value.type, {dim: size})],
                         {"slice_sizes": _i64s(sizes)}).results[0]

    def per_shard(self, values: list[int], axes: tuple[str, ...]) -> Value:
        """values[p] on partition p (its shard index over `axes`), a tensor<i32>."""
        if len(set(values)) == 1:
            return self.scalar_const(values[0], i32)
        step = values[1] - values[0]
        index = self.index(axes)
        if all(v == values[0] + p * step for p, v in enumerate(values)):
            if step != 1:
                index = self.emit("stablehlo.multiply", [index, self.scalar_const(step, i32)], [_i32()]).results[0]
            if values[0]:
                index = self.emit("stablehlo.add", [index, self.scalar_const(values[0], i32)], [_i32()]).results[0]
            return index
        table_t = RankedTensorType((len(values),), i32)
        table = self.emit("stablehlo.constant", [], [table_t],
                          {"value": DenseElementsAttr.get(np.asarray(values, np.int32), table_t)}).results[0]
        one = RankedTensorType((1,), i32)
        picked = self.emit("stablehlo.dynamic_slice", [table, index], [one], {"slice_sizes": _i64s([1])}).results[0]
        return self.emit("stablehlo.reshape", [picked], [_i32()]).results[0]

    def mask_outside(self, value: Value, dim: int, starts: list[int], size: int, fill: Value | None,
                     axes: tuple[str, ...]) -> Value:
        """`value` (global elements from starts[p] along `dim`) with those outside [0, size) set to `fill`."""
        from loom.dialects.stablehlo.attributes import enum_attr
        t = value.type
        int_t, mask_t = RankedTensorType(t.shape, i32), RankedTensorType(t.shape, i1)
        pos = self.emit("stablehlo.iota", [], [int_t], {"iota_dimension": IntegerAttr.get(dim)}).results[0]
        pos = self.emit("stablehlo.add", [pos, self.broadcast(self.per_shard(starts, axes), int_t)], [int_t]).results[0]
        inside = None
        for direction, bound in (("GE", 0), ("LT", size)):
            test = self.emit("stablehlo.compare", [pos, self.broadcast(self.scalar_const(bound, i32), int_t)], [mask_t],
                             {"comparison_direction": enum_attr("comparison_direction", direction)}).results[0]
            inside = test if inside is None else self.emit("stablehlo.and", [inside, test], [mask_t]).results[0]
        assert fill is not None
        return self.emit("stablehlo.select", [inside, value, self.broadcast(fill, t)], [t]).results[0]

    def select_parts(self, new: Operation, windows: list[Window], axes: Axes) -> Value:
        """The local piece of a concatenate along a split dimension, from the operands' windows
        over it: past where operand i starts in the result, operand i's."""
        from loom.dialects.stablehlo.attributes import enum_attr
        d = windows[0].dim
        t = new.results[0].type
        int_t, mask_t = RankedTensorType(t.shape, i32), RankedTensorType(t.shape, i1)
        first = [p * t.shape[d] for p in range(len(windows[0].starts))]
        pos = self.emit("stablehlo.iota", [], [int_t], {"iota_dimension": IntegerAttr.get(d)}).results[0]
        pos = self.emit("stablehlo.add", [pos, self.broadcast(self.per_shard(first, axes[d]), int_t)],
                        [int_t]).results[0]
        out = new.operands[0]
        for value, w in zip(new.operands[1:], windows[1:]):
            start = self.broadcast(self.scalar_const(-w.starts[0], i32), int_t)
            past = self.emit("stablehlo.compare", [pos, start], [mask_t],
                             {"comparison_direction": enum_attr("comparison_direction", "GE")}).results[0]
            out = self.emit("stablehlo.select", [past, value, out], [t]).results[0]
        return out

    def localize_windows(self, op: Operation, new: Operation, values: list[Value], windows: list[Window],
                         result_axes: list[Axes]) -> list[Value]:
        """The local op reads its windows from their first element: its padding, offsets and
        reversals along the windowed dimensions are gone (the exchange did them); a result
        longer than the piece (interior padding) is cut at this partition's offset."""
        props = new.properties
        for w in windows:
            d = w.dim
            if new.name == "stablehlo.slice":
                props["start_indices"] = _i64s(_set(props["start_indices"], d, 0))
                props["limit_indices"] = _i64s(_set(props["limit_indices"], d, w.size))
            elif new.name == "stablehlo.pad":
                props["edge_padding_low"] = _i64s(_set(props["edge_padding_low"], d, 0))
                props["edge_padding_high"] = _i64s(_set(props["edge_padding_high"], d,
                                                        list(props["interior_padding"].values)[d]))
            elif new.name == "stablehlo.reverse":
                props["dimensions"] = _i64s([x for x in props["dimensions"].values if x != d])
            elif "padding" in props:  # reduce_window, convolution: no padding along the window
                pads = props["padding"].to_numpy().reshape(-1, 2).copy()
                pads[w.padding_row] = 0
                props["padding"] = DenseElementsAttr.get(pads.astype(np.int64), props["padding"].type)
        if new.name == "stablehlo.reverse" and not list(props["dimensions"].values):
            values = [new.operands[0]]
            new.erase()
        if new.name == "stablehlo.concatenate":  # each element from the operand whose part of the result holds it
            values = [self.select_parts(new, windows, result_axes[0])]
            new.erase()
        out = []
        for v, r, axes in zip(values, op.results, result_axes):
            for w in windows:
                piece = self.local_shape(r.type.shape, axes)[w.result_dim]
                if w.crops is not None and (v.type.shape[w.result_dim] != piece or any(w.crops)):
                    v = self.dynamic_slice_dim(v, w.result_dim, w.crops, piece, axes[w.result_dim])
            out.append(v)
        return out

    def partition_control_flow(self, op: Operation) -> None:
        assert self.b is not None
        targets = self.result_axes(op)
        if op.name == "stablehlo.while":
            operands = [self.reshard(self.lookup(v), t).value for v, t in zip(op.operands, targets)]
        else:  # the predicate / branch index: a scalar, whole everywhere
            operands = [self.lookup(op.operands[0]).value]
        new = Operation.create(op.name, operands, [self.local_type(r.type, t) for r, t in zip(op.results, targets)],
                               dict(op.properties), {k: v for k, v in op.attributes.items() if k != "sdy.sharding"},
                               len(op.regions), location=op.location)
        self.b.insert(new)
        outer = self.b
        for old_region, new_region in zip(op.regions, new.regions):
            old_block = old_region.entry
            block = new_region.add_block(Block([self.local_type(a.type, t)
                                                for a, t in zip(old_block.args, targets)]))
            for a, na, t in zip(old_block.args, block.args, targets):
                self.env[a] = Shard(na, a.type, t)
            self.b = Builder(InsertionPoint.at_end(block))
            body = list(old_block.ops)
            self.partition_block(body[:-1])
            term = body[-1]
            is_cond = op.name == "stablehlo.while" and old_region is op.regions[0]
            values = [self.lookup(v).value if is_cond else self.reshard(self.lookup(v), t).value
                      for v, t in zip(term.operands, [()] if is_cond else targets)]
            self.b.create(term.name, values, [], dict(term.properties), dict(term.attributes), location=term.location)
        self.b = outer
        for r, nr, t in zip(op.results, new.results, targets):
            self.env[r] = Shard(nr, r.type, t)

    def rotation(self, op: Operation) -> tuple[Value, int, int] | None:
        """(x, d, shift) when `op` is `concatenate(x[n - shift:], x[:n - shift])` along a
        dimension d of x that is split evenly (jnp.roll's lowering), else None."""
        if op.name != "stablehlo.concatenate" or len(op.operands) != 2:
            return None
        slices = [v.owner_op for v in op.operands]
        if any(s is None or s.name != "stablehlo.slice" for s in slices) or \
                slices[0].operands[0] is not slices[1].operands[0]:
            return None
        x, d = slices[0].operands[0], op.properties["dimension"].value
        shape = shape_of_type(x.type)
        (s0, l0, t0), (s1, l1, t1) = ([list(s.properties[k].values) for k in ("start_indices", "limit_indices",
                                                                              "strides")] for s in slices)
        full = all(s0[e] == s1[e] == 0 and l0[e] == l1[e] == shape[e] for e in range(len(shape)) if e != d)
        shift = shape[d] - s0[d]
        if not full or set(t0) | set(t1) != {1} or l0[d] != shape[d] or (s1[d], l1[d]) != (0, shape[d] - shift) \
                or x not in self.env:
            return None
        axes = self.lookup(x).axes[d]
        return (x, d, shift) if axes and not shape[d] % self.pieces(axes) else None

    def partition_rotation(self, op: Operation) -> None:
        """A rotation by `shift` along a split dimension (see `rotation`), as XLA: partition q's
        rows are the last `shift % L` rows of shard q - shift // L - 1 followed by the first
        rows of shard q - shift // L (cyclically; L rows per shard), each sent by one
        collective_permute (none for the part a partition holds itself)."""
        x, d, shift = self.rotation(op)  # type: ignore[misc]
        s = self.lookup(x)
        axes = s.axes[d]
        k = self.pieces(axes)
        local = list(self.local_shape(s.type.shape, s.axes))
        length = local[d]
        row = math.prod(local) // length * byte_width(s.type.element_type)
        whole, r = divmod(shift, length)
        chunks = []
        if r:
            tail = self.slice_dim(s.value, d, length - r, length)
            if (whole + 1) % k:
                tail = self.permute(tail, axes, {q: (q + whole + 1) % k for q in range(k)}, r * row)
            chunks.append(tail)
        if length - r:
            head = self.slice_dim(s.value, d, 0, length - r)
            if whole % k:
                head = self.permute(head, axes, {q: (q + whole) % k for q in range(k)}, (length - r) * row)
            chunks.append(head)
        value = chunks[0] if len(chunks) == 1 else self.emit(
            "stablehlo.concatenate", chunks, [s.value.type], {"dimension": IntegerAttr.get(d)}).results[0]
        r0 = op.results[0]
        self.env[r0] = self.reshard(Shard(value, r0.type, s.axes), self.result_axes(op)[0])

    def slice_from_owner(self, op: Operation) -> bool:
        """A slice lying within one shard along every split dimension of its operand (an element
        read as a loop's predicate, say) is cut there and sent to the others with one
        collective_broadcast of the slice, instead of gathering the whole operand. False (nothing
        emitted) for any other slice."""
        assert self.b is not None
        s = self.lookup(op.operands[0])
        starts, limits, strides = (list(op.properties[k].values) for k in ("start_indices", "limit_indices", "strides"))
        local = self.local_shape(s.type.shape, s.axes)
        split = [d for d, a in enumerate(s.axes) if a]
        owner = {d: starts[d] // local[d] for d in split}
        if not split or any((limits[d] - 1) // local[d] != owner[d] or limits[d] <= starts[d] for d in split):
            return False
        r = op.results[0]
        cut = self.clone(op, [s.value], [r.type])
        cut.properties["start_indices"] = _i64s([b - owner.get(d, 0) * local[d] for d, b in enumerate(starts)])
        cut.properties["limit_indices"] = _i64s([e - owner.get(d, 0) * local[d] for d, e in enumerate(limits)])
        axes = tuple(a for d in split for a in s.axes[d])
        coords = [c for d in split for c in np.unravel_index(owner[d], [self.mesh[a] for a in s.axes[d]])]
        source = int(np.ravel_multi_index(coords, [self.mesh[a] for a in axes]))
        props = self.collective_props(axes, with_global_ids=False)
        groups = [[g[source], *g[:source], *g[source + 1:]] for g in self.groups(axes)]  # the source goes first
        props["replica_groups"] = replica_groups_attr(groups)
        sent = self.emit("stablehlo.collective_broadcast", [cut.results[0]], [r.type], props).results[0]
        self.cost += self.nbytes(r.type, self.replicated(r.type))
        self.env[r] = self.reshard(Shard(sent, r.type, self.replicated(r.type)), self.result_axes(op)[0])
        return True

    def stack_layout(self, stack: Value) -> tuple[Any, Axes]:
        """The local type of a stack made by reverse mode and how the tensors on it are split: as
        propagation split the first value pushed on it (every push of one stack pushes the same
        carry or residual), so each device keeps its own shards. A stack of stacks (a loop
        nested in a loop) holds the inner stacks' handles and carries their split."""
        element = stack.type.element_type
        pushed = next((u.owner.operands[1] for u in stack.uses
                       if u.owner.name == "stack.push" and u.index == 0), None)
        if isinstance(element, StackType):
            if pushed is None:
                return stack.type, ()
            inner, axes = self.stack_layout(pushed)
            return StackType(inner), axes
        if not isinstance(element, RankedTensorType) or pushed is None:
            return stack.type, self.replicated(element)
        axes = self.propagated_axes(pushed)
        return StackType(self.local_type(element, axes)), axes

    def propagated_axes(self, v: Value) -> Axes:
        """How `v` is split once partitioned (it may not be yet: a value pushed inside a loop)."""
        if v in self.env:
            return self.env[v].axes
        if isinstance(v, OpResult):
            return self.result_axes(v.op)[v.index]
        parent = v.parent_block.parent_op if isinstance(v, BlockArgument) else None
        if parent is not None and parent.name == "stablehlo.while":  # a carry
            return self.result_axes(parent)[v.index]
        return self.replicated(v.type)

    def partition_stack(self, op: Operation) -> None:
        """Stacks hold local shards (see `stack_layout`): a push reshards its value to the
        stack's split (a no-op when the value is split so), a pop gives a shard of that split
        (propagation gives pops no sharding of their own: they have no rule)."""
        assert self.b is not None
        if op.name == "stack.new":
            local, axes = self.stack_layout(op.results[0])
            self.env[op.results[0]] = Shard(self.clone(op, [], [local]).results[0], op.results[0].type, axes)
            return
        stack = self.lookup(op.operands[0])
        assert stack.value is not None
        if op.name == "stack.companion":
            new = self.clone(op, [stack.value], [stack.value.type])
            self.env[op.results[0]] = Shard(new.results[0], op.results[0].type, stack.axes)
        elif op.name == "stack.push":
            value = op.operands[1]
            local = (self.reshard(self.lookup(value), stack.axes) if isinstance(value.type, RankedTensorType)
                     else self.lookup(value)).value
            self.clone(op, [stack.value, local], [])
        else:  # stack.pop: a shard split as the stack is; its users reshard it as they need
            r = op.results[0]
            self.env[r] = Shard(self.clone(op, [stack.value], [stack.value.type.element_type]).results[0],
                                r.type, stack.axes)

    def partition_manual(self, op: Operation) -> None:
        """A manual computation over every axis: its body (per device already) inlined on the
        operands' local shards. Over some axes only: the body is global over the others and is
        partitioned over them, its arguments split as the in_shardings say without the manual
        axes (which are major in every dimension)."""
        assert self.b is not None
        manual = manual_axes_of(op)
        ins = [_axes(s) for s in op.properties["in_shardings"].shardings]
        outs = [_axes(s) for s in op.properties["out_shardings"].shardings]
        body = op.regions[0].entry
        ops = list(body.ops)
        originals = [self.lookup(v) for v in op.operands]
        if free_axes(self.mesh, manual):
            for a, original, t in zip(body.args, originals, ins):
                if all(d[:len(_only(e, manual))] == _only(e, manual) == _only(d, manual) and
                       n % self.pieces(_only(e, manual)) == 0
                       for d, e, n in zip(original.axes, t, original.type.shape)):
                    # split over the manual axes as the body needs it: the body's argument is the
                    # operand's piece, split over the free axes as the operand is
                    self.env[a] = Shard(original.value, a.type, _without(original.axes, manual))
                else:
                    self.env[a] = Shard(self.reshard(original, t).value, a.type, _without(t, manual))
            self.partition_block(ops[:-1])
            for r, v, t in zip(op.results, ops[-1].operands, outs):
                self.env[r] = Shard(self.reshard(self.lookup(v), _without(t, manual)).value, r.type, t)
            return
        operands = [self.reshard(s, t).value for s, t in zip(originals, ins)]
        mapping: dict[Any, Any] = dict(zip(body.args, operands))
        for inner in ops[:-1]:
            if inner.name in ("sdy.sharding_constraint", "sdy.reshard"):  # per device already: values as they are
                mapping[inner.results[0]] = mapping.get(inner.operands[0], inner.operands[0])
                continue
            self.b.insert(_without_sdy(inner.clone(mapping)))
        for r, v, t in zip(op.results, ops[-1].operands, outs):
            self.env[r] = Shard(mapping.get(v, self.lookup(v).value if v in self.env else v), r.type, t)

    # --- the function -----------------------------------------------------------------------
    def partition_function(self, fn: Operation) -> None:
        if "mhlo.num_partitions" not in self.module.attributes:
            self.module.attributes["mhlo.num_partitions"] = IntegerAttr.get(self.num_devices, i32)
            self.module.attributes["mhlo.num_replicas"] = IntegerAttr.get(1, i32)
        _fold_slices_of_pads(fn)
        old_block = fn.regions[0].entry
        n_results = len(fn.properties["function_type"].value.results)
        arg_dicts = arg_attr_dicts(fn, "arg_attrs", len(old_block.args))
        res_dicts = arg_attr_dicts(fn, "res_attrs", n_results)
        arg_axes = [_axes(d["sdy.sharding"]) if "sdy.sharding" in d else self.replicated(a.type)
                    for a, d in zip(old_block.args, arg_dicts)]
        res_axes = [_axes(d["sdy.sharding"]) if "sdy.sharding" in d else self.replicated(t)
                    for t, d in zip(fn.properties["function_type"].value.results, res_dicts)]
        old_ops = list(old_block.ops)
        new_region = Region()
        block = new_region.add_block(Block([self.local_type(a.type, t) for a, t in zip(old_block.args, arg_axes)],
                                           [a.location for a in old_block.args]))
        for a, na, t in zip(old_block.args, block.args, arg_axes):
            self.env[a] = Shard(na, a.type, t)
        self.b = Builder(InsertionPoint.at_end(block))
        pid = self.emit("stablehlo.partition_id", [], [RankedTensorType((), IntegerType(32, "u"))]).results[0]
        self._pid = self.emit("stablehlo.convert", [pid], [_i32()]).results[0]
        self._zero = self.scalar_const(0, i32)
        anchor = self._zero.owner_op
        self._index_builder = Builder(InsertionPoint.before(anchor))
        self.partition_block(old_ops[:-1])
        ret = old_ops[-1]
        self.b.location = ret.location
        values = [self.reshard(self.lookup(v), t).value for v, t in zip(ret.operands, res_axes)]
        self.b.create(ret.name, values, [], dict(ret.properties), dict(ret.attributes), location=ret.location)
        for prelude in (anchor, self._pid.owner_op, pid.owner_op):  # unused when nothing needed an offset
            if not any(r.has_uses for r in prelude.results):
                prelude.erase()
        for t, d, axes in zip(fn.properties["function_type"].value.results, res_dicts, res_axes):
            d["sdy.sharding"] = closed_attr(self.mesh_name, axes)
            d["loom.global_type"] = TypeAttr(t)
        for a, d, axes in zip(old_block.args, arg_dicts, arg_axes):
            d["sdy.sharding"] = closed_attr(self.mesh_name, axes)
            d["loom.global_type"] = TypeAttr(a.type)
        from loom.ir.types import FunctionType
        fn.properties["function_type"] = TypeAttr(FunctionType(
            tuple(a.type for a in block.args),
            tuple(self.local_type(t, a) for t, a in zip(fn.properties["function_type"].value.results, res_axes))))
        set_attr_dicts(fn, "arg_attrs", arg_dicts)
        set_attr_dicts(fn, "res_attrs", res_dicts)
        old = fn.regions[0]
        for o in old.entry.ops:
            o.drop_all_references()
        old.blocks = []
        old.take_body(new_region)
        self.env.clear()
        self._index_cache.clear()


def _fold_slices_of_pads(fn: Operation) -> None:
    """A slice (unit strides) of a pad (no interior padding) is one pad whose edge padding is
    the two combined (negative where it cuts), and nothing when that is none: XLA's simplifier
    does the same before partitioning, and a padded dimension read back as it was then moves
    no halo."""
    for op in list(fn.walk()):
        pad = op.operands[0].owner_op if op.name == "stablehlo.slice" else None
        if pad is None or pad.name != "stablehlo.pad" or any(k != 1 for k in op.properties["strides"].values) or \
                any(pad.properties["interior_padding"].values):
            continue
        padded = pad.results[0].type.shape
        low = [lo - start for lo, start in zip(pad.properties["edge_padding_low"].values,
                                               op.properties["start_indices"].values)]
        high = [hi - (n - limit) for hi, n, limit in zip(pad.properties["edge_padding_high"].values, padded,
                                                         op.properties["limit_indices"].values)]
        if not any(low) and not any(high):
            op.results[0].replace_all_uses_with(pad.operands[0])
        else:
            props = {**pad.properties, "edge_padding_low": _i64s(low), "edge_padding_high": _i64s(high)}
            folded = Builder(InsertionPoint.before(op)).create(
                "stablehlo.pad", list(pad.operands), [op.results[0].type], props, dict(op.attributes),
                location=op.location)
            op.results[0].replace_all_uses_with(folded.results[0])
        op.erase()
        if not pad.results[0].has_uses:
            pad.erase()


def _put(axes: Axes, dims: dict[int, tuple[str, ...]]) -> Axes:
    return tuple(dims.get(d, a) for d, a in enumerate(axes))


def _resized(t: RankedTensorType, sizes: dict[int, int]) -> RankedTensorType:
    return RankedTensorType(tuple(sizes.get(d, n) for d, n in enumerate(t.shape)), t.element_type)


def _set(values: Any, index: int, value: int) -> list[int]:
    out = list(values.values)
    out[index] = value
    return out


class _Offsets:
    """What a rule's `localize` hook may ask about the local op: `offset(d)`, this partition's
    first global index along result dimension d (a tensor<i32>, None when d is not split),
    `operand_offset(i, d)` the same along operand i's dimension d, and `local_shape()`."""

    def __init__(self, p: Partitioner, op: Operation, result_axes: list[Axes], operand_axes: list[Axes]) -> None:
        self.p, self.op, self.result_axes, self.operand_axes = p, op, result_axes, operand_axes

    def _offset(self, v: Value, axes: Axes, d: int) -> Value | None:
        if not axes[d]:
            return None
        return self.p.offset(axes[d], self.p.local_shape(shape_of_type(v.type), axes)[d])

    def offset(self, d: int, result: int = 0) -> Value | None:
        return self._offset(self.op.results[result], self.result_axes[result], d)

    def operand_offset(self, i: int, d: int) -> Value | None:
        return self._offset(self.op.operands[i], self.operand_axes[i], d)

    def local_shape(self, result: int = 0) -> tuple[int, ...]:
        return self.p.local_shape(self.op.results[result].type.shape, self.result_axes[result])


def _without(axes: Axes, manual: set[str]) -> Axes:
    return tuple(tuple(a for a in d if a not in manual) for d in axes)


def _only(axes: tuple[str, ...], manual: set[str]) -> tuple[str, ...]:
    return tuple(a for a in axes if a in manual)


def _without_sdy(op: Operation) -> Operation:
    """`op` with the sharding constraints nested in its regions dropped (identities on values),
    and the shardings propagation wrote on the ops in them."""
    for nested in list(op.walk()):
        if nested.name in ("sdy.sharding_constraint", "sdy.reshard"):
            nested.results[0].replace_all_uses_with(nested.operands[0])
            nested.erase()
        elif nested is not op:
            nested.attributes.pop("sdy.sharding", None)
    return op


def _axes(attr: TensorShardingAttr) -> Axes:
    return tuple(tuple(a.name for a in d.axes) for d in attr.dims)


def _i32() -> RankedTensorType:
    return RankedTensorType((), i32)


def _i64s(values: Sequence[int]) -> DenseArrayAttr:
    return DenseArrayAttr.get(i64, values)


def shape_of_type(t: Any) -> tuple[int, ...]:
    return tuple(t.shape) if isinstance(t, RankedTensorType) else ()


def _handle_of(op: Operation) -> int:
    h = op.properties.get("channel_handle")
    return int(h.handle) if isinstance(h, ChannelHandle) else 0


def partition_module(module: Operation) -> None:
    """Partition every function of `module` in place; sdy ops other than the mesh are gone after."""
    p = Partitioner(module)
    for op in list(module.regions[0].entry.ops):
        if op.name == "func.func" and op.regions and op.regions[0].blocks:
            p.partition_function(op)


@register_pass
class SPMDPartitionPass(Pass):
    """Make the per-device program of a propagated global program (see the module's doc)."""

    name = "spmd-partition"
    summary = "Partition a sharded global program into the program one device runs"

    def run(self, op: Operation) -> None:
        try:
            partition_module(op)
        except ShardingError as e:
            raise self.fail(op, str(e)) from None


__all__ = ["Partitioner", "SPMDPartitionPass", "byte_width", "partition_module"]
