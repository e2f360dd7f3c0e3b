"""Rules for the CHLO ops `loom.numpy` emits directly: `chlo.next_after` (`lnp.nextafter`) and
`chlo.conj` (`lnp.conjugate` of complex values). Both batch elementwise; `conj` is linear, so its
derivative is the conjugate of the tangent or cotangent. `next_after` has no derivative (as in
JAX, differentiating it is an error). The rest of `loom.numpy` lowers to StableHLO ops whose rules
live with their transformations.
"""

from __future__ import annotations

from loom.dialects import chlo
from loom.transforms.autodiff import VJP_RULES
from loom.transforms.batching import BATCH_RULES, _elementwise
from loom.transforms.forward_ad import JVP_RULES


def _conj(b, value):
    return chlo.ConjOp.build(b, value).results[0]


def _vjp_conj(b, op, cts):
    ct = cts[0]
    return [None if ct is None else _conj(b, ct)]


def _jvp_conj(b, op, xs, ts):
    return [None if ts[0] is None else _conj(b, ts[0])]


BATCH_RULES.setdefault("chlo.next_after", _elementwise)
BATCH_RULES.setdefault("chlo.conj", _elementwise)
VJP_RULES.setdefault("chlo.conj", _vjp_conj)
JVP_RULES.setdefault("chlo.conj", _jvp_conj)
