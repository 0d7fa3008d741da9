"""The Streamlit user interface (the only package importing Streamlit): state, widgets and pages."""
