"""Gates: every GRU/LSTM/RNN — gate heatmaps over time, chosen units, saturation, norm of H."""
from __future__ import annotations

import numpy as np
import streamlit as st

from explorer.cells import find_cell
from explorer.docs_links import more
from explorer.reports.rnn_report import rnn_report
from explorer.ui import charts, state, widgets
from explorer.ui.report_button import download_report
from explorer.views import gates
from explorer.views.charts import lines_chart, saturation_chart, time_heatmap_chart
from explorer.views.html_blocks import records_table
from explorer.views.markup import md, md_code


def show(model, trace, path: str) -> None:
    cell = find_cell(model, path)
    runs = gates.executions(trace, cell)
    if not runs:
        st.info("This cell did not run in the recorded trace.")
        return
    event = widgets.pick_execution(runs, state.keyed(state.K_RNN_EXEC, path))
    if cell.form != "op":
        st.caption(f"{md(cell.describe())}: the {cell.form} at {md_code(path)}, its gates gathered step by step "
                   f"from the nodes that compute them.")
    try:
        recorded = trace.gates(path, event.iteration)
    except KeyError as exc:
        recorded = None
        reason = str(exc.args[0]) if exc.args else ""
    if recorded is None or event.summarized:
        st.warning("The trace memory budget was spent before this execution, so only summaries of its gates were "
                   "kept. Raise the trace memory limit in the sidebar and run again to see them."
                   if event.summarized or "summary" in reason else f"No gates to show: {md(reason)}.")
        return
    seq, directions, batch, hidden = recorded["H"].shape
    names = gates.direction_names(model, path, directions)
    left, right = st.columns(2)
    direction: int = widgets.chosen(left.radio("Direction", range(directions), format_func=names.__getitem__,
                                          horizontal=True, key=state.keyed(state.K_RNN_DIR, path)))
    item = int(right.number_input("Batch item", 0, batch - 1, 0, key=state.keyed(state.K_RNN_BATCH, path))) if batch > 1 else 0
    series = {name: values[:, direction, item, :] for name, values in recorded.items() if name != "mask"}
    valid = int(recorded["mask"][:, direction, item].sum())
    st.caption(f"{seq} time steps ({valid} valid for this batch item) · hidden size {hidden} · "
               f"gates {', '.join(n for n in series if n not in ('H', 'C'))}")

    bounds = gates.gate_bounds(model, path, direction)
    st.markdown("##### Gates over time")
    columns = st.columns(2)
    for k, (name, values) in enumerate(series.items()):
        with columns[k % 2]:
            chart = time_heatmap_chart(values, f"{name} [{names[direction]}, batch {item}]", bounds.get(name))
            charts.show(chart, key=state.keyed(state.K_GATE_PLOT, path, name))

    chosen_units(series, bounds, path, hidden, seq)

    saturated = {name: gates.saturation(series[name], b) for name, b in bounds.items() if b is not None}
    sides = {name: gates.saturation_sides(series[name], b) for name, b in bounds.items() if b is not None}
    left, right = st.columns(2)
    if saturated:
        with left:
            charts.show(lines_chart(saturated, "Saturation: fraction of units near a bound", ytitle="fraction",
                                    yrange=(0, 1)), key=state.keyed(state.K_SATURATION_PLOT, path))
        with right:
            charts.show(saturation_chart(sides, "Saturation per unit: left (< 0.1) vs right (> 0.9)"),
                        key=state.keyed(state.K_SIDES_PLOT, path))
        st.html(records_table([{"gate": name, "left saturated (< 0.1)": float(np.nanmean(lo)),
                                "right saturated (> 0.9)": float(np.nanmean(hi))} for name, (lo, hi) in sides.items()]))
    charts.show(lines_chart({"‖H‖": gates.hidden_norm(series["H"])}, "Norm of H over time", ytitle="L2"),
                key=state.keyed(state.K_NORM_PLOT, path))
    if np.isnan(series["H"]).any():
        st.caption("Blank steps lie past this batch item's sequence length.")
    exported_report(model, trace, path)
    download_report(model, "gates", trace, event_index=event.index, cells=[path])


def chosen_units(series: dict, bounds: dict, path: str, hidden: int, seq: int) -> None:
    """Units over time: picked by hand, or by pattern (on at or above a threshold through a time range)."""
    st.markdown("##### Chosen units over time")
    left, right = st.columns([1, 3])
    gate = left.selectbox("Gate", list(series), key=state.keyed(state.K_RNN_GATE, path))
    by_pattern = left.toggle("Select by pattern", key=state.keyed(state.W_RNN_PATTERN, path),
                             help="Units that stay on (at or above the threshold) through a range of time steps")
    if by_pattern:
        low, high = bounds.get(gate) or (float(np.nanmin(series[gate])), float(np.nanmax(series[gate])))
        start, stop = left.slider("Time steps", 0, max(seq - 1, 0), (0, max(seq - 1, 0)),
                                  key=state.keyed(state.W_RNN_RANGE, path, gate)) if seq > 1 else (0, 0)
        threshold = left.slider("Threshold", float(low), float(high), float(low + 0.5 * (high - low)),
                                key=state.keyed(state.W_RNN_THRESHOLD, path, gate))
        units = gates.units_on(series[gate], start, stop, threshold)
        left.caption(f"{len(units)} of {hidden} units stay ≥ {threshold:.3g} from step {start} to {stop}"
                     + (" (showing the first 12)" if len(units) > 12 else ""))
        units = units[:12]
    else:
        units = left.multiselect("Units", list(range(hidden)), default=list(range(min(hidden, 3))),
                                 key=state.keyed(state.K_RNN_UNITS, path))
    if units:
        with right:
            charts.show(lines_chart({f"unit {u}": series[gate][:, u] for u in units}, f"{gate}: chosen units"),
                        key=state.keyed(state.K_UNITS_PLOT, path))


def exported_report(model, trace, path: str) -> None:
    """Weights per gate with their ONNX, PyTorch and Keras names, and what to watch out for."""
    report = rnn_report(model, path, trace)
    st.markdown(f"##### Exported-RNN report · exported by {md(report.origin)}")
    for finding in report.findings:
        show = {"error": st.error, "warning": st.warning}.get(finding.level, st.info)
        show(md(finding.message))
    if report.blocks:
        st.html(records_table(gates.weight_rows(report)))


st.title("Gates", help=more("Every gate of every recurrent cell at every time step, whatever form the exporter gave it.", "gates"))
subject = widgets.page_subject(gates.recurrent_nodes, "GRU, LSTM or RNN", state.W_RNN, "Recurrent cell",
                               ran=gates.cell_ran)
if subject is not None:
    show(*subject)
