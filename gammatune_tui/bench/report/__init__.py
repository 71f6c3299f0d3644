"""What the benchmark prints and writes: the paper's tables and files (`tables.py`), the shares table
(`shares.py`) and tables built from column specs that stay whole at 80 columns (`columns.py`)."""
