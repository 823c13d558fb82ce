"""A read-only view of payments and their story for staff. Nothing here writes: status changes
belong to payments.services.transitions, and the support console (a later issue) will offer
its actions through services."""
from django.contrib import admin

from payments.models import Payment, PaymentEvent


class PaymentEventInline(admin.TabularInline):
    model = PaymentEvent
    fields = ("created_at", "kind", "from_status", "to_status", "detail")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Payment)
class PaymentAdmin(admin.ModelAdmin):
    list_display = ("sabpaisa_txn_id", "merchant", "merchant_txn_id", "flow", "status", "payment_mode",
                    "amount", "created_at")
    list_filter = ("status", "flow", "payment_mode", "merchant")
    search_fields = ("sabpaisa_txn_id", "payment_id", "merchant_txn_id", "bank_rrn", "transfer_reference",
                     "customer_email", "customer_phone")
    date_hierarchy = "created_at"
    list_select_related = ("merchant",)
    exclude = ("client_secret_hash",)
    inlines = [PaymentEventInline]

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in Payment._meta.fields if f.name != "client_secret_hash"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
