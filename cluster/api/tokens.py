"""API tokens: exchange a username and password for one, revoke one's own, and
operators revoke anyone's (the token endpoints, apart from the cluster's resources)."""
from __future__ import annotations

from typing import Any

from drf_spectacular.utils import (OpenApiResponse, extend_schema, extend_schema_view,
                                   inline_serializer)
from rest_framework import serializers as drf_serializers
from rest_framework import status
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.exceptions import NotAuthenticated
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from cluster.api import serializers as s
from cluster.api.errors import JsonErrors
from cluster.api.parsers import JSONParser
from cluster.api.views import ERRORS, ApiView
from cluster.services.tokens import tokens_revoke


@extend_schema_view(
    post=extend_schema(
        summary="Exchange a username and password for an API token",
        description="The token lives until revoked (DELETE here, or `manage.py token "
                    "revoke`); signing out of the browser does not end it. Repeated wrong "
                    "passwords lock the username out from that address (429).",
        responses={200: inline_serializer("Token", {"token": drf_serializers.CharField()}),
                   400: ERRORS[400],
                   429: OpenApiResponse(s.ErrorSerializer, description="locked out")}),
    delete=extend_schema(summary="Revoke the caller's own API token",
                         responses={204: None, 403: ERRORS[403]}))
class TokenView(JsonErrors, ObtainAuthToken):
    """DRF's token view, with the same error body and JSON parser as every other endpoint."""
    parser_classes = (FormParser, MultiPartParser, JSONParser)
    serializer_class = s.TokenRequestSerializer

    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        try:
            return super().post(request, *args, **kwargs)
        finally:
            # django-axes marks the request it was given, DRF's wrapper; its middleware,
            # which answers a lockout, reads Django's.
            for flag in ("axes_locked_out", "axes_credentials"):
                if hasattr(request, flag):
                    setattr(request._request, flag, getattr(request, flag))

    def delete(self, request: Request) -> Response:
        if not request.user.is_authenticated:
            raise NotAuthenticated()
        tokens_revoke(username=request.user.get_username(), by=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class UserTokenView(ApiView):
    """Operators revoke anyone's token (GET is not offered: tokens are secrets)."""

    @extend_schema(summary="Revoke a user's API token (operators)",
                   responses={204: None, **ERRORS})
    def delete(self, request: Request, username: str) -> Response:
        tokens_revoke(username=username, by=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)
