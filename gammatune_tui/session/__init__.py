"""Turning engines and files into event streams, and reading metrics off them."""
