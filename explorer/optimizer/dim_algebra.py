"""Dims as sums of symbols: a dim the propagation computes by Add, Sub or Mul by an integer is kept as a linear
combination of symbols (integer coefficients, integer constant) and written in one normal form, so that
`(seq+past)-past` is `seq` and `(n+1)-1` is `n`; anything else stays a string the symbols cannot cancel in.

A symbol is a dim name (a dim_param of the model, or a name onnx's inference invented); compound expressions are
the ones this module writes, always in parentheses and with any name that is not a plain identifier in braces,
so a name is never read as an expression.
"""
from __future__ import annotations

import re

Dim = int | str | None
Linear = tuple[dict[str, int], int]  # symbol -> coefficient, constant
_NAME = re.compile(r"[A-Za-z_][\w.:]*")
_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_][\w.:]*|\{[^{}]*\})|(.))")


def linear(dim: Dim) -> Linear | None:
    """`dim` as a linear combination of symbols, or None when it is unknown or not linear."""
    if dim is None:
        return None
    if isinstance(dim, int):
        return {}, dim
    if not dim.startswith("("):
        return {dim: 1}, 0
    return _Parser(_TOKEN.findall(dim)).expression()


def _text(dim: int | str) -> str:
    """A dim as it stands inside an expression: a name that is not a plain identifier in braces."""
    return str(dim) if isinstance(dim, int) or dim.startswith("(") or _NAME.fullmatch(dim) else f"{{{dim}}}"


def write(form: Linear) -> Dim:
    """The dim a linear combination stands for: an int, a lone symbol, or its normal form `(2*a+b-3)` (symbols
    sorted, the constant last)."""
    terms, constant = {k: form[0][k] for k in sorted(form[0]) if form[0][k]}, form[1]
    if not terms:
        return constant
    if constant == 0 and len(terms) == 1 and next(iter(terms.values())) == 1:
        return next(iter(terms))
    text = ""
    for name, coefficient in terms.items():
        sign = "-" if coefficient < 0 else "+"
        size = abs(coefficient)
        text += f"{sign}{'' if size == 1 else f'{size}*'}{_text(name)}"
    if constant:
        text += f"{'-' if constant < 0 else '+'}{abs(constant)}"
    return f"({text.removeprefix('+')})"


def combine(x: Dim, y: Dim, op: str) -> Dim:
    """x op y (op one of + - *) on two dims, at least one of them a symbol or an expression; None when either is
    unknown."""
    if x is None or y is None:
        return None
    a, b = linear(x), linear(y)
    if a is not None and b is not None:
        if op in "+-":
            sign = 1 if op == "+" else -1
            terms = dict(a[0])
            for name, coefficient in b[0].items():
                terms[name] = terms.get(name, 0) + sign * coefficient
            return write((terms, a[1] + sign * b[1]))
        scale, other = (a[1], b) if not a[0] else (b[1], a) if not b[0] else (None, a)
        if scale is not None:
            return write(({k: v * scale for k, v in other[0].items()}, other[1] * scale))
    return f"({_text(x)}{op}{_text(y)})"


class _Parser:
    """Reads the expressions `write` and `combine` produce: sums of [int*]symbol terms and ints in parentheses,
    nested; None for anything else (a product of two symbols, a division)."""

    def __init__(self, tokens: list[tuple[str, str, str]]) -> None:
        self.tokens, self.at = tokens, 0

    def expression(self) -> Linear | None:
        found = self._sum()
        return found if found is not None and self.at == len(self.tokens) else None

    def _peek(self) -> str:
        if self.at >= len(self.tokens):
            return ""
        number, name, other = self.tokens[self.at]
        return number or name or other

    def _sum(self) -> Linear | None:
        sign, constant = 1, 0
        terms: dict[str, int] = {}
        if self._peek() == "-":
            sign, self.at = -1, self.at + 1
        while True:
            term = self._term()
            if term is None:
                return None
            for name, coefficient in term[0].items():
                terms[name] = terms.get(name, 0) + sign * coefficient
            constant += sign * term[1]
            op = self._peek()
            if op not in ("+", "-"):
                return terms, constant
            sign, self.at = (1 if op == "+" else -1), self.at + 1

    def _term(self) -> Linear | None:
        left = self._atom()
        while left is not None and self._peek() == "*":
            self.at += 1
            right = self._atom()
            if right is None or (left[0] and right[0]):
                return None
            scale, other = (left[1], right) if not left[0] else (right[1], left)
            left = ({k: v * scale for k, v in other[0].items()}, other[1] * scale)
        return left

    def _atom(self) -> Linear | None:
        if self.at >= len(self.tokens):
            return None
        number, name, other = self.tokens[self.at]
        self.at += 1
        if number:
            return {}, int(number)
        if name:
            return {name[1:-1] if name.startswith("{") else name: 1}, 0
        if other == "(":
            inner = self._sum()
            if inner is None or self._peek() != ")":
                return None
            self.at += 1
            return inner
        return None
