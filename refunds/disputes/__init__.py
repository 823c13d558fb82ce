"""Disputes (chargebacks) of payments: docs/disputes.md. The models are refunds.models' Dispute,
DisputeEvent and DisputeEvidence; this package is their code, on refunds' sub-floors
(docs/architecture.md): state.py (3a), locks.py, payloads.py, selectors.py, evidence.py (3b),
transitions.py, services.py, notices.py, sweep.py (3c)."""
