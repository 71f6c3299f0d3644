"""The Textual TUI: one app (`app.py`), its screens and widgets; renders events and sends intents to a source."""
