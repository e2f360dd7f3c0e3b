"""The training part of `loom demo`: a small MLP classifier trained with `loom.value_and_grad`
under `loom.jit` and plain SGD, printing its loss curve as a text plot and its test accuracy.

The data are scikit-learn's handwritten digits (8x8 images, 10 classes) when scikit-learn is
installed, else ten Gaussian clusters in 64 dimensions drawn with `loom.random` (the output says
which). The full, commented version of this model is examples/digits_mlp.py.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

import numpy as np

import loom
import loom.numpy as lnp
import loom.random

EPOCHS = 8
BATCH_SIZE = 32
LEARNING_RATE = 0.2
HIDDEN = 32


def _data(key: Any) -> tuple[str, np.ndarray, np.ndarray]:
    """(description, images as float32 in [0, 1], labels as int32)."""
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        centers_key, noise_key, label_key = loom.random.split(key, 3)
        centers = loom.random.uniform(centers_key, (10, 64))
        labels = loom.random.randint(label_key, (1800,), 0, 10)
        x = centers[labels] + 0.35 * loom.random.normal(noise_key, (1800, 64))
        return "ten Gaussian clusters in 64-D (scikit-learn is not installed)", x.astype(np.float32), labels
    data = load_digits()
    return "scikit-learn's handwritten digits (8x8 pixels)", (data.data / 16.0).astype(np.float32), \
        data.target.astype(np.int32)


def _loss(params: dict[str, Any], x: Any, y_one_hot: Any) -> Any:
    h = lnp.tanh(x @ params["w0"] + params["b0"])
    logits = h @ params["w1"] + params["b1"]
    shifted = logits - lnp.max(logits, axis=1, keepdims=True)
    log_probs = shifted - lnp.log(lnp.sum(lnp.exp(shifted), axis=1, keepdims=True))
    return -lnp.mean(lnp.sum(log_probs * y_one_hot, axis=1))


@loom.jit
def _step(params: dict[str, Any], x: Any, y_one_hot: Any) -> tuple[dict[str, Any], Any]:
    loss, grads = loom.value_and_grad(_loss)(params, x, y_one_hot)
    return {k: params[k] - LEARNING_RATE * grads[k] for k in params}, loss


@loom.jit
def _logits(params: dict[str, Any], x: Any) -> Any:
    return lnp.tanh(x @ params["w0"] + params["b0"]) @ params["w1"] + params["b1"]


def _can_print(out: TextIO, text: str) -> bool:
    try:
        text.encode(getattr(out, "encoding", None) or "utf-8")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def _bar(value: float, top: float, blocks: bool, width: int = 40) -> str:
    """A horizontal bar of `value / top` of `width` characters, in eighths with block characters."""
    eighths = int(round(value / top * width * 8)) if top > 0 else 0
    full, part = divmod(max(0, min(eighths, width * 8)), 8)
    if not blocks:
        return "#" * (full + (part >= 4))
    return "\u2588" * full + ("" if part == 0 else chr(0x2590 - part))


def run(out: TextIO = sys.stdout) -> None:
    """Train the MLP for a few seconds and print the loss of every epoch as a text plot, then the
    test accuracy and the time per step."""
    key = loom.random.PRNGKey(0)
    data_key, split_key, init_key, shuffle_key = loom.random.split(key, 4)
    what, x, y = _data(data_key)
    order = loom.random.permutation(split_key, len(x))
    x, y = x[order], y[order]
    n_test = len(x) // 5
    x_test, y_test, x_train, y_train = x[:n_test], y[:n_test], x[n_test:], y[n_test:]
    k0, k1 = loom.random.split(init_key)
    limits = [float(np.sqrt(6.0 / (64 + HIDDEN))), float(np.sqrt(6.0 / (HIDDEN + 10)))]
    params = {"w0": loom.random.uniform(k0, (64, HIDDEN), minval=-limits[0], maxval=limits[0]),
              "b0": np.zeros(HIDDEN, np.float32),
              "w1": loom.random.uniform(k1, (HIDDEN, 10), minval=-limits[1], maxval=limits[1]),
              "b1": np.zeros(10, np.float32)}
    one_hot = np.eye(10, dtype=np.float32)
    print(f"training a 64-{HIDDEN}-10 MLP on {what}: {len(x_train)} training and {n_test} test examples,", file=out)
    print(f"loom.value_and_grad under loom.jit, plain SGD (batch {BATCH_SIZE}, learning rate {LEARNING_RATE})",
          file=out)
    start = time.perf_counter()
    n_batches = len(x_train) // BATCH_SIZE
    losses = []
    for epoch in range(EPOCHS):
        perm = loom.random.permutation(loom.random.fold_in(shuffle_key, epoch), len(x_train))
        total = 0.0
        for b in range(n_batches):
            idx = perm[b * BATCH_SIZE:(b + 1) * BATCH_SIZE]
            params, loss = _step(params, x_train[idx], one_hot[y_train[idx]])
            total += float(loss)
        losses.append(total / n_batches)
    seconds = time.perf_counter() - start
    top = max(losses)
    blocks = _can_print(out, "\u2588\u2589")
    print("epoch    loss", file=out)
    for epoch, loss in enumerate(losses):
        print(f"{epoch + 1:5d}  {loss:6.4f}  {_bar(loss, top, blocks)}", file=out)
    accuracy = float(np.mean(np.argmax(_logits(params, x_test), axis=1) == y_test))
    print(f"test accuracy {accuracy:.1%} after {EPOCHS} epochs, {seconds:.1f} s "
          f"({seconds / (EPOCHS * n_batches) * 1e6:.0f} us per step, the first one compiling)", file=out)


if __name__ == "__main__":
    run()
