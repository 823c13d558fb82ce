"""Django's PostgreSQL backend with a health check that needs no round trip (gateway.perf.db.base)."""
