"""gammatune: watch, tune and compare speculative decoding in the terminal."""

__version__ = "0.1.0"
