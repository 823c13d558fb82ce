"""The delivery log support staff act on.

- Deliveries per merchant (filter) and per payment or refund (`?event__subject_id=<id>`, or
  search by it), with every attempt inline.
- "Resend now", as a list action and a button, through webhooks.services.delivery_resend
  (audited).
- A signature explainer on each delivery: what was signed, its length and SHA-256, the header
  sent, so a merchant whose verifier rejects us can find which input differs.
- "Send a test event" to a merchant's address, through webhooks.services.webhook_test_send: it is
  queued for a worker, and the page that follows is its delivery, where the answer appears.

Nothing here writes a field itself; the log is read-only. Resending and test events need
webhooks.change_webhookdelivery (every console role, gateway/platform/roles.py). The lists never count
the whole table, filter without a DISTINCT over it and search exact values only
(gateway.console.kit.lists); a payment's own deliveries are also on its page, with a resend button.
"""
from __future__ import annotations

import hashlib

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import quote
from django.db.models import OuterRef, Subquery
from django.http import HttpResponseNotAllowed
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join

from gateway.platform import roles
from gateway.console.kit.display import short_time
from gateway.console.kit.lists import DayRangeFilter, FastListMixin
from gateway.console.kit.readonly import ReadOnlyAdminMixin
from gateway.core.errors import GatewayError
from gateway.platform.models import Merchant
from webhooks import services
from webhooks.models import WebhookDelivery, WebhookDeliveryAttempt, WebhookEvent
from webhooks.payloads import event_types

CHANGE_PERMISSION = roles.RESEND_WEBHOOK


class EventTypeFilter(admin.SimpleListFilter):
    """The event types the gateway sends, as the apps registered them (webhooks.payloads), not
    a DISTINCT over the table."""

    title = "type"
    parameter_name = "event_type"

    def __init__(self, request, params, model, model_admin):
        self.lookup_path = "event__event_type" if model is WebhookDelivery else "event_type"
        super().__init__(request, params, model, model_admin)

    def lookups(self, request, model_admin):
        return [(name, name) for name in event_types()]

    def queryset(self, request, queryset):
        return queryset.filter(**{self.lookup_path: self.value()}) if self.value() else queryset


class AttemptInline(ReadOnlyAdminMixin, admin.TabularInline):
    model = WebhookDeliveryAttempt
    extra = 0
    can_delete = False
    ordering = ("-number",)
    fields = ("number", "outcome", "started_at", "duration_ms", "http_status", "error",
              "response_snippet", "signature_header", "signed_string", "url")
    readonly_fields = ("signed_string",)

    @admin.display(description="signed string (bytes, SHA-256)")
    def signed_string(self, obj):
        facts = obj.signed_string_facts(obj.delivery.event.body_bytes)
        if not facts:
            return "-"
        return format_html("{} bytes<br><code>{}</code>", facts["length"], facts["sha256"])


class DeliveryInline(ReadOnlyAdminMixin, admin.TabularInline):
    model = WebhookDelivery
    extra = 0
    can_delete = False
    show_change_link = True
    fields = ("status", "attempts", "next_attempt_at", "delivered_at", "created_at")


# Status colours of the console's lists (payments/admin.py has the payments' own).
STATUS_COLOURS = {
    WebhookDelivery.Status.DELIVERED: "#2e7d32", WebhookDelivery.Status.FAILED: "#ef6c00",
    WebhookDelivery.Status.DEAD: "#c62828", WebhookDelivery.Status.PENDING: "#1565c0",
}


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(FastListMixin, ReadOnlyAdminMixin, admin.ModelAdmin):
    # Chosen for a 1,366-pixel screen (docs/console.md): the delivery's status and answer, the
    # event and the time stay in view; the event id sits under its type.
    list_display = ("id", "event_summary", "subject_id", "merchant_code", "status_display", "answer",
                    "next_attempt_time", "created_time")
    list_filter = ("status", EventTypeFilter, ("merchant", admin.RelatedFieldListFilter),
                   ("created_at", DayRangeFilter))
    search_fields = ("event__id__exact", "event__subject_id__exact", "merchant__code__exact")
    search_help_text = "An exact event id (evt_…), sabpaisaTxnId or refundId, or merchant code."
    list_select_related = ("event", "merchant")
    # Newest first by id, which follows creation: the table has no index on created_at alone.
    ordering = ("-id",)
    sortable_by = ()
    actions = ["resend_now"]
    inlines = [AttemptInline]
    change_form_template = "admin/webhooks/webhookdelivery/change_form.html"
    change_list_template = "admin/webhooks/webhookdelivery/change_list.html"
    fieldsets = (
        (None, {"fields": ("event_id_link", "event_type", "merchant", "subject_log", "status", "attempts",
                           "cycle_attempts", "next_attempt_at", "last_attempt_at", "delivered_at",
                           "created_at")}),
        ("Signature explainer", {"fields": ("signature_explainer",)}),
        ("Body sent (exact bytes)", {"fields": ("body",)}),
    )
    readonly_fields = ("event_id_link", "event_type", "subject_log", "signature_explainer", "body",
                       "last_http_status")

    def has_change_permission(self, request, obj=None):
        # Not to edit a delivery (every field is read-only): "Resend now" is a change action,
        # for the roles holding it.
        return request.user.has_perm(CHANGE_PERMISSION)

    def lookup_allowed(self, lookup, value, request=None):
        # The per-payment log: ?event__subject_id=<sabpaisaTxnId or refundId>.
        if lookup in ("event__subject_id", "event__id", "merchant__code"):
            return True
        return super().lookup_allowed(lookup, value, request)

    def get_queryset(self, request):
        # The last attempt's answer, in the same query as the list (not one query per row).
        last = WebhookDeliveryAttempt.objects.filter(delivery=OuterRef("pk")).order_by("-number")
        return super().get_queryset(request).select_related("event", "merchant").annotate(
            last_http_status_value=Subquery(last.values("http_status")[:1]),
            last_outcome_value=Subquery(last.values("outcome")[:1]))

    # columns -------------------------------------------------------------------------------
    @admin.display(description="event", ordering="event__id")
    def event_id_link(self, obj):
        return format_html('<a href="{}">{}</a>',
                           # quote(): the admin unquotes "_23" in "evt_23..." to "#"; 6 in 256 ids broke.
                           reverse("admin:webhooks_webhookevent_change", args=[quote(obj.event_id)]), obj.event_id)

    @admin.display(description="type", ordering="event__event_type")
    def event_type(self, obj):
        return obj.event.event_type

    @admin.display(description="subject", ordering="event__subject_id")
    def subject_id(self, obj):
        return obj.event.subject_id or "-"

    @admin.display(description="event", ordering="event__event_type")
    def event_summary(self, obj):
        return format_html('{}<br><a class="console-muted" href="{}">{}</a>', obj.event.event_type,
                           reverse("admin:webhooks_webhookevent_change", args=[obj.event_id]), obj.event_id)

    @admin.display(description="merchant", ordering="merchant__code")
    def merchant_code(self, obj):
        return obj.merchant.code

    @admin.display(description="status", ordering="status")
    def status_display(self, obj):
        colour = STATUS_COLOURS.get(obj.status, "inherit")
        return format_html('<strong style="color:{}" data-status="{}">{}</strong>', colour, obj.status,
                           obj.get_status_display())

    @admin.display(description="attempts · last answer")
    def answer(self, obj):
        return f"{obj.attempts} · {self.last_http_status(obj)}"

    @admin.display(description="next attempt (IST)")
    def next_attempt_time(self, obj):
        if obj.status not in WebhookDelivery.DUE_STATUSES:
            return "—"
        return format_html('<span class="nowrap">{}</span>', short_time(obj.next_attempt_at))

    @admin.display(description="created (IST)")
    def created_time(self, obj):
        return format_html('<span class="nowrap">{}</span>', short_time(obj.created_at))

    @admin.display(description="last HTTP status")
    def last_http_status(self, obj):
        if not getattr(obj, "last_outcome_value", None):
            return "-"
        return obj.last_http_status_value or obj.last_outcome_value

    @admin.display(description="logs")
    def subject_log(self, obj):
        url = reverse("admin:webhooks_webhookdelivery_changelist")
        links = [(f"{url}?merchant__id__exact={obj.merchant_id}", f"all deliveries of {obj.merchant.code}")]
        if obj.event.subject_id:
            links.append((f"{url}?event__subject_id={obj.event.subject_id}",
                          f"all deliveries for {obj.event.subject_id}"))
        return format_html_join(" · ", '<a href="{}">{}</a>', links)

    @admin.display(description="body")
    def body(self, obj):
        return format_html("<pre style='white-space:pre-wrap'>{}</pre>", obj.event.body)

    @admin.display(description="signature")
    def signature_explainer(self, obj):
        body = obj.event.body_bytes
        attempt = obj.attempt_rows.exclude(signature_header="").order_by("-number").first()
        if attempt is None:
            return "Not attempted yet: nothing has been signed."
        facts = attempt.signed_string_facts(body)
        rows = [
            ("Attempt", f"#{attempt.number} at {attempt.started_at:%Y-%m-%d %H:%M:%S %Z}"),
            ("Header sent", f"X-Service-Signature: {attempt.signature_header}"),
            ("Event id header", f"X-Service-Event-Id: {obj.event_id}"),
            ("Timestamp (ms)", facts["timestamp_ms"]),
            ("Signed string", f'"{facts["timestamp_ms"]}" + "." + the {len(body)} bytes of the body below'),
            ("Signed string length", f"{facts['length']} bytes"),
            ("SHA-256 of the signed string", facts["sha256"]),
            ("SHA-256 of the body alone", hashlib.sha256(body).hexdigest()),
        ]
        table = format_html_join("", "<tr><th style='text-align:left'>{}</th><td><code>{}</code></td></tr>", rows)
        advice = (
            "Ask the merchant to log the length and SHA-256 of the string they feed into HMAC. "
            "Different hash: they are not signing the raw body (JSON parsed and re-serialised, "
            "whitespace or encoding changed) or not prefixing the timestamp and a period. "
            "Same hash, different signature: wrong webhook secret (rotated, or the other "
            "environment's), or the digest encoded as hex instead of base64. Just after a rotation, "
            "a receiver still holding the previous secret must check X-Service-Signature-Previous, "
            "sent during the grace period the merchant's page shows. "
            "Rejected as stale: their clock differs from ours by more than 300000 ms."
        )
        return format_html("<table>{}</table><p>{}</p>", table, advice)

    # actions -------------------------------------------------------------------------------
    @admin.action(description="Resend now (fresh retry cycle, same event id)", permissions=["change"])
    def resend_now(self, request, queryset):
        done, refused = 0, []
        for delivery in queryset:
            try:
                services.delivery_resend(delivery=delivery, actor=request.user)
                done += 1
            except GatewayError as exc:
                refused.append(f"{delivery.pk}: {exc.message}")
        if done:
            messages.success(request, f"{done} deliver{'y' if done == 1 else 'ies'} queued to send now.")
        for line in refused:
            messages.warning(request, f"Not resent: delivery {line}")

    def get_urls(self):
        return [
            path("<int:delivery_id>/resend/", self.admin_site.admin_view(self.resend_view),
                 name="webhooks_webhookdelivery_resend"),
            path("send-test/", self.admin_site.admin_view(self.send_test_view),
                 name="webhooks_webhookdelivery_send_test"),
        ] + super().get_urls()

    def change_view(self, request, object_id, form_url="", extra_context=None):
        extra_context = {**(extra_context or {}), "show_save": False, "show_save_and_continue": False,
                         "show_save_and_add_another": False, "show_delete": False,
                         "can_resend": request.user.has_perm(CHANGE_PERMISSION)}
        return super().change_view(request, object_id, form_url, extra_context)

    def resend_view(self, request, delivery_id):
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        roles.permission_require(request.user, CHANGE_PERMISSION, "Resending a webhook")
        delivery = get_object_or_404(WebhookDelivery, pk=delivery_id)
        try:
            services.delivery_resend(delivery=delivery, actor=request.user)
        except GatewayError as exc:
            messages.warning(request, f"Not resent: {exc.message}")
        else:
            messages.success(request, f"Delivery {delivery.pk} of {delivery.event_id} queued to send now.")
        return redirect("admin:webhooks_webhookdelivery_change", delivery.pk)

    def send_test_view(self, request):
        roles.permission_require(request.user, CHANGE_PERMISSION, "Sending a test event")
        form = SendTestForm(request.POST or None, initial={"merchant": request.GET.get("merchant")})
        if request.method == "POST" and form.is_valid():
            try:
                delivery = services.webhook_test_send(merchant=form.cleaned_data["merchant"], actor=request.user)
            except GatewayError as exc:
                form.add_error("merchant", exc.message)
            else:
                messages.success(request, f"Test event {delivery.event_id} queued: a worker sends it to "
                                          f"{delivery.address} within seconds. Its answer appears "
                                          f"under Attempts on this page; reload it.")
                return redirect("admin:webhooks_webhookdelivery_change", delivery.pk)
        context = {**self.admin_site.each_context(request), "title": "Send a test event", "form": form,
                   "opts": self.model._meta}
        return TemplateResponse(request, "admin/webhooks/webhookdelivery/send_test.html", context)


class SendTestForm(forms.Form):
    merchant = forms.ModelChoiceField(
        queryset=Merchant.objects.exclude(webhook_url="").order_by("code"),
        help_text="A webhook.test event is signed with the merchant's webhook secret and queued; a worker "
                  "sends it to their address once (no retries). The next page is its delivery, where the "
                  "answer appears.")


@admin.register(WebhookEvent)
class WebhookEventAdmin(FastListMixin, ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ("id", "event_type", "subject_id", "merchant", "created_at")
    list_filter = (EventTypeFilter, ("merchant", admin.RelatedFieldListFilter), ("created_at", DayRangeFilter))
    search_fields = ("id__exact", "subject_id__exact", "merchant__code__exact")
    search_help_text = "An exact event id (evt_…), sabpaisaTxnId or refundId, or merchant code."
    list_select_related = ("merchant",)
    ordering = ("-created_at",)
    sortable_by = ("created_at",)
    inlines = [DeliveryInline]
    fields = ("id", "event_type", "merchant", "subject_id", "created_at", "body_sent")
    readonly_fields = ("body_sent",)

    @admin.display(description="body sent (exact bytes)")
    def body_sent(self, obj):
        return format_html("<pre style='white-space:pre-wrap'>{}</pre>", obj.body)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        extra_context = {**(extra_context or {}), "show_save": False, "show_save_and_continue": False,
                         "show_save_and_add_another": False, "show_delete": False}
        return super().change_view(request, object_id, form_url, extra_context)
