"""Disputes in the console, under /admin/console/disputes/ (gateway/console/urls.py): the list by
time left, a dispute's page with its story, and finance's two answers, accept and contest with
evidence, through the same services as the API (refunds.disputes.services). In staging, staff
who may answer disputes may also open a test dispute on a sandbox payment (docs/sandbox.md).
Reading is every role's (refunds.view_dispute); answering is ANSWER_DISPUTE's. Times are shown in
India time (IST) with the time left; they are kept in UTC. docs/disputes.md, "The console"."""
from __future__ import annotations

from datetime import datetime
from datetime import timezone as dt_timezone

from django import forms
from django.contrib import admin, messages
from django.http import Http404, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST

from gateway.console.kit.display import money, short_time
from gateway.core.errors import GatewayError
from gateway.platform import roles
import refunds.disputes.selectors as selectors
from refunds.disputes.services import (
    dispute_accept,
    dispute_evidence_send,
    dispute_sandbox_open,
    evidence_max_bytes,
    sandbox_disputes_offered,
)

VIEW_DISPUTE = "refunds.view_dispute"


def time_left(respond_by: datetime | None, now: datetime) -> str:
    """'1 d 4 h left', '3 h 10 min left', 'overdue by 2 h', '—'."""
    if respond_by is None:
        return "—"
    seconds = int((respond_by - now).total_seconds())
    late, seconds = seconds < 0, abs(seconds)
    days, hours, minutes = seconds // 86400, seconds % 86400 // 3600, seconds % 3600 // 60
    text = f"{days} d {hours} h" if days else f"{hours} h {minutes} min"
    return f"overdue by {text}" if late else f"{text} left"


def dispute_row(dispute, now: datetime) -> dict:
    return {"dispute": dispute, "amount": money(dispute.amount), "respond_by": short_time(dispute.respond_by),
            "time_left": time_left(dispute.respond_by, now) if not dispute.is_final else "decided",
            "due_soon": selectors.dispute_due_soon(dispute, now), "status": dispute.status.upper()}


@require_http_methods(["GET", "POST"])
def disputes_view(request):
    roles.permission_require(request.user, VIEW_DISPUTE, "The disputes list")
    now = timezone.now()
    if request.method == "POST":
        return _open_test_dispute(request)
    awaiting = [dispute_row(d, now) for d in selectors.disputes_awaiting()]
    others = [dispute_row(d, now) for d in selectors.disputes_not_awaiting(limit=100)]
    at_risk = selectors.disputes_at_risk(now=now)
    context = {**admin.site.each_context(request), "title": "Disputes", "awaiting": awaiting, "others": others,
               "at_risk": at_risk, "at_risk_amount": money(at_risk["amount"]),
               "can_open_test": _can_open_test(request.user)}
    return TemplateResponse(request, "admin/console/disputes.html", context)


def _can_open_test(user) -> bool:
    return sandbox_disputes_offered() and user.has_perm(roles.ANSWER_DISPUTE)


def _open_test_dispute(request):
    """Staging: the customer of a successful sandbox payment disputes it now (docs/sandbox.md)."""
    if not _can_open_test(request.user):
        roles.permission_require(request.user, roles.ANSWER_DISPUTE, "Opening a test dispute")
        raise Http404("test disputes are the sandbox's, in staging")
    txn = request.POST.get("sabpaisaTxnId", "").strip()
    try:
        dispute = dispute_sandbox_open(sabpaisa_txn_id=txn)
    except GatewayError as exc:
        messages.error(request, f"No test dispute opened: {exc.message}")
        return HttpResponseRedirect(reverse("console:disputes"))
    messages.success(request, f"Test dispute {dispute.dispute_id} opened on {txn}.")
    return HttpResponseRedirect(reverse("console:dispute", args=[dispute.dispute_id]))


class EvidenceForm(forms.Form):
    doc_type = forms.ChoiceField(label="Document type")
    file = forms.FileField(label="File (PDF, PNG or JPEG)")
    note = forms.CharField(required=False, max_length=500, widget=forms.TextInput)

    def __init__(self, *args, dispute, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["doc_type"].choices = [(item.get("code"), item.get("code")) for item in dispute.preferred_evidence]
        self.fields["file"].help_text = f"At most {evidence_max_bytes() // (1024 * 1024)} MiB; checked by its content."


def _dispute(dispute_id: str):
    dispute = selectors.dispute_by_id(dispute_id)
    if dispute is None:
        raise Http404("no such dispute")
    return dispute


def dispute_view(request, dispute_id: str):
    roles.permission_require(request.user, VIEW_DISPUTE, "A dispute's page")
    dispute = _dispute(dispute_id)
    now = timezone.now()
    can_answer = request.user.has_perm(roles.ANSWER_DISPUTE) and dispute.status in dispute.ANSWERABLE_STATUSES
    context = {**admin.site.each_context(request), "title": f"Dispute {dispute.dispute_id}",
               "row": dispute_row(dispute, now), "dispute": dispute,
               "events": list(dispute.events.all()), "files": list(dispute.evidence_files.all()),
               "can_answer": can_answer, "form": EvidenceForm(dispute=dispute) if can_answer else None,
               "respond_by_utc": dispute.respond_by.astimezone(dt_timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
               if dispute.respond_by else "—"}
    return TemplateResponse(request, "admin/console/dispute.html", context)


def _answered(request, dispute, answer) -> HttpResponseRedirect:
    try:
        updated = answer()
    except GatewayError as exc:
        messages.error(request, f"Not done: {exc.message}")
    else:
        messages.success(request, f"Done: the dispute is {updated.status.upper()}.")
    return HttpResponseRedirect(reverse("console:dispute", args=[dispute.dispute_id]))


@require_POST
def dispute_accept_view(request, dispute_id: str):
    roles.permission_require(request.user, roles.ANSWER_DISPUTE, "Accepting a dispute")
    dispute = _dispute(dispute_id)
    return _answered(request, dispute, lambda: dispute_accept(dispute=dispute, actor=request.user,
                                                              actor_name=request.user.get_username()))


@require_POST
def dispute_evidence_view(request, dispute_id: str):
    roles.permission_require(request.user, roles.ANSWER_DISPUTE, "Sending a dispute's evidence")
    dispute = _dispute(dispute_id)
    form = EvidenceForm(request.POST, request.FILES, dispute=dispute)
    if not form.is_valid():
        messages.error(request, "Not sent: " + "; ".join(f"{name}: {' '.join(errors)}"
                                                         for name, errors in form.errors.items()))
        return HttpResponseRedirect(reverse("console:dispute", args=[dispute.dispute_id]))
    return _answered(request, dispute, lambda: dispute_evidence_send(
        dispute=dispute, doc_type=form.cleaned_data["doc_type"], upload=form.cleaned_data["file"],
        note=form.cleaned_data["note"], actor=request.user, actor_name=request.user.get_username()))
