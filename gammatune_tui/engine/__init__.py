"""The engine: no Textual, no Rich, importable in a notebook."""

from .decoder import SpeculativeDecoder
from .draft_sources import DRAFTERS, DrafterSettings
from .events import DraftedToken, EmittedToken, SessionHeader, SessionSummary, StepEvent, TargetToken
from .models import ModelPair, load_pair
from .policies import METHODS, Policy, PolicySettings, make_policy
from .sampling import SamplingConfig

__all__ = [
    "METHODS", "Policy", "PolicySettings", "make_policy", "SamplingConfig",
    "SessionHeader", "StepEvent", "SessionSummary", "DraftedToken", "EmittedToken", "TargetToken",
    "SpeculativeDecoder", "ModelPair", "load_pair", "DRAFTERS", "DrafterSettings",
]
