"""The console's own pages: the operations dashboard, the "Needs attention" queue and the
settlement export. Mounted by gateway/console/urls.py inside the admin (login, staff check,
the admin's look); each checks its permission itself (gateway/platform/roles.py)."""
from __future__ import annotations

from datetime import timedelta

from django import forms
from django.contrib import admin
from django.core.exceptions import ObjectDoesNotExist
from django.contrib import messages
from django.http import HttpResponseRedirect, StreamingHttpResponse
from django.template.response import TemplateResponse
from django.views.decorators.http import require_http_methods

from gateway.platform import roles
from gateway.console.attention import REVERSAL_SENDS_BEFORE_WARNING, attention_sections
from gateway.console.dashboard import dashboard_context
from gateway.console.kit.days import day_bounds, today
from gateway.console.settlement import settlement_csv_lines, settlement_filename, settlement_rows, settlement_totals
from gateway.console.kit.display import money
from gateway.core.errors import ValidationError
from gateway.platform.models import Merchant
from gateway.platform.services import audit_record
from refunds import selectors as refund_selectors
import refunds.disputes.selectors as dispute_selectors


def dashboard_view(request):
    roles.permission_require(request.user, "payments.view_payment", "The dashboard")
    context = {**admin.site.each_context(request), **dashboard_context(), "title": "Operations dashboard",
               "can_export": request.user.has_perm(roles.EXPORT_SETTLEMENT),
               # "Why is this settlement short?": the list of those short or in doubt, one click away.
               "recon": refund_selectors.recon_open_counts()
               if request.user.has_perm("refunds.view_settlement") else None}
    if request.user.has_perm("refunds.view_dispute"):
        # Open disputes and the money in them (docs/disputes.md, "Deadlines").
        context["disputes"] = dispute_selectors.disputes_at_risk(now=context["now"])
        context["disputes_amount"] = money(context["disputes"]["amount"])
    return TemplateResponse(request, "admin/console/dashboard.html", context)


class SettlementForm(forms.Form):
    merchant = forms.ModelChoiceField(queryset=Merchant.objects.order_by("code"), to_field_name="code",
                                      help_text="The merchant whose money this is.")
    date = forms.DateField(widget=forms.DateInput(attrs={"type": "date"}),
                           help_text="A calendar day in India (IST, 00:00 to 24:00). Payments count on the day they "
                                     "succeeded, refunds on the day the bank processed them.")

    def clean_date(self):
        day = self.cleaned_data["date"]
        if day > today():
            raise forms.ValidationError("This day has not begun yet.")
        return day


@require_http_methods(["GET", "POST"])
def settlement_export_view(request):
    roles.permission_require(request.user, roles.EXPORT_SETTLEMENT, "The settlement export")
    data = request.POST if request.method == "POST" else (request.GET if "merchant" in request.GET else None)
    form = SettlementForm(data, initial={"date": today() - timedelta(days=1)})
    preview = None
    if data is not None and form.is_valid():
        merchant, day = form.cleaned_data["merchant"], form.cleaned_data["date"]
        totals = settlement_totals(merchant, day)
        if request.method == "POST":
            audit_record(actor=request.user, action="settlement.export", obj=merchant, merchant=merchant,
                         after={"date": day.isoformat(), **totals.as_dict()})
            response = StreamingHttpResponse(settlement_csv_lines(settlement_rows(merchant, day)),
                                             content_type="text/csv; charset=utf-8")
            response["Content-Disposition"] = f'attachment; filename="{settlement_filename(merchant, day)}"'
            response["Cache-Control"] = "no-store"
            return response
        start, end = day_bounds(day)
        preview = {"merchant": merchant, "day": day, "start": start, "end": end, "partial": day == today(),
                   "payments": totals.payments, "payments_amount": money(totals.payments_paise),
                   "refunds": totals.refunds, "refunds_amount": money(totals.refunds_paise),
                   "net": money(totals.net_paise)}
    context = {**admin.site.each_context(request), "title": "Settlement export", "form": form,
               "preview": preview}
    return TemplateResponse(request, "admin/console/settlement_export.html", context)


@require_http_methods(["GET", "POST"])
def needs_attention_view(request):
    """The queue (gateway.console.attention). POST records a late approval given back by hand:
    `reversal` (its id) and `note` (how), for staff holding SETTLE_REVERSAL."""
    roles.permission_require(request.user, "payments.view_payment", "The Needs attention queue")
    if request.method == "POST":
        roles.permission_require(request.user, roles.SETTLE_REVERSAL, "Recording a late approval as given back by hand")
        from payments.services.reversals import reversal_settle
        from payments.state import InvalidReversalTransition

        try:
            reversal = reversal_settle(reversal_pk=int(request.POST.get("reversal", "0") or 0), actor=request.user,
                                       note=request.POST.get("note", ""))
        except (ValidationError, InvalidReversalTransition) as exc:
            messages.error(request, f"Not recorded: {exc.message}")
        except (ValueError, ObjectDoesNotExist):
            messages.error(request, "Not recorded: no such late approval")
        else:
            messages.success(request, f"Recorded: approval {reversal.bank_rrn} of payment "
                                      f"{reversal.payment.sabpaisa_txn_id} was given back by hand.")
        return HttpResponseRedirect(request.path)
    context = {**admin.site.each_context(request), "title": "Needs attention",
               "sections": attention_sections(),
               "can_settle": request.user.has_perm(roles.SETTLE_REVERSAL),
               "sends_warning": REVERSAL_SENDS_BEFORE_WARNING}
    return TemplateResponse(request, "admin/console/needs_attention.html", context)
