"""The benchmark and the doctor, in rooms by job; imports go only down this list (tests/test_architecture.py).

- `doctor/`: `gammatune doctor`, one candidate draft examined and its report;
- `modes/`: what `gammatune bench` runs in each mode, and the trace cache;
- `report/`: the paper's tables, the shares table, the column-spec tables, the files;
- `sim/`: traces (greedy, sampled, prompt lookup), `play_trace`, the oracle and the
  reference rows, the cost model, the tuner, a finished session's hindsight;
- `live/`: the paper's protocol on live models and Table 1's latency;
- here: `args.py` (values the command line parses, torch-free) and `results.py`
  (records and cells, which are tallies), which every room shares.

`live/` and `sim/` do not import each other.
"""
