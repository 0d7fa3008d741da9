"""onnxruntime's Tokenizer (explorer/executor/ops/contrib_tokenizer.py)."""
from __future__ import annotations

import numpy as np

from .contrib_support import DOMAIN
from .harness import Case

TEXTS = np.array([["Hello World", "I love computer science !", ""],
                  ["a,b;;c d", "xaby abab", "tokenize   these   words"]], dtype=object)


def _case(x: np.ndarray, mark: int = 0, pad: str = "#", shortest: int = 1, error: str | None = None,
          **attrs) -> Case:
    return Case("Tokenizer", 1, [x], {"mark": mark, "pad_value": pad, "mincharnum": shortest, **attrs},
                domain=DOMAIN, error=error)


def cases() -> list[Case]:
    row = TEXTS[1]
    found = [
        _case(TEXTS, separators=[" "]),
        _case(TEXTS, mark=1, separators=[" "]),
        _case(row, separators=[" ", ",", ";"]),
        _case(row, separators=[";+", "[ ,]"], shortest=2),
        _case(row, separators=["a|ab"]),  # leftmost-longest: "ab" where Python's re would take "a"
        _case(row, mark=1, separators=["b*"]),  # empty matches step one character on
        _case(TEXTS, separators=[""]),
        _case(TEXTS, mark=1, tokenexp="."),
        _case(row, tokenexp="[a-z]+", shortest=2),
        _case(TEXTS, mark=1, tokenexp="\\w+", pad=""),
        _case(row, tokenexp="a|ab|aba"),
        _case(np.array(["ÅÄÖ äbc", "日本語 テキスト"], dtype=object), separators=[" "], shortest=2),
        _case(np.array(["ÅÄÖ", "日本"], dtype=object), mark=1, separators=[""]),
        _case(np.array([" ", ";;"], dtype=object), mark=1, separators=[" ", ";"]),  # nothing left: width 0
        _case(np.empty((2, 0), dtype=object), separators=[" "]),
        _case(np.array(["abc"], dtype=object), separators=["("], error="no RE2 expression"),
        _case(np.array(["abc"], dtype=object), shortest=2, separators=[""], error="too big for tokenizing"),
    ]
    return found
