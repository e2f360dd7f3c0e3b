"""The derivative and batching engines hold no op's rule: every rule of `JVP_RULES`, `VJP_RULES`
and `BATCH_RULES` is registered by the op's family under loom/ops (one op, one place)."""

from __future__ import annotations

import inspect
import re

from loom.transforms import autodiff, batching, forward_ad
from loom.transforms.autodiff import reverse


def test_the_engines_put_no_rule_into_a_table():
    for engine in (forward_ad, batching, reverse):
        source = inspect.getsource(engine)
        assert not re.search(r"_RULES\[[^\]]+\]\s*=", source), f"{engine.__name__} registers a rule itself"


def test_ops_without_a_derivative_have_their_rules_from_their_family():
    for name in ("stablehlo.constant", "stablehlo.iota", "stablehlo.bitcast_convert"):
        assert forward_ad.JVP_RULES[name] is forward_ad.zero_tangent
        assert autodiff.VJP_RULES[name] is autodiff.no_gradient
    assert batching.BATCH_RULES["stablehlo.bitcast_convert"] is batching.elementwise_rule
