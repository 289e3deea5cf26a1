"""Settings a user gets wrong get a clear error at start; sizes derived from the machine stay in bounds."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from engram.adapters import services
from engram.settings import Settings


@pytest.mark.parametrize("value", ["64MB", "1TB", "512", "lots", "0GB"])
def test_a_bad_embedded_shared_buffers_is_refused_with_the_form_it_takes(value):
    with pytest.raises(ValidationError, match="embedded_shared_buffers must be auto or a size of at least 128MB"):
        Settings(embedded_shared_buffers=value)


@pytest.mark.parametrize(("value", "mb"), [("128MB", 128), ("512MB", 512), ("4GB", 4096)])
def test_a_given_shared_buffers_is_used_as_given(value, mb):
    assert services.shared_buffers_mb(Settings(embedded_shared_buffers=value)) == mb


@pytest.mark.parametrize(("memory_gib", "mb"), [(0.25, 128), (2, 512), (24, 6144), (64, 8192)])
def test_auto_shared_buffers_is_a_quarter_of_the_memory_within_128mb_and_8gb(monkeypatch, memory_gib, mb):
    pages = int(memory_gib * 2**30) // 4096
    monkeypatch.setattr(services.os, "sysconf", lambda name: {"SC_PAGE_SIZE": 4096, "SC_PHYS_PAGES": pages}[name])
    monkeypatch.setattr(services.Path, "read_text", lambda self: "max\n")  # a cgroup without a limit
    assert services.shared_buffers_mb(Settings(embedded_shared_buffers="auto")) == mb


def test_auto_shared_buffers_follows_a_container_limit_below_the_machine(monkeypatch):
    monkeypatch.setattr(services.os, "sysconf", lambda name: {"SC_PAGE_SIZE": 4096, "SC_PHYS_PAGES": 2**23}[name])
    monkeypatch.setattr(services.Path, "read_text", lambda self: f"{4 * 2**30}\n")  # 4 GiB of a 32 GiB host
    assert services.shared_buffers_mb(Settings()) == 1024
