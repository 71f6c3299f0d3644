"""Whether doctor's timings can be trusted: a busy machine or timing passes that disagree make the verdict unsafe.

Doctor prices every draft with timings taken on this machine. Under load
the same demo draft read "0.95× ± 0.28, decode with the target alone" and,
idle, "1.38× ± 0.06, costaware": the verdict flipped and nothing said why.
So the load average is read as doctor starts and ends, the passes' spread is
compared with the speedup, and either one past its bound prints a warning
beside the verdict (and goes into the JSON).
"""

from __future__ import annotations

import os
from typing import Sequence

SPREAD_LIMIT = 0.10   # pass-to-pass spread, relative to the predicted speedup, beyond which the timings moved


def load_average() -> float | None:
    try:
        return os.getloadavg()[0]
    except (OSError, AttributeError):   # not on every platform
        return None


def busy_reasons(reports: Sequence, loads: Sequence[float | None], cores: int | None = None) -> list[str]:
    """Why the verdict is unsafe (empty: it is not): load above the cores at start or end, or passes disagreeing."""
    cores = cores or os.cpu_count() or 1
    reasons = []
    seen = [x for x in loads if x is not None]
    if seen and max(seen) > cores:
        reasons.append(f"load average {max(seen):.1f} on {cores} CPU core{'s' * (cores != 1)}")
    worst = max((r.predicted_spread / r.predicted for r in reports
                 if getattr(r, "examined", False) and r.predicted > 0), default=0.0)
    if worst > SPREAD_LIMIT:
        reasons.append(f"the timing passes disagree by up to ±{worst:.0%} of a speedup")
    return reasons


def busy_warning(reasons: Sequence[str]) -> str | None:
    if not reasons:
        return None
    return ("warning: the verdict is unsafe: " + "; ".join(reasons) + ". Timings taken on a busy machine move "
            "the speedups and can flip the advice: run doctor again when the machine is quiet, or add --verify")
