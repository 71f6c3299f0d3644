"""Loading a model pair: files, presets, GGUF, end-of-turn ids, warm-up."""
