"""Passes over the IR. Importing this package registers them: canonicalize, cse, dce,
symbol-dce, inline."""

from loom.transforms.canonicalize import CanonicalizerPass, canonicalization_patterns
from loom.transforms.cse import CSEPass, eliminate_common_subexpressions
from loom.transforms.dce import DCEPass, eliminate_dead_code
from loom.transforms.inline import InlinerPass
from loom.transforms.symbol_dce import SymbolDCEPass

__all__ = ["CSEPass", "CanonicalizerPass", "DCEPass", "InlinerPass", "SymbolDCEPass", "canonicalization_patterns",
           "eliminate_common_subexpressions", "eliminate_dead_code"]

import loom.transforms.collective_matmul  # noqa: E402, F401  (decompose-collective-matmul)
import loom.transforms.knn_fusion  # noqa: E402, F401  (registers the knn-fusion pass)
import loom.transforms.latency_hiding  # noqa: E402, F401  (schedule-latency-hiding)
import loom.transforms.mpmd_partition  # noqa: E402, F401  (mpmd-partition)
import loom.transforms.remat_rules  # noqa: E402, F401  (loom.checkpoint's policies and recomputation)
import loom.transforms.sharding_propagation  # noqa: E402, F401  (sharding-propagation)
import loom.transforms.spmd_partition  # noqa: E402, F401  (spmd-partition)
