"""scripts/send-decisions: its table from counters (anywhere), and on this kernel a traced run
of a Reno flow through a drop-tail bottleneck (root, BTF, MPTCP; with
MPTCP_LAB_REQUIRE_KERNEL=1, as CI sets, a machine that cannot run it fails the test): the
decisions it rebuilds agree with `tcp_tso_should_defer()`'s rules, the command's exit status
comes back, and nothing stays attached, whether the command succeeds or fails."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest
from conftest import REPO, kernel_missing, load_script, require, two_host_scenario

TOOL = REPO / "scripts" / "send-decisions"

# 20 Mbit/s, 20 ms each way, a 35-packet drop-tail queue: the window is the limit, and ACKs
# come about a millisecond apart, where the rules both hold and send.
SCENARIO = two_host_scenario(
    "send-decisions",
    "8s",
    link="""
rate = "20Mbps"
delay = "20ms"
queue = { kind = "droptail", size = "35pkt" }
""",
    flow='cc = "reno"',
)


def load_tool() -> ModuleType:
    return load_script("send-decisions")


def test_the_table_gives_each_count_and_its_share() -> None:
    tool = load_tool()
    per_kind = tool.COUNTERS * tool.BUCKETS
    values = [0] * per_kind

    def put(counter: int, bucket: int, value: int) -> None:
        values[counter * tool.BUCKETS + bucket] = value

    put(tool.INTERVALS, 0, 200)
    put(tool.IN_RECOVERY, 0, 10)
    put(tool.FREE_AFTER_ACK, 1, 40)
    put(tool.FREE_AFTER_ACK, 2, 140)
    put(tool.FREE_AFTER_ACK, 5, 10)
    put(tool.ONE_FREE, 0, 10)
    put(tool.ONE_FREE, 1, 30)
    put(tool.VERDICT, 3, 9)
    put(tool.VERDICT, 0, 27)
    put(tool.VERDICT, 1, 1)
    put(tool.VERDICT, 2, 3)
    # After an interval that did not hold one: 4 ACKs released 3 segments, 1 released 6;
    # after one that deferred: 5 released 3; after one with under two waiting: 2 released 2
    # and 1 released 3 (not a deferral).
    put(tool.SENT_AFTER, 3, 4)
    put(tool.SENT_AFTER, 4, 1)
    put(tool.SENT_AFTER, tool.SENT_AFTER_STRIDE + 3, 5)
    put(tool.SENT_AFTER, 2 * tool.SENT_AFTER_STRIDE + 2, 2)
    put(tool.SENT_AFTER, 2 * tool.SENT_AFTER_STRIDE + 3, 1)
    table = tool.report([tool.Counts(values), tool.Counts([0] * per_kind)])
    rows = {
        cells[0].strip(): [c.strip() for c in cells[1:]]
        for line in table.splitlines()[2:]
        for cells in [line.strip("|").split("|")]
    }
    assert rows["left out: in Recovery or Loss"] == ["10 (5.0 %)", "0"]
    assert rows["window free after the ACK, before sending: 1"][0] == "40 (21.1 %)"
    assert rows["window free after the ACK, before sending: 3 or more"][0] == "10 (5.3 %)"
    assert rows["one free: held it for the next ACK"][0] == "10 (25.0 %)"
    assert rows["one free, two or more waiting: the rules agree"][0] == "36 (90.0 %)"
    assert rows["held where the rules say send"][0] == "1"
    assert rows["sent where the rules say hold"][0] == "3"
    released = "segments an ACK released 0 / 1 / 2 / 3 / 4+, the interval before: "
    assert rows[released + "did not hold one"][0] == "0 / 0 / 0 / 4 / 1"
    assert rows[released + "held one, two or more waiting"][0] == "0 / 0 / 0 / 5 / 0"
    assert rows[released + "held one, under two waiting"][0] == "0 / 0 / 2 / 1 / 0"
    assert rows["ACKs that released three or more: after a deferral (two or more waiting)"][0] == (
        "5 (45.5 %)"
    )


@pytest.fixture
def kernel() -> None:
    why = kernel_missing()
    if why is None and not Path("/sys/kernel/btf/vmlinux").exists():
        why = "the kernel has no BTF (/sys/kernel/btf/vmlinux)"
    require(why)


def no_program_left() -> bool:
    """Whether the tool's programs are gone: the kernel frees a program after its last
    file descriptor closes, from a work queue, so this waits up to 10 s for that."""
    deadline = time.monotonic() + 10
    while tracing_programs():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def tracing_programs() -> list[str]:
    """The tool's BPF programs loaded now (`bpftool prog show` names them; the links
    that attach them hold them, so a program still loaded is a link still attached)."""
    listed = subprocess.run(
        ["bpftool", "prog", "show"], capture_output=True, text=True, check=True
    ).stdout
    return [line for line in listed.splitlines() if "name on_segment " in line]


def command_started(pid: int, command: str = "sleep") -> bool:
    """Whether the script `pid` has started its command: a child process of that name (its
    other children, while it prepares, are the compiler and bpftool)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces, so split after its ")".
        comm = text[text.index("(") + 1 : text.rindex(")")]
        ppid = int(text[text.rindex(")") + 2 :].split()[1])
        if ppid == pid and comm == command:
            return True
    return False


def cell(table: str, label: str) -> str:
    match = re.search(rf"^\| {re.escape(label)} \| ([^|]+) \|", table, re.MULTILINE)
    assert match, f"no row {label!r} in\n{table}"
    return match.group(1).strip()


def count(text: str) -> int:
    return int(text.split()[0])


def test_a_traced_kernel_run_agrees_with_the_rules(kernel, cli: Path, tmp_path: Path) -> None:
    tool = load_tool()
    path = tmp_path / "bulk.toml"
    path.write_text(SCENARIO)
    run = [str(cli), "run", str(path), "--backend", "kernel", "--out", str(tmp_path / "out")]
    assert no_program_left(), tracing_programs()
    traced = subprocess.run(
        [sys.executable, str(TOOL), "--", *run],
        capture_output=True,
        text=True,
        check=False,
    )
    assert traced.returncode == 0, traced.stderr
    table = traced.stdout
    assert count(cell(table, "intervals between segments a sender received")) > 1000, table
    one_free = count(cell(table, "window free after the ACK, before sending: 1"))
    assert one_free >= 50, table
    agree = cell(table, "one free, two or more waiting: the rules agree")
    share = float(agree.split("(")[1].split()[0])
    assert share >= 90.0, table
    # Both ways of deciding happen here, so the agreement covers both.
    assert count(cell(table, "  held, as the rules say")) >= 10, table
    assert count(cell(table, "  sent, as the rules say")) >= 10, table
    # Every interval not left out is counted once by what its ACK released.
    released = sum(
        int(n)
        for label in tool.ONE_FREE_STATES
        for n in cell(
            table, f"segments an ACK released 0 / 1 / 2 / 3 / 4+, the interval before: {label}"
        ).split(" / ")
    )
    left_out = count(cell(table, "left out: in Recovery or Loss")) + count(
        cell(table, "left out: a segment sent again in between")
    )
    assert released == count(cell(table, "intervals between segments a sender received")) - (
        left_out
    ), table
    # Each deferral marks the interval after it once: at most as many ACKs follow a
    # deferral as there were deferrals (held with two or more waiting), and some do.
    after_deferral = sum(
        int(n)
        for n in cell(
            table,
            "segments an ACK released 0 / 1 / 2 / 3 / 4+, the interval before: "
            "held one, two or more waiting",
        ).split(" / ")
    )
    deferrals = count(cell(table, "  held, as the rules say")) + count(
        cell(table, "  held where the rules say send")
    )
    assert 0 < after_deferral <= deferrals, table
    assert no_program_left(), tracing_programs()


def test_the_command_s_failure_is_passed_on_and_nothing_stays(kernel) -> None:
    failed = subprocess.run(
        [sys.executable, str(TOOL), "--", "sh", "-c", "exit 3"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert failed.returncode == 3, failed.stderr
    assert "| intervals between segments a sender received |" in failed.stdout
    assert no_program_left(), tracing_programs()


@pytest.mark.parametrize("how", ["ctrl-c", "terminate"])
def test_an_interrupted_command_ends_and_leaves_nothing(kernel, how: str) -> None:
    # Ctrl-C goes to the whole process group; a termination request to the script alone,
    # which passes it on. Either way the command ends by that signal and the script reports.
    tool = subprocess.Popen(
        [sys.executable, str(TOOL), "--", "sleep", "60"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        # The program loads before it is attached and the command starts: a signal in
        # between ends the script before it runs anything, with no table. Wait for the
        # command itself.
        deadline = time.monotonic() + 30
        while not command_started(tool.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert command_started(tool.pid), "the command never started"
        assert tracing_programs(), "the program was never attached"
        sent = signal.SIGINT if how == "ctrl-c" else signal.SIGTERM
        if how == "ctrl-c":
            os.killpg(tool.pid, sent)
        else:
            tool.send_signal(sent)
        out, err = tool.communicate(timeout=30)
    finally:
        if tool.poll() is None:
            os.killpg(tool.pid, signal.SIGKILL)
            tool.wait()
    assert tool.returncode == 128 + sent, err
    assert "| intervals between segments a sender received |" in out
    assert no_program_left(), tracing_programs()
