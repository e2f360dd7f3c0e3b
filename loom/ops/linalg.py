"""Linear algebra and convolution: dot_general, convolution, fft, and the ops loom lacks.

Kernels in `loom.backend.kernels_numpy` / `kernels_torch`, derivatives in
`loom.transforms.autodiff` / `forward_ad` / `indexing_rules` (dot_general and convolution are
bilinear: each operand's cotangent is the transposed product), batching in
`loom.transforms.batching` / `indexing_rules`. What they lack is declared here.
"""

from __future__ import annotations

from loom.ops.registry import declare, unsupported

declare("stablehlo.fft", unsupported("fft is run, not differentiated or batched yet"),
        tables=("jvp", "vjp", "batching"))
declare(["stablehlo.dot", "stablehlo.einsum", "stablehlo.unary_einsum", "stablehlo.dynamic_conv",
         "stablehlo.cholesky", "stablehlo.triangular_solve", "stablehlo.batch_norm_grad",
         "stablehlo.batch_norm_inference", "stablehlo.batch_norm_training", "chlo.ragged_dot"],
        unsupported("parsed and printed only: loom's front end lowers to dot_general, convolution and "
                    "elementwise ops"))
declare(["stablehlo.uniform_quantize", "stablehlo.uniform_dequantize"],
        unsupported("quantized types are parsed and printed only"))
