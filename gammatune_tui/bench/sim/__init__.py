"""The exact trace simulator and what stands on it: traces, `play_trace`, oracle, reference rows, cost model, tuner.

A trace is recorded once from the models (greedy, sampled with coupled draws,
or prompt lookup); every policy is then played over it exactly, priced by one
cost model. Nothing here runs a live sweep (that is `live/`).
"""
