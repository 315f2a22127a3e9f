"""The command examples shown in README.md and docs/*.md are run, and what they print is compared.

The convention (described for writers in docs/commands.md, "The examples are tested"):

- A fenced block opened with ```` ```console ```` is an example to run. Each line starting with ``$ `` is
  a command; the lines after it, up to the next command or the end of the block, are what it prints
  (stdout and stderr together).
- A line that is exactly ``...`` stands for any number of printed lines, none included. Trailing spaces
  and trailing blank lines are not compared (Markdown cannot show them reliably).
- Every command must exit 0; an example of a failing command shows its status itself
  (``$ kubesched simulate nowhere; echo "exit status $?"``).
- The blocks of one page run in order, in one scratch folder, as a reader would type them in one
  terminal: a later block may read what an earlier one wrote.
- Blocks that only show usage use another fence (``sh``, ``text``, ``yaml``) and are not run; a ``$ ``
  line in such a block is refused, so shown output cannot escape the test by its fence.

Commands run under bash in a scratch folder that mirrors the repository root (every top-level entry is
linked into it): relative paths read the repository's examples, and whatever a command writes stays in
the scratch folder. ``kubesched`` there is this interpreter's ``python -m kubesched``.
"""

from __future__ import annotations

import difflib
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ELISION = "..."
COMMAND_PREFIX = "$ "
FENCE = re.compile(r"^(?P<indent>\s*)```(?P<info>\S*)\s*$")
TIMEOUT_SECONDS = 120


@dataclass(frozen=True, slots=True)
class Command:
    """A shown command (its line in the page) and the output lines shown after it."""

    line: int
    text: str
    expected: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Example:
    """One ```console block: where it is, and its commands with their shown output."""

    source: str
    line: int
    commands: tuple[Command, ...]


class DocFormatError(ValueError):
    """A Markdown file that breaks the examples' convention; the message names the file and line."""


def doc_files(root: Path = ROOT) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def parse_examples(text: str, source: str) -> list[Example]:
    """Every ```console block of a Markdown text, in order."""
    examples: list[Example] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        indent, info = opening.group("indent"), opening.group("info")
        start = i + 1
        i = start
        while i < len(lines) and lines[i].strip() != "```":
            i += 1
        if i == len(lines):
            raise DocFormatError(f"{source}:{start}: the block opened here is never closed")
        body = [line[len(indent) :] if line.startswith(indent) else line.lstrip() for line in lines[start:i]]
        if info == "console":
            examples.append(Example(source, start, _commands(body, source, start)))
        else:
            for offset, line in enumerate(body):
                if line.startswith(COMMAND_PREFIX):
                    raise DocFormatError(
                        f"{source}:{start + offset + 1}: a shown command in a ```{info} block; "
                        "use ```console so that it is run and its output checked"
                    )
        i += 1
    return examples


def _commands(body: list[str], source: str, start: int) -> tuple[Command, ...]:
    commands: list[Command] = []
    for offset, line in enumerate(body):
        if line.startswith(COMMAND_PREFIX):
            commands.append(Command(start + offset + 1, line[len(COMMAND_PREFIX) :], ()))
        elif not commands:
            raise DocFormatError(f"{source}:{start + offset + 1}: a console block must start with a '$ ' command")
        else:
            last = commands[-1]
            commands[-1] = Command(last.line, last.text, (*last.expected, line))
    if not commands:
        raise DocFormatError(f"{source}:{start}: an empty console block")
    return tuple(commands)


def output_matches(expected: list[str] | tuple[str, ...], actual: list[str]) -> bool:
    """Line by line equality, where an ``...`` line matches any run of lines (none included)."""
    # reachable[j]: the expected lines so far can match exactly the first j actual lines.
    reachable = [True] + [False] * len(actual)
    for want in expected:
        if want == ELISION:
            for j in range(1, len(actual) + 1):
                reachable[j] = reachable[j] or reachable[j - 1]
        else:
            reachable = [False] + [reachable[j - 1] and actual[j - 1] == want for j in range(1, len(actual) + 1)]
    return reachable[-1]


def normalised(text: str) -> list[str]:
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def all_examples() -> tuple[list[Example], list[str]]:
    """The examples of every doc file, and the convention errors of the files that break it."""
    examples: list[Example] = []
    errors: list[str] = []
    for path in doc_files():
        try:
            examples += parse_examples(path.read_text(encoding="utf-8"), path.relative_to(ROOT).as_posix())
        except DocFormatError as err:
            errors.append(str(err))
    return examples, errors


def scratch_root(tmp: Path) -> Path:
    """A folder that reads like the repository root but keeps what commands write."""
    work = tmp / "repo"
    work.mkdir()
    for entry in ROOT.iterdir():
        if not entry.name.startswith("."):
            (work / entry.name).symlink_to(entry)
    shims = tmp / "bin"
    shims.mkdir()
    shim = shims / "kubesched"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m kubesched "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    return work


def run_command(command: str, work: Path) -> tuple[int, str]:
    env = dict(os.environ)
    # What is shown is what a pipe prints; the width of the terminal running the tests must not change it.
    env.pop("COLUMNS", None)
    env["PATH"] = f"{work.parent / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    done = subprocess.run(
        ["bash", "-c", command],
        cwd=work,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=TIMEOUT_SECONDS,
        check=False,
    )
    return done.returncode, done.stdout


EXAMPLES, FORMAT_ERRORS = all_examples()


PAGES = sorted({e.source for e in EXAMPLES}, key=lambda source: (source != "README.md", source))


def check_command(command: Command, source: str, work: Path) -> str | None:
    """None when the command exits 0 and prints what is shown; otherwise what went wrong."""
    status, output = run_command(command.text, work)
    where = f"{source}:{command.line}: $ {command.text}"
    if status != 0:
        return f"{where}\nexited {status}:\n{output}"
    expected = [line.rstrip() for line in command.expected]
    while expected and not expected[-1]:
        expected.pop()
    actual = normalised(output)
    if output_matches(expected, actual):
        return None
    diff = "\n".join(difflib.unified_diff(expected, actual, "shown", "printed", lineterm=""))
    return f"{where}\nprints something else than shown:\n{diff}"


@pytest.mark.parametrize("page", PAGES)
def test_shown_output_is_what_the_command_prints(page: str, tmp_path: Path) -> None:
    work = scratch_root(tmp_path)
    problems = [
        problem
        for example in EXAMPLES
        if example.source == page
        for command in example.commands
        if (problem := check_command(command, page, work)) is not None
    ]
    if problems:
        pytest.fail("\n\n".join(problems), pytrace=False)


LINK = re.compile(r"\[[^\]]*\]\((?P<target>[^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(?P<title>.+?)\s*$")


def prose_lines(text: str) -> list[str]:
    """The lines of a Markdown text outside fenced blocks."""
    lines: list[str] = []
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines


def anchors(text: str) -> set[str]:
    """The anchors GitHub makes of a page's headings (a repeated one gets -1, -2, ...)."""
    seen: dict[str, int] = {}
    for line in prose_lines(text):
        heading = HEADING.match(line)
        if heading is None:
            continue
        slug = re.sub(r"[^\w\- ]", "", heading.group("title").strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        if count:
            seen[f"{slug}-{count}"] = 1
    return set(seen)


def broken_links(page: Path) -> list[str]:
    """Relative links of ``page`` whose file or anchor does not exist."""
    problems: list[str] = []
    # Joined, so that a link whose text is wrapped over two lines is found too.
    for match in LINK.finditer("\n".join(prose_lines(page.read_text(encoding="utf-8")))):
        target = match.group("target")
        if re.match(r"^[a-z]+:", target):
            continue  # an absolute URL
        path_part, _, anchor = target.partition("#")
        linked = (page.parent / path_part).resolve() if path_part else page
        name = f"{page.relative_to(ROOT).as_posix() if page.is_relative_to(ROOT) else page.name}: {target}"
        if not linked.exists():
            problems.append(f"{name}: no such file")
        elif anchor and (linked.suffix != ".md" or anchor not in anchors(linked.read_text(encoding="utf-8"))):
            problems.append(f"{name}: no such heading")
    return problems


def test_links_between_the_docs_resolve() -> None:
    assert [problem for page in doc_files() for problem in broken_links(page)] == []


def test_broken_links_are_found(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other page\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text(
        "## Here\n[a](other.md#other-page) [b](#here) [c](https://example.com/x#y)\n"
        "[d](other.md#gone) [e](missing.md) [f](#no\nwhere) [wrapped\ntext](#nowhere)\n"
        "```sh\n[g](ignored.md)\n```\n",
        encoding="utf-8",
    )
    # "[f](#no\nwhere)" is no link (a target cannot be wrapped); "[wrapped\ntext](#nowhere)" is one.
    assert broken_links(page) == [
        "page.md: other.md#gone: no such heading",
        "page.md: missing.md: no such file",
        "page.md: #nowhere: no such heading",
    ]


def test_anchors_are_made_as_github_makes_them() -> None:
    text = "# Title\n## Scheduling a live cluster (`kubesched run`)\n## scheduler_perf's workloads\n## Title\n"
    assert anchors(text) == {"title", "title-1", "scheduling-a-live-cluster-kubesched-run", "scheduler_perfs-workloads"}


def test_the_docs_follow_the_convention() -> None:
    assert FORMAT_ERRORS == []


def test_the_readme_shows_tested_examples() -> None:
    # Finding none would make the test above pass by running nothing.
    assert any(e.source == "README.md" for e in EXAMPLES)


@pytest.mark.parametrize(
    ("expected", "actual", "matches"),
    [
        (["a", "b"], ["a", "b"], True),
        (["a", "b"], ["a", "c"], False),
        (["a"], ["a", "b"], False),
        (["a", "..."], ["a", "b", "c"], True),
        (["a", "...", "c"], ["a", "c"], True),
        (["a", "...", "c"], ["a", "b", "x", "c"], True),
        (["a", "...", "c"], ["a", "b"], False),
        (["...", "b", "...", "d"], ["a", "b", "c", "d"], True),
        (["...", "b", "...", "d"], ["a", "c", "d"], False),
        ([], [], True),
        ([], ["a"], False),
        (["..."], [], True),
    ],
)
def test_elision_matches_any_run_of_lines(expected: list[str], actual: list[str], matches: bool) -> None:
    assert output_matches(expected, actual) is matches


def test_console_blocks_are_split_into_commands_and_output() -> None:
    text = "intro\n```console\n$ one --flag\nout 1\n...\n$ two\n```\n\n  ```console\n  $ three\n  x\n  ```\n"
    examples = parse_examples(text, "doc.md")
    assert [(e.line, [(c.line, c.text, c.expected) for c in e.commands]) for e in examples] == [
        (2, [(3, "one --flag", ("out 1", "...")), (6, "two", ())]),
        (9, [(10, "three", ("x",))]),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("```sh\nkubesched run\n$ kubesched version\nkubesched 0.1.0\n```\n", "doc.md:3: a shown command in a ```sh"),
        ("```console\nno command\n```\n", "doc.md:2: a console block must start"),
        ("```console\n```\n", "doc.md:1: an empty console block"),
        ("```console\n$ kubesched version\n", "doc.md:1: the block opened here is never closed"),
    ],
)
def test_blocks_that_break_the_convention_are_refused(text: str, message: str) -> None:
    with pytest.raises(DocFormatError, match=re.escape(message)):
        parse_examples(text, "doc.md")
