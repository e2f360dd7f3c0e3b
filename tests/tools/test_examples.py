"""The examples, run in reduced form: the digits MLP trained with loom against the same model
trained with JAX (same initial weights, same batches), step by step; and the training demo."""

from __future__ import annotations

import importlib.util
import io
import sys

import numpy as np
import pytest
from support.paths import EXAMPLES

jax = pytest.importorskip("jax")
pytest.importorskip("sklearn")



def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def digits():
    return _load("digits_mlp")


@pytest.fixture(scope="module")
def runs(digits):
    data = digits.load_digits(seed=0)
    return {f: digits.train(f, epochs=2, data=data) for f in ("loom", "jax")}, data


def test_digits_data_split_matches_jax(digits):
    """The split comes from loom.random.permutation, which jax.random.permutation reproduces."""
    from sklearn.datasets import load_digits
    x_train, y_train, x_test, y_test = digits.load_digits(seed=0)
    raw = load_digits()
    order = np.asarray(jax.random.permutation(jax.random.PRNGKey(0), len(raw.target)))
    np.testing.assert_array_equal(y_test, raw.target[order][:len(y_test)])
    np.testing.assert_array_equal(x_train, (raw.data[order][len(y_test):] / 16.0).astype(np.float32))
    assert len(x_train) + len(x_test) == 1797 and len(y_train) == len(x_train)


def test_same_initial_weights_as_jax(digits):
    import loom.random
    mine = digits.init_params(loom.random, loom.random.PRNGKey(3))
    theirs = digits.init_params(jax.random, jax.random.PRNGKey(3))
    for name in mine:
        np.testing.assert_array_equal(mine[name], theirs[name])


def test_losses_match_jax_step_by_step(runs):
    (by, _) = runs
    loom_run, jax_run = by["loom"], by["jax"]
    assert len(loom_run.step_losses) == len(jax_run.step_losses) == 2 * (1438 // 32)
    np.testing.assert_allclose(loom_run.step_losses, jax_run.step_losses, rtol=2e-5, atol=1e-6)
    for name in loom_run.params:
        np.testing.assert_allclose(loom_run.params[name], jax_run.params[name], rtol=1e-4, atol=1e-5)
    # it learns: the loss falls from about log(10) and the test accuracy is far above chance
    assert loom_run.step_losses[0] > 2.0 and loom_run.epoch_losses[-1] < 0.6
    assert loom_run.test_accuracy == jax_run.test_accuracy
    assert loom_run.test_accuracy > 0.85


def test_main_prints_curve_and_accuracy(digits, capsys):
    digits.main(["--epochs", "1"])
    out = capsys.readouterr().out
    assert "1438 training and 359 test images" in out
    assert "loom: test accuracy" in out and "us per step" in out
    first = [line for line in out.splitlines() if line.strip().startswith("1 ")]
    assert len(first) == 1 and 0.5 < float(first[0].split()[1]) < 2.5


def test_demo_training_prints_loss_curve():
    from loom.tools import demo_training
    buffer = io.StringIO()
    demo_training.run(out=buffer)
    text = buffer.getvalue()
    rows = [line.split() for line in text.splitlines()]
    losses = [float(r[1]) for r in rows if len(r) >= 2 and r[0].isdigit()]
    assert len(losses) >= 3 and losses[-1] < losses[0] / 2
    assert "digits" in text and "epoch" in text
    accuracy = float(text.split("test accuracy")[1].split("%")[0])
    assert accuracy > 85.0


def test_demo_training_without_scikit_learn(monkeypatch):
    """Without scikit-learn the demo trains on clusters drawn with loom.random, and says so."""
    from loom.tools import demo_training
    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)  # makes the import fail
    buffer = io.StringIO()
    demo_training.run(out=buffer)
    text = buffer.getvalue()
    assert "scikit-learn is not installed" in text
    accuracy = float(text.split("test accuracy")[1].split("%")[0])
    assert accuracy > 90.0
