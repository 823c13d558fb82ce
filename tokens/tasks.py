"""Thin Celery tasks of the tokenisation beta."""
from celery import shared_task

from tokens.services import card_consents_purge


@shared_task(name="tokens.tasks.card_consents_purge_task", ignore_result=True)
def card_consents_purge_task() -> int:
    """Forget the card expiry of consents that can no longer become tokens (run by the beat)."""
    return card_consents_purge()
