"""Rendering shared by the TUI and the commands: untrusted text made safe, sessions and summaries as Rich text.

Rich only, never Textual, so `ui/` and `commands/` both import it and neither
imports the other; nothing under `session/` or `engine/` renders.
"""
