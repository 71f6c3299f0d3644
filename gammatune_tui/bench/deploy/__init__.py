"""From choosing to deploying: each serving engine's own knobs played over the doctor's traces, and a server's log.

gammatune's decoder can run any policy; vLLM, SGLang, llama.cpp and
transformers can each run only their own few knobs. The simulator already
plays those rules exactly, so this package holds what is particular to the
engines: their knob grids and command syntax (engines.py), llama.cpp's
draft rule (llamacpp.py), the ranking with spreads (rank.py), what the doctor
prints and saves (report.py), and reading a server's acceptance back
(server_log.py). docs/deploy.md cites the engine sources each row follows.
"""
