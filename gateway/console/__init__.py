"""The support console on top of Django's admin (docs/console.md).

- kit/: the generic admin kit every app's admin.py uses (fast lists, the read-only mixin,
  display, form fields, days); it imports nothing of the apps.
- search.py: one search box for every payment identifier, as exact index lookups.
- story.py: a payment's whole story in time order.
- dashboard.py, charts.py: the operations dashboard and its server-rendered SVG charts;
  buckets.py (models.py, tasks.py): its summary of payments in five-minute buckets.
- attention.py: the "Needs attention" queue.
- settlement.py: the per-merchant, per-day settlement CSV.
- views.py: the console's own pages (dashboard, Needs attention, settlement export), mounted
  under /admin/console/ by urls.py; admin.py: merchants and staff.
The pages read each app through that app's selectors.
"""
