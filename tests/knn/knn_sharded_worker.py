"""What each process of the gloo tests in tests/knn/test_knn_sharded.py runs: a database sharded by
rows over a mesh of processes (loom.knn.sharded.ShardedDatabase holding only this process's shard),
queries replicated or split over the mesh, searched by the partitioned program, one partition
per process. Started by tests/runtime/distributed_worker.py's launcher, which bounds every wait."""

from __future__ import annotations

from typing import Any

import numpy as np
from runtime.distributed_worker import launch as distributed_launch

ROWS, DIM, QUERIES, K = 1001, 16, 37, 5  # 1001 rows: uneven shards over 2 and 4 processes

# (mesh shape, axis names, the queries' split) per world size; the database is split over "x"
CASES: dict[int, list[tuple[tuple[int, ...], tuple[str, ...], tuple]]] = {
    2: [((2,), ("x",), ("x",)), ((2,), ("x",), ())],
    4: [((4,), ("x",), ("x",)),             # queries split over the database's axis
        ((2, 2), ("d", "x"), ("d",)),        # data parallel: queries over "d", database over "x"
        ((2, 2), ("d", "x"), (("d", "x"),)),
        ((2, 2), ("d", "x"), ()),            # replicated
        ],
}


def data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(23)
    return rng.standard_normal((ROWS, DIM)).astype(np.float32), rng.standard_normal((QUERIES, DIM)).astype(np.float32)


def scenario_search(rank: int, world: int) -> dict[str, Any]:
    """Per case and recall target, the global (scores, ids) this process got."""
    import loom
    from loom.knn.sharded import ShardedDatabase
    from loom.runtime.distributed import shard_index
    from loom.sharding import NamedSharding, P

    db, q = data()
    out: dict[str, Any] = {}
    for shape, names, q_axes in CASES[world]:
        mesh = loom.make_mesh(shape, names, devices=list(range(world)))  # partition p runs in rank p
        rows = range(ROWS)[shard_index(NamedSharding(mesh, P("x", None)), (ROWS, DIM), rank)[0]]
        count, per = mesh.shape["x"], -(-ROWS // mesh.shape["x"])
        held = ShardedDatabase(mesh, ("x",), {rows.start // per: db[rows.start:rows.stop]}, "l2", count=count,
                               rows=per)
        axes = tuple(a for spec in q_axes for a in (spec if isinstance(spec, tuple) else (spec,)))
        for recall_target in (1.0, 0.9):
            scores, shard, row = held.search(q, K, recall_target, query_axes=axes)
            out[f"{shape} {q_axes} {recall_target}"] = (scores, shard * per + row)
    return out


SCENARIOS = {"search": scenario_search}


def launch(scenario: str, world: int, **kwargs: Any) -> dict[int, tuple]:
    """`distributed_worker.launch` of one of this module's SCENARIOS."""
    return distributed_launch(scenario, world, module="knn_sharded_worker", **kwargs)
