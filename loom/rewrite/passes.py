"""Passes: the Pass base class, declared options, and the pass registry.

A pass is a class with a pipeline `name` ("canonicalize"), optional `op_name` anchor, and
options declared as class attributes:

    @register_pass
    class CanonicalizerPass(Pass):
        '''Canonicalize operations.'''
        name = "canonicalize"
        max_iterations = Option(int, 10, "Max. iterations between applying patterns")

        def run(self, op): ...

Options are read as attributes (`self.max_iterations`) and written in pipeline text with dashes
(`canonicalize{max-iterations=3}`).
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any, ClassVar

from loom.ir.core import Operation
from loom.ir.diagnostics import LoomError, VerifyError


class PassError(LoomError):
    """A pass failed on an op (the op, the pass and the reason)."""

    def __init__(self, pass_name: str, op: Operation | None, message: str) -> None:
        self.pass_name = pass_name
        self.op = op
        self.message = message
        where = f" on '{op.name}'" if op is not None else ""
        super().__init__(f"pass '{pass_name}' failed{where}: {message}")


class PassVerifyError(VerifyError):
    """The IR failed to verify after a pass: the verifier's error plus the pass that broke it."""

    def __init__(self, error: VerifyError, pass_: Pass) -> None:
        self.pass_name = pass_.name
        self.pass_display_name = pass_.display_name
        self.error = error
        super().__init__(error.op, error.message)

    def render(self) -> str:
        return (super().render() + f"\nnote: the IR failed to verify after pass '{self.pass_name}' "
                f"({self.pass_display_name})")


class PassManagerError(LoomError):
    """A pass scheduled where it cannot run (wrong anchor op, unsupported op)."""


class OptionError(LoomError):
    """A pass option that does not exist or whose value does not parse."""


_TRUE = ("true", "True", "TRUE", "1")
_FALSE = ("false", "False", "FALSE", "0")


class Option:
    """A pass option: its type (int, float, bool, str, or `list` of `element`), default, help,
    and for enumerations the allowed `choices` (with `aliases` mapping other spellings to them).
    The pipeline name is the attribute name with dashes unless `name` is given."""

    def __init__(self, type: type, default: Any, help: str = "", choices: Sequence[str] | None = None,
                 aliases: dict[str, str] | None = None, element: type = str, name: str | None = None) -> None:
        self.type = type
        self.default = default
        self.help = help
        self.choices = tuple(choices) if choices is not None else None
        self.aliases = aliases or {}
        self.element = element
        self.name = name or ""
        self.attr = ""

    def __set_name__(self, owner: type, attr: str) -> None:
        self.attr = attr
        if not self.name:
            self.name = attr.replace("_", "-")

    def __get__(self, instance: Pass | None, owner: type) -> Any:
        if instance is None:
            return self
        return instance.options[self.name]

    def parse(self, text: str | None) -> Any:
        """The value written `text` in pipeline options (None: the option was given bare)."""
        t = self.type
        if t is bool:
            if text is None or text in _TRUE:
                return True
            if text in _FALSE:
                return False
            raise OptionError(f"invalid value '{text}' for boolean option '{self.name}' (use true or false)")
        if text is None:
            raise OptionError(f"option '{self.name}' needs a value")
        if self.choices is not None:
            value = self.aliases.get(text, text)
            if value not in self.choices:
                raise OptionError(f"invalid value '{text}' for option '{self.name}'; expected one of: "
                                  + ", ".join(self.choices))
            return value
        if t is list:
            items = _split_top_level(text, ",") if text else []
            try:
                return [self.element(i.strip()) for i in items]
            except ValueError:
                raise OptionError(f"invalid value '{text}' for list option '{self.name}'") from None
        try:
            return t(text)
        except ValueError:
            raise OptionError(f"invalid value '{text}' for {t.__name__} option '{self.name}'") from None

    def check(self, value: Any) -> Any:
        """Validate a value given from Python (keyword arguments)."""
        t = self.type
        if isinstance(value, str) and t is not str:
            return self.parse(value)
        if t is bool and not isinstance(value, bool):
            raise OptionError(f"option '{self.name}' expects a bool, got {value!r}")
        if t is int and (not isinstance(value, int) or isinstance(value, bool)):
            raise OptionError(f"option '{self.name}' expects an int, got {value!r}")
        if t is list:
            return list(value)
        if self.choices is not None:
            return self.parse(str(value))
        return value

    def format(self, value: Any) -> str:
        """`name=value` as MLIR prints pass options; empty for an empty list."""
        if self.type is list:
            return f"{self.name}={{{','.join(map(str, value))}}}" if value else ""
        if self.type is bool:
            return f"{self.name}={'true' if value else 'false'}"
        text = str(value)
        if any(c.isspace() for c in text):
            text = "{" + text + "}"
        return f"{self.name}={text}"


def _split_top_level(text: str, sep: str) -> list[str]:
    """Split on `sep` outside braces, parentheses and quotes."""
    parts, depth, quote, start = [], 0, None, 0
    for i, c in enumerate(text):
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c in "{([":
            depth += 1
        elif c in "})]":
            depth -= 1
        elif c == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


class Pass:
    """Base of passes. Subclasses set `name` (the pipeline name), optionally `op_name` (the only
    op kind the pass runs on; None: any), declare `Option`s, and implement `run(op)`.

    `display_name` is what IR dumps and timing reports call the pass (MLIR's pass class name,
    e.g. "CSEPass"); it defaults to the class name."""

    name: ClassVar[str] = ""
    op_name: ClassVar[str | None] = None
    display_name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    _runner: Any = None  # the pass manager's runner while the pass runs
    _preserved_all = False  # set by `mark_all_analyses_preserved` during a run

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if not cls.__dict__.get("display_name"):
            cls.display_name = cls.__name__

    def __init__(self, **options: Any) -> None:
        declared = self.declared_options()
        self.options: dict[str, Any] = {name: _copy_default(o.default) for name, o in declared.items()}
        by_attr = {o.attr: o for o in declared.values()}
        for key, value in options.items():
            opt = by_attr.get(key) or declared.get(key)
            if opt is None:
                raise OptionError(self._unknown_option_message(key))
            self.options[opt.name] = opt.check(value)

    @classmethod
    def declared_options(cls) -> dict[str, Option]:
        """The pass's options by pipeline name."""
        found: dict[str, Option] = {}
        for klass in reversed(cls.__mro__):
            for v in vars(klass).values():
                if isinstance(v, Option):
                    found[v.name] = v
        return found

    @classmethod
    def _unknown_option_message(cls, key: str) -> str:
        names = sorted(cls.declared_options())
        listing = ", ".join(names) if names else "none"
        return f"pass '{cls.name}' has no option '{key}'; its options are: {listing}"

    @classmethod
    def from_options_text(cls, text: str) -> Pass:
        """Make the pass from the text inside `{...}` in a pipeline."""
        declared = cls.declared_options()
        p = cls()
        for key, value in parse_options_text(text):
            opt = declared.get(key)
            if opt is None:
                raise OptionError(cls._unknown_option_message(key))
            p.options[key] = opt.parse(value)
        return p

    def run(self, op: Operation) -> None:
        """Transform `op` in place. Raise PassError (see `fail`) on failure."""
        raise NotImplementedError(f"pass '{self.name}' does not implement run")

    def run_pipeline(self, pipeline: Any, op: Operation) -> None:
        """From inside `run`, run a nested pipeline (an OpPassManager) on `op`, instrumented and
        verified like the pass manager running this pass (MLIR's `runPipeline`)."""
        from loom.rewrite.pass_manager import _Runner
        runner = self._runner if self._runner is not None else _Runner()
        runner.run_pipeline(pipeline, op)

    def mark_all_analyses_preserved(self) -> None:
        """From inside `run`: this run left the IR as it found it (MLIR's
        `markAllAnalysesPreserved`). The pass manager then does not verify the op again, as MLIR
        skips the verifier after a pass that preserved all analyses."""
        self._preserved_all = True

    def can_schedule_on(self, op: Operation) -> bool:
        """Whether the pass may run on `op` (beyond matching `op_name`)."""
        return True

    def fail(self, op: Operation | None, message: str) -> PassError:
        """The error to raise when the pass cannot complete: `raise self.fail(op, "why")`."""
        return PassError(self.name, op, message)

    def pipeline_text(self) -> str:
        """The pass as MLIR writes it in a pipeline: `name{opt=value ...}` with every option,
        sorted by name."""
        declared = self.declared_options()
        if not declared:
            return self.name
        parts = [declared[k].format(self.options[k]) for k in sorted(declared)]
        return f"{self.name}{{{' '.join(parts)}}}"

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.pipeline_text()}>"


def _copy_default(v: Any) -> Any:
    return list(v) if isinstance(v, list) else v


def parse_options_text(text: str) -> list[tuple[str, str | None]]:
    """`key=value key2 key3={a b}` -> [(key, value), (key2, None), ...]. Values may be quoted
    ('...' or "...") or wrapped in braces to contain spaces; both are stripped."""
    out: list[tuple[str, str | None]] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i].isspace():
            i += 1
        if i >= n:
            return out
        start = i
        while i < n and not text[i].isspace() and text[i] != "=":
            i += 1
        key = text[start:i]
        if not key:
            raise OptionError(f"expected an option name at '{text[start:]}'")
        if i < n and text[i] == "=":
            i += 1
            vstart = i
            depth, quote = 0, None
            while i < n:
                c = text[i]
                if quote:
                    if c == quote:
                        quote = None
                elif c in "'\"":
                    quote = c
                elif c in "{(":
                    depth += 1
                elif c in "})":
                    depth -= 1
                elif c.isspace() and depth == 0:
                    break
                i += 1
            if quote:
                raise OptionError(f"unterminated quote in value of option '{key}'")
            out.append((key, _strip_wrapping(text[vstart:i])))
        else:
            out.append((key, None))


def _strip_wrapping(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    if len(value) >= 2 and value[0] == "{" and value[-1] == "}":
        depth = 0
        for i, c in enumerate(value):
            depth += c == "{"
            depth -= c == "}"
            if depth == 0 and i < len(value) - 1:
                return value
        return value[1:-1]
    return value


# Registry -----------------------------------------------------------------------------------

_PASSES: dict[str, type[Pass]] = {}
# Modules that register loom's own passes, imported on the first lookup so that pipeline text
# works without importing them by hand.
_BUILTIN_PASS_MODULES = ["loom.transforms"]
_builtins_loaded = False


def register_pass(cls: type[Pass]) -> type[Pass]:
    """Class decorator: make `cls` available by its `name` in pipeline text."""
    if not cls.name:
        raise ValueError(f"pass class {cls.__name__} has no pipeline name")
    existing = _PASSES.get(cls.name)
    if existing is not None and existing is not cls and existing.__qualname__ != cls.__qualname__:
        raise ValueError(f"pass name '{cls.name}' is already registered by {existing.__qualname__}")
    _PASSES[cls.name] = cls
    return cls


def _load_builtin_passes() -> None:
    global _builtins_loaded
    if not _builtins_loaded:
        _builtins_loaded = True
        for module in _BUILTIN_PASS_MODULES:
            importlib.import_module(module)


def lookup_pass(name: str) -> type[Pass] | None:
    """The pass class registered under `name`, or None."""
    cls = _PASSES.get(name)
    if cls is None and not _builtins_loaded:
        _load_builtin_passes()
        cls = _PASSES.get(name)
    return cls


def registered_passes() -> dict[str, type[Pass]]:
    """Every registered pass by name."""
    _load_builtin_passes()
    return dict(sorted(_PASSES.items()))


__all__ = ["Option", "OptionError", "Pass", "PassError", "PassManagerError", "PassVerifyError", "lookup_pass",
           "parse_options_text", "register_pass", "registered_passes"]
