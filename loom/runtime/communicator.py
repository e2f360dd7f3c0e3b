"""The interface between the collective kernels and a transport.

A per-device program (one partition of an SPMD program) runs with a `Communicator` and its own
partition id installed by `spmd_context`; the kernels of `stablehlo.partition_id` and of the
collectives read them with `current()`. Groups are lists of partition ids (already resolved from
`replica_groups` by the kernel); every member of a group calls the same method with its own
operand, and each gets its own result. Implementations: threads in one process
(loom.runtime.local) and processes on torch.distributed (loom.runtime.distributed).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import NamedTuple, Protocol

import numpy as np

REDUCTIONS = ("sum", "prod", "max", "min", "and", "or", "xor")
# The numpy function of each reduction (and, or, xor are bitwise; on booleans, logical).
REDUCTION_UFUNCS = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum,
                    "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}


class Communicator(Protocol):
    """Collectives among `num_partitions` partitions. `me` is the caller's partition id; every
    call blocks until its result is ready, and fails (never hangs) when a peer is gone, with an
    error naming it."""

    num_partitions: int

    def all_reduce(self, me: int, x: np.ndarray, group: Sequence[int], reduction: str,
                   in_place: bool = False) -> np.ndarray:
        """Elementwise reduction (`REDUCTIONS`) of the group's operands. `in_place`: the program
        never reads `x` again, so the communicator may write the result into it and return it
        (where it would otherwise copy it first)."""
        ...

    def all_gather(self, me: int, x: np.ndarray, group: Sequence[int], dim: int) -> np.ndarray:
        """The group's operands concatenated along `dim`, in group order."""
        ...

    def reduce_scatter(self, me: int, x: np.ndarray, group: Sequence[int], dim: int, reduction: str) -> np.ndarray:
        """The reduction of the group's operands, split along `dim` into len(group) pieces; piece
        i to the group's i-th member."""
        ...

    def all_to_all(self, me: int, x: np.ndarray, group: Sequence[int], split_dim: int, concat_dim: int) -> np.ndarray:
        """Piece j of each member's operand (split along `split_dim`) goes to member j, which
        concatenates the pieces it receives along `concat_dim`, in group order."""
        ...

    def collective_permute(self, me: int, x: np.ndarray, pairs: Sequence[tuple[int, int]]) -> np.ndarray:
        """Each (source, target) pair sends source's operand to target; a partition that is no
        pair's target gets zeros."""
        ...

    def collective_broadcast(self, me: int, x: np.ndarray, group: Sequence[int]) -> np.ndarray:
        """The operand of the group's first member, on every member."""
        ...

    def collective_permute_start(self, me: int, x: np.ndarray, pairs: Sequence[tuple[int, int]]) -> Transfer:
        """`collective_permute` issued without waiting: returns at once; the transfer's `wait()`
        gives the result. Every partition starts its transfers in the same order."""
        ...


class Transfer(Protocol):
    """A transfer in flight (`comm.collective_permute_start`'s run-time value)."""

    def wait(self) -> np.ndarray:
        """Block until the transfer is done (bounded by the communicator's timeout); its result."""
        ...


class Completed:
    """A transfer that finished when it was issued (a communicator without asynchronous ones)."""

    __slots__ = ("value",)

    def __init__(self, value: np.ndarray) -> None:
        self.value = value

    def wait(self) -> np.ndarray:
        return self.value


class CollectiveError(RuntimeError):
    """A collective that cannot complete: a peer failed, finished without joining, called another
    collective, or did not arrive in time. `partition` is the partition at fault (None when
    unknown)."""

    def __init__(self, message: str, partition: int | None = None) -> None:
        super().__init__(message)
        self.partition = partition


class PartitionError(RuntimeError):
    """A partition of an SPMD run failed; `partition` is its id (the original error is the
    `__cause__`)."""

    def __init__(self, message: str, partition: int) -> None:
        super().__init__(message)
        self.partition = partition


class SPMDContext(NamedTuple):
    """The partition a thread is running, and how it reaches the others."""

    partition_id: int
    num_partitions: int
    communicator: Communicator


_LOCAL = threading.local()


def current() -> SPMDContext:
    """The SPMD context of this thread; outside one, a single partition with no peers."""
    ctx = getattr(_LOCAL, "context", None)
    if ctx is None:
        raise RuntimeError("a collective or partition_id ran outside a partitioned run; run the program "
                           "with loom.jit(..., in_shardings=...) or a mesh runtime")
    return ctx


class spmd_context:  # noqa: N801 (used as a function: `with spmd_context(p, comm):`)
    """Run the body as partition `partition_id` of `communicator`'s partitions (per thread). A class
    rather than a generator: every call of a partitioned program enters one, and this takes fewer
    calls."""

    __slots__ = ("ctx", "prev")

    def __init__(self, partition_id: int, communicator: Communicator) -> None:
        self.ctx = SPMDContext(partition_id, communicator.num_partitions, communicator)

    def __enter__(self) -> SPMDContext:
        self.prev = getattr(_LOCAL, "context", None)
        _LOCAL.context = self.ctx
        return self.ctx

    def __exit__(self, *exc: object) -> None:
        _LOCAL.context = self.prev
