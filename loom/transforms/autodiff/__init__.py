"""Reverse-mode automatic differentiation as an IR-to-IR transformation (JAX's `vjp`).

    reverse        the engine: `vjp_function` / `vjp_module`, the rule table `VJP_RULES`, the
                   activity analysis, and what the rules of ops with regions read and build
    builders       small IR builders the rules share (`full`, `reduce_sum`, `unbroadcast`, ...)
    stop_gradient  the `lower-stop-gradient` pass (the `ad` ops removed after differentiation)

The rules themselves live with their ops in `loom.ops`.
"""

from loom.transforms.autodiff.builders import full, full_like, is_float, props_ints, reduce_sum, unbroadcast
from loom.transforms.autodiff.reverse import (
    BOUNDARY,
    STACK_OPS,
    TRANSFORMATION,
    VJP_RULES,
    MissingRuleError,
    VjpRule,
    _inline_body,  # noqa: F401  (the name the collectives' rules import)
    accumulate_captured,
    current_state,
    defining_op,
    inline_body,
    is_active,
    lookup_rule,
    no_gradient,
    region_free_values,
    region_function,
    replace_op,
    thread_state,
    vjp_function,
    vjp_module,
)
from loom.transforms.autodiff.stop_gradient import LowerStopGradientPass, lower_stop_gradients

__all__ = ["BOUNDARY", "STACK_OPS", "TRANSFORMATION", "VJP_RULES", "LowerStopGradientPass", "MissingRuleError",
           "VjpRule", "accumulate_captured", "current_state", "defining_op", "full", "full_like", "inline_body",
           "is_active", "is_float", "lookup_rule", "lower_stop_gradients", "no_gradient", "props_ints", "reduce_sum",
           "region_free_values", "region_function", "replace_op", "thread_state", "unbroadcast", "vjp_function",
           "vjp_module"]
