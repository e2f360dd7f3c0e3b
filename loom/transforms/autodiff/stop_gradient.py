"""`lower-stop-gradient`: the `ad` dialect's ops replaced by what they compute, once every
differentiation is done (for XLA export)."""

from __future__ import annotations

from loom.ir.core import Operation


def lower_stop_gradients(root: Operation) -> int:
    """Replace every `ad.stop_gradient` nested in `root` by its operand, and every `ad.custom_vjp`
    and `ad.custom_jvp` by its outputs; return how many there were.

    Only for a module whose differentiation is done: StableHLO has no stop-gradient op (XLA sees
    the identity, as for JAX's), so a module printed for XLA goes through this first. loom's own
    pipelines keep the op, since `loom.grad` may differentiate an already optimised function."""
    ops = [op for op in root.walk() if op.name in ("ad.stop_gradient", "ad.custom_vjp", "ad.custom_jvp")]
    for op in ops:
        values = op.operands if op.name == "ad.stop_gradient" else op.operands_of("outputs")
        for r, v in zip(op.results, values):
            r.replace_all_uses_with(v)
        op.erase()
    return len(ops)


def _register_lowering_pass() -> type:
    from loom.rewrite.passes import Pass, register_pass

    @register_pass
    class LowerStopGradientPass(Pass):
        """`lower-stop-gradient`: `ad.stop_gradient` replaced by its operand (for XLA export, after
        every differentiation)."""

        name = "lower-stop-gradient"
        summary = "Replace ad.stop_gradient by its operand (run after differentiation, before XLA export)"

        def run(self, op: Operation) -> None:
            lower_stop_gradients(op)

    return LowerStopGradientPass


LowerStopGradientPass = _register_lowering_pass()


__all__ = ["LowerStopGradientPass", "lower_stop_gradients"]
