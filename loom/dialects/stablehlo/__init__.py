"""The StableHLO dialect: loom's tensor op set, with the op names, attributes and semantics of the
StableHLO spec (https://github.com/openxla/stablehlo/blob/main/docs/spec.md), so that programs
exported by JAX parse, verify and print back byte for byte.

Structured attributes (interned, immutable; each prints exactly as MLIR prints it; fields are
plain Python values, dimension lists are tuples of ints):

- `DotDimensionNumbers` `#stablehlo.dot<...>`: `lhs_batching_dimensions`,
  `rhs_batching_dimensions`, `lhs_contracting_dimensions`, `rhs_contracting_dimensions`.
- `GatherDimensionNumbers` `#stablehlo.gather<...>`: `offset_dims`, `collapsed_slice_dims`,
  `operand_batching_dims`, `start_indices_batching_dims`, `start_index_map`, `index_vector_dim`
  (an int).
- `ScatterDimensionNumbers` `#stablehlo.scatter<...>`: `update_window_dims`,
  `inserted_window_dims`, `input_batching_dims`, `scatter_indices_batching_dims`,
  `scatter_dims_to_operand_dims`, `index_vector_dim` (an int).
- `ConvDimensionNumbers` `#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>`:
  `input_batch_dimension`, `input_feature_dimension`, `input_spatial_dimensions`,
  `kernel_input_feature_dimension`, `kernel_output_feature_dimension`, `kernel_spatial_dimensions`,
  `output_batch_dimension`, `output_feature_dimension`, `output_spatial_dimensions`.
- `OutputOperandAlias` `#stablehlo.output_operand_alias<...>`: `output_tuple_indices`,
  `operand_index`, `operand_tuple_indices`.
- `ChannelHandle` `#stablehlo.channel_handle<handle = 1, type = 1>`: `handle`, `type` (ints).
- `ResultAccuracy` `#stablehlo.result_accuracy<...>`: `atol`, `rtol` (floats), `ulps` (int),
  `mode` (a `ResultAccuracyModeAttr`).
- Enumerations, each with `.value` (the keyword, a str) and `ALLOWED` (the legal keywords):
  `ComparisonDirectionAttr` `#stablehlo<comparison_direction LT>` (EQ NE GE GT LE LT),
  `ComparisonTypeAttr` `#stablehlo<comparison_type FLOAT>` (NOTYPE FLOAT TOTALORDER SIGNED UNSIGNED),
  `PrecisionAttr` `#stablehlo<precision DEFAULT>` (DEFAULT HIGH HIGHEST),
  `RngAlgorithmAttr` `#stablehlo<rng_algorithm THREE_FRY>` (DEFAULT THREE_FRY PHILOX),
  `RngDistributionAttr` `#stablehlo<rng_distribution UNIFORM>` (UNIFORM NORMAL),
  `TransposeAttr` `#stablehlo<transpose NO_TRANSPOSE>` (TRANSPOSE_INVALID NO_TRANSPOSE TRANSPOSE ADJOINT),
  `FftTypeAttr` `#stablehlo<fft_type FFT>` (FFT IFFT RFFT IRFFT),
  `ResultAccuracyModeAttr` `#stablehlo.result_accuracy_mode<DEFAULT>` (DEFAULT HIGHEST TOLERANCE).
  Build them with `ComparisonDirectionAttr("LT")`, or `enum_attr("comparison_direction", "LT")`.

Any other `#stablehlo...` attribute (`#stablehlo.bounds<...>`, dot algorithms)
stays an opaque `DialectAttr`. `TOKEN` is the `!stablehlo.token` type.

Ops are `StableHLOOp` subclasses named as in StableHLO (`AddOp` is `stablehlo.add`), with MLIR's
operand and property names (`comparison_direction`, `broadcast_dimensions` as `array<i64: ...>`,
...). Each family has `infer_result_types(operand_types, properties, regions)`, which checks the
spec's constraints (raising `ShapeError`) and returns the result types; the verifier runs it and
compares, builders use it. `Op.build(builder, ...)` creates and inserts an op; module functions
(`add(builder, lhs, rhs)`, `reduce(builder, inputs, inits, dims, body)`, ...) return its values
(names clashing with Python get a trailing underscore: `abs_`, `and_`, `slice_`, `while_`, ...).
Folders constant-fold small tensors (at most `FOLD_LIMIT` elements, or splats) where the spec's
result is unambiguous, and remove no-op reshapes, transposes, broadcasts, converts and slices,
`x + 0`, `x * 1`, ...; `materialize_constant` makes the `stablehlo.constant` ops they need.
The collectives (`collectives.py`: all_gather, all_reduce, reduce_scatter, all_to_all,
collective_permute, collective_broadcast, partition_id, replica_id) check the spec's constraints
on `replica_groups`, `source_target_pairs`, `channel_handle` (a `ChannelHandle`) and shapes, and
have `build` classmethods. Ops loom parses and prints but does not model (infeed/outfeed,
send/recv, batch norm, ...) are registered with loose definitions (`loose.py`).

Each op's custom (pretty) form, the text `jax.jit(f).lower(x).as_text()` shows, is its
`assembly_format` (with the shared directives of StableHLO's AssemblyFormat.cpp, registered in
`assembly.py` as `custom<...>`), or `parse_custom`/`print_custom` where the syntax is not
declarative (constant, reduce, while). Ops that MLIR prints in the generic form (gather, scatter,
sort, case, ...) have neither.

The package, lowest layer first (a module imports only modules above it in this list, so the
helper layers never import an op family):

- `attributes`: enum and structured attributes, their parsing, the builtin attribute makers;
- `types`: the token type, type predicates, op-definition constraints, shape checks;
- `properties`: readers of op properties (`prop_ints`, `prop_int`, `prop_padding`);
- `base`: `StableHLOOp`, the dialect's traits, region helpers (`build_region`, `check_body`);
- `assembly`: the `custom<...>` directives of the assembly formats, registered on import;
- `folding`: constant folding helpers;
- one module per op family, imported below in the order the ops register (the dialect's op
  table keeps the order it had as one module): `elementwise`, `constants`, `comparison`,
  `conversion`, `shape`, `contraction`, `reduction`, `control_flow`, `gather_scatter`,
  `tuples_tokens`, `rng`, `calls`, `fft_and_precision`, `dynamic_shape`, `linalg`, `collectives`,
  `loose`.
  A family holds ops that share helpers, named by what they do; a family imports only the
  layers above and earlier families. Where the registration order ties an op to its neighbours
  it stays with them (get_dimension_size with the shape ops, reduce_precision with fft, the
  legacy broadcast with the dynamic-shape ops);
- `canonicalize`: patterns over several families, attached to their ops;
- `builders`: the value builders (`add(builder, lhs, rhs)`, ...).

Each module's `__all__` lists the names code outside the package may use; this module re-exports
them all (`from loom.dialects.stablehlo import AddOp`, `stablehlo.add(...)`) and registers the
dialect. Helpers shared only between the package's modules (folding, assembly and shape-check
helpers) are public in their module but not re-exported.
"""

# isort: off
# The order of these imports is the order in which the ops register.
from loom.dialects.stablehlo.attributes import *  # noqa: F403
from loom.dialects.stablehlo.types import *  # noqa: F403
from loom.dialects.stablehlo.properties import *  # noqa: F403
from loom.dialects.stablehlo.base import *  # noqa: F403
from loom.dialects.stablehlo import assembly  # noqa: F401 - registers the custom<...> directives
from loom.dialects.stablehlo.folding import *  # noqa: F403
from loom.dialects.stablehlo.elementwise import *  # noqa: F403
from loom.dialects.stablehlo.constants import *  # noqa: F403
from loom.dialects.stablehlo.comparison import *  # noqa: F403
from loom.dialects.stablehlo.conversion import *  # noqa: F403
from loom.dialects.stablehlo.shape import *  # noqa: F403
from loom.dialects.stablehlo.contraction import *  # noqa: F403
from loom.dialects.stablehlo.reduction import *  # noqa: F403
from loom.dialects.stablehlo.control_flow import *  # noqa: F403
from loom.dialects.stablehlo.gather_scatter import *  # noqa: F403
from loom.dialects.stablehlo.tuples_tokens import *  # noqa: F403
from loom.dialects.stablehlo.rng import *  # noqa: F403
from loom.dialects.stablehlo.calls import *  # noqa: F403
from loom.dialects.stablehlo.fft_and_precision import *  # noqa: F403
from loom.dialects.stablehlo.dynamic_shape import *  # noqa: F403
from loom.dialects.stablehlo.linalg import *  # noqa: F403
from loom.dialects.stablehlo.collectives import *  # noqa: F403
from loom.dialects.stablehlo.loose import *  # noqa: F403
from loom.dialects.stablehlo.canonicalize import *  # noqa: F403
from loom.dialects.stablehlo.builders import *  # noqa: F403
# isort: on
from loom.dialects.stablehlo.attributes import parse_attribute
from loom.dialects.stablehlo.base import build_region
from loom.dialects.stablehlo.constants import materialize_constant
from loom.dialects.stablehlo.properties import prop_ints
from loom.ir.opdef import Dialect, register_dialect

DIALECT = register_dialect(Dialect("stablehlo", attribute_parser=parse_attribute,
                                   materialize_constant=materialize_constant))

# Private names of the single-module dialect that code outside loom/dialects still uses; new code
# uses the public names.
_build_region = build_region
_ints = prop_ints
