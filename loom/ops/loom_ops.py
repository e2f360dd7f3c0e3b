"""loom's own dialects: `ad` (stop_gradient, custom_jvp, custom_vjp), `stack` (the loop stacks of
reverse-mode while loops) and `knn` (fused distance + top-k).

Kernels in `loom.backend.ad_kernels` / `stack_kernels` / `knn_kernels`, rules in
`loom.transforms.autodiff` / `batching` / `knn_rules`. What they lack is declared here.
"""

from __future__ import annotations

from loom.ops.registry import declare, unsupported

declare(["ad.stop_gradient", "ad.custom_jvp", "ad.custom_vjp"],
        unsupported("identities at run time: the numpy kernel runs on tensors as is"), tables=("torch",))
declare("knn.approx_top_k", unsupported("runs its numpy kernel on the tensors' values"), tables=("torch",))
declare("knn.fused_score_top_k", unsupported("made by the knn fusion pass after differentiation and batching"),
        tables=("torch", "jvp", "vjp", "batching"))
declare(["stack.new", "stack.companion", "stack.push", "stack.pop"],
        unsupported("made by reverse mode for while loops: forward mode never sees them"), tables=("jvp",))
declare(["stack.new", "stack.companion"],
        unsupported("made by reverse mode inside a loop's body; vmap batches the pushed values"), tables=("batching",))
