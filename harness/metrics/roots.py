"""Signed square roots of rationals, compared exactly: the form of a value that is irrational but whose square is
rational (a cosine of rational vectors: dot / sqrt(|a|^2 |b|^2), whose square dot^2 / (|a|^2 |b|^2) is exact).

``SignedRoot(sign, square)`` is ``sign * sqrt(square)``. Comparing it with a rational q needs no square root:
the signs first, then ``square`` against q^2. From that follow, exactly and with no tolerance, the double
nearest the value (``nearest_double``) and whether it lies in a closed interval of rationals (``within``): a
float's distance from the value is decided without ever rounding the value. ``rational`` is the value itself
when ``square`` is the square of a rational, and ``approximation`` a Fraction within 10^-40 relative of it
(for display and for sums of such values, which are no longer of this form).

A metric that states its value in this form puts ``as_detail()`` under ``details["exact_root"]``
(``ragas_compat.compare.classify`` reads it back with ``from_detail``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Any

APPROXIMATION_DIGITS = 40


def _cmp(a: Fraction | int, b: Fraction | int) -> int:
    return (a > b) - (a < b)


def _exact_sqrt(n: int) -> int | None:
    root = math.isqrt(n)
    return root if root * root == n else None


@dataclass(frozen=True)
class SignedRoot:
    """``sign * sqrt(square)``, ``sign`` in {-1, 0, 1}, ``square`` >= 0 (0 exactly when ``sign`` is 0)."""

    sign: int
    square: Fraction

    def compare(self, q: Fraction) -> int:
        """The sign of (value - q), exactly."""
        q_sign = _cmp(q, 0)
        if self.sign != q_sign:
            return _cmp(self.sign, q_sign)
        if self.sign == 0:
            return 0
        magnitude = _cmp(self.square, q * q)  # |value| against |q|
        return magnitude if self.sign > 0 else -magnitude

    @property
    def rational(self) -> Fraction | None:
        """The value when it is rational (``square`` the square of a rational), else None."""
        num, den = _exact_sqrt(self.square.numerator), _exact_sqrt(self.square.denominator)
        return None if num is None or den is None else self.sign * Fraction(num, den)

    def approximation(self) -> Fraction:
        """The value itself when rational, else its square root to ``APPROXIMATION_DIGITS`` significant digits
        (decimal's square root is correctly rounded; computed with 20 guard digits)."""
        exact = self.rational
        if exact is not None:
            return exact
        with localcontext() as ctx:
            ctx.prec = APPROXIMATION_DIGITS + 20
            root = (Decimal(self.square.numerator) / Decimal(self.square.denominator)).sqrt()
            ctx.prec = APPROXIMATION_DIGITS
            root = +root
        return self.sign * Fraction(root)

    def nearest_double(self) -> float:
        """The double nearest the value (correctly rounded): the approximation's double, moved by one ulp while
        the value lies beyond the midpoint to a neighbour (decided by ``compare``). An irrational value is never
        a midpoint; a rational one is rounded by ``Fraction.__float__`` (half to even)."""
        exact = self.rational
        if exact is not None:
            return float(exact)
        x = float(self.approximation())
        for _ in range(4):  # the 40-digit approximation is within a few ulps at most: it settles at once
            below, above = math.nextafter(x, -math.inf), math.nextafter(x, math.inf)
            if self.compare((Fraction(x) + Fraction(below)) / 2) < 0:
                x = below
            elif self.compare((Fraction(x) + Fraction(above)) / 2) > 0:
                x = above
            else:
                return x
        raise ArithmeticError(f"no nearest double found for the root {self}")

    def within(self, low: Fraction, high: Fraction) -> bool:
        """low <= value <= high, exactly."""
        return self.compare(low) >= 0 and self.compare(high) <= 0

    def as_detail(self) -> dict[str, Any]:
        return {"sign": self.sign, "square": self.square}

    @staticmethod
    def from_detail(detail: object) -> SignedRoot | None:
        """The root a metric stated under ``details["exact_root"]``; None when it states none."""
        if not isinstance(detail, dict) or not isinstance(detail.get("square"), Fraction):
            return None
        sign = detail.get("sign")
        return SignedRoot(sign, detail["square"]) if sign in (-1, 0, 1) else None
