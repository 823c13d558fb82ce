"""Hosted checkout: the session the merchant creates and what the customer does on the page.

Status changes go through payments.services.transitions only. The acquirer is never called
with a row lock held: each method first moves the payment to PROCESSING (its own committed
transaction, which also stops a second submission of the same session), then calls the
acquirer, then records the answer with another transition. Finishing a method (OTP, bank page,
funds arriving) claims its one acquirer call in the database first; an acquirer that does not
answer that call leaves the payment PROCESSING, since only a definite decline is a failure.

UPI on the page is payments.services.upi (shared with S2S); this module covers the session,
cards, net banking, wallets, bank transfers (NEFT, RTGS, cash challan) and the return redirect.

The package, by what the customer is doing: `session` (opening it, its deadline, leaving the
page), `steps` (the one claimed acquirer call of each money-moving step, and what its answer
means), `pages` (the acquirer's own pages: sending the customer there, confirming the
return), `customer` (the mobile number an acquirer requires, asked on the page), `cards`, and `banks` (net banking, wallets, bank transfers). Callers import from here.
"""
from payments.services.hosted.banks import (
    BANK_MODES,
    TRANSFER_MODES,
    TRANSFER_VALIDITY,
    hosted_bank_complete,
    hosted_bank_open,
    hosted_bank_start,
    hosted_transfer_received,
    hosted_transfer_start,
    new_transfer_reference,
    transfer_details,
)
from payments.services.hosted.cards import (
    card_fields_in_use,
    hosted_card_fields_open,
    hosted_card_pay,
    hosted_card_start,
    hosted_card_verify_otp,
    hosted_saved_card_pay,
)
from payments.services.hosted.customer import (
    customer_phone_needed,
    hosted_customer_phone_set,
    indian_mobile,
    mobile_digits,
)
from payments.services.hosted.pages import Started, acquirer_page_open, hosted_acquirer_return, hosted_customer_return
from payments.services.hosted.session import (
    HostedSession,
    checkout_url,
    client_secret_hash,
    hosted_cancel,
    hosted_expire_if_due,
    hosted_payment_create,
    hosted_redirect,
    hosted_return_url,
    return_params,
)
from payments.services.hosted.steps import acquirer_call_release, step_answer_apply

__all__ = [
    "BANK_MODES", "TRANSFER_MODES", "TRANSFER_VALIDITY", "HostedSession", "Started",
    "acquirer_call_release", "acquirer_page_open", "card_fields_in_use", "checkout_url", "client_secret_hash",
    "customer_phone_needed", "hosted_acquirer_return", "hosted_card_fields_open", "hosted_customer_phone_set",
    "hosted_customer_return", "indian_mobile", "mobile_digits",
    "hosted_bank_complete", "hosted_bank_open", "hosted_bank_start",
    "hosted_cancel", "hosted_card_pay", "hosted_card_start", "hosted_card_verify_otp", "hosted_expire_if_due",
    "hosted_payment_create",
    "hosted_redirect", "hosted_return_url", "hosted_saved_card_pay", "hosted_transfer_received",
    "hosted_transfer_start", "new_transfer_reference", "return_params", "step_answer_apply", "transfer_details",
]
