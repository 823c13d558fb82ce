"""Benchmarks and the fault run (issue 9). Not part of the installed package: gunicorn and the
scripts run from the repository root, where this package is importable.

    benchmarks/run       throughput, latency, webhooks, expiry and memory, as a table
    benchmarks/faults    payments, refunds and webhooks under injected faults, as counts

Both bring up their own PostgreSQL cluster and Redis on loopback ports in a temporary folder
and remove them afterwards; see benchmarks/RESULTS.md.
"""
