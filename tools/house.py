"""Draw explorer's packaging as a house: rooms (the top-level modules and packages of `explorer`), the import
arrows between them (every import, type-only and inside functions too), the floors they stand on (a room stands
one floor above the highest room it imports) and the circles (rooms that import each other, at any distance).
The imports pyproject.toml declares, with their reasons, in the no-cycles contract are listed apart and left out.

    python tools/house.py            # one line per floor, then the circles and the declared imports
"""
from __future__ import annotations

import fnmatch
import sys
from pathlib import Path

import grimp
import tomllib

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def declared_imports() -> list[tuple[str, str]]:
    """(importer, imported) patterns the no-cycles contract ignores, each declared there with its reason."""
    config = tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]["contracts"]
    found = []
    for contract in config:
        if contract.get("type") == "acyclic_siblings":
            for line in contract.get("ignore_imports", []):
                importer, _, imported = line.partition(" -> ")
                found.append((importer.strip(), imported.strip()))
    return found


def _declared(importer: str, imported: str, declared: list[tuple[str, str]]) -> bool:
    return any(fnmatch.fnmatch(importer, a.replace("**", "*")) and fnmatch.fnmatch(imported, b.replace("**", "*"))
               for a, b in declared)


def rooms_and_arrows(package: str = "explorer") -> tuple[set[str], set[tuple[str, str]]]:
    """The top-level rooms of `package` and the arrows (importer, imported) between them."""
    graph = grimp.build_graph(package)
    declared = declared_imports()

    def room(module: str) -> str:
        return ".".join(module.split(".")[:2])
    rooms = {room(m) for m in graph.modules if m != package}
    arrows = {(room(a), room(b)) for a in graph.modules for b in graph.find_modules_directly_imported_by(a)
              if b.startswith(package + ".") and a != package and room(a) != room(b)
              and not _declared(a, b, declared)}
    return rooms, arrows


def circles(rooms: set[str], arrows: set[tuple[str, str]]) -> list[list[str]]:
    """Strongly connected groups of more than one room (Tarjan)."""
    succ: dict[str, list[str]] = {r: [] for r in rooms}
    for a, b in arrows:
        succ[a].append(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []
    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in succ[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))
    sys.setrecursionlimit(10_000)
    for r in sorted(rooms):
        if r not in index:
            visit(r)
    return found


def floors(rooms: set[str], arrows: set[tuple[str, str]]) -> dict[str, int]:
    """Floor of each room: 0 for a room that imports none, else one above the highest room it imports (rooms of
    one circle share their floor)."""
    group_of = {r: r for r in rooms}
    for group in circles(rooms, arrows):
        for r in group:
            group_of[r] = group[0]
    succ: dict[str, set[str]] = {}
    for a, b in arrows:
        if group_of[a] != group_of[b]:
            succ.setdefault(group_of[a], set()).add(group_of[b])
    memo: dict[str, int] = {}
    def floor(g: str) -> int:
        if g not in memo:
            memo[g] = 1 + max((floor(s) for s in succ.get(g, ())), default=-1)
        return memo[g]
    return {r: floor(group_of[r]) for r in rooms}


def main() -> None:
    rooms, arrows = rooms_and_arrows()
    level = floors(rooms, arrows)
    print(f"{len(rooms)} rooms, {len(arrows)} arrows, {max(level.values()) + 1} floors")
    for f in range(max(level.values()), -1, -1):
        print(f"floor {f}: " + " ".join(sorted(r.split('.')[1] for r in rooms if level[r] == f)))
    for group in circles(rooms, arrows):
        print("circle: " + " <-> ".join(r.split(".")[1] for r in group))
    for importer, imported in declared_imports():
        print(f"declared: {importer} -> {imported}")


if __name__ == "__main__":
    main()
