"""Make the binding importable from the source tree (no installation needed)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

BINDING_DIR = Path(__file__).resolve().parents[1]
SRC_DIR = BINDING_DIR / "src"
REPO_ROOT = BINDING_DIR.parents[1]
FIXTURES_DIR = REPO_ROOT / "Tests" / "Conformance" / "fixtures"

if str(SRC_DIR) not in sys.path:
    sys.path.insert(0, str(SRC_DIR))

from workflow_engine import Engine  # noqa: E402

MANUAL_CLOCK = {"clock": {"mode": "manual", "start": "2026-01-01T00:00:00.000Z"}}


@pytest.fixture
def engine() -> Iterator[Engine]:
    """An in-memory engine on a manual clock, closed after the test."""
    with Engine(MANUAL_CLOCK) as opened:
        yield opened
