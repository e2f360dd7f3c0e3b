"""The collective ops (all_gather, all_reduce, reduce_scatter, all_to_all, collective_permute,
collective_broadcast) and the process ids (partition_id, replica_id), with the StableHLO spec's
constraints, result type inference and builders.

Processes are grouped by `replica_groups` (a `tensor<G x N x i64>`; empty: all processes) read
in the spec's mode (`mode`): `cross_replica` without a channel, `cross_partition` with one (or
`cross_replica_and_partition` for all_gather, all_reduce and reduce_scatter), and `flattened_ids`
when `use_global_device_ids` is set, as JAX's shard_map writes them. A group's size is known from
`replica_groups`, or from the module's `mhlo.num_replicas` / `mhlo.num_partitions` when it is
empty. jaxlib prints the collectives in the generic form and the process ids in their custom
form (`stablehlo.partition_id : tensor<ui32>`); loom does the same.
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Sequence

import numpy as np

from loom.dialects.stablehlo.attributes import ChannelHandle, i64_attr
from loom.dialects.stablehlo.base import StableHLOOp, build_region, reducer_types, scalar_tensor
from loom.dialects.stablehlo.properties import prop_int
from loom.dialects.stablehlo.types import (
    AnyTensor,
    I64Attr,
    ShapeError,
    as_ranked,
    attr_of,
    compatible,
    element_type,
    shape_text,
    with_element_type,
)
from loom.ir.attributes import UNIT, Attribute, DenseElementsAttr, IntegerAttr, Location, UnitAttr
from loom.ir.builder import Builder
from loom.ir.core import Operation, Region, Value
from loom.ir.opdef import Constraint, Pure, lookup_op, opt_prop, prop, region_def, result_def, var_operand, var_result
from loom.ir.opdef import operand as operand_def
from loom.ir.types import DYNAMIC, IntegerType, RankedTensorType, Type, i64

__all__ = ["AllGatherOp", "AllReduceOp", "AllToAllOp", "CollectiveBroadcastOp", "CollectivePermuteOp",
           "CollectiveReduceOp", "PartitionIdOp", "ReduceScatterOp", "ReplicaIdOp", "channel_handle_attr",
           "replica_groups_attr"]

UI32_SCALAR = RankedTensorType((), IntegerType(32, IntegerType.UNSIGNED))

I64Matrix = Constraint(lambda a: isinstance(a, DenseElementsAttr) and a.type.element_type is i64,
                       "64-bit signless integer elements attribute")
Unit = Constraint(lambda a: isinstance(a, UnitAttr), "unit attribute")
ChannelHandleAttr = attr_of(ChannelHandle)


def replica_groups_attr(groups: Sequence[Sequence[int]]) -> DenseElementsAttr:
    """`dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>` (groups of equal size; none: `tensor<0x0xi64>`)."""
    sizes = {len(g) for g in groups}
    if len(sizes) > 1:
        raise ShapeError(f"replica groups must have equal sizes, got {sorted(sizes)}")
    arr = np.array([list(g) for g in groups], dtype=np.int64).reshape(len(groups), sizes.pop() if sizes else 0)
    return DenseElementsAttr.get(arr, RankedTensorType(arr.shape, i64))


def channel_handle_attr(channel: int | ChannelHandle | None) -> ChannelHandle | None:
    """A channel handle from its number (a device-to-device channel, type 1, as JAX writes them)."""
    if channel is None or isinstance(channel, ChannelHandle):
        return channel
    return ChannelHandle(int(channel), 1)


def _matrix(props: dict[str, Attribute], name: str, what: str) -> np.ndarray:
    a = props.get(name)
    if not isinstance(a, DenseElementsAttr):
        raise ShapeError(f"requires attribute '{name}'")
    if a.type.rank != 2:
        raise ShapeError(f"{what} should be a rank 2 tensor, but it has rank {a.type.rank}")
    return a.to_numpy().astype(np.int64)


def _check_groups(props: dict[str, Attribute], equal_sizes: bool) -> np.ndarray:
    """The spec's (and MLIR's) checks of `replica_groups`; returns them. With `equal_sizes` False
    (all_reduce) groups may be padded with -1."""
    groups = _matrix(props, "replica_groups", "replica groups")
    if "use_global_device_ids" in props:
        if groups.size == 0:
            raise ShapeError("if `use_global_device_ids` is set, the replica groups cannot be empty")
        channel = props.get("channel_handle")
        if not isinstance(channel, ChannelHandle) or channel.handle <= 0:
            handle = channel.handle if isinstance(channel, ChannelHandle) else 0
            raise ShapeError(f"channel_id must be positive when useGlobalDeviceIds is set but got: {handle}")
    seen: set[int] = set()
    for i in groups.reshape(-1).tolist():
        if i == -1 and not equal_sizes:
            continue
        if i < 0:
            raise ShapeError(f"invalid replica id {i}")
        if i in seen:
            raise ShapeError(f"replica id #{i} seen more than once")
        seen.add(i)
    missing = next((i for i in range(len(seen)) if i not in seen), None)
    if missing is not None:
        raise ShapeError(f"replica id #{missing} not seen in replica groups")
    return groups


def _module_count(op: Operation, name: str) -> int | None:
    """`mhlo.num_replicas` / `mhlo.num_partitions` of the module holding `op`, if it says."""
    p = op.parent_op
    while p is not None:
        a = p.read_attributes().get(name)
        if isinstance(a, IntegerAttr):
            return a.value
        p = p.parent_op
    return None


class _Collective(StableHLOOp):
    """A collective: its processes are named in the mode its channel gives."""

    # Whether a channel means cross_replica_and_partition (all_gather, all_reduce, reduce_scatter)
    # rather than cross_partition (the others).
    replicas_and_partitions = False

    @classmethod
    def mode_of(cls, properties: dict[str, Attribute]) -> str:
        channel = properties.get("channel_handle")
        if not isinstance(channel, ChannelHandle) or channel.handle <= 0:
            return "cross_replica"
        if "use_global_device_ids" in properties:
            return "flattened_ids"
        return "cross_replica_and_partition" if cls.replicas_and_partitions else "cross_partition"

    @property
    def mode(self) -> str:
        """How the op's ids (`replica_groups`, `source_target_pairs`) name processes:
        `cross_replica`, `cross_partition`, `cross_replica_and_partition` or `flattened_ids` (the
        spec's process-group modes)."""
        return self.mode_of(self.properties)


class _Grouped(_Collective):
    """A collective whose processes are grouped by `replica_groups`."""

    @property
    def groups(self) -> list[list[int]]:
        """`replica_groups` as lists of ids (padding -1 dropped)."""
        a = self.properties["replica_groups"]
        return [[i for i in g if i != -1] for g in a.to_numpy().astype(np.int64).tolist()]

    def group_size(self) -> int | None:
        """The number of processes in each group, or None where the module does not say how many
        replicas or partitions it has."""
        a = self.read_properties().get("replica_groups")
        n = a.type.shape[1] if isinstance(a, DenseElementsAttr) and a.type.rank == 2 else 0
        mode = self.mode
        if mode == "flattened_ids":
            return n
        replicas = n or _module_count(self, "mhlo.num_replicas")
        if mode == "cross_replica":
            return replicas
        partitions = _module_count(self, "mhlo.num_partitions")
        if mode == "cross_partition":
            return n or partitions
        return replicas * partitions if replicas is not None and partitions is not None else None


def _scaled_dim(t: RankedTensorType, dim: int, factor: int | None, divide: bool = False) -> RankedTensorType | None:
    if factor is None:
        return None
    shape = list(t.shape)
    if shape[dim] != DYNAMIC:
        shape[dim] = shape[dim] // factor if divide else shape[dim] * factor
    return RankedTensorType(tuple(shape), t.element_type, t.encoding)


def _check_dim(dim: int, rank: int, what: str) -> None:
    if not 0 <= dim < rank:
        raise ShapeError(f"{what} {dim} is out of bounds for rank {rank}")


def _static_group_size(cls: type[_Collective], props: dict[str, Attribute]) -> int | None:
    """The group size `replica_groups` gives by itself (None: it takes the module's replica or
    partition count)."""
    a = props.get("replica_groups")
    if cls.mode_of(props) == "cross_replica_and_partition":
        return None
    return a.type.shape[1] if isinstance(a, DenseElementsAttr) and a.type.rank == 2 and a.type.shape[1] else None


def _reducer(element: Type, reducer: str | Callable[[Builder, Value, Value], Value]) -> Region:
    """A reduction body over rank-0 tensors of `element`: a StableHLO binary op's name (`add`,
    `maximum`, ...) or `reducer(builder, a, b) -> value`."""
    t = scalar_tensor(element)
    if isinstance(reducer, str):
        op_class = lookup_op(f"stablehlo.{reducer}")
        if op_class is None:
            raise ValueError(f"no op stablehlo.{reducer} to reduce with")
        return build_region([t, t], lambda b, args: op_class.insert(b, args).results)
    return build_region([t, t], lambda b, args: [reducer(b, args[0], args[1])])


class AllGatherOp(_Grouped):
    """Concatenates each operand of the processes of a group along `all_gather_dim`, in group
    order: result dimension = operand dimension x group size."""

    name = "stablehlo.all_gather"
    operands_ = var_operand(AnyTensor)
    all_gather_dim = prop(I64Attr)
    replica_groups = prop(I64Matrix)
    channel_handle = opt_prop(ChannelHandleAttr)
    use_global_device_ids = opt_prop(Unit)
    results_ = var_result(AnyTensor)
    replicas_and_partitions = True

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        _check_groups(properties, equal_sizes=True)
        dim = prop_int(properties, "all_gather_dim")
        for t in operand_types:
            t = as_ranked(t, "operand")
            _check_dim(dim, t.rank, "all_gather_dim")
            if t.shape[dim] == 0:
                raise ShapeError("dimension size of operand at 'all_gather_dim' cannot be zero")
        n = _static_group_size(cls, properties)
        if n is None:
            return None  # the group size comes from the module: checked in check_types
        return [_scaled_dim(t, dim, n) for t in operand_types]

    def check_types(self) -> None:
        if len(self.operands) != len(self.results):
            raise ShapeError(f"has {len(self.operands)} operands but {len(self.results)} results")
        dim, n = self.all_gather_dim.value, self.group_size()
        for x, r in zip(self.operand_types, self.result_types):
            r = as_ranked(r, "result")
            if r.rank != x.rank or r.element_type is not x.element_type:
                raise ShapeError(f"operand '{x}' and result '{r}' must have the same rank and element type")
            expected = _scaled_dim(x, dim, n)
            if expected is not None and not compatible(expected, r):
                raise ShapeError(f"result must be '{expected}' (dimension {dim} times the group size {n}), "
                                 f"but got '{r}'")
            if not all(a == b or DYNAMIC in (a, b) for i, (a, b) in enumerate(zip(x.shape, r.shape)) if i != dim):
                raise ShapeError("operand and result should have the same shape except for the dimension size at "
                                 "'all_gather_dim'")
            if DYNAMIC not in (x.shape[dim], r.shape[dim]) and r.shape[dim] % x.shape[dim]:
                raise ShapeError(f"result gather dimension has size {r.shape[dim]}, expected to be a multiple of "
                                 f"operand gather dimension size {x.shape[dim]}")

    @classmethod
    def build(cls, builder: Builder | None, operands: Sequence[Value], all_gather_dim: int,
              replica_groups: Sequence[Sequence[int]], channel_handle: int | ChannelHandle | None = None,
              use_global_device_ids: bool = False, result_types: Sequence[Type] | None = None,
              location: Location | None = None) -> Operation:
        """Result types are inferred from non-empty `replica_groups`, except with a channel but
        no global device ids (then the group spans every partition: give `result_types`)."""
        props = {"all_gather_dim": i64_attr(all_gather_dim), "replica_groups": replica_groups_attr(replica_groups),
                 "channel_handle": channel_handle_attr(channel_handle),
                 "use_global_device_ids": UNIT if use_global_device_ids else None}
        return cls.insert(builder, list(operands), props, result_types, location=location)


class AllReduceOp(_Grouped):
    """Reduces each operand elementwise over the processes of a group with `computation`; every
    process gets the result. Groups may have different sizes (padded with -1)."""

    name = "stablehlo.all_reduce"
    operands_ = var_operand(AnyTensor)
    replica_groups = prop(I64Matrix)
    channel_handle = opt_prop(ChannelHandleAttr)
    use_global_device_ids = opt_prop(Unit)
    results_ = var_result(AnyTensor)
    computation = region_def()
    replicas_and_partitions = True

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        _check_groups(properties, equal_sizes=False)
        if not regions:
            return None
        results = []
        for t in operand_types:
            (acc,) = reducer_types(regions[0], "computation", [element_type(t)])
            results.append(with_element_type(t, acc))
        return results

    @classmethod
    def build(cls, builder: Builder | None, operands: Sequence[Value], replica_groups: Sequence[Sequence[int]],
              reducer: str | Callable[[Builder, Value, Value], Value] = "add",
              channel_handle: int | ChannelHandle | None = None, use_global_device_ids: bool = False,
              location: Location | None = None) -> Operation:
        """`reducer`: a StableHLO binary op's name (`add`, `maximum`, `minimum`, ...) or
        `reducer(builder, a, b) -> value` over rank-0 tensors of the operands' element type."""
        props = {"replica_groups": replica_groups_attr(replica_groups),
                 "channel_handle": channel_handle_attr(channel_handle),
                 "use_global_device_ids": UNIT if use_global_device_ids else None}
        region = _reducer(element_type(operands[0].type), reducer)
        return cls.insert(builder, list(operands), props, regions=[region], location=location)


class CollectiveReduceOp(AllReduceOp):
    """Reduces each data operand elementwise over the processes of a group with `computation`;
    only the group's root gets the result, the others (and processes in no group) zeros. The root
    is the group's first process, or, with `has_dynamic_root`, the one at the index the last
    operand (a `tensor<Nxi32>`, one index per data operand) gives."""

    name = "stablehlo.collective_reduce"
    has_dynamic_root = opt_prop(Unit)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        _check_groups(properties, equal_sizes=True)
        data = list(operand_types)
        if "has_dynamic_root" in properties:
            if not data:
                raise ShapeError("has_dynamic_root needs a last operand with the root indices")
            roots = as_ranked(data.pop(), "the root indices")
            if roots.rank != 1 or roots.shape[0] not in (len(data), DYNAMIC):
                raise ShapeError(f"the root indices must be a 1-dimensional tensor of {len(data)} elements (one "
                                 f"per data operand), got '{roots}'")
        return super().infer_result_types(data, properties, regions)


class ReduceScatterOp(_Grouped):
    """Reduces the operand over the processes of a group with `computation`, splits the result
    along `scatter_dimension` into group-size parts and gives process i of the group part i."""

    name = "stablehlo.reduce_scatter"
    operand = operand_def(AnyTensor)
    scatter_dimension = prop(I64Attr)
    replica_groups = prop(I64Matrix)
    channel_handle = opt_prop(ChannelHandleAttr)
    use_global_device_ids = opt_prop(Unit)
    result = result_def(AnyTensor)
    computation = region_def()
    replicas_and_partitions = True

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        _check_groups(properties, equal_sizes=True)
        x = as_ranked(operand_types[0], "operand")
        dim = prop_int(properties, "scatter_dimension")
        _check_dim(dim, x.rank, "scatter_dimension")
        acc = reducer_types(regions[0], "computation", [x.element_type])[0] if regions else x.element_type
        n = _static_group_size(cls, properties)
        if n is None:
            return None
        if x.shape[dim] != DYNAMIC and x.shape[dim] % n:
            raise ShapeError(f"operand scatter dimension has size {x.shape[dim]}, expected to be a multiple of the "
                             f"group size {n}")
        return [with_element_type(_scaled_dim(x, dim, n, divide=True), acc)]

    def check_types(self) -> None:
        x, r = self.operand.type, as_ranked(self.result.type, "result")
        dim, n = self.scatter_dimension.value, self.group_size()
        if r.rank != x.rank:
            raise ShapeError("operand and result should have same rank")
        if 0 in (x.shape[dim], r.shape[dim]):
            raise ShapeError("operand and result dimension sizes at scatter_dimension cannot be zero")
        if DYNAMIC not in (x.shape[dim], r.shape[dim]):
            if x.shape[dim] % r.shape[dim]:
                raise ShapeError(f"operand scatter dimension has size {x.shape[dim]}, expected to be a multiple of "
                                 f"result scatter dimension size {r.shape[dim]}")
            if n is not None and x.shape[dim] != r.shape[dim] * n:
                raise ShapeError(f"operand scatter dimension has size {x.shape[dim]}, expected the result's "
                                 f"{r.shape[dim]} times the group size {n}")
        for i, (a, b) in enumerate(zip(x.shape, r.shape)):
            if i != dim and a != b and DYNAMIC not in (a, b):
                raise ShapeError(f"non scatter dimensions should be same for operand ({a}) and result ({b})")

    @classmethod
    def build(cls, builder: Builder | None, operand: Value, scatter_dimension: int,
              replica_groups: Sequence[Sequence[int]], reducer: str | Callable[[Builder, Value, Value], Value] = "add",
              channel_handle: int | ChannelHandle | None = None, use_global_device_ids: bool = False,
              result_type: Type | None = None, location: Location | None = None) -> Operation:
        """Like AllReduceOp.build; the result type is inferred as AllGatherOp.build's are."""
        props = {"scatter_dimension": i64_attr(scatter_dimension),
                 "replica_groups": replica_groups_attr(replica_groups),
                 "channel_handle": channel_handle_attr(channel_handle),
                 "use_global_device_ids": UNIT if use_global_device_ids else None}
        region = _reducer(element_type(operand.type), reducer)
        return cls.insert(builder, [operand], props, None if result_type is None else [result_type],
                          regions=[region], location=location)


class AllToAllOp(_Grouped):
    """Splits each operand along `split_dimension` into `split_count` parts, sends part i to the
    i-th process of the group and concatenates what it receives along `concat_dimension`."""

    name = "stablehlo.all_to_all"
    operands_ = var_operand(AnyTensor)
    split_dimension = prop(I64Attr)
    concat_dimension = prop(I64Attr)
    split_count = prop(I64Attr)
    replica_groups = prop(I64Matrix)
    channel_handle = opt_prop(ChannelHandleAttr)
    results_ = var_result(AnyTensor)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        groups = _check_groups(properties, equal_sizes=True)
        split, concat = prop_int(properties, "split_dimension"), prop_int(properties, "concat_dimension")
        count = prop_int(properties, "split_count")
        if count <= 0:
            raise ShapeError(f"split_count must be positive, but got {count}")
        if groups.shape[0] == 0 or groups.shape[1] != count:
            raise ShapeError(f"group size of replica_groups must be {count}")
        results = []
        for t in operand_types:
            t = as_ranked(t, "operand")
            _check_dim(split, t.rank, "split_dimension")
            _check_dim(concat, t.rank, "concat_dimension")
            shape = list(t.shape)
            if shape[split] != DYNAMIC and shape[split] % count:
                raise ShapeError(f"split dimension has size {shape[split]}, expected to be a multiple of split_count "
                                 f"{count}")
            if shape[split] != DYNAMIC:
                shape[split] //= count
            if shape[concat] != DYNAMIC:
                shape[concat] *= count
            results.append(RankedTensorType(tuple(shape), t.element_type, t.encoding))
        return results

    @classmethod
    def build(cls, builder: Builder | None, operands: Sequence[Value], split_dimension: int, concat_dimension: int,
              split_count: int, replica_groups: Sequence[Sequence[int]],
              channel_handle: int | ChannelHandle | None = None, location: Location | None = None) -> Operation:
        props = {"split_dimension": i64_attr(split_dimension), "concat_dimension": i64_attr(concat_dimension),
                 "split_count": i64_attr(split_count), "replica_groups": replica_groups_attr(replica_groups),
                 "channel_handle": channel_handle_attr(channel_handle)}
        return cls.insert(builder, list(operands), props, location=location)


class CollectivePermuteOp(_Collective):
    """Sends the operand of each source process to its target (`source_target_pairs`, N x 2);
    a process no pair targets gets zeros."""

    name = "stablehlo.collective_permute"
    operand = operand_def(AnyTensor)
    source_target_pairs = prop(I64Matrix)
    channel_handle = opt_prop(ChannelHandleAttr)
    result = result_def(AnyTensor)

    @property
    def pairs(self) -> list[tuple[int, int]]:
        return [(int(s), int(t)) for s, t in self.source_target_pairs.to_numpy().reshape(-1, 2)]

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        pairs = _matrix(properties, "source_target_pairs", "source_target_pairs")
        if pairs.shape[1] != 2:
            raise ShapeError(f"expect source_target_pairs attribute of shape (N, 2), but got {shape_text(pairs.shape)}")
        if (pairs < 0).any():
            raise ShapeError("replica ids in source_target_pairs must be >= 0")
        for column, what in ((0, "sources"), (1, "targets")):
            ids = pairs[:, column].tolist()
            counts = collections.Counter(ids)  # linear: meshes of thousands of devices
            repeated = next((i for i in ids if counts[i] > 1), None)
            if repeated is not None:
                raise ShapeError(f"duplicate {what} not allowed: {repeated}")
        return [operand_types[0]]

    @classmethod
    def build(cls, builder: Builder | None, operand: Value, source_target_pairs: Sequence[tuple[int, int]],
              channel_handle: int | ChannelHandle | None = None, location: Location | None = None) -> Operation:
        arr = np.array(list(source_target_pairs), dtype=np.int64).reshape(-1, 2)
        props = {"source_target_pairs": DenseElementsAttr.get(arr, RankedTensorType(arr.shape, i64)),
                 "channel_handle": channel_handle_attr(channel_handle)}
        return cls.insert(builder, [operand], props, location=location)


class CollectiveBroadcastOp(_Grouped):
    """Each process of a group gets the operand of the group's first process."""

    name = "stablehlo.collective_broadcast"
    operand = operand_def(AnyTensor)
    replica_groups = prop(I64Matrix)
    channel_handle = opt_prop(ChannelHandleAttr)
    result = result_def(AnyTensor)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        groups = _matrix(properties, "replica_groups", "replica groups")
        ids = groups.reshape(-1).tolist()
        if any(i < 0 for i in ids):
            raise ShapeError(f"replica_groups values must be positive, but was given {min(ids)}")
        repeated = next((i for i in ids if ids.count(i) > 1), None)
        if repeated is not None:
            raise ShapeError(f"replica id #{repeated} seen more than once")
        return [operand_types[0]]

    @classmethod
    def build(cls, builder: Builder | None, operand: Value, replica_groups: Sequence[Sequence[int]],
              channel_handle: int | ChannelHandle | None = None, location: Location | None = None) -> Operation:
        props = {"replica_groups": replica_groups_attr(replica_groups),
                 "channel_handle": channel_handle_attr(channel_handle)}
        return cls.insert(builder, [operand], props, location=location)


class _ProcessId(StableHLOOp):
    result = result_def(Constraint(lambda t: t is UI32_SCALAR, "0D tensor of 32-bit unsigned integer values"))
    traits = (Pure,)
    assembly_format = "attr-dict `:` type(results)"

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        return [UI32_SCALAR]

    @classmethod
    def build(cls, builder: Builder | None, location: Location | None = None) -> Operation:
        return cls.insert(builder, [], {}, location=location)


class PartitionIdOp(_ProcessId):
    """The partition id of the current process (`tensor<ui32>`)."""

    name = "stablehlo.partition_id"


class ReplicaIdOp(_ProcessId):
    """The replica id of the current process (`tensor<ui32>`)."""

    name = "stablehlo.replica_id"
