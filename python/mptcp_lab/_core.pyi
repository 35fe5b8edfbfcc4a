"""The native part of mptcp_lab (Rust, PyO3). Use the functions of `mptcp_lab` instead."""

from os import PathLike
from pathlib import Path
from typing import TypedDict

VERSION: str

class ScenarioError(ValueError):
    file: str
    line: int
    column: int
    field: str
    message: str
    errors: list[tuple[str, int, int, str, str]]

class RunError(RuntimeError): ...

class TaskSpec(TypedDict):
    text: str
    file: str
    seeds: int
    set: list[str]
    backend: str
    duration: str | None

class Campaign:
    def __init__(
        self,
        scenario: str | PathLike[str],
        seeds: int,
        set: list[str],
        backend: str,
        duration: str | None = None,
        out: str | PathLike[str] | None = None,
    ) -> None: ...
    @property
    def out(self) -> Path: ...
    def tasks(self) -> list[tuple[int, str, str, int]]: ...
    def check(self, jobs: int) -> None: ...
    def missing(self, other_versions: str) -> list[int]: ...
    def run(self, todo: list[int], jobs: int) -> None: ...
    def save(self, result: bytes) -> int: ...
    def summarize(self, other_versions: str) -> None: ...
    def spec(self) -> TaskSpec: ...

def run_task(spec: TaskSpec, index: int, key: str) -> bytes: ...
def write_report(dir: str | PathLike[str]) -> str: ...
def check(path: str | PathLike[str], set: list[str]) -> str: ...
