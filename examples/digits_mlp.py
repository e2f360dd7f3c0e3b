"""An MLP classifier for scikit-learn's handwritten digits (8x8 images, 10 classes), trained with
`loom.value_and_grad` under `loom.jit` and plain SGD.

The model is written once against a NumPy-like module `xp`, so the same code runs as loom
(`xp = loom.numpy`) and, with --compare-jax, as JAX (`xp = jax.numpy`). Both start from the same
weights and see the same batches, because `loom.random` reproduces `jax.random` bit for bit:

    python examples/digits_mlp.py                 # loom: loss per epoch, test accuracy
    python examples/digits_mlp.py --compare-jax   # and JAX, side by side
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import loom
import loom.numpy as lnp
import loom.random

Params = dict[str, Any]


def load_digits(seed: int = 0, test_fraction: float = 0.2) -> tuple[np.ndarray, ...]:
    """(x_train, y_train, x_test, y_test): pixels scaled to [0, 1] as float32, labels as int32,
    shuffled by a key of `seed` before the split."""
    from sklearn.datasets import load_digits as sklearn_digits
    data = sklearn_digits()
    x = (data.data / 16.0).astype(np.float32)
    y = data.target.astype(np.int32)
    order = loom.random.permutation(loom.random.PRNGKey(seed), len(x))
    x, y = x[order], y[order]
    n_test = int(len(x) * test_fraction)
    return x[n_test:], y[n_test:], x[:n_test], y[:n_test]


def init_params(random: Any, key: Any, sizes: tuple[int, ...] = (64, 64, 10)) -> Params:
    """Glorot-uniform weights and zero biases; `random` is `loom.random` or `jax.random`."""
    params: Params = {}
    keys = random.split(key, len(sizes) - 1)
    for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        limit = float(np.sqrt(6.0 / (n_in + n_out)))
        params[f"w{i}"] = np.asarray(random.uniform(keys[i], (n_in, n_out), minval=-limit, maxval=limit))
        params[f"b{i}"] = np.zeros(n_out, np.float32)
    return params


def predict(xp: Any, params: Params, x: Any) -> Any:
    """Logits: tanh hidden layers, a linear output layer."""
    n_layers = len(params) // 2
    h = x
    for i in range(n_layers - 1):
        h = xp.tanh(h @ params[f"w{i}"] + params[f"b{i}"])
    return h @ params[f"w{n_layers - 1}"] + params[f"b{n_layers - 1}"]


def loss_fn(xp: Any, params: Params, x: Any, labels_one_hot: Any) -> Any:
    """Mean softmax cross-entropy."""
    logits = predict(xp, params, x)
    shifted = logits - xp.max(logits, axis=1, keepdims=True)
    log_probs = shifted - xp.log(xp.sum(xp.exp(shifted), axis=1, keepdims=True))
    return -xp.mean(xp.sum(log_probs * labels_one_hot, axis=1))


def make_step(xp: Any, jit: Callable, value_and_grad: Callable, learning_rate: float) -> Callable:
    """One jitted SGD step: (params, x, y_one_hot) -> (new params, loss)."""
    def loss_of(params: Params, x: Any, y: Any) -> Any:
        return loss_fn(xp, params, x, y)

    def step(params: Params, x: Any, y: Any) -> tuple[Params, Any]:
        # the data goes in as arguments (not closed over): loom.grad traces its own function
        loss, grads = value_and_grad(loss_of)(params, x, y)
        return {k: params[k] - learning_rate * grads[k] for k in params}, loss
    return jit(step)


@dataclass
class Run:
    """A training run: the loss of every step, the mean loss of every epoch, the test accuracy,
    the final parameters and the seconds per step after the first (compiling) one."""

    step_losses: list[float] = field(default_factory=list)
    epoch_losses: list[float] = field(default_factory=list)
    test_accuracy: float = 0.0
    params: Params = field(default_factory=dict)
    seconds_per_step: float = 0.0


def train(framework: str = "loom", epochs: int = 20, batch_size: int = 32, learning_rate: float = 0.2,
          seed: int = 0, hidden: int = 64, data: tuple[np.ndarray, ...] | None = None) -> Run:
    """Train the MLP with `framework` ("loom" or "jax"). The batches of epoch `e` follow
    `permutation(fold_in(key, e), n_train)` (the last partial batch is dropped)."""
    if framework == "loom":
        xp, random, jit, value_and_grad = lnp, loom.random, loom.jit, loom.value_and_grad
    elif framework == "jax":
        import jax
        import jax.numpy as jnp
        xp, random, jit, value_and_grad = jnp, jax.random, jax.jit, jax.value_and_grad
    else:
        raise ValueError(f"framework must be 'loom' or 'jax', got {framework!r}")
    x_train, y_train, x_test, y_test = data if data is not None else load_digits(seed)
    one_hot = np.eye(10, dtype=np.float32)
    key = random.PRNGKey(seed)
    init_key, shuffle_key = random.split(key)
    params = init_params(random, init_key, (x_train.shape[1], hidden, 10))
    step = make_step(xp, jit, value_and_grad, learning_rate)
    run = Run()
    n_batches = len(x_train) // batch_size
    timed_steps, timed_seconds = 0, 0.0
    for epoch in range(epochs):
        order = np.asarray(random.permutation(random.fold_in(shuffle_key, epoch), len(x_train)))
        total = 0.0
        for b in range(n_batches):
            idx = order[b * batch_size:(b + 1) * batch_size]
            start = time.perf_counter()
            params, loss = step(params, x_train[idx], one_hot[y_train[idx]])
            loss = float(loss)  # waits for the result (JAX runs asynchronously)
            if epoch or b:
                timed_seconds += time.perf_counter() - start
                timed_steps += 1
            run.step_losses.append(loss)
            total += loss
        run.epoch_losses.append(total / n_batches)
    run.params = {k: np.asarray(v) for k, v in params.items()}
    logits = np.asarray(jit(lambda p, x: predict(xp, p, x))(params, x_test))
    run.test_accuracy = float(np.mean(np.argmax(logits, axis=1) == y_test))
    run.seconds_per_step = timed_seconds / max(1, timed_steps)
    return run


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--learning-rate", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--compare-jax", action="store_true", help="train the same model in JAX as well")
    args = parser.parse_args(argv)
    data = load_digits(args.seed)
    print(f"digits: {len(data[0])} training and {len(data[2])} test images of 8x8 pixels")
    frameworks = ["loom", "jax"] if args.compare_jax else ["loom"]
    runs = {f: train(f, args.epochs, args.batch_size, args.learning_rate, args.seed, data=data) for f in frameworks}
    print("epoch  " + "  ".join(f"{f + ' loss':>10}" for f in frameworks))
    for e in range(args.epochs):
        print(f"{e + 1:5d}  " + "  ".join(f"{runs[f].epoch_losses[e]:10.4f}" for f in frameworks))
    for f in frameworks:
        print(f"{f}: test accuracy {runs[f].test_accuracy:.2%}, {runs[f].seconds_per_step * 1e6:.0f} us per step")


if __name__ == "__main__":
    main()
