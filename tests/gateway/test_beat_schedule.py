from django.conf import settings

from gateway.celery import app


def test_every_beat_entry_names_a_registered_task():
    """A misspelt task name in the schedule would silently switch off a safety-net sweep."""
    app.loader.import_default_modules()
    scheduled = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert scheduled - set(app.tasks) == set()
    assert {"webhooks.tasks.deliveries_due_sweep", "payments.tasks.payments_expire_sweep",
            "refunds.tasks.refunds_pending_sweep", "tokens.tasks.card_consents_purge_task",
            "webhooks.tasks.previous_webhook_secrets_forget"} <= scheduled


def test_payments_expire_within_about_a_second_of_their_deadline():
    """The sweep is the only thing that expires an unattended payment (payments.services.expiry);
    docs/hosted-checkout.md and docs/s2s.md promise about a second."""
    entry = settings.CELERY_BEAT_SCHEDULE["payments-expire"]
    assert entry["task"] == "payments.tasks.payments_expire_sweep" and entry["schedule"] <= 1.0
