"""Float bit patterns and MLIR's float printing (LLVM APFloat::toString, reproduced exactly).

MLIR prints a float attribute as `%e`-like text with 6 significant digits when that text reads
back to the same bits, else as the shortest "natural" decimal, else as hex bits. Matching it
byte for byte needs APFloat's own digit generation, including its truncating precision step
and round-half-up, which differ from Python's `repr` and `%e` in corner cases.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from loom.ir.types import FLOAT_KINDS

# name -> (exponent bits, stored mantissa bits, explicit integer bit) for kinds numpy lacks.
_IEEE_LAYOUT = {"tf32": (8, 10, False), "f80": (15, 63, True), "f128": (15, 112, False)}


def _ieee_decode(bits: int, ebits: int, mbits: int, explicit: bool) -> tuple[int, Fraction | str]:
    sign = bits >> (ebits + mbits + explicit) & 1
    e = bits >> mbits & ((1 << ebits) - 1) if not explicit else bits >> (mbits + 1) & ((1 << ebits) - 1)
    m = bits & ((1 << mbits) - 1)
    bias = (1 << (ebits - 1)) - 1
    if e == (1 << ebits) - 1:
        return sign, "nan" if m else "inf"
    if explicit:
        integer = bits >> mbits & 1
        mant = (integer << mbits) | m
        return sign, Fraction(mant, 1 << mbits) * Fraction(2) ** ((e or 1) - bias)
    if e == 0:
        return sign, Fraction(m, 1 << mbits) * Fraction(2) ** (1 - bias)
    return sign, Fraction((1 << mbits) | m, 1 << mbits) * Fraction(2) ** (e - bias)


def _ieee_encode(value: Fraction, negative: bool, ebits: int, mbits: int, explicit: bool) -> int:
    bias = (1 << (ebits - 1)) - 1
    sign_shift = ebits + mbits + explicit
    sign = int(negative) << sign_shift
    if value == 0:
        return sign
    emin = 1 - bias
    # Find e with 2^e <= value < 2^(e+1).
    e = value.numerator.bit_length() - value.denominator.bit_length()
    if Fraction(2) ** e > value:
        e -= 1
    e = max(e, emin)
    scaled = value / Fraction(2) ** (e - mbits)
    mant = _round_half_even(scaled)
    if mant >> (mbits + 1):
        mant >>= 1
        e += 1
    if e - emin + 1 >= (1 << ebits) - 1 and mant >> mbits:
        biased = (1 << ebits) - 1
        return sign | (biased << (mbits + explicit)) | (1 << mbits if explicit else 0)  # inf
    biased = e + bias if mant >> mbits else 0
    if explicit:
        return sign | (biased << (mbits + 1)) | mant
    return sign | (biased << mbits) | (mant & ((1 << mbits) - 1))


def _round_half_even(x: Fraction) -> int:
    q, r = divmod(x.numerator, x.denominator)
    twice = 2 * r
    if twice > x.denominator or (twice == x.denominator and q & 1):
        q += 1
    return q


def bits_to_value(kind: str, bits: int) -> float:
    """The value of a bit pattern as a Python float (exact for kinds up to f64)."""
    dtype = FLOAT_KINDS[kind][2]
    if dtype is not None:
        width = FLOAT_KINDS[kind][0]
        return float(np.array(bits, dtype=_uint_for(width)).view(dtype))
    sign, v = _ieee_decode(bits, *_IEEE_LAYOUT[kind])
    f = float("nan") if v == "nan" else float("inf") if v == "inf" else float(v)
    return -f if sign else f


def _uint_for(width: int):
    return np.uint8 if width <= 8 else np.uint16 if width <= 16 else np.uint32 if width <= 32 else np.uint64


_TEXT_BITS: dict[tuple[str, str], int] = {}


def value_to_bits(kind: str, value: float | str | Fraction) -> int:
    """Round a number (or its decimal text) to `kind`, returning the bit pattern. Decimal text
    reads as MLIR's parser reads it: to the nearest double first, then to `kind` (so the work is
    bounded whatever the exponent, and `1e999999999 : f128` is inf as in MLIR)."""
    if isinstance(value, str):
        key = (kind, value)
        bits = _TEXT_BITS.get(key)
        if bits is None:
            if len(_TEXT_BITS) > 50000:
                _TEXT_BITS.clear()
            bits = _TEXT_BITS[key] = _value_to_bits(kind, value)
        return bits
    return _value_to_bits(kind, value)


def _value_to_bits(kind: str, value: float | str | Fraction) -> int:
    f = float(value)
    dtype = FLOAT_KINDS[kind][2]
    if dtype is not None:
        with np.errstate(over="ignore", invalid="ignore"):
            arr = np.array(f, dtype=np.float64).astype(dtype)
        width = FLOAT_KINDS[kind][0]
        raw = int(arr.view(_uint_for(width)))
        return raw & ((1 << width) - 1)
    ebits, mbits, explicit = layout = _IEEE_LAYOUT[kind]
    negative = str(f).startswith("-")
    if f != f or f in (float("inf"), float("-inf")):
        expo = ((1 << ebits) - 1) << (mbits + explicit)
        top = 1 << (mbits + explicit - 1) if f != f else (1 << mbits if explicit else 0)
        if f != f and explicit:
            top |= 1 << mbits
        return (int(negative) << (ebits + mbits + explicit)) | expo | top
    return _ieee_encode(abs(Fraction(f)), negative, *layout)


def _exact(kind: str, bits: int) -> tuple[bool, Fraction | str]:
    """(negative, exact magnitude or 'inf'/'nan')."""
    dtype = FLOAT_KINDS[kind][2]
    if dtype is None:
        sign, v = _ieee_decode(bits, *_IEEE_LAYOUT[kind])
        return bool(sign), v
    f = bits_to_value(kind, bits)
    if f != f:
        return False, "nan"
    negative = np.signbit(f)
    if f in (float("inf"), float("-inf")):
        return bool(negative), "inf"
    return bool(negative), abs(Fraction(f))


def _apfloat_to_string(negative: bool, value: Fraction, precision_bits: int, format_precision: int,
                       max_padding: int, truncate_zero: bool) -> str:
    out = "-" if negative else ""
    if value == 0:
        if not max_padding:
            if truncate_zero:
                return out + "0.0E+0"
            return out + "0.0" + "0" * (format_precision - 1) + "e+00"
        return out + "0"
    if not format_precision:
        format_precision = 2 + precision_bits * 59 // 196
    # value = significand * 2^exp, significand odd.
    num, den = value.numerator, value.denominator
    exp2 = -(den.bit_length() - 1)  # den is a power of two for binary floats
    significand = num
    tz = (significand & -significand).bit_length() - 1
    significand >>= tz
    exp = exp2 + tz
    if exp > 0:
        significand <<= exp
        exp = 0
    elif exp < 0:
        significand *= 5 ** (-exp)
    # AdjustToPrecision on the integer: drop whole decimal digits with a truncating division.
    bits = significand.bit_length()
    bits_required = (format_precision * 196 + 58) // 59
    if bits > bits_required:
        tens = (bits - bits_required) * 59 // 196
        if tens:
            exp += tens
            significand //= 10 ** tens
    digits = str(significand)
    stripped = digits.rstrip("0")
    exp += len(digits) - len(stripped)
    buf = stripped[::-1]  # least significant first, as LLVM keeps it
    n = len(buf)
    if n > format_precision:
        first = n - format_precision
        if buf[first - 1] < "5":
            while first < n and buf[first] == "0":
                first += 1
            exp += first
            buf = buf[first:]
        else:
            chars = list(buf)
            i = first
            while i != n:
                if chars[i] == "9":
                    first += 1
                    i += 1
                else:
                    chars[i] = chr(ord(chars[i]) + 1)
                    break
            if first == n:
                exp += first
                buf = "1"
            else:
                exp += first
                buf = "".join(chars[first:])
    n = len(buf)
    if not max_padding:
        scientific = True
    elif exp >= 0:
        scientific = exp > max_padding or n + exp > format_precision
    else:
        msd = exp + n - 1
        scientific = False if msd >= 0 else -msd > max_padding
    digits = buf[::-1]
    if scientific:
        exp += n - 1
        s = digits[0] + "."
        if n == 1 and truncate_zero:
            s += "0"
        else:
            s += digits[1:]
        if not truncate_zero and format_precision > n - 1:
            s += "0" * (format_precision - n + 1)
        s += "E" if truncate_zero else "e"
        s += "+" if exp >= 0 else "-"
        e = str(abs(exp))
        if not truncate_zero and len(e) < 2:
            e = "0" + e
        return out + s + e
    if exp >= 0:
        return out + digits + "0" * exp
    whole = exp + n
    if whole > 0:
        return out + digits[:whole] + "." + digits[whole:]
    return out + "0." + "0" * (-whole) + digits


def format_float(kind: str, bits: int) -> tuple[str, bool]:
    """MLIR's printFloatValue: (text, printed_as_hex)."""
    negative, value = _exact(kind, bits)
    if not isinstance(value, str):
        precision = FLOAT_KINDS[kind][1]
        text = _apfloat_to_string(negative, value, precision, 6, 0, False)
        if _exact_text_bits(kind, text) == bits:
            return text, False
        text = _apfloat_to_string(negative, value, precision, 0, 3, True)
        if "." in text:
            return text, False
    return f"0x{bits:X}", True


def _exact_text_bits(kind: str, text: str) -> int:
    """The bits of decimal `text` rounded once to `kind` (APFloat's own string conversion, which
    MLIR's printer uses to check that the short form reads back)."""
    layout = _IEEE_LAYOUT.get(kind)
    if layout is None:
        return value_to_bits(kind, text)
    return _ieee_encode(abs(Fraction(text)), text.startswith("-"), *layout)
