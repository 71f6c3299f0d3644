"""What `gammatune bench` runs in each of its modes: live, simulate (with tune), latency.

Each mode orchestrates the measuring pieces one floor down in `bench/`
(protocol, simulator, cost model, tuner, latency, report), shows progress on
stderr and tables on stdout, and writes the JSON and CSV files.
`commands/bench.py` only parses and checks the options, then calls
`run_sweep` or `run_latency`.
"""
