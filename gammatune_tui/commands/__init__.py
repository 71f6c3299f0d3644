"""One module per CLI command; `gammatune_tui.cli` assembles them."""
