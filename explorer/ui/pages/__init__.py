"""Pages run by st.navigation (see app.py)."""
