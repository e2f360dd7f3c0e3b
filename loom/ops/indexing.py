"""Indexing ops: gather, scatter, dynamic_slice, dynamic_update_slice.

Kernels in `loom.backend.kernels_numpy` / `kernels_torch` (scatter's code generation in
`loom.backend.compiled`), derivatives and batching in `loom.transforms.indexing_rules` (scatter
keeps an explicit VJP: transposition cannot serve a scatter that overwrites). What they lack is
declared here.
"""

from __future__ import annotations

from loom.ops.registry import declare, unsupported

declare(["stablehlo.dynamic_gather", "stablehlo.torch_index_select"],
        unsupported("parsed and printed only: loom's front end emits stablehlo.gather"))
