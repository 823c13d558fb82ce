"""The sandbox UPI app's two faces: a JSON endpoint for tests and an HTML form for people.

Neither needs an API key: it plays the customer's UPI app, which knows only the link. Both
check IS_PRODUCTION on every request (not when the URLs load), before anything else, so that
production answers NOT_FOUND to every method and body.
"""
from __future__ import annotations

from django.conf import settings
from django.shortcuts import render
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from gateway.core.errors import MethodNotAllowed, NotFound, ValidationError, error_response
from gateway.platform.schema import error_responses
from gateway.core.tracing import current_trace_id
from payments.acquirer.sandbox.acquirer import UPI_FAILURE_VPA, UPI_SUCCESS_VPA, UPI_TEST_VPAS, UPI_TIMEOUT_VPA
from payments.models import Payment
from payments.services.upi import upi_pay_link

VPA_HINTS = {
    UPI_SUCCESS_VPA: "approves; the payment succeeds after a few seconds",
    UPI_FAILURE_VPA: "declines at once; the payment fails",
    UPI_TIMEOUT_VPA: "never answers; the payment expires",
}


def _outcome_message(payment: Payment) -> str:
    if payment.status == Payment.Status.FAILED:
        return "Declined by the payer's bank; the payment is FAILED."
    if payment.status == Payment.Status.SUCCESS:
        return "Approved; the payment is SUCCESS."
    if payment.payer_vpa == UPI_SUCCESS_VPA:
        delay = settings.SANDBOX_UPI_SUCCESS_DELAY_SECONDS
        return f"Approved by the payer; the payment becomes SUCCESS in about {delay:g} seconds."
    return (f"Waiting for an approval that never comes; the payment expires at "
            f"{payment.expires_at.isoformat().replace('+00:00', 'Z')}.")


def _result(payment: Payment) -> dict:
    return {
        "txnId": payment.sabpaisa_txn_id,
        "paymentId": payment.payment_id,
        "merchantTxnId": payment.merchant_txn_id,
        "status": payment.status,
        "payerVpa": payment.payer_vpa,
        "message": _outcome_message(payment),
    }


class SandboxUpiPayView(APIView):
    """POST /sandbox/upi/pay {"upiUri": ..., "payerVpa": ...} -> 202, or 400 in the envelope."""

    authentication_classes = []
    permission_classes = []

    def initial(self, request, *args, **kwargs):
        # Before method dispatch, so GET in production is 404 too, not 405.
        if settings.IS_PRODUCTION:
            raise NotFound()
        super().initial(request, *args, **kwargs)

    @extend_schema(
        operation_id="sandbox_upi_pay", tags=["sandbox"], auth=[],
        request=inline_serializer("SandboxUpiPayRequest", {"upiUri": serializers.CharField(),
                                                           "payerVpa": serializers.CharField()}),
        responses={202: inline_serializer("SandboxUpiPayResponse", {
            "success": serializers.BooleanField(), "txnId": serializers.CharField(),
            "paymentId": serializers.CharField(), "merchantTxnId": serializers.CharField(),
            "status": serializers.CharField(), "payerVpa": serializers.CharField(),
            "message": serializers.CharField(), "traceId": serializers.CharField()}),
            # 404: every request in production; 429: counted per client address (no API key).
            **error_responses(400, 404, 429)},
        description="Staging only: pay a UPI link from a test VPA, as the customer's UPI app would.",
    )
    def post(self, request):
        body = request.data
        if not isinstance(body, dict):
            raise ValidationError("must be a JSON object", field="body")
        payment = upi_pay_link(upi_uri=body.get("upiUri"), payer_vpa=body.get("payerVpa"))
        return Response({"success": True, **_result(payment), "traceId": current_trace_id()}, status=202)


@csrf_exempt  # CSRF is checked in _upi_page, after the production check: production is 404 to all
def upi_page(request):
    if settings.IS_PRODUCTION:
        return error_response(NotFound())
    if request.method not in ("GET", "HEAD", "POST"):
        return error_response(MethodNotAllowed())
    return _upi_page(request)


@csrf_protect
def _upi_page(request):
    source = request.POST if request.method == "POST" else request.GET
    context = {
        "vpas": [(vpa, VPA_HINTS[vpa]) for vpa in UPI_TEST_VPAS],
        "upi_uri": source.get("upiUri", ""),
        "payer_vpa": source.get("payerVpa", UPI_SUCCESS_VPA),
    }
    status = 200
    if request.method == "POST":
        try:
            context["result"] = _result(upi_pay_link(upi_uri=context["upi_uri"], payer_vpa=context["payer_vpa"]))
            status = 202
        except ValidationError as exc:
            context["error"] = exc.message
            status = 400
    return render(request, "sandbox/upi.html", context, status=status)
