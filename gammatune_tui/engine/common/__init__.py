"""The engine's shared vocabulary: names, devices, the pair type, sampling, logits checks, staging."""
