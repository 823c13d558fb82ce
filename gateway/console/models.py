"""The console's one table of its own: the dashboard's summary of payments (gateway.console.buckets)."""
from django.contrib.postgres.fields import ArrayField
from django.db import models


class DashboardBucket(models.Model):
    """Five minutes of payments by creation time, as folded by gateway.console.buckets: the
    counts of those that had reached a final status (which never changes again), and the ids of
    those still open then, which the dashboard reads live. Written only by the fold."""

    start = models.DateTimeField(primary_key=True)
    # [[payment_mode, status, count], ...] of the bucket's payments final at the fold.
    finals = models.JSONField(default=list)
    # The bucket's payments still PENDING or PROCESSING at the fold.
    open_ids = ArrayField(models.BigIntegerField(), default=list)
    folded_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"payments created from {self.start:%Y-%m-%d %H:%M} UTC"
