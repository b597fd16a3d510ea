"""specd: an interpreter for spec-driven development pipelines written as markdown workflows."""

from __future__ import annotations

__version__ = "0.1.0"
