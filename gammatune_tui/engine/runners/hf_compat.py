"""How the installed transformers wants a KV cache passed: `cache=` (5.24+), `past_key_values=` or `cache_params=`.

transformers 5.24 renamed the forward argument `past_key_values` to `cache`
(the old name warns, and goes in 5.40) and the output field with it. GPU
images still ship older 5.x releases (5.17), where only the old name exists.
Every forward call in gammatune that hands a model a cache goes through
`cache_kw`, which reads the name from the callee's own signature once per
class, so both work and neither warns. `output_cache` reads it back.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Mapping

if TYPE_CHECKING:
    import torch
    from transformers import Cache
    from transformers.utils import ModelOutput

_NAMES: dict[type, str] = {}


def _name_for(callee: torch.nn.Module) -> str:
    cls = type(callee)
    name = _NAMES.get(cls)
    if name is None:
        params: Mapping[str, inspect.Parameter]
        try:
            params = inspect.signature(callee.forward).parameters
        except (TypeError, ValueError, AttributeError):
            params = {}
        # 5.17's state-space families (mamba, mamba2, falcon_mamba) call it `cache_params`
        name = next((n for n in ("cache", "past_key_values", "cache_params") if n in params), "past_key_values")
        _NAMES[cls] = name
    return name


def cache_kw(callee: torch.nn.Module, cache: object) -> dict[str, object]:
    """`{"cache": cache}` or `{"past_key_values": cache}`, whichever `callee.forward` takes."""
    return {_name_for(callee): cache}


def output_cache(out: ModelOutput) -> Cache | None:
    """The cache a model output carries, under either field name."""
    cache = getattr(out, "cache", None)
    return cache if cache is not None else getattr(out, "past_key_values", None)


__all__ = ["cache_kw", "output_cache"]
