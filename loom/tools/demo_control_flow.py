"""The `loom demo` part on dynamic control flow: reverse mode through a while loop whose trip
count depends on the data (Newton's method for a square root), which JAX refuses to
differentiate, with the stacks of saved values visible in the backward program."""

from __future__ import annotations

import sys
from typing import TextIO

import numpy as np


def newton_sqrt(a):
    """sqrt(a) by Newton's method, iterated until two iterates agree: the number of iterations
    depends on `a`."""
    import loom.numpy as lnp
    from loom import lax

    def body(state):
        x, _, n = state
        return 0.5 * (x + a / x), x, n + 1

    x, _, n = lax.while_loop(lambda s: lnp.abs(s[0] - s[1]) > 1e-12, body, (a, a * 0.0, np.int32(0)))
    return x, n


def run(out: TextIO = sys.stdout) -> None:
    """Print the demo: values, iteration counts and gradients of Newton's square root against
    the exact derivative 1 / (2 sqrt(a)), the second derivative, and the backward program's
    stack ops."""
    import loom
    import loom.ir as lir
    from loom.frontend.grad import _Differentiable

    out.write("Dynamic control flow: the gradient of a while loop whose trip count depends on data\n")
    out.write("  sqrt(a) by Newton's method, iterated until two iterates agree (lax.while_loop)\n")
    value_and_grad = loom.value_and_grad(lambda a: newton_sqrt(a)[0])
    second = loom.grad(loom.grad(lambda a: newton_sqrt(a)[0]))
    iterations = loom.jit(lambda a: newton_sqrt(a)[1])
    out.write(f"  {'a':>8} {'iterations':>10} {'sqrt(a)':>12} {'d/da':>12} {'1/(2 sqrt a)':>13} {'d2/da2':>12} "
              f"{'exact':>12}\n")
    for a in (0.25, 2.0, 10.0, 1e4):
        x = np.array(a)
        value, grad = value_and_grad(x)
        out.write(f"  {a:>8g} {int(iterations(x)):>10d} {float(value):>12.6f} {float(grad):>12.8f} "
                  f"{0.5 / np.sqrt(a):>13.8f} {float(second(x)):>12.4e} {-0.25 * a ** -1.5:>12.4e}\n")
    traced, _, _ = _Differentiable(lambda a: newton_sqrt(a)[0], False).prepare((np.array(2.0),), {}, (0,))
    text = lir.print(traced.module, generic=True)
    counts = {name: text.count(f'"{name}"') for name in ("stablehlo.while", "stack.new", "stack.push", "stack.pop")}
    out.write("  backward program: " + ", ".join(f"{n} x {k}" for k, n in counts.items()) +
              " (forward loop counts its iterations and pushes; backward loop pops them in reverse)\n")


if __name__ == "__main__":
    run()
