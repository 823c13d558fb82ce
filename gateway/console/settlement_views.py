"""Finance's settlement and reconciliation pages, under /admin/console/ (gateway/console/urls.py):
the settlements list, a settlement's page, its merchant CSV, the exceptions queue, an
exception's page (resolve it with a note) and the bank statement upload. Each checks its
permission itself (gateway/platform/roles.py): reading is every role's, resolving, uploading
and exporting finance's. docs/settlements.md, "Finance's console"."""
from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.http import Http404, HttpResponseRedirect, StreamingHttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from gateway.console import reconciliation, settlements
from gateway.console.kit.display import money
from gateway.console.kit.lists import PAGES_AHEAD, CappedCountPaginator
from gateway.core.errors import ValidationError
from gateway.platform import roles
from gateway.platform.services import audit_record
from refunds import selectors
from refunds.settlements.exceptions import recon_exception_resolve
from refunds.settlements.statements import MAX_BYTES, StatementInvalid, bank_statement_upload

VIEW_SETTLEMENT = "refunds.view_settlement"
VIEW_EXCEPTION = "refunds.view_reconexception"
EXCEPTIONS_PER_PAGE = 50


def _page_number(request) -> int:
    try:
        return max(1, int(request.GET.get("p") or 1))
    except ValueError:
        return 1


def _context(request, title: str, **more) -> dict:
    return {**admin.site.each_context(request), "title": title, **more}


def _exception_row(exception) -> dict:
    return {"exception": exception, "reason": settlements.exception_reason(exception),
            "named": reconciliation.named_things(exception),
            "expected": money(exception.expected) if exception.expected is not None else None,
            "actual": money(exception.actual) if exception.actual is not None else None}


# --- settlements ------------------------------------------------------------------------------

class SettlementFilter(forms.Form):
    merchant = forms.CharField(required=False, max_length=50, label="Merchant code")
    paid_from = forms.DateField(required=False, label="Paid from (IST day)",
                                widget=forms.DateInput(attrs={"type": "date"}))
    paid_to = forms.DateField(required=False, label="Paid to (IST day)", widget=forms.DateInput(attrs={"type": "date"}))
    bank = forms.ChoiceField(required=False, label="Bank credit",
                             choices=[("", "any"), ("matched", "matched"), ("unmatched", "not matched")])
    short = forms.BooleanField(required=False, label="Only those short or in doubt")

    def clean(self):
        data = super().clean()
        if data.get("paid_from") and data.get("paid_to") and data["paid_to"] < data["paid_from"]:
            self.add_error("paid_to", "Paid to: must not be before Paid from.")
        return data


def settlements_view(request):
    roles.permission_require(request.user, VIEW_SETTLEMENT, "The settlements list")
    form = SettlementFilter(request.GET)
    page = None
    if form.is_valid():
        data = form.cleaned_data
        matched = {"matched": True, "unmatched": False}.get(data["bank"])
        page = settlements.settlements_page(page_number=_page_number(request), merchant_code=data["merchant"].strip(),
                                            from_day=data["paid_from"], to_day=data["paid_to"], matched=matched,
                                            short=data["short"])
    query = request.GET.copy()
    query.pop("p", None)
    rows = [settlements.settlement_row(s) for s in page.object_list] if page is not None else []
    return TemplateResponse(request, "admin/console/settlements.html", _context(
        request, "Settlements", form=form, page=page, rows=rows, query=query.urlencode()))


def _settlement_or_404(pk: int):
    settlement = selectors.settlement_for_console(pk)
    if settlement is None:
        raise Http404("no such settlement")
    return settlement


def settlement_view(request, pk: int):
    roles.permission_require(request.user, VIEW_SETTLEMENT, "A settlement's page")
    settlement = _settlement_or_404(pk)
    exceptions = selectors.settlement_exceptions(settlement)
    rows = [_exception_row(e) for e in exceptions]
    lines = settlements.lines_page(settlement, request.GET.get("p"))
    why = settlements.shortfall(settlement, exceptions)
    return TemplateResponse(request, "admin/console/settlement.html", _context(
        request, f"Settlement {settlements.settlement_public_id(settlement)}", settlement=settlement,
        public_id=settlements.settlement_public_id(settlement), why=why, expected_net_text=money(why.expected_net),
        bank_text=money(why.bank_amount),
        exceptions=rows, lines=lines, line_rows=[settlements.line_row(line) for line in lines.object_list],
        figures=settlements.settlement_row_of(settlement), can_export=request.user.has_perm(roles.EXPORT_SETTLEMENT)))


@require_POST
def settlement_csv_view(request, pk: int):
    """The merchant's CSV of one settlement (gateway.console.settlements), audited."""
    roles.permission_require(request.user, roles.EXPORT_SETTLEMENT, "The merchant's settlement CSV")
    settlement = _settlement_or_404(pk)
    audit_record(actor=request.user, action="settlement.export_csv", obj=settlement, merchant=settlement.merchant,
                 after={"settlement": settlements.settlement_public_id(settlement), "utr": settlement.utr,
                        "net_paise": settlement.net, "lines": settlement.line_count})
    response = StreamingHttpResponse(settlements.csv_lines(settlements.settlement_export_rows(settlement)),
                                     content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{settlements.settlement_export_filename(settlement)}"'
    response["Cache-Control"] = "no-store"
    return response


# --- exceptions -------------------------------------------------------------------------------

class ExceptionFilter(forms.Form):
    status = forms.ChoiceField(required=False, choices=[("open", "open"), ("resolved", "resolved"), ("all", "all")])
    kind = forms.ChoiceField(required=False)
    merchant = forms.CharField(required=False, max_length=50, label="Merchant code")
    settlement = forms.IntegerField(required=False, min_value=1, widget=forms.HiddenInput)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["kind"].choices = [("", "every kind"), *selectors.recon_exception_kinds().items()]


def exceptions_view(request):
    roles.permission_require(request.user, VIEW_EXCEPTION, "The exceptions queue")
    form = ExceptionFilter(request.GET)
    page, rows = None, []
    if form.is_valid():
        data = form.cleaned_data
        status = {"": "open", "all": None}.get(data["status"], data["status"])
        queryset = selectors.recon_exceptions_for_console(status=status, kind=data["kind"] or None,
                                                           merchant_code=data["merchant"].strip() or None,
                                                           settlement_pk=data["settlement"])
        number = _page_number(request)
        paginator = CappedCountPaginator(queryset, EXCEPTIONS_PER_PAGE,
                                         cap=(number + PAGES_AHEAD) * EXCEPTIONS_PER_PAGE + 1)
        page = paginator.get_page(number)
        rows = [_exception_row(e) for e in page.object_list]
    query = request.GET.copy()
    query.pop("p", None)
    return TemplateResponse(request, "admin/console/recon_exceptions.html", _context(
        request, "Reconciliation exceptions", form=form, page=page, rows=rows, query=query.urlencode(),
        can_resolve=request.user.has_perm(roles.RESOLVE_RECON_EXCEPTION),
        can_upload=request.user.has_perm(roles.UPLOAD_BANK_STATEMENT)))


@require_http_methods(["GET", "POST"])
def exception_view(request, pk: int):
    """One exception: its reason, what to check, its evidence and what it names; POST `note`
    resolves it (finance), through refunds' one resolve service, which audits it."""
    roles.permission_require(request.user, VIEW_EXCEPTION, "An exception's page")
    exception = selectors.recon_exception_for_console(pk)
    if exception is None:
        raise Http404("no such exception")
    if request.method == "POST":
        roles.permission_require(request.user, roles.RESOLVE_RECON_EXCEPTION, "Resolving an exception")
        try:
            recon_exception_resolve(exception_id=exception.pk, actor=request.user, note=request.POST.get("note", ""))
        except ValidationError as exc:
            messages.error(request, f"Not resolved: {exc.message}")
        else:
            messages.success(request, f"Resolved: {settlements.exception_reason(exception)}")
        return HttpResponseRedirect(reverse("console:recon_exception", args=[exception.pk]))
    return TemplateResponse(request, "admin/console/recon_exception.html", _context(
        request, "Reconciliation exception", exception=exception, reason=settlements.exception_reason(exception),
        check=reconciliation.WHAT_TO_CHECK.get(exception.kind, ""), named=reconciliation.named_things(exception),
        evidence=reconciliation.evidence_rows(exception),
        can_resolve=request.user.has_perm(roles.RESOLVE_RECON_EXCEPTION)))


# --- the bank statement -----------------------------------------------------------------------

class StatementUploadForm(forms.Form):
    statement = forms.FileField(label="Bank statement (CSV)",
                                help_text="Columns date, amount, utr and optionally narration, in a header row; "
                                          "amounts in rupees (a debit with a leading minus).")


@require_http_methods(["GET", "POST"])
def statement_upload_view(request):
    """Finance uploads a bank statement: it is stored once per file content (refunds.settlements
    .statements), audited, then reconciled against."""
    roles.permission_require(request.user, roles.UPLOAD_BANK_STATEMENT, "Uploading a bank statement")
    form = StatementUploadForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["statement"]
        if upload.size > MAX_BYTES:
            form.add_error("statement", f"Bank statement: the file is {upload.size} bytes; the limit is {MAX_BYTES}.")
        else:
            content = upload.read()
            try:
                statement, created = bank_statement_upload(name=upload.name, content=content, actor=request.user)
            except StatementInvalid as exc:
                form.add_error("statement", f"Bank statement: {exc}")
            else:
                found = reconciliation.reconcile_after_upload(statement)
                lines = statement.lines.count()
                if created:
                    messages.success(request, f"Read {lines} lines of {statement.name}. {found}")
                else:
                    messages.warning(request, f"This file was uploaded before ({statement.name}, {lines} lines): "
                                              f"nothing was added. {found}")
                return HttpResponseRedirect(reverse("console:recon_exceptions"))
    return TemplateResponse(request, "admin/console/statement_upload.html", _context(
        request, "Upload a bank statement", form=form, max_bytes=MAX_BYTES))
