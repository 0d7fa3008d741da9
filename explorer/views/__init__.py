"""Views: models, traces, comparisons and rewrites turned into drawings, figures, tables, reports and notebook
displays (no Streamlit here). Import the module you need: this package imports nothing itself, so a command
line that reads one constant does not pay for graphviz and plotly."""
