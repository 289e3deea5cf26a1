"""Hypothesis fuzzing of every producer payload model and the file parsers: any input either
parses or fails with a clear error (InvalidPayload / BadInput naming the problem), never an
unexpected exception."""

from __future__ import annotations

import base64

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram.models import payloads
from engram.models.payloads import RememberItem
from engram.pipelines.cognify.classify import DOC_TYPES, classify, validate_content
from engram.pipelines.cognify.ingest import prepare
from engram.pipelines.errors import BadInput
from engram.tasks.validation import InvalidPayload, parse_payload

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12)


def _models() -> list[type]:
    out, todo = [], [payloads.Payload]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            todo.append(sub)
            out.append(sub)
    return out


MODELS = _models()


def _payloads(model):
    fields = list(model.model_fields)
    keys = st.sampled_from(fields + ["bogus", "user", "dataset"]) if fields else st.text(max_size=8)
    return st.dictionaries(keys, JSON, max_size=len(fields) + 2)


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(data=st.data())
def test_every_payload_model_parses_or_says_which_field_is_wrong(data):
    assert len(MODELS) >= 10
    model = data.draw(st.sampled_from(MODELS))
    kwargs = data.draw(_payloads(model))
    try:
        parse_payload(f"fuzz.{model.__name__}", model, (), kwargs)
    except InvalidPayload as exc:
        assert str(exc).startswith(f"invalid payload for fuzz.{model.__name__}: ")
        assert len(str(exc)) < 5000


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=600), name=st.one_of(st.none(), st.text(max_size=20)),
       mime=st.one_of(st.none(), st.sampled_from(["application/pdf", "text/csv", "application/json", "text/plain"]),
                      st.text(max_size=12)))
def test_file_parsers_return_text_or_a_clear_bad_input(data, name, mime):
    doc_type = classify(name, mime, data)
    assert doc_type in DOC_TYPES
    try:
        text = validate_content(data, doc_type, 10_000)
    except BadInput as exc:
        assert str(exc)
    else:
        assert isinstance(text, str) and text.strip() and "\x00" not in text


@settings(max_examples=100, deadline=None)
@given(prefix=st.sampled_from([b"%PDF-1.4\n", b"%PDF-", b"{", b"[", b"a,b\n", b"\xef\xbb\xbf"]),
       tail=st.binary(max_size=400), as_text=st.booleans())
def test_remember_items_prepare_or_fail_with_their_position(prefix, tail, as_text):
    data = prefix + tail
    try:
        item = RememberItem(text=data.decode("utf-8", "replace")) if as_text else RememberItem(
            content_b64=base64.b64encode(data).decode(), name="f.bin")
    except Exception as exc:  # the model itself refuses (e.g. empty): a pydantic error naming the field
        assert "text" in str(exc) or "content" in str(exc)
        return
    try:
        prepared = prepare(item, 10_000, 7)
    except BadInput as exc:
        assert str(exc).startswith("item 7")
    else:
        assert prepared.text.strip()
