"""The checkout's forms. Input names are the automation hooks CONTRACT.md lists (vpa,
card_number, card_expiry, card_cvv, otp, bank, wallet, save_card), so templates write the
inputs by hand and never re-render a submitted value: a card number or CVV appears in no page
after it is submitted, not even beside a validation error."""
from __future__ import annotations

import re

from django import forms
from django.utils.translation import gettext_lazy as _
from django.views.decorators.debug import sensitive_variables

from payments.acquirer import get_acquirer
from payments.cards import CardInput, detect_network, digits_only, luhn_valid, parse_expiry
from payments.services.hosted import TRANSFER_MODES, customer_phone_needed, indian_mobile

# parse_expiry's reasons, as the customer reads them.
EXPIRY_ERRORS = {
    "expiry must be MM/YY": _("Enter the expiry as MM/YY."),
    "expiry month must be 01 to 12": _("The expiry month must be 01 to 12."),
    "the card has expired": _("The card has expired."),
}

VPA = re.compile(r"[A-Za-z0-9.\-_]{2,256}@[A-Za-z][A-Za-z0-9.\-]{1,63}")


class CustomerPhoneForm(forms.Form):
    """The customer's mobile number, asked beside every method's own form when the acquirer
    requires one and the payment has none (customer_phone_needed); otherwise it asks nothing
    and is always valid, whatever was posted."""

    customer_phone = forms.CharField(max_length=20, error_messages={
        "required": _("Enter your 10-digit mobile number."),
        "max_length": _("Enter a 10-digit Indian mobile number, like 98765 43210."),
    })

    def __init__(self, data, *, payment):
        super().__init__(data)
        self.needed = customer_phone_needed(payment)
        if not self.needed:
            del self.fields["customer_phone"]

    def clean_customer_phone(self):
        number = indian_mobile(self.cleaned_data["customer_phone"])
        if not number:
            raise forms.ValidationError(_("Enter a 10-digit Indian mobile number, like 98765 43210."))
        return number


class UpiForm(forms.Form):
    vpa = forms.CharField(max_length=320, error_messages={"required": _("Enter your UPI ID.")})

    def clean_vpa(self):
        value = self.cleaned_data["vpa"].strip()
        if not VPA.fullmatch(value):
            raise forms.ValidationError(_("Enter a UPI ID like name@bank."))
        return value


class CardForm(forms.Form):
    card_number = forms.CharField(max_length=30, error_messages={"required": _("Enter the card number.")})
    card_expiry = forms.CharField(max_length=10, error_messages={"required": _("Enter the expiry date (MM/YY).")})
    card_cvv = forms.CharField(max_length=4, error_messages={"required": _("Enter the CVV.")})
    # Consent to save the card (tokenisation beta, staging only; tokens.services).
    save_card = forms.BooleanField(required=False)

    @sensitive_variables("number")
    def clean_card_number(self):
        number = digits_only(self.cleaned_data["card_number"])
        if not luhn_valid(number):
            raise forms.ValidationError(_("This card number is not valid. Check it and try again."))
        if detect_network(number) == "UNKNOWN":
            raise forms.ValidationError(_("This card network is not accepted."))
        return number

    def clean_card_expiry(self):
        try:
            return parse_expiry(self.cleaned_data["card_expiry"])
        except ValueError as exc:
            raise forms.ValidationError(EXPIRY_ERRORS.get(str(exc), _("Enter the expiry as MM/YY."))) from None

    def clean_card_cvv(self):
        cvv = self.cleaned_data["card_cvv"].strip()
        if not re.fullmatch(r"\d{3,4}", cvv):
            raise forms.ValidationError(_("The CVV is the 3 digits on the back of the card."))
        return cvv

    @sensitive_variables("number", "cvv")
    def clean(self):
        data = super().clean()
        number, expiry, cvv = data.get("card_number"), data.get("card_expiry"), data.get("card_cvv")
        if number and cvv:
            wanted = 4 if detect_network(number) == "AMEX" else 3
            if len(cvv) != wanted:
                self.add_error("card_cvv", _("The CVV of this card has %(count)d digits.") % {"count": wanted})
                return data
        if number and expiry and cvv:
            data["card"] = CardInput(number=number, expiry_month=expiry[0], expiry_year=expiry[1], cvv=cvv)
        return data


class SavedCardForm(forms.Form):
    """The saved card of a session created with tokenId: only its CVV is asked."""

    card_cvv = forms.CharField(max_length=4, error_messages={"required": _("Enter the CVV.")})

    def __init__(self, *args, network: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.network = network

    def clean_card_cvv(self):
        cvv = self.cleaned_data["card_cvv"].strip()
        wanted = 4 if self.network == "AMEX" else 3
        if not re.fullmatch(rf"\d{{{wanted}}}", cvv):
            raise forms.ValidationError(_("The CVV of this card has %(count)d digits.") % {"count": wanted})
        return cvv


class OtpForm(forms.Form):
    otp = forms.CharField(max_length=12, error_messages={"required": _("Enter the one-time password.")})

    def clean_otp(self):
        otp = self.cleaned_data["otp"].strip()
        if not re.fullmatch(r"\d{4,8}", otp):
            raise forms.ValidationError(_("The one-time password is 4 to 8 digits."))
        return otp


def _by_name(codes: dict[str, str]) -> list[tuple[str, str]]:
    return sorted(codes.items(), key=lambda item: item[1])


class _ChoiceOfCodes(forms.Form):
    """A form choosing one of `codes` (code -> name): the banks or wallets of the acquirer the
    payment's method would be carried by (payments.services.acquirer_methods.method_choices);
    without `codes`, the configured acquirer's."""

    field_name = ""

    def __init__(self, *args, codes: dict[str, str] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        if codes is not None:
            self.fields[self.field_name].choices = _by_name(codes)


class BankForm(_ChoiceOfCodes):
    # The acquirer's banks and wallets (Acquirer.banks, .wallets), read when the form is used.
    field_name = "bank"
    bank = forms.ChoiceField(choices=lambda: _by_name(get_acquirer().banks),
                             error_messages={"required": _("Choose your bank."), "invalid_choice": _("Choose your bank.")})


class WalletForm(_ChoiceOfCodes):
    field_name = "wallet"
    wallet = forms.ChoiceField(choices=lambda: _by_name(get_acquirer().wallets),
                               error_messages={"required": _("Choose a wallet."), "invalid_choice": _("Choose a wallet.")})


class TransferForm(forms.Form):
    mode = forms.ChoiceField(choices=[(mode.value, mode.label) for mode in TRANSFER_MODES])


class SandboxBankForm(forms.Form):
    decision = forms.ChoiceField(choices=[("approve", "Approve"), ("decline", "Decline")])


class SandboxTransferForm(forms.Form):
    reference = forms.CharField(max_length=40, error_messages={"required": _("Enter the payment reference.")})
