"""Audit your own pruned FL setup: :func:`audit` takes the user's model, candidate data and
release and returns an :class:`AuditResult` (the leakage study's numbers, one record) that
writes a Markdown, HTML and JSON report (:mod:`sims.audit.report`)."""

from pruneleak.sims.audit.audit import AuditResult, audit

__all__ = ["AuditResult", "audit"]
