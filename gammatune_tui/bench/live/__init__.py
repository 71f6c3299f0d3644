"""Measured on live models: the paper's protocol (`protocol.py`) and Table 1's per-token latency (`latency.py`)."""
