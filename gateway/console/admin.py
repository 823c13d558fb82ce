"""The console for merchants and their keys, the audit log, and staff accounts.

Every change to a merchant goes through gateway.platform.services, which writes the audit record.
No page shows a credential: onboarding and rotations are requests that a second administrator
approves, and the merchant claims the credentials with the two codes the two administrators
were handed (gateway.platform.claims, docs/security.md). Asking and approving need
gateway.change_merchant (the administrators role, gateway/platform/roles.py). Changes to staff
accounts and groups (who holds which role) are audited too, never with a password.
"""
from django import forms
from django.contrib import admin, messages
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.models import Group, User
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html

from gateway.platform import brand as brand_rules
from gateway.platform import claims, methods, roles, services
from gateway.console.kit.lists import DayRangeFilter, FastListMixin
from gateway.console.kit.readonly import ReadOnlyAdminMixin
from gateway.core.errors import GatewayError
from gateway.platform.models import ApiKey, AuditRecord, CredentialClaim, Merchant, MerchantBrand
from gateway.core.money import rupees_str
from gateway.core.urlcheck import validate_webhook_url

CREDENTIAL_KINDS = {"api-key": "API key", "secret-key": "secret key", "webhook-secret": "webhook secret"}


def _method_field_name(code: str, part: str) -> str:
    return f"method_{code}_{part}"


def _method_fields() -> dict:
    """Three fields per checkout method: switched off, minimum and maximum (paise). "Switched
    off" rather than "offered", so that a form posted without them (an older page, a script)
    leaves every method offered within its limits rather than switching them all off."""
    fields = {}
    for code in methods.CODES:
        rule = methods.RULES[code]
        fields[_method_field_name(code, "off")] = forms.BooleanField(
            required=False, label=f"{methods.LABELS[code]}: not offered")
        fields[_method_field_name(code, "min")] = forms.IntegerField(
            required=False, min_value=rule.floor, max_value=rule.ceiling, label="from (paise)",
            help_text=f"at least {rule.floor} (₹{rupees_str(rule.floor)})")
        fields[_method_field_name(code, "max")] = forms.IntegerField(
            required=False, min_value=rule.floor, max_value=rule.ceiling, label="to (paise)",
            help_text=f"at most {rule.ceiling} (₹{rupees_str(rule.ceiling)})")
    return fields


METHOD_FIELDSETS = [(methods.LABELS[code], tuple(_method_field_name(code, part) for part in ("off", "min", "max")))
                    for code in methods.CODES]
BRAND_FIELDS = ("display_name", "accent_color", "logo", "remove_logo")

BrandAndMethodFields = type("BrandAndMethodFields", (forms.Form,), {
    **_method_fields(),
    "display_name": forms.CharField(required=False, max_length=brand_rules.DISPLAY_NAME_MAX,
                                    help_text="The name the checkout shows. Empty: the merchant's name."),
    "accent_color": forms.CharField(required=False, max_length=7, label="Accent colour",
                                    help_text="#rrggbb, dark enough for white text on it (WCAG AA, 4.5:1). "
                                              "Empty: the checkout's blue."),
    "logo": forms.FileField(required=False, help_text=f"PNG, JPEG or WebP, at most {brand_rules.LOGO_MAX_BYTES // 1024} "
                                                      "KB. Shown in the checkout's header."),
    "remove_logo": forms.BooleanField(required=False),
})


class MerchantForm(BrandAndMethodFields, forms.ModelForm):
    """The merchant fields staff edit, checked as the services check them, so a bad value is a
    form error rather than a failed save. On an existing merchant also its brand and its
    payment methods (gateway.platform.brand, gateway.platform.methods), which `brand_change` and
    `payment_methods` hand to services.merchant_update."""

    class Meta:
        model = Merchant
        fields = ["code", "name", "is_active", "signed_requests_required", "s2s_enabled", "webhook_url",
                  "rate_limit", "upi_collect"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk is None:
            return
        for limit in methods.method_limits(self.instance.payment_methods):
            for part, value in (("off", not limit.enabled), ("min", limit.min), ("max", limit.max)):
                self.initial.setdefault(_method_field_name(limit.code, part), value)
        brand = MerchantBrand.objects.filter(merchant_id=self.instance.pk).defer("logo_png").first()
        if brand is not None:
            self.initial.setdefault("display_name", brand.display_name)
            self.initial.setdefault("accent_color", brand.accent_color)

    def _gateway_check(self, field: str, check, *args):
        try:
            return check(*args)
        except GatewayError as exc:
            self.add_error(field, exc.message.removeprefix(f"{exc.field}: "))
            return None

    def clean_accent_color(self):
        return self._gateway_check("accent_color", brand_rules.accent_colour_clean,
                                   self.cleaned_data.get("accent_color", "")) or ""

    def clean_display_name(self):
        return self._gateway_check("display_name", brand_rules.display_name_clean,
                                   self.cleaned_data.get("display_name", "")) or ""

    def clean_logo(self):
        upload = self.cleaned_data.get("logo")
        if not upload:
            return None
        if upload.size > brand_rules.LOGO_MAX_BYTES:
            raise forms.ValidationError(f"At most {brand_rules.LOGO_MAX_BYTES // 1024} KB.")
        return self._gateway_check("logo", brand_rules.logo_clean, upload.read())

    def clean(self):
        cleaned = super().clean()
        if self.instance.pk is None:
            return cleaned
        limits = {}
        for code in methods.CODES:
            default = methods.default_limit(code)
            values = {part: cleaned.get(_method_field_name(code, part)) for part in ("off", "min", "max")}
            limits[code] = {"enabled": not values["off"],
                            "min": default.min if values["min"] is None else values["min"],
                            "max": default.max if values["max"] is None else values["max"]}
        try:
            cleaned["payment_methods"] = methods.methods_config_clean(limits)
        except GatewayError as exc:
            code, _, part = (exc.field or "").partition(".")
            field = _method_field_name(code, part) if part else None  # None: the whole form
            self.add_error(field, exc.message.removeprefix(f"{exc.field}: "))
        return cleaned

    def brand_change(self) -> services.BrandChange:
        return services.BrandChange(
            display_name=self.cleaned_data.get("display_name", ""),
            accent_color=self.cleaned_data.get("accent_color", ""),
            logo_png=self.cleaned_data.get("logo"),
            remove_logo=bool(self.cleaned_data.get("remove_logo")),
        )

    def clean_webhook_url(self):
        url = self.cleaned_data.get("webhook_url") or ""
        if url:
            try:
                validate_webhook_url(url, field="webhook_url")
            except GatewayError as exc:
                raise forms.ValidationError(exc.message) from None
        return url

    def clean_rate_limit(self):
        value = self.cleaned_data.get("rate_limit")
        if value is not None and value > services.RATE_LIMIT_MAX:
            raise forms.ValidationError(f"At most {services.RATE_LIMIT_MAX} requests per second.")
        return value


class RotateApiKeyForm(forms.Form):
    grace_hours = forms.IntegerField(
        min_value=0, max_value=24 * 30, initial=24,
        help_text="How long the current key(s) keep working, in hours (0 revokes them now).")


class RotateWebhookSecretForm(forms.Form):
    grace_hours = forms.IntegerField(
        required=False, min_value=0, max_value=services.WEBHOOK_SECRET_GRACE_MAX_SECONDS // 3600, initial=24,
        help_text="How long the current secret keeps signing a second header, X-Service-Signature-Previous, "
                  "beside the new secret's X-Service-Signature, in hours (at most 168, 7 days), so the "
                  "merchant can switch without rejecting a webhook. Empty or 0 replaces it at once.")


class ApiKeyInline(admin.TabularInline):
    model = ApiKey
    fields = ("prefix", "created_at", "expires_at", "rotated_at", "rotated_by")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Merchant)
class MerchantAdmin(admin.ModelAdmin):
    form = MerchantForm
    list_display = ("code", "name", "is_active", "signed_requests_required", "s2s_enabled", "webhook_url",
                    "rate_limit", "created_at")
    list_filter = ("is_active", "signed_requests_required", "s2s_enabled")
    search_fields = ("code", "name")
    readonly_fields = ("credential_actions", "credential_note", "credential_requests", "webhook_secret_grace",
                       "brand_preview", "created_at", "updated_at")
    inlines = [ApiKeyInline]
    show_full_result_count = False

    def get_fieldsets(self, request, obj=None):
        # Signed requests right after the merchant's identity: the setting docs/security.md recommends.
        base = ["code", "name", "is_active", "signed_requests_required", "s2s_enabled", "webhook_url", "rate_limit",
                "upi_collect"]
        if obj is None:
            return [(None, {"fields": base})]
        # Only those who may rotate see the rotate buttons.
        credentials = "credential_actions" if request.user.has_perm(roles.CHANGE_MERCHANT) else "credential_note"
        return [
            (None, {"fields": base + [credentials, "credential_requests", "webhook_secret_grace", "created_at",
                                      "updated_at"]}),
            ("Brand on the checkout", {"fields": ["brand_preview", *BRAND_FIELDS]}),
            ("Payment methods", {
                "fields": [fields for _, fields in METHOD_FIELDSETS],
                "description": "The methods the checkout offers and the amounts each takes, in paise (100 paise = "
                               "Rs 1). A session only shows the methods its amount fits, and a session no "
                               "offered method takes is refused. Limits outside the banking rules are refused "
                               "(docs/decisions.md).",
            }),
        ]

    def get_readonly_fields(self, request, obj=None):
        return ("code", *self.readonly_fields) if obj else ()

    @admin.display(description="logo now")
    def brand_preview(self, obj):
        brand = MerchantBrand.objects.filter(merchant_id=obj.pk).defer("logo_png").first()
        if brand is None or not brand.logo_sha256:
            return "No logo: the checkout shows the display name alone."
        return format_html('<img src="{}" alt="{} logo" height="40">',
                           reverse("checkout:brand-logo", args=[obj.code, brand.logo_sha256[:16]]), obj.code)

    @admin.display(description="previous webhook secret")
    def webhook_secret_grace(self, obj):
        expires = obj.previous_webhook_secret_expires_at
        if not obj.previous_webhook_secret_encrypted or not expires or expires <= timezone.now():
            return "None: webhooks are signed with the current secret only."
        return format_html("Still signs <code>X-Service-Signature-Previous</code> until {} (rotation grace).",
                           timezone.localtime(expires).strftime("%Y-%m-%d %H:%M %Z"))

    @admin.display(description="credentials")
    def credential_note(self, obj):
        return "Rotating a key or secret needs the administrators role."

    @admin.display(description="credential requests")
    def credential_requests(self, obj):
        pending = claims.pending_claims(obj)
        if not pending:
            return "None waiting."
        rows = []
        for claim in pending:
            requester = claim.requested_by.get_username() if claim.requested_by else "?"
            if claim.purpose == CredentialClaim.Purpose.SIGNED_REQUESTS_OFF:
                rows.append(format_html(
                    '{}: asked by {}, waiting for a second administrator. <a class="button" href="{}">Review and '
                    'approve</a>', claim.get_purpose_display().capitalize(), requester,
                    reverse("admin:gateway_merchant_claim_approve", args=[obj.pk, claim.claim_id])))
            elif claim.approved_at:
                rows.append(format_html("{}: asked by {}, approved by {}; the merchant may claim it until {}.",
                                        claim.get_purpose_display(), requester, claim.approved_by.get_username(),
                                        timezone.localtime(claim.expires_at).strftime("%Y-%m-%d %H:%M %Z")))
            else:
                rows.append(format_html(
                    '{}: asked by {}, waiting for a second administrator. <a class="button" href="{}">Review and '
                    'approve</a>', claim.get_purpose_display(), requester,
                    reverse("admin:gateway_merchant_claim_approve", args=[obj.pk, claim.claim_id])))
        return format_html("<br>".join("{}" for _ in rows), *rows)

    @admin.display(description="credentials")
    def credential_actions(self, obj):
        links = [
            (reverse("admin:gateway_merchant_rotate", args=[obj.pk, kind]), label)
            for kind, label in (("api-key", "Ask to rotate API key"), ("secret-key", "Ask to rotate secret key"),
                                ("webhook-secret", "Ask to rotate webhook secret"))
        ]
        return format_html(" · ".join('<a class="button" href="{}">{}</a>' for _ in links),
                           *[part for link in links for part in link])

    def has_delete_permission(self, request, obj=None):
        # Payments, refunds and the audit log hang off a merchant; deactivate it instead.
        return False

    def save_model(self, request, obj, form, change):
        if not change:
            # Creation goes through the service so that credentials are made and shown once.
            credentials = services.merchant_create(
                code=obj.code, name=obj.name, webhook_url=obj.webhook_url, s2s_enabled=obj.s2s_enabled,
                rate_limit=obj.rate_limit, actor=request.user)
            obj.pk = Merchant.objects.get(code=obj.code).pk
            request._new_credentials = credentials
            return
        before = services.merchant_snapshot(Merchant.objects.get(pk=obj.pk))
        if before["signed_requests_required"] and not obj.signed_requests_required:
            # Turning off what keeps a key alone from moving money waits for a second administrator.
            obj.signed_requests_required = True
            claims.signed_requests_off_request(merchant=obj, actor=request.user)
            messages.warning(request, "Signed requests stay required until a second administrator approves "
                                      "turning them off (under credential requests on this page).")
        obj.payment_methods = form.cleaned_data.get("payment_methods", obj.payment_methods)
        services.merchant_update(merchant=obj, actor=request.user, before=before, brand=form.brand_change())

    def response_add(self, request, obj, post_url_continue=None):
        credentials = getattr(request, "_new_credentials", None)
        if credentials:
            # Never shown here: they wait for a second administrator and the merchant's claim.
            handed = claims.credential_claim_request(merchant=obj, purpose=CredentialClaim.Purpose.ONBOARDING,
                                                     actor=request.user, values=credentials.as_dict())
            return self._code_page(request, obj, handed, first=True)
        return super().response_add(request, obj, post_url_continue)

    def get_urls(self):
        return [
            path("<int:merchant_id>/rotate/<str:kind>/", self.admin_site.admin_view(self.rotate_view),
                 name="gateway_merchant_rotate"),
            path("<int:merchant_id>/credentials/<str:claim_id>/approve/",
                 self.admin_site.admin_view(self.approve_view), name="gateway_merchant_claim_approve"),
        ] + super().get_urls()

    def _code_page(self, request, merchant, handed: claims.CodeHandedOut, *, first: bool):
        """The one page that shows a code: to the administrator it is for, once."""
        context = {**self.admin_site.each_context(request), "title": f"{handed.claim.get_purpose_display()}: "
                   + ("requested" if first else "approved"), "merchant": merchant, "handed": handed,
                   "first": first, "opts": self.model._meta}
        response = TemplateResponse(request, "admin/gateway/merchant/code_handed_out.html", context)
        response["Cache-Control"] = "no-store"
        return response

    def approve_view(self, request, merchant_id, claim_id):
        roles.permission_require(request.user, roles.CHANGE_MERCHANT, "Approving credentials")
        merchant = get_object_or_404(Merchant, pk=merchant_id)
        claim = get_object_or_404(CredentialClaim.objects.select_related("requested_by"), merchant=merchant,
                                  claim_id=claim_id)
        refusal = claims.approver_refusal(claim, request.user)
        if request.method == "POST" and refusal is None:
            try:
                handed = claims.credential_claim_approve(claim_id=claim.claim_id, actor=request.user)
            except GatewayError as exc:
                refusal = exc.message
            else:
                if claim.purpose == CredentialClaim.Purpose.SIGNED_REQUESTS_OFF:
                    messages.success(request, f"Signed requests are no longer required for {merchant.code}.")
                    return redirect(reverse("admin:gateway_merchant_change", args=[merchant.pk]))
                return self._code_page(request, merchant, handed, first=False)
        context = {**self.admin_site.each_context(request), "title": f"Approve: {claim.get_purpose_display()}",
                   "merchant": merchant, "claim": claim, "refusal": refusal, "opts": self.model._meta}
        return TemplateResponse(request, "admin/gateway/merchant/approve.html", context,
                                status=403 if refusal and request.method == "POST" else 200)

    def rotate_view(self, request, merchant_id, kind):
        roles.permission_require(request.user, roles.CHANGE_MERCHANT, "Rotating a merchant's key or secret")
        if kind not in CREDENTIAL_KINDS:
            raise Http404("no such credential")
        merchant = get_object_or_404(Merchant, pk=merchant_id)
        form_class = {"api-key": RotateApiKeyForm, "webhook-secret": RotateWebhookSecretForm}.get(kind)
        # Bound on every POST: an empty one is a webhook-secret rotation with no grace.
        form = form_class(request.POST if request.method == "POST" else None) if form_class else None
        if request.method == "POST" and (form is None or form.is_valid()):
            grace_hours = (form.cleaned_data.get("grace_hours") or 0) if form is not None else 0
            # A request: nothing rotates, and nobody sees a credential, until a second
            # administrator approves and the merchant claims (gateway.platform.claims).
            handed = claims.credential_claim_request(merchant=merchant, purpose=kind, actor=request.user,
                                                     grace_seconds=grace_hours * 3600)
            return self._code_page(request, merchant, handed, first=True)
        context = {**self.admin_site.each_context(request), "title": f"Rotate {CREDENTIAL_KINDS[kind]}",
                   "merchant": merchant, "form": form, "kind": kind, "opts": self.model._meta}
        return TemplateResponse(request, "admin/gateway/merchant/rotate.html", context)


class AuditActionFilter(admin.SimpleListFilter):
    """The actions the console and the services record (a fixed list: a DISTINCT over the
    whole audit table would read every row)."""

    title = "action"
    parameter_name = "action"
    ACTIONS = (
        "merchant.create", "merchant.update", "merchant.rotate_api_key", "merchant.rotate_secret_key",
        "merchant.credentials_request", "merchant.credentials_approve", "merchant.credentials_claim",
        "merchant.credentials_claim_refused",
        "merchant.rotate_webhook_secret", "merchant.reencrypt_secrets", "refund.initiate", "refund.initiate_refused", "refund.review_release",
        "webhook.resend", "webhook.test_send", "token.delete", "settlement.export",
        "payment_link.create", "payment_link.cancel", "payment_link.customer_cancel",
        "staff_user.create", "staff_user.update", "staff_user.delete", "staff_user.unlock",
        "staff_group.create", "staff_group.update", "staff_group.delete",
    )

    def lookups(self, request, model_admin):
        return [(action, action) for action in self.ACTIONS]

    def queryset(self, request, queryset):
        return queryset.filter(action=self.value()) if self.value() else queryset


@admin.register(AuditRecord)
class AuditRecordAdmin(FastListMixin, ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ("created_at", "actor_name", "action", "object_type", "object_id", "merchant")
    list_filter = (AuditActionFilter, ("merchant", admin.RelatedFieldListFilter), ("created_at", DayRangeFilter))
    search_fields = ("actor_name__exact", "object_id__exact", "merchant__code__exact", "action__exact")
    search_help_text = "An exact staff user name, object id, merchant code or action."
    readonly_fields = [f.name for f in AuditRecord._meta.fields]
    list_select_related = ("merchant",)
    sortable_by = ("created_at",)


class AuditedAccountMixin:
    """Staff accounts and groups decide who may refund, export or rotate keys: every change to
    them, made in the console, is audited with before and after (never a password)."""

    audit_name = ""

    def audit_snapshot(self, obj) -> dict:
        raise NotImplementedError

    def save_model(self, request, obj, form, change):
        if change:
            request._audit_before = self.audit_snapshot(type(obj).objects.get(pk=obj.pk))
        super().save_model(request, obj, form, change)

    def log_addition(self, request, obj, message):
        services.audit_record(actor=request.user, action=f"{self.audit_name}.create", obj=obj,
                              after=self.audit_snapshot(obj))
        return super().log_addition(request, obj, message)

    def log_change(self, request, obj, message):
        after = {**self.audit_snapshot(type(obj).objects.get(pk=obj.pk)), "change": message}
        services.audit_record(actor=request.user, action=f"{self.audit_name}.update", obj=obj,
                              before=getattr(request, "_audit_before", None), after=after)
        return super().log_change(request, obj, message)

    def log_deletions(self, request, queryset):
        for obj in queryset:
            services.audit_record(actor=request.user, action=f"{self.audit_name}.delete", obj=obj,
                                  before=self.audit_snapshot(obj))
        return super().log_deletions(request, queryset)


def _permission_names(permissions) -> list[str]:
    return sorted(f"{p.content_type.app_label}.{p.codename}" for p in permissions.select_related("content_type"))


class AuditedUserAdmin(AuditedAccountMixin, UserAdmin):
    audit_name = "staff_user"
    actions = ["release_sign_in_locks"]

    @admin.action(description="Release the sign-in locks of the selected accounts")
    def release_sign_in_locks(self, request, queryset):
        # Whoever manages staff accounts (superusers: auth.change_user) lets a locked-out colleague
        # back in at once, from any address, instead of waiting out the lock (docs/console.md).
        roles.permission_require(request.user, "auth.change_user", "Releasing a sign-in lock")
        from gateway.platform.signin import sign_in_locks_release

        released = [user.get_username() for user in queryset if sign_in_locks_release(user=user, actor=request.user)
                    is not None]
        self.message_user(request, f"Sign-in locks released for {', '.join(released)}.")

    def audit_snapshot(self, obj) -> dict:
        return {"username": obj.username, "is_active": obj.is_active, "is_staff": obj.is_staff,
                "is_superuser": obj.is_superuser, "groups": sorted(obj.groups.values_list("name", flat=True)),
                "user_permissions": _permission_names(obj.user_permissions.all())}


class AuditedGroupAdmin(AuditedAccountMixin, GroupAdmin):
    audit_name = "staff_group"

    def audit_snapshot(self, obj) -> dict:
        return {"name": obj.name, "permissions": _permission_names(obj.permissions.all())}


for _model, _admin in ((User, AuditedUserAdmin), (Group, AuditedGroupAdmin)):
    if admin.site.is_registered(_model):
        admin.site.unregister(_model)
    admin.site.register(_model, _admin)

# Sign-in machinery stays out of the console's pages: axes' attempt records (usernames, addresses)
# are no business of support, and authenticators are enrolled from the command line
# (console_totp_enrol); locked usernames are released with axes' `manage.py axes_reset_username`.
# Every sign-in, failure and lock-out is in the audit log (gateway.platform.signin) for everyone to read.
def _console_hides_sign_in_models() -> None:
    from axes.models import AccessAttempt, AccessFailureLog, AccessLog
    from django_otp.plugins.otp_totp.models import TOTPDevice

    for model in (AccessAttempt, AccessFailureLog, AccessLog, TOTPDevice):
        if admin.site.is_registered(model):
            admin.site.unregister(model)


_console_hides_sign_in_models()

admin.site.site_header = "Payment gateway console"
admin.site.site_title = "Gateway console"
# The app list beside every page took 300 of a 1,366-pixel screen's width from the lists; the
# front page and the breadcrumbs already lead everywhere (docs/console.md).
admin.site.enable_nav_sidebar = False
