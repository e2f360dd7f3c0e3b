"""The IR's objects: values with use lists, operations, blocks and regions.

As in MLIR, an Operation owns Regions, a Region owns Blocks, a Block owns a doubly linked list of
Operations; every Value (an op result or a block argument) knows its uses, so replacing a value
or erasing an op is O(uses), never a walk over the program.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from loom.ir.attributes import UNKNOWN_LOC, Attribute, Location
from loom.ir.types import Type

if TYPE_CHECKING:
    from loom.ir.opdef import OpBase, OpDef


@contextmanager
def paused_gc():
    """Pause the cyclic garbage collector during bulk work (parse, print, verify, passes).

    IR objects form many cycles (op <-> results <-> uses), so collections triggered while a large
    program is built rescan it again and again. When the outermost pause ends, the objects made
    meanwhile are moved to the oldest generation (freeze + unfreeze splices the lists without a
    scan) instead of being scanned at once as young objects; they are still collected by later
    full collections. Nested pauses are fine."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.freeze()
            gc.unfreeze()
            gc.enable()


_NO_ENTRIES: Mapping[str, Any] = MappingProxyType({})


class IRError(Exception):
    """Misuse of the IR API (erasing an op whose results are still used, ...)."""


class PendingLocation:
    """A source position whose line and column are computed on first use (parsing a large file
    makes one per op; most are never looked at)."""

    __slots__ = ("resolver", "pos")

    def __init__(self, resolver, pos: int) -> None:
        self.resolver = resolver
        self.pos = pos

    def resolve(self) -> Location:
        return self.resolver(self.pos)


class ResolvingLocation:
    """The `location` of an object that stores it in `_location`, where it may be a
    PendingLocation: resolved, and stored resolved, when first read."""

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        loc = obj._location
        if type(loc) is PendingLocation:
            loc = obj._location = loc.resolve()
        return loc

    def __set__(self, obj: Any, loc: Location | PendingLocation) -> None:
        obj._location = loc


class Use:
    """One operand slot of an operation: `owner.operands[index] is value`. The uses of a value form
    a doubly linked list through the uses themselves (as in MLIR): adding or removing one is O(1)
    and a value pays no container of its own."""

    __slots__ = ("value", "owner", "index", "_prev", "_next")

    def __init__(self, value: Value, owner: Operation, index: int) -> None:
        self.value = value
        self.owner = owner
        self.index = index
        self._prev: Use | None = None
        self._next: Use | None = None
        value._link(self)

    def unlink(self) -> None:
        """Take this use out of its value's use list (the slot keeps pointing at the value)."""
        v, p, n = self.value, self._prev, self._next
        if p is None:
            v._head = n
        else:
            p._next = n
        if n is None:
            v._tail = p
        else:
            n._prev = p
        self._prev = self._next = None

    def set(self, value: Value) -> None:
        """Point this slot at `value`, moving the use to the end of its use list."""
        self.unlink()
        self.value = value
        value._link(self)


class UseList:
    """The uses of a value, in the order they were made: a read-only view with O(1) `bool` and
    membership; iteration tolerates unlinking the use it is at."""

    __slots__ = ("_value",)

    def __init__(self, value: Value) -> None:
        self._value = value

    def __iter__(self) -> Iterator[Use]:
        u = self._value._head
        while u is not None:
            nxt = u._next
            yield u
            u = nxt

    def __bool__(self) -> bool:
        return self._value._head is not None

    def __len__(self) -> int:
        n, u = 0, self._value._head
        while u is not None:
            n, u = n + 1, u._next
        return n

    def __contains__(self, use: object) -> bool:
        return (isinstance(use, Use) and use.value is self._value
                and (use._prev is not None or self._value._head is use))

    def __repr__(self) -> str:
        return f"UseList({list(self)!r})"


class Value:
    """An SSA value: an operation result or a block argument."""

    __slots__ = ("type", "_head", "_tail", "name_hint")

    def __init__(self, type: Type) -> None:
        self.type = type
        self._head: Use | None = None
        self._tail: Use | None = None
        self.name_hint: str | None = None

    def _link(self, use: Use) -> None:
        tail = self._tail
        use._prev, use._next = tail, None
        if tail is None:
            self._head = use
        else:
            tail._next = use
        self._tail = use

    @property
    def uses(self) -> UseList:
        return UseList(self)

    @property
    def has_uses(self) -> bool:
        return self._head is not None

    @property
    def users(self) -> list[Operation]:
        seen: dict[Operation, None] = {}
        for u in self.uses:
            seen[u.owner] = None
        return list(seen)

    def replace_all_uses_with(self, new: Value) -> None:
        if new is self or self._head is None:
            return
        u: Use | None = self._head
        while u is not None:
            u.value = new
            u = u._next
        # splice the whole list onto the end of `new`'s
        head, tail = self._head, self._tail
        if new._tail is None:
            new._head = head
        else:
            new._tail._next = head
            head._prev = new._tail
        new._tail = tail
        self._head = self._tail = None

    def replace_uses_if(self, new: Value, predicate) -> None:
        for use in [u for u in self.uses if predicate(u)]:
            use.set(new)

    @property
    def owner_op(self) -> Operation | None:
        raise NotImplementedError

    @property
    def parent_block(self) -> Block | None:
        raise NotImplementedError


class OpResult(Value):
    __slots__ = ("op", "index")

    def __init__(self, type: Type, op: Operation, index: int) -> None:
        Value.__init__(self, type)
        self.op = op
        self.index = index

    @property
    def owner_op(self) -> Operation:
        return self.op

    @property
    def parent_block(self) -> Block | None:
        return self.op.parent

    def __repr__(self) -> str:
        return f"<OpResult #{self.index} of {self.op.name}: {self.type}>"


class BlockArgument(Value):
    __slots__ = ("block", "index", "location")

    def __init__(self, type: Type, block: Block, index: int, location: Location = UNKNOWN_LOC) -> None:
        Value.__init__(self, type)
        self.block = block
        self.index = index
        self.location = location

    @property
    def owner_op(self) -> None:
        return None

    @property
    def parent_block(self) -> Block:
        return self.block

    def __repr__(self) -> str:
        return f"<BlockArgument #{self.index}: {self.type}>"


class BlockUse:
    """One successor slot of a terminator."""

    __slots__ = ("block", "owner", "index")

    def __init__(self, block: Block, owner: Operation, index: int) -> None:
        self.block = block
        self.owner = owner
        self.index = index


class _SlottedSubclasses(type):
    """Gives every subclass that declares no `__slots__` an empty one: an op class adds no
    per-instance `__dict__` (a large program holds millions of ops)."""

    def __new__(mcls, name: str, bases: tuple, namespace: dict, **kwargs: Any) -> type:
        namespace.setdefault("__slots__", ())
        return super().__new__(mcls, name, bases, namespace, **kwargs)


class Operation(metaclass=_SlottedSubclasses):
    """A generic operation. Registered ops are subclasses that declare their structure
    (see loom.ir.opdef); unregistered ops are plain Operations with a `name`."""

    __slots__ = ("name", "_operands", "results", "_properties", "_attributes", "regions", "_successors",
                 "_location", "parent", "_prev", "_next", "_order", "__weakref__")

    definition: OpDef | None = None  # set on registered subclasses
    name: str  # a class attribute of registered ops; given to each generic op

    def __init__(self, name: str | None = None, operands: Sequence[Value] = (), result_types: Sequence[Type] = (),
                 properties: dict[str, Attribute] | None = None, attributes: dict[str, Attribute] | None = None,
                 regions: Iterable[Region] | int = (), successors: Sequence[Block] = (),
                 location: Location = UNKNOWN_LOC) -> None:
        definition = type(self).definition
        if definition is None:
            self.name = name  # type: ignore[assignment]  # (None only for ops made nameless by mistake)
        if operands:
            self._operands: tuple[Use, ...] = tuple([Use(v, self, i) for i, v in enumerate(operands)])
        else:
            self._operands = ()
        self.results = tuple([OpResult(t, self, i) for i, t in enumerate(result_types)]) if result_types else ()
        # An op without properties beyond its definition's defaults, or without attributes, holds no
        # dict (None) until one is written: a large program has millions of such ops.
        if properties or (properties is not None and type(properties) is not dict):  # (a marked empty dict stays)
            if definition is not None and definition.prop_defaults:
                # Default-valued properties are always present, as in MLIR (its generic form prints them).
                missing = [(k, v) for k, v in definition.prop_defaults if k not in properties]
                if missing:  # copy: the caller's dict may be shared
                    properties = {**properties, **dict(missing)}
            self._properties: dict[str, Attribute] | None = properties
        else:
            self._properties = None
        self._attributes: dict[str, Attribute] | None = attributes or None
        self.regions: tuple[Region, ...] = ()  # tuples, shared when empty: a large program has millions of ops
        if regions:
            if isinstance(regions, int):
                regions = [Region() for _ in range(regions)]
            for r in regions:
                self.add_region(r)
        if successors:
            self._successors: tuple[BlockUse, ...] = tuple([BlockUse(b, self, i) for i, b in enumerate(successors)])
            for s in self._successors:
                s.block._uses[s] = None
        else:
            self._successors = ()
        self._location: Location | PendingLocation = location
        self.parent: Block | None = None
        self._prev: Operation | None = None
        self._next: Operation | None = None
        self._order = -1

    @staticmethod
    def create(name: str, operands: Sequence[Value] = (), result_types: Sequence[Type] = (),
               properties: dict[str, Attribute] | None = None, attributes: dict[str, Attribute] | None = None,
               regions: Iterable[Region] | int = (), successors: Sequence[Block] = (),
               location: Location = UNKNOWN_LOC) -> Operation:
        """Make an op of the class registered for `name` (or a generic one), without running its
        builder: the structural constructor used by the parser, cloning and rewriting."""
        cls = _OP_CLASSES.get(name)
        if cls is None:
            return Operation(name, operands, result_types, properties, attributes, regions, successors, location)
        op = cls.__new__(cls)
        Operation.__init__(op, name, operands, result_types, properties, attributes, regions, successors, location)
        return op

    location = ResolvingLocation()

    # Properties and attributes ------------------------------------------------------------
    @property
    def properties(self) -> dict[str, Attribute]:
        """The inherent attributes (MLIR's properties), default-valued ones included; a dict of the
        op's own, made on first access."""
        d = self._properties
        if d is None:
            d = self._properties = dict(self.read_properties())
        return d

    @properties.setter
    def properties(self, value: dict[str, Attribute]) -> None:
        self._properties = value

    @property
    def attributes(self) -> dict[str, Attribute]:
        """The discardable attributes; a dict of the op's own, made on first access."""
        d = self._attributes
        if d is None:
            d = self._attributes = {}
        return d

    @attributes.setter
    def attributes(self, value: dict[str, Attribute]) -> None:
        self._attributes = value

    def read_properties(self) -> Mapping[str, Attribute]:
        """`properties` for reading only: makes no dict for an op that holds none."""
        d = self._properties
        if d is not None:
            return d
        definition = type(self).definition
        return definition.default_props if definition is not None else _NO_ENTRIES

    def read_attributes(self) -> Mapping[str, Attribute]:
        """`attributes` for reading only: makes no dict for an op that holds none."""
        d = self._attributes
        return d if d is not None else _NO_ENTRIES

    # Operands -----------------------------------------------------------------------------
    @property
    def operands(self) -> tuple[Value, ...]:
        return tuple(u.value for u in self._operands)

    @property
    def operand_uses(self) -> tuple[Use, ...]:
        return self._operands

    def set_operand(self, index: int, value: Value) -> None:
        self._operands[index].set(value)

    def set_operands(self, values: Sequence[Value]) -> None:
        for u in self._operands:
            u.unlink()
        self._operands = tuple([Use(v, self, i) for i, v in enumerate(values)])

    @property
    def result(self) -> OpResult:
        if len(self.results) != 1:
            raise IRError(f"'{self.name}' has {len(self.results)} results, not one")
        return self.results[0]

    @property
    def result_types(self) -> tuple[Type, ...]:
        return tuple(r.type for r in self.results)

    @property
    def operand_types(self) -> tuple[Type, ...]:
        return tuple(u.value.type for u in self._operands)

    # Successors ---------------------------------------------------------------------------
    @property
    def successors(self) -> tuple[Block, ...]:
        return tuple(s.block for s in self._successors)

    def set_successor(self, index: int, block: Block) -> None:
        s = self._successors[index]
        del s.block._uses[s]
        s.block = block
        block._uses[s] = None

    # Regions ------------------------------------------------------------------------------
    def add_region(self, region: Region | None = None) -> Region:
        region = region if region is not None else Region()
        if region.parent is not None:
            raise IRError("region already belongs to an operation")
        region.parent = self
        self.regions = (*self.regions, region)
        return region

    # Attributes ---------------------------------------------------------------------------
    def get_attr(self, name: str, default: Any = None) -> Any:
        """An inherent attribute (property) or, failing that, a discardable one."""
        v = self.read_properties().get(name)
        if v is None:
            v = self.read_attributes().get(name, default)
        return v

    # Position -----------------------------------------------------------------------------
    @property
    def parent_region(self) -> Region | None:
        return self.parent.parent if self.parent is not None else None

    @property
    def parent_op(self) -> Operation | None:
        b = self.parent
        if b is None or b.parent is None:
            return None
        return b.parent.parent

    @property
    def next_op(self) -> Operation | None:
        return self._next

    @property
    def prev_op(self) -> Operation | None:
        return self._prev

    def is_before_in_block(self, other: Operation) -> bool:
        block = self.parent
        if block is None or block is not other.parent:
            raise IRError("ops are not in the same block")
        if not block._order_valid:
            block._renumber()
        return self._order < other._order

    def is_ancestor(self, other: Operation) -> bool:
        """True if `other` is `self` or nested inside one of its regions."""
        op: Operation | None = other
        while op is not None:
            if op is self:
                return True
            op = op.parent_op
        return False

    def detach(self) -> Operation:
        """Unlink from the parent block, keeping operands and uses."""
        block = self.parent
        if block is None:
            return self
        prev, nxt = self._prev, self._next
        if prev is None:
            block._first = nxt
        else:
            prev._next = nxt
        if nxt is None:
            block._last = prev
        else:
            nxt._prev = prev
        self._prev = self._next = None
        self.parent = None
        return self

    def drop_all_references(self) -> None:
        """Drop operand and successor uses of this op and everything nested in it."""
        for u in self._operands:
            u.unlink()
        self._operands = ()
        for s in self._successors:
            del s.block._uses[s]
        self._successors = ()
        for region in self.regions:
            for block in region.blocks:
                for op in block.ops:
                    op.drop_all_references()

    def erase(self) -> None:
        """Remove and destroy this op; its results must have no uses left outside it."""
        for r in self.results:
            if r.uses:
                users = ", ".join(sorted({u.owner.name for u in r.uses}))
                raise IRError(f"cannot erase '{self.name}': result #{r.index} is still used by {users}")
        self.detach()
        self.drop_all_references()

    def move_before(self, anchor: Operation) -> None:
        block = anchor.containing_block()
        self.detach()
        block.insert_before(self, anchor)

    def move_after(self, anchor: Operation) -> None:
        block = anchor.containing_block()
        self.detach()
        block.insert_after(self, anchor)

    def containing_block(self) -> Block:
        """The block this op is in; an IRError if it is in none (detached)."""
        block = self.parent
        if block is None:
            raise IRError(f"'{self.name}' is not in a block")
        return block

    def replace_all_uses_with(self, values: Sequence[Value]) -> None:
        if len(values) != len(self.results):
            raise IRError(f"'{self.name}' has {len(self.results)} results, replaced with {len(values)} values")
        for r, v in zip(self.results, values):
            r.replace_all_uses_with(v)

    # Traversal ----------------------------------------------------------------------------
    def walk(self) -> Iterator[Operation]:
        """Pre-order walk of this op and every op nested in it."""
        stack: list[Operation] = [self]
        while stack:
            op = stack.pop()
            yield op
            regions = op.regions
            if regions:
                nested = []
                for region in regions:
                    for block in region.blocks:
                        o = block._first
                        while o is not None:
                            nested.append(o)
                            o = o._next
                nested.reverse()
                stack.extend(nested)

    def walk_post_order(self) -> Iterator[Operation]:
        for region in self.regions:
            for block in region.blocks:
                for op in list(block.ops):
                    yield from op.walk_post_order()
        yield self

    # Cloning ------------------------------------------------------------------------------
    def clone(self, mapping: dict[Any, Any] | None = None) -> Operation:
        """Deep copy. `mapping` maps old values/blocks to new ones; operands not in it are kept
        (values from enclosing scopes), and it is filled with this op's results and blocks."""
        mapping = {} if mapping is None else mapping
        operands = [mapping.get(v, v) for v in self.operands]
        succs = [mapping.get(b, b) for b in self.successors]
        new = Operation.create(self.name, operands, self.result_types, dict(self.properties),
                               dict(self.attributes), (), succs, self.location)
        for old_r, new_r in zip(self.results, new.results):
            mapping[old_r] = new_r
        for region in self.regions:
            new.add_region(region.clone(mapping))
        return new

    # Convenience --------------------------------------------------------------------------
    def verify(self) -> None:
        """Run the verifier on this op and everything nested in it; raise VerifyError."""
        from loom.ir.verifier import verify
        verify(self)

    def __str__(self) -> str:
        from loom.ir.printer import print_op
        return print_op(self)

    def __repr__(self) -> str:
        return f"<Operation {self.name}>"

    @property
    def is_registered(self) -> bool:
        return type(self).definition is not None


# The registry of op classes by name; filled by loom.ir.opdef.register_op.
_OP_CLASSES: dict[str, type[OpBase]] = {}


class Block:
    """A list of operations with arguments; the last op of a block in an SSACFG region is a
    terminator."""

    __slots__ = ("args", "_first", "_last", "parent", "_uses", "_order_valid", "__weakref__")

    def __init__(self, arg_types: Sequence[Type] = (), arg_locations: Sequence[Location] | None = None) -> None:
        locs = arg_locations if arg_locations is not None else [UNKNOWN_LOC] * len(arg_types)
        self.args: list[BlockArgument] = [BlockArgument(t, self, i, loc) for i, (t, loc) in
                                          enumerate(zip(arg_types, locs))]
        self._first: Operation | None = None
        self._last: Operation | None = None
        self.parent: Region | None = None
        self._uses: dict[BlockUse, None] = {}
        self._order_valid = True

    # Arguments ----------------------------------------------------------------------------
    def add_argument(self, type: Type, location: Location = UNKNOWN_LOC) -> BlockArgument:
        arg = BlockArgument(type, self, len(self.args), location)
        self.args.append(arg)
        return arg

    def insert_argument(self, index: int, type: Type, location: Location = UNKNOWN_LOC) -> BlockArgument:
        arg = BlockArgument(type, self, index, location)
        self.args.insert(index, arg)
        for i, a in enumerate(self.args):
            a.index = i
        return arg

    def erase_argument(self, index: int) -> None:
        arg = self.args[index]
        if arg.uses:
            raise IRError(f"cannot erase block argument #{index}: it still has uses")
        del self.args[index]
        for i, a in enumerate(self.args):
            a.index = i

    # Operations ---------------------------------------------------------------------------
    @property
    def ops(self) -> Iterator[Operation]:
        op = self._first
        while op is not None:
            nxt = op._next
            yield op
            op = nxt

    def __iter__(self) -> Iterator[Operation]:
        return self.ops

    def __len__(self) -> int:
        n = 0
        op = self._first
        while op is not None:
            n += 1
            op = op._next
        return n

    @property
    def is_empty(self) -> bool:
        return self._first is None

    @property
    def first_op(self) -> Operation | None:
        return self._first

    @property
    def last_op(self) -> Operation | None:
        return self._last

    @property
    def terminator(self) -> Operation | None:
        return self._last

    def append(self, op: Operation) -> Operation:
        if op.parent is not None:
            raise IRError(f"'{op.name}' is already in a block")
        op.parent = self
        last = self._last
        op._prev = last
        op._next = None
        if last is None:
            self._first = op
        else:
            last._next = op
            if self._order_valid and last._order >= 0:
                op._order = last._order + 1
            else:
                self._order_valid = False
        self._last = op
        if last is None:
            op._order = 0
        return op

    def insert_before(self, op: Operation, anchor: Operation | None) -> Operation:
        """Insert `op` before `anchor` (at the end when anchor is None)."""
        if anchor is None:
            return self.append(op)
        if op.parent is not None:
            raise IRError(f"'{op.name}' is already in a block")
        op.parent = self
        prev = anchor._prev
        op._prev, op._next = prev, anchor
        anchor._prev = op
        if prev is None:
            self._first = op
        else:
            prev._next = op
        self._order_valid = False
        return op

    def insert_after(self, op: Operation, anchor: Operation) -> Operation:
        return self.insert_before(op, anchor._next) if anchor._next is not None else self.append(op)

    def prepend(self, op: Operation) -> Operation:
        return self.insert_before(op, self._first)

    def _renumber(self) -> None:
        i = 0
        op = self._first
        while op is not None:
            op._order = i
            i += 1
            op = op._next
        self._order_valid = True

    # Structure ----------------------------------------------------------------------------
    @property
    def parent_op(self) -> Operation | None:
        return self.parent.parent if self.parent is not None else None

    @property
    def is_entry(self) -> bool:
        return self.parent is not None and self.parent.blocks[0] is self

    @property
    def predecessors(self) -> list[Block]:
        return [u.owner.containing_block() for u in self._uses]

    @property
    def uses(self) -> list[BlockUse]:
        return list(self._uses)

    @property
    def successors(self) -> tuple[Block, ...]:
        t = self._last
        return t.successors if t is not None else ()

    def erase(self) -> None:
        if self._uses:
            raise IRError("cannot erase a block that is still a successor")
        for op in list(self.ops):
            op.drop_all_references()
        for op in reversed(list(self.ops)):
            op.detach()
        if self.parent is not None:
            self.parent.blocks.remove(self)
            self.parent = None

    def clone_into(self, region: Region, mapping: dict) -> Block:
        new = mapping[self]
        for op in self.ops:
            new.append(op.clone(mapping))
        return new

    def __repr__(self) -> str:
        return f"<Block with {len(self.args)} args>"


class Region:
    """An ordered list of blocks owned by an operation."""

    __slots__ = ("blocks", "parent", "__weakref__")

    def __init__(self, blocks: Iterable[Block] = ()) -> None:
        self.blocks: list[Block] = []
        self.parent: Operation | None = None
        for b in blocks:
            self.add_block(b)

    def add_block(self, block: Block | None = None) -> Block:
        block = block if block is not None else Block()
        if block.parent is not None:
            raise IRError("block already belongs to a region")
        block.parent = self
        self.blocks.append(block)
        return block

    def insert_block(self, index: int, block: Block) -> Block:
        block.parent = self
        self.blocks.insert(index, block)
        return block

    @property
    def entry(self) -> Block | None:
        return self.blocks[0] if self.blocks else None

    @property
    def is_empty(self) -> bool:
        return not self.blocks

    @property
    def ops(self) -> Iterator[Operation]:
        for b in self.blocks:
            yield from b.ops

    def clone(self, mapping: dict | None = None) -> Region:
        mapping = {} if mapping is None else mapping
        new = Region()
        for b in self.blocks:
            nb = Block([a.type for a in b.args], [a.location for a in b.args])
            mapping[b] = nb
            for a, na in zip(b.args, nb.args):
                mapping[a] = na
            new.add_block(nb)
        for b in self.blocks:
            b.clone_into(new, mapping)
        # A use may precede its definition (graph regions, blocks listed out of dominance order):
        # remap what the first pass could not see yet.
        for block in new.blocks:
            for op in block.ops:
                for nested in op.walk():
                    for use in nested._operands:
                        repl = mapping.get(use.value)
                        if repl is not None and repl is not use.value and use.value.parent_block is not None \
                                and self.is_ancestor_block(use.value.parent_block):
                            nested.set_operand(use.index, repl)
        return new

    def is_ancestor_block(self, block: Block) -> bool:
        r = block.parent
        while r is not None:
            if r is self:
                return True
            p = r.parent
            r = p.parent_region if p is not None else None
        return False

    def take_body(self, other: Region) -> None:
        """Move all blocks of `other` into this (empty) region."""
        for b in other.blocks:
            b.parent = self
        self.blocks.extend(other.blocks)
        other.blocks = []

    def is_ancestor_of(self, op: Operation) -> bool:
        r = op.parent_region
        while r is not None:
            if r is self:
                return True
            p = r.parent
            r = p.parent_region if p is not None else None
        return False
