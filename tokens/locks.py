"""The one place token rows are locked. Order when several rows are needed: payment (payments.locks),
then consent, then token."""
from tokens.models import CardConsent, Token


def lock_card_consent(consent_id: int) -> CardConsent:
    # Serialises token creation from one payment: two requests racing each see whether the
    # other already made the token, instead of both passing the "no token yet" check.
    return CardConsent.objects.select_for_update().select_related("payment").get(pk=consent_id)


def lock_token(token_pk: int) -> Token:
    # Serialises deletions of one token (API and console at once): exactly one of them deletes
    # it and is audited, the other finds it gone.
    return Token.objects.select_for_update().select_related("merchant").get(pk=token_pk)
