"""AffineGrid and GridSample (explorer/executor/ops/sampling.py) at every version, mode, padding mode and
align_corners, 2-D and 3-D (and 1-D from GridSample-20)."""
from __future__ import annotations

import numpy as np

from .gen import rng, schema_types, since_versions, values
from .harness import Case, Cast, run_onnxruntime

ONE_PIXEL = ("a one-pixel axis with align_corners: onnxruntime gives 1, onnx.reference -1; its only center is 0, "
             "as in PyTorch's affine_grid, which the spec cites")
ONE_D = "onnxruntime samples 4-D and 5-D only: judged by onnxruntime on the same row as a (N, C, 1, W) image"
CUBIC_3D = "onnxruntime has no cubic mode in 3-D: the spec's tricubic sum (Keys, a = -0.75), pixel by pixel"


def _affine_grid() -> list[Case]:
    found = []
    for dtype in schema_types("AffineGrid", 20, "T1"):
        for align in (0, 1):
            for k, size in enumerate([(2, 3, 4, 5), (1, 2, 3, 4, 5), (2, 1, 1, 3)]):
                r = rng("AffineGrid", str(dtype), align, k)
                rank = len(size) - 2
                theta = values(r, (size[0], rank, rank + 1), dtype, -1.5, 1.5)
                tol = (1e-2, 1e-2) if dtype == np.float16 else None
                judge = {}
                if align and 1 in size[2:]:
                    judge = {"expected": [_affine_by_hand(theta, size)], "reason": ONE_PIXEL}
                found.append(Case("AffineGrid", 20, [theta, np.array(size, np.int64)], {"align_corners": align},
                                  tol=tol, dtype_sweep=not judge, **judge))
    return found


def _affine_by_hand(theta: np.ndarray, size: tuple[int, ...]) -> np.ndarray:
    """align_corners=1: pixel centers at linspace(-1, 1, n) (0 for n = 1); grid = theta @ (x, y, 1)."""
    axes = [np.linspace(-1, 1, n) if n > 1 else np.zeros(1) for n in size[2:]]
    mesh = np.meshgrid(*axes, indexing="ij")
    points = np.stack([*mesh[::-1], np.ones(size[2:])], axis=-1).astype(np.float64)
    return np.einsum("njk,...k->n...j", theta.astype(np.float64), points).astype(theta.dtype)


def _as_row_by_onnxruntime(x: np.ndarray, grid: np.ndarray, attrs: dict, version: int) -> np.ndarray:
    """A 1-D sample of (N, C, W) as onnxruntime's 2-D sample of (N, C, 1, W) at y = 0 (the row's center)."""
    grid_2d = np.stack([grid[..., 0], np.zeros_like(grid[..., 0])], axis=-1)[:, None]
    result = run_onnxruntime([Case("GridSample", version, [x[:, :, None], grid_2d], attrs)])[0]
    assert not isinstance(result, str), result
    return result[0][:, :, 0]


def _keys(t: float) -> list[float]:
    a, d = -0.75, abs(t)
    return [((a * (d + 1) - 5 * a) * (d + 1) + 8 * a) * (d + 1) - 4 * a, ((a + 2) * d - (a + 3)) * d * d + 1,
            ((a + 2) * (1 - d) - (a + 3)) * (1 - d) ** 2 + 1, ((a * (2 - d) - 5 * a) * (2 - d) + 8 * a) * (2 - d) - 4 * a]


def _cubic_3d_by_hand(x: np.ndarray, grid: np.ndarray, padding: str, align: int) -> np.ndarray:
    """Tricubic sampling, one output value and one of the 64 pixels at a time."""
    n_, c_, *dims = x.shape
    out = np.zeros((n_, c_, *grid.shape[1:-1]))
    for n in range(n_):
        for o in np.ndindex(*grid.shape[1:-1]):
            where = [float(v) for v in grid[(n, *o)][::-1]]  # (z, y, x)
            pos = [(w + 1) / 2 * (d - 1) if align else ((w + 1) * d - 1) / 2 for w, d in zip(where, dims)]
            first = [int(np.floor(p)) - 1 for p in pos]
            weights = [_keys(p - f - 1) for p, f in zip(pos, first)]
            for taps in np.ndindex(4, 4, 4):
                index = [_pad_index(f + t, d, padding, align) for f, t, d in zip(first, taps, dims)]
                if None in index:
                    continue
                w = weights[0][taps[0]] * weights[1][taps[1]] * weights[2][taps[2]]
                out[(n, slice(None), *o)] += w * x[(n, slice(None), *index)].astype(np.float64)
    return out.astype(x.dtype)


def _pad_index(i: int, d: int, padding: str, align: int) -> int | None:
    if padding == "zeros":
        return i if 0 <= i < d else None
    if padding == "border":
        return min(max(i, 0), d - 1)
    low, high = (0.0, d - 1.0) if align else (-0.5, d - 0.5)
    v = float(i)
    while v < low or v > high:  # reflect by the nearer border until inside
        v = 2 * low - v if v < low else 2 * high - v
    return int(v)


def _grid(r: np.random.Generator, batch: int, out: tuple[int, ...], rank: int, dtype: object) -> np.ndarray:
    """Positions mostly inside [-1, 1], some outside (to exercise padding), some exactly on pixel centers."""
    grid = values(r, (batch, *out, rank), np.float64, -1.6, 1.6)
    flat = grid.reshape(-1)
    flat[: flat.size // 6] = np.round(flat[: flat.size // 6] * 2) / 2  # halfway points for nearest
    return grid.astype(dtype)


def _grid_sample() -> list[Case]:
    found = []
    for version in since_versions("GridSample"):
        modes = ("bilinear", "nearest", "bicubic") if version < 20 else ("linear", "nearest", "cubic")
        shapes = [((2, 3, 4, 5), (3, 4))]
        if version >= 20:
            shapes += [((1, 2, 3, 4, 5), (2, 3, 2)), ((2, 2, 6), (5,))]
        for mode in modes:
            for padding in ("zeros", "border", "reflection"):
                for align in (0, 1):
                    for k, (x_shape, out) in enumerate(shapes):
                        r = rng("GridSample", version, mode, padding, align, k)
                        x = values(r, x_shape, np.float32)
                        grid = _grid(r, x_shape[0], out, len(x_shape) - 2, np.float32)
                        attrs = {"mode": mode, "padding_mode": padding, "align_corners": align}
                        judge = {}
                        if len(x_shape) == 3:
                            judge = {"expected": [_as_row_by_onnxruntime(x, grid, attrs, version)], "reason": ONE_D}
                        elif len(x_shape) == 5 and mode == "cubic":
                            judge = {"expected": [_cubic_3d_by_hand(x, grid, padding, align)], "reason": CUBIC_3D}
                        found.append(Case("GridSample", version, [x, grid], attrs, tol=(1e-4, 1e-5), **judge))
        for dtype in schema_types("GridSample", version, "T1"):
            if dtype.kind in "OUSbc":
                continue
            r = rng("GridSample", version, str(dtype))
            x = values(r, (1, 2, 3, 4), dtype, 0 if dtype.kind == "u" else -50, 50)
            grid = _grid(r, 1, (2, 3), 2, np.float32)
            found.append(Case("GridSample", version, [x, grid], dtype_sweep=True, cast=GRID_CAST,
                              tol=(1e-2, 1e-2) if dtype == np.float16 else (1e-4, 1e-5)))
    return found


GRID_CAST = Cast(np.float32, "pixels (integers below 51, float16) are exact in float32, sampled in float32 and cast "
                 "back (integers truncated); float64 is compared at float32's precision")
NON_NUMERIC = "onnxruntime samples floats only: judged by onnxruntime sampling the pixels' positions (or parts)"


def _by_float_sample(x: np.ndarray, grid: np.ndarray, attrs: dict, version: int) -> np.ndarray:
    """Strings and bools: onnxruntime's nearest sample of each pixel's flat position + 1 (0 where padded picks
    nothing) names the pixel; complex: the real and imaginary parts sampled apart."""
    def sample(values: np.ndarray) -> np.ndarray:
        result = run_onnxruntime([Case("GridSample", version, [values, grid], attrs)])[0]
        assert not isinstance(result, str), result
        return result[0]
    if x.dtype.kind == "c":
        return (sample(x.real.astype(np.float32)) + 1j * sample(x.imag.astype(np.float32))).astype(x.dtype)
    positions = np.arange(1, x[0].size + 1, dtype=np.float32).reshape((1, *x.shape[1:]))
    picked = sample(np.repeat(positions, x.shape[0], axis=0)).astype(np.int64)
    flat = x.reshape(x.shape[0], -1)
    fill = "" if x.dtype.kind == "O" else False
    return np.array([[flat[n, p - 1] if p > 0 else fill for p in row] for n, row in
                     enumerate(picked.reshape(x.shape[0], -1))], dtype=x.dtype).reshape(picked.shape)


def _non_numeric() -> list[Case]:
    found = []
    for version in since_versions("GridSample"):
        nearest = "nearest"
        for padding in ("zeros", "border", "reflection"):
            r = rng("GridSample", version, "non-numeric", padding)
            grid = _grid(r, 2, (3, 2), 2, np.float32)
            attrs = {"mode": nearest, "padding_mode": padding, "align_corners": 0}
            words = np.array([f"w{k}" for k in range(24)], dtype=object).reshape(2, 1, 3, 4)
            flags = values(r, (2, 1, 3, 4), np.bool_)
            linear = {**attrs, "mode": "bilinear" if version < 20 else "linear"}
            pairs = (values(r, (2, 2, 3, 4), np.float64) + 1j * values(r, (2, 2, 3, 4), np.float64)).astype(np.complex64)
            for x, how in ((words, attrs), (flags, attrs), (pairs, linear)):
                found.append(Case("GridSample", version, [x, grid], how, tol=(1e-5, 1e-5),
                                  expected=[_by_float_sample(x, grid, how, version)], reason=NON_NUMERIC))
        found.append(Case("GridSample", version, [words, grid], {"mode": "bilinear" if version < 20 else "linear"},
                          error="only be sampled with mode nearest"))
    return found


def cases() -> list[Case]:
    return [*_affine_grid(), *_grid_sample(), *_non_numeric()]
