"""Refunds in the admin console.

Staff never edit a refund: RefundAdmin is read-only, with each refund's timeline. Finance staff
holding `refunds.initiate_refund` (the finance role, gateway/platform/roles.py) start a full or partial
refund of a payment at /admin/refunds/refund/initiate/<payment pk>/ (linked from the payment's
page), which goes through refunds.services.refund_create (the same rules and lock as the API)
and is written to the audit log; a refused attempt is audited too. Staff without the
permission get the console's 403 page naming it.

The list never counts the whole table and searches exact values only (gateway.console.kit.lists).
"""
from __future__ import annotations

from decimal import Decimal

from django import forms
from django.contrib import admin, messages
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from gateway.platform import roles
from gateway.console.kit.lists import DayRangeFilter, FastListMixin
from gateway.console.kit.readonly import ReadOnlyAdminMixin
from gateway.console.search import refund_search
from gateway.core.errors import GatewayError, ValidationError
from gateway.console.kit.display import money, rupees
from gateway.console.kit.forms import RupeesField
from gateway.core.money import rupees_str, rupees_to_paise
from gateway.platform.services import audit_record
from payments.models import Payment
from refunds import selectors, services
from refunds.api.serializers import REASON_MAX, is_refund_id
from refunds.models import Refund, RefundEvent, new_refund_id

INITIATE_PERMISSION = roles.INITIATE_REFUND


class RefundInitiateForm(forms.Form):
    """Staff type rupees, as the customer and the merchant speak of money ("refund 100" means
    ₹100, not 100 paise); cleaned_data["amount"] is paise, as everywhere else. Nothing is
    filled in for them, and a refund starts only after a page that states the rupee amount."""

    amount = RupeesField(
        label="Amount (₹)", min_value=Decimal("0.01"), max_digits=13,
        widget=forms.TextInput(attrs={"inputmode": "decimal", "autocomplete": "off",
                                      "placeholder": "e.g. 100, 1,000 or 1,00,000.50"}),
        help_text=f"In rupees: 100 refunds ₹100.00 (10000 paise); commas as you write them (1,000 or 1,00,000). "
                  f"At least ₹{rupees_str(services.REFUND_MIN_AMOUNT)}, or the whole remaining amount when less remains.")
    reason = forms.CharField(max_length=REASON_MAX, help_text="Shown to the merchant and kept in the audit log.")
    # Made when the form is first shown: submitting the same form twice (a double click, a
    # reload) finds the refund it already made instead of refunding twice.
    refund_id = forms.CharField(widget=forms.HiddenInput, max_length=64)
    # Set by the confirmation page's button: without it a valid form only asks "refund ₹X?".
    confirmed = forms.BooleanField(required=False, widget=forms.HiddenInput)

    def clean_amount(self):
        return rupees_to_paise(self.cleaned_data["amount"])

    def clean_refund_id(self):
        value = self.cleaned_data["refund_id"]
        if not is_refund_id(value):
            raise forms.ValidationError("invalid form; reload the page")
        return value


class RefundEventInline(ReadOnlyAdminMixin, admin.TabularInline):
    model = RefundEvent
    fields = ("created_at", "kind", "from_status", "to_status", "actor_name", "detail")
    readonly_fields = fields
    extra = 0
    can_delete = False
    verbose_name = "timeline entry"
    verbose_name_plural = "timeline"

    def has_view_permission(self, request, obj=None):
        # Whoever may see the refund sees its timeline.
        return request.user.has_perm("refunds.view_refund")


# Refunds listed per page on the refund page of a payment (the API's default page, too).
REFUNDS_PAGE_SIZE = 20


def _paise(value: int | None) -> str:
    """'₹1,499.00 (149900 paise)': rupees first, as staff read them, and the paise beside."""
    return money(value)


class RefundMethodFilter(admin.SimpleListFilter):
    """The payment methods, from their choices (not a DISTINCT over the refunds table)."""

    title = "method"
    parameter_name = "payment_mode"

    def lookups(self, request, model_admin):
        return Payment.Mode.choices

    def queryset(self, request, queryset):
        return queryset.filter(payment_mode=self.value()) if self.value() else queryset


@admin.register(Refund)
class RefundAdmin(FastListMixin, ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ("refund_id", "merchant", "payment_link", "amount_display", "status", "payment_mode",
                    "source", "bank_refund_reference", "created_at", "processed_at")
    list_filter = ("status", "needs_review", ("merchant", admin.RelatedFieldListFilter), "source",
                   RefundMethodFilter, ("created_at", DayRangeFilter))
    actions = ["release_for_retry"]
    # The box searches every identifier (get_search_results); this only makes the admin show it.
    search_fields = ("refund_id",)
    search_help_text = "An exact refundId, sabpaisaTxnId, merchantTxnId, bank refund reference or merchant code."
    list_select_related = ("merchant", "payment")
    ordering = ("-created_at", "-id")
    sortable_by = ("created_at", "processed_at")
    inlines = [RefundEventInline]
    fields = ("refund_id", "merchant", "payment_link", "amount_display", "currency", "status", "reason",
              "payment_mode", "refund_method", "bank_refund_reference", "failure_reason", "source",
              "initiated_by", "bank_attempts", "needs_review", "created_at", "processed_at", "failed_at", "payment_totals")
    readonly_fields = fields

    def get_search_results(self, request, queryset, search_term):
        return refund_search(queryset, search_term), False

    def has_initiate_permission(self, request):
        return request.user.has_perm("refunds.initiate_refund")

    @admin.action(description="Submit again to the bank (refunds flagged for review)", permissions=["initiate"])
    def release_for_retry(self, request, queryset):
        """After staff checked with the bank that it has no record of a flagged refund, send it
        again. Goes through refunds.services, which audits it; the service refuses anything not
        INITIATED and flagged."""
        released = 0
        for refund in queryset.select_related(None).only("pk", "refund_id"):
            try:
                services.refund_review_release(refund_pk=refund.pk, actor=request.user)
            except GatewayError as exc:
                self.message_user(request, f"{refund.refund_id}: {exc.message}", messages.WARNING)
            else:
                released += 1
        if released:
            self.message_user(request, f"{released} refund(s) submitted to the bank again.", messages.SUCCESS)

    @admin.display(description="payment (sabpaisaTxnId)")
    def payment_link(self, obj):
        return format_html('<a href="{}">{}</a>', reverse("admin:payments_payment_change", args=[obj.payment_id]),
                           obj.payment.sabpaisa_txn_id)

    @admin.display(description="refund amount", ordering="amount")
    def amount_display(self, obj):
        return _paise(obj.amount)

    @admin.display(description="payment totals")
    def payment_totals(self, obj):
        payment = obj.payment
        return format_html(
            "paid {} · refunded {} · pending {} · refundable {}",
            _paise(selectors.payment_paid_amount(payment)), _paise(payment.refunded_amount),
            _paise(payment.refund_pending_amount), _paise(selectors.refundable_amount(payment)))

    @admin.display(description="new refund")
    def initiate_link(self, obj):
        url = reverse("admin:refunds_refund_initiate", args=[obj.payment_id])
        return format_html('<a class="button" href="{}">Refund more of this payment</a>', url)

    def get_fields(self, request, obj=None):
        fields = list(super().get_fields(request, obj))
        return fields + ["initiate_link"] if request.user.has_perm(INITIATE_PERMISSION) else fields

    def get_readonly_fields(self, request, obj=None):
        return self.get_fields(request, obj)

    def get_urls(self):
        return [
            path("initiate/<int:payment_pk>/", self.admin_site.admin_view(self.initiate_view),
                 name="refunds_refund_initiate"),
        ] + super().get_urls()

    def initiate_view(self, request, payment_pk: int):
        """Start a full or partial refund of one payment, through the refund service."""
        roles.permission_require(request.user, INITIATE_PERMISSION, "Starting a refund")
        payment = get_object_or_404(Payment.objects.select_related("merchant"), pk=payment_pk)
        remaining = selectors.refundable_amount(payment)
        confirm = None
        if request.method == "POST":
            form = RefundInitiateForm(request.POST)
            if form.is_valid() and "change" not in request.POST:
                if form.cleaned_data["confirmed"]:
                    refund = self._initiate(request, form, payment)
                    if refund is not None:
                        return redirect(reverse("admin:refunds_refund_change", args=[refund.pk]))
                else:
                    confirm = {"amount": money(form.cleaned_data["amount"]),
                               "rupees": f"₹{rupees(form.cleaned_data['amount'])}",
                               "whole": form.cleaned_data["amount"] == remaining}
        else:
            # No amount filled in: a default of the whole amount got refunded by accident.
            form = RefundInitiateForm(initial={"refund_id": new_refund_id()})
        context = {
            **self.admin_site.each_context(request),
            "title": f"Refund payment {payment.sabpaisa_txn_id}",
            "opts": self.model._meta,
            "payment": payment,
            "form": form,
            "confirm": confirm,
            "refundable": payment.status == Payment.Status.SUCCESS and remaining > 0,
            "totals": {
                "paid": _paise(selectors.payment_paid_amount(payment)),
                "refunded": _paise(payment.refunded_amount),
                "pending": _paise(payment.refund_pending_amount),
                "remaining": _paise(remaining),
            },
            **self._refunds_page(request, payment),
        }
        return TemplateResponse(request, "admin/refunds/initiate.html", context)

    def _refunds_page(self, request, payment) -> dict:
        """One page of the payment's refunds, oldest first, as the API pages them
        (refunds.selectors.refunds_page_for_merchant): a payment refunded in thousands of parts
        must not load them all to show the form."""
        try:
            page = max(0, int(request.GET.get("page", 0)))
        except ValueError:
            page = 0
        found = selectors.refunds_page_for_merchant(merchant=payment.merchant, payment=payment, page=page,
                                                    size=REFUNDS_PAGE_SIZE)
        pages = max(1, -(-found.total // REFUNDS_PAGE_SIZE))
        return {"refunds": [(r, money(r.amount)) for r in found.refunds], "refunds_total": found.total,
                "refunds_page": page, "refunds_pages": pages, "refunds_previous": page - 1 if page > 0 else None,
                "refunds_next": page + 1 if page + 1 < pages else None}

    def _initiate(self, request, form, payment) -> Refund | None:
        amount, reason = form.cleaned_data["amount"], form.cleaned_data["reason"]
        try:
            result = services.refund_create(
                merchant=payment.merchant, payment=payment, amount=amount, reason=reason,
                refund_id=form.cleaned_data["refund_id"], source=Refund.Source.ADMIN, actor=request.user)
        except GatewayError as exc:
            audit_record(actor=request.user, action="refund.initiate_refused", obj=payment, merchant=payment.merchant,
                         after={"amount": amount, "reason": reason, "errorCode": exc.code,
                                "errorMessage": exc.message})
            field = "amount" if isinstance(exc, ValidationError) or exc.code == "REFUND_AMOUNT_EXCEEDED" else None
            form.add_error(field, f"{exc.code}: {exc.message}")
            return None
        refund = result.refund
        if result.created:
            messages.success(request, f"Refund {refund.refund_id} of {_paise(refund.amount)} started; "
                                      "the bank's answer will appear in its timeline.")
        else:
            messages.info(request, f"This form was already submitted: refund {refund.refund_id}.")
        return refund
