"""Whole journeys across the apps, each with real processes on loopback: a payment created over
the API, paid, its webhook delivered to the merchant's server; a refund processed by the worker
and its webhook delivered; a newcomer's quick start from the printed line to the signed webhook."""
