"""decompose-collective-matmul: on a partitioned (per-device) program, a collective feeding a
`stablehlo.dot_general` (or fed by one) becomes a loop that computes on one shard while the next
shard travels around the ring (Wang et al., ASPLOS'23; XLA's "windowed einsum"). Each step's
dot is independent of the step's `collective_permute`, so a scheduler can overlap them.

Matched forms (the collective in `flattened_ids` mode, as the partitioner and JAX's shard_map
write them: a channel, `use_global_device_ids`, groups of N >= 2 partition ids):

- all-gather loop: `dot_general(all_gather(x), w)` (either side), the gathered value used by that
  dot only. With `k` this partition's position in its group and `c` the shard size, `x` holds at
  step i the shard of position (k + i) mod N, then goes one step back along the ring (position j
  sends to j - 1). What a step does depends on the gathered dimension of `x` (XLA's three windowed
  forms): neither batching nor contracting, the step's dot gives that block of the result,
  written with `dynamic_update_slice` at offset ((k + i) mod N) * c; contracting, the step
  multiplies by the matching block of `w`'s contracted dimension (a `dynamic_slice` at that
  offset) and adds the partial product into the full-size result (summing the blocks one by one:
  float sums may differ in the last bits); batching, the step's dot of `w`'s matching batch block
  gives that batch block of the result, written at that offset. N - 1 steps run in a
  `stablehlo.while`; the last block is computed after it, so no shard is sent that nobody uses.
- reduce-scatter loop: `reduce_scatter(dot_general(a, b))` summing (`stablehlo.add`), scattered
  along a result dimension that comes from a non-batching, non-contracting dimension of `a` or `b`,
  the dot used by that reduce-scatter only. A shard-sized accumulator travels the ring: step i
  adds the dot of the slice of that operand for block (k + i + 1) mod N, and passes the
  accumulator back (j sends to j - 1) before every step but the first; after N steps each
  partition holds its own block, fully summed (in ring order, not the group order of
  `reduce_scatter`, so float sums may differ in the last bits).

With `bidirectional`, a second copy of the shard (all-gather) or a second accumulator
(reduce-scatter) travels the other way (position j sends to j + 1), so both links of the ring
carry data and about N / 2 rounds are needed: the all-gather computes blocks k + i and k - i at
round i = 1 .. h = (N - 1) // 2 (and, N even, k + N/2 last); the reduce-scatter sums each block
over N // 2 + 1 positions going up and the other N - 1 - N // 2 going down, adding the two at the
end. The middle rounds (all but the first and the last one or two) run in a `stablehlo.while`
when there are any; the others are written out. Whole shards travel each way (XLA's scheme;
splitting each shard in halves is not done). With `concatenate` too, each round of the
all-gather loop concatenates its two shards along the gathered dimension (and, on a contracting or
batch window, the other operand's two matching blocks) and runs one dot (XLA's scheme: one larger
dot, the other operand read once), then writes the result's two halves as the two blocks, or adds
it whole (contracting: the two partial products summed inside the dot, so float sums may differ
in the last bits).

With `unroll`, each loop iteration runs two steps (XLA's unroll_windowed_einsum: two permutes and
two partial dots per iteration, fewer loop-carried round trips), an odd last step written out after
the loop; the steps and their order are unchanged, so the values are bit for bit the rolled loop's.

With `fuse` (one-way loops only), an all-gather loop (on a non-contracting dimension) whose dot
feeds, through elementwise ops only (splat constants their only other operands), the dot of a
reduce-scatter loop that slices the same dimension in blocks of the same size over the same groups
(a sequence-parallel MLP: gather, matmul, gelu, matmul, scatter) becomes one loop. Each step sends
the shard on and the accumulator on, and puts the shard it holds through the first dot, the
elementwise ops and the second dot: the reduce-scatter's step i needs block k + i + 1, which
arrives at step i + 1, so it runs one step behind the gathering, and its last step takes this
partition's own block k: its first dot comes first (behind the first transfer), its second dot
last (behind the accumulator's last transfer). Neither the gathered operand nor the first dot's
full result is built, and the reduce-scatter's transfers hide behind the first dot too (the two
loops would leave the first dot's step with one transfer, the second's with the other). The same
dots and sums in the same order as the two loops: bit for bit their values.

This partition's position k is looked up from `stablehlo.partition_id` in a constant table of the
groups. Options: `bidirectional` and `unroll` (false by default); `mode` = `on` (decompose every
match), `off` (none), `auto` (the default: XLA's two gates. The collective's full-size value, the
gathered operand or the unreduced dot result, must be at least `threshold-bytes`, 256 MiB by
default; then XLA's inequality, `loom.sim.cost.collective_matmul_decision`, priced on `machine` (a
preset name or a Machine JSON path, "h200" by default), must find the loop faster). Every
candidate left alone (a collective next to a dot that cannot be windowed, or one auto mode skips)
gets a remark saying why, with the figures.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from loom.dialects.stablehlo import builders as sb
from loom.dialects.stablehlo.attributes import ChannelHandle
from loom.dialects.stablehlo.base import Elementwise
from loom.dialects.stablehlo.collectives import AllGatherOp, CollectivePermuteOp, PartitionIdOp, ReduceScatterOp
from loom.dialects.stablehlo.constants import ConstantOp
from loom.dialects.stablehlo.folding import splat_value
from loom.ir.attributes import numpy_dtype
from loom.ir.builder import Builder, InsertionPoint
from loom.ir.core import Block, Operation, Value
from loom.ir.diagnostics import emit_remark
from loom.ir.types import DYNAMIC, RankedTensorType, i32
from loom.rewrite.passes import Option, Pass, register_pass
from loom.sim.cost import Decision, collective_matmul_decision
from loom.sim.machine import Machine
from loom.transforms.spmd_partition import byte_width

_I32 = RankedTensorType((), i32)


def _dims(dot: Operation) -> tuple[list[list[int]], list[list[int]]]:
    """([lhs batching, lhs contracting], [rhs batching, rhs contracting])."""
    dn = dot.properties["dot_dimension_numbers"]
    return ([list(dn.lhs_batching_dimensions), list(dn.lhs_contracting_dimensions)],
            [list(dn.rhs_batching_dimensions), list(dn.rhs_contracting_dimensions)])


def _free_dims(dot: Operation, side: int) -> list[int]:
    rank = dot.operands[side].type.rank
    batch, contract = _dims(dot)[side]
    return [d for d in range(rank) if d not in batch and d not in contract]


def _result_dim(dot: Operation, side: int, d: int) -> int:
    """The dot result's dimension that operand `side`'s free dimension `d` becomes."""
    n_batch = len(_dims(dot)[0][0])
    before = len(_free_dims(dot, 0)) if side == 1 else 0
    return n_batch + before + _free_dims(dot, side).index(d)


def _operand_dim(dot: Operation, r: int) -> tuple[int, int] | None:
    """(side, dimension) of the operand free dimension that result dimension `r` comes from."""
    n_batch = len(_dims(dot)[0][0])
    lhs_free, rhs_free = _free_dims(dot, 0), _free_dims(dot, 1)
    if r < n_batch:
        return None
    r -= n_batch
    return (0, lhs_free[r]) if r < len(lhs_free) else (1, rhs_free[r - len(lhs_free)])


def _static(t: object) -> bool:
    return isinstance(t, RankedTensorType) and DYNAMIC not in t.shape


def _groups(op: Operation) -> list[list[int]] | None:
    """The op's groups of partition ids when it names partitions (flattened ids) in groups of two
    or more, else None."""
    if op.mode != "flattened_ids":
        return None
    groups = op.groups
    return groups if groups and len(groups[0]) >= 2 else None


def _sums(rs: Operation) -> bool:
    """Whether the reduce-scatter's body is `return add(a, b)`."""
    block = rs.regions[0].entry
    ops = list(block.ops)
    return (len(ops) == 2 and ops[0].name == "stablehlo.add" and ops[1].operands[0] is ops[0].results[0]
            and set(ops[0].operands) == set(block.args))


def _ring(groups: Sequence[Sequence[int]], down: bool = False) -> list[tuple[int, int]]:
    """Each position j of each group sends to position j - 1 (j + 1 when `down`)."""
    return [(g[j], g[(j + 1) % len(g)] if down else g[j - 1]) for g in groups for j in range(len(g))]


def _nbytes(t: RankedTensorType) -> int:
    return int(np.prod(t.shape, dtype=np.int64)) * byte_width(t.element_type)


class _Emitter:
    """Builds the loop of one match at `b`'s insertion point; each collective_permute it makes
    takes the next channel of `channels`. Constants and this partition's position are made once
    per block, at its start (so they dominate every use in it), and shared by the matches through
    `hoisted`."""

    def __init__(self, b: Builder, groups: list[list[int]], channels: Iterator[int], unroll: bool,
                 hoisted: dict[tuple, Value]) -> None:
        self.b, self.groups, self.n, self.channels, self.unroll = b, groups, len(groups[0]), channels, unroll
        self.hoisted = hoisted

    def _at_start(self, b: Builder, key: tuple, make: Callable[[Builder], Value]) -> Value:
        block = b.insertion_point.block
        full_key = (id(block), *key)
        if full_key not in self.hoisted:
            self.hoisted[full_key] = make(Builder(InsertionPoint.at_start(block), self.b.location))
        return self.hoisted[full_key]

    def const(self, b: Builder, v: int) -> Value:
        """The i32 constant `v`, at the start of `b`'s block."""
        return self._at_start(b, ("i32", int(v)), lambda hb: sb.constant(hb, np.int32(v), _I32))

    def zeros(self, b: Builder, t: RankedTensorType) -> Value:
        """A zero tensor of type `t`, at the start of `b`'s block."""
        return self._at_start(b, ("zeros", str(t)),
                              lambda hb: sb.constant(hb, np.zeros((), dtype=numpy_dtype(t.element_type)), t))

    def position(self) -> Value:
        """This partition's position in its group (tensor<i32>), from `partition_id` (at the
        start of the block)."""
        table = np.zeros(max(p for g in self.groups for p in g) + 1, np.int32)
        for g in self.groups:
            for j, p in enumerate(g):
                table[p] = j

        def make(b: Builder) -> Value:
            pid = sb.convert(b, PartitionIdOp.build(b).results[0], i32)
            t = RankedTensorType((len(table),), i32)
            entry = sb.dynamic_slice(b, sb.constant(b, table, t), [pid], [1])
            return sb.reshape(b, entry, ())

        return self._at_start(self.b, ("position", table.tobytes()), make)

    def block_offset(self, b: Builder, k: Value, i: Value, shift: int, size: int, down: bool = False) -> Value:
        """((k + i + shift) mod N) * size, or ((k - i + shift) mod N) * size when `down`."""
        n = self.const(b, self.n)
        j = sb.subtract(b, k, i) if down else sb.add(b, k, i)
        if shift or down:  # down: + N keeps the remainder's operand non-negative
            j = sb.add(b, j, self.const(b, shift + (self.n if down else 0)))
        return sb.multiply(b, sb.remainder(b, j, n), self.const(b, size))

    def permute(self, b: Builder, v: Value, down: bool = False) -> Value:
        """`v` sent one step along the ring: position j to j - 1 (j + 1 when `down`)."""
        return CollectivePermuteOp.build(b, v, _ring(self.groups, down),
                                         ChannelHandle(next(self.channels), 1)).results[0]

    def loop(self, init: list[Value], start: int, stop: int,
             step: Callable[[Builder, list[Value], Value], list[Value]]) -> list[Value]:
        """Steps i = start .. stop - 1 over `init`: `step(b, values, i)` gives the next values. They
        run in a `stablehlo.while` (state: the values + i; everything the body reads travels in
        it); unrolled, two steps per iteration and an odd last step written out after it."""
        b = self.b
        per_iter = 2 if self.unroll else 1
        loop_stop = start + (stop - start) // per_iter * per_iter
        values = list(init)
        if loop_stop > start:
            def cond(cb: Builder, args: list[Value]) -> list[Value]:
                return [sb.compare(cb, args[-1], self.const(cb, loop_stop), "LT")]

            def body(bb: Builder, args: list[Value]) -> list[Value]:
                vals, i = args[:-1], args[-1]
                for _ in range(per_iter):
                    vals = step(bb, vals, i)
                    i = sb.add(bb, i, self.const(bb, 1))
                return [*vals, i]

            values = list(sb.while_(b, [*values, self.const(b, start)], cond, body))[:-1]
        for i in range(loop_stop, stop):
            values = step(b, values, self.const(b, i))
        return values


def _dot(b: Builder, dot: Operation, lhs: Value, rhs: Value, result_type: RankedTensorType) -> Value:
    return b.create("stablehlo.dot_general", [lhs, rhs], [result_type], dict(dot.properties),
                    dict(dot.attributes)).results[0]


def _with_dim(t: RankedTensorType, d: int, size: int) -> RankedTensorType:
    shape = list(t.shape)
    shape[d] = size
    return RankedTensorType(tuple(shape), t.element_type, t.encoding)


def _match_all_gather(ag: Operation) -> tuple[Operation, int, int | None, int | None] | str | None:
    """(dot, side of the gathered operand, result dimension each step's block is written at or None
    (contracting: blocks are summed), dimension of the other operand to slice per step or None
    (non-contracting: the other operand is used whole)); a reason when the gathered value feeds a
    dot_general that cannot be windowed; None when it feeds none."""
    res = ag.results[0]
    dots = [u for u in res.users if u.name == "stablehlo.dot_general"]
    if not dots:
        return None
    dot = dots[0]
    if len(ag.operands) != 1:
        return f"it gathers {len(ag.operands)} operands at once"
    if len(res.users) != 1:  # XLA's check_users_sharding: the other users would need the gather anyway
        return f"the gathered value has {len(res.users)} users, not only the dot"
    if not _static(res.type) or not _static(dot.results[0].type):
        return "its shapes are not static"
    if dot.operands[0] is res and dot.operands[1] is res:
        return "the dot multiplies the gathered value by itself"
    side = 0 if dot.operands[0] is res else 1
    d = ag.properties["all_gather_dim"].value
    (batch, contract), (other_batch, other_contract) = _dims(dot)[side], _dims(dot)[1 - side]
    if d in batch:
        return dot, side, batch.index(d), other_batch[batch.index(d)]
    if d in contract:
        return dot, side, None, other_contract[contract.index(d)]
    return dot, side, _result_dim(dot, side, d), None


def _match_reduce_scatter(rs: Operation) -> tuple[Operation, int, int] | str | None:
    """(dot, side of the operand to slice, its dimension); a reason when a dot_general feeds the
    reduce-scatter but the pair cannot be windowed; None when no dot feeds it."""
    v = rs.operands[0]
    dot = v.owner_op
    if dot is None or dot.name != "stablehlo.dot_general":
        return None
    if len(rs.operands) != 1:
        return f"it scatters {len(rs.operands)} operands at once"
    if len(v.users) != 1:
        return f"the dot's result has {len(v.users)} users, not only the reduce-scatter"
    if not _static(v.type):
        return "its shapes are not static"
    if not _sums(rs):
        return "its reduction is not a sum"
    found = _operand_dim(dot, rs.properties["scatter_dimension"].value)
    if found is None:
        return "it scatters a batch dimension of the dot"
    return dot, *found


def _decompose_all_gather(ag: Operation, dot: Operation, side: int, out_dim: int | None, other_dim: int | None,
                          e: _Emitter, bidirectional: bool, concatenate: bool = False) -> None:
    b = e.b
    shard = ag.operands[0]
    other = dot.operands[1 - side]
    out_t: RankedTensorType = dot.results[0].type
    c = shard.type.shape[ag.properties["all_gather_dim"].value]
    part_t = out_t if out_dim is None else _with_dim(out_t, out_dim, c)
    k = e.position()

    def compute(bb: Builder, x: Value, w: Value, acc: Value, kk: Value, i: Value, down: bool = False) -> Value:
        """`acc` with the part of x (the shard of position k + i, or k - i when `down`): its block
        written (non-contracting, batch) or its partial sum added (contracting)."""
        offset: list[Value] = []  # the block's offset, made once at its first use (a batch window's slice and update)

        def starts(rank: int, dim: int) -> list[Value]:
            if not offset:
                offset.append(e.block_offset(bb, kk, i, 0, c, down))
            return [offset[0] if d == dim else e.const(bb, 0) for d in range(rank)]

        if other_dim is not None:  # the other operand's matching block of the contracting / batch dim
            w = sb.dynamic_slice(bb, w, starts(w.type.rank, other_dim), list(_with_dim(w.type, other_dim, c).shape))
        part = _dot(bb, dot, *((x, w) if side == 0 else (w, x)), part_t)
        if out_dim is None:
            return sb.add(bb, acc, part)
        return sb.dynamic_update_slice(bb, acc, part, starts(out_t.rank, out_dim))

    def compute_both(bb: Builder, x_up: Value, x_down: Value, w: Value, acc: Value, kk: Value, i: Value) -> Value:
        """`acc` with round i's two shards (k + i up, k - i down); with `concatenate`, from one dot
        of the two concatenated along the gathered dimension (XLA's two-way windowed einsum: one
        dot reads the other operand once), its result split into the two blocks or, contracting,
        the partial sum of both."""
        if not concatenate:
            return compute(bb, x_down, w, compute(bb, x_up, w, acc, kk, i), kk, i, down=True)
        d = ag.properties["all_gather_dim"].value
        offsets = [e.block_offset(bb, kk, i, 0, c), e.block_offset(bb, kk, i, 0, c, down=True)]
        x = sb.concatenate(bb, [x_up, x_down], d)
        if other_dim is not None:  # the other operand's two matching blocks, side by side as the shards
            zero = e.const(bb, 0)
            size = list(_with_dim(w.type, other_dim, c).shape)
            w = sb.concatenate(bb, [sb.dynamic_slice(bb, w, [o if k == other_dim else zero for k in range(w.type.rank)],
                                                     size) for o in offsets], other_dim)
        if out_dim is None:
            return sb.add(bb, acc, _dot(bb, dot, *((x, w) if side == 0 else (w, x)), out_t))
        both = _dot(bb, dot, *((x, w) if side == 0 else (w, x)), _with_dim(out_t, out_dim, 2 * c))
        zero = e.const(bb, 0)
        for half, offset in enumerate(offsets):
            start = [half * c if k == out_dim else 0 for k in range(out_t.rank)]
            limit = [start[k] + c if k == out_dim else n for k, n in enumerate(out_t.shape)]
            block = sb.slice_(bb, both, start, limit)
            acc = sb.dynamic_update_slice(bb, acc, block, [offset if k == out_dim else zero for k in range(out_t.rank)])
        return acc

    def const(v: int) -> Value:
        return e.const(b, v)

    if not bidirectional:
        def step(bb: Builder, vals: list[Value], i: Value) -> list[Value]:
            x, w, acc, kk = vals
            return [e.permute(bb, x), w, compute(bb, x, w, acc, kk, i), kk]

        x, w, acc, kk = e.loop([shard, other, e.zeros(b, out_t), k], 0, e.n - 1, step)
        out = compute(b, x, w, acc, kk, const(e.n - 1))
    else:
        # One copy of the shard goes up the ring (holding k + i at round i), one down (k - i):
        # rounds 1..h compute two blocks each, and with N even round N/2 the last one.
        h = (e.n - 1) // 2
        up, down = e.permute(b, shard), (e.permute(b, shard, down=True) if h >= 1 else shard)
        out = compute(b, shard, other, e.zeros(b, out_t), k, const(0))
        w, kk = other, k

        def step2(bb: Builder, vals: list[Value], i: Value) -> list[Value]:
            x_up, x_down, w, acc, kk = vals
            sent = [e.permute(bb, x_up), e.permute(bb, x_down, down=True)]  # issued before the dots
            return [*sent, w, compute_both(bb, x_up, x_down, w, acc, kk, i), kk]

        if h >= 2:
            up, down, w, out, kk = e.loop([up, down, other, out, k], 1, h, step2)
        if h >= 1:
            last_up = e.permute(b, up) if e.n % 2 == 0 else up
            out = compute_both(b, up, down, w, out, kk, const(h))
            up = last_up
        if e.n % 2 == 0:
            out = compute(b, up, w, out, kk, const(e.n // 2))
    dot.results[0].replace_all_uses_with(out)
    dot.erase()
    ag.erase()


def _decompose_reduce_scatter(rs: Operation, dot: Operation, side: int, dim: int, e: _Emitter,
                              bidirectional: bool) -> None:
    b = e.b
    out_t: RankedTensorType = rs.results[0].type
    operand, other = dot.operands[side], dot.operands[1 - side]
    c = out_t.shape[rs.properties["scatter_dimension"].value]
    sizes = list(operand.type.shape)
    sizes[dim] = c
    k = e.position()

    def compute(bb: Builder, a: Value, w: Value, kk: Value, i: Value, shift: int, down: bool = False) -> Value:
        """The dot of a's slice for block k + i + shift (k - i + shift when `down`)."""
        zero = e.const(bb, 0)
        starts = [e.block_offset(bb, kk, i, shift, c, down) if d == dim else zero for d in range(operand.type.rank)]
        piece = sb.dynamic_slice(bb, a, starts, sizes)
        return _dot(bb, dot, *((piece, w) if side == 0 else (w, piece)), out_t)

    def const(v: int) -> Value:
        return e.const(b, v)

    if not bidirectional:
        def step(bb: Builder, vals: list[Value], i: Value) -> list[Value]:
            acc, a, w, kk = vals
            return [sb.add(bb, e.permute(bb, acc), compute(bb, a, w, kk, i, 1)), a, w, kk]

        first = compute(b, operand, other, k, const(0), 1)
        out, *_ = e.loop([first, operand, other, k], 1, e.n, step)
    else:
        # Block b's sum is split between an accumulator going up the ring (adding at positions
        # b + h_up, ..., b: block k - h_up + s at step s) and one going down (b - h_down, ...,
        # b - 1: block k + h_down - s), which takes one last step down to b.
        h_up, h_down = e.n // 2, e.n - 1 - e.n // 2
        up = compute(b, operand, other, k, const(0), e.n - h_up)
        down = compute(b, operand, other, k, const(0), h_down, down=True) if h_down else None
        a, w, kk = operand, other, k

        def step2(bb: Builder, vals: list[Value], i: Value) -> list[Value]:
            up, down, a, w, kk = vals
            # Both partial dots come before both adds, so a scheduler can hide each direction's
            # transfer behind the two dots, not the one written before it.
            dot_up, dot_down = compute(bb, a, w, kk, i, e.n - h_up), compute(bb, a, w, kk, i, h_down, down=True)
            return [sb.add(bb, e.permute(bb, up), dot_up), sb.add(bb, e.permute(bb, down, down=True), dot_down),
                    a, w, kk]

        if h_down >= 2:
            up, down, a, w, kk = e.loop([up, down, operand, other, k], 1, h_down, step2)
        if down is not None:
            down = e.permute(b, down, down=True)
        for s in range(max(1, h_down), h_up + 1):
            up = sb.add(b, e.permute(b, up), compute(b, a, w, kk, const(s), e.n - h_up))
        out = up if down is None else sb.add(b, up, down)
    rs.results[0].replace_all_uses_with(out)
    rs.erase()
    dot.erase()


def _splat(v: Value) -> np.ndarray | None:
    """The one value of `v` when it is a splat: a constant, or a scalar constant broadcast (as JAX
    writes `jnp.maximum(x, 0)`); else None."""
    owner = v.owner_op
    if owner is not None and owner.name == "stablehlo.broadcast_in_dim" and owner.operands[0].type.shape == ():
        owner = owner.operands[0].owner_op
    if not isinstance(owner, ConstantOp):
        return None
    value = splat_value(owner.read_properties().get("value"))
    return None if value is None else np.asarray(value, numpy_dtype(v.type.element_type))


def _chain_to(ag: Operation, dot: Operation, out_dim: int | None, other_dim: int | None,
              groups: list[list[int]]) -> tuple[list[Operation], Operation, Operation, int] | None:
    """The fused form's match: the all-gather's dot (its gathered operand's blocks written along
    `out_dim`, the other operand used whole) feeds, through elementwise ops only (with splat
    constants), the operand of a reduce-scatter's dot that its loop slices along the same
    dimension, in blocks of the same size, over the same groups. Those elementwise ops (in program
    order), the reduce-scatter, its dot and the side of the sliced operand; None otherwise."""
    if out_dim is None or other_dim is not None:
        return None
    y = dot.results[0]
    chain: list[Operation] = []
    values = {y}
    frontier = [y]
    end: list[tuple[Operation, Value]] = []  # (the reduce-scatter's dot, the chain value it reads)
    while frontier:
        v = frontier.pop()
        for user in v.users:
            if user in chain or any(user is d for d, _ in end):
                continue
            if user.name == "stablehlo.dot_general":
                end.append((user, v))
                continue
            definition = type(user).definition
            if definition is None or Elementwise not in definition.trait_set or len(user.results) != 1 or \
                    user.results[0].type.shape != y.type.shape:
                return None
            chain.append(user)
            values.add(user.results[0])
            frontier.append(user.results[0])
    if len(end) != 1 or not chain:
        return None
    for op in chain:  # each operand from the chain or a splat (the chain reads nothing else)
        if any(v not in values and (v.type.shape != y.type.shape or _splat(v) is None) for v in op.operands):
            return None
    dot2, h = end[0]
    users = [u for u in dot2.results[0].users]
    if len(users) != 1 or not isinstance(users[0], ReduceScatterOp) or _groups(users[0]) != groups or \
            len(h.users) != 1 or dot2.operands[0] is dot2.operands[1]:
        return None
    rs = users[0]
    match = _match_reduce_scatter(rs)
    if match is None or isinstance(match, str):
        return None
    _, side, dim = match
    if dot2.operands[side] is not h or dim != out_dim or \
            rs.results[0].type.shape[rs.properties["scatter_dimension"].value] != \
            ag.operands[0].type.shape[ag.properties["all_gather_dim"].value]:
        return None
    if dot.parent is None or any(op.parent is not dot.parent for op in (*chain, dot2, rs)):
        return None
    order = {op: i for i, op in enumerate(dot.parent.ops)}
    return sorted(chain, key=order.__getitem__), rs, dot2, side


def _decompose_chain(ag: Operation, dot: Operation, side: int, out_dim: int, chain: list[Operation],
                     rs: Operation, dot2: Operation, side2: int, e: _Emitter) -> None:
    """The fused loop: each block of the gathered operand goes through the first dot, the
    elementwise ops and the second dot as it arrives, and the reduce-scatter's accumulator
    travels the ring beside it. The accumulator's step i needs block k + i + 1, which arrives at
    step i + 1, so it runs one step behind; its last step needs this partition's own block k,
    whose first dot runs first and whose second dot runs last. Same dots and sums, in the same
    order, as the two loops it replaces: bit for bit their values."""
    b = e.b
    shard = ag.operands[0]
    w1, w2 = dot.operands[1 - side], dot2.operands[1 - side2]
    c = shard.type.shape[ag.properties["all_gather_dim"].value]
    part_t = _with_dim(dot.results[0].type, out_dim, c)
    out_t: RankedTensorType = rs.results[0].type
    def splat(bb: Builder, v: Value) -> Value:
        """Splat `v` at the block's shape: a constant at the start of `bb`'s block."""
        t = _with_dim(v.type, out_dim, c)
        value = _splat(v)
        assert value is not None  # (_chain_to checked)
        return e._at_start(bb, ("splat", str(t), value.tobytes()), lambda hb: sb.constant(hb, value, t))

    def first(bb: Builder, x: Value, w1: Value) -> Value:
        """Block x through the first dot and the elementwise ops."""
        mapping = {dot.results[0]: _dot(bb, dot, *((x, w1) if side == 0 else (w1, x)), part_t)}
        for op in chain:
            operands = [mapping[v] if v in mapping else splat(bb, v) for v in op.operands]
            mapping[op.results[0]] = bb.create(op.name, operands, [_with_dim(op.results[0].type, out_dim, c)],
                                               dict(op.properties), dict(op.attributes)).results[0]
        return mapping[dot2.operands[side2]]

    def second(bb: Builder, h: Value, w2: Value) -> Value:
        return _dot(bb, dot2, *((h, w2) if side2 == 0 else (w2, h)), out_t)

    def through(bb: Builder, x: Value, w1: Value, w2: Value) -> Value:
        return second(bb, first(bb, x, w1), w2)

    # The own block's first half hides the first shard's transfer, its second half the
    # accumulator's last one (with the whole block first, that transfer would hide behind nothing).
    n = e.n
    x = shard
    nxt = e.permute(b, x)
    own = first(b, x, w1)  # block k: the accumulator's last step
    x = nxt
    nxt = e.permute(b, x) if n > 2 else x
    acc = through(b, x, w1, w2)  # the accumulator's first step: block k + 1
    x = nxt

    def step(bb: Builder, vals: list[Value], i: Value) -> list[Value]:
        x, acc, w1, w2 = vals
        sent = e.permute(bb, x)
        return [sent, sb.add(bb, e.permute(bb, acc), through(bb, x, w1, w2)), w1, w2]

    if n > 2:
        x, acc, w1, w2 = e.loop([x, acc, w1, w2], 2, n - 1, step)
        acc = sb.add(b, e.permute(b, acc), through(b, x, w1, w2))  # block k + n - 1: the gathering's last
    out = sb.add(b, e.permute(b, acc), second(b, own, w2))
    rs.results[0].replace_all_uses_with(out)
    splats = [v.owner_op for op in chain for v in op.operands if v.owner_op is not None and _splat(v) is not None]
    for op in [rs, dot2, *reversed(chain), dot, ag]:
        op.erase()
    for op in dict.fromkeys(splats):  # the full-size splats the chain read (now at the block's shape)
        if not op.results[0].uses:
            scalar = op.operands[0].owner_op if op.operands else None
            op.erase()
            if scalar is not None and not scalar.results[0].uses:
                scalar.erase()


def decompose(coll: Operation, bidirectional: bool = False, unroll: bool = False,
              channels: Iterator[int] | None = None, hoisted: dict[tuple, Value] | None = None,
              concatenate: bool = False, fuse: bool = False) -> Operation | None:
    """Rewrite candidate `coll` (an all_gather feeding a dot_general, or a reduce_scatter fed by
    one, as the module's doc matches them) and its dot into the loop, in place. `channels`: the
    permutes' channel ids (by default from 1 past the largest in `coll`'s module); `hoisted`: the
    constants shared with other loops of the same blocks. With `fuse` (one-way loops), an
    all-gather whose dot feeds a reduce-scatter's through elementwise ops becomes one loop with
    it (`fusable`); the reduce-scatter it took, else None. Raises ValueError for a non-candidate."""
    match = _match_all_gather(coll) if isinstance(coll, AllGatherOp) else _match_reduce_scatter(coll)
    groups = _groups(coll)
    if match is None or isinstance(match, str) or groups is None:
        raise ValueError(f"{coll.name} at {coll.location} is not a collective matmul candidate: "
                         f"{match or 'no dot_general next to it'}")
    if channels is None:
        root = coll
        while root.parent_op is not None:
            root = root.parent_op
        channels = itertools.count(_max_channel(root) + 1)
    chain = fusable(coll, match, groups) if fuse and not bidirectional else None
    anchor = (chain[1] if chain is not None else match[0]) if isinstance(coll, AllGatherOp) else coll
    e = _Emitter(Builder(InsertionPoint.before(anchor), coll.location), groups, channels, unroll,
                 {} if hoisted is None else hoisted)
    if chain is not None:
        _decompose_chain(coll, match[0], match[1], match[2], *chain, e)
        return chain[1]
    if isinstance(coll, AllGatherOp):
        _decompose_all_gather(coll, *match, e, bidirectional, concatenate)
    else:
        _decompose_reduce_scatter(coll, *match, e, bidirectional)
    return None


def fusable(coll: Operation, match: tuple | str | None,
            groups: list[list[int]] | None) -> tuple[list[Operation], Operation, Operation, int] | None:
    """For an all-gather candidate (`match` its `_match_all_gather`): the elementwise ops, the
    reduce-scatter, its dot and the side it slices that one fused loop would take with it (see
    `_chain_to`); None when there are none."""
    if not isinstance(coll, AllGatherOp) or not isinstance(match, tuple) or groups is None:
        return None
    return _chain_to(coll, match[0], match[2], match[3], groups)


def isolated_pair(coll: Operation, decomposed: bool, bidirectional: bool = False, unroll: bool = False,
                  concatenate: bool = False) -> Block:
    """A detached block holding a copy of candidate `coll` and its dot alone (their other operands
    its arguments): as they are, or as this pass with these options and schedule-latency-hiding
    would leave them (the cost model simulates both). Raises ValueError for a non-candidate."""
    from loom.transforms.latency_hiding import split_permute

    match = _match_all_gather(coll) if isinstance(coll, AllGatherOp) else _match_reduce_scatter(coll)
    if match is None or isinstance(match, str):
        raise ValueError(f"{coll.name} at {coll.location} is not a collective matmul candidate: {match}")
    pair = [coll, match[0]] if isinstance(coll, AllGatherOp) else [match[0], coll]
    outside = list(dict.fromkeys(v for op in pair for v in op.operands if v.owner_op not in pair))
    block = Block([v.type for v in outside])
    mapping: dict = dict(zip(outside, block.args))
    copies = [op.clone(mapping) for op in pair]
    for op in copies:
        block.append(op)
    if decomposed:
        decompose(copies[0] if isinstance(coll, AllGatherOp) else copies[1], bidirectional, unroll,
                  itertools.count(1), concatenate=concatenate)
        for p in [op for op in _walk(block) if isinstance(op, CollectivePermuteOp)]:
            split_permute(p)
    return block


def _walk(block: Block) -> list[Operation]:
    return [nested for op in block.ops for nested in op.walk()]


def _max_channel(module: Operation) -> int:
    handles = [h.handle for op in module.walk()
               if isinstance(h := op.properties.get("channel_handle"), ChannelHandle)]
    return max(handles, default=0)


@register_pass
class DecomposeCollectiveMatmulPass(Pass):
    """Turn all_gather -> dot_general and dot_general -> reduce_scatter into ring loops of
    partial dots and collective_permutes (see the module's doc)."""

    name = "decompose-collective-matmul"
    summary = "Overlap the all-gather / reduce-scatter of a matmul with its partial dots"
    mode = Option(str, "auto", "on: every match; off: none; auto: matches of at least threshold-bytes that the "
                  "cost model of `machine` finds faster", choices=("on", "off", "auto"))
    bidirectional = Option(bool, False, "send shards both ways around the ring: about half the steps")
    unroll = Option(bool, False, "two steps per loop iteration (an odd last step written out after the loop)")
    concatenate = Option(bool, False, "bidirectional all-gather loops: one dot per round of the two shards "
                         "concatenated")
    fuse = Option(bool, False, "one-way loops: an all-gather whose dot feeds a reduce-scatter's dot through "
                  "elementwise ops becomes one loop with it (each block through both dots as it arrives)")
    threshold_bytes = Option(int, 256 << 20, "auto mode: the smallest full-size operand to decompose")
    machine = Option(str, "h200", "auto mode: the machine the cost model prices, a preset name or a Machine JSON path "
                     "(from Python, a loom.sim Machine too)")

    def run(self, op: Operation) -> None:
        if self.mode == "off":
            self.mark_all_analyses_preserved()
            return
        self._machine: Machine | None = None
        self._decisions: dict[tuple, Decision] = {}
        if self.mode == "auto":
            try:
                self._machine = Machine.named(self.machine)
            except (OSError, ValueError) as err:
                raise ValueError(f"decompose-collective-matmul: machine={self.machine!r}: {err}") from None
        channels = itertools.count(_max_channel(op) + 1)
        hoisted: dict[tuple, Value] = {}
        changed = False
        taken: set[Operation] = set()  # reduce-scatters a fused loop took
        for coll in list(op.walk()):
            if coll in taken:
                continue
            if isinstance(coll, AllGatherOp):
                match = _match_all_gather(coll)
            elif isinstance(coll, ReduceScatterOp):
                match = _match_reduce_scatter(coll)
            else:
                continue
            if match is None:  # no dot_general next to it: not a candidate
                continue
            groups = _groups(coll)
            if isinstance(match, str):
                reason: str | None = match
            elif groups is None:
                reason = "its groups are not partition ids (flattened_ids mode) of two or more"
            else:
                reason = self._unprofitable(coll, match, groups)
            if reason is not None or isinstance(match, str) or groups is None:
                emit_remark(coll, f"not decomposed into a collective matmul: {reason}")
                continue
            fuse = self.fuse and not self.bidirectional and isinstance(coll, AllGatherOp)
            if fuse:  # auto mode: fused only where the reduce-scatter's loop would be made too
                chain = fusable(coll, match, groups)
                fuse = chain is not None and self._unprofitable(chain[1], _match_reduce_scatter(chain[1]),
                                                                groups) is None
            took = decompose(coll, self.bidirectional, self.unroll, channels, hoisted, self.concatenate, fuse)
            if took is not None:
                taken.add(took)
            changed = True
        if not changed:
            self.mark_all_analyses_preserved()

    def _unprofitable(self, coll: Operation, match: tuple, groups: list[list[int]]) -> str | None:
        """In auto mode, why not to decompose (XLA's size gate, then its inequality priced on
        `machine`), with the figures; None to decompose."""
        if self._machine is None:
            return None
        kind = "all_gather" if isinstance(coll, AllGatherOp) else "reduce_scatter"
        full = coll.results[0].type if kind == "all_gather" else coll.operands[0].type
        if _nbytes(full) < self.threshold_bytes:
            return f"its full-size operand has {_nbytes(full)} bytes, under threshold-bytes = {self.threshold_bytes}"
        dot = match[0]
        # equal pairs get equal decisions: priced once (a program repeats its blocks)
        key = (coll.name, str(coll.operands[0].type), str(full), str(coll.properties["replica_groups"]),
               str(coll.properties.get("all_gather_dim", coll.properties.get("scatter_dimension"))),
               *(str(v.type) for v in dot.operands), str(dot.properties["dot_dimension_numbers"]),
               tuple(v is coll.results[0] for v in dot.operands))
        if key not in self._decisions:
            self._decisions[key] = collective_matmul_decision(coll, dot, self._machine, self.bidirectional,
                                                              self.unroll, self.concatenate)
        decision = self._decisions[key]
        return None if decision.decompose else decision.reason


__all__ = ["DecomposeCollectiveMatmulPass", "decompose", "isolated_pair"]
