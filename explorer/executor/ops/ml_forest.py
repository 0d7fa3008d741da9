"""Tree ensembles as arrays, and their evaluation for every row and tree at once, one tree level per step.

A `Forest` holds every node of every tree (TreeEnsembleRegressor/Classifier 1 and 3 as their `nodes_*` lists;
TreeEnsemble 5's interior nodes followed by its leaves): feature, threshold, comparison mode, the next node on
the true and false side, whether NaN goes the true way, and the dense leaf weights per target with which targets
a leaf touches. `leaves(forest, x)` walks an [N, T] array of node indices from the roots until all are leaves.
BRANCH_MEMBER (5) tests membership in a node's set of values."""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

MODES = ("BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ", "BRANCH_MEMBER", "LEAF")
LEAF = MODES.index("LEAF")
MEMBER = MODES.index("BRANCH_MEMBER")
_COMPARE = (np.less_equal, np.less, np.greater_equal, np.greater, np.equal, np.not_equal)


@dataclass
class Forest:
    feature: np.ndarray  # [nodes] int64
    threshold: np.ndarray  # [nodes] in the type the comparisons run in
    mode: np.ndarray  # [nodes] int8, an index into MODES
    true_next: np.ndarray  # [nodes] int64
    false_next: np.ndarray  # [nodes] int64
    missing_true: np.ndarray  # [nodes] bool
    roots: np.ndarray  # [trees] int64
    weights: np.ndarray  # [nodes, targets]: a leaf's weight per target (summed), 0 elsewhere
    touches: np.ndarray  # [nodes, targets] bool: the targets a leaf has a weight for
    members: np.ndarray | None = None  # [nodes, k]: BRANCH_MEMBER sets padded with NaN

    @cached_property
    def max_feature(self) -> int:
        """The largest feature an interior node reads (-1 for none); found once, as `branch_modes`: a forest is
        made once per node and its arrays never change."""
        interior = self.mode != LEAF
        return int(self.feature[interior].max()) if interior.any() else -1

    @cached_property
    def leaf_sums(self) -> np.ndarray | None:
        """`weights` for summing, when every leaf has a weight for every target (every one-target forest): no
        target is then left untouched, and a sum over the trees of a row is the aggregate. Its zeros are +0, so a
        sum of them is +0, as onnxruntime's, which adds the weights to a score starting at 0."""
        leaf = self.mode == LEAF
        return self.weights + 0 if self.touches[leaf].all() else None

    @cached_property
    def branch_modes(self) -> np.ndarray:
        """The comparison modes its interior nodes use (indices into MODES), sorted."""
        return np.unique(self.mode[self.mode != LEAF])

    @cached_property
    def walk(self) -> Walk | None:
        """The tables of a walk in which every (row, tree) pair moves at every level; None when the branches
        reachable from the roots form a cycle (leaves() then moves only the pairs not at a leaf, and refuses the
        cycle only when a row takes it)."""
        leaf = self.mode == LEAF
        frontier = np.unique(self.roots)
        for depth in range(len(self.mode) + 2):
            frontier = frontier[~leaf[frontier]]
            if not frontier.size:
                own = np.arange(len(self.mode))
                following = np.stack([np.where(leaf, own, self.false_next), np.where(leaf, own, self.true_next)])
                return Walk(depth, np.where(leaf, 0, self.feature), following, bool(self.missing_true[~leaf].any()))
            frontier = np.unique(np.r_[self.true_next[frontier], self.false_next[frontier]])
        return None


@dataclass(frozen=True)
class Walk:
    """A forest walked level by level, every pair moving: a leaf leads to itself (and reads feature 0)."""

    depth: int  # the levels of the deepest tree
    feature: np.ndarray  # [nodes]: the feature each node reads
    following: np.ndarray  # [2, nodes]: the next node when the comparison is false (0) or true (1)
    missing: bool  # whether some interior node sends NaN the true way


def forest_from_lists(op: Any, dtype: np.dtype, n_targets: int, prefix: str) -> Forest:
    """The nodes of TreeEnsembleRegressor/Classifier 1 and 3 (`prefix` is "target" or "class"), checked as
    onnxruntime checks them: node ids unique per tree, branches that exist in the same tree and are not the node
    itself, a weight for every leaf (weights on interior nodes are ignored, as old converters wrote some)."""
    tree_ids = np.asarray(op.attr("nodes_treeids") or [], dtype=np.int64)
    node_ids = np.asarray(op.attr("nodes_nodeids") or [], dtype=np.int64)
    count = len(tree_ids)
    names = [m.decode() if isinstance(m, bytes) else str(m) for m in op.attr("nodes_modes") or []]
    unknown = sorted(set(names) - set(MODES) | ({"BRANCH_MEMBER"} & set(names)))
    if unknown:
        raise op.error(f"nodes_modes holds {unknown[0]!r}, which is not one of {', '.join(MODES[:6])} or LEAF")
    values = _floats(op, "nodes_values", dtype)
    lists = {"nodes_nodeids": node_ids, "nodes_modes": names, "nodes_values": values,
             **{name: op.attr(name) or [] for name in ("nodes_featureids", "nodes_truenodeids", "nodes_falsenodeids")}}
    for name, items in lists.items():
        if len(items) != count:
            raise op.error(f"{name} has {len(items)} entries where nodes_treeids has {count}")
    position = {(int(t), int(n)): i for i, (t, n) in enumerate(zip(tree_ids, node_ids))}
    if len(position) != count:
        raise op.error("two nodes of one tree share a node id")
    mode = np.array([MODES.index(m) for m in names], dtype=np.int8)
    true_next, false_next = (_links(op, name, tree_ids, mode, position) for name in
                             ("nodes_truenodeids", "nodes_falsenodeids"))
    missing = np.zeros(count, dtype=bool)
    tracks = op.attr("nodes_missing_value_tracks_true") or []
    missing[:min(len(tracks), count)] = np.asarray(tracks[:count], dtype=np.int64) == 1
    weights, touches = _leaf_weights(op, prefix, dtype, n_targets, mode, position)
    starts = np.flatnonzero(np.r_[True, tree_ids[1:] != tree_ids[:-1]]) if count else np.zeros(0, np.int64)
    return Forest(np.asarray(lists["nodes_featureids"], dtype=np.int64), values, mode, true_next, false_next,
                  missing, starts.astype(np.int64), weights, touches)


def forest_from_v5(op: Any, dtype: np.dtype) -> Forest:
    """TreeEnsemble-5's interior nodes (indices 0..n-1) and leaves (n..), with BRANCH_MEMBER sets."""
    featureids = np.asarray(op.attr("nodes_featureids") or [], dtype=np.int64)
    n = len(featureids)
    modes = np.asarray(op.attr("nodes_modes"), dtype=np.int64).reshape(-1)
    splits = np.asarray(op.attr("nodes_splits")).reshape(-1).astype(dtype)
    lists = {name: np.asarray(op.attr(name) or [], dtype=np.int64) for name in
             ("nodes_truenodeids", "nodes_falsenodeids", "nodes_trueleafs", "nodes_falseleafs")}
    for name, items in {"nodes_modes": modes, "nodes_splits": splits, **lists}.items():
        if len(items) != n:
            raise op.error(f"{name} has {len(items)} entries where nodes_featureids has {n}")
    if len(modes) and (modes.min() < 0 or modes.max() > MEMBER):
        raise op.error(f"nodes_modes must lie in [0, {MEMBER}], got {int(modes.max())}")
    targets = np.asarray(op.attr("leaf_targetids") or [], dtype=np.int64)
    leaf_weights = np.asarray(op.attr("leaf_weights")).reshape(-1).astype(dtype)
    n_targets = op.get_int("n_targets", 0)
    if len(targets) != len(leaf_weights):
        raise op.error("leaf_targetids and leaf_weights differ in length")
    if n_targets < 1 or (len(targets) and (targets.min() < 0 or targets.max() >= n_targets)):
        raise op.error(f"n_targets must be positive and leaf_targetids lie in [0, n_targets), n_targets={n_targets}")
    count = n + len(targets)
    true_next, false_next = (np.where(lists[f"nodes_{side}leafs"] != 0, n, 0) + lists[f"nodes_{side}nodeids"]
                             for side in ("true", "false"))
    for side, links, leafy in (("true", true_next, lists["nodes_trueleafs"]),
                               ("false", false_next, lists["nodes_falseleafs"])):
        bad = (links < 0) | (links >= count) | ((leafy == 0) & (links >= n))
        if bad.any():
            raise op.error(f"node {int(np.argmax(bad))}'s {side} branch points past the nodes or leaves")
    missing = np.zeros(count, dtype=bool)
    tracks = np.asarray(op.attr("nodes_missing_value_tracks_true") or [], dtype=np.int64)
    missing[:min(len(tracks), n)] = tracks[:n] == 1
    weights = np.zeros((count, n_targets), dtype=dtype)
    touches = np.zeros((count, n_targets), dtype=bool)
    weights[n + np.arange(len(targets)), targets] = leaf_weights
    touches[n + np.arange(len(targets)), targets] = True
    roots = np.asarray(op.attr("tree_roots") or [], dtype=np.int64)
    if len(roots) and (roots.min() < 0 or roots.max() >= max(n, 1)):
        raise op.error("tree_roots must index nodes_*")
    return Forest(np.r_[featureids, np.zeros(len(targets), np.int64)], np.r_[splits, np.zeros(len(targets), dtype)],
                  np.r_[modes, np.full(len(targets), LEAF)].astype(np.int8), np.r_[true_next, np.zeros(len(targets), np.int64)],
                  np.r_[false_next, np.zeros(len(targets), np.int64)], missing, roots, weights, touches,
                  _members(op, modes, count, dtype))


def _members(op: Any, modes: np.ndarray, count: int, dtype: np.dtype) -> np.ndarray | None:
    """Each BRANCH_MEMBER node's values (membership_values holds them in node order, each set ended by NaN)."""
    picked = np.flatnonzero(modes == MEMBER)
    if not picked.size:
        return None
    values = np.asarray(op.attr("membership_values") if op.attr("membership_values") is not None else [])
    values = values.reshape(-1).astype(np.float64)
    cuts = np.flatnonzero(np.isnan(values))
    sets = np.split(values, cuts)
    sets = [s[~np.isnan(s)] for s in sets]
    if len(sets) < picked.size:
        raise op.error(f"membership_values holds {len(sets)} sets for {picked.size} BRANCH_MEMBER nodes")
    width = max(1, max(len(s) for s in sets[:picked.size]))
    members = np.full((count, width), np.nan, dtype=dtype)
    for node, values_of in zip(picked, sets):
        members[node, :len(values_of)] = values_of
    return members


def _floats(op: Any, name: str, dtype: np.dtype) -> np.ndarray:
    """A FLOATS attribute, or its `<name>_as_tensor` double version, as `dtype`."""
    tensor = op.attr(f"{name}_as_tensor")
    if tensor is not None and np.asarray(tensor).size:
        if op.attr(name):
            raise op.error(f"{name} and {name}_as_tensor are both set")
        return np.asarray(tensor).reshape(-1).astype(dtype)
    return np.asarray(op.attr(name) or [], dtype=np.float32).astype(dtype)


def _links(op: Any, name: str, tree_ids: np.ndarray, mode: np.ndarray,
           position: dict[tuple[int, int], int]) -> np.ndarray:
    ids = op.attr(name) or []
    out = np.zeros(len(ids), dtype=np.int64)
    for i, (tree, target) in enumerate(zip(tree_ids, ids)):
        if mode[i] == LEAF:
            continue
        found = position.get((int(tree), int(target)))
        if found is None:
            raise op.error(f"node {i} of tree {tree} branches to node {target}, which the tree does not have")
        if found == i:
            raise op.error(f"node {i} of tree {tree} branches to itself")
        out[i] = found
    return out


def _leaf_weights(op: Any, prefix: str, dtype: np.dtype, n_targets: int, mode: np.ndarray,
                  position: dict[tuple[int, int], int]) -> tuple[np.ndarray, np.ndarray]:
    ids = np.asarray(op.attr(f"{prefix}_ids") or [], dtype=np.int64)
    trees = op.attr(f"{prefix}_treeids") or []
    nodes = op.attr(f"{prefix}_nodeids") or []
    values = _floats(op, f"{prefix}_weights", dtype)
    if not len(ids) == len(trees) == len(nodes) == len(values):
        raise op.error(f"{prefix}_ids, {prefix}_treeids, {prefix}_nodeids and {prefix}_weights differ in length")
    if len(ids) and (ids.min() < 0 or ids.max() >= n_targets):
        raise op.error(f"{prefix}_ids must lie in [0, {n_targets})")
    weights = np.zeros((len(mode), n_targets), dtype=dtype)
    touches = np.zeros((len(mode), n_targets), dtype=bool)
    firsts: dict[int, int] = {}
    for k, (tree, node, target) in enumerate(zip(trees, nodes, ids)):
        found = position.get((int(tree), int(node)))
        if found is None:
            raise op.error(f"a weight names node {node} of tree {tree}, which does not exist")
        if mode[found] != LEAF:
            continue
        if n_targets == 1:  # onnxruntime's one-target path keeps a leaf's first weight
            firsts.setdefault(found, k)
            continue
        weights[found, target] += values[k]
        touches[found, target] = True
    for found, k in firsts.items():
        weights[found, 0], touches[found, 0] = values[k], True
    bare = np.flatnonzero((mode == LEAF) & ~touches.any(axis=1))
    if bare.size:
        raise op.error(f"leaf {int(bare[0])} (in the nodes_* order) has no weight")
    return weights, touches


_EVERY_PAIR = 4096  # (row, tree) pairs up to which every pair moves at every level: fewer NumPy calls a level,
# where their count is the time; beyond, the pairs at a leaf stop (a deep tree beside shallow ones costs no more)


_EVERY_NODE = 1 << 15  # (row, node) pairs up to which leaves() compares every row at every node first


def leaves(forest: Forest, x: np.ndarray) -> np.ndarray:
    """The leaf each row of x [N, F] reaches in each tree: [N, trees] node indices, every row and tree moved one
    level per step, as many steps as the deepest tree has levels (a leaf leads to itself). A cycle in the
    branches is refused instead of looping."""
    walk = forest.walk
    if walk is None or x.shape[0] * forest.roots.size > _EVERY_PAIR:
        return _leaves_moving(forest, x)
    node = np.empty((x.shape[0], forest.roots.size), np.int64)
    node[...] = forest.roots
    present = forest.branch_modes
    compare = _COMPARE[present[0]] if present.size == 1 and present[0] != MEMBER else None
    rows = np.arange(x.shape[0])[:, None]
    threshold, missing_true, following = forest.threshold, forest.missing_true, walk.following
    if compare is not None and x.shape[0] * len(threshold) <= _EVERY_NODE:
        # every node's comparison for every row at once, then one gather a level: the same comparisons of the
        # same values, in a few NumPy calls instead of four to seven a level
        value = x.take(walk.feature, axis=1)
        hit = compare(value, threshold)
        if walk.missing:
            hit |= missing_true & np.isnan(value)
        after = np.where(hit, following[1], following[0])
        for _ in range(walk.depth):
            node = after[rows, node]
        return node
    for _ in range(walk.depth):
        value = x[rows, walk.feature[node]]
        hit = compare(value, threshold[node]) if compare is not None else _mixed(forest, node, value, present)
        if walk.missing:
            hit |= missing_true[node] & np.isnan(value)
        node = following[hit.view(np.uint8), node]
    return node


def _leaves_moving(forest: Forest, x: np.ndarray) -> np.ndarray:
    """leaves() moving only the pairs not at a leaf (for many pairs, or a forest whose branches hold a cycle: a
    row that takes the cycle is refused)."""
    node = np.empty((x.shape[0], forest.roots.size), np.int64)
    node[...] = forest.roots
    present = forest.branch_modes
    compare = _COMPARE[present[0]] if present.size == 1 and present[0] != MEMBER else None
    mode, feature, threshold, missing_true = forest.mode, forest.feature, forest.threshold, forest.missing_true
    for _ in range(len(mode) + 1):
        row, tree = (mode[node] != LEAF).nonzero()  # the (row, tree) pairs not at a leaf yet, in row order
        if not row.size:
            return node
        at = node[row, tree]
        value = x[row, feature[at]]
        hit = compare(value, threshold[at]) if compare is not None else _mixed(forest, at, value, present)
        hit |= missing_true[at] & np.isnan(value)
        node[row, tree] = np.where(hit, forest.true_next[at], forest.false_next[at])
    raise ValueError("the trees' branches form a cycle")


def _mixed(forest: Forest, at: np.ndarray, value: np.ndarray, present: np.ndarray) -> np.ndarray:
    mode, threshold = forest.mode[at], forest.threshold[at]
    hit = np.zeros(at.shape, dtype=bool)
    for m in present:
        pick = mode == m
        if m == MEMBER:
            assert forest.members is not None
            hit[pick] = (forest.members[at[pick]] == value[pick, None]).any(axis=1)
        else:
            hit[pick] = _COMPARE[m](value[pick], threshold[pick])
    return hit
