"""`loom.knn`: nearest-neighbour search at peak FLOP/s with TPU-KNN's approximate top-k.

    scores, indices = loom.knn.search(queries, database, k=10, metric="l2", recall_target=0.95)

    index = loom.knn.Index(dim=128, metric="cos")
    ids = index.add(vectors)                # no index structure: updates are immediate
    index.remove(ids[:10])
    scores, ids = index.search(queries, k=10)
    index.save("vectors.loomknn"); index = loom.knn.Index.load("vectors.loomknn")

    db = loom.device_put(vectors, NamedSharding(mesh, P("x", None)))   # sharded by rows
    scores, indices = loom.knn.search(queries, db, k=10)                # one SPMD program (loom.knn.sharded)
    index = loom.knn.ShardedIndex(dim=128, mesh=mesh)                   # an Index per shard (loom.knn.sharded_index)

The search never materialises the queries x database score matrix: the kernel of
`knn.fused_score_top_k` computes it tile by tile and keeps only a per-bin maximum
(see loom.backend.knn_kernels).
"""

from loom.knn.index import Index, IndexFileError
from loom.knn.search import METRICS, search
from loom.knn.sharded_index import ShardedIndex

__all__ = ["METRICS", "Index", "IndexFileError", "ShardedIndex", "search"]
