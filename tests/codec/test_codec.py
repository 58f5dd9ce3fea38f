"""The fast codec must be byte-identical to the stdlib forms (content hashes and bare run ids
of data stored before it must not change), and read lines exactly as the careful path does."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tracelake import codec
from tracelake.errors import ContractError
from tracelake.ingest.lines import Line
from tracelake.ingest.parse import _finite_float, _reject_constant, parse_line
from tracelake.runners import to_jsonable

MAX_DEPTH = 6

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([1e-05, -2.5e-07, 1e16, 1e22, 5e-324, 0.0001, -0.0, 1e300])
    | st.text()
    | st.sampled_from(["a\x00b", "x\ud800y", "\ufeff", "tab\there", "back\\slash", "\u2028"])
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=25,
)


def std(value: Any, sort_keys: bool = False) -> str:
    return json.dumps(
        value, ensure_ascii=False, separators=(",", ":"), allow_nan=False, sort_keys=sort_keys
    )


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(json_values)
def test_dumps_and_canonical_are_the_stdlib_bytes(value: Any) -> None:
    try:
        expected = std(value)
    except ValueError:  # lone surrogates cannot be UTF-8 encoded by either
        return
    try:
        expected_bytes = expected.encode()
    except UnicodeEncodeError:
        return
    assert codec.dumps(value) == expected
    assert codec.dumps_bytes(value) == expected_bytes
    assert codec.canonical(value) == std(value, sort_keys=True).encode()


def careful(data: bytes) -> dict[str, Any] | str:
    """The stdlib path alone (what parse_line did before the fast codec), or the reason."""
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
        obj = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
        if not isinstance(obj, dict):
            return "not_an_object"
        return to_jsonable(obj, MAX_DEPTH + 1)  # type: ignore[no-any-return]
    except ContractError as exc:
        return exc.reason
    except (ValueError, RecursionError):
        return "error"


def nested(depth: int) -> bytes:
    return b'{"type":"x","n":' + b'{"a":' * depth + b"1" + b"}" * depth + b"}"


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(
    st.dictionaries(st.text(max_size=8), json_values, max_size=5).map(
        lambda d: json.dumps(d, ensure_ascii=False).encode("utf-8", "surrogatepass")
    )
    | st.binary(max_size=60)
    | st.sampled_from([b'{"a":1e400}', b'{"a":NaN}', b"\xef\xbb\xbf{}", b'{"a":"\\u0000"}'])
)
@example(nested(MAX_DEPTH))
@example(nested(MAX_DEPTH + 1))
@example(nested(MAX_DEPTH + 2))
@example(b'{"a":"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}')
@example(b'{"n":123456789012345678901234567890}')
@example(b'{"n":18446744073709551615}')
@example(b'{"": -9339147058542151680}')  # below a signed 64-bit integer: orjson reads a float
@example(b'{"": -9223372036854775809}')
@example(b'{"": -9223372036854775808}')
def test_a_line_the_fast_path_takes_is_read_as_the_careful_path_reads_it(data: bytes) -> None:
    fast = codec.loads_line(data, MAX_DEPTH)
    slow = careful(data)
    if fast is not None:
        assert fast == slow
        assert std(fast) == std(slow)  # same types too (1 vs 1.0 compare equal)
    line = Line(1, data, False, len(data))
    try:
        parsed: dict[str, Any] | str = parse_line(line, 1 << 20, MAX_DEPTH)
    except ContractError as exc:
        parsed = exc.reason
    if isinstance(slow, dict):
        assert parsed == slow and std(parsed) == std(slow)
    else:
        assert isinstance(parsed, str)


# Text that looks like a float token inside a string (a UUID's "5c6e-4", "re-7") must not send
# the value to the slow stdlib path, and floats orjson writes differently must still go there.
number_like_text = st.text(alphabet='e-+0123456789.:,[ abc"', max_size=24)


@settings(max_examples=300, deadline=None)
@given(st.lists(number_like_text | st.floats(allow_nan=False, allow_infinity=False)))
def test_number_like_text_and_floats_encode_as_the_stdlib(value: list[Any]) -> None:
    try:
        expected = std(value).encode()
    except UnicodeEncodeError:
        return
    assert codec.dumps_bytes(value) == expected
    assert codec.canonical(value) == expected


@pytest.mark.parametrize(
    ("value", "fast"),
    [
        ({"run_id": "req-2b491044-d5e3-4124-5c6e-433715ba2e1f", "note": "re-7 e+5"}, True),
        ({"x": 2.5e-07}, False),
        ([-1e-05], False),
        (1e-07, False),
    ],
)
def test_only_float_tokens_take_the_stdlib_path(value: Any, fast: bool) -> None:
    import orjson

    assert codec._differs(orjson.dumps(value)) is not fast
    assert codec.dumps_bytes(value) == std(value).encode()


def _containers(value: Any) -> list[Any]:
    """Every dict and list inside *value*, and each dict without each one of its keys."""
    out: list[Any] = []
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            out.append(v)
            out.extend({k: x for k, x in v.items() if k != key} for key in v)
            stack.extend(v.values())
        elif isinstance(v, list):
            out.append(v)
            stack.extend(v)
    return out


_number_text = st.sampled_from(["0.00001", "1e-7", "x:0.00001", "1e16", "5c6e-4", "e-5", ",1e+5"])


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(
        st.text(max_size=6) | _number_text,
        st.recursive(
            scalars | _number_text,
            lambda inner: (
                st.lists(inner, max_size=4)
                | st.dictionaries(st.text(max_size=6) | _number_text, inner, max_size=4)
            ),
            max_leaves=20,
        ),
        max_size=5,
    )
)
def test_parts_of_a_whole_encoded_by_orjson_are_the_stdlib_bytes_too(value: dict[str, Any]) -> None:
    """split_encoded and encode_event dump members of the payload, and the payload without
    some keys, without the float check when the whole payload passed it."""
    try:
        expected = std(value).encode()
    except (ValueError, UnicodeEncodeError):
        return  # lone surrogates: no text either way
    whole, exact = codec.dumps_whole(value)
    assert whole == expected
    for part in _containers(value):
        assert codec.dumps_part(part, exact) == std(part).encode()


floatless_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.text()
    | st.sampled_from(["a\x00b", "\ufeff", "tab\there", "back\\slash", "\u2028", "\x7f", "é"])
)
floatless_values = st.recursive(
    floatless_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(floatless_values)
def test_a_value_without_floats_encodes_as_the_stdlib_without_the_float_search(value: Any) -> None:
    try:
        expected = std(value).encode()
    except (ValueError, UnicodeEncodeError):  # lone surrogates: neither can write them
        return
    assert codec.dumps_floatless(value) == expected


def test_redaction_reports_encode_as_the_stdlib() -> None:
    from faker import Faker

    from tracelake.scrub.walk import Walker

    fake = Faker(["en_US", "ko_KR", "de_DE"])
    walker = Walker(b"k" * 32)
    for i in range(60):
        walker.text(f"{fake.name()} {fake.email()} {fake.phone_number()}", f"goal.{i}")
    report = walker.report()
    assert report["entities"] and report["paths"]
    assert codec.dumps_floatless(report) == std(report).encode()
