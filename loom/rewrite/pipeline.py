"""MLIR's textual pass pipeline syntax.

    pipeline         ::= element (`,` element)*
    element          ::= name options? | op-name `(` pipeline? `)`
    options          ::= `{` (key (`=` value)?)* `}`

`builtin.module(func.func(canonicalize,cse),symbol-dce)` nests a pipeline per op kind;
`any(...)` matches every op. Errors give the column in the pipeline text and point at it.
"""

from __future__ import annotations

from loom.ir.diagnostics import LoomError


class PipelineParseError(LoomError):
    """Malformed pipeline text, an unknown pass or a bad option, located by column."""

    def __init__(self, message: str, text: str, position: int) -> None:
        self.message = message
        self.text = text
        self.position = position
        self.column = position + 1
        super().__init__(self.render())

    def render(self) -> str:
        return f"pipeline:1:{self.column}: error: {self.message}\n{self.text}\n{' ' * self.position}^"


class PipelineElement:
    """One parsed element: a pass (`name`, `options`) or a nested pipeline (`children`)."""

    __slots__ = ("name", "position", "options", "options_position", "children")

    def __init__(self, name: str, position: int) -> None:
        self.name = name
        self.position = position
        self.options: str | None = None
        self.options_position = -1
        self.children: list[PipelineElement] | None = None

    def __repr__(self) -> str:
        if self.children is not None:
            return f"{self.name}({', '.join(map(repr, self.children))})"
        return self.name + (f"{{{self.options}}}" if self.options is not None else "")


_NAME_END = set(",(){}") | set(" \t\r\n")
# Pipelines nest once per level of op nesting they reach into; deeper text is an error that says
# where, not a stack overflow in the parser or the pass manager.
MAX_PIPELINE_DEPTH = 100


def parse_pipeline_text(text: str) -> list[PipelineElement]:
    """Parse pipeline text into elements (passes are not looked up here)."""
    parser = _Parser(text)
    elements = parser.elements(top=True)
    return elements


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.depth = 0

    def error(self, message: str, pos: int) -> PipelineParseError:
        return PipelineParseError(message, self.text, pos)

    def ws(self) -> None:
        text = self.text
        while self.pos < len(text) and text[self.pos].isspace():
            self.pos += 1

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def elements(self, top: bool) -> list[PipelineElement]:
        out: list[PipelineElement] = []
        self.ws()
        if self.peek() in ("", ")") and not top:
            return out
        if self.peek() == "" and top:
            return out
        while True:
            self.ws()
            out.append(self.element())
            self.ws()
            c = self.peek()
            if c == ",":
                self.pos += 1
                continue
            if c == ")":
                if top:
                    raise self.error("encountered extra closing ')' creating unbalanced parentheses while parsing "
                                     "pipeline", self.pos)
                return out
            if c == "":
                return out
            raise self.error(f"expected ',' or ')' after pipeline element, found '{c}'", self.pos)

    def element(self) -> PipelineElement:
        text = self.text
        start = self.pos
        while self.pos < len(text) and text[self.pos] not in _NAME_END:
            self.pos += 1
        name = text[start:self.pos]
        if not name:
            c = self.peek()
            found = f"'{c}'" if c else "end of pipeline"
            raise self.error(f"expected a pass or op name, found {found}", start)
        el = PipelineElement(name, start)
        self.ws()
        if self.peek() == "{":
            open_pos = self.pos
            depth, quote, i = 0, None, self.pos
            while i < len(text):
                c = text[i]
                if quote:
                    if c == quote:
                        quote = None
                elif c in "'\"":
                    quote = c
                elif c == "{":
                    depth += 1
                elif c == "}":
                    depth -= 1
                    if depth == 0:
                        break
                i += 1
            if i >= len(text):
                raise self.error("missing '}' to close the options of this pass", open_pos)
            el.options = text[open_pos + 1:i]
            el.options_position = open_pos + 1
            self.pos = i + 1
            self.ws()
        if self.peek() == "(":
            if el.options is not None:
                raise self.error("a nested pipeline cannot take options", self.pos)
            open_pos = self.pos
            self.pos += 1
            self.depth += 1
            if self.depth > MAX_PIPELINE_DEPTH:
                raise self.error(f"pipeline nested more than {MAX_PIPELINE_DEPTH} levels deep", open_pos)
            el.children = self.elements(top=False)
            self.depth -= 1
            self.ws()
            if self.peek() != ")":
                raise self.error(f"expected ')' to close the pipeline nested on '{name}'", open_pos)
            self.pos += 1
        return el


__all__ = ["PipelineElement", "PipelineParseError", "parse_pipeline_text"]
