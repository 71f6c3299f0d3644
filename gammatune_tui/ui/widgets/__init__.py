"""Widgets fed by plain methods from a screen; none of them knows where events come from."""
