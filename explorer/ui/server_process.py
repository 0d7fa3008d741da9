"""The process `explorer serve` starts: Streamlit's own command line (`streamlit run ...`), with the modules every
page needs imported in a background thread meanwhile, so that the first visitor does not wait for them (onnx's
ml_dtypes, pandas and explorer's own packages take seconds, which the first session of a server started by
`streamlit run` pays). explorer.ui (whose caches belong to Streamlit's runtime) is left to the first script run.

    python -m explorer.ui.server_process run app.py [streamlit options]
"""
from __future__ import annotations

import importlib
import sys
import threading

PRELOAD = ("numpy", "onnx", "pandas", "pyarrow", "graphviz", "explorer.executor.run",
           "explorer.cells", "explorer.compare", "explorer.optimizer", "explorer.sweep", "explorer.views.dot",
           "explorer.views.plots", "explorer.inputs.input_files")


def preload(names: tuple[str, ...] = PRELOAD) -> list[str]:
    """Imports `names`; the ones that failed (the page that needs one reports its error when it imports it)."""
    failed = []
    for name in names:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a page imports it again and shows what is wrong
            failed.append(name)
    return failed


def main(argv: list[str]) -> None:
    """Starts Streamlit's command line on `argv`, preloading in a thread once Streamlit's own modules are in
    (plotly among them: its lazy submodules break when two threads import them at once)."""
    import streamlit.delta_generator  # noqa: F401 - imports plotly, Streamlit's theme for it included
    from streamlit.web.cli import main as streamlit_main

    threading.Thread(target=preload, name="explorer preload", daemon=True).start()
    sys.argv = ["streamlit", *argv]
    streamlit_main(prog_name="streamlit")


if __name__ == "__main__":
    main(sys.argv[1:])
