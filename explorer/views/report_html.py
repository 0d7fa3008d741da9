"""One self-contained HTML file of a finding: it opens in a browser with no network and no server (styles, script
and drawings inline, nothing fetched). The drawing with the departing node and the path to it, the first
divergence in words, the worst values, the departing tensors and gates, the step with its iteration tuple and If
branches, the environment and the command line; attachments (a reduced model) as inline downloads."""
from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence

from ..bridge.report import FrameworkComparison
from ..compare.report import Comparison
from ..environment import command_line, versions
from ..model.model import Model
from ..trace.trace import Trace
from .framework import framework_html
from .page_assets import CSS, SCRIPT
from .report_parts import (
    divergence_html,
    drawing_html,
    esc,
    event_values_html,
    focus_event,
    gates_html,
    table,
    tensors_html,
    where_html,
)


def report_html(model: Model, trace: Trace | None = None, comparison: Comparison | None = None, *,
                event_index: int | None = None, cells: Sequence[str] | None = None, command: str | None = None,
                attachments: Mapping[str, bytes] | None = None, worst: int = 10,
                framework: FrameworkComparison | None = None) -> str:
    """The report page as text. `trace` defaults to the comparison's side A; `event_index` is the step shown when
    there is no divergence (else the first NaN); `cells` the recurrent cells whose gates are shown when none
    departs; `command` the command line that made it (default: this process's); `attachments` file name -> bytes
    offered as downloads inside the page; `framework` the export against the framework model it came from (its
    module table and diagnosis, the drawing filled by each module's error, the causes marked)."""
    if trace is None and comparison is not None and comparison.a is not None:
        trace = comparison.a.trace
    event = focus_event(trace, comparison, event_index)
    sections = [f"<h1>explorer report: <span class=\"name\">{esc(model.source)}</span></h1>"]
    if trace is not None and trace.error is not None:
        sections.append(f'<h2>The run failed</h2><p class="verdict">{esc(trace.error.message)}</p>')
    if comparison is not None:
        sections.append(f"<h2>First divergence</h2>{divergence_html(comparison)}")
    if framework is not None:
        sections.append(f"<h2>Against the framework</h2>{framework_html(framework, esc, table)}")
    if trace is not None and event is not None:
        sections.append(f"<h2>Where</h2>{where_html(model, trace, event)}")
    sections.append(f"<h2>Graph</h2>{drawing_html(model, trace, comparison, event, framework)}")
    if comparison is not None:
        rows = comparison.rows(worst)
        sections.append("<h2>Worst values</h2>" + table(rows, ("max abs", "max rel")))
        tensors = tensors_html(comparison)
        if tensors:
            sections.append(f"<h2>The departing tensors</h2>{tensors}")
    elif event is not None:
        sections.append(f"<h2>The step's values</h2>{event_values_html(event)}")
    if trace is not None:
        gates = gates_html(model, trace, comparison, cells, event)
        if gates:
            sections.append(f"<h2>Gates</h2>{gates}")
    if attachments:
        links = "".join(f'<li><a download="{esc(name)}" href="data:application/octet-stream;base64,'
                        f'{base64.b64encode(data).decode("ascii")}">{esc(name)}</a> ({len(data)} bytes)</li>'
                        for name, data in attachments.items())
        sections.append(f"<h2>Downloads</h2><ul>{links}</ul>")
    environment = [{"what": k, "version": v} for k, v in versions().items()]
    sections.append("<h2>Environment</h2>" + table(environment)
                    + f"<p>Made by <code>{esc(command if command is not None else command_line())}</code></p>")
    title = f"explorer report: {model.source}"
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{esc(title)}</title><style>{CSS}</style></head><body>"
            + "\n".join(sections) + f"<script>{SCRIPT}</script></body></html>\n")
