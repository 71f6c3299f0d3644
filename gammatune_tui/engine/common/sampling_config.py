"""How tokens are served (temperature, top-k, top-p, seed), checked without torch.

The served distributions themselves (sampling.py) need torch and
transformers' warpers; the command line only needs to know whether
`--top-p 0` or `--temperature -1` is valid. Keeping the settings and their
checks here lets a usage error answer in a fraction of a second, before any
heavy import (tests/cli/test_lazy_imports.py).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from ...errors import InvalidParameter

# The largest seed: torch's generators take 64 bits, and the benchmark derives
# further seeds from this one (seed + 1 + repeat), so the user's seed keeps to
# the signed half; a negative seed would alias a large positive one in torch.
SEED_MAX = 2**63 - 1


@dataclass(frozen=True)
class SamplingConfig:
    """How tokens are served: temperature 0 is greedy; top_k 0 and top_p 1 are off.

    `repetition_penalty` (1.0 = off) is transformers' `repetition_penalty`,
    applied to both models' logits before serving (engine/logits_processing.py),
    so the output is `generate(..., repetition_penalty=…)`'s law, greedy or sampled.
    """

    temperature: float = 0.0
    top_k: int = 0
    top_p: float = 1.0
    seed: int | None = 0
    repetition_penalty: float = 1.0

    def __post_init__(self) -> None:
        t, k, p = self.temperature, self.top_k, self.top_p
        if not isinstance(t, (int, float)) or isinstance(t, bool) or not math.isfinite(t) or t < 0:
            raise InvalidParameter(f"temperature must be a number >= 0, got {t!r}")
        if not isinstance(k, int) or isinstance(k, bool) or k < 0:
            raise InvalidParameter(f"top_k must be a whole number >= 0 (0 = off), got {k!r}")
        if not isinstance(p, (int, float)) or isinstance(p, bool) or not (0 < p <= 1):
            raise InvalidParameter(f"top_p must be in (0, 1], got {p!r}")
        s = self.seed
        if s is not None and (not isinstance(s, int) or isinstance(s, bool) or not 0 <= s <= SEED_MAX):
            raise InvalidParameter(f"seed must be a whole number from 0 to {SEED_MAX} (2^63 - 1), got {s!r}")
        r = self.repetition_penalty
        if not isinstance(r, (int, float)) or isinstance(r, bool) or not math.isfinite(r) or r <= 0:
            raise InvalidParameter(f"repetition_penalty must be a number > 0 (1 = off), got {r!r}")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0

    def to_json(self) -> dict[str, Any]:
        """The settings as JSON; the repetition penalty only when on, so other sessions record what they always did."""
        d = asdict(self)
        if self.repetition_penalty == 1.0:
            del d["repetition_penalty"]
        return d


__all__ = ["SEED_MAX", "SamplingConfig"]
