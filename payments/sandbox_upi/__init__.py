"""The sandbox UPI app: stands in for a customer's UPI app in staging (CONTRACT.md, Sandbox).

POST /sandbox/upi/pay takes {"upiUri", "payerVpa"} as JSON; /sandbox/upi is the same for a
person, as an HTML form. Every path here answers 404 (NOT_FOUND) when IS_PRODUCTION.
"""
