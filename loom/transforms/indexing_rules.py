"""The names the front end imports from this module's former contents (the rules moved to their
op families in loom/ops; the helpers to `loom.transforms.rule_builders`)."""

from loom.transforms.rule_builders import clamp_starts as _clamp_starts
from loom.transforms.rule_builders import dimension_numbers as _dimension_numbers
from loom.transforms.rule_builders import in_bounds as _in_bounds
from loom.transforms.rule_builders import take_along

__all__ = ["_clamp_starts", "_dimension_numbers", "_in_bounds", "take_along"]
