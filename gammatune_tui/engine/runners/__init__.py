"""Runners: how one model's forward passes are launched and its KV cache kept (eager, static, graphs)."""

from .base import Runner
from .choice import (
    AUTO_WITHOUT_GRAPHS, ENGINES, GRAPH_BODY, RunnerPool, RunnerSet, build_runner, check_engine,
    check_engine_device, choose_kind,
    graphs_unsupported, runner_pool, self_check, static_unsupported,
)
from .eager import EagerRunner
from .graphs import GraphRunner
from .hidden import TargetReads, TargetRows
from .plan import BUCKET, MAX_Q, CapturePlan, plan_captures, span_for
from .static import DEFAULT_CAPACITY, StaticKV, StaticRunner, round_capacity

__all__ = [
    "Runner", "EagerRunner", "StaticRunner", "StaticKV", "GraphRunner", "RunnerSet", "RunnerPool", "runner_pool",
    "ENGINES", "GRAPH_BODY", "AUTO_WITHOUT_GRAPHS", "MAX_Q", "DEFAULT_CAPACITY", "check_engine",
    "check_engine_device", "choose_kind",
    "build_runner", "self_check", "static_unsupported", "graphs_unsupported", "round_capacity",
    "BUCKET", "CapturePlan", "plan_captures", "span_for", "TargetReads", "TargetRows",
]
