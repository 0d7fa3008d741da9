"""The README and the guide in docs/ hold together: every relative link and image resolves (anchors too), the
command-line reference is what the argparse definitions give (on any machine) and covers every subcommand, and
the Architecture page shows the layers the import contract holds."""
from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from tests.support.guide import DOCS, anchors

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([ROOT / "README.md", *DOCS.rglob("*.md")])
HTML_SOURCE = re.compile(r"""<(?:img|a)\b[^>]*?\b(?:src|href)=["']([^"']+)["']""")


def _reference_module():
    spec = importlib.util.spec_from_file_location("cli_reference", ROOT / "tools" / "cli_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _targets(page: Path) -> list[str]:
    """Every link and image target of a Markdown page (inline HTML's src and href included)."""
    found: list[str] = []

    def walk(tokens) -> None:
        for token in tokens:
            if token.type == "link_open":
                found.append(str(token.attrs.get("href", "")))
            elif token.type == "image":
                found.append(str(token.attrs.get("src", "")))
            elif token.type in ("html_inline", "html_block"):
                found.extend(HTML_SOURCE.findall(token.content))
            walk(token.children or [])

    walk(MarkdownIt("commonmark").enable("table").parse(page.read_text()))
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_and_image_resolves(page):
    broken = []
    for target in _targets(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or not target:  # http:, mailto: ...
            continue
        path_part, _, anchor = target.partition("#")
        resolved = (page.parent / path_part).resolve() if path_part else page
        if not resolved.exists():
            broken.append(f"{target}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(f"{target}: no heading with the id {anchor!r}")
    assert not broken, f"{page.relative_to(ROOT)}: {broken}"


def test_the_readme_is_short_and_shows_the_app():
    """At most 200 lines, with at least four screenshots of the app: PNG files in docs/images/, 800 px wide or more
    (tools/screenshots.py takes them)."""
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 200
    images = [t for t in _targets(ROOT / "README.md") if t.startswith("docs/images/")]
    assert len(images) >= 4, images
    for image in images:
        head = (ROOT / image).read_bytes()[:24]
        assert head[:8] == b"\x89PNG\r\n\x1a\n", image
        assert int.from_bytes(head[16:20], "big") >= 800, f"{image} is narrower than 800 px"


def test_the_command_line_reference_is_what_the_parser_gives():
    assert (DOCS / "cli.md").read_text() == _reference_module().render(), \
        "docs/cli.md is out of date: run python tools/cli_reference.py"


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs Linux's CPU affinity call")
def test_the_command_line_reference_does_not_depend_on_the_machine(tmp_path):
    """On one core, with a BLAS thread variable and another temporary folder, the reference comes out the same:
    no help text quotes a default read from the machine."""
    code = ("import os, sys; os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]}); "
            f"sys.path.insert(0, {str(ROOT / 'tools')!r}); import cli_reference; "
            "sys.stdout.write(cli_reference.render())")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TMPDIR": str(tmp_path)}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path,
                            check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (DOCS / "cli.md").read_text()


def test_the_architecture_page_shows_the_layers_the_import_contract_holds():
    from tests.support.project_config import importlinter_config

    config = importlinter_config()
    (contract,) = [c for c in config["contracts"] if c["type"] == "layers"]
    shown = (DOCS / "architecture.md").read_text().split("<!-- layers -->")[1].split("<!-- /layers -->")[0]
    assert shown.strip().removeprefix("```text").removesuffix("```").strip().splitlines() == contract["layers"]


def test_every_subcommand_and_option_is_documented():
    from explorer.cli import build_parser
    from explorer.cli.registry import COMMANDS

    reference = (DOCS / "cli.md").read_text()
    sections = dict(re.findall(r"^## explorer (\S+)\n(.*?)(?=^## |\Z)", reference, flags=re.MULTILINE | re.DOTALL))
    assert set(sections) == set(COMMANDS)
    parser = build_parser()
    (sub,) = [a for a in parser._actions if hasattr(a, "choices") and isinstance(a.choices, dict)]
    for name, command_parser in sub.choices.items():
        for action in command_parser._actions:
            for option in (o for o in action.option_strings if action.dest != "help"):
                assert f"`{option}" in sections[name] or f", {option}" in sections[name], f"{name} {option}"
        for code in COMMANDS[name].exits:
            assert re.search(rf"^\| {code} \|", sections[name], flags=re.MULTILINE), f"{name}: exit code {code}"
