"""TreeEnsembleRegressor, TreeEnsembleClassifier (ai.onnx.ml 1, 3) and TreeEnsemble (5) (explorer/executor/ops/
ml_trees.py): seeded random forests with every comparison mode, NaN routed by missing-value tracks, inputs on
the thresholds, several targets per leaf, every aggregate function and post transform, base values of every
length, binary classifiers with one class id (weights all positive or mixed) and with two, string labels,
double attributes (`*_as_tensor`), BRANCH_MEMBER sets, and the deprecated versions refused."""
from __future__ import annotations

from typing import Any

import numpy as np
from onnx import numpy_helper

from .gen import rng
from .harness import Case, Cast

ML = "ai.onnx.ml"
MODES = ("BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ")
FLOAT_OUTPUT = Cast(np.float32, "the output is float32 whatever the input's type: the features, quarters and "
                                "integers below 10, are exact in float32 and meet the thresholds alike")
GRID = np.array([-1.0, -0.5, 0.0, 0.5, 1.0], dtype=np.float32)
TRANSFORMS = ("NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO", "PROBIT")


def forest(r: np.random.Generator, trees: int, features: int, targets: int, modes: tuple[str, ...] = MODES[:1],
           depth: int = 3, per_leaf: int = 1, signs: str = "mixed") -> dict[str, list[Any]]:
    """nodes_* and leaf lists of random trees: node ids in depth-first order, thresholds on a grid the inputs
    also hit, `per_leaf` (target, weight) pairs per leaf."""
    lists: dict[str, list[Any]] = {k: [] for k in ("treeids", "nodeids", "featureids", "modes", "values",
                                                   "truenodeids", "falsenodeids", "missing", "hitrates")}
    leaf: dict[str, list[Any]] = {"ids": [], "nodeids": [], "treeids": [], "weights": []}
    for tree in range(trees):
        counter = [0]

        def grow(level: int, tree: int = tree, counter: list[int] = counter) -> int:
            node = counter[0]
            counter[0] += 1
            at = len(lists["nodeids"])
            is_leaf = level == depth or (level > 0 and r.random() < 0.25)
            for key, value in (("treeids", tree), ("nodeids", node), ("hitrates", 1.0),
                               ("featureids", int(r.integers(0, features)) if not is_leaf else 0),
                               ("modes", "LEAF" if is_leaf else str(r.choice(modes))),
                               ("values", float(r.choice(GRID)) if not is_leaf else 0.0),
                               ("missing", int(r.random() < 0.5) if not is_leaf else 0),
                               ("truenodeids", 0), ("falsenodeids", 0)):
                lists[key].append(value)
            if is_leaf:
                for target in r.choice(targets, size=min(per_leaf, targets), replace=False):
                    weight = float(r.uniform(0.05, 1) if signs == "positive" else r.uniform(-1, 1))
                    for key, value in (("ids", int(target)), ("nodeids", node), ("treeids", tree),
                                       ("weights", round(weight, 3))):
                        leaf[key].append(value)
                return node
            lists["truenodeids"][at] = grow(level + 1)
            lists["falsenodeids"][at] = grow(level + 1)
            return node

        grow(0)
    attrs = {f"nodes_{k}": v for k, v in lists.items() if k != "missing"}
    attrs["nodes_missing_value_tracks_true"] = lists["missing"]
    return {**attrs, **{f"leaf_{k}": v for k, v in leaf.items()}}


def inputs(r: np.random.Generator, rows: int, features: int, dtype: Any = np.float32) -> np.ndarray:
    """Values on the thresholds' grid and between, NaN in float inputs."""
    x = r.choice(np.r_[GRID, GRID + 0.25], size=(rows, features))
    if np.dtype(dtype).kind == "f":
        x[r.random(x.shape) < 0.1] = np.nan
        return x.astype(dtype)
    return np.round(x * 2).astype(dtype)


def as_lists(f: dict[str, list[Any]], prefix: str) -> dict[str, Any]:
    """The forest as TreeEnsembleRegressor (prefix "target") or TreeEnsembleClassifier ("class") attributes."""
    out = {k: v for k, v in f.items() if k.startswith("nodes_")}
    out.update({f"{prefix}_{k[5:]}": v for k, v in f.items() if k.startswith("leaf_")})
    return out


def _as_tensors(attrs: dict[str, Any], prefix: str) -> dict[str, Any]:
    """The float lists as version 3's double tensors."""
    out = dict(attrs)
    for name in ("nodes_values", "nodes_hitrates", f"{prefix}_weights", "base_values"):
        if name in out:
            out[f"{name}_as_tensor"] = numpy_helper.from_array(np.asarray(out.pop(name), np.float64), f"{name}_t")
    return out


def _regressors() -> list[Case]:
    found = []
    for version in (1, 3):
        for how in ("SUM", "AVERAGE", "MIN", "MAX"):
            for post in TRANSFORMS:
                for targets in (1, 3):
                    r = rng("TreeEnsembleRegressor", version, how, post, targets)
                    f = forest(r, 4, 3, targets, MODES if post == "NONE" else MODES[:2], per_leaf=1 + targets // 2)
                    attrs = {**as_lists(f, "target"), "n_targets": targets, "aggregate_function": how,
                             "post_transform": post}
                    if post == "PROBIT":  # inputs of probit in (0, 1)
                        attrs["target_weights"] = [abs(w) / 8 for w in attrs["target_weights"]]
                    if r.random() < 0.6:
                        attrs["base_values"] = [0.125 * (k + 1) for k in range(targets)]
                    found.append(Case("TreeEnsembleRegressor", version, [inputs(r, 12, 3)], attrs, domain=ML))
        r = rng("TreeEnsembleRegressor", version, "types")
        f = as_lists(forest(r, 3, 2, 2, MODES[:2]), "target")
        for dtype in (np.float64, np.int64, np.int32):
            found.append(Case("TreeEnsembleRegressor", version, [inputs(r, 8, 2, dtype)], {**f, "n_targets": 2},
                              domain=ML, cast=FLOAT_OUTPUT))  # onnxruntime's regressor takes floats only
    r = rng("TreeEnsembleRegressor", "tensors")
    f = as_lists(forest(r, 3, 2, 2, MODES), "target")
    found.append(Case("TreeEnsembleRegressor", 3, [inputs(r, 9, 2, np.float64)],
                      _as_tensors({**f, "n_targets": 2, "base_values": [0.5, -0.25]}, "target"), domain=ML))
    found.append(Case("TreeEnsembleRegressor", 3, [inputs(r, 3, 4)], {**f, "n_targets": 1}, domain=ML,
                      error="target_ids must lie in [0, 1)"))
    found.append(Case("TreeEnsembleRegressor", 3, [inputs(r, 3, 4)], {**f, "n_targets": 2, "base_values": [1.0]},
                      domain=ML, error="base_values has 1 values; it needs 0 or 2"))
    found.append(Case("TreeEnsembleRegressor", 5, [inputs(r, 3, 2)], {**f, "n_targets": 2}, domain=ML,
                      error="deprecated"))
    return found


def _classifiers() -> list[Case]:
    found = []
    for version in (1, 3):
        for classes, one_id, signs in ((3, False, "mixed"), (4, False, "positive"), (2, False, "mixed"),
                                       (2, True, "positive"), (2, True, "mixed")):
            for post in TRANSFORMS:
                r = rng("TreeEnsembleClassifier", version, classes, one_id, signs, post)
                f = as_lists(forest(r, 3, 3, 1 if one_id else classes, MODES[:3], signs=signs,
                                    per_leaf=1 if one_id else 2), "class")
                if one_id:
                    f["class_ids"] = [int(r.integers(0, 2))] * len(f["class_ids"])
                if post == "PROBIT":
                    f["class_weights"] = [abs(w) / 8 for w in f["class_weights"]]
                labels: dict[str, Any] = {"classlabels_int64s": list(range(10, 10 + classes))}
                if r.random() < 0.4:
                    labels = {"classlabels_strings": [f"c{k}" for k in range(classes)]}
                for base in ([], [0.25], [0.25, -0.5], [0.1] * classes):
                    if len(base) not in (0, classes) and not (one_id and len(base) == 1):
                        continue  # onnxruntime refuses other lengths, and leaves a column unwritten with one
                    if classes == 2 and post == "PROBIT" and len(base) < 2:
                        continue  # onnxruntime writes one column of a row that touched one class
                    attrs = {**f, **labels, "post_transform": post, **({"base_values": base} if base else {})}
                    found.append(Case("TreeEnsembleClassifier", version, [inputs(r, 10, 3)], attrs, outputs=2,
                                      domain=ML))
        r = rng("TreeEnsembleClassifier", version, "types")
        f = as_lists(forest(r, 2, 2, 3), "class")
        for dtype in (np.float64, np.int64, np.int32):
            found.append(Case("TreeEnsembleClassifier", version, [inputs(r, 8, 2, dtype)],
                              {**f, "classlabels_int64s": [0, 1, 2]}, outputs=2, domain=ML))
    r = rng("TreeEnsembleClassifier", "tensors")
    f = as_lists(forest(r, 3, 2, 3, MODES), "class")
    found.append(Case("TreeEnsembleClassifier", 3, [inputs(r, 9, 2, np.float64)],
                      _as_tensors({**f, "classlabels_int64s": [0, 1, 2], "base_values": [0.5, 0, -0.5]}, "class"),
                      outputs=2, domain=ML))
    found.append(Case("TreeEnsembleClassifier", 5, [inputs(r, 3, 2)], {**f, "classlabels_int64s": [0, 1, 2]},
                      outputs=2, domain=ML, error="deprecated"))
    return found


def _v5(r: np.random.Generator, f: dict[str, list[Any]], targets: int, dtype: Any,
        member: bool) -> dict[str, Any]:
    """TreeEnsemble-5's attributes for a forest: interior nodes and leaves apart, some EQ nodes as sets."""
    interior = [i for i, m in enumerate(f["nodes_modes"]) if m != "LEAF"]
    leaves = [i for i, m in enumerate(f["nodes_modes"]) if m == "LEAF"]
    key = {(f["nodes_treeids"][i], f["nodes_nodeids"][i]): i for i in range(len(f["nodes_modes"]))}
    leaf_at = {i: k for k, i in enumerate(leaves)}
    node_at = {i: k for k, i in enumerate(interior)}
    weight_of = {(t, n): (target, w) for target, n, t, w in
                 zip(f["leaf_ids"], f["leaf_nodeids"], f["leaf_treeids"], f["leaf_weights"])}
    attrs: dict[str, list[Any]] = {k: [] for k in ("nodes_featureids", "nodes_truenodeids", "nodes_falsenodeids",
                                                   "nodes_trueleafs", "nodes_falseleafs",
                                                   "nodes_missing_value_tracks_true")}
    modes, splits, members = [], [], []
    for i in interior:
        tree = f["nodes_treeids"][i]
        for side in ("true", "false"):
            child = key[(tree, f[f"nodes_{side}nodeids"][i])]
            is_leaf = f["nodes_modes"][child] == "LEAF"
            attrs[f"nodes_{side}nodeids"].append(leaf_at[child] if is_leaf else node_at[child])
            attrs[f"nodes_{side}leafs"].append(int(is_leaf))
        attrs["nodes_featureids"].append(f["nodes_featureids"][i])
        attrs["nodes_missing_value_tracks_true"].append(f["nodes_missing_value_tracks_true"][i])
        mode = MODES.index(f["nodes_modes"][i])
        if member and mode == 4 and r.random() < 0.7:
            mode = 6
            # onnxruntime implements sets of non-negative whole numbers only (a negative member matches anything)
            members += sorted({float(v) for v in r.choice([0.0, 1.0, 2.0], size=2)}) + [np.nan]
        modes.append(mode)
        splits.append(f["nodes_values"][i])
    leaf_targets, leaf_weights = zip(*[weight_of[(f["nodes_treeids"][i], f["nodes_nodeids"][i])] for i in leaves])
    roots = [node_at[i] for i in interior if f["nodes_nodeids"][i] == 0]
    out: dict[str, Any] = {**attrs, "tree_roots": roots, "n_targets": targets, "leaf_targetids": list(leaf_targets),
                           "nodes_modes": numpy_helper.from_array(np.array(modes, np.uint8), "modes"),
                           "nodes_splits": numpy_helper.from_array(np.array(splits, dtype), "splits"),
                           "leaf_weights": numpy_helper.from_array(np.array(leaf_weights, dtype), "weights")}
    if np.dtype(dtype) == np.float32:  # onnxruntime's type inference wants float hit rates whatever X is
        out["nodes_hitrates"] = numpy_helper.from_array(np.ones(len(modes), np.float32), "hits")
    if members:
        out["membership_values"] = numpy_helper.from_array(np.array(members, dtype), "members")
    return out


def _tree_ensemble() -> list[Case]:
    found = []
    for how in range(4):
        for post in range(5):
            for dtype in (np.float32, np.float64):
                r = rng("TreeEnsemble", how, post, np.dtype(dtype).name)
                targets = 1 + 2 * (post % 2)
                f = forest(r, 3, 3, targets, MODES if post == 0 else ("BRANCH_EQ", "BRANCH_LEQ"), depth=3)
                if post == 4:
                    f["leaf_weights"] = [abs(w) / 8 for w in f["leaf_weights"]]
                attrs = {**_v5(r, f, targets, dtype, member=True), "aggregate_function": how, "post_transform": post}
                swapped = {"judge_attrs": {**attrs, "post_transform": 3 - post},
                           "reason": "onnxruntime reads post_transform 1 as LOGISTIC and 2 as SOFTMAX (the spec: "
                                     "1 SOFTMAX, 2 LOGISTIC): judged with the other code"} if post in (1, 2) else {}
                tol = {"tol": (1e-6, 1e-7)} if post and dtype == np.float64 else {}  # transforms run in float32
                found.append(Case("TreeEnsemble", 5, [inputs(r, 12, 3, dtype)], attrs, domain=ML, **swapped, **tol))
    return [*found, *_by_hand()]


def _stump(mode: int, split: float, dtype: Any, members: list[float] | None = None) -> dict[str, Any]:
    """One tree of one node on feature 0: true to the leaf weighing 1, false to the one weighing 2."""
    attrs = {"n_targets": 1, "tree_roots": [0], "nodes_featureids": [0], "nodes_truenodeids": [0],
             "nodes_falsenodeids": [1], "nodes_trueleafs": [1], "nodes_falseleafs": [1], "leaf_targetids": [0, 0],
             "nodes_modes": numpy_helper.from_array(np.array([mode], np.uint8), "modes"),
             "nodes_splits": numpy_helper.from_array(np.array([split], dtype), "splits"),
             "leaf_weights": numpy_helper.from_array(np.array([1, 2], dtype), "w")}
    if members is not None:
        attrs["membership_values"] = numpy_helper.from_array(np.array(members, dtype), "members")
    return attrs


def _by_hand() -> list[Case]:
    """What onnxruntime cannot judge: sets with negative or fractional members (it implements sets of
    non-negative whole numbers only: a negative member matches anything) and float16 (it has no kernel)."""
    x = np.array([[-1], [2.5], [0], [np.nan], [-0.5]], np.float32)
    member = Case("TreeEnsemble", 5, [x], _stump(6, 0, np.float32, [-1, 2.5, np.nan]), domain=ML,
                  expected=[np.array([[1], [1], [2], [2], [2]], np.float32)],
                  reason="onnxruntime's sets are of non-negative whole numbers; the spec's value by hand")
    half = Case("TreeEnsemble", 5, [np.array([[0.25], [0.5], [0.75], [np.nan]], np.float16)],
                _stump(0, 0.5, np.float16), domain=ML, expected=[np.array([[1], [1], [2], [2]], np.float16)],
                reason="onnxruntime has no float16 TreeEnsemble; the spec's value by hand")
    return [member, half]


def cases() -> list[Case]:
    return [*_regressors(), *_classifiers(), *_tree_ensemble()]

