"""Card tokens in the admin console, for support staff.

Staff read a token's metadata (never its network reference) with the consent it was made from.
Nothing here edits a token (ReadOnlyAdminMixin; never Django's own delete either, which would
remove the row unaudited): staff holding `tokens.revoke_token` delete tokens with the
"Delete the selected tokens" action, which goes through tokens.services.token_delete (the same
rules and lock as the API) and is written to the audit log.
"""
from __future__ import annotations

from django.contrib import admin, messages

from gateway.console.kit.lists import DayRangeFilter, FastListMixin
from gateway.console.kit.readonly import ReadOnlyAdminMixin
from gateway.console.search import token_search
from gateway.core.errors import GatewayError
from tokens import services
from tokens.models import Token

REVOKE_PERMISSION = "tokens.revoke_token"


@admin.register(Token)
class TokenAdmin(FastListMixin, ReadOnlyAdminMixin, admin.ModelAdmin):
    # FastListMixin and a day filter instead of a date hierarchy: neither counts nor scans the
    # whole table to draw the page (docs/console.md).
    list_display = ("token_id", "merchant", "network", "last4", "issuer", "status", "created_at", "deleted_at")
    list_filter = ("status", "network", "merchant", ("created_at", DayRangeFilter))
    # Exact identifiers through indexes (gateway.console.search.token_search), not substrings.
    search_fields = ("token_id",)
    search_help_text = "An exact tokenId, or the paymentId or sabpaisaTxnId of the payment it was saved in, or merchant code."
    list_select_related = ("merchant", "payment")
    ordering = ("-created_at", "-id")
    fields = ("token_id", "merchant", "payment_reference", "status", "network", "last4", "expiry", "issuer",
              "created_at", "deleted_at", "deleted_by", "checkout_consent", "consent_timestamp", "consent_text")
    readonly_fields = fields
    actions = ["delete_tokens"]

    def get_search_results(self, request, queryset, search_term):
        return token_search(queryset, search_term), False

    def has_revoke_permission(self, request):
        return request.user.has_perm(REVOKE_PERMISSION)

    @admin.display(description="payment (paymentId / sabpaisaTxnId)")
    def payment_reference(self, obj):
        return f"{obj.payment.payment_id} / {obj.payment.sabpaisa_txn_id}"

    @admin.display(description="expiry")
    def expiry(self, obj):
        if obj.expiry_month is None:
            return "— (forgotten on deletion)"
        return f"{obj.expiry_month:02d}/{obj.expiry_year}"

    @admin.display(description="customer's consent on the checkout")
    def checkout_consent(self, obj):
        consent = getattr(obj.payment, "card_consent", None)
        if consent is None:
            return "—"
        return f"{consent.given_at:%Y-%m-%d %H:%M:%S %Z}: {consent.text}"

    @admin.action(description="Delete the selected tokens (audited)", permissions=["revoke"])
    def delete_tokens(self, request, queryset):
        deleted = gone = 0
        already = queryset.exclude(status=Token.Status.ACTIVE).count()
        for token in list(queryset.filter(status=Token.Status.ACTIVE).order_by("pk")):
            try:
                services.token_delete(token=token, actor=request.user,
                                      actor_name=f"staff {request.user.get_username()}")
            except GatewayError:
                gone += 1  # deleted meanwhile by the merchant or another staff member
            else:
                deleted += 1
        self.message_user(request, f"Deleted {deleted} token(s).", messages.SUCCESS)
        if already + gone > 0:
            self.message_user(request, f"{already + gone} token(s) were deleted already.", messages.WARNING)
