"""`gammatune doctor`: one candidate draft examined (`examine.py`) with its timing passes, method × γ0 grid,
demo candidates, report and the command's run under one progress bar."""
