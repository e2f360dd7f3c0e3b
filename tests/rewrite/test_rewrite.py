"""Pattern rewriting: RewritePattern, PatternRewriter, and the greedy driver.

Oracles: hand-derived expected IR for small test ops (with MLIR's rules: constants hoisted to the
entry block of the nearest isolated region, users revisited, LIFO worklist), and MLIR itself
(jaxlib's canonicalizer) on random arith programs, compared byte for byte.
"""

from __future__ import annotations

import os
import random

import pytest

import loom.ir as lir
from loom.dialects import arith, func  # noqa: F401  (registers the dialects)
from loom.ir import (
    Commutative,
    ConstantLike,
    Dialect,
    IntegerAttr,
    OpBase,
    Pure,
    StringAttr,
    Terminator,
    operand,
    prop,
    region_def,
    register_dialect,
    result_def,
    var_operand,
)
from loom.rewrite import (
    DeclarativePattern,
    GreedyRewriteConfig,
    PatternApplicator,
    PatternRewriter,
    RewriteListener,
    RewritePattern,
    apply_patterns_greedily,
    constant_value,
    fold_op,
    is_op_trivially_dead,
    is_pure,
    pattern,
)
from loom.rewrite.folding import IN_PLACE

os.environ.setdefault("JAX_PLATFORMS", "cpu")

i32 = lir.IntegerType(32)


# A small registered dialect for the tests ---------------------------------------------------

class RwConstOp(OpBase):
    name = "rwtest.const"
    value = prop()
    result = result_def()
    traits = (ConstantLike, Pure)

    def fold(self, operands):
        return [self.value]


class RwAddOp(OpBase):
    """Commutative addition: folds constants, and x + 0 to x."""

    name = "rwtest.add"
    lhs = operand()
    rhs = operand()
    result = result_def()
    traits = (Pure, Commutative)

    def fold(self, operands):
        a, b = operands
        if isinstance(a, IntegerAttr) and isinstance(b, IntegerAttr):
            return [IntegerAttr(a.type, a.value + b.value)]
        if isinstance(b, IntegerAttr) and b.value == 0:
            return [self.lhs]
        return None


class RwNegOp(OpBase):
    name = "rwtest.neg"
    input = operand()
    result = result_def()
    traits = (Pure,)


class RwRegionOp(OpBase):
    """A pure op with a region that is not isolated from above (like scf.execute_region)."""

    name = "rwtest.region"
    body = region_def()
    outs = var_operand()
    result = result_def()
    traits = (Pure,)


class RwYieldOp(OpBase):
    name = "rwtest.yield"
    values = var_operand()
    traits = (Pure, Terminator)


class RwEffectOp(OpBase):
    """Registered, but with side effects (not Pure)."""

    name = "rwtest.effect"
    values = var_operand()


def _materialize(builder, value, type, location):
    if isinstance(value, IntegerAttr) and value.type is type:
        return builder.create("rwtest.const", (), [type], {"value": value}, location=location)
    return None


register_dialect(Dialect("rwtest", [RwConstOp, RwAddOp, RwNegOp, RwRegionOp, RwYieldOp, RwEffectOp],
                         materialize_constant=_materialize))


class DoubleNeg(RewritePattern):
    """neg(neg(x)) -> x."""

    root = "rwtest.neg"

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def match_and_rewrite(self, op, rewriter) -> bool:
        self.calls += 1
        inner = op.operands[0].owner_op
        if inner is None or inner.name != "rwtest.neg":
            return False
        rewriter.replace_op(op, [inner.operands[0]])
        return True


def parse(text: str) -> lir.Operation:
    return lir.parse(text, allow_unregistered=True)


def generic(op: lir.Operation) -> str:
    return lir.print(op, generic=True)


def func_text(body: str, args: str = "%a: i32", results: str = "") -> str:
    arg_types = ", ".join(a.split(": ")[1] for a in args.split(", ")) if args else ""
    return (f'"func.func"() <{{function_type = ({arg_types}) -> ({results}), sym_name = "f"}}> ({{\n'
            f"^bb0({args}):\n{body}\n}}) : () -> ()\n")


def canonicalize(op: lir.Operation, patterns=(), **config) -> bool:
    config.setdefault("top_down", True)
    converged = True
    for f in op.regions[0].blocks[0].ops:
        converged &= apply_patterns_greedily(f, list(patterns), config=GreedyRewriteConfig(**config))
    return converged


# Patterns and the driver --------------------------------------------------------------------

def test_pattern_applies_to_fixpoint() -> None:
    m = parse(func_text('''  %0 = "rwtest.neg"(%a) : (i32) -> i32
  %1 = "rwtest.neg"(%0) : (i32) -> i32
  %2 = "rwtest.neg"(%1) : (i32) -> i32
  %3 = "rwtest.neg"(%2) : (i32) -> i32
  %4 = "rwtest.neg"(%3) : (i32) -> i32
  "func.return"(%4) : (i32) -> ()''', results="i32"))
    assert canonicalize(m, [DoubleNeg()])
    assert generic(m) == '''"builtin.module"() ({
  "func.func"() <{function_type = (i32) -> i32, sym_name = "f"}> ({
  ^bb0(%arg0: i32):
    %0 = "rwtest.neg"(%arg0) : (i32) -> i32
    "func.return"(%0) : (i32) -> ()
  }) : () -> ()
}) : () -> ()
'''


@pytest.mark.parametrize("top_down", [True, False])
def test_worklist_is_linear(top_down: bool) -> None:
    """A chain of n negations collapses in one sweep of O(n) pattern calls: each rewrite only
    re-queues the users of the replaced value and the definitions of the erased op's operands."""
    n = 2000
    lines = ['  %v0 = "rwtest.neg"(%a) : (i32) -> i32']
    lines += [f'  %v{i} = "rwtest.neg"(%v{i - 1}) : (i32) -> i32' for i in range(1, n)]
    lines.append(f'  "func.return"(%v{n - 1}) : (i32) -> ()')
    m = parse(func_text("\n".join(lines), results="i32"))
    p = DoubleNeg()
    assert canonicalize(m, [p], top_down=top_down)
    body = list(m.regions[0].blocks[0].first_op.regions[0].blocks[0].ops)
    assert [op.name for op in body] == ["func.return"]  # n is even: the chain cancels out
    assert p.calls <= 3 * n


def test_benefit_order_and_any_op_patterns() -> None:
    class Tag(RewritePattern):
        def __init__(self, label: str, root, benefit: int) -> None:
            super().__init__(root, benefit, debug_name=label)
            self.label = label

        def match_and_rewrite(self, op, rewriter) -> bool:
            if "tag" in op.attributes:
                return False
            with rewriter.modifying(op):
                op.attributes["tag"] = StringAttr(self.label)
            return True

    def run(*patterns) -> str:
        m = parse(func_text('  "rwtest.effect"(%a) : (i32) -> ()\n  "func.return"() : () -> ()'))
        canonicalize(m, patterns)
        effect = m.regions[0].blocks[0].first_op.regions[0].blocks[0].first_op
        return effect.attributes["tag"].value

    assert run(Tag("low", "rwtest.effect", 1), Tag("high", "rwtest.effect", 2)) == "high"
    assert run(Tag("specific", "rwtest.effect", 2), Tag("any", None, 2)) == "specific"  # ties: op's own first
    assert run(Tag("any", None, 3), Tag("specific", "rwtest.effect", 2)) == "any"
    assert run(Tag("first", "rwtest.effect", 1), Tag("second", "rwtest.effect", 1)) == "first"
    # A pattern rooted at a trait applies to every op with it.
    applicator = PatternApplicator([Tag("comm", Commutative, 1)])
    assert [p.debug_name for p in applicator.patterns_for(RwAddOp.__new__(RwAddOp))] == ["comm"]
    assert applicator.patterns_for(RwNegOp.__new__(RwNegOp)) == []


def test_declarative_patterns() -> None:
    """A source tree matches the defining ops of operands; a name bound twice must be the same
    value; `#c` binds an integer constant; `where` constrains; the replacement's new ops take
    their types from their operands and constants are made with the dialect's constant op; the
    benefit is the number of ops in the source."""
    neg_of_add = DeclarativePattern("NegOfAddConstant", (RwNegOp, (RwAddOp, "x", "#c")),
                                    lambda m, b: b(RwAddOp, b(RwNegOp, m.x), b.integer(-m.c.value)),
                                    constant_op="rwtest.const")
    add_of_negs = DeclarativePattern("AddOfNegs", (RwAddOp, (RwNegOp, "x"), (RwNegOp, "x")),
                                     lambda m, b: b(RwNegOp, b(RwAddOp, m.x, m.x)), lambda m: m.type == i32,
                                     constant_op="rwtest.const")
    assert (neg_of_add.root, neg_of_add.benefit, neg_of_add.debug_name) == ("rwtest.neg", 2, "NegOfAddConstant")
    assert (add_of_negs.root, add_of_negs.benefit) == ("rwtest.add", 3)
    m = parse(func_text('''  %c = "rwtest.const"() <{value = 5 : i32}> : () -> i32
  %0 = "rwtest.add"(%a, %c) : (i32, i32) -> i32
  %1 = "rwtest.neg"(%0) : (i32) -> i32
  %2 = "rwtest.neg"(%a) : (i32) -> i32
  %3 = "rwtest.neg"(%b) : (i32) -> i32
  %4 = "rwtest.add"(%2, %2) : (i32, i32) -> i32
  %5 = "rwtest.add"(%2, %3) : (i32, i32) -> i32
  %6 = "rwtest.add"(%a, %b) : (i32, i32) -> i32
  %7 = "rwtest.neg"(%6) : (i32) -> i32
  "func.return"(%1, %4, %5, %7) : (i32, i32, i32, i32) -> ()''', args="%a: i32, %b: i32", results="i32, i32, i32, i32"))
    assert canonicalize(m, [neg_of_add, add_of_negs])
    assert generic(m) == '''"builtin.module"() ({
  "func.func"() <{function_type = (i32, i32) -> (i32, i32, i32, i32), sym_name = "f"}> ({
  ^bb0(%arg0: i32, %arg1: i32):
    %0 = "rwtest.const"() <{value = -5 : i32}> : () -> i32
    %1 = "rwtest.neg"(%arg0) : (i32) -> i32
    %2 = "rwtest.add"(%1, %0) : (i32, i32) -> i32
    %3 = "rwtest.neg"(%arg0) : (i32) -> i32
    %4 = "rwtest.neg"(%arg1) : (i32) -> i32
    %5 = "rwtest.add"(%arg0, %arg0) : (i32, i32) -> i32
    %6 = "rwtest.neg"(%5) : (i32) -> i32
    %7 = "rwtest.add"(%3, %4) : (i32, i32) -> i32
    %8 = "rwtest.add"(%arg0, %arg1) : (i32, i32) -> i32
    %9 = "rwtest.neg"(%8) : (i32) -> i32
    "func.return"(%2, %6, %7, %9) : (i32, i32, i32, i32) -> ()
  }) : () -> ()
}) : () -> ()
'''


def test_function_patterns() -> None:
    @pattern("rwtest.neg", benefit=2)
    def neg_of_const(op, rewriter) -> bool:
        value = constant_value(op.operands[0])
        if not isinstance(value, IntegerAttr):
            return False
        negated = IntegerAttr(value.type, -value.value)
        new = rewriter.create("rwtest.const", (), [op.results[0].type], {"value": negated})
        rewriter.replace_op(op, new)
        return True

    assert neg_of_const.benefit == 2 and neg_of_const.debug_name == "neg_of_const"
    m = parse(func_text('''  %c = "rwtest.const"() <{value = 5 : i32}> : () -> i32
  %0 = "rwtest.neg"(%c) : (i32) -> i32
  "func.return"(%0) : (i32) -> ()''', results="i32"))
    canonicalize(m, [neg_of_const])
    assert '"rwtest.const"() <{value = -5 : i32}>' in generic(m)
    assert "rwtest.neg" not in generic(m)


def test_trivially_dead_ops() -> None:
    m = parse(func_text('''  %0 = "rwtest.neg"(%a) : (i32) -> i32
  %1 = "rwtest.neg"(%0) : (i32) -> i32
  %2 = "test.unknown"(%a) : (i32) -> i32
  "rwtest.effect"(%a) : (i32) -> ()
  %3 = "rwtest.region"() ({
    %4 = "rwtest.neg"(%a) : (i32) -> i32
    "rwtest.yield"(%4) : (i32) -> ()
  }) : () -> i32
  %5 = "rwtest.region"() ({
    "rwtest.effect"(%a) : (i32) -> ()
    "rwtest.yield"(%a) : (i32) -> ()
  }) : () -> i32
  "func.return"() : () -> ()'''))
    f = m.regions[0].blocks[0].first_op
    ops = {op.name + str(i): op for i, op in enumerate(f.regions[0].blocks[0].ops)}
    assert is_op_trivially_dead(ops["rwtest.neg1"]) and not is_op_trivially_dead(ops["rwtest.neg0"])
    assert not is_op_trivially_dead(ops["test.unknown2"])  # unregistered: effects unknown
    assert not is_op_trivially_dead(ops["func.return6"])  # terminator
    assert not is_op_trivially_dead(f)  # a symbol
    assert is_pure(ops["rwtest.region4"]) and not is_pure(ops["rwtest.region5"])
    canonicalize(m)
    assert [op.name for op in f.regions[0].blocks[0].ops] == ["test.unknown", "rwtest.effect", "rwtest.region",
                                                              "func.return"]


def test_fold_materializes_hoists_and_dedupes_constants() -> None:
    """Folded constants are built by the dialect's materializer, then hoisted to the start of the
    entry block of the nearest isolated region and deduplicated, as MLIR's OperationFolder does;
    unregistered region ops keep their constants (they might be isolated from above)."""
    m = parse(func_text('''  %x = "test.opaque"() : () -> i32
  %c1 = "rwtest.const"() <{value = 1 : i32}> : () -> i32
  %c2 = "rwtest.const"() <{value = 2 : i32}> : () -> i32
  %r = "rwtest.region"() ({
    %s = "rwtest.add"(%c1, %c2) : (i32, i32) -> i32
    %c3 = "rwtest.const"() <{value = 3 : i32}> : () -> i32
    %t = "rwtest.add"(%s, %x) : (i32, i32) -> i32
    "rwtest.yield"(%t, %c3) : (i32, i32) -> ()
  }) : () -> i32
  %u = "test.unregistered_region"() ({
    %c7 = "rwtest.const"() <{value = 7 : i32}> : () -> i32
    "test.use"(%c7) : (i32) -> ()
  }) : () -> i32
  %z = "rwtest.const"() <{value = 0 : i32}> : () -> i32
  %y = "rwtest.add"(%r, %z) : (i32, i32) -> i32
  "func.return"(%y, %u) : (i32, i32) -> ()''', args="", results="i32, i32"))
    assert canonicalize(m)
    assert generic(m) == '''"builtin.module"() ({
  "func.func"() <{function_type = () -> (i32, i32), sym_name = "f"}> ({
    %0 = "rwtest.const"() <{value = 3 : i32}> : () -> i32
    %1 = "test.opaque"() : () -> i32
    %2 = "rwtest.region"() ({
      %5 = "rwtest.add"(%1, %0) : (i32, i32) -> i32
      "rwtest.yield"(%5, %0) : (i32, i32) -> ()
    }) : () -> i32
    %3 = "test.unregistered_region"() ({
      %4 = "rwtest.const"() <{value = 7 : i32}> : () -> i32
      "test.use"(%4) : (i32) -> ()
    }) : () -> i32
    "func.return"(%2, %3) : (i32, i32) -> ()
  }) : () -> ()
}) : () -> ()
'''


def test_fold_op_results() -> None:
    m = parse(func_text('''  %c1 = "rwtest.const"() <{value = 1 : i32}> : () -> i32
  %0 = "rwtest.add"(%c1, %a) : (i32, i32) -> i32
  %1 = "rwtest.add"(%a, %c1) : (i32, i32) -> i32
  %2 = "rwtest.add"(%c1, %c1) : (i32, i32) -> i32
  "func.return"(%0, %1, %2) : (i32, i32, i32) -> ()''', results="i32, i32, i32"))
    ops = list(m.regions[0].blocks[0].first_op.regions[0].blocks[0].ops)
    a = ops[0].results[0]
    assert constant_value(a) is IntegerAttr(i32, 1)
    assert fold_op(ops[3]) == [IntegerAttr(i32, 2)]
    assert fold_op(ops[2]) is None  # non-constant on the left already
    # A commutative op with a constant on the left is folded in place: constants move right.
    assert fold_op(ops[1]) is IN_PLACE and ops[1].operands[1] is a


def test_commutative_constants_move_right() -> None:
    m = parse(func_text('''  %c1 = "rwtest.const"() <{value = 1 : i32}> : () -> i32
  %0 = "rwtest.add"(%c1, %a) : (i32, i32) -> i32
  "func.return"(%0) : (i32) -> ()''', results="i32"))
    canonicalize(m)
    assert '"rwtest.add"(%arg0, %0)' in generic(m)


def test_non_convergence_is_reported() -> None:
    class Flip(RewritePattern):
        root = "rwtest.effect"

        def match_and_rewrite(self, op, rewriter) -> bool:
            with rewriter.modifying(op):
                op.attributes["n"] = IntegerAttr(i32, op.attributes.get("n", IntegerAttr(i32, 0)).value + 1)
            return True

    m = parse(func_text('  "rwtest.effect"(%a) : (i32) -> ()\n  "func.return"() : () -> ()'))
    assert not canonicalize(m, [Flip()], max_iterations=3, max_num_rewrites=5)
    effect = m.regions[0].blocks[0].first_op.regions[0].blocks[0].first_op
    assert effect.attributes["n"].value == 15  # 3 iterations of at most 5 rewrites


def test_convergence_needs_one_quiet_iteration() -> None:
    m = parse(func_text('''  %0 = "rwtest.neg"(%a) : (i32) -> i32
  %1 = "rwtest.neg"(%0) : (i32) -> i32
  "func.return"(%1) : (i32) -> ()''', results="i32"))
    assert not canonicalize(m, [DoubleNeg()], max_iterations=1)  # changed in its only iteration
    assert canonicalize(m, [DoubleNeg()], max_iterations=1)


class Recorder(RewriteListener):
    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []

    def notify_op_inserted(self, op) -> None:
        self.events.append(("inserted", op.name))

    def notify_op_modified(self, op) -> None:
        self.events.append(("modified", op.name))

    def notify_op_replaced(self, op, values) -> None:
        self.events.append(("replaced", op.name))

    def notify_op_erased(self, op) -> None:
        self.events.append(("erased", op.name))


def test_driver_forwards_notifications() -> None:
    m = parse(func_text('''  %c1 = "rwtest.const"() <{value = 1 : i32}> : () -> i32
  %c2 = "rwtest.const"() <{value = 2 : i32}> : () -> i32
  %0 = "rwtest.add"(%c1, %c2) : (i32, i32) -> i32
  "func.return"(%0) : (i32) -> ()''', args="", results="i32"))
    rec = Recorder()
    canonicalize(m, listener=rec)
    assert rec.events == [("inserted", "rwtest.const"), ("replaced", "rwtest.add"), ("modified", "func.return"),
                          ("erased", "rwtest.add"), ("erased", "rwtest.const"), ("erased", "rwtest.const")]


# The rewriter -------------------------------------------------------------------------------

def test_rewriter_replace_erase_and_clone() -> None:
    m = parse(func_text('''  %0 = "rwtest.neg"(%a) : (i32) -> i32
  %r = "rwtest.region"() ({
    %1 = "rwtest.neg"(%0) : (i32) -> i32
    %2 = "rwtest.neg"(%1) : (i32) -> i32
    "rwtest.yield"(%2) : (i32) -> ()
  }) : () -> i32
  "func.return"(%0) : (i32) -> ()''', results="i32"))
    rec = Recorder()
    rw = PatternRewriter(rec)
    block = m.regions[0].blocks[0].first_op.regions[0].blocks[0]
    neg, region, ret = list(block.ops)
    rw.set_insertion_point_before(ret)
    copy = rw.clone(region)
    assert rec.events == [("inserted", "rwtest.region"), ("inserted", "rwtest.neg"), ("inserted", "rwtest.neg"),
                          ("inserted", "rwtest.yield")]
    rec.events.clear()
    rw.erase_op(region)  # nested ops first, users before definitions
    assert rec.events == [("erased", "rwtest.yield"), ("erased", "rwtest.neg"), ("erased", "rwtest.neg"),
                          ("erased", "rwtest.region")]
    rec.events.clear()
    rw.set_insertion_point_before(neg)
    new = rw.create("rwtest.neg", [block.args[0]], [i32])
    rw.replace_op(neg, new)
    assert rec.events == [("inserted", "rwtest.neg"), ("replaced", "rwtest.neg"), ("modified", "rwtest.neg"),
                          ("modified", "func.return"), ("erased", "rwtest.neg")]
    assert copy.regions[0].blocks[0].first_op.operands[0] is new.results[0]
    with pytest.raises(lir.IRError):
        rw.erase_op(new)  # still used
    m.verify()


def test_rewriter_inline_block_and_move() -> None:
    m = parse(func_text('''  %r = "test.holder"() ({
  ^bb0(%x: i32):
    %1 = "rwtest.neg"(%x) : (i32) -> i32
    "test.sink"(%1) : (i32) -> ()
  }) : () -> i32
  %2 = "rwtest.neg"(%a) : (i32) -> i32
  "func.return"(%2) : (i32) -> ()''', results="i32"))
    rec = Recorder()
    rw = PatternRewriter(rec)
    block = m.regions[0].blocks[0].first_op.regions[0].blocks[0]
    holder, neg, ret = list(block.ops)
    rw.inline_block_before(holder.regions[0].blocks[0], block, holder, [block.args[0]])
    assert [op.name for op in block.ops] == ["rwtest.neg", "test.sink", "test.holder", "rwtest.neg", "func.return"]
    assert holder.regions[0].blocks == []
    assert ("inserted", "rwtest.neg") in rec.events and ("inserted", "test.sink") in rec.events
    rw.erase_op(holder)
    rw.move_op_before(neg, block.first_op)
    assert [op.name for op in block.ops] == ["rwtest.neg", "rwtest.neg", "test.sink", "func.return"]
    m.verify()
    assert rw.notify_match_failure(ret, "no reason") is False


# MLIR as the oracle --------------------------------------------------------------------------

_JAX_CTX = None


def _upstream(text: str, pipeline: str) -> str:
    """MLIR's own result: parse `text` in jaxlib and run `pipeline`."""
    global _JAX_CTX
    jax_mlir = pytest.importorskip("jax._src.interpreters.mlir", reason="jaxlib is the oracle for MLIR's passes")
    from jax._src.lib.mlir import ir as jir
    from jax._src.lib.mlir import passmanager
    if _JAX_CTX is None:
        _JAX_CTX = jax_mlir.make_ir_context()
        _JAX_CTX.allow_unregistered_dialects = True
    with _JAX_CTX:
        module = jir.Module.parse(text)
        passmanager.PassManager.parse(pipeline).run(module.operation)
        return module.operation.get_asm(print_generic_op_form=True)


_OF = "<{overflowFlags = #arith.overflow<none>}>"


def random_arith_program(rng: random.Random) -> str:
    """A function mixing foldable constant expressions, values the folder cannot see through
    (arguments, unregistered ops, region results) and ops on both, in nested unregistered regions.
    Mixed ops are only used by sinks, so that no reassociation pattern applies."""
    counter = [0]

    def fresh() -> str:
        counter[0] += 1
        return f"%v{counter[0]}"

    def block(depth: int, opaque: list[str], consts: list[tuple[str, int]], indent: str) -> list[str]:
        out = []
        for _ in range(rng.randint(3, 12)):
            k = rng.random()
            if k < 0.3:
                v, c = fresh(), rng.randint(0, 5)
                out.append(f'{indent}{v} = "arith.constant"() <{{value = {c} : i32}}> : () -> i32')
                consts.append((v, c))
            elif k < 0.5 and len(consts) >= 2:
                (a, ca), (b, cb) = rng.sample(consts, 2)
                kind = rng.choice(["addi", "muli"])
                v = fresh()
                out.append(f'{indent}{v} = "arith.{kind}"({a}, {b}) {_OF} : (i32, i32) -> i32')
                consts.append((v, ca + cb if kind == "addi" else ca * cb))
            elif k < 0.65 and consts and opaque:
                (a, ca), b = rng.choice(consts), rng.choice(opaque)
                kind = rng.choice(["addi", "muli"])
                if kind == "muli" and ca in (0, 1):
                    continue
                x, y = (a, b) if rng.random() < 0.5 else (b, a)
                v = fresh()
                out.append(f'{indent}{v} = "arith.{kind}"({x}, {y}) {_OF} : (i32, i32) -> i32')
                out.append(f'{indent}"test.sink"({v}) : (i32) -> ()')
            elif k < 0.75:
                a, b = rng.choice(opaque), rng.choice(opaque)
                v = fresh()
                out.append(f'{indent}{v} = "arith.addi"({a}, {b}) {_OF} : (i32, i32) -> i32')
                out.append(f'{indent}"test.sink"({v}) : (i32) -> ()')
            elif k < 0.85:
                v = fresh()
                ins = [x for x, _ in rng.sample(consts, min(len(consts), 2))] + [rng.choice(opaque)]
                out.append(f'{indent}{v} = "test.op"({", ".join(ins)}) : ({", ".join(["i32"] * len(ins))}) -> i32')
                opaque.append(v)
            elif depth < 2:
                v = fresh()
                inner = block(depth + 1, list(opaque), list(consts) if rng.random() < 0.5 else [], indent + "  ")
                out += [f'{indent}{v} = "test.region"() ({{', *inner, f'{indent}  "test.yield"() : () -> ()',
                        f"{indent}}}) : () -> i32"]
                opaque.append(v)
        if consts and rng.random() < 0.7:
            out.append(f'{indent}"test.sink"({rng.choice(consts)[0]}) : (i32) -> ()')
        return out

    body = block(0, ["%arg0"], [], "  ")
    return ('"func.func"() <{function_type = (i32) -> (), sym_name = "f"}> ({\n^bb0(%arg0: i32):\n'
            + "\n".join(body) + '\n  "func.return"() : () -> ()\n}) : () -> ()\n')


@pytest.mark.parametrize("top_down", [True, False])
def test_greedy_driver_matches_mlir_on_random_programs(top_down: bool) -> None:
    """Same fold order, constant hoisting and deduplication order, dead-code removal and operand
    swaps as MLIR's canonicalizer, byte for byte, in both traversal orders."""
    pipeline = f"builtin.module(func.func(canonicalize{{top-down={'true' if top_down else 'false'}}}))"
    for seed in range(60):
        text = random_arith_program(random.Random(seed))
        expected = _upstream(text, pipeline)
        m = parse(text)
        canonicalize(m, top_down=top_down)
        assert generic(m) == expected, f"seed {seed}"


def test_hoisting_order_matches_mlir() -> None:
    """Constants already at the top stay in order; folded ones are materialized in place and then
    moved to the front in the next iteration, ahead of the earlier ones (MLIR's rule)."""
    text = func_text(f'''  %x = "test.foo"() : () -> i32
  %0 = "arith.constant"() <{{value = 1 : i32}}> : () -> i32
  %1 = "arith.constant"() <{{value = 2 : i32}}> : () -> i32
  %2 = "arith.addi"(%0, %1) {_OF} : (i32, i32) -> i32
  %y = "test.bar"(%2) : (i32) -> i32
  %3 = "arith.muli"(%2, %1) {_OF} : (i32, i32) -> i32
  %4 = "arith.addi"(%0, %a) {_OF} : (i32, i32) -> i32
  %5 = "arith.constant"() <{{value = 0 : i32}}> : () -> i32
  %6 = "arith.addi"(%4, %5) {_OF} : (i32, i32) -> i32
  %7 = "arith.constant"() <{{value = 7 : i32}}> : () -> i32
  %8 = "arith.muli"(%7, %3) {_OF} : (i32, i32) -> i32
  %9 = "test.sub"(%8, %6) : (i32, i32) -> i32
  %10 = "arith.constant"() <{{value = 2 : i32}}> : () -> i32
  "test.use"(%9, %10, %x, %y) : (i32, i32, i32, i32) -> ()
  "func.return"(%9) : (i32) -> ()''', results="i32")
    m = parse(text)
    canonicalize(m)
    assert generic(m) == _upstream(text, "builtin.module(func.func(canonicalize))")
