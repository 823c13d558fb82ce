"""Payments in the support console (docs/console.md).

- The list: one search box for every identifier (gateway.console.search: exact lookups on
  indexes), filters by merchant, status, method, flow and IST day, no COUNT(*) of the table
  (gateway.console.lists). A search that finds exactly one payment opens it.
- A payment's page: its fields, then its whole story in time order (gateway.console.story),
  with the actions beside what they act on: resend a webhook delivery, start a refund.
- The operations dashboard and the settlement export (gateway.console.views) live under this
  admin's addresses.

Nothing here writes a payment: status changes belong to payments.services.transitions, a
resend to webhooks.services.delivery_resend, a refund to refunds.services (through the
refund admin's page), and every action checks its permission (gateway/roles.py).
"""
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseNotAllowed
from django.shortcuts import get_object_or_404, redirect
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join

from gateway import roles
from gateway.console import views as console_views
from gateway.console.lists import DayRangeFilter, FastListMixin
from gateway.console.search import matched_by, payment_search
from gateway.console.display import method_label, money, rupees, short_time
from gateway.console.story import payment_story
from gateway.errors import GatewayError
from payments.models import Payment
from webhooks.models import WebhookDelivery

STATUS_COLOURS = {
    Payment.Status.SUCCESS: "#2e7d32", Payment.Status.FAILED: "#c62828", Payment.Status.EXPIRED: "#757575",
    Payment.Status.PENDING: "#1565c0", Payment.Status.PROCESSING: "#ef6c00",
}


def _address(address: dict | None):
    """An address on one line, in the order a courier reads it; "—" when none was sent."""
    if not address:
        return "—"
    parts = [address.get(key) for key in ("name", "line1", "line2", "landmark", "city", "state", "postalCode",
                                          "country", "phone")]
    return ", ".join(part for part in parts if part) or "—"


def status_badge(status: str):
    return format_html('<strong style="color:{}" data-status="{}">{}</strong>',
                       STATUS_COLOURS.get(status, "inherit"), status, status)


class MethodFilter(admin.SimpleListFilter):
    title = "method"
    parameter_name = "method"

    def lookups(self, request, model_admin):
        return [(mode, method_label(mode)) for mode in Payment.Mode.values]

    def queryset(self, request, queryset):
        return queryset.filter(payment_mode=self.value()) if self.value() else queryset


# The narrowing bar above a search's results (docs/console.md): the same parameters as the
# filters beside the list, so the two always agree.
NARROW_PARAMS = ("status__exact", MethodFilter.parameter_name, "created_at_from", "created_at_to")


def narrow_context(request) -> dict:
    """What the bar needs: the choices (from the model, never spelled here), what is chosen,
    and every other parameter of the page (the search term, a merchant filter) to keep."""
    return {
        "statuses": Payment.Status.choices,
        "methods": [(mode, method_label(mode)) for mode in Payment.Mode.values],
        "chosen": {name.split("__")[0]: request.GET.get(name, "") for name in NARROW_PARAMS},
        "keep": sorted((key, value) for key, value in request.GET.items()
                       if key not in NARROW_PARAMS and key != "p"),
    }


@admin.register(Payment)
class PaymentAdmin(FastListMixin, admin.ModelAdmin):
    # Chosen for a 1,366-pixel screen (docs/console.md): what support reads on a call, the
    # customer, amount, status and time, never behind sideways scrolling; the merchant and its
    # order number share one column.
    list_display = ("sabpaisa_txn_id", "order", "customer", "amount_short", "status_display", "method",
                    "created_time")
    list_display_links = ("sabpaisa_txn_id",)
    list_filter = (("merchant", admin.RelatedFieldListFilter), "status", MethodFilter, "flow",
                   ("created_at", DayRangeFilter))
    # The box searches every identifier (get_search_results); this only makes the admin show it.
    search_fields = ("sabpaisa_txn_id",)
    search_help_text = ("Paste any one identifier: sabpaisaTxnId, paymentId, the merchant's merchantTxnId, the "
                        "bank reference (RRN), a NEFT/RTGS/challan reference, the customer's email or phone "
                        "(any format), a refund's bank reference or a webhook event id (evt_…). Exact values, "
                        "not parts of them.")
    ordering = ("-created_at", "-id")
    sortable_by = ("created_time",)
    list_select_related = ("merchant",)
    change_form_template = "admin/payments/payment/change_form.html"
    change_list_template = "admin/payments/payment/change_list.html"
    fieldsets = (
        (None, {"fields": ("sabpaisa_txn_id", "payment_id", "merchant_txn_id", "merchant", "flow", "status_display",
                           "amount_display", "paid_amount_display", "method", "created_at", "expires_at",
                           "completed_at", "failure_reason")}),
        ("Customer", {"fields": ("customer_name", "customer_email", "customer_phone", "description")}),
        ("What the bank told us", {"fields": ("bank_rrn", "payer_vpa", "card_network", "card_last4", "card_issuer",
                                              "bank_code", "transfer_reference")}),
        # The optional order fields of the creation request (payments.api.order_serializers).
        ("Order", {"fields": ("order_customer_id", "order_billing_address", "order_shipping_address",
                              "order_line_items", "order_summary")}),
        ("The merchant's own data", {"classes": ("collapse",),
                                     "fields": ("return_url", "webhook_url", "udf", "metadata", "updated_at")}),
    )

    def get_readonly_fields(self, request, obj=None):
        return [name for fieldset in self.fieldsets for name in fieldset[1]["fields"]]

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("merchant")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    # columns ------------------------------------------------------------------------------
    @admin.display(description="status")
    def status_display(self, obj):
        return status_badge(obj.status)

    @admin.display(description="method")
    def method(self, obj):
        label = method_label(obj.payment_mode) if obj.payment_mode else "—"
        if obj.s2s_mode:
            label += f" ({obj.get_s2s_mode_display()})"
        if obj.card_last4:
            label += f" ****{obj.card_last4}"
        return label

    @admin.display(description="amount")
    def amount_display(self, obj):
        return money(obj.amount)

    @admin.display(description="amount")
    def amount_short(self, obj):
        return format_html('<span class="nowrap" title="{} paise">₹{}</span>', obj.amount, rupees(obj.amount))

    @admin.display(description="paid")
    def paid_amount_display(self, obj):
        return money(obj.paid_amount) if obj.paid_amount else "—"

    @admin.display(description="customer")
    def customer(self, obj):
        contact = [part for part in (obj.customer_phone, obj.customer_email) if part]
        if not obj.customer_name and not contact:
            return "—"
        return format_html('{}<br><span class="console-muted">{}</span>', obj.customer_name or "",
                           " · ".join(contact))

    @admin.display(description="merchant · order")
    def order(self, obj):
        return format_html('{}<br><span class="console-muted">{}</span>', obj.merchant.code, obj.merchant_txn_id)

    @admin.display(description="created (IST)", ordering="created_at")
    def created_time(self, obj):
        return format_html('<span class="nowrap">{}</span>', short_time(obj.created_at))

    # the order ----------------------------------------------------------------------------
    @admin.display(description="customer id")
    def order_customer_id(self, obj):
        return obj.order_details.get("customerId") or "—"

    @admin.display(description="billing address")
    def order_billing_address(self, obj):
        return _address(obj.order_details.get("billingAddress"))

    @admin.display(description="shipping address")
    def order_shipping_address(self, obj):
        if obj.order_details.get("shippingSameAsBilling"):
            return "same as billing"
        return _address(obj.order_details.get("shippingAddress"))

    @admin.display(description="line items")
    def order_line_items(self, obj):
        items = obj.order_details.get("lineItems") or []
        if not items:
            return "—"
        rows = format_html_join(
            "", '<tr data-testid="line-item"><td>{}</td><td>{}</td><td>{}</td><td class="nowrap">{}</td>'
                '<td class="nowrap">{}</td></tr>',
            ((item["name"], item.get("sku") or "—", item.get("hsnCode") or "—", item["quantity"],
              money(item["unitPrice"])) for item in items))
        return format_html('<table><thead><tr><th>item</th><th>SKU</th><th>HSN</th><th>qty</th>'
                           '<th>unit price</th></tr></thead><tbody>{}</tbody></table>', rows)

    @admin.display(description="order summary")
    def order_summary(self, obj):
        summary = obj.order_details.get("orderSummary")
        if not summary:
            return "—"
        labels = (("subtotal", "subtotal"), ("shippingAmount", "shipping"), ("discountAmount", "discount"),
                  ("taxAmount", "tax"), ("convenienceFee", "convenience fee"), ("totalAmount", "total"))
        parts = format_html_join(" · ", "{}: {}", ((label, money(summary[key])) for key, label in labels
                                                   if summary.get(key) is not None))
        codes = " · ".join(f"{label}: {summary[key]}" for key, label in (("shippingMethod", "shipping method"),
                                                                         ("discountCode", "discount code"))
                           if summary.get(key))
        return format_html("{}{}", parts, f" · {codes}" if codes else "")

    # search -------------------------------------------------------------------------------
    def get_search_results(self, request, queryset, search_term):
        if not search_term.strip():
            return queryset, False
        queryset, identifiers = payment_search(queryset, search_term)
        request.console_search = identifiers
        return queryset, False

    def changelist_view(self, request, extra_context=None):
        empty = [name for name in NARROW_PARAMS if name in request.GET and not request.GET[name]]
        if empty:
            # The narrowing bar sends "any" as an empty value; to the admin an empty
            # status__exact would mean "status is ''" and match nothing.
            query = request.GET.copy()
            for name in empty:
                del query[name]
            return redirect(f"{request.path}?{query.urlencode()}")
        response = super().changelist_view(request, extra_context)
        cl = (getattr(response, "context_data", None) or {}).get("cl")
        if cl is None or not cl.query:
            return response
        if cl.result_count == 1 and not cl.is_popup:
            payment = cl.result_list[0]
            messages.info(request, f"Found {payment.sabpaisa_txn_id} by its {matched_by(payment, cl.query)}.")
            return redirect("admin:payments_payment_change", payment.pk)
        response.context_data["searched_as"] = [identifier.name for identifier in
                                                getattr(request, "console_search", [])]
        response.context_data["narrow"] = narrow_context(request)
        return response

    # the payment's page -------------------------------------------------------------------
    def change_view(self, request, object_id, form_url="", extra_context=None):
        payment = self.get_object(request, object_id)
        extra = dict(extra_context or {})
        if payment is not None and self.has_view_permission(request, payment):
            story = payment_story(payment)
            extra.update({
                "story": story,
                "can_resend": request.user.has_perm(roles.RESEND_WEBHOOK),
                "can_refund": request.user.has_perm(roles.INITIATE_REFUND),
                "refund_url": reverse("admin:refunds_refund_initiate", args=[payment.pk]),
                "webhook_log_url": reverse("admin:webhooks_webhookdelivery_changelist")
                + f"?event__subject_id={payment.sabpaisa_txn_id}",
                "status_badge": status_badge(payment.status),
                "method": self.method(payment),
            })
        return super().change_view(request, object_id, form_url, extra)

    def get_urls(self):
        wrap = self.admin_site.admin_view
        return [
            path("<int:payment_pk>/resend-webhook/<int:delivery_pk>/", wrap(self.resend_webhook_view),
                 name="payments_payment_resend_webhook"),
            path("dashboard/", wrap(lambda request: console_views.dashboard_view(request, self)),
                 name="console_dashboard"),
            path("settlement-export/", wrap(lambda request: console_views.settlement_export_view(request, self)),
                 name="console_settlement_export"),
        ] + super().get_urls()

    def resend_webhook_view(self, request, payment_pk: int, delivery_pk: int):
        """Resend one delivery of this payment's (or its refunds') webhooks, from its page."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        if not request.user.has_perm(roles.RESEND_WEBHOOK):
            raise PermissionDenied(f"Resending a webhook needs the permission {roles.RESEND_WEBHOOK} "
                                   f"(role: {' or '.join(roles.roles_holding(roles.RESEND_WEBHOOK))}).")
        payment = get_object_or_404(Payment, pk=payment_pk)
        subjects = [payment.sabpaisa_txn_id, *payment.refunds.values_list("refund_id", flat=True)]
        delivery = get_object_or_404(WebhookDelivery.objects.select_related("event", "merchant"), pk=delivery_pk,
                                     merchant_id=payment.merchant_id, event__subject_id__in=subjects)
        from webhooks.services import delivery_resend

        try:
            delivery_resend(delivery=delivery, actor=request.user)
        except GatewayError as exc:
            messages.warning(request, f"Not resent: {exc.message}")
        else:
            messages.success(request, f"Webhook {delivery.event.event_type} ({delivery.event_id}) queued to send "
                                      "now; its attempt will appear in the story below.")
        return redirect(reverse("admin:payments_payment_change", args=[payment.pk]) + "#story")
