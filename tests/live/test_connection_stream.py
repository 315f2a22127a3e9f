"""A watch response becomes one decoded event per line, however the server cut it into chunks."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.live.connection import StreamResponse


class _FakeResponse:
    """A chunked watch response whose chunks are given."""

    chunked = True

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    def read_chunked(self, decode_content: bool = True) -> Any:
        return iter(self.chunks)


@pytest.mark.parametrize(
    "chunks",
    [
        [b'{"type":"ADDED","n":1}\n', b'{"type":"MODIFIED","n":2}\n'],  # one event per chunk, as served
        [b'{"type":"ADDED","n":1}\n{"type":"MODIFIED","n":2}\n'],  # two in one chunk
        [b'{"type":"ADD', b'ED","n":1}\n{"type":"MOD', b'IFIED","n":2}'],  # split anywhere, no final newline
        [b'\n{"type":"ADDED","n":1}\n', b"\n", b'{"type":"MODIFIED","n":2}\n\n'],  # blank lines skipped
        [b'{"type":"ADDED",', b"", b'"n":1}\n{"type":"MODIFIED","n":2}\n'],  # an empty chunk changes nothing
    ],
)
def test_a_watch_stream_yields_one_event_per_line(chunks: list[bytes]) -> None:
    events = list(StreamResponse(_FakeResponse(chunks)))
    assert events == [{"type": "ADDED", "n": 1}, {"type": "MODIFIED", "n": 2}]


def test_a_broken_line_raises_rather_than_being_skipped() -> None:
    with pytest.raises(ValueError):
        list(StreamResponse(_FakeResponse([b'{"type":"ADDED"\n'])))
