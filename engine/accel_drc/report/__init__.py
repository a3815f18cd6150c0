"""Reports: each a pure function of a CheckResult (HTML, JSON, JUnit, SARIF, text)."""

from __future__ import annotations
