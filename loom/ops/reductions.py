"""Reductions: reduce, reduce_window, select_and_scatter, sort, top_k.

Their code generation is in `loom.backend.compiled` (region bodies of one elementwise op reduce
with numpy's ufuncs), their derivatives in `loom.transforms.autodiff` / `forward_ad` /
`indexing_rules` (sums are linear; max/min split the cotangent among ties; products and windows
have their own rules), their batching in `loom.transforms.batching`. What they lack is declared
here.
"""

from __future__ import annotations

from loom.ops.registry import declare, unsupported

declare("stablehlo.select_and_scatter",
        unsupported("the VJP of max pooling: loom does not differentiate or batch its own backward pass"),
        tables=("jvp", "vjp", "batching"))
