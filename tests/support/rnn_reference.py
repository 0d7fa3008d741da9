"""A deliberately plain per-item, per-step NumPy transcription of the GRU/LSTM/RNN equations of the ONNX
spec, in float64, used as a second judge for gates (onnxruntime only returns Y, Y_h, Y_c). The tests check it
against onnxruntime on every configuration onnxruntime accepts."""
from __future__ import annotations

import numpy as np

ACTIVATIONS = {  # the spec's table, written out independently of explorer's kernels
    "relu": lambda x, a, b: np.maximum(0.0, x),
    "tanh": lambda x, a, b: np.tanh(x),
    "sigmoid": lambda x, a, b: 1.0 / (1.0 + np.exp(np.minimum(-x, 700.0))),
    "affine": lambda x, a, b: a * x + b,
    "leakyrelu": lambda x, a, b: np.where(x >= 0, x, a * x),
    "thresholdedrelu": lambda x, a, b: np.where(x >= a, x, 0.0),
    "scaledtanh": lambda x, a, b: a * np.tanh(b * x),
    "hardsigmoid": lambda x, a, b: np.minimum(np.maximum(a * x + b, 0.0), 1.0),
    "elu": lambda x, a, b: np.where(x >= 0, x, a * (np.exp(x) - 1.0)),
    "softsign": lambda x, a, b: x / (1.0 + np.abs(x)),
    "softplus": lambda x, a, b: np.log(1.0 + np.exp(x)),
}
USES = {"affine": "ab", "leakyrelu": "a", "thresholdedrelu": "a", "scaledtanh": "ab", "hardsigmoid": "ab",
        "elu": "a"}
DEFAULTS = {"leakyrelu": (0.01, 0.0), "thresholdedrelu": (1.0, 0.0), "elu": (1.0, 0.0),
            "hardsigmoid": (0.2, 0.5), "affine": (1.0, 0.0), "scaledtanh": (1.0, 1.0)}
BLOCKS = {"GRU": 3, "LSTM": 4, "RNN": 1}
DEFAULT_ACTS = {"GRU": ["Sigmoid", "Tanh"], "LSTM": ["Sigmoid", "Tanh", "Tanh"], "RNN": ["Tanh"]}


def _functions(names, alphas, betas):
    alphas, betas, out = list(alphas), list(betas), []
    for name in names:
        key = name.lower()
        da, db = DEFAULTS.get(key, (0.0, 0.0))
        a = (alphas.pop(0) if alphas else da) if "a" in USES.get(key, "") else 0.0
        b = (betas.pop(0) if betas else db) if "b" in USES.get(key, "") else 0.0
        out.append(lambda x, f=ACTIVATIONS[key], a=a, b=b: f(x, a, b))
    return out


def reference(op: str, X, W, R, B=None, sequence_lens=None, initial_h=None, initial_c=None, P=None, *,
              direction="forward", linear_before_reset=0, clip=None, activations=None, activation_alpha=(),
              activation_beta=(), input_forget=0, **_):
    """(Y, Y_h, Y_c or None, gates) for layout 0 inputs; gates as explorer records them (NaN when padded)."""
    X = X.astype(np.float64)
    seq, batch, _ = X.shape
    nd = 2 if direction == "bidirectional" else 1
    H = R.shape[-1]
    g = BLOCKS[op]
    per = len(DEFAULT_ACTS[op])
    names = list(activations) if activations else DEFAULT_ACTS[op] * nd
    if op == "RNN" and nd == 1 and len(names) == 2:
        names = names[:1]
    acts = _functions(names, activation_alpha, activation_beta)
    lens = np.full(batch, seq) if sequence_lens is None else np.asarray(sequence_lens)
    cl = (lambda v: np.clip(v, -clip, clip)) if clip is not None else (lambda v: v)
    Y = np.zeros((seq, nd, batch, H))
    Y_h = np.zeros((nd, batch, H))
    Y_c = np.zeros((nd, batch, H))
    names_g = {"GRU": ["z", "r", "h"], "LSTM": ["i", "o", "f", "c"], "RNN": ["a"]}[op]
    recorded = names_g + ["H"] + (["C"] if op == "LSTM" else [])
    gates = {k: np.full((seq, nd, batch, H), np.nan) for k in recorded}
    for d in range(nd):
        f = acts[d * per:(d + 1) * per]
        w = W[d].astype(np.float64).reshape(g, H, -1)
        r = R[d].astype(np.float64).reshape(g, H, H)
        bias = np.zeros(2 * g * H) if B is None else B[d].astype(np.float64)
        wb, rb = bias[:g * H].reshape(g, H), bias[g * H:].reshape(g, H)
        p = np.zeros((3, H)) if P is None else P[d].astype(np.float64).reshape(3, H)
        reverse = direction == "reverse" or d == 1
        for n in range(batch):
            h = np.zeros(H) if initial_h is None else initial_h[d, n].astype(np.float64)
            c = np.zeros(H) if initial_c is None else initial_c[d, n].astype(np.float64)
            steps = range(lens[n])
            for t in (reversed(steps) if reverse else steps):
                x = X[t, n]
                if op == "GRU":
                    z = f[0](cl(w[0] @ x + r[0] @ h + wb[0] + rb[0]))
                    rr = f[0](cl(w[1] @ x + r[1] @ h + wb[1] + rb[1]))
                    if linear_before_reset:
                        hh = f[1](cl(w[2] @ x + rr * (r[2] @ h + rb[2]) + wb[2]))
                    else:
                        hh = f[1](cl(w[2] @ x + r[2] @ (rr * h) + rb[2] + wb[2]))
                    h = (1 - z) * hh + z * h
                    for k, v in zip("zrh", (z, rr, hh)):
                        gates[k][t, d, n] = v
                elif op == "LSTM":
                    i = f[0](cl(w[0] @ x + r[0] @ h + p[0] * c + wb[0] + rb[0]))
                    ff = 1 - i if input_forget else f[0](cl(w[2] @ x + r[2] @ h + p[2] * c + wb[2] + rb[2]))
                    cc = f[1](cl(w[3] @ x + r[3] @ h + wb[3] + rb[3]))
                    c = ff * c + i * cc
                    o = f[0](cl(w[1] @ x + r[1] @ h + p[1] * c + wb[1] + rb[1]))
                    h = o * f[2](c)
                    for k, v in zip("iofc", (i, o, ff, cc)):
                        gates[k][t, d, n] = v
                    gates["C"][t, d, n] = c
                else:
                    a = w[0] @ x + r[0] @ h + wb[0] + rb[0]
                    h = f[0](cl(a))
                    gates["a"][t, d, n] = a
                Y[t, d, n] = h
                gates["H"][t, d, n] = h
            if lens[n] > 0:
                Y_h[d, n], Y_c[d, n] = h, c
    gates["mask"] = np.arange(seq)[:, None, None] < np.broadcast_to(lens, (nd, batch))[None]
    return Y, Y_h, (Y_c if op == "LSTM" else None), gates
