"""A Python model of how MLIR prints a float attribute (``printFloatValue`` + ``APFloat::toString``).

This is a reference for loom's printer, not part of the corpus. It covers the IEEE-style types f16, bf16,
f32 and f64. The other float types use the same algorithm with their own precision and their own rules
for inf/NaN. Running this file compares the model with jaxlib on random bit patterns::

    .venv/bin/python tests/corpus/float_format_model.py

MLIR's rule (mlir/lib/IR/AsmPrinter.cpp, printFloatValue):
1. inf and NaN print as the raw bits in hex: ``0x`` and uppercase digits, no zero padding.
2. Otherwise try ``toString(precision=6, max_padding=0, truncate_zero=False)``, e.g. ``1.500000e+00``.
   Use it if parsing that string back in the same type gives the same bits.
3. Otherwise use ``toString()`` with its defaults: the type's round-trip precision, max_padding=3 and
   truncate_zero=True, e.g. ``3.14159274``, ``0.30000000000000004``, ``9.9999999999999995E-7``.
   Use it if it contains a ``.``.
4. Otherwise (integral values such as ``123456789.0``) print the raw bits in hex, as in rule 1.
"""

from __future__ import annotations

import random
from fractions import Fraction

# precision (significand bits including the hidden bit), exponent bits
SEMANTICS = {"f64": (53, 11), "f32": (24, 8), "f16": (11, 5), "bf16": (8, 8)}


def decode(bits: int, float_type: str) -> tuple[int, int, int] | None:
    """(sign, significand, binary exponent) with value = significand * 2**exponent; None for inf/NaN."""
    precision, exponent_bits = SEMANTICS[float_type]
    width = precision + exponent_bits
    sign = bits >> (width - 1)
    biased = (bits >> (precision - 1)) & ((1 << exponent_bits) - 1)
    mantissa = bits & ((1 << (precision - 1)) - 1)
    bias = (1 << (exponent_bits - 1)) - 1
    if biased == (1 << exponent_bits) - 1:
        return None
    if biased == 0:
        return sign, mantissa, 1 - bias - (precision - 1)
    return sign, mantissa | (1 << (precision - 1)), biased - bias - (precision - 1)


def _trim_integer(significand: int, exponent: int, format_precision: int) -> tuple[int, int]:
    """APFloat's first AdjustToPrecision: drop whole decimal digits by truncating division."""
    bits_required = (format_precision * 196 + 58) // 59
    bits = significand.bit_length()
    if bits <= bits_required:
        return significand, exponent
    removable = (bits - bits_required) * 59 // 196
    return significand // 10**removable, exponent + removable


def _round_digits(digits: list[str], exponent: int, format_precision: int) -> tuple[list[str], int]:
    """APFloat's second AdjustToPrecision: round half up on the digit list (least significant first)."""
    count = len(digits)
    if count <= format_precision:
        return digits, exponent
    first = count - format_precision
    if digits[first - 1] < "5":
        while first < count and digits[first] == "0":
            first += 1
        return digits[first:], exponent + first
    for index in range(first, count):
        if digits[index] == "9":
            first += 1
        else:
            digits = [*digits[:index], chr(ord(digits[index]) + 1), *digits[index + 1 :]]
            break
    if first == count:
        return ["1"], exponent + first
    return digits[first:], exponent + first


def to_string(
    sign: int,
    significand: int,
    exponent: int,
    precision: int,
    format_precision: int = 0,
    max_padding: int = 3,
    truncate_zero: bool = True,
) -> str:
    """``APFloat::toString`` for a finite value ``(-1)**sign * significand * 2**exponent``."""
    prefix = "-" if sign else ""
    if significand == 0:  # APFloat prints zero by itself
        if truncate_zero:
            return prefix + "0.0E+0"
        return prefix + "0." + "0" * format_precision + "e+00"
    if not format_precision:
        format_precision = 2 + precision * 59 // 196
    trailing = (significand & -significand).bit_length() - 1
    significand >>= trailing
    exponent += trailing
    if exponent > 0:
        significand <<= exponent
        exponent = 0
    elif exponent < 0:
        significand *= 5**-exponent
    significand, exponent = _trim_integer(significand, exponent, format_precision)
    digits: list[str] = []
    while significand:
        significand, digit = divmod(significand, 10)
        if not digits and digit == 0:
            exponent += 1
        else:
            digits.append(str(digit))
    digits, exponent = _round_digits(digits, exponent, format_precision)
    count = len(digits)
    if not max_padding:
        scientific = True
    elif exponent >= 0:
        scientific = exponent > max_padding or count + exponent > format_precision
    else:
        most_significant = exponent + count - 1
        scientific = most_significant < 0 and -most_significant > max_padding
    ordered = "".join(reversed(digits))
    if scientific:
        exponent += count - 1
        mantissa = ordered[0] + "." + ("0" if count == 1 and truncate_zero else ordered[1:])
        if not truncate_zero and format_precision > count - 1:
            mantissa += "0" * (format_precision - count + 1)
        exponent_text = str(abs(exponent))
        if not truncate_zero and len(exponent_text) < 2:
            exponent_text = "0" + exponent_text
        marker = "E" if truncate_zero else "e"
        return f"{prefix}{mantissa}{marker}{'+' if exponent >= 0 else '-'}{exponent_text}"
    if exponent >= 0:
        return prefix + ordered + "0" * exponent
    whole = exponent + count
    if whole > 0:
        return prefix + ordered[:whole] + "." + ordered[whole:]
    return prefix + "0." + "0" * -whole + ordered


def parse_bits(text: str, float_type: str) -> int | None:
    """Round a decimal string to ``float_type`` (nearest, ties to even); None when it overflows."""
    precision, exponent_bits = SEMANTICS[float_type]
    bias = (1 << (exponent_bits - 1)) - 1
    value = Fraction(text)
    sign = 1 if text.startswith("-") else 0
    value = abs(value)
    if value == 0:
        return sign << (precision + exponent_bits - 1)
    exponent = value.numerator.bit_length() - value.denominator.bit_length()
    if Fraction(2) ** exponent > value:
        exponent -= 1
    exponent = max(exponent, 1 - bias)
    scaled = value * Fraction(2) ** (precision - 1 - exponent)
    quotient, remainder = divmod(scaled.numerator, scaled.denominator)
    if 2 * remainder > scaled.denominator or (2 * remainder == scaled.denominator and quotient & 1):
        quotient += 1
    if quotient >= 1 << precision:
        quotient >>= 1
        exponent += 1
    if exponent > bias:
        return None
    biased = exponent + bias if quotient >> (precision - 1) else 0
    mantissa = quotient & ((1 << (precision - 1)) - 1)
    return (sign << (precision + exponent_bits - 1)) | (biased << (precision - 1)) | mantissa


def print_float(bits: int, float_type: str) -> str:
    """The text MLIR prints for a float attribute value with these raw bits (without the ``: type``)."""
    decoded = decode(bits, float_type)
    if decoded is None:
        return f"0x{bits:X}"
    precision = SEMANTICS[float_type][0]
    short = to_string(*decoded, precision, format_precision=6, max_padding=0, truncate_zero=False)
    if parse_bits(short, float_type) == bits:
        return short
    default = to_string(*decoded, precision)
    if "." in default:
        return default
    return f"0x{bits:X}"


def _compare_with_jaxlib(samples: int = 2000) -> int:
    from jaxlib.mlir import ir

    generator = random.Random(0)
    cases = [
        (float_type, generator.getrandbits(sum(SEMANTICS[float_type])))
        for float_type in SEMANTICS
        for _ in range(samples)
    ]
    text = "\n".join(f'"t.a"() {{v = 0x{bits:X} : {float_type}}} : () -> ()' for float_type, bits in cases)
    with ir.Context() as context:
        context.allow_unregistered_dialects = True
        printed = ir.Module.parse(text).operation.get_asm(print_generic_op_form=True)
    lines = [line for line in printed.splitlines() if '"t.a"' in line]
    mismatches = 0
    for (float_type, bits), line in zip(cases, lines, strict=True):
        expected = line.split("v = ")[1].split(" : ")[0]
        if print_float(bits, float_type) != expected:
            mismatches += 1
            print(f"{float_type} 0x{bits:X}: jaxlib {expected}, model {print_float(bits, float_type)}")
    print(f"{mismatches} mismatches in {len(cases)} values")
    return mismatches


if __name__ == "__main__":
    raise SystemExit(1 if _compare_with_jaxlib() else 0)
