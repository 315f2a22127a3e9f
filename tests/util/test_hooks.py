"""ignores_report: a hook's mark, read on the function and on its bound method alike."""

from __future__ import annotations

from kubesched.util.hooks import ignores_report, reports_ignored


class _Observer:
    @ignores_report
    def rejected(self, report: object) -> None:
        return None

    def scheduled(self, report: object) -> None:
        return None


def test_a_marked_hook_is_known_as_ignoring_its_report_bound_or_not() -> None:
    observer = _Observer()
    assert reports_ignored(_Observer.rejected) and reports_ignored(observer.rejected)
    assert not reports_ignored(observer.scheduled)
    assert observer.rejected("x") is None  # the mark leaves the hook itself as it was
