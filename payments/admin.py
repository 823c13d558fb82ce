"""Payments in the support console (docs/console.md).

- The list: one search box for every identifier (gateway.console.search: exact lookups on
  indexes), filters by merchant, status, method, flow and IST day, no COUNT(*) of the table
  (gateway.console.kit.lists). A search that finds exactly one payment opens it.
- A payment's page: its fields, then its whole story in time order (gateway.console.story),
  with the actions beside what they act on: resend a webhook delivery, start a refund.

Nothing here writes a payment: status changes belong to payments.services.transitions, a
resend to webhooks.services.delivery_resend, a refund to refunds.services (through the
refund admin's page), and every action checks its permission (gateway/platform/roles.py).
"""
from datetime import timedelta
from decimal import Decimal

from django import forms
from django.contrib import admin, messages
from django.http import HttpResponseNotAllowed
from django.shortcuts import get_object_or_404, redirect
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join

from gateway.platform import roles
from gateway.console.kit.lists import DayRangeFilter, FastListMixin
from gateway.console.kit.readonly import ReadOnlyAdminMixin
from gateway.console.search import matched_by, payment_search
from gateway.console.kit.display import method_label, money, rupees, short_time
from gateway.console.kit.forms import RupeesField
from gateway.console.story import payment_story
from gateway.core.errors import GatewayError
from gateway.platform.models import Merchant
from gateway.core.money import rupees_to_paise
from payments.lookups import mobile_digits
from payments.models import AcquirerRoute, Payment, PaymentLink
from payments.services.links import (
    LinkRequest,
    link_request_check,
    link_url,
    payment_link_cancel,
    payment_link_create,
)
from payments.services.routing import route_check
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
class PaymentAdmin(FastListMixin, ReadOnlyAdminMixin, admin.ModelAdmin):
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

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("merchant")

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
                "payment_link": PaymentLink.objects.filter(payment=payment).select_related("created_by").first(),
                "method": self.method(payment),
            })
        return super().change_view(request, object_id, form_url, extra)

    def get_urls(self):
        wrap = self.admin_site.admin_view
        return [
            path("<int:payment_pk>/resend-webhook/<int:delivery_pk>/", wrap(self.resend_webhook_view),
                 name="payments_payment_resend_webhook"),
        ] + super().get_urls()

    def resend_webhook_view(self, request, payment_pk: int, delivery_pk: int):
        """Resend one delivery of this payment's (or its refunds') webhooks, from its page."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        roles.permission_require(request.user, roles.RESEND_WEBHOOK, "Resending a webhook")
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


# --- payment links (payments.services.links) --------------------------------------------------

class PaymentLinkForm(forms.ModelForm):
    """What finance staff type to make a link: rupees as they write them (1,250 or 1,00,000.50;
    converted once, gateway.core.money), the customer's phone (+91 98765 43210 reads as its ten
    digits) or email, and an expiry up to 30 days ahead. The service checks it all again; its
    errors land on the field they name."""

    merchant = forms.ModelChoiceField(queryset=Merchant.objects.filter(is_active=True))
    amount_rupees = RupeesField(label="amount (₹)", min_value=Decimal("1.00"), max_digits=10,
                                help_text="₹1 to ₹10,00,000, e.g. 499, 1,250.00 or 1,00,000")
    description = forms.CharField(max_length=500, widget=forms.Textarea(attrs={"rows": 2}),
                                  help_text="What the customer pays for; shown on the checkout.")
    customer_phone = forms.CharField(required=False, max_length=20,
                                     help_text="A 10-digit mobile number, with or without +91: 98765 43210 or +91 98765 43210")
    customer_email = forms.EmailField(required=False, max_length=255)
    valid_days = forms.IntegerField(label="valid for (days)", min_value=1, max_value=30, initial=7,
                                    help_text="1 to 30 days; the link expires unpaid after that.")

    class Meta:
        model = PaymentLink
        fields = []

    # The service's field names, as this form names them.
    FIELDS = {"amount": "amount_rupees", "expires_at": "valid_days"}

    def clean_customer_phone(self):
        typed = self.cleaned_data["customer_phone"].strip()
        if not typed:
            return ""
        number = mobile_digits(typed)  # the checkout's and the acquirer's one reading of a mobile number
        if not number:
            raise forms.ValidationError(f"customer phone: a 10-digit mobile number, with or without +91 "
                                        f"(+91 98765 43210), not “{typed}”.", code="invalid")
        return number

    def clean(self):
        cleaned = super().clean()
        if self.errors:
            return cleaned
        try:
            link_request_check(self.link_request())
        except ValueError as exc:  # a fraction of a paisa
            self.add_error("amount_rupees", str(exc))
        except GatewayError as exc:
            field = self.FIELDS.get(exc.field, exc.field)
            self.add_error(field if field in self.fields else None, exc.message.removeprefix(f"{exc.field}: "))
        return cleaned

    def link_request(self) -> LinkRequest:
        data = self.cleaned_data
        return LinkRequest(amount=rupees_to_paise(data["amount_rupees"]), description=data["description"],
                           customer_phone=data.get("customer_phone") or "",
                           customer_email=data.get("customer_email") or "",
                           expires_at=timezone.now() + timedelta(days=data["valid_days"]))


LINK_STATE_COLOURS = {"active": "#1565c0", "paid": "#2e7d32", "cancelled": "#757575", "expired": "#757575",
                      "failed": "#c62828"}


@admin.register(PaymentLink)
class PaymentLinkAdmin(admin.ModelAdmin):
    """Payment links: finance creates and cancels them (gateway/platform/roles.py: CREATE_PAYMENT_LINK,
    CANCEL_PAYMENT_LINK); every role reads them. Nothing here writes a payment: creation and
    cancelling go through payments.services.links."""

    form = PaymentLinkForm
    list_display = ("link_id", "merchant_code", "amount_short", "state_display", "customer", "expires",
                    "created_by", "created_at")
    list_select_related = ("payment__merchant", "created_by")
    search_fields = ("payment__merchant_txn_id__exact", "payment__sabpaisa_txn_id__exact",
                     "payment__merchant__code__exact")
    search_help_text = "An exact link id (plink_…), sabpaisaTxnId or merchant code."
    show_full_result_count = False
    readonly_fields = ("link_id", "state_display", "address", "merchant_code", "amount_short", "description",
                       "customer", "expires", "payment_page", "created_by", "created_at")

    def get_fields(self, request, obj=None):
        if obj is None:
            return ["merchant", "amount_rupees", "description", "customer_phone", "customer_email", "valid_days"]
        return list(self.get_readonly_fields(request, obj))

    def get_readonly_fields(self, request, obj=None):
        if not obj:
            return ()
        # The address is the customer's key to the payment: only those who may send links see it.
        if request.user.has_perm(roles.CREATE_PAYMENT_LINK):
            return self.readonly_fields
        return tuple("address_withheld" if name == "address" else name for name in self.readonly_fields)

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def save_model(self, request, obj, form, change):
        try:
            link = payment_link_create(merchant=form.cleaned_data["merchant"], request=form.link_request(),
                                       actor=request.user)
        except GatewayError as exc:
            # Checked by the form already; a rule only the service knows (the merchant's methods).
            raise _LinkRefused(exc) from None
        obj.pk, obj.payment = link.pk, link.payment

    def add_view(self, request, form_url="", extra_context=None):
        try:
            return super().add_view(request, form_url, extra_context)
        except _LinkRefused as refused:
            messages.error(request, f"Link not created: {refused.error.message}")
            return redirect(reverse("admin:payments_paymentlink_add"))

    def response_add(self, request, obj, post_url_continue=None):
        messages.success(request, f"Payment link {obj.payment.merchant_txn_id} created. Send the customer the "
                                  "address below.")
        return redirect(reverse("admin:payments_paymentlink_change", args=[obj.pk]))

    def get_urls(self):
        return [
            path("<int:link_pk>/cancel/", self.admin_site.admin_view(self.cancel_view),
                 name="payments_paymentlink_cancel"),
        ] + super().get_urls()

    def cancel_view(self, request, link_pk: int):
        """POST only: cancel an unpaid link (payments.services.links.payment_link_cancel)."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        roles.permission_require(request.user, roles.CANCEL_PAYMENT_LINK, "Cancelling a payment link")
        link = get_object_or_404(PaymentLink.objects.select_related("payment"), pk=link_pk)
        try:
            payment_link_cancel(link=link, actor=request.user)
        except GatewayError as exc:
            messages.warning(request, f"Not cancelled: {exc.message}")
        else:
            messages.success(request, f"Payment link {link.payment.merchant_txn_id} cancelled; the merchant is "
                                      "sent payment.failed.")
        return redirect(reverse("admin:payments_paymentlink_change", args=[link.pk]))

    # columns ------------------------------------------------------------------------------
    @admin.display(description="link", ordering="payment__merchant_txn_id")
    def link_id(self, obj):
        return obj.payment.merchant_txn_id

    @admin.display(description="merchant")
    def merchant_code(self, obj):
        return obj.payment.merchant.code

    @admin.display(description="amount")
    def amount_short(self, obj):
        return format_html('<span class="nowrap" title="{} paise">₹{}</span>', obj.payment.amount,
                           rupees(obj.payment.amount))

    @admin.display(description="state")
    def state_display(self, obj):
        state = obj.state
        return format_html('<strong style="color:{}">{}</strong>', LINK_STATE_COLOURS.get(state, "#000"), state)

    @admin.display(description="customer")
    def customer(self, obj):
        return " · ".join(part for part in (obj.payment.customer_phone, obj.payment.customer_email) if part)

    @admin.display(description="description")
    def description(self, obj):
        return obj.payment.description

    @admin.display(description="expires (IST)", ordering="payment__expires_at")
    def expires(self, obj):
        return f"{timezone.localtime(obj.payment.expires_at):%Y-%m-%d %H:%M}"

    @admin.display(description="address to send the customer")
    def address(self, obj):
        url = link_url(obj)
        return format_html('<a href="{}" data-link-url>{}</a>', url, url)

    @admin.display(description="address to send the customer")
    def address_withheld(self, obj):
        return (f"Shown only to staff who may send payment links ({roles.CREATE_PAYMENT_LINK}, role: "
                f"{' or '.join(roles.roles_holding(roles.CREATE_PAYMENT_LINK))}).")

    @admin.display(description="payment")
    def payment_page(self, obj):
        return format_html('<a href="{}">{} · its whole story</a>',
                           reverse("admin:payments_payment_change", args=[obj.payment_id]), obj.payment.sabpaisa_txn_id)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        link = self.get_object(request, object_id)
        extra = dict(extra_context or {})
        if link is not None:
            extra.update({
                "link_cancellable": link.payment.status == Payment.Status.PENDING,
                "can_cancel": request.user.has_perm(roles.CANCEL_PAYMENT_LINK),
                "cancel_url": reverse("admin:payments_paymentlink_cancel", args=[link.pk]),
                "cancel_roles": " or ".join(roles.roles_holding(roles.CANCEL_PAYMENT_LINK)),
            })
        return super().change_view(request, object_id, form_url, extra)


class _LinkRefused(Exception):
    def __init__(self, error: GatewayError):
        self.error = error


class AcquirerRouteForm(forms.ModelForm):
    """One method's ordered acquirers (payments.services.routing): names this deployment enables
    (GATEWAY_ACQUIRERS), each carrying the method, none twice."""

    class Meta:
        model = AcquirerRoute
        fields = ("merchant", "method", "acquirers")

    def clean_acquirers(self):
        names = [name.strip() for name in self.cleaned_data["acquirers"].split(",") if name.strip()]
        try:
            route_check(self.cleaned_data.get("method"), names)
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from None
        return ",".join(names)


@admin.register(AcquirerRoute)
class AcquirerRouteAdmin(admin.ModelAdmin):
    """Routing (issue 33, docs/going-live.md): per merchant and method, the acquirers tried in
    order; the ANY row is the merchant's default. A payment fails over to the second only on a
    technical failure before any customer step, never on a decline, once."""

    form = AcquirerRouteForm
    list_display = ("merchant", "method", "acquirers", "updated_at")
    list_filter = ("method",)
    search_fields = ("merchant__code", "merchant__name")
    autocomplete_fields = ("merchant",)
