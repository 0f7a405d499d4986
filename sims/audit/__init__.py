"""Audit your own pruned FL setup: :func:`audit` takes the user's model, candidate data and
release and returns an :class:`AuditResult` (the leakage study's numbers, one record) that
writes a Markdown, HTML and JSON report (:mod:`sims.audit.report`).

:class:`~sims.audit.flower.AuditingStrategy` (:mod:`sims.audit.flower`, extra
``pruneleak[flower]``) audits the client uploads of a Flower federation round by round;
Flower is imported only when it is first used."""

from pruneleak.sims.audit.audit import AuditResult, audit

__all__ = ["AuditResult", "AuditingStrategy", "audit"]


def __getattr__(name: str):
    if name == "AuditingStrategy":
        from pruneleak.sims.audit.flower import AuditingStrategy

        return AuditingStrategy
    raise AttributeError(f"module 'pruneleak.sims.audit' has no attribute {name!r}")
