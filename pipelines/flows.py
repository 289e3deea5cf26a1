"""Every declared flow: what the runner registers, routes and sweeps (tasks/engine.py)."""

from __future__ import annotations

from engram.pipelines.capture.flow import CAPTURE
from engram.pipelines.cognify.flow import COGNIFY
from engram.pipelines.flow import Flow
from engram.pipelines.improve.flow import IMPROVE
from engram.pipelines.maintenance.flow import MAINTENANCE

FLOWS: tuple[Flow, ...] = (COGNIFY, MAINTENANCE, CAPTURE, IMPROVE)
BY_NAME = {f.name: f for f in FLOWS}


def flow_named(name: str) -> Flow:
    return BY_NAME[name]
