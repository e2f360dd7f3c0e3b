"""The rule tables an op may need a rule in, and the ops' declared exceptions.

Every table is one line of `RULE_TABLES`: its name and the test of whether it holds a rule for an
op name. The tables themselves stay where the backends and transformations read them
(`KERNELS`, `TORCH_KERNELS`, `CODEGEN_RULES`, `INTERPRETER_RULES`, `JVP_RULES`, `VJP_RULES`,
`BATCH_RULES`, `SHARDING_RULES`); the op-family modules of `loom.ops` fill them (the `Elementwise`
trait gives batching and sharding rules by itself). An op that has no rule in a table
says so next to its definition in its family, with the reason:

    declare("stablehlo.all_gather", unsupported("collectives run only in partitioned programs"))
    declare("chlo.next_after", unsupported("piecewise constant: no derivative"), tables=("jvp", "vjp"))

`tests/transforms/test_op_coverage.py` walks every op of every dialect against every table and fails unless
each has a rule or such a declaration. At run time a missing rule stays the table's own
`MissingRuleError`, naming the op and the table. Adding a table is one line here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from loom.backend.common import TORCH_KERNELS
from loom.backend.compiled import CODEGEN_RULES
from loom.backend.interpreter import INTERPRETER_RULES
from loom.backend.kernels import KERNELS
from loom.ir.opdef import DIALECTS
from loom.transforms.autodiff import VJP_RULES
from loom.transforms.batching import BATCH_RULES
from loom.transforms.forward_ad import JVP_RULES
from loom.transforms.sharding_propagation import has_sharding_rule

# table name -> whether the table has a rule for an op name
RULE_TABLES: dict[str, Callable[[str], bool]] = {
    "interpreter": lambda name: name in INTERPRETER_RULES or name in KERNELS,
    "numpy": lambda name: name in CODEGEN_RULES or name in KERNELS,
    "torch": lambda name: _torch_kernels_loaded() and (name in CODEGEN_RULES or name in TORCH_KERNELS),
    "jvp": lambda name: name in JVP_RULES,
    "vjp": lambda name: name in VJP_RULES,
    "batching": lambda name: name in BATCH_RULES,
    "sharding": has_sharding_rule,
}

def _torch_kernels_loaded() -> bool:
    from loom.backend import torch_kernels  # noqa: F401  (imports torch; registers the rest of the table)
    return True


# The dialects whose ops every table covers (func, builtin and arith are structure or folded away).
COVERED_DIALECTS = ("stablehlo", "chlo", "ad", "knn", "stack", "mpmd")


@dataclass(frozen=True)
class Unsupported:
    """An explicit absence of a rule, with the reason; `until_loaded` names the optional module
    whose import registers the rule after all (the declaration then stands only until it loads)."""

    reason: str
    until_loaded: str | None = None


def unsupported(reason: str, until_loaded: str | None = None) -> Unsupported:
    return Unsupported(reason, until_loaded)


# (op name, table name) -> why the op has no rule in that table
UNSUPPORTED: dict[tuple[str, str], Unsupported] = {}


def declare(names: str | Iterable[str], why: Unsupported, tables: Iterable[str] | None = None) -> None:
    """Declare that the ops `names` have no rule in `tables` (default: every table), and why."""
    for name in [names] if isinstance(names, str) else names:
        for table in RULE_TABLES if tables is None else tables:
            if table not in RULE_TABLES:
                raise KeyError(f"no rule table named {table!r} (tables: {', '.join(RULE_TABLES)})")
            UNSUPPORTED[(name, table)] = why


def register(table: dict, name: str, rule: object) -> None:
    """Put `rule` for op `name` into `table`, refusing a second rule for the same op (one op, one
    place)."""
    if name in table and table[name] is not rule:
        raise ValueError(f"op '{name}' already has a rule in this table ({table[name]!r})")
    table[name] = rule


def covered_ops() -> list[str]:
    """The names of every op of the covered dialects."""
    return sorted(n for d in COVERED_DIALECTS if d in DIALECTS for n in DIALECTS[d].ops)


def missing_rules() -> list[tuple[str, str]]:
    """(op, table) pairs with neither a rule nor a declared reason."""
    return [(op, table) for op in covered_ops() for table, has_rule in RULE_TABLES.items()
            if not has_rule(op) and (op, table) not in UNSUPPORTED]


__all__ = ["COVERED_DIALECTS", "RULE_TABLES", "UNSUPPORTED", "Unsupported", "covered_ops", "declare",
           "missing_rules", "register", "unsupported"]
