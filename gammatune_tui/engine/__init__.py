"""The engine: no Textual, no Rich, importable in a notebook."""

from .events import DraftedToken, EmittedToken, SessionHeader, SessionSummary, StepEvent, TargetToken
from .policies import METHODS, Policy, PolicySettings, make_policy
from .sampling import SamplingConfig

__all__ = [
    "METHODS", "Policy", "PolicySettings", "make_policy", "SamplingConfig",
    "SessionHeader", "StepEvent", "SessionSummary", "DraftedToken", "EmittedToken", "TargetToken",
]

try:  # filled in by the engine's decoder and model loading
    from .decoder import SpeculativeDecoder  # noqa: F401
    from .models import ModelPair, load_pair  # noqa: F401

    __all__ += ["SpeculativeDecoder", "ModelPair", "load_pair"]
except ModuleNotFoundError as _exc:  # pragma: no cover - only while being written
    if not (_exc.name or "").startswith(__name__):
        raise
