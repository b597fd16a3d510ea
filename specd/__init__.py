"""specd: an interpreter for spec-driven development pipelines written as markdown workflows."""

from __future__ import annotations

__version__ = "0.1.0"
# The name on PyPI. The command and the import stay `specd`; the PyPI project called `specd` is someone else's
# (an unrelated tool), so every install line and hint names this one.
DISTRIBUTION = "specd-workflow"
