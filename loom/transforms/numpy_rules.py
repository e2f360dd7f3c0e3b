"""Rules for the CHLO ops the front end emits directly: `chlo.next_after` (`lnp.nextafter`),
`chlo.conj` (`lnp.conjugate` of complex values) and the special functions of `loom.lax` (`erf`,
`erfc`, `erf_inv`, `lgamma`, `digamma`). All batch elementwise; `conj` is linear, so its
derivative is the conjugate of the tangent or cotangent; the special functions' derivatives are
JAX's (one table, `DERIVATIVES`, serves forward and reverse mode). `next_after` and `digamma`
(whose derivative, polygamma, loom does not compute) have none: differentiating them is an error
naming the op. The rest of `loom.numpy` lowers to StableHLO ops whose rules live with their
transformations.
"""

from __future__ import annotations

import math

from loom.dialects import chlo, stablehlo
from loom.transforms.autodiff import VJP_RULES, full_like
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


def _gaussian(b, x, scale: float):
    """scale * exp(-x**2)."""
    e = stablehlo.exponential(b, stablehlo.negate(b, stablehlo.multiply(b, x, x)))
    return stablehlo.multiply(b, full_like(b, scale, x), e)


# d(op(x))/dx from the operand x and the result z.
DERIVATIVES = {
    "chlo.erf": lambda b, x, z: _gaussian(b, x, 2 / math.sqrt(math.pi)),
    "chlo.erfc": lambda b, x, z: _gaussian(b, x, -2 / math.sqrt(math.pi)),
    "chlo.erf_inv": lambda b, x, z: stablehlo.multiply(b, full_like(b, math.sqrt(math.pi) / 2, z),
                                                       stablehlo.exponential(b, stablehlo.multiply(b, z, z))),
    "chlo.lgamma": lambda b, x, z: chlo.DigammaOp.build(b, x).results[0],
}


def _vjp_special(b, op, cts):
    ct = cts[0]
    if ct is None:
        return [None]
    return [stablehlo.multiply(b, ct, DERIVATIVES[op.name](b, op.operands[0], op.results[0]))]


def _jvp_special(b, op, xs, ts):
    if ts[0] is None:
        return [None]
    return [stablehlo.multiply(b, ts[0], DERIVATIVES[op.name](b, xs[0], op.results[0]))]


for _name in ("chlo.erf", "chlo.erfc", "chlo.erf_inv", "chlo.lgamma", "chlo.digamma"):
    BATCH_RULES.setdefault(_name, _elementwise)
for _name in DERIVATIVES:
    VJP_RULES.setdefault(_name, _vjp_special)
    JVP_RULES.setdefault(_name, _jvp_special)
