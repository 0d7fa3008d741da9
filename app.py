"""explorer: `streamlit run app.py` — pick a model and inputs in the sidebar, then look at the run page by page."""
import sys


def main() -> None:
    """The app, run by Streamlit as the script `__main__` at each rerun."""
    from explorer.hosting.quiet import PAGES

    with PAGES.running():  # the server's collections wait until no page has run for a while (hosting/quiet.py)
        run_app()


def run_app() -> None:
    """The sidebar, then the page chosen, then what the page's run leaves to be filled in."""
    import streamlit as st

    from explorer.ui import jobs, kept, owned, reach, state, url, widgets, work

    # The server answers the browser's requests (Streamlit's scripts, the canvas's files) from a thread that waits for
    # the interpreter while a script computes: at Python's default switch interval (5 ms) each file waits several
    # intervals behind a model being loaded or drawn, and a big model's page fetches dozens of them meanwhile
    sys.setswitchinterval(0.001)
    st.set_page_config(page_title="explorer · ONNX", page_icon=":material/account_tree:", layout="wide")
    st.html("<style>[data-testid='stMainBlockContainer'] { padding-top: 2.5rem; }</style>")  # the diagram higher up
    reach.refuse_unless_chosen()  # listening beyond this machine, the operator must have said the app is shared
    owned.watch()  # once per server: run folders a killed server left are removed; ended sessions' runs released
    jobs.keep_ready()
    state.init()
    url.restore()
    pages = [
        st.Page("explorer/ui/pages/graph.py", title="Graph", icon=":material/account_tree:", default=True),
        st.Page("explorer/ui/pages/step.py", title="Step through", icon=":material/footprint:"),
        st.Page("explorer/ui/pages/loops.py", title="Loops", icon=":material/repeat:"),
        st.Page("explorer/ui/pages/gates.py", title="Gates", icon=":material/tune:"),
        st.Page("explorer/ui/pages/optimizer.py", title="Optimizer", icon=":material/auto_fix_high:"),
        st.Page("explorer/ui/pages/compare.py", title="Compare", icon=":material/compare_arrows:"),
        st.Page("explorer/ui/pages/sweep.py", title="Sweep", icon=":material/stacked_line_chart:"),
    ]
    page = st.navigation(pages)
    if st.session_state.get(state.GO_TO_PAGE):
        st.switch_page(st.session_state.pop(state.GO_TO_PAGE))
    kept.restore()  # the sidebar's values a page switch dropped
    trace_slot = widgets.sidebar()
    kept.keep()
    url.restore_position()
    banner = st.container()  # filled after the page, which may draw before the run is done (a big model)
    page.run()
    with banner:
        widgets.status_banner()
    if trace_slot is not None:
        with trace_slot:
            widgets.trace_status()
    url.publish(state.active_model())
    work.optimize_ahead()  # after the page: its script run is over, the browser draws it


if __name__ == "__main__":  # a sweep's Dask workers are spawned processes importing this script as __mp_main__:
    main()  # they must not run the app (each of its calls would log "missing ScriptRunContext")
