from django.conf import settings


def gateway(request):
    return {"GATEWAY_ENV": settings.GATEWAY_ENV, "IS_PRODUCTION": settings.IS_PRODUCTION}
