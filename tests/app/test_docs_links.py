"""The app's "more" links into the guide: where the guide is found (an address set by the operator, the copy
built into the app's static folder, or nowhere), every topic's page and section exist, and the pages' "?" help
ends with the link."""
from __future__ import annotations

import pytest

from explorer import docs_links
from explorer.docs_links import TOPICS, docs_base, docs_link, more
from explorer.errors import ExplorerError
from tests.support.apptest import start
from tests.support.guide import DOCS, anchors


@pytest.mark.parametrize("topic", TOPICS)
def test_every_topic_names_a_page_and_a_section_of_the_guide(topic):
    page, anchor = TOPICS[topic]
    assert (DOCS / page).is_file(), page
    assert not anchor or anchor in anchors(DOCS / page), f"{page} has no section {anchor!r}"


def test_the_operators_address_comes_first(tmp_path):
    built = tmp_path / "docs"
    built.mkdir()
    (built / "index.html").write_text("<html></html>")
    environ = {"EXPLORER_DOCS_URL": "https://docs.example.org/explorer", "EXPLORER_SETTINGS": str(tmp_path / "none")}
    assert docs_link("gates", environ, built) == "https://docs.example.org/explorer/app.html#gates"
    assert docs_link("learning", environ, built) == "https://docs.example.org/explorer/tutorials/learning-mode.html"


def test_the_settings_file_gives_the_address_when_the_environment_does_not(tmp_path):
    settings = tmp_path / "explorer.toml"
    settings.write_text('[docs]\nurl = "http://127.0.0.1:8000/"\n')
    environ = {"EXPLORER_SETTINGS": str(settings)}
    assert docs_base(environ, tmp_path / "absent") == "http://127.0.0.1:8000/"
    settings.write_text("[docs\nurl = ")
    with pytest.raises(ExplorerError, match="not valid TOML"):
        docs_base(environ, tmp_path / "absent")


def test_a_built_guide_is_served_by_the_app_itself(tmp_path):
    environ = {"EXPLORER_SETTINGS": str(tmp_path / "none")}
    built = tmp_path / "docs"
    assert docs_base(environ, built) is None
    assert more("Short.", "limits", environ, built) == "Short. More in the guide: `docs/limits.md`."
    built.mkdir()
    (built / "index.html").write_text("<html></html>")
    assert docs_link("limits", environ, built) == "app/static/docs/limits.html#the-limits"  # relative to the app
    assert more("Short.", "limits", environ, built) == \
        "Short. [More in the guide](app/static/docs/limits.html#the-limits)"


def test_each_page_title_has_a_short_help_with_the_more_link(monkeypatch, tmp_path):
    monkeypatch.setenv("EXPLORER_DOCS_URL", "https://docs.example.org/")
    monkeypatch.setenv("EXPLORER_SETTINGS", str(tmp_path / "none"))
    assert docs_links.docs_base() == "https://docs.example.org/"
    at = start("if_sign")
    (title,) = at.title
    assert title.value == "Graph"
    assert title.proto.help.endswith("[More in the guide](https://docs.example.org/app.html#graph)")
    assert len(title.proto.help) < 200
