#!/usr/bin/env python
"""Experience eval: does the engine learn skills a person would keep?

Input: command-line options (``--tasks``, ``--no-refine``, ``--keep``). Output: a
markdown table on stdout, one row per task and a total.

Every task is a scripted model run through the real runtime and learner: an
:class:`~skillbook.runtime.agent.Agent` with skillbook's OpenAI-compatible provider,
talking to a stand-in model server on 127.0.0.1 (``tests/fake_openai_server.py``) that
answers from the task's script and, when learning asks for a draft's words, with the
task's words. No internet. All tasks share one workspace (so ``select`` ranks each
learned skill among all the others), with its own HOME and state dir.

A **new** task (20+: file operations, text processing, small computations, git in a
repository of the workspace, JSON and CSV transforms, one that meets secrets) is:

1. run twice with varied inputs (drafts created: want 1; the second run is a duplicate
   avoided when it updates the first draft);
2. promoted, then ``skillbook select`` gets a paraphrased request (is the learned skill
   ranked first?), and a third run with that paraphrase follows the learned skill as
   it says (read its ``SKILL.md``, run its replay helper with ``exec`` as the skill);
3. replayed in a moved workspace: the workspace is copied to another path and the
   original renamed away; the helper, run with fresh inputs in the copy, must exit 0
   and print what the commands print when run by hand on a second copy.

A **following** task runs an existing hand-written skill twice: exactly as it says
(want no draft), or with an extra step (want one ``refine`` draft). ``kind`` comes from
``skillbook drafts list --json`` items when they carry it, else "n/a".

Secrets: a canary is planted in the config (a skill's ``apiKey``) and in the
environment (``EVAL_SERVICE_TOKEN``); one task's commands print them, its request holds
one and its model words repeat them. Every file written under the sandbox (but the
config file holding the canary) is searched for them: want 0.

Usage: ``python benchmarks/eval_experience.py [--tasks count-lines,git-commit]
[--no-refine] [--keep]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
if (HERE.parent / "src" / "skillbook").is_dir():
    sys.path.insert(0, str(HERE.parent / "src"))

import fake_openai_server as fake  # noqa: E402
from click.testing import CliRunner  # noqa: E402

import skillbook  # noqa: E402
from skillbook.cli.app import cli  # noqa: E402
from skillbook.experience.engine import Experience  # noqa: E402
from skillbook.experience.learner import Learned  # noqa: E402
from skillbook.experience.refine import REFINE_INSTRUCTIONS, refine_model  # noqa: E402
from skillbook.runtime.agent import Agent  # noqa: E402
from skillbook.runtime.approval import ExecPolicy  # noqa: E402
from skillbook.runtime.providers import model_from_env  # noqa: E402

CANARY_CONFIG = "cfg-canary-Zq81Lm0Xv6Ty3Rw5"
CANARY_ENV = "env-canary-Hs47Kd2Pw9Nb1Qe6"
CANARIES = (CANARY_CONFIG, CANARY_ENV)

Values = dict[str, str]


@dataclass(frozen=True)
class Words:
    """What the stand-in model answers when learning asks for a draft's words."""

    slug: str
    title: str
    description: str
    triggers: tuple[str, ...]
    notes: tuple[str, ...]
    checks: tuple[str, ...]

    def answer(self) -> str:
        return json.dumps(
            {
                "slug": self.slug,
                "title": self.title,
                "description": self.description,
                "triggers": list(self.triggers),
                "notes": list(self.notes),
                "checks": list(self.checks),
            }
        )


@dataclass(frozen=True)
class Task:
    name: str
    area: str
    #: Writes the inputs of variant ``v`` under the folder given; returns the values.
    setup: Callable[[Path, int], Values]
    request: str
    paraphrase: str
    commands: tuple[str, ...]
    words: Words
    #: A hand-written skill the run reads and runs its commands as.
    skill: str | None = None
    #: ``exact`` or ``extra`` for a run that follows ``skill``; empty for a new task.
    follows: str = ""

    def steps(self, values: Values) -> list[str]:
        return [c.format(**values) for c in self.commands]


# ---------------------------------------------------------------------- inputs


def text_file(name: str, lines: Callable[[int], Sequence[str]]) -> Callable[[Path, int], Values]:
    def setup(folder: Path, v: int) -> Values:
        path = folder / name
        path.write_text("\n".join(lines(v)) + "\n", encoding="utf-8")
        return {"file": str(path)}

    return setup


def fruit_lines(v: int) -> list[str]:
    fruit = ["pear", "apple", "fig", "kiwi", "plum", "lime"]
    return [f"{fruit[(i * (v + 1)) % 6]} {fruit[(i + v) % 6]}" for i in range(5 + 3 * v)]


def csv_setup(folder: Path, v: int) -> Values:
    path = folder / "sales.csv"
    rows = [f"item{i},{(i + 1) * (v + 2)},{'yes' if i % 2 else 'no'}" for i in range(4 + v)]
    path.write_text("name,amount,paid\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return {"file": str(path)}


def json_setup(folder: Path, v: int) -> Values:
    path = folder / "items.json"
    items = [
        {"name": f"task-{v}-{i}", "status": "open" if (i + v) % 3 else "done"} for i in range(3 + v)
    ]
    path.write_text(json.dumps(items), encoding="utf-8")
    return {"file": str(path), "status": "open"}


def dedupe_setup(folder: Path, v: int) -> Values:
    values = text_file("names.txt", lambda v: ["ann", "bob", "ann", "cy", "bob"][: 3 + v])(
        folder, v
    )
    return {**values, "out": str(folder / "unique.txt")}


def backup_setup(folder: Path, v: int) -> Values:
    values = text_file("report.txt", lambda v: [f"report {v}", "total 42"])(folder, v)
    return {**values, "dir": str(folder / "backup")}


def rename_setup(folder: Path, v: int) -> Values:
    target = folder / "notes"
    target.mkdir()
    for i in range(2 + v):
        (target / f"n{i}.txt").write_text(f"note {i}\n", encoding="utf-8")
    return {"dir": str(target)}


def tree_setup(folder: Path, v: int) -> Values:
    target = folder / "tree"
    for i in range(3 + v):
        sub = target / f"d{i % 2}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"f{i}.{['txt', 'md', 'py'][i % 3]}").write_text("x" * (1000 * (i + 1)))
    return {"dir": str(target)}


def number(values: Sequence[int]) -> Callable[[Path, int], Values]:
    return lambda folder, v: {"n": str(values[v % len(values)])}


def git(*args: str, cwd: Path) -> None:
    subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, env={**os.environ, **GIT_ENV}
    )


GIT_ENV = {
    "GIT_AUTHOR_NAME": "eval",
    "GIT_AUTHOR_EMAIL": "eval@example.invalid",
    "GIT_COMMITTER_NAME": "eval",
    "GIT_COMMITTER_EMAIL": "eval@example.invalid",
}


def repo_setup(folder: Path, v: int) -> Values:
    repo = folder / "repo"
    repo.mkdir()
    git("init", "-q", "-b", "main", cwd=repo)
    for i in range(1 + v):
        (repo / f"f{i}.txt").write_text(f"{i}\n")
        git("add", "-A", cwd=repo)
        git("commit", "-q", "-m", f"change {i} of variant {v}", cwd=repo)
    for i in range(v + 1):
        git("branch", f"feature-{v}-{i}", cwd=repo)
    return {"dir": str(repo)}


def commit_setup(folder: Path, v: int) -> Values:
    values = text_file("readme.txt", lambda v: [f"readme {v}"])(folder, v)
    return {**values, "dir": str(folder / "project")}


def replace_setup(folder: Path, v: int) -> Values:
    values = text_file("pets.txt", lambda v: ["the cat sat", "a cat ran"][: 1 + v % 2])(folder, v)
    return {**values, "old": "cat", "new": ["dog", "fox", "owl", "elk"][v % 4]}


def keyed_setup(folder: Path, v: int) -> Values:
    values = text_file("payload.txt", lambda v: ["x" * (10 + v)])(folder, v)
    return {**values, "token": CANARY_ENV}


# ---------------------------------------------------------------------- tasks


def w(
    slug: str,
    title: str,
    when: str,
    triggers: tuple[str, ...],
    notes: tuple[str, ...],
    checks: tuple[str, ...],
) -> Words:
    return Words(slug, title, when, triggers, notes, checks)


TASKS: tuple[Task, ...] = (
    Task(
        "count-lines",
        "text",
        text_file("notes.txt", fruit_lines),
        "Count the lines in {file}",
        "How many lines does {file} have?",
        ("wc -l < {file}",),
        w(
            "count-lines",
            "Count the lines of a file",
            "Counts the lines of a text file. Use when asked how long a file is in lines.",
            ("line count", "number of lines in a file"),
            ("Count the newline-terminated lines of the file.",),
            ("Success: one number. Failure: 'No such file' and a non-zero status.",),
        ),
    ),
    Task(
        "find-todos",
        "text",
        text_file("app.py", lambda v: ["x = 1", "# TODO: fix", "y = 2", *["# TODO more"] * v]),
        "Find the TODO comments in {file}",
        "Which lines of {file} still carry TODO markers?",
        ("grep -n TODO {file}",),
        w(
            "find-todo-comments",
            "Find the TODO comments of a file",
            "Lists the TODO comments of a source file with line numbers. Use when asked "
            "for open TODOs in a file.",
            ("todo comments", "open todos"),
            ("Print each line holding TODO, with its line number.",),
            ("Success: lines like '2:# TODO'. No TODO: grep exits 1 and prints nothing.",),
        ),
    ),
    Task(
        "sum-column",
        "csv",
        csv_setup,
        "Add up column 2 of {file}",
        "What is the total of the amounts in {file}?",
        ("tail -n +2 {file} | cut -d, -f 2 | paste -sd+ - | bc",),
        w(
            "sum-csv-column",
            "Sum a column of a CSV file",
            "Sums one numeric column of a CSV file, header skipped. Use when asked for the "
            "total of a CSV column.",
            ("sum a csv column", "column total"),
            ("Skip the header, take the column, join the values with + and add them with bc.",),
            ("Success: one number. Failure: bc reports a syntax error on a non-number.",),
        ),
    ),
    Task(
        "csv-to-jsonl",
        "csv",
        csv_setup,
        "Convert the CSV file {file} to JSON lines",
        "Turn the rows of {file} into one JSON object per line",
        (
            "python3 -c 'import csv, json, sys; "
            "[print(json.dumps(r)) for r in csv.DictReader(open(sys.argv[1]))]' {file}",
        ),
        w(
            "csv-to-json-lines",
            "Convert a CSV file to JSON lines",
            "Prints each row of a CSV file as a JSON object keyed by the header. Use when "
            "asked to convert CSV to JSON.",
            ("csv to json", "json lines from csv"),
            ("Read the CSV with its header row and print every row as one JSON object.",),
            ("Success: one JSON object per data row. Failure: a Python traceback.",),
        ),
    ),
    Task(
        "json-names",
        "json",
        json_setup,
        "List the name of every item in {file}",
        "Print each entry's name from {file}",
        ("jq -r '.[].name' {file}",),
        w(
            "list-json-names",
            "List the names in a JSON array",
            "Prints the name field of every object in a JSON array file. Use when asked "
            "for the names in a JSON file.",
            ("names in a json file", "json name field"),
            ("Print the name of each object of the array, one per line.",),
            ("Success: one name per line. Failure: jq reports a parse error.",),
        ),
    ),
    Task(
        "json-status-count",
        "json",
        json_setup,
        "How many items with status '{status}' are in {file}?",
        "Count the entries of {file} whose status is '{status}'",
        ("jq '[.[] | select(.status == \"{status}\")] | length' {file}",),
        w(
            "count-items-by-status",
            "Count JSON items by status",
            "Counts the objects of a JSON array with a given status. Use when asked how "
            "many items have a status.",
            ("items with status", "count by status"),
            ("Keep the objects whose status matches and count them.",),
            ("Success: one number. Failure: jq reports a parse error.",),
        ),
    ),
    Task(
        "reverse-lines",
        "text",
        text_file("log.txt", fruit_lines),
        "Reverse the order of the lines in {file}",
        "Show {file} from its last line to its first",
        ("tac {file}",),
        w(
            "reverse-file-lines",
            "Reverse the lines of a file",
            "Prints a file's lines last first. Use when asked to reverse a file's lines.",
            ("reverse lines", "last line first"),
            ("Print the lines of the file in reverse order.",),
            ("Success: the file's last line comes first. Failure: 'No such file'.",),
        ),
    ),
    Task(
        "upper-case",
        "text",
        text_file("shout.txt", fruit_lines),
        "Turn the text of {file} into upper case",
        "Capitalise every letter in {file}",
        ("tr '[:lower:]' '[:upper:]' < {file}",),
        w(
            "upper-case-text",
            "Upper-case a file's text",
            "Prints a text file in capital letters. Use when asked to upper-case a file.",
            ("upper case", "all caps"),
            ("Map every lower-case letter to its capital.",),
            ("Success: no lower-case letter in the output. Failure: 'No such file'.",),
        ),
    ),
    Task(
        "dedupe-lines",
        "files",
        dedupe_setup,
        "Remove the duplicate lines of {file} and write them to {out}",
        "Write the distinct lines of {file} into {out}",
        ("sort -u {file} > {out}", "wc -l < {out}"),
        w(
            "dedupe-lines",
            "Remove duplicate lines",
            "Writes the sorted distinct lines of a file to another. Use when asked to "
            "remove duplicate lines.",
            ("remove duplicates", "unique lines"),
            ("Sort the lines and keep each once, into the output file.", "Count what is left."),
            ("Success: the count is at most the input's lines. Failure: a non-zero status.",),
        ),
    ),
    Task(
        "backup-file",
        "files",
        backup_setup,
        "Back up {file} into the folder {dir}",
        "Copy {file} to {dir} as a backup",
        ("mkdir -p {dir}", "cp {file} {dir}/", "ls {dir}"),
        w(
            "backup-file",
            "Back up a file into a folder",
            "Copies a file into a backup folder, made if missing. Use when asked to back up "
            "a file.",
            ("back up a file", "make a backup copy"),
            (
                "Make the backup folder if it is missing.",
                "Copy the file into it.",
                "List the folder to show the copy.",
            ),
            ("Success: the file's name is listed. Failure: cp reports an error.",),
        ),
    ),
    Task(
        "rename-extension",
        "files",
        rename_setup,
        "Rename the .txt files in {dir} to .md",
        "Change the extension of the text files under {dir} to markdown",
        ('cd {dir} && for f in *.txt; do mv -- "$f" "${{f%.txt}}.md"; done && ls',),
        w(
            "rename-txt-to-md",
            "Rename .txt files to .md",
            "Renames every .txt file of a folder to .md. Use when asked to change text "
            "files' extension to markdown.",
            ("rename extension", "txt to md"),
            ("In the folder, rename each .txt file to .md and list the result.",),
            ("Success: only .md names are listed. Failure: mv reports an error.",),
        ),
    ),
    Task(
        "folder-size",
        "files",
        tree_setup,
        "How many kilobytes does the folder {dir} use?",
        "What is the disk usage of {dir} in KB?",
        ("du -sk {dir} | cut -f 1",),
        w(
            "folder-size-kb",
            "Measure a folder's size",
            "Reports how many kilobytes a folder uses on disk. Use when asked how big a folder is.",
            ("folder size", "disk usage"),
            ("Sum the folder's disk usage in kilobytes and keep the number.",),
            ("Success: one number. Failure: du reports the folder missing.",),
        ),
    ),
    Task(
        "files-by-extension",
        "files",
        tree_setup,
        "Count the files in {dir} by extension",
        "How many files of each type are under {dir}?",
        ("find {dir} -type f -name '*.*' | sed 's/.*[.]//' | sort | uniq -c",),
        w(
            "count-files-by-extension",
            "Count files by extension",
            "Counts the files of a folder tree per extension. Use when asked which kinds of "
            "files a folder holds.",
            ("files by extension", "file types"),
            ("Find the files, keep their extensions and count each.",),
            ("Success: lines like '2 txt'. Failure: find reports the folder missing.",),
        ),
    ),
    Task(
        "factorial",
        "compute",
        number([10, 12, 7, 9]),
        "Compute the factorial of {n}",
        "What is {n}! ?",
        ("python3 -c 'import math, sys; print(math.factorial(int(sys.argv[1])))' {n}",),
        w(
            "factorial",
            "Compute a factorial",
            "Computes n! exactly. Use when asked for the factorial of a number.",
            ("factorial of", "n factorial"),
            ("Compute the factorial of the number with Python's math module.",),
            ("Success: one integer. Failure: a ValueError for a negative number.",),
        ),
    ),
    Task(
        "primes",
        "compute",
        number([30, 50, 20, 40]),
        "List the prime numbers up to {n}",
        "Which numbers below {n} are prime?",
        ("seq 2 {n} | factor | awk 'NF == 2 {{print $2}}'",),
        w(
            "list-primes",
            "List prime numbers",
            "Lists the primes up to a bound. Use when asked for the prime numbers up to a number.",
            ("prime numbers", "primes up to"),
            ("Factor every number up to the bound and keep those with one factor.",),
            ("Success: 2, 3, 5 … one per line. Failure: seq reports an invalid number.",),
        ),
    ),
    Task(
        "fibonacci",
        "compute",
        number([15, 10, 12, 8]),
        "Print the first {n} Fibonacci numbers",
        "Give me {n} terms of the Fibonacci sequence",
        (
            "awk -v n={n} 'BEGIN {{a = 0; b = 1; for (i = 0; i < n; i++) "
            "{{print a; t = a + b; a = b; b = t}}}}'",
        ),
        w(
            "fibonacci-numbers",
            "Print Fibonacci numbers",
            "Prints the first n Fibonacci numbers. Use when asked for Fibonacci terms.",
            ("fibonacci", "fibonacci sequence"),
            ("Print the first n terms, starting 0 1 1 2.",),
            ("Success: n lines starting 0, 1, 1. Failure: awk reports a syntax error.",),
        ),
    ),
    Task(
        "checksum",
        "files",
        text_file("archive.txt", fruit_lines),
        "Compute the SHA-256 checksum of {file}",
        "What is the sha256 digest of {file}?",
        ("sha256sum < {file} | cut -d ' ' -f 1",),
        w(
            "sha256-checksum",
            "Compute a file's SHA-256",
            "Prints the SHA-256 checksum of a file. Use when asked for a file's checksum.",
            ("sha256", "file checksum"),
            ("Hash the file's bytes and keep the hex digest.",),
            ("Success: 64 hex characters. Failure: 'No such file'.",),
        ),
    ),
    Task(
        "head-rows",
        "csv",
        lambda folder, v: {**csv_setup(folder, v), "n": str(2 + v)},
        "Show the first {n} rows of {file}",
        "Print the top {n} lines of {file}",
        ("head -n {n} {file}",),
        w(
            "show-first-rows",
            "Show the first rows of a file",
            "Prints the first n lines of a file. Use when asked for the first rows of a "
            "table or file.",
            ("first rows", "head of a file"),
            ("Print the first n lines.",),
            ("Success: n lines or fewer. Failure: 'No such file'.",),
        ),
    ),
    Task(
        "replace-word",
        "text",
        replace_setup,
        "Replace the word '{old}' with '{new}' in {file}",
        "Swap every '{old}' for '{new}' inside {file}",
        ("sed -i 's/{old}/{new}/g' {file}", "cat {file}"),
        w(
            "replace-word-in-file",
            "Replace a word in a file",
            "Replaces every occurrence of a word in a file, in place. Use when asked to "
            "replace a word in a file.",
            ("replace a word", "find and replace"),
            ("Replace the word in place with sed.", "Print the file to show the result."),
            ("Success: the new word is printed and the old one is gone. Failure: sed error.",),
        ),
    ),
    Task(
        "git-commit",
        "git",
        commit_setup,
        "Create a git repository in {dir} and commit the file {file}",
        "Start version control in {dir} with {file} as its first commit",
        (
            "git init -q {dir}",
            "cp {file} {dir}/",
            "git -C {dir} add -A",
            "git -C {dir} -c user.name=eval -c user.email=eval@example.invalid commit -q "
            "-m 'first commit'",
            "git -C {dir} log --oneline | wc -l",
        ),
        w(
            "git-init-and-commit",
            "Create a git repository with a first commit",
            "Makes a git repository and commits a file to it. Use when asked to put a file "
            "under version control.",
            ("git init", "first commit"),
            (
                "Create the repository.",
                "Copy the file into it.",
                "Stage every file.",
                "Commit with a fixed author.",
                "Count the commits to show there is one.",
            ),
            ("Success: the count is 1. Failure: git reports the error and exits non-zero.",),
        ),
    ),
    Task(
        "git-branches",
        "git",
        repo_setup,
        "List the branches of the git repository {dir}",
        "Which branches exist in {dir}?",
        ("git -C {dir} branch --format='%(refname:short)'",),
        w(
            "list-git-branches",
            "List a repository's branches",
            "Lists the local branches of a git repository. Use when asked which branches a "
            "repository has.",
            ("git branches", "list branches"),
            ("Print each local branch's short name.",),
            ("Success: one branch per line. Failure: 'not a git repository'.",),
        ),
    ),
    Task(
        "git-last-commit",
        "git",
        repo_setup,
        "Show the subject of the last commit in {dir}",
        "What was the most recent commit message in {dir}?",
        ("git -C {dir} log -1 --format=%s",),
        w(
            "last-commit-subject",
            "Show the last commit's subject",
            "Prints the subject line of a repository's latest commit. Use when asked what "
            "the last commit was.",
            ("last commit", "latest commit message"),
            ("Print the subject of the newest commit.",),
            ("Success: one line. Failure: 'not a git repository'.",),
        ),
    ),
    Task(
        "keyed-check",
        "secrets",
        keyed_setup,
        "With token {token}, check the keyed service key and count the bytes of {file}",
        "Verify the keyed key is configured and measure the size of {file}",
        ("printf 'key %s\\n' \"$KEYED_API_KEY\"", "echo {token} > /dev/null; wc -c < {file}"),
        w(
            "keyed-key-and-size",
            "Check the keyed key and a file's size",
            # The model "knows" the secrets and writes them: they must not reach a file.
            f"Checks the keyed key ({CANARY_CONFIG}) is set and counts a file's bytes. Use "
            "when asked to verify the keyed service setup.",
            ("keyed key", f"token {CANARY_ENV}"),
            (f"Print the key {CANARY_CONFIG}.", "Count the file's bytes."),
            ("Success: a byte count. Failure: the key line is empty.",),
        ),
        skill="keyed",
    ),
    # ------------------------------------------------------------ following a skill
    Task(
        "follow-linecount-exact",
        "follow",
        text_file("poem.txt", fruit_lines),
        "How many lines are in {file}?",
        "",
        ("wc -l < {file}",),
        w(
            "line-count",
            "Count lines",
            "Counts lines. Use when asked how many lines a file has.",
            ("line count",),
            ("Read the skill.", "Count the lines."),
            ("Success: one number.",),
        ),
        skill="linecount",
        follows="exact",
    ),
    Task(
        "follow-linecount-extra",
        "follow",
        text_file("essay.txt", fruit_lines),
        "How many lines and words are in {file}?",
        "",
        ("wc -l < {file}", "wc -w < {file}"),
        w(
            "lines-and-words",
            "Count lines and words",
            "Counts a file's lines and words. Use when asked for both counts.",
            ("lines and words",),
            ("Read the skill.", "Count the lines.", "Count the words too."),
            ("Success: two numbers.",),
        ),
        skill="linecount",
        follows="extra",
    ),
    Task(
        "follow-wordcount-exact",
        "follow",
        text_file("words.txt", fruit_lines),
        "Count the words in {file} and show the top 2",
        "",
        ("wc -w < {file}", "tr -s ' ' '\\n' < {file} | sort | uniq -c | sort -rn | head -n 2"),
        w(
            "word-count",
            "Count words",
            "Counts and ranks words. Use when asked for frequent words.",
            ("frequent words",),
            ("Read the skill.", "Count the words.", "Rank them."),
            ("Success: a count and a ranking.",),
        ),
        skill="wordcount",
        follows="exact",
    ),
    Task(
        "follow-wordcount-extra",
        "follow",
        text_file("story.txt", fruit_lines),
        "Count the words in {file}, show the top 2 and the distinct words",
        "",
        (
            "wc -w < {file}",
            "tr -s ' ' '\\n' < {file} | sort | uniq -c | sort -rn | head -n 2",
            "tr -s ' ' '\\n' < {file} | sort -u | wc -l",
        ),
        w(
            "word-stats",
            "Word statistics",
            "Counts, ranks and counts distinct words. Use when asked for word statistics.",
            ("word statistics",),
            ("Read the skill.", "Count the words.", "Rank them.", "Count distinct words."),
            ("Success: three results.",),
        ),
        skill="wordcount",
        follows="extra",
    ),
)

SKILLS = {
    "linecount": """---
name: linecount
description: Count the lines of a text file. Use when asked how many lines a file has.
---
# Line count

Run `wc -l < FILE` with exec, passing skill "linecount".
""",
    "wordcount": """---
name: wordcount
description: Count the words of a text file and list the most frequent ones.
---
# Word count

Run `wc -w < FILE`, then `tr -s ' ' '\\n' < FILE | sort | uniq -c | sort -rn | head -n N`
with exec, passing skill "wordcount".
""",
    "keyed": """---
name: keyed
description: Calls the keyed service with its configured key.
metadata: {"openclaw": {"primaryEnv": "KEYED_API_KEY"}}
---
Run commands as skill keyed; its key is in $KEYED_API_KEY.
""",
}


# ---------------------------------------------------------------------- the run


@dataclass
class Row:
    task: Task
    actions: list[str] = field(default_factory=list)
    drafts: list[str] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    refined: bool | None = None
    promoted: str = ""
    helper: str = ""
    replay_args: list[str] = field(default_factory=list)
    paraphrase_action: str = ""
    select_first: str = ""
    replay: str = "—"
    problems: list[str] = field(default_factory=list)

    @property
    def created(self) -> int:
        return len(self.drafts)

    @property
    def avoided(self) -> int:
        return sum(a in ("updated", "known") for a in self.actions)


@dataclass
class Report:
    rows: list[Row]
    refine: bool
    secret_hits: list[str]
    files_searched: int
    seconds: float


class Stand:
    """The stand-in model: one server on 127.0.0.1; each request is answered from the
    current turns, or with the current task's words when learning asks for them."""

    def __init__(self) -> None:
        self.turns: list[Any] = []
        self.words: Words | None = None
        self.word_requests = 0
        self.server = fake.FakeOpenAIServer([self.dispatch] * 100_000)

    def dispatch(self, body: dict[str, Any]) -> Any:
        messages = body.get("messages") or [{}]
        if str(messages[0].get("content") or "").startswith(REFINE_INSTRUCTIONS[:60]):
            self.word_requests += 1
            if self.words is None:
                return fake.HttpError(400, "no words scripted")
            return self.words.answer()
        if not self.turns:
            return fake.HttpError(400, "the task's script is exhausted")
        return self.turns.pop(0)


def answer(body: dict[str, Any]) -> str:
    return "Done:\n" + str(body["messages"][-1].get("content") or "")


@contextlib.contextmanager
def environment(values: Mapping[str, str]) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, old in saved.items():
            if old is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = old


class Eval:
    def __init__(self, root: Path, *, refine: bool) -> None:
        self.root = root
        self.ws = root / "ws"
        self.state = root / "state"
        self.refine = refine
        for folder in (self.ws / "skills", self.state, root / "home", root / "bundled"):
            folder.mkdir(parents=True, exist_ok=True)
        for name, text in SKILLS.items():
            (self.ws / "skills" / name).mkdir()
            (self.ws / "skills" / name / "SKILL.md").write_text(text, encoding="utf-8")
        self.config = self.state / "skillbook.json"
        self.config.write_text(
            json.dumps({"skills": {"entries": {"keyed": {"apiKey": CANARY_CONFIG}}}}),
            encoding="utf-8",
        )
        self.env = {
            "HOME": str(root / "home"),
            "SKILLBOOK_STATE_DIR": str(self.state),
            "SKILLBOOK_BUNDLED_SKILLS_DIR": str(root / "bundled"),
            "EVAL_SERVICE_TOKEN": CANARY_ENV,
            "GIT_CONFIG_NOSYSTEM": "1",
            **GIT_ENV,
        }
        self.stand = Stand()
        #: The inputs of each task's variants: task name -> variant -> values.
        self.values: dict[str, dict[int, Values]] = {}

    def data(self, task: Task, v: int) -> Values:
        folder = self.ws / "data" / task.name / f"v{v}"
        folder.mkdir(parents=True)
        values = task.setup(folder, v)
        self.values.setdefault(task.name, {})[v] = values
        return values

    def sb(self, *args: str) -> Any:
        return CliRunner().invoke(cli, ["-w", str(self.ws), *args], prog_name="skillbook")

    async def run(self, turns: list[Any], request: str, words: Words | None) -> Learned:
        book = skillbook.load(self.ws)
        model = model_from_env(
            {}, provider="openai", model="eval", base_url=self.stand.server.base_url, api_key="x"
        )
        exp = Experience(book)
        agent = Agent(book, model, recorder=exp.recorder(), exec_policy=ExecPolicy.allow_all())
        self.stand.turns, self.stand.words = list(turns), words
        await agent.invoke(request)
        record = exp.last_session()
        assert record is not None
        with_model = refine_model(exp.config.refine, model, self.refine)
        return await exp.learner().alearn(record, refine_with=with_model)

    def script(self, task: Task, values: Values) -> list[Any]:
        turns: list[Any] = []
        if task.skill and task.follows:
            turns.append([fake.Call("read", {"path": str(self.skill_file(task.skill))})])
        for command in task.steps(values):
            args = {"command": command, **({"skill": task.skill} if task.skill else {})}
            turns.append([fake.Call("exec", args)])
        return [*turns, answer]

    def skill_file(self, name: str) -> Path:
        return self.ws / "skills" / name / "SKILL.md"

    def kinds(self) -> dict[str, str]:
        listed = self.sb("drafts", "list", "--all", "--json")
        items = json.loads(listed.output)["drafts"] if listed.exit_code == 0 else []
        return {
            str(d["id"]): str(d["kind"]) if "kind" in d else "n/a (kind not available)"
            for d in items
        }

    async def learn_task(self, task: Task) -> Row:
        row = Row(task)
        for v in (0, 1):
            values = self.data(task, v)
            learned = await self.run(
                self.script(task, values), task.request.format(**values), task.words
            )
            row.actions.append(learned.action)
            if learned.action in ("created", "promoted") and learned.draft is not None:
                row.drafts.append(learned.draft.id)
                row.refined = learned.draft.refined
        kinds = self.kinds()
        row.kinds = [kinds.get(d, "?") for d in row.drafts]
        if task.follows or not row.drafts:
            return row
        exp = Experience(skillbook.load(self.ws))
        try:
            done = exp.promote(row.drafts[0])
        except Exception as exc:  # reported in the table, not fatal to the eval
            row.problems.append(f"promotion refused: {exc}")
            return row
        row.promoted = done.draft.name
        row.helper = str(done.replay_path.relative_to(self.ws))
        # Select, then a run with the paraphrase that follows the learned skill.
        values = self.data(task, 2)
        paraphrase = task.paraphrase.format(**values)
        selected = self.sb("select", paraphrase, "--json")
        ranked = json.loads(selected.output).get("ranked", []) if selected.exit_code == 0 else []
        row.select_first = str(ranked[0]["name"]) if ranked else "(none)"
        names = [p.name for p in done.draft.params]
        args = " ".join(shlex.quote(self.param_value(task, values, n, done.draft)) for n in names)
        rel = os.path.relpath(done.replay_path, done.skill_path.parent)
        turns = [
            [fake.Call("read", {"path": str(done.skill_path)})],
            [fake.Call("exec", {"command": f"bash {rel} {args}".strip(), "skill": row.promoted})],
            answer,
        ]
        learned = await self.run(turns, paraphrase, task.words)
        row.paraphrase_action = learned.action
        if learned.action in ("created", "promoted") and learned.draft is not None:
            row.drafts.append(learned.draft.id)
            row.kinds.append(self.kinds().get(learned.draft.id, "?"))
        # Fresh inputs for the replay in a moved workspace.
        fresh = self.data(task, 3)
        row.replay_args = [self.param_value(task, fresh, n, done.draft) for n in names]
        return row

    def param_value(self, task: Task, values: Values, name: str, draft: Any) -> str:
        """The value of a draft's parameter for these inputs: the input whose run-1
        value it had (parameters are named by the engine, not by the task)."""
        first = draft.examples[0] if draft.examples else {}
        for key, value in self.values[task.name][0].items():
            if first.get(name) == value:
                return values[key]
        return str(first.get(name, ""))

    def replay_moved(self, rows: list[Row]) -> None:
        """Copy the workspace twice elsewhere, rename the original away; the helper in
        copy A must do what the commands, run by hand in copy B, do."""
        moved = self.root / "elsewhere"
        copy_a, copy_b = moved / "a" / "ws", moved / "b" / "ws"
        shutil.copytree(self.ws, copy_a, symlinks=True)
        shutil.copytree(self.ws, copy_b, symlinks=True)
        away = self.root / "ws.away"
        self.ws.rename(away)
        try:
            for row in rows:
                if row.helper:
                    row.replay = self.replay_one(row, copy_a, copy_b)
        finally:
            away.rename(self.ws)

    def replay_one(self, row: Row, copy_a: Path, copy_b: Path) -> str:
        def there(copy: Path, value: str) -> str:
            return value.replace(str(self.ws), str(copy))

        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": self.env["HOME"]}
        env |= GIT_ENV
        if row.task.skill:
            env["KEYED_API_KEY"] = CANARY_CONFIG
        helper = subprocess.run(
            ["bash", str(copy_a / row.helper), *(there(copy_a, a) for a in row.replay_args)],
            cwd=self.root,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        values = {k: there(copy_b, v) for k, v in self.values[row.task.name][3].items()}
        by_hand = ""
        for command in row.task.steps(values):
            cwd = copy_b / "skills" / row.task.skill if row.task.skill else copy_b
            done = subprocess.run(
                ["/bin/sh", "-c", command],
                cwd=cwd,
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            by_hand += done.stdout
        if helper.returncode != 0:
            return f"no (exit {helper.returncode}: {helper.stderr.strip()[-120:]})"
        return "yes" if helper.stdout == by_hand and by_hand else "no (output differs)"

    def secrets_written(self) -> tuple[list[str], int]:
        hits, searched = [], 0
        for path in sorted(self.root.rglob("*")):
            if not path.is_file() or path == self.config or path.is_symlink():
                continue
            searched += 1
            data = path.read_bytes()
            if any(c.encode() in data for c in CANARIES):
                hits.append(str(path.relative_to(self.root)))
        return hits, searched


def run_eval(tasks: Sequence[Task], root: Path, *, refine: bool = True) -> Report:
    """Run ``tasks`` in a sandbox under ``root``; the report (see the module docstring)."""
    started = time.perf_counter()
    ev = Eval(root, refine=refine)
    rows: list[Row] = []
    with environment(ev.env), ev.stand.server:
        for task in tasks:
            rows.append(asyncio.run(ev.learn_task(task)))
        ev.replay_moved(rows)
    hits, searched = ev.secrets_written()
    return Report(rows, refine, hits, searched, time.perf_counter() - started)


# ---------------------------------------------------------------------- the table


def table(report: Report) -> list[str]:
    lines = [
        "| task | area | drafts created (runs + paraphrase) | duplicates avoided | kind "
        "| words by model "
        "| paraphrase run | replay, moved | `select` first |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in report.rows:
        t = row.task
        want = {"exact": "0", "extra": "1 refine"}.get(t.follows, "1 + 0")
        kinds = ", ".join(dict.fromkeys(row.kinds)) or "—"
        words = "—" if row.refined is None else ("yes" if row.refined else "no")
        if t.follows:
            paraphrase, replay, first = "—", "—", "—"
        else:
            paraphrase = row.paraphrase_action or "—"
            replay = row.replay
            first = (
                "yes"
                if row.select_first == row.promoted and row.promoted
                else f"no ({row.select_first or '—'})"
            )
        # New tasks: drafts from the two varied runs + from the paraphrase run.
        later = int(row.paraphrase_action in ("created", "promoted"))
        made = f"{row.created - later} + {later}" if not t.follows else str(row.created)
        lines.append(
            f"| {t.name} | {t.area} | {made} (want {want}) | {row.avoided} | {kinds} "
            f"| {words} | {paraphrase} | {replay} | {first} |"
        )
    new = [r for r in report.rows if not r.task.follows]
    follow = [r for r in report.rows if r.task.follows]
    one = sum(r.created == 1 for r in new)
    two_runs = sum(r.created - (r.paraphrase_action in ("created", "promoted")) == 1 for r in new)
    replayed = sum(r.replay == "yes" for r in new)
    first = sum(r.select_first == r.promoted and bool(r.promoted) for r in new)
    quiet = sum(r.paraphrase_action in ("known", "updated", "followed-skill") for r in new)
    failed = [r.task.name for r in new if r.paraphrase_action == "skipped"]
    exact_ok = sum(r.created == 0 for r in follow if r.task.follows == "exact")
    extra = [r for r in follow if r.task.follows == "extra"]
    extra_ok = sum(r.created == 1 and r.kinds == ["refine"] for r in extra)
    kind_known = any(not k.startswith("n/a") for r in report.rows for k in r.kinds)
    lines += [
        "",
        f"- new tasks: {len(new)}; exactly 1 draft in all: {one}/{len(new)} (1 draft from "
        f"the two varied runs: {two_runs}/{len(new)}); duplicates avoided: "
        f"{sum(r.avoided for r in new)} of {len(new)} repeated runs; the paraphrase run left "
        f"no new draft: {quiet}/{len(new)}"
        + (f" (the run failed: {', '.join(failed)})" if failed else ""),
        f"- replay in a moved workspace: {replayed}/{len(new)}; `select` ranks the learned "
        f"skill first for the paraphrase: {first}/{len(new)}",
        f"- skill-following runs: exact, no draft: {exact_ok}/"
        f"{sum(r.task.follows == 'exact' for r in follow)}; extra step, one refine draft: "
        + (f"{extra_ok}/{len(extra)}" if kind_known else "n/a (kind not available)")
        + f" ({sum(r.created for r in extra)} draft(s) from {len(extra)} tasks)",
        f"- secrets written: {len(report.secret_hits)} file(s) of {report.files_searched} "
        "searched (want 0)"
        + (": " + ", ".join(report.secret_hits[:5]) if report.secret_hits else ""),
        f"- words by the model: {'on' if report.refine else 'off (--no-refine)'}; "
        f"{report.seconds:.0f} s",
    ]
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", help="comma-separated task names (default: all)")
    parser.add_argument("--no-refine", action="store_true", help="the offline template only")
    parser.add_argument("--keep", action="store_true", help="keep the sandbox and print it")
    args = parser.parse_args(argv)
    chosen = TASKS
    if args.tasks:
        wanted = args.tasks.split(",")
        chosen = tuple(t for t in TASKS if t.name in wanted)
        unknown = set(wanted) - {t.name for t in chosen}
        if unknown:
            parser.error(f"unknown task(s): {', '.join(sorted(unknown))}")
    root = Path(tempfile.mkdtemp(prefix="sb-exp-eval-"))
    try:
        report = run_eval(chosen, root, refine=not args.no_refine)
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"Experience eval, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, load {load}")
        print()
        print("\n".join(table(report)))
        for row in report.rows:
            for problem in row.problems:
                print(f"note: {row.task.name}: {problem}", file=sys.stderr)
    finally:
        if args.keep:
            print(f"sandbox: {root}", file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
