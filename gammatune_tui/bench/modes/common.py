"""What every mode of `gammatune bench` shares: the progress bar on stderr and a quiet transformers."""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from transformers.utils import logging as hf_logging


def quiet_transformers() -> None:
    """No transformers warnings or download bars over the progress bar and tables."""
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()


def progress_bar(err: Console) -> Progress:
    """A transient bar with elapsed time and ETA, on the error console."""
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("elapsed"),
                    TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), console=err, transient=True)
