"""onnxruntime's Tokenizer (com.microsoft), as its CPU kernel computes it: each string of X ([C] or [N, C]) cut into
tokens along a new last axis, padded with pad_value to the longest row.

- `separators` (RE2 expressions, leftmost-longest): each one in turn cuts every piece the previous ones left,
  keeping the pieces of at least `mincharnum` characters between its matches; a separator that leaves nothing ends
  the row empty. [""] tokenizes characters.
- `tokenexp` (one RE2 expression): its matches of at least `mincharnum` characters are the tokens (a shorter one
  is skipped one character on). "." tokenizes characters.
- `mark` puts 0x02 before and 0x03 after each row's tokens (the padding comes after them); rows with no token at
  all give a last axis of 0, without marks.

RE2 (google-re2) matches as onnxruntime's does: Python's `re` would pick the leftmost alternative, not the longest."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import re2

from .base import KernelFactory, OpNode, PlainKernel

DOMAIN = "com.microsoft"
START, END = "\x02", "\x03"


def _compile(op: Any, pattern: str, what: str) -> Any:
    options = re2.Options()
    options.longest_match = True
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        raise op.error(f"{what} {pattern!r} is no RE2 expression: {exc}") from None


def _cut(text: str, separator: Any, shortest: int) -> list[str]:
    """The pieces of `text` between the matches of `separator`, those of at least `shortest` characters."""
    pieces, start = [], 0
    while True:
        match = separator.search(text, start)
        if match is None:
            break
        begin, end = match.span()
        if begin - start >= shortest:
            pieces.append(text[start:begin])
        start = end if end > begin else begin + 1
        if start > len(text):
            return pieces
    if len(text) - start >= shortest:
        pieces.append(text[start:])
    return pieces


def _matches(text: str, expression: Any, shortest: int) -> list[str]:
    """The matches of `expression` of at least `shortest` characters, scanning on one character past a shorter one."""
    tokens: list[str] = []
    if len(text) < shortest:
        return tokens
    start = 0
    while start <= len(text):
        match = expression.search(text, start)
        if match is None:
            break
        begin, end = match.span()
        if end - begin >= shortest:
            tokens.append(match.group())
            start = end
        else:
            start = begin + 1
    return tokens


def _splitter(op: OpNode) -> Callable[[str], list[str]]:
    """One string's tokens as the node's attributes say: its characters, the matches of `tokenexp`, or the pieces
    between `separators` (each at least `mincharnum` characters)."""
    shortest = op.get_int("mincharnum")
    separators = op.attr("separators")
    separators = None if separators is None else [s.decode() if isinstance(s, bytes) else str(s) for s in separators]
    expression = op.attr("tokenexp")
    if shortest < 1:
        raise op.error(f"mincharnum must be positive, got {shortest}")
    if separators is None and not expression:
        raise op.error("Tokenizer needs separators or a non-empty tokenexp")
    if separators is not None and not separators:
        raise op.error("separators must not be empty")
    by_character = (separators == [""]) if separators is not None else expression == "."
    if by_character and shortest > 1:
        raise op.error(f"mincharnum={shortest} is too big for tokenizing characters")
    if by_character:
        return list
    if separators is None:
        token_expression = _compile(op, str(expression), "tokenexp")
        return lambda text: _matches(text, token_expression, shortest)
    compiled = [_compile(op, s, "separator") for s in separators]

    def pieces_of(text: str) -> list[str]:
        pieces = [text]
        for separator in compiled:
            pieces = [piece for text in pieces for piece in _cut(text, separator, shortest)]
            if not pieces:
                break
        return pieces

    return pieces_of


def tokenizer_kernel(op: OpNode) -> PlainKernel:
    mark, pad = bool(op.get_int("mark")), op.get_str("pad_value")
    row = _splitter(op)

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x = args[0]
        if x.ndim not in (1, 2):
            raise ValueError(f"X {x.shape} must be [C] or [N, C]")
        if x.size == 0:
            return (np.empty(x.shape[:-1] + (0,), dtype=object),)
        rows = [row(s.decode("utf-8") if isinstance(s, bytes) else str(s)) for s in x.reshape(-1)]
        width = max(len(r) for r in rows)
        if width == 0:
            return (np.empty(x.shape + (0,), dtype=object),)
        marks = 2 if mark else 0
        out = np.full((len(rows), width + marks), pad, dtype=object)
        for k, tokens in enumerate(rows):
            out[k, marks // 2:marks // 2 + len(tokens)] = tokens
            if mark:
                out[k, 0], out[k, len(tokens) + 1] = START, END
        return (out.reshape(x.shape + (width + marks,)),)

    return run


KERNELS: dict[str, KernelFactory] = {"Tokenizer": tokenizer_kernel}
