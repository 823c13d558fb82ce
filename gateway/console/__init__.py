"""The support console on top of Django's admin (docs/console.md).

- lists.py: list pages that stay fast on a table of millions (no COUNT(*), a day filter).
- days.py: the Asia/Kolkata calendar day every console date means.
- search.py: one search box for every payment identifier, as exact index lookups.
- story.py: a payment's whole story in time order; display.py: money and methods for people.
- dashboard.py, charts.py: the operations dashboard and its server-rendered SVG charts.
- settlement.py: the per-merchant, per-day settlement CSV.
- views.py: the dashboard and export pages, wired in by payments.admin.PaymentAdmin.
"""
