"""Views: turn models, traces and rewrites into diagrams, figures and tables (no Streamlit here)."""
