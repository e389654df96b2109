"""UI-only helpers for app.py (Streamlit); planner/ never imports these."""
