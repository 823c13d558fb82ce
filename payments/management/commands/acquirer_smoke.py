"""manage.py acquirer_smoke: one run against Cashfree's sandbox with real test credentials, before
going live (docs/going-live.md, "The smoke run")."""
from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from payments.acquirer.cashfree.acquirer import (
    NETBANKING_CODES,
    WALLET_PROVIDERS,
    client_from_settings,
    upi_intent_link,
)
from payments.acquirer.cashfree.client import PRODUCTION_BASE_URL, CashfreeClient, Customer, PayAnswer
from payments.acquirer.cashfree.errors import CashfreeError
from payments.acquirer.limits import LimitReached
from payments.cards import CardInput
from payments.models import AcquirerNotice

# Cashfree's sandbox test data (its "Test data" page): a UPI ID that approves, a Visa card.
SANDBOX_VPA = "testsuccess@gocash"
SANDBOX_CARD = CardInput(number="4111111111111111", expiry_month=12, expiry_year=2030, cvv="123")
SMOKE_AMOUNT = 100  # paise: ₹1, Cashfree's minimum


@dataclass
class Step:
    method: str
    order_id: str = ""
    cf_payment_id: str = ""
    outcome: str = "not run"
    observed: dict = field(default_factory=dict)


class Command(BaseCommand):
    help = (
        "Smoke-test the Cashfree account of the settings (CASHFREE_CLIENT_ID, CASHFREE_CLIENT_SECRET, "
        "CASHFREE_BASE_URL) once, against Cashfree's SANDBOX with real test credentials: one payment per "
        "method (UPI intent, UPI collect, card, net banking, wallet, bank transfer), each made final by "
        "Cashfree's POST /simulate; a refund of the first; a webhook received at this gateway's "
        "/acquirer/cashfree/webhooks (the address to configure in Cashfree's dashboard is printed, and the "
        "command waits for it up to --webhook-wait seconds); then a report of every field whose name or "
        "place docs/going-live.md calls a guess, with what the sandbox answered. It never runs against "
        "Cashfree's production address. Its own tests cannot reach Cashfree (no outside network): they run "
        "it against the stateful double checked against Cashfree's published description "
        "(tests/acquirer_cashfree/test_acquirer_smoke.py), so a first run against the real sandbox is the "
        "operator's.")

    def add_arguments(self, parser):
        parser.add_argument("--webhook-wait", type=float, default=300.0,
                            help="seconds to wait for Cashfree's webhook (0: do not wait)")
        parser.add_argument("--timeout", type=float, default=20.0, help="seconds each call may take")

    def handle(self, *args, webhook_wait: float, timeout: float, **options):
        if settings.CASHFREE_BASE_URL.rstrip("/") == PRODUCTION_BASE_URL or settings.IS_PRODUCTION:
            raise CommandError("acquirer_smoke runs against Cashfree's sandbox only (it moves test money): "
                               "set CASHFREE_BASE_URL to https://sandbox.cashfree.com/pg and GATEWAY_ENV=staging")
        try:
            client = client_from_settings(timeout=timeout)
        except ValueError as exc:
            raise CommandError(f"Cashfree's settings: {exc}") from None
        started = timezone.now()
        run = uuid.uuid4().hex[:10]
        steps = [self._paced(lambda m=method: self._pay(client, run, m)) for method in
                 ("UPI intent", "UPI collect", "card", "net banking", "wallet", "bank transfer")]
        refund = self._paced(lambda: self._refund(client, run, next((s for s in steps if s.outcome == "SUCCESS"),
                                                                    None)))
        webhook = self._webhook([s.order_id for s in steps if s.order_id], started, webhook_wait)
        self._report(steps, refund, webhook)
        failed = [s.method for s in steps if s.outcome != "SUCCESS"] + (
            ["refund"] if refund.outcome not in ("SUCCESS", "PENDING") else [])
        if failed:
            raise CommandError(f"not as expected: {', '.join(failed)} (see above)")

    def _paced(self, step):
        """Run `step`, again after the wait the account's outbound limit names when it is spent
        (the run's calls count against it like the gateway's: it is the same account). Every
        create carries an idempotency key derived from the run, so a step run again repeats
        nothing at Cashfree."""
        for _ in range(5):
            try:
                return step()
            except LimitReached as spent:
                self.stdout.write(f"(the account's limit is spent for now: waiting {spent.retry_after} s)")
                time.sleep(spent.retry_after)
        raise CommandError("the account's outbound limit stayed spent; run it again later")

    # -- one payment per method --------------------------------------------------------------

    def _pay(self, client: CashfreeClient, run: str, method: str) -> Step:
        step = Step(method, order_id=f"smoke_{run}_{method.replace(' ', '_')}")
        key = lambda *parts: str(uuid.uuid5(uuid.NAMESPACE_URL, "|".join((step.order_id, *parts))))  # noqa: E731
        try:
            order = client.create_order(order_id=step.order_id, amount=SMOKE_AMOUNT, idempotency_key=key("order"),
                                        customer=Customer(customer_id=f"smoke_{run}", phone="9999999999",
                                                          email="smoke@example.com", name="Smoke Test"))
            session = order.payment_session_id
            step.observed["payment_session_id"] = bool(session)
            answer = self._order_pay(client, method, session, key("pay"))
            step.cf_payment_id = answer.cf_payment_id
            step.observed.update(self._observe(method, answer))
            simulated = client.simulate_payment(cf_payment_id=answer.cf_payment_id, status="SUCCESS",
                                                idempotency_key=key("simulate"))
            step.observed["simulate entity_id"] = simulated.get("entity_id") == answer.cf_payment_id
            payments = client.get_payments(step.order_id)
            mine = [p for p in payments if p.cf_payment_id == answer.cf_payment_id]
            step.outcome = mine[0].status if mine else "not in the status query"
            step.observed["payment_group"] = mine[0].payment_group if mine else ""
        except CashfreeError as exc:
            step.outcome = f"error: {exc} (HTTP {exc.status}, code {exc.code}, request id {exc.request_id})"
        except ValueError as exc:
            step.outcome = f"refused before sending: {exc}"
        self.stdout.write(f"{method}: {step.outcome}")
        return step

    @staticmethod
    def _order_pay(client: CashfreeClient, method: str, session: str, key: str) -> PayAnswer:
        if method == "UPI intent":
            return client.pay_upi_intent(payment_session_id=session, idempotency_key=key)
        if method == "UPI collect":
            return client.pay_upi_collect(payment_session_id=session, vpa=SANDBOX_VPA, idempotency_key=key)
        if method == "card":
            return client.pay_card(payment_session_id=session, card=SANDBOX_CARD, idempotency_key=key,
                                   holder_name="Smoke Test")
        if method == "net banking":
            return client.pay_netbanking(payment_session_id=session, bank_code=NETBANKING_CODES["HDFC"],
                                         idempotency_key=key)
        if method == "wallet":
            return client.pay_wallet(payment_session_id=session, provider=WALLET_PROVIDERS["PHONEPE"],
                                     phone="9999999999", idempotency_key=key)
        return client.pay_bank_transfer(payment_session_id=session, idempotency_key=key)

    @staticmethod
    def _observe(method: str, answer: PayAnswer) -> dict:
        """What the guessed places of docs/going-live.md held in this answer."""
        payload = answer.payload if isinstance(answer.payload, dict) else {}
        if method == "UPI intent":
            return {"action": answer.action, "payload keys": sorted(payload),
                    "upi:// link found": bool(upi_intent_link(answer.payload))}
        if method == "bank transfer":
            names = ("account_number", "banktransfer_account_number", "ifsc", "banktransfer_ifsc")
            return {"action": answer.action, "payload keys": sorted(payload),
                    "account and IFSC found": any(payload.get(n) for n in names[:2])
                    and any(payload.get(n) for n in names[2:])}
        return {"action": answer.action, "data.url found": bool(answer.url)}

    # -- a refund, a webhook -----------------------------------------------------------------

    def _refund(self, client: CashfreeClient, run: str, paid: Step | None) -> Step:
        step = Step("refund")
        if paid is None:
            step.outcome = "not run: no payment succeeded"
            return step
        step.order_id = paid.order_id
        refund_id = f"smoke_{run}_refund"
        try:
            created = client.create_refund(order_id=paid.order_id, refund_id=refund_id, amount=SMOKE_AMOUNT,
                                           idempotency_key=str(uuid.uuid5(uuid.NAMESPACE_URL, refund_id)))
            step.observed["cf_refund_id"] = bool(created.cf_refund_id)
            step.outcome = client.get_refund(paid.order_id, refund_id).status
        except CashfreeError as exc:
            step.outcome = f"error: {exc} (HTTP {exc.status}, code {exc.code}, request id {exc.request_id})"
        self.stdout.write(f"refund: {step.outcome}")
        return step

    def _webhook(self, order_ids: list[str], since, wait: float) -> str:
        address = f"{settings.GATEWAY_PUBLIC_URL.rstrip('/')}/acquirer/cashfree/webhooks"
        self.stdout.write(f"Cashfree's webhooks: configure {address} in the sandbox dashboard "
                          f"(Developers > Webhooks, payment and refund events); waiting up to {wait:.0f} s")
        deadline = time.monotonic() + wait
        while True:
            notice = (AcquirerNotice.objects.filter(acquirer="cashfree", order_id__in=order_ids, created_at__gte=since)
                      .order_by("pk").first())
            if notice is not None:
                return f"received ({notice.event_type or 'no type'}, order {notice.order_id}): signature verified"
            if time.monotonic() >= deadline:
                return "none received: is the address reachable from Cashfree, and the secret CASHFREE_WEBHOOK_SECRET?"
            time.sleep(min(2.0, max(0.0, deadline - time.monotonic())))

    # -- the report --------------------------------------------------------------------------

    def _report(self, steps: list[Step], refund: Step, webhook: str) -> None:
        by_method = {step.method: step for step in steps}

        def seen(method: str, name: str):
            return by_method[method].observed.get(name, "not seen")

        guesses = [
            ("where order pay puts the UPI intent link (payload `default`, or any upi:// value)",
             seen("UPI intent", "upi:// link found"), f"payload keys {seen('UPI intent', 'payload keys')}"),
            ("where order pay puts the transfer account (payload `account_number`, `ifsc`, with or "
             "without `banktransfer_`)", seen("bank transfer", "account and IFSC found"),
             f"payload keys {seen('bank transfer', 'payload keys')}"),
            ("the card's 3-D Secure page in `data.url` (action link)", seen("card", "data.url found"),
             f"action {seen('card', 'action')}"),
            ("the bank's page in `data.url` for net banking code 3021 (HDFC)", seen("net banking", "data.url found"),
             f"action {seen('net banking', 'action')}"),
            ("the wallet's page in `data.url` (app provider phonepe with a phone)", seen("wallet", "data.url found"),
             f"action {seen('wallet', 'action')}"),
            ("/simulate's entity_id is order pay's cf_payment_id", all(s.observed.get("simulate entity_id")
                                                                       for s in steps if s.cf_payment_id), ""),
            ("the status query's payment_group of each method",
             all(s.observed.get("payment_group") for s in steps if s.cf_payment_id),
             ", ".join(f"{s.method}: {s.observed.get('payment_group', '')}" for s in steps)),
            ("a refund answers refund_status SUCCESS or PENDING", refund.outcome in ("SUCCESS", "PENDING"),
             refund.outcome),
            ("webhook signature: x-webhook-signature over x-webhook-timestamp and the body",
             webhook.startswith("received"), webhook),
        ]
        self.stdout.write("\nWhat docs/going-live.md calls a guess, as the sandbox answered:")
        for guess, holds, detail in guesses:
            verdict = "holds" if holds is True else "DOES NOT HOLD" if holds is False else f"unknown ({holds})"
            self.stdout.write(f"- {guess}: {verdict}" + (f" ({detail})" if detail else ""))
