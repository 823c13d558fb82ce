"""Enrol a staff member's authenticator app for console sign-in (gateway/platform/signin.py)."""
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django_otp.plugins.otp_totp.models import TOTPDevice

from gateway.platform.management.commands._actor import cli_actor
from gateway.platform.services import audit_record


class Command(BaseCommand):
    help = ("Give USERNAME a new TOTP authenticator (replacing any they had) and print its otpauth:// "
            "address, to be turned into a QR code or typed into their app. Shown once.")

    def add_arguments(self, parser):
        parser.add_argument("username")

    @transaction.atomic
    def handle(self, *args, username, **options):
        user = get_user_model().objects.filter(username=username, is_staff=True).first()
        if user is None:
            raise CommandError(f"no staff user named {username!r}")
        TOTPDevice.objects.filter(user=user).delete()
        device = TOTPDevice.objects.create(user=user, name="console", confirmed=True)
        audit_record(actor=cli_actor(self), action="console.totp_enrol", obj=user)
        self.stdout.write(device.config_url)
