"""Every feature's logic between the engine and the screens: sources, replay, recordings, compare, stats."""
