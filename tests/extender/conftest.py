from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.extender.server import ExtenderServer


@pytest.fixture
def server() -> Iterator[ExtenderServer]:
    srv = ExtenderServer()
    yield srv
    srv.close()
