"""The benchmark: the paper's protocol live, the exact trace simulator, the tuner, Table 1; `modes/` runs them."""
