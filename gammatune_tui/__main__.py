"""`python -m gammatune_tui`: the `gammatune` command (a Ctrl+C while it starts is one line too)."""

import sys

try:
    from .cli import main
except KeyboardInterrupt:
    print("gammatune: interrupted", file=sys.stderr)
    sys.exit(130)

main()
