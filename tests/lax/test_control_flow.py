"""loom.lax control flow: tracing into stablehlo.if / case / while, execution in both executors,
carry and branch type errors, and forward mode (jvp), against numpy, jax, and the checkable cases
of TensorFlow's control_flow_ops_py_test.py and JAX's tests/lax_control_flow_test.py (each case
states its expected value where it is written)."""

from __future__ import annotations

import numpy as np
import pytest

import loom
import loom.ir as lir
import loom.numpy as lnp
from loom import lax
from loom.runtime.executable import execute

jax = pytest.importorskip("jax")
jnp = jax.numpy


def both_executors(fn, *args):
    """Run `fn` jitted (compiled executor) and its IR (after a text round trip) in the reference
    interpreter; assert they agree and return the compiled result's leaves."""
    jitted = loom.jit(fn)
    out = jitted(*args)
    lowered = jitted.lower(*args)
    text = lowered.as_text(generic=True)
    module = lir.parse(text)
    assert lir.print(module, generic=True) == text
    leaves = [np.asarray(a) for a in jax.tree_util.tree_leaves(args)]
    interp = execute(module, *leaves, executor="interpreter")
    interp = interp if isinstance(interp, (list, tuple)) else [interp]
    flat = jax.tree_util.tree_leaves(out)
    assert len(flat) == len(interp)
    for a, b in zip(flat, interp):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)
    return out


# --- section 6 values ----------------------------------------------------------------------------


def test_while_with_tuple():
    def f(pos):
        return lax.while_loop(lambda s: s[0] < 10, lambda s: (s[0] + 1, s[1] + 1), (pos, np.int32(0)))[1]
    assert int(both_executors(f, np.int32(2))) == 8
    assert int(both_executors(f, np.int32(3))) == 7


def test_nested_while():
    def outer_loop(num):
        def cond_fun(s):
            return s[0] < num

        def body_fun(s):
            i, count = s
            j = np.int32(0)

            def inner_body(t):
                return (t[0] + 1, t[1] + 1)
            _, count = lax.while_loop(lambda t: t[0] <= i, inner_body, (j, count))
            return (i + 1, count)
        return lax.while_loop(cond_fun, body_fun, (np.int32(0), np.int32(0)))
    for num, expected in ((3, (3, 6)), (2, (2, 3)), (4, (4, 10))):
        assert tuple(int(v) for v in both_executors(outer_loop, np.int32(num))) == expected


def test_fori_loop_basic():
    for n, expected in ((2, 1), (3, 3), (4, 6)):
        assert int(both_executors(lambda n: lax.fori_loop(0, n, lambda i, t: t + i, 0), np.int32(n))) == expected
    # concrete bounds as Python ints
    assert float(both_executors(lambda x: lax.fori_loop(0, 3, lambda i, x: x * 2, x), np.float32(2))) == 16


def test_cond_values():
    def f(x):
        return lax.cond(x < 3, lambda x: (x, x), lambda x: (2 * x, 4 * x), x)
    expected = [(0, 0), (1, 1), (2, 2), (6, 12), (8, 16)]
    for x, e in zip(range(5), expected):
        assert tuple(float(v) for v in both_executors(f, np.float32(x))) == e


def test_switch_clamps_the_index():
    branches = [lambda x: (x, x), lambda x: (2 * x, 4 * x), lambda x: (x, -x)]

    def f(x):
        return lax.switch(x, branches, x)
    for x, e in ((-1, (-1, -1)), (0, (0, 0)), (1, (2, 4)), (2, (2, -2)), (3, (3, -3)), (7, (7, -7))):
        assert tuple(int(v) for v in both_executors(f, np.int32(x))) == e


def test_scan_and_reverse():
    xs = np.array([3, 1, 4, 1, 5, 9], np.float32)

    def f(xs, reverse):
        return lax.scan(lambda c, x: (c + x, c + x), np.float32(0), xs, reverse=reverse)
    c, ys = both_executors(lambda xs: f(xs, False), xs)
    np.testing.assert_array_equal(ys, [3, 4, 8, 9, 14, 23])
    assert float(c) == 23
    _, ys = both_executors(lambda xs: f(xs, True), xs)
    np.testing.assert_array_equal(ys, [23, 20, 19, 15, 14, 9])


def test_stablehlo_interpreter_cases():
    # stablehlo/tests/interpret/while.mlir and case.mlir: the op semantics both executors share
    c = '"stablehlo.constant"() <{{value = dense<{}> : tensor<i64>}}> : () -> tensor<i64>'
    binary = '"stablehlo.{}"({}, {}) : (tensor<i64>, tensor<i64>) -> tensor<i64>'
    text = f"""
    func.func @main() -> (tensor<i64>, tensor<i64>) {{
      %init = {c.format(0)}
      %one = {c.format(1)}
      %ten = {c.format(10)}
      %r:2 = "stablehlo.while"(%init, %init) ({{
      ^bb0(%i: tensor<i64>, %s: tensor<i64>):
        %c = "stablehlo.compare"(%i, %ten) <{{comparison_direction = #stablehlo<comparison_direction LT>}}>
            : (tensor<i64>, tensor<i64>) -> tensor<i1>
        "stablehlo.return"(%c) : (tensor<i1>) -> ()
      }}, {{
      ^bb0(%i: tensor<i64>, %s: tensor<i64>):
        %s1 = {binary.format("add", "%s", "%one")}
        %i1 = {binary.format("add", "%i", "%one")}
        "stablehlo.return"(%i1, %s1) : (tensor<i64>, tensor<i64>) -> ()
      }}) : (tensor<i64>, tensor<i64>) -> (tensor<i64>, tensor<i64>)
      return %r#0, %r#1 : tensor<i64>, tensor<i64>
    }}"""
    for executor in ("interpreter", "compiled"):
        assert [int(v) for v in execute(text, executor=executor)] == [10, 10]
    case = """
    func.func @main(%index: tensor<i32>) -> tensor<2xi64> {
      %r = "stablehlo.case"(%index) ({
        %a = "stablehlo.constant"() <{value = dense<0> : tensor<2xi64>}> : () -> tensor<2xi64>
        "stablehlo.return"(%a) : (tensor<2xi64>) -> ()
      }, {
        %b = "stablehlo.constant"() <{value = dense<1> : tensor<2xi64>}> : () -> tensor<2xi64>
        "stablehlo.return"(%b) : (tensor<2xi64>) -> ()
      }) : (tensor<i32>) -> tensor<2xi64>
      return %r : tensor<2xi64>
    }"""
    for executor in ("interpreter", "compiled"):
        for index, e in ((-1, [1, 1]), (0, [0, 0]), (2, [1, 1])):
            np.testing.assert_array_equal(execute(case, np.int32(index), executor=executor), e)


@pytest.mark.usefixtures("loom_x64")  # float64 values
def test_pytorch_docs_while_example():
    def f(it, x):
        return lax.while_loop(lambda s: lnp.sum(s[0]) > 0, lambda s: (s[0] - 1, s[1] * 2), (it, x))
    for start in (3, 10):
        it, x = both_executors(f, np.array([start], np.int64), np.ones(3, np.float32))
        np.testing.assert_array_equal(x, np.ones(3) * 2.0 ** start)
        assert int(it[0]) == 0


# --- captured values, nesting, pytrees, map, eager calls ------------------------------------------


def test_captured_values_and_deep_nesting():
    def f(w, xs, limit):
        def step(h, x):
            def grow(h):
                return lax.while_loop(lambda g: lnp.sum(g * g) < limit, lambda g: g * 1.5 + w, h)
            h = lax.cond(lnp.sum(x) > 0, grow, lambda h: h - w * x, h)
            return h, lnp.sum(h)
        return lax.scan(step, lnp.ones_like(w), xs)

    rng = np.random.default_rng(0)
    w = rng.normal(size=3).astype(np.float32) * 0.1
    xs = rng.normal(size=(5, 3)).astype(np.float32)
    h, ys = both_executors(f, w, xs, np.float32(20.0))

    def reference(w, xs, limit):
        h, out = np.ones_like(w), []
        for x in xs:
            if x.sum() > 0:
                while (h * h).sum() < limit:
                    h = h * np.float32(1.5) + w
            else:
                h = h - w * x
            out.append(h.sum())
        return h, np.array(out)
    rh, rys = reference(w, xs, np.float32(20.0))
    np.testing.assert_allclose(h, rh, rtol=1e-5)
    np.testing.assert_allclose(ys, rys, rtol=1e-5)


def test_pytree_carry_map_and_unroll():
    def f(xs):
        def step(c, x):
            return {"s": c["s"] + x, "n": c["n"] + 1}, (x * 2, -x)
        c, (a, b) = lax.scan(step, {"s": np.float32(0), "n": np.int32(0)}, xs, unroll=2)
        return c, a, b, lax.map(lambda x: x * x, xs)
    xs = np.arange(6, dtype=np.float32)
    c, a, b, sq = both_executors(f, xs)
    assert float(c["s"]) == 15 and int(c["n"]) == 6
    np.testing.assert_array_equal(a, xs * 2)
    np.testing.assert_array_equal(b, -xs)
    np.testing.assert_array_equal(sq, xs * xs)


def test_scan_length_without_xs_and_traced_fori_bounds():
    def f(x, lo, hi):
        c, ys = lax.scan(lambda c, _: (c * 2, c), x, None, length=4)
        return c, ys, lax.fori_loop(lo, hi, lambda i, t: t + i.astype(np.float32), np.float32(0))
    c, ys, s = both_executors(f, np.float32(1), np.int32(2), np.int32(5))
    assert float(c) == 16
    np.testing.assert_array_equal(ys, [1, 2, 4, 8])
    assert float(s) == 9


def test_eager_calls_outside_jit():
    assert float(lax.while_loop(lambda v: v < 100.0, lambda v: v * v, 2.0)) == 256.0
    assert float(lax.cond(True, lambda x: x + 1, lambda x: x - 1, np.float32(1))) == 2.0
    assert int(lax.switch(5, [lambda: np.int32(0), lambda: np.int32(1)])) == 1
    np.testing.assert_array_equal(lax.map(lambda x: x + 1, np.arange(3, dtype=np.float32)), [1, 2, 3])


# --- errors ----------------------------------------------------------------------------------------


@pytest.mark.usefixtures("loom_x64")  # float64 values
def test_carry_type_error_names_the_element_and_both_types():
    def f(x):
        return lax.while_loop(lambda s: s[0] < 3, lambda s: (s[0] + 1, {"h": s[1]["h"].astype(np.float64)}),
                              (np.int32(0), {"h": x}))
    with pytest.raises(TypeError) as info:
        loom.jit(f)(np.ones(3, np.float32))
    msg = str(info.value)
    assert "carry[1]['h']" in msg and "float32[3]" in msg and "float64[3]" in msg
    assert "test_control_flow.py" in msg


def test_carry_shape_error_in_scan_and_fori():
    with pytest.raises(TypeError, match=r"carry\[0\] is float32\[2\] on input and float32\[1,2\] on output"):
        loom.jit(lambda x: lax.scan(lambda c, x: ((c[0][None],), x), (x,), x[None]))(np.ones(2, np.float32))
    with pytest.raises(TypeError, match=r"carry is float32\[\] on input and float32\[2\] on output"):
        loom.jit(lambda x: lax.fori_loop(0, 2, lambda i, v: lnp.stack([v, v]), x))(np.float32(1))
    with pytest.raises(TypeError, match=r"carry\['h'\] is float32\[\] on input and int32\[\] on output"):
        loom.jit(lambda x: lax.fori_loop(0, 2, lambda i, v: {"h": i}, {"h": x}))(np.float32(1))


def test_branch_and_predicate_errors():
    with pytest.raises(TypeError, match=r"output\[1\] is float32\[\] in branch 0 and int32\[\] in branch 1"):
        loom.jit(lambda x: lax.cond(x > 0, lambda x: (x, x), lambda x: (x, x.astype(np.int32)), x))(np.float32(1))
    with pytest.raises(TypeError, match="same pytree structure"):
        loom.jit(lambda x: lax.cond(x > 0, lambda x: (x, x), lambda x: x, x))(np.float32(1))
    with pytest.raises(TypeError, match="must be a scalar"):
        loom.jit(lambda x: lax.cond(x > 0, lambda x: x, lambda x: x, x))(np.ones(2, np.float32))
    with pytest.raises(TypeError, match="cond_fun must return a boolean scalar"):
        loom.jit(lambda x: lax.while_loop(lambda v: v, lambda v: v, x))(np.ones(2, np.float32))
    with pytest.raises(ValueError, match="inconsistent lengths"):
        loom.jit(lambda a, b: lax.scan(lambda c, x: (c, x), 0.0, (a, b)))(np.ones(2), np.ones(3))


@pytest.mark.usefixtures("loom_x64")  # float64 values
def test_weak_initial_carry_takes_the_body_dtype():
    out = both_executors(lambda x: lax.fori_loop(0, 3, lambda i, c: c + x, 0.0), np.array(1.5))
    assert out.dtype == np.float64 and float(out) == 4.5


# --- forward mode -----------------------------------------------------------------------------------


def test_jvp_fori_section6():
    y, t = loom.jvp(lambda x: lax.fori_loop(0, 3, lambda i, x: x * 2, x), (2.0,), (1.0,))
    assert (float(y), float(t)) == (16.0, 8.0)
    y, t = loom.jvp(lambda x: lax.fori_loop(0, 3, lambda i, x: x * (i + 1), x), (2.0,), (1.0,))
    assert (float(y), float(t)) == (12.0, 6.0)


def test_jvp_against_jax():
    rng = np.random.default_rng(1)
    w = rng.normal(size=(3, 3)) * 0.5
    xs = rng.normal(size=(4, 3))
    h0 = rng.normal(size=3)

    def program(m, lx):
        def rnn(w, xs, h0):
            h, ys = lx.scan(lambda h, x: (m.tanh(w @ h + x), m.sum(h * x)), h0, xs)
            big = lx.cond(m.sum(h) > 0, lambda h: m.sin(h) * 2.0, lambda h: h * h, h)
            sel = lx.switch(2, [lambda h: h, lambda h: -h, lambda h: m.exp(h)], big)
            g = lx.while_loop(lambda v: m.sum(v * v) < 50.0, lambda v: v * 1.3 + 0.1, sel)
            return g, ys
        return rnn

    primals = (w, xs, h0)
    tangents = tuple(rng.normal(size=p.shape) for p in primals)
    out, tan = loom.jvp(program(lnp, lax), primals, tangents)
    j_out, j_tan = jax.jvp(program(jnp, jax.lax), tuple(map(jnp.asarray, primals)),
                           tuple(map(jnp.asarray, tangents)))
    for a, b in zip(jax.tree_util.tree_leaves((out, tan)), jax.tree_util.tree_leaves((j_out, j_tan))):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-5)


def test_demo_part_prints_gradients_matching_the_exact_derivative():
    import io

    from loom.tools import demo_control_flow
    buf = io.StringIO()
    demo_control_flow.run(buf)
    text = buf.getvalue()
    rows = [line.split() for line in text.splitlines() if line.strip().split(" ")[0] in ("2", "10000")]
    assert len(rows) == 2
    for row in rows:
        a, grad, exact, second, exact2 = float(row[0]), float(row[3]), float(row[4]), float(row[5]), float(row[6])
        np.testing.assert_allclose(grad, 0.5 / np.sqrt(a), rtol=1e-7)
        np.testing.assert_allclose(grad, exact, rtol=1e-7)
        np.testing.assert_allclose(second, exact2, rtol=1e-3)
    assert "stack.pop" in text


def test_indexing_by_a_loop_counter_is_one_dynamic_slice():
    """`xs[i]` with a traced integer scalar (the usual RNN step) lowers to a dynamic_slice rather
    than a gather over an index grid; values (negative indices wrap, out-of-range ones clamp),
    gradients and vmap match jax."""
    x = np.arange(24, dtype=np.float32).reshape(4, 3, 2)
    for dt in (np.int32, np.uint32):
        for i in (-5, -4, -1, 0, 2, 3, 4, 7):
            if dt is np.uint32 and i < 0:
                continue
            want = jax.jit(lambda x, i: x[i])(x, dt(i))
            np.testing.assert_array_equal(loom.jit(lambda x, i: x[i])(x, dt(i)), want)
            np.testing.assert_array_equal(loom.jit(lambda x, i: x[(i,)])(x, dt(i)), want)
    text = loom.jit(lambda x, i: x[i]).lower(x, np.int32(1)).as_text()
    assert "stablehlo.dynamic_slice" in text and "stablehlo.gather" not in text

    def loss(x, i):
        return lnp.sum(x[i] ** 2)
    np.testing.assert_array_equal(loom.grad(loss)(x, np.int32(-1)),
                                  jax.grad(lambda x, i: jnp.sum(x[i] ** 2))(x, np.int32(-1)))
    idx = np.array([0, 1, -1, 5], np.int32)
    np.testing.assert_array_equal(loom.vmap(lambda x, i: x[i])(x, idx), jax.vmap(lambda x, i: x[i])(x, idx))
    np.testing.assert_array_equal(loom.vmap(lambda x, i: x[i], in_axes=(0, None))(x, np.int32(-1)), x[:, -1])

    def rnn(w, xs, n):
        def body(s):
            i, h = s
            return i + 1, lnp.tanh(xs[i] @ w + h)
        return lnp.sum(lax.while_loop(lambda s: s[0] < n, body, (np.int32(0), xs[0] * 0.0))[1])

    def jrnn(w, xs, n):
        xs = jnp.asarray(xs)
        return jnp.sum(jax.lax.fori_loop(0, n, lambda i, h: jnp.tanh(xs[i] @ w + h), xs[0] * 0.0))
    rng = np.random.default_rng(0)
    w, xs = rng.normal(size=(3, 3)).astype(np.float32) * 0.5, rng.normal(size=(6, 2, 3)).astype(np.float32)
    np.testing.assert_allclose(loom.grad(rnn)(w, xs, np.int32(5)), jax.grad(jrnn)(w, xs, 5), rtol=2e-5, atol=1e-6)
