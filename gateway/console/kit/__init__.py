"""The console's generic admin kit, for every app's admin.py and the console's own pages: list
pages that stay fast (lists.py), the read-only mixin (readonly.py), money, methods and times
for people (display.py), fields that read amounts and phone numbers as staff write them
(forms.py) and the Asia/Kolkata calendar day (days.py). It imports Django and
gateway.core only, nothing of the apps (tests/docs/test_architecture_doc.py holds it to that),
so an app's admin may use it without reaching, through it, every other app.
"""
