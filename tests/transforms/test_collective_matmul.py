"""decompose-collective-matmul against the undecomposed program as the oracle: sharded jits
(and shard_maps) partitioned by `loom.sharding.partition`, with and without the pass, run on a mesh
of threads (`run_global`) give the same values: bit for bit for the all-gather loop (each block
of the result is the same dot), to float tolerance for the reduce-scatter loop (the ring sums in
another order). Also: the loop structure, programs without the pattern left unchanged, the
options, and the output printing, parsing back and verifying."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest
from spmd_run import run_global

import loom
from loom.ir.core import Operation
from loom.ir.diagnostics import collect_remarks
from loom.rewrite.pass_manager import PassManager
from loom.sharding import Mesh, NamedSharding, P
from loom.sharding.partitioning import partition
from loom.transforms.collective_matmul import DecomposeCollectiveMatmulPass

F32 = np.float32
CORPUS = pathlib.Path(__file__).parent / "spmd_corpus"
REPLICATED = P()


def _mesh(shape: tuple[int, ...], axes: tuple[str, ...]) -> Mesh:
    return Mesh(np.arange(int(np.prod(shape))).reshape(shape), axes)


def _decompose(module: Operation, options: str = "mode=on") -> Operation:
    out = loom.ir.parse(str(module))
    PassManager.parse(f"builtin.module(decompose-collective-matmul{{{options}}})").run(out)
    return out


def _names(module: Operation) -> list[str]:
    return [op.name for op in module.walk()]


def _values(shapes: list[tuple[int, ...]], seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(F32) for s in shapes]


def _partitioned(f, in_specs, out_spec, shapes, mesh):
    s = lambda spec: NamedSharding(mesh, spec)  # noqa: E731
    jitted = loom.jit(f, in_shardings=tuple(s(p) for p in in_specs), out_shardings=s(out_spec))
    return partition(jitted.lower(*[np.zeros(sh, F32) for sh in shapes]).module)


def _check(module: Operation, args: list[np.ndarray], collective: str, exact: bool,
           options: str = "mode=on") -> Operation:
    """Decompose `module`, check the collective became ring steps, and the values agree."""
    assert collective in _names(module)
    out = _decompose(module, options)
    names = _names(out)
    assert collective not in names and "stablehlo.collective_permute" in names
    assert "stablehlo.partition_id" in names
    out.verify()
    assert str(loom.ir.parse(str(out))) == str(out)
    want, got = run_global(module, *args), run_global(out, *args)
    for w, g in zip(want, got):
        if exact:
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
    return out


def matmul(a, b):
    return a @ b


BIDI = pytest.mark.parametrize("options", ["mode=on", "mode=on bidirectional=true"], ids=["ring", "bidirectional"])


def _loops(module: Operation) -> int:
    return _names(module).count("stablehlo.while")


@BIDI
@pytest.mark.parametrize("n", [2, 3, 4, 8])
def test_all_gather_of_rhs_non_contracting(n, options):
    # b is gathered along its columns (non-contracting) before the local dot
    mesh = _mesh((n,), ("x",))
    shapes = [(2 * n, 6), (6, 2 * n)]
    module = _partitioned(matmul, [P("x", None), P(None, "x")], P(None, "x"), shapes, mesh)
    out = _check(module, _values(shapes), "stablehlo.all_gather", exact=True, options=options)
    # a loop of N - 1 steps; bidirectional: (N - 1) // 2 rounds, a loop from 3 rounds on
    assert _loops(out) == (int((n - 1) // 2 >= 2) if "bidirectional" in options else 1)


@pytest.mark.parametrize("n", [2, 4, 8])
def test_all_gather_of_lhs_non_contracting_in_shard_map(n):
    mesh = _mesh((n,), ("x",))
    body = loom.shard_map(lambda x, w: loom.lax.all_gather(x, "x", axis=0, tiled=True) @ w, mesh=mesh,
                          in_specs=(P("x", None), P(None, "x")), out_specs=P(None, "x"))
    shapes = [(3 * n, 5), (5, 2 * n)]
    module = _partitioned(body, [P("x", None), P(None, "x")], P(None, "x"), shapes, mesh)
    _check(module, _values(shapes), "stablehlo.all_gather", exact=True)


def _gathered_dot(mesh: Mesh, axis: str, spec: tuple, gather_dim: int, subscripts: str, shapes,
                  other_spec: P = REPLICATED, out_spec: P = REPLICATED):
    """The partitioned program of shard_map(einsum(subscripts, all_gather(x, axis, gather_dim), w))
    with x split as `spec`, w as `other_spec` and the result as `out_spec` (replicated by default)."""
    body = loom.shard_map(lambda x, w: loom.numpy.einsum(subscripts, loom.lax.all_gather(x, axis, axis=gather_dim,
                                                                                       tiled=True), w),
                          mesh=mesh, in_specs=(P(*spec), other_spec), out_specs=out_spec,
                          check_vma=False)  # the gathered product is equal on every device
    return _partitioned(body, [P(*spec), other_spec], out_spec, shapes, mesh)


UNROLL = pytest.mark.parametrize("options", ["mode=on", "mode=on bidirectional=true", "mode=on unroll=true",
                                             "mode=on bidirectional=true unroll=true"],
                                 ids=["ring", "bidirectional", "unrolled", "bidirectional-unrolled"])


@UNROLL
@pytest.mark.parametrize("n", [2, 3, 4, 8])
def test_all_gather_on_the_contracting_dimension(n, options):
    """x's columns (contracted) are gathered: each step's partial dot, with w's matching rows, is
    added into the full result. The blocks are summed one by one, in another order than one dot
    sums them, so the values agree to float tolerance (float32), and with numpy in float64."""
    mesh = _mesh((n,), ("x",))
    shapes = [(5, 3 * n), (3 * n, 4)]
    module = _gathered_dot(mesh, "x", (None, "x"), 1, "mk,kn->mn", shapes)
    args = _values(shapes)
    out = _check(module, args, "stablehlo.all_gather", exact=False, options=options)
    np.testing.assert_allclose(run_global(out, *args)[0], args[0].astype(np.float64) @ args[1], rtol=1e-5, atol=1e-5)
    assert "stablehlo.dynamic_slice" in _names(out)


@UNROLL
@pytest.mark.parametrize("n", [2, 3, 4, 8])
def test_all_gather_on_a_batch_dimension(n, options):
    """x's batch dimension is gathered: each step's dot of one batch block with w's matching block
    is written at that block's offset; every element is the same dot as before: bit for bit."""
    mesh = _mesh((n,), ("x",))
    shapes = [(2 * n, 3, 5), (2 * n, 5, 4)]
    module = _gathered_dot(mesh, "x", ("x", None, None), 0, "bmk,bkn->bmn", shapes)
    args = _values(shapes)
    out = _check(module, args, "stablehlo.all_gather", exact=True, options=options)
    np.testing.assert_allclose(run_global(out, *args)[0], np.einsum("bmk,bkn->bmn", *args), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("unroll", [False, True])
@pytest.mark.parametrize("window", ["non-contracting", "contracting", "batch"])
@pytest.mark.parametrize("n", [4, 8])
def test_two_way_rounds_concatenate_their_shards_into_one_dot(n, window, unroll):
    """With `concatenate`, each two-way round runs one dot of its two shards side by side (and,
    contracting or batch, the other operand's two matching blocks): half the partial dots of the
    plain two-way loop, the values of the undecomposed program (to float tolerance where the two
    partial products are summed inside the dot)."""
    mesh = _mesh((n,), ("x",))
    if window == "non-contracting":
        shapes = [(2 * n, 6), (6, 2 * n)]
        module = _partitioned(matmul, [P("x", None), P(None, "x")], P(None, "x"), shapes, mesh)
    elif window == "contracting":
        shapes = [(5, 3 * n), (3 * n, 4)]
        module = _gathered_dot(mesh, "x", (None, "x"), 1, "mk,kn->mn", shapes)
    else:
        shapes = [(2 * n, 3, 5), (2 * n, 5, 4)]
        module = _gathered_dot(mesh, "x", ("x", None, None), 0, "bmk,bkn->bmn", shapes)
    base = f"mode=on bidirectional=true unroll={str(unroll).lower()}"
    out = _check(module, _values(shapes), "stablehlo.all_gather", exact=window == "batch",
                 options=f"{base} concatenate=true")
    plain = _decompose(module, base)
    dots = _names(out).count("stablehlo.dot_general")
    assert "stablehlo.concatenate" in _names(out)
    assert dots < _names(plain).count("stablehlo.dot_general")
    np.testing.assert_allclose(run_global(out, *_values(shapes))[0], run_global(plain, *_values(shapes))[0],
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("options", ["mode=on", "mode=on bidirectional=true unroll=true"], ids=["ring", "both"])
@pytest.mark.parametrize("axis", ["d", "m"])
def test_two_dimensional_mesh_contracting_and_batch_gathers(axis, options):
    """On a 2 x 4 mesh the gather runs over one axis; the other splits w: the ring is that axis's."""
    mesh = _mesh((2, 4), ("d", "m"))
    other = "m" if axis == "d" else "d"
    contracting = _gathered_dot(mesh, axis, (None, axis), 1, "mk,kn->mn", [(6, 8), (8, 8)], P(None, other),
                                P(None, other))
    batch = _gathered_dot(mesh, axis, (axis, None, None), 0, "bmk,bkn->bmn", [(8, 3, 4), (8, 4, 8)],
                          P(None, None, other), P(None, None, other))
    for module, shapes, exact in [(contracting, [(6, 8), (8, 8)], False), (batch, [(8, 3, 4), (8, 4, 8)], True)]:
        out = _check(module, _values(shapes), "stablehlo.all_gather", exact=exact, options=options)
        assert _ring_pairs(out) == _expected_ring(axis, options)


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_unrolled_loops_compute_what_the_rolled_ones_do(n, bidirectional):
    """unroll=true: two steps per loop iteration, an odd last step after the loop; the same steps
    in the same order, so the values are bit for bit those of the rolled loop, for all three
    windowed forms and the reduce-scatter loop."""
    mesh = _mesh((n,), ("x",))
    cases = [
        (_gathered_dot(mesh, "x", ("x", None), 0, "mk,kn->mn", [(2 * n, 3), (3, 4)]), [(2 * n, 3), (3, 4)]),
        (_gathered_dot(mesh, "x", (None, "x"), 1, "mk,kn->mn", [(3, 2 * n), (2 * n, 4)]), [(3, 2 * n), (2 * n, 4)]),
        (_gathered_dot(mesh, "x", ("x", None, None), 0, "bmk,bkn->bmn", [(n, 2, 3), (n, 3, 2)]),
         [(n, 2, 3), (n, 3, 2)]),
        (_partitioned(matmul, [P(None, "x"), P("x", None)], P("x", None), [(2 * n, 3 * n), (3 * n, 2)], mesh),
         [(2 * n, 3 * n), (3 * n, 2)]),
    ]
    base = "mode=on bidirectional=true" if bidirectional else "mode=on"
    for module, shapes in cases:
        args = _values(shapes, seed=n)
        rolled, unrolled = _decompose(module, base), _decompose(module, base + " unroll=true")
        unrolled.verify()
        for w, g in zip(run_global(rolled, *args), run_global(unrolled, *args)):
            np.testing.assert_array_equal(g, w)
        # the steps in the loop: N - 1 on a ring; bidirectional, the middle rounds: (N - 1) // 2 - 1
        # (all-gather) or N - 1 - N // 2 - 1 (reduce-scatter)
        is_rs = "stablehlo.reduce_scatter" in _names(module)
        steps = max(0, (n - 1 - n // 2 if is_rs else (n - 1) // 2) - 1) if bidirectional else n - 1
        per_step = _dots_per_loop_body(rolled) or [2 if bidirectional else 1]
        assert _dots_per_loop_body(unrolled) == ([2 * per_step[0]] if steps >= 2 else [])
        outside = _names(rolled).count("stablehlo.dot_general") - sum(_dots_per_loop_body(rolled))
        assert _names(unrolled).count("stablehlo.dot_general") == \
            outside + sum(_dots_per_loop_body(unrolled)) + (steps % 2) * per_step[0]


def _dots_per_loop_body(module: Operation) -> list[int]:
    return [sum(o.name == "stablehlo.dot_general" for o in op.walk())  # the cond has none
            for op in module.walk() if op.name == "stablehlo.while"]


def test_all_gather_with_batch_dimensions():
    mesh = _mesh((4,), ("x",))
    body = loom.shard_map(lambda x, w: loom.numpy.einsum("bmk,bkn->bmn", x, loom.lax.all_gather(w, "x", axis=2,
                                                                                               tiled=True)),
                          mesh=mesh, in_specs=(P(), P(None, None, "x")), out_specs=P(),
                          check_vma=False)  # the gathered product is equal on every device
    shapes = [(2, 3, 5), (2, 5, 8)]
    module = _partitioned(body, [P(), P(None, None, "x")], P(), shapes, mesh)
    _check(module, _values(shapes), "stablehlo.all_gather", exact=True)


@BIDI
@pytest.mark.parametrize("n", [2, 3, 4, 8])
@pytest.mark.parametrize("out_spec", [P("x", None), P(None, "x")], ids=["rows", "columns"])
def test_reduce_scatter_of_contracting_split_dot(n, out_spec, options):
    mesh = _mesh((n,), ("x",))
    shapes = [(2 * n, 3 * n), (3 * n, 2 * n)]
    module = _partitioned(matmul, [P(None, "x"), P("x", None)], out_spec, shapes, mesh)
    out = _check(module, _values(shapes), "stablehlo.reduce_scatter", exact=False, options=options)
    assert _loops(out) == (int(n - 1 - n // 2 >= 2) if "bidirectional" in options else 1)


def _ring_pairs(module: Operation) -> set[tuple[tuple[int, int], ...]]:
    """The source-target pairs of every collective_permute."""
    return {tuple(sorted(map(tuple, op.properties["source_target_pairs"].to_numpy().tolist())))
            for op in module.walk() if op.name == "stablehlo.collective_permute"}


def _expected_ring(axis: str, options: str) -> set[tuple[tuple[int, int], ...]]:
    """On the 2 x 4 mesh ("d", "m"): the partitions along `axis` each send to the previous one
    (and, bidirectional, to the next one)."""
    ids = np.arange(8).reshape(2, 4)
    groups = ids.T if axis == "d" else ids
    steps = (-1, 1) if "bidirectional" in options else (-1,)
    return {tuple(sorted((int(g[j]), int(g[(j + s) % len(g)])) for g in groups for j in range(len(g))))
            for s in steps}


@BIDI
@pytest.mark.parametrize("axis", ["d", "m"])
def test_two_dimensional_mesh_gathers_over_one_axis(axis, options):
    mesh = _mesh((2, 4), ("d", "m"))
    other = "m" if axis == "d" else "d"
    specs = (P(axis, None), P(None, other))
    body = loom.shard_map(lambda x, w: loom.lax.all_gather(x, axis, axis=0, tiled=True) @ w, mesh=mesh,
                          in_specs=specs, out_specs=P(None, other),
                          check_vma=False)  # the gathered product is equal along the gathered axis
    shapes = [(8, 6), (6, 8)]
    module = _partitioned(body, list(specs), P(None, other), shapes, mesh)
    out = _check(module, _values(shapes), "stablehlo.all_gather", exact=True, options=options)
    assert _ring_pairs(out) == _expected_ring(axis, options)


@BIDI
@pytest.mark.parametrize("axis", ["d", "m"])
def test_two_dimensional_mesh_reduce_scatter_over_one_axis(axis, options):
    mesh = _mesh((2, 4), ("d", "m"))
    other = "m" if axis == "d" else "d"
    specs = (P(None, axis), P(axis, other))
    body = loom.shard_map(lambda x, w: loom.lax.psum_scatter(x @ w, axis, scatter_dimension=0, tiled=True),
                          mesh=mesh, in_specs=specs, out_specs=P(axis, other))
    shapes = [(8, 8), (8, 8)]
    module = _partitioned(body, list(specs), P(axis, other), shapes, mesh)
    out = _check(module, _values(shapes), "stablehlo.reduce_scatter", exact=False, options=options)
    assert _ring_pairs(out) == _expected_ring(axis, options)


def test_programs_without_the_pattern_are_unchanged():
    mesh = _mesh((4,), ("x",))
    cases = [
        # the contraction is split and its partial sums all-reduced: no gather feeds the dot
        (matmul, [P(None, "x"), P()], P(), [(4, 8), (8, 4)]),
        # no communication at all
        (matmul, [P("x", None), P()], P("x", None), [(8, 4), (4, 4)]),
        # the gathered value has another user
        (lambda a, b: (a @ b, b), [P("x", None), P(None, "x")], P(), [(8, 6), (6, 8)]),
    ]
    for f, ins, out, shapes in cases:
        s = lambda spec: NamedSharding(mesh, spec)  # noqa: E731
        jitted = loom.jit(f, in_shardings=tuple(s(p) for p in ins), out_shardings=s(out))
        module = partition(jitted.lower(*[np.zeros(sh, F32) for sh in shapes]).module)
        assert str(_decompose(module)) == str(module)


@pytest.mark.parametrize("options", ["mode=on", "mode=on bidirectional=true", "mode=on fuse=true"],
                         ids=["ring", "bidirectional", "fused"])
def test_corpus_programs_decompose_to_the_same_values(options):
    """Every partitioned program of the sharded corpus (lowered by JAX): unchanged by the pass, or
    decomposed into loops giving the undecomposed program's values and JAX's (with fuse, JAX's
    sequence-parallel MLP becomes one loop)."""
    programs = json.loads((CORPUS / "programs.json").read_text())
    values = np.load(CORPUS / "values.npz")
    changed = []
    for r in programs:
        module = partition(loom.ir.parse(r["text"]))
        out = _decompose(module, options)
        if str(out) == str(module):
            continue
        changed.append(r["name"])
        args = [values[f"{r['name']}/in{i}"] for i in range(r["num_inputs"])]
        got = run_global(out, *args)
        for i, (w, g) in enumerate(zip(run_global(module, *args), got)):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, err_msg=r["name"])
            np.testing.assert_allclose(g, values[f"{r['name']}/out{i}"], rtol=1e-4, atol=1e-4, err_msg=r["name"])
    assert sorted(changed) == ["cond_on_sharded_sum", "matmul_reduce_scatter", "mlp_2d_grad", "scan_rnn_grad",
                              "sequence_parallel_mlp"]
    if "fuse" in options:
        mlp = _decompose(partition(loom.ir.parse(next(r["text"] for r in programs
                                                       if r["name"] == "sequence_parallel_mlp"))), options)
        assert _loops(mlp) == 1 and not {"stablehlo.all_gather", "stablehlo.reduce_scatter"} & set(_names(mlp))


def test_modes_and_the_auto_threshold_remark():
    mesh = _mesh((4,), ("x",))
    shapes = [(8, 6), (6, 8)]
    module = _partitioned(matmul, [P("x", None), P(None, "x")], P(None, "x"), shapes, mesh)
    assert str(_decompose(module, "mode=off")) == str(module)
    with collect_remarks() as remarks:
        skipped = _decompose(module, "mode=auto")
    assert str(skipped) == str(module)
    assert [r.message for r in remarks] == [
        "not decomposed into a collective matmul: its full-size operand has 192 bytes, under threshold-bytes = "
        "268435456"]
    # past the size gate, XLA's inequality on the default machine (h200): a 192-FLOP dot cannot hide
    # microseconds of transfers
    with collect_remarks() as remarks:
        assert str(_decompose(module, "mode=auto threshold-bytes=192")) == str(module)
    assert [r.message.split(": ")[1] for r in remarks] == ["the loop would not be faster"]
    assert "on h200" in remarks[0].message
    assert "stablehlo.while" in _names(_decompose(module, "mode=on"))
    assert DecomposeCollectiveMatmulPass().pipeline_text() == \
        "decompose-collective-matmul{bidirectional=false concatenate=false fuse=false machine=h200 mode=auto " \
        "threshold-bytes=268435456 unroll=false}"


def test_auto_decision_follows_the_machine(tmp_path):
    """The same program (b's 6x8 f32 gathered over 4 partitions, 192 bytes; each partition's dot
    2x6 @ 6x8, 192 FLOPs) on machines that differ in their link only: T_comp = 192 us at 1e6
    FLOP/s; T_comm = 3/4 of 192 bytes over the link (a switch, no latency). A link about as slow as
    the compute decomposes (max(T_comp, T_comm) + T_comm / 2 < T_comp + T_comm); a link so fast
    that communication is negligible does not, nor one so slow that the loop's extra step costs
    more than the overlap saves. Each skip's remark names its reason, with the figures."""
    from loom.sim.machine import Machine

    mesh = _mesh((4,), ("x",))
    shapes = [(8, 6), (6, 8)]
    module = _partitioned(matmul, [P("x", None), P(None, "x")], P(None, "x"), shapes, mesh)
    base = Machine("slow-chip", peak_flops=1e6, memory_bandwidth=1e12, link_bandwidth=1e6, link_latency=0.0,
                   topology="switch")
    cases = {"comparable": (base, None), "fast": (base.with_(link_bandwidth=1e15), "communication is negligible"),
             "slow": (base.with_(link_bandwidth=1e3), "the loop would not be faster")}
    for name, (machine, reason) in cases.items():
        path = machine.save(tmp_path / f"{name}.json")
        with collect_remarks() as remarks:
            out = _decompose(module, f"mode=auto threshold-bytes=0 machine={path}")
        if reason is None:
            assert not remarks and "stablehlo.while" in _names(out), name
            np.testing.assert_array_equal(run_global(out, *_values(shapes))[0], run_global(module, *_values(shapes))[0])
        else:
            assert str(out) == str(module), name
            assert len(remarks) == 1 and remarks[0].op_name == "stablehlo.all_gather"
            message = remarks[0].message
            assert message.startswith(f"not decomposed into a collective matmul: {reason}"), message
            assert "T_comp 192 us" in message and "on slow-chip" in message, message
    # a preset by name: a TPU v4 runs this dot in under a nanosecond, its transfers take microseconds
    with collect_remarks() as remarks:
        _decompose(module, "mode=auto threshold-bytes=0 machine=tpu-v4")
    assert "on tpu-v4" in remarks[0].message
    with pytest.raises(ValueError, match="machine='no-such-machine'"):
        _decompose(module, "mode=auto threshold-bytes=0 machine=no-such-machine")


def test_skipped_candidates_say_why():
    """A gather feeding a dot that cannot be windowed (its value has another user) is reported."""
    mesh = _mesh((4,), ("x",))
    jitted = loom.jit(lambda a, b: (a @ b, b), in_shardings=(NamedSharding(mesh, P("x", None)),
                                                             NamedSharding(mesh, P(None, "x"))),
                      out_shardings=NamedSharding(mesh, P()))
    module = partition(jitted.lower(np.zeros((8, 6), F32), np.zeros((6, 8), F32)).module)
    with collect_remarks() as remarks:
        _decompose(module, "mode=on")
    assert [r.message for r in remarks] == [
        "not decomposed into a collective matmul: the gathered value has 2 users, not only the dot"]


def _distributed_worker(rank: int, world: int, port: int, programs: list[tuple[str, list[np.ndarray]]],
                        results) -> None:
    import torch

    from loom.runtime.distributed import DistributedExecutable, initialize, shutdown
    torch.set_num_threads(1)
    try:
        initialize(f"127.0.0.1:{port}", world, rank, timeout_s=20.0)
        outs = [DistributedExecutable(text)(*args) for text, args in programs]  # one result: not a tuple
        got = [np.asarray(g) for out in outs for g in (out if isinstance(out, tuple) else (out,))]
        results.put((rank, "ok", got))
    except BaseException as e:  # reported to the parent, which names the rank
        results.put((rank, "error", f"{type(e).__name__}: {e}"))
    finally:
        try:
            shutdown()
        except Exception:
            pass


@pytest.mark.slow  # four spawned processes importing loom and torch: about 30 s on a 2-core machine
def test_decomposed_program_runs_with_a_gloo_process_per_device():
    """Both loops (bidirectional), and the contracting (unrolled) and batch windows, over
    torch.distributed, one partition per process: the values the undecomposed programs give on
    threads; the undecomposed program with an asynchronous all-gather; and the fused loop."""
    import queue
    import socket
    import time

    import torch.multiprocessing as mp
    world = 4
    mesh = _mesh((world,), ("x",))
    s = lambda spec: NamedSharding(mesh, spec)  # noqa: E731
    shapes = [(8, 6), (6, 8), (8, 12), (12, 8)]
    jitted = loom.jit(lambda a, b, c, d: (a @ b, c @ d),
                      in_shardings=(s(P("x", None)), s(P(None, "x")), s(P(None, "x")), s(P("x", None))),
                      out_shardings=(s(P(None, "x")), s(P("x", None))))
    module = partition(jitted.lower(*[np.zeros(sh, F32) for sh in shapes]).module)
    out = _decompose(module, "mode=on bidirectional=true")
    assert not {"stablehlo.all_gather", "stablehlo.reduce_scatter"} & set(_names(out))
    args = _values(shapes)
    contracting_shapes, batch_shapes = [(5, 8), (8, 4)], [(4, 3, 5), (4, 5, 2)]
    contracting = _gathered_dot(mesh, "x", (None, "x"), 1, "mk,kn->mn", contracting_shapes)
    batch = _gathered_dot(mesh, "x", ("x", None, None), 0, "bmk,bkn->bmn", batch_shapes)
    programs = [(str(out), args),
                (str(_decompose(contracting, "mode=on unroll=true")), _values(contracting_shapes, seed=1)),
                (str(_decompose(batch, "mode=on bidirectional=true")), _values(batch_shapes, seed=2))]
    # the undecomposed program with its all-gather asynchronous (an async_op work handle)
    gathers = loom.ir.parse(str(module))
    PassManager.parse("builtin.module(schedule-latency-hiding{all-gathers=true})").run(gathers)
    assert "comm.all_gather_start" in _names(gathers)
    programs.append((str(gathers), args))
    # the fused loop of the sequence-parallel MLP, scheduled: the two loops' values on threads, bit for bit
    mlp, mlp_args = _sequence_parallel_mlp(world)
    fused = _decompose(mlp, "mode=on fuse=true")
    PassManager.parse("builtin.module(schedule-latency-hiding)").run(fused)
    programs.append((str(fused), mlp_args))
    want = [*run_global(module, *args), *run_global(contracting, *programs[1][1]), *run_global(batch, *programs[2][1]),
            *run_global(module, *args), *run_global(_decompose(mlp), *mlp_args)]
    exact = [True, False, False, True, True, False, True]  # reduce-scatters sum in gloo's order
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    procs = [ctx.Process(target=_distributed_worker, args=(r, world, port, programs, results))
             for r in range(world)]
    for p in procs:
        p.start()
    outcomes, end = {}, time.monotonic() + 120.0
    try:
        while len(outcomes) < world and time.monotonic() < end:
            try:
                rank, *outcome = results.get(timeout=1.0)
                outcomes[rank] = outcome
            except queue.Empty:
                if all(not p.is_alive() for p in procs) and results.empty():
                    break
    finally:
        for p in procs:
            p.join(timeout=5)
            if p.is_alive():
                p.kill()
                p.join(timeout=5)
    assert sorted(outcomes) == list(range(world)), f"ranks {sorted(set(range(world)) - set(outcomes))} reported nothing"
    for rank, (status, value) in outcomes.items():
        assert status == "ok", f"rank {rank}: {value}"
        assert len(value) == len(want)
        for got, w, bitwise in zip(value, want, exact):
            if bitwise:
                np.testing.assert_array_equal(got, w, err_msg=f"rank {rank}")
            else:
                np.testing.assert_allclose(got, w, rtol=1e-5, atol=1e-5, err_msg=f"rank {rank}")


def _sequence_parallel_mlp(n: int, bias: bool = False) -> tuple[Operation, list[np.ndarray]]:
    """The sequence-parallel MLP (all-gather, dot, gelu, dot, reduce-scatter over one axis),
    partitioned; with `bias`, the gelu's input has a bias vector added (an operand from outside
    the chain)."""
    mesh = _mesh((n,), ("x",))

    def mlp(x, w1, w2, b):
        y = loom.lax.all_gather(x, "x", axis=0, tiled=True) @ w1
        h = loom.nn.gelu(y + b if bias else y)
        return loom.lax.psum_scatter(h @ w2, "x", scatter_dimension=0, tiled=True)

    specs = (P("x", None), P(None, "x"), P("x", None), P("x"))
    body = loom.shard_map(mlp, mesh=mesh, in_specs=specs, out_specs=P("x", None))
    shapes = [(4 * n, 6), (6, 2 * n), (2 * n, 6), (2 * n,)]
    s = lambda spec: NamedSharding(mesh, spec)  # noqa: E731
    jitted = loom.jit(body, in_shardings=tuple(s(p) for p in specs), out_shardings=s(P("x", None)))
    return partition(jitted.lower(*[np.zeros(sh, F32) for sh in shapes]).module), _values(shapes, seed=n)


@pytest.mark.parametrize("n", [2, 3, 4, 8])
@pytest.mark.parametrize("scheduled", [False, True], ids=["synchronous", "scheduled"])
def test_fused_loop_gives_the_two_loops_values_bit_for_bit(n, scheduled):
    """fuse=true: the all-gather's dot, the gelu and the reduce-scatter's dot in one loop, each
    block through all of them as it arrives: the same dots and sums in the same order as the two
    loops, so the same bits, and the undecomposed program's values to float tolerance."""
    module, args = _sequence_parallel_mlp(n)
    two, fused = _decompose(module), _decompose(module, "mode=on fuse=true")
    if scheduled:
        for m in (two, fused):
            PassManager.parse("builtin.module(schedule-latency-hiding)").run(m)
    fused.verify()
    assert str(loom.ir.parse(str(fused))) == str(fused)
    names = _names(fused)
    assert not {"stablehlo.all_gather", "stablehlo.reduce_scatter"} & set(names)
    assert _loops(fused) == int(n > 3) and _loops(two) == 2
    # every dot works on one block: no full-size gathered or unreduced value is left
    dots = [op for op in fused.walk() if op.name == "stablehlo.dot_general"]
    assert len(dots) == 2 * min(n, 4) and all(op.results[0].type.shape[0] == 4 for op in dots)
    permutes = names.count("comm.collective_permute_start" if scheduled else "stablehlo.collective_permute")
    # written: the two blocks before the loop send x on (one for n = 2), the loop body sends x and
    # the sum, the last block's step and the last sum send the sum
    assert permutes == {2: 2, 3: 4}.get(n, 6)
    got, want = run_global(fused, *args), run_global(two, *args)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_allclose(got[0], run_global(module, *args)[0], rtol=1e-5, atol=1e-5)


def test_an_operand_from_outside_the_chain_keeps_the_loops_apart():
    """A bias added between the dots reads a value the chain does not make: the all-gather and
    the reduce-scatter each become their own loop, as without fuse."""
    module, args = _sequence_parallel_mlp(4, bias=True)
    fused = _decompose(module, "mode=on fuse=true")
    assert _loops(fused) == 2 and str(fused) == str(_decompose(module))
    np.testing.assert_allclose(run_global(fused, *args)[0], run_global(module, *args)[0], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n", [3, 5, 8])
def test_fused_loop_unrolled_and_two_way_requests(n):
    """fuse with unroll: two steps per iteration, the same bits; with bidirectional: the two-way
    loops, unfused (the fused loop runs one way)."""
    module, args = _sequence_parallel_mlp(n)
    unrolled = _decompose(module, "mode=on fuse=true unroll=true")
    np.testing.assert_array_equal(run_global(unrolled, *args)[0], run_global(_decompose(module), *args)[0])
    assert _loops(unrolled) == int(n > 4)
    two_way = _decompose(module, "mode=on fuse=true bidirectional=true")
    assert str(two_way) == str(_decompose(module, "mode=on bidirectional=true"))
