"""The user documentation holds together: links resolve, no internal references, commands parse.

Checks README.md and docs/*.md: every relative link names an existing file (and, for a Markdown target, an
existing heading anchor, by GitHub's slug rule); no user-facing page (README.md, CHANGELOG.md, docs/*.md but
docs/ARCHITECTURE.md, which holds contributors' notes) cites an issue number or a paper by an internal name that
the page does not define ("seed NNN", "the seed's ...", "the seed paper", "the source paper", a ``SEED_0...``
constant) instead of the name README's "Works it builds on" gives it; and every ``cosim <subcommand>`` shown in a
fenced code block parses: ``cosim <subcommand> --help`` exits 0 through the CLI's ``main(argv)``.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from cosim_validation.cli.main import build_parser, main

ROOT = Path(__file__).resolve().parent.parent
DOC_PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
USER_PAGES = [p for p in [*DOC_PAGES, ROOT / "CHANGELOG.md"] if p.name != "ARCHITECTURE.md"]

FENCE = re.compile(r"^ {0,3}(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
INLINE_CODE = re.compile(r"`+[^`]*`+")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
ISSUE_REFERENCE = re.compile(r"\bissues?\s*#?\d+|\bPR\s*#?\d+|(?<![\w&#/])#\d+\b", re.IGNORECASE)
SEED_NICKNAME = re.compile(r"\bseeds?\s*0\d\d\b", re.IGNORECASE)
# The other ways a page may point at a source work without naming it: "the seed's finest granularity", "the seed
# paper", "the source paper", and code constants named after the nickname (SEED_003_THRESHOLD_M).
UNDEFINED_SOURCE = re.compile(r"(?i:\bthe\s+seed(?:'|\u2019)s\b|\bthe\s+(?:seed|source)\s+papers?\b)|\bSEED_0")
COSIM_COMMAND = re.compile(r"(?:^|[\s$`(;|&])cosim\s+([a-z][a-z0-9-]*)(?:[ \t]+([a-z][a-z0-9-]*))?")


def split_fenced(text: str) -> tuple[list[str], list[str]]:
    """The lines of a Markdown page outside and inside fenced code blocks."""
    prose: list[str] = []
    code: list[str] = []
    fenced = False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        (code if fenced else prose).append(line)
    return prose, code


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading keeps its text
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every heading anchor of a page, duplicates numbered as GitHub does (-1, -2, ...)."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    prose, _ = split_fenced(page.read_text(encoding="utf-8"))
    for line in prose:
        match = HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


@dataclass(frozen=True)
class Link:
    page: Path
    target: str

    def __str__(self) -> str:
        return f"{self.page.relative_to(ROOT)}: ({self.target})"


def relative_links(page: Path) -> list[Link]:
    """The relative links and images of a page's prose (inline code and fenced blocks are not links)."""
    prose, _ = split_fenced(page.read_text(encoding="utf-8"))
    links = []
    for line in prose:
        for match in LINK.finditer(INLINE_CODE.sub("", line)):
            target = match.group(1)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):  # http:, https:, mailto:
                continue
            links.append(Link(page, target))
    return links


ALL_LINKS = [link for page in DOC_PAGES for link in relative_links(page)]


def test_the_pages_have_links_to_check() -> None:
    assert len(DOC_PAGES) >= 10, DOC_PAGES
    assert len(ALL_LINKS) >= 40, len(ALL_LINKS)


def link_problem(link: Link) -> str | None:
    """What is wrong with a relative link, or None."""
    path_part, _, fragment = link.target.partition("#")
    target = (link.page.parent / path_part).resolve() if path_part else link.page
    if not target.exists():
        return f"{link}: no file {path_part!r}"
    if fragment and target.suffix == ".md" and fragment not in anchors(target):
        return f"{link}: no heading with anchor #{fragment} in {target.relative_to(ROOT)}"
    return None


def test_every_relative_link_resolves() -> None:
    problems = [p for p in map(link_problem, ALL_LINKS) if p]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("CAMPAIGNS.md#reports", None),
        ("CAMPAIGNS.md#no-such-heading", "no heading with anchor #no-such-heading"),
        ("NO_SUCH_GUIDE.md", "no file 'NO_SUCH_GUIDE.md'"),
        ("../README.md#works-it-builds-on", None),
        ("#results-and-benchmarks", None),
    ],
)
def test_a_broken_link_is_reported(target: str, expected: str | None) -> None:
    problem = link_problem(Link(ROOT / "docs" / "RESULTS.md", target))
    assert (problem is None) if expected is None else (problem is not None and expected in problem)


def test_slug_follows_github() -> None:
    assert slug("Running suites: `cosim campaign`") == "running-suites-cosim-campaign"
    assert slug("`ros2 launch`, `ros2 run`, RViz") == "ros2-launch-ros2-run-rviz"
    assert slug("One case, every mode") == "one-case-every-mode"


@pytest.mark.parametrize("page", USER_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_issue_numbers_or_seed_nicknames(page: Path) -> None:
    text = page.read_text(encoding="utf-8")  # whole, so that a reference broken over two lines is found
    hits = [
        f"{page.relative_to(ROOT)}:{text.count(chr(10), 0, match.start()) + 1}: {match.group(0)!r}"
        for pattern in (ISSUE_REFERENCE, SEED_NICKNAME, UNDEFINED_SOURCE)
        for match in pattern.finditer(text)
    ]
    assert not hits, "\n".join(hits)


@pytest.mark.parametrize(
    ("text", "caught"),
    [
        ("as issue 15 found", True),
        ("see #12", True),
        ("seed 003's model", True),
        ("Seeds 001", True),
        ("seed\n000", True),
        ("The seed's finest RQ2 granularity", True),
        ("the seed\u2019s pattern", True),
        ("as the seed paper does", True),
        ("the source\npaper (simulation-based validation)", True),
        ("the documented fallback (`SEED_003_THRESHOLD_M`)", True),
    ],
)
def test_the_reference_patterns_catch(text: str, caught: bool) -> None:
    assert any(pattern.search(text) for pattern in (ISSUE_REFERENCE, SEED_NICKNAME, UNDEFINED_SOURCE)) is caught


@pytest.mark.parametrize(
    "text",
    [
        "`--seed 5703505522692849110`",
        "[works](#works-it-builds-on)",
        "three training seeds (14, 9, 7 %)",
        "each robot is reset with the case's seed",
        "the suite's seed, the seed of the case",
        "the paper's baseline (the Actuators 2025 study)",
        "a source point above the patient",
    ],
)
def test_the_reference_patterns_let_pass(text: str) -> None:
    assert not ISSUE_REFERENCE.search(text)
    assert not SEED_NICKNAME.search(text)
    assert not UNDEFINED_SOURCE.search(text)


def subcommand_parsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def takes_an_action_word(parser: argparse.ArgumentParser) -> bool:
    """Whether the subcommand's first positional is a choice of words (``cosim errors collect``,
    ``cosim experiment rq1``), so the word after the subcommand is part of what must parse."""
    positionals = [a for a in parser._actions if not a.option_strings and a.dest != "help"]
    return bool(positionals) and positionals[0].choices is not None


def shown_commands() -> list[tuple[str, ...]]:
    """Every distinct ``cosim SUBCOMMAND [ACTION]`` in the fenced code blocks of README.md and docs/*.md."""
    parsers = subcommand_parsers()
    commands: set[tuple[str, ...]] = set()
    for page in DOC_PAGES:
        _, code = split_fenced(page.read_text(encoding="utf-8"))
        for line in code:
            for match in COSIM_COMMAND.finditer(line):
                name, word = match.group(1), match.group(2)
                wanted = name in parsers and word is not None and takes_an_action_word(parsers[name])
                commands.add((name, word) if wanted else (name,))
    return sorted(commands)


SHOWN = shown_commands()


def test_the_code_blocks_show_many_commands() -> None:
    assert len(SHOWN) >= 20, SHOWN
    assert {c[0] for c in SHOWN} >= {"testgen", "campaign", "session", "check", "run-case", "report"}


@pytest.mark.parametrize("command", SHOWN, ids=" ".join)
def test_every_shown_command_parses(command: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> None:
    assert help_exit_code(command) == 0, capsys.readouterr().err


def help_exit_code(command: tuple[str, ...]) -> int:
    """``cosim COMMAND --help`` in-process: argparse exits 0 after the help, main returns 1 on a usage error."""
    try:
        return main([*command, "--help"])
    except SystemExit as exc:
        return int(exc.code or 0)


@pytest.mark.parametrize("command", [("no-such-command",), ("errors", "no-such-action"), ("experiment", "rq9")])
def test_a_wrong_command_does_not_parse(command: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> None:
    assert help_exit_code(command) != 0
    assert "error:" in capsys.readouterr().err


def test_the_readme_table_lists_every_subcommand() -> None:
    """The README's command table has one row per subcommand of ``cosim --help``, each linked to a guide."""
    rows = re.findall(r"^\| `cosim ([a-z-]+)` \|[^|]+\| \[[^\]]+\]\(([^)]+)\) \|$", README_TEXT, re.MULTILINE)
    assert sorted(name for name, _ in rows) == sorted(subcommand_parsers())


README_TEXT = (ROOT / "README.md").read_text(encoding="utf-8")
