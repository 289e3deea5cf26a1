"""`engram flower` asks the UI's credentials on /metrics too (Flower alone serves it to anyone)."""

from __future__ import annotations

import base64
from unittest import mock

import celery
from flower.app import Flower
from flower.options import options
from flower.urls import settings
from tornado.testing import AsyncHTTPTestCase

from engram.cli.flower import protect_metrics


class _Case(AsyncHTTPTestCase):
    basic_auth: list[str] = []

    def setUp(self):
        self._saved = options.basic_auth
        options.basic_auth = self.basic_auth
        super().setUp()

    def tearDown(self):
        super().tearDown()
        options.basic_auth = self._saved

    def get_app(self):
        return Flower(capp=celery.Celery(), events=mock.Mock(), options=options, **settings)

    def get(self, path: str, credentials: str | None = None):
        headers = {"Authorization": "Basic " + base64.b64encode(credentials.encode()).decode()} if credentials else {}
        return self.fetch(path, headers=headers)


class TestProtected(_Case):
    basic_auth = ["ops:s3cret"]

    def setUp(self):
        protect_metrics()
        super().setUp()

    def test_metrics_needs_the_ui_credentials(self):
        assert self.get("/metrics").code == 401
        assert self.get("/metrics", "ops:wrong").code == 401
        ok = self.get("/metrics", "ops:s3cret")
        assert ok.code == 200 and b"# TYPE " in ok.body
        assert self.get("/healthcheck").code == 200  # the healthcheck stays open (engram health flower)


class TestOpenFlower(_Case):
    basic_auth = []

    def test_without_authentication_configured_metrics_is_as_open_as_the_ui(self):
        protect_metrics()
        assert self.get("/metrics").code == 200


def test_protect_metrics_is_idempotent():
    from flower.views.monitor import Metrics

    protect_metrics()
    first = Metrics.get
    protect_metrics()
    assert Metrics.get is first and first._engram_protected
