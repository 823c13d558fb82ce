"""Razorpay's settings are refused at start when incomplete (its checks.py, run by
payments.acquirer.settings_problems from gateway/settings.py), naming what is missing."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from payments.acquirer import settings_problems
from payments.acquirer.razorpay.checks import problems
from tests.acquirer_cashfree.test_production_start import PRODUCTION, run

COMPLETE = dict(RAZORPAY_KEY_ID="rzp_live_ABCDEF0123", RAZORPAY_KEY_SECRET="s3cr3t", RAZORPAY_WEBHOOK_SECRET="whs",
                RAZORPAY_BASE_URL="https://api.razorpay.com/v1", RAZORPAY_TIMEOUT_SECONDS=10, IS_PRODUCTION=True)


def test_complete_settings_have_no_problem():
    assert problems(SimpleNamespace(**COMPLETE)) == []


@pytest.mark.parametrize("missing", ["RAZORPAY_KEY_ID", "RAZORPAY_KEY_SECRET", "RAZORPAY_WEBHOOK_SECRET",
                                     "RAZORPAY_BASE_URL"])
def test_each_missing_setting_is_named(missing):
    found = problems(SimpleNamespace(**{**COMPLETE, missing: ""}))
    assert any(missing in problem for problem in found), found


@pytest.mark.parametrize("change, named", [
    ({"RAZORPAY_KEY_ID": "rzp_test_ABCDEF0123"}, "test key"),
    ({"RAZORPAY_BASE_URL": "http://api.razorpay.com/v1"}, "https"),
    ({"RAZORPAY_TIMEOUT_SECONDS": 0}, "RAZORPAY_TIMEOUT_SECONDS"),
    ({"RAZORPAY_TIMEOUT_SECONDS": 90}, "RAZORPAY_TIMEOUT_SECONDS"),
])
def test_what_production_cannot_honour_is_named(change, named):
    assert any(named in problem for problem in problems(SimpleNamespace(**{**COMPLETE, **change})))


def test_the_table_runs_razorpays_check():
    assert settings_problems("razorpay", SimpleNamespace(**{**COMPLETE, "RAZORPAY_KEY_SECRET": ""}))


def test_production_without_the_webhook_secret_does_not_start_and_names_it():
    result = run(["check"], **PRODUCTION, GATEWAY_ACQUIRER="razorpay", RAZORPAY_KEY_ID="rzp_live_ABCDEF0123",
                 RAZORPAY_KEY_SECRET="s3cr3t")
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr and "RAZORPAY_WEBHOOK_SECRET" in result.stderr
    assert "s3cr3t" not in result.stderr


def test_production_with_razorpays_settings_starts():
    result = run(["check"], **PRODUCTION, GATEWAY_ACQUIRER="razorpay", RAZORPAY_KEY_ID="rzp_live_ABCDEF0123",
                 RAZORPAY_KEY_SECRET="s3cr3t", RAZORPAY_WEBHOOK_SECRET="whs")
    assert result.returncode == 0, result.stderr
