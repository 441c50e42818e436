"""The Figma-to-code environment: design source, ground truth, and output checks.

- A fixture store of Figma files (:class:`FixtureStore`) served over Figma's REST API by
  :class:`FigmaFixtureServer` (``python -m lhbench.envs.figma serve``), with Figma's
  error bodies, token check and injectable rate limiting; :class:`FigmaClient` talks to
  it or, with a token, to the real API.
- Ground-truth manifests read leniently (:func:`read_ground_truth`).
- Output checks of a built app (:func:`check_app`): build, deploy, routes, blank pages,
  leakage, fidelity measures, responsive and hover probes, token coverage.
"""

from lhbench.envs.figma.build import DEFAULT_REGISTRY, BuildResult, build_app, in_sandbox
from lhbench.envs.figma.capture import capture_requirements, require_capture
from lhbench.envs.figma.checks import (
    CHECKS_VERSION,
    CheckReport,
    FrameCheck,
    check_app,
    checks_identity,
    find_design,
    level,
)
from lhbench.envs.figma.client import FIGMA_API, FigmaApiError, FigmaClient
from lhbench.envs.figma.evidence import judge_artifacts
from lhbench.envs.figma.manifest import GroundTruth, GtFrame, ManifestError, read_ground_truth
from lhbench.envs.figma.ratelimit import RateLimit, RateLimiter, parse_rate_limit
from lhbench.envs.figma.server import FigmaFixtureServer
from lhbench.envs.figma.store import FixtureError, FixtureStore, export_scale
from lhbench.envs.figma.stores import store_path

__all__ = [
    "CHECKS_VERSION",
    "DEFAULT_REGISTRY",
    "FIGMA_API",
    "BuildResult",
    "CheckReport",
    "FigmaApiError",
    "FigmaClient",
    "FigmaFixtureServer",
    "FixtureError",
    "FixtureStore",
    "FrameCheck",
    "GroundTruth",
    "GtFrame",
    "ManifestError",
    "RateLimit",
    "RateLimiter",
    "build_app",
    "capture_requirements",
    "check_app",
    "checks_identity",
    "export_scale",
    "find_design",
    "in_sandbox",
    "judge_artifacts",
    "level",
    "parse_rate_limit",
    "read_ground_truth",
    "require_capture",
    "store_path",
]
