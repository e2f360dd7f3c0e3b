"""Extracts the examples of the StableHLO specification (docs/spec.md of openxla/stablehlo) into
spec_examples.json: per example the op, the block as the spec writes it, and, where the example is
one program on one device, a `func.func @main` taking the `// %name: value` inputs as arguments
and returning the values that `// %name: value` comments after the ops give.

Usage: python extract.py SPEC_MD COMMIT  (writes spec_examples.json next to this file)
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

# `%x: v`, `%x = v`, `% x: v`, `%x@(replica, partition): v`
VALUE_COMMENT = re.compile(r"^// ?% ?([\w#]+)(@\(\d+, \d+\))? ?[:=] (.*)$")
INFEED_COMMENT = re.compile(r"^// (infeed_queue\[\d+\]): (.*)$")  # what the host feeds, in order
DEFINED = re.compile(r"^(%[\w]+(?::\d+)?(?:\s*,\s*%[\w]+)*)\s*=")
USE = re.compile(r"%[A-Za-z_][\w]*(?:#\d+)?")


def example_blocks(spec: str) -> list[tuple[str, str]]:
    """(op, block text) for every ```mlir block of an op's `#### Examples` section."""
    blocks, op, in_examples, lines = [], "", False, None
    for line in spec.splitlines():
        if re.match(r"^### [a-z_0-9]+$", line):
            op, in_examples = line[4:].strip(), False
        elif line.startswith("#### "):
            in_examples = line.strip() == "#### Examples"
        elif in_examples and line.strip() == "```mlir" and lines is None:
            lines = []
        elif lines is not None and line.strip() == "```":
            blocks.append((op, "\n".join(lines)))
            lines, in_examples = None, False
        elif lines is not None:
            lines.append(line)
    return blocks


def top_level_split(text: str, sep: str) -> list[str]:
    """`text` split at each `sep` outside brackets (`->` is no bracket)."""
    text, sep = text.replace("->", "\x00"), sep.replace("->", "\x00")
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "([{<":
            depth += 1
        elif c in ")]}>":
            depth -= 1
        elif depth == 0 and text.startswith(sep, i):
            parts.append(text[start:i])
            start = i + len(sep)
    parts.append(text[start:])
    return [p.replace("\x00", "->").strip() for p in parts]


def statements(code: list[str]) -> list[str]:
    """The block's top-level ops: each starts at column 0 with `%` or `"`."""
    stmts: list[str] = []
    for line in code:
        if stmts and not re.match(r'^[%"]', line):
            stmts[-1] += "\n" + line
        elif stmts and re.match(r"^%[\w, %]+=\s*$", stmts[-1].split("\n")[-1]):
            stmts[-1] += "\n" + line  # `%a, %b =` continued on the next line
        else:
            stmts.append(line)
    return stmts


def signature(stmt: str) -> tuple[list[str], list[str], list[str]] | None:
    """(operand names, operand types, result types) of a generic-form op; None for other forms."""
    m = re.search(r'"[\w.]+"\(([^)]*)\)', stmt)
    tail = top_level_split(re.sub(r"\):\s", ") : ", " ".join(stmt.split())), " : ")
    if not m or len(tail) < 2:
        return None
    fn = top_level_split(tail[-1], "->")
    if len(fn) != 2 or not fn[0].startswith("("):
        return None
    ins = [t for t in top_level_split(fn[0][1:-1], ",") if t]
    outs = fn[1][1:-1] if fn[1].startswith("(") else fn[1]
    names = [n.strip() for n in m.group(1).split(",") if n.strip()]
    return names, ins, [t for t in top_level_split(outs, ",") if t]


def result_names(stmt: str) -> list[str]:
    """The values an op defines: `%a, %b = ...` or `%r:2 = ...` (as %r#0, %r#1)."""
    m = DEFINED.match(" ".join(stmt.split()))
    if not m:
        return []
    names = []
    for part in m.group(1).split(","):
        name, _, count = part.strip().partition(":")
        names += [f"{name}#{i}" for i in range(int(count))] if count else [name]
    return names


def defined_by(code: list[str]) -> set[str]:
    return {n for stmt in statements(code) for n in result_names(stmt)}


def strip_note(value: str) -> str:
    """A value without its trailing note (`[0.0, 1.57] // [0, pi/2]`)."""
    return value.split("//")[0].strip()


def segments(block: str) -> list[tuple[dict[str, str], list[str], dict[str, str]]]:
    """The block's examples as (inputs, code lines, outputs): a value comment after the code that
    names no value the code defines starts the next example."""
    segs: list[tuple[dict[str, str], list[str], dict[str, str]]] = []
    last: dict[str, str] | None = None
    for line in block.splitlines():
        m = VALUE_COMMENT.match(line.strip())
        feed = INFEED_COMMENT.match(line.strip())
        if feed:
            last = segs[-1][0] if segs else None
            if last is None:
                segs.append(({}, [], {}))
                last = segs[-1][0]
            last[feed.group(1)] = strip_note(feed.group(2))
        elif m:
            name = "%" + m.group(1)
            defined = {n.split("#")[0] for n in defined_by(segs[-1][1])} if segs else set()
            if not segs or (segs[-1][1] and name.split("#")[0] not in defined):
                segs.append(({}, [], {}))
            last = segs[-1][2] if segs[-1][1] else segs[-1][0]
            last[name + (m.group(2) or "")] = strip_note(m.group(3))
        elif re.match(r"^//\s{2,}\S", line.strip()) and last:
            key = list(last)[-1]
            last[key] += " " + strip_note(line.strip()[2:].strip())
        elif line.strip() and not line.lstrip().startswith("//"):
            # code after the results starts the next example where it defines a value again
            if not segs or (segs[-1][2] and set(result_names(line.strip())) & defined_by(segs[-1][1])):
                segs.append(({}, [], {}))
            segs[-1][1].append(line)
            last = None
    return segs


def operand_types(code: list[str]) -> dict[str, str]:
    """The type of each value the code uses, read off the generic ops' function types and the
    pretty ops' trailing types (`stablehlo.add %a, %b : t`)."""
    types: dict[str, str] = {}
    nested = []
    for i, line in enumerate(code):
        if line.startswith(" ") and re.match(r'^\s+(%|"|stablehlo\.)', line) and "({" not in line:
            indent, stmt = len(line) - len(line.lstrip()), line.strip()
            for following in code[i + 1:]:
                if len(following) - len(following.lstrip()) <= indent and not following.strip().startswith("}"):
                    break
                stmt += "\n" + following.strip()
                if len(following) - len(following.lstrip()) <= indent:
                    break
            nested.append(stmt)
    for stmt in statements(code) + nested:
        flat = " ".join(stmt.split())
        sig = signature(stmt)
        if sig is not None:
            names, ins, outs = sig
            types.update({n: t for n, t in zip(names, ins) if n not in types})
            types.update(zip(result_names(stmt), outs))
            continue
        tail = top_level_split(flat, " : ")
        if len(tail) < 2:
            continue
        m = re.match(r"^(?:%[\w, %:]+=\s*)?stablehlo\.\w+ (.*)$", tail[-2])
        ts = top_level_split(tail[-1], ",")
        if m:  # one type for all operands, or one per operand
            used = USE.findall(m.group(1))
            for u, t in zip(used, ts if len(ts) == len(used) else ts[:1] * len(used)):
                types.setdefault(u, t)
        names = result_names(stmt)
        if len(names) == 1:
            types[names[0]] = ts[-1]
    return types


def fix_typos(op: str, line: str) -> str:
    """`line` of an example of `op` with the spec's typos there corrected (SPEC_TYPOS)."""
    for typo_op, typo, fixed, _ in SPEC_TYPOS:
        line = line.replace(typo, fixed) if typo_op == op else line
    return line


# Errors in the spec's example text, each corrected here (op, as written, corrected, why).
SPEC_TYPOS = [
    ("is_finite", "tensor<7xf64)", "tensor<7xf64>)", "an unclosed type"),
    ("collective_broadcast", "(tensor1x2xi64>)", "(tensor<1x2xi64>)", "an unopened type"),
    ("cholesky", "-> tensor<3x3xf64>", "-> tensor<3x3xf32>", "the result's element type must be the operand's"),
    ("sign", "// operand:", "// %operand:", "the input comment lacks its `%`"),
    ("infeed", "// results0#0:", "// %results0#0:", "the result comment lacks its `%`"),
    ("infeed", "// results1#0:", "// %results1#0:", "the result comment lacks its `%`"),
    ("dynamic_conv", "input_spatial_dimensions = [0, 1]", "input_spatial_dimensions = [1, 2]",
     "the spatial dimensions repeat the batch dimension 0 (the convolution example has [1, 2])"),
    ("all_gather", "%result:2 =", "%result0, %result1 =", "the results are named %result0, %result1 below"),
    ("all_reduce", "%result:2 =", "%result0, %result1 =", "the results are named %result0, %result1 below"),
    ("all_reduce", '"stablehlo.all_reduce"(%operand0, %operand0)', '"stablehlo.all_reduce"(%operand0, %operand1)',
     "the results reduce %operand0 and %operand1"),
    ("tuple", "memref<2xf32>", "tensor<2xf32>", "memref is no StableHLO type"),
    ("tuple", "memref[1.0, 2.0]", "[1.0, 2.0]", "memref is no StableHLO type"),
]

# Results the spec prints wrongly, each replaced here (op, value name, printed, corrected, why).
SPEC_ERRATA = [
    ("divide", "%result", "[5.66666651, -5.66666651, -5.66666651, 5.66666651]",
     "[5.7000003, -5.7000003, -5.7000003, 5.7000003]",
     "17.1 / 3.0 is 5.7 in f32 (the printed value is 17 / 3)"),
    ("log_plus_one", "%result", "[0.0, -6.90776825, 2.07944155, 2.0, 2.77258873]",
     "[0.0, -6.907755278982136, 2.0794415416798357, 2.0, 2.772588722239781]",
     "the type is f64; the printed -6.90776825 is log1p(-0.999) computed in f32"),
    ("power", "%result", "[4.0, 0.0, -nan, 25.0, 0.333333343, inf]", "[4.0, 0.0, -nan, 25.0, 0.3333333333333333, 1e40]",
     "the type is f64: 10000.0 ** 10.0 is 1e40 (inf only in f32), 3.0 ** -1.0 is 1/3 in f64"),
    ("negate", "%result", "[-2.5, -0.0]", "[(-2.5, -0.0)]",
     "the result is one complex element, written as a pair of reals (the operand is `(2.5, 0.0)`)"),
    ("tan", "%result", "[ [0.0, 1.63312e+16], [0.0, 5.44375e+15] ]",
     "[[0.0, 147169271.76124874], [-3.5897930298416118e-09, 2599497068.2695704]]",
     "the printed values are tan of pi/2, pi, 3pi/2 exactly; the operand holds them to 9 digits"),
    ("while", "%results1", "10", "9",
     "the body runs for i = 1 .. 9 (while i < 10), adding 1 to the sum each time: 9"),
]


TOKEN = "!stablehlo.token"


def per_process_values(values: dict[str, str], processes: list[str]) -> dict[str, Any]:
    grouped: dict[str, dict[str, str]] = {}
    for key, value in values.items():
        name, _, process = key.partition("@")
        grouped.setdefault(name, {})[process] = value
    return {name: [by_process[p] for p in processes] for name, by_process in grouped.items()}


def build(op: str, inputs: dict[str, str], code: list[str], outputs: dict[str, str]) -> dict:
    """One example as data; `program` is absent and `why_not` says why when it is no program."""
    case: dict = {"op": op, "source": "\n".join(code)}
    processes = sorted({n.partition("@")[2] for n in list(inputs) + list(outputs)} - {""})
    if processes:  # one value per process: each name's values in the order of `processes`
        case["processes"] = processes
        inputs, outputs = per_process_values(inputs, processes), per_process_values(outputs, processes)
    types = operand_types(code)
    # a token's value is written as its type: `// %t: !stablehlo.token`
    types.update({n: v for n, v in inputs.items() if isinstance(v, str) and v.startswith("!")})
    if not outputs:  # an example of tokens only: the tokens its last op makes
        outputs = {n: TOKEN for n in result_names(statements(code)[-1]) if types.get(n) == TOKEN}
    if not outputs:
        case["why_not"] = "no result comment"
        return case
    operands = {n for stmt in statements(code) for n in (signature(stmt) or ([],))[0]}
    given = set(inputs) | defined_by(code)
    if operands - given:
        case["why_not"] = f"no value for {', '.join(sorted(operands - given))}"
        return case
    feeds = [inputs.pop(n) for n in list(inputs) if n.startswith("infeed_queue")]
    if feeds:
        case["infeed"] = feeds
    defined = defined_by(code) | {n.split("#")[0] for n in defined_by(code)}
    params = [n for n in inputs if n not in defined]
    missing = [n for n in params + list(outputs) if n not in types]
    if missing:
        case["why_not"] = f"no type for {', '.join(missing)}"
        return case
    body = "\n".join("  " + line for line in code)
    sig_in = ", ".join(f"{n}: {types[n]}" for n in params)
    sig_out = ", ".join(types[n] for n in outputs)
    case["program"] = (f"func.func @main({sig_in}) -> ({sig_out}) {{\n{body}\n"
                       f"  func.return {', '.join(outputs)} : {sig_out}\n}}")
    key = "values" if processes else "value"
    case["args"] = [{"name": n, "type": types[n], key: inputs[n]} for n in params]
    case["results"] = [{"name": n, "type": types[n], key: v} for n, v in outputs.items()]
    for erratum_op, name, printed, corrected, why in SPEC_ERRATA:
        for result in case["results"]:
            if erratum_op == op and result["name"] == name and result.get("value") == printed:
                result.update(value=corrected, spec_value=printed, erratum=why)
    return case


def main() -> None:
    spec_path, commit = sys.argv[1], sys.argv[2]
    examples = [build(op, *seg) for op, block in example_blocks(Path(spec_path).read_text())
                for seg in segments("\n".join(fix_typos(op, line) for line in block.splitlines()))]
    applied = {(e["op"], r["name"]) for e in examples for r in e.get("results", []) if "erratum" in r}
    stale = [e[:2] for e in SPEC_ERRATA if e[:2] not in applied]
    if stale:  # the spec changed there: each correction is to be checked again
        raise SystemExit(f"errata that match no printed result: {stale}")
    record = {"spec": {"repository": "openxla/stablehlo", "path": "docs/spec.md", "commit": commit},
              "corrections": [{"op": op, "written": typo, "corrected": fixed, "why": why}
                              for op, typo, fixed, why in SPEC_TYPOS],
              "examples": examples}
    out = Path(__file__).with_name("spec_examples.json")
    out.write_text(json.dumps(record, indent=1) + "\n")
    built = sum("program" in e for e in examples)
    print(f"{len(examples)} examples, {built} programs -> {out.name}")


if __name__ == "__main__":
    main()
