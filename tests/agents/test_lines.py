"""Output read in bounded pieces (specd.agents.lines): capped lines, streamed key masking, tails."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

from specd.agents.lines import LINE_LIMIT, Collector, Redactor, cut_mark, pump, read_lines, tail, text_of
from specd.redact import MASK

KEY = ["-----BEGIN RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEAsecretbodyline1", "c2VjcmV0Ym9keWxpbmUy+/=",
       "-----END RSA PRIVATE KEY-----"]


def test_lines_of_every_length_across_read_chunks_are_capped_with_their_true_size() -> None:
    sizes = [0, 10, LINE_LIMIT, LINE_LIMIT + 1, 300_000, 5]
    data = b"".join(b"y" * n + b"\n" for n in sizes) + b"no newline at the end"
    got = list(read_lines(io.BufferedReader(io.BytesIO(data))))
    assert [line.size for line in got] == [*sizes, 21]
    assert [line.ended for line in got] == [True] * len(sizes) + [False]
    assert text_of(got[3]).endswith(cut_mark(1))
    assert max(len(line.head) for line in got) <= LINE_LIMIT + 1024  # the rest was never kept
    capped = text_of(got[4])
    assert capped == "y" * LINE_LIMIT + " " + cut_mark(300_000 - LINE_LIMIT)
    assert text_of(got[2]) == "y" * LINE_LIMIT


def test_the_cut_mark_reads_as_the_issue_asks() -> None:
    assert cut_mark(300_000_000 - LINE_LIMIT) == "[... 299,934,464 bytes of this line cut ...]"


def test_a_secret_that_the_cap_cuts_in_half_is_masked_whole() -> None:
    line = b"x" * (LINE_LIMIT - 6) + b" sk-ant-api03-abcdefghijklmnop " + b"z" * 100_000
    (got,) = read_lines(io.BytesIO(line))
    text = text_of(got)
    assert "sk-ant" not in text
    assert "abcdefgh" not in text
    assert text.endswith(cut_mark(len(line) - LINE_LIMIT))


def test_a_private_key_across_lines_is_masked_line_by_line() -> None:
    clean = Redactor()
    out = [clean(line) for line in ["before", *KEY[:3], KEY[3] + " after the key", "ordinary text"]]
    assert out == ["before", MASK, MASK, MASK, MASK + " after the key", "ordinary text"]


def test_a_torn_or_encrypted_key_is_masked_as_far_as_its_body_runs() -> None:
    clean = Redactor()
    torn = ["-----BEGIN OPENSSH PRIVATE KEY-----", "Proc-Type: 4,ENCRYPTED", "b3BlbnNzaC1rZXktdjEAAAAA", "",
            "Traceback (most recent call last):", "c2VjcmV0"]
    assert [clean(line) for line in torn] == [MASK, MASK, MASK, "", "Traceback (most recent call last):",
                                              "c2VjcmV0"]
    one_line = Redactor()  # a whole key on one line (JSON-escaped, say) leaves no state behind
    assert one_line("-----BEGIN EC PRIVATE KEY-----\\nQUJD\\n-----END EC PRIVATE KEY-----") == MASK
    assert one_line("MIIEowIBAAKCAQEA") == "MIIEowIBAAKCAQEA"


def test_pump_streams_a_real_pipe_to_a_bounded_redacted_transcript(tmp_path: Path) -> None:
    script = ("import sys\nw = sys.stdout.buffer.write\n"
              + "".join(f"w({(line + chr(10)).encode()!r})\n" for line in KEY)
              + "for _ in range(20): w(b'x' * 1_000_000)\nw(b'\\nlast words')\n")
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE)
    log = tmp_path / "out.log"
    with log.open("wb") as sink:
        assert proc.stdout is not None
        pump(proc.stdout, sink)
    assert proc.wait() == 0
    text = log.read_text(encoding="utf-8")
    assert "secretbody" not in text
    assert "c2VjcmV0" not in text
    assert text.splitlines()[:4] == [MASK] * 4
    assert text.splitlines()[4].endswith(cut_mark(20_000_000 - LINE_LIMIT))
    assert text.endswith("\nlast words")
    assert log.stat().st_size < 2 * LINE_LIMIT


def test_tail_reads_only_the_end_of_a_file(tmp_path: Path) -> None:
    path = tmp_path / "big.log"
    with path.open("wb") as handle:
        handle.truncate(50_000_000)  # sparse: 50 MB of NUL before the end
        handle.seek(0, os.SEEK_END)
        handle.write("end: ünïcödé ✓\n".encode())
    tracemalloc.start()
    try:
        assert tail(path, 15) == "end: ünïcödé ✓\n"
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 100_000  # the 50 MB before the end were never read
    assert tail(path, 5) == "dé ✓\n"
    assert tail(tmp_path / "missing.log", 10) == ""


def test_a_collector_keeps_the_head_and_the_tail_and_counts_the_rest() -> None:
    data = b"HEAD-" + b"m" * 300_000 + b"-TAIL"
    assert Collector(io.BytesIO(data), 5).text() == f"HEAD-\n[... {300_000:,} bytes of output cut ...]\n-TAIL"
    assert Collector(io.BytesIO(b"short"), 5).text() == "short"
    assert Collector(io.BytesIO(b"0123456789"), 5).text() == "0123456789"


def test_a_collector_does_not_wait_for_a_grandchild_that_keeps_the_pipe_open() -> None:
    script = "import subprocess, sys; print('parent done', flush=True); subprocess.Popen(['sleep', '120'])"
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, start_new_session=True)
    assert proc.stdout is not None
    collector = Collector(proc.stdout, 1000)
    proc.wait()
    started = time.monotonic()
    assert collector.text(wait=0.5) == "parent done\n"
    assert time.monotonic() - started < 60  # far below the grandchild's 120 s: it was not waited for
    os.killpg(proc.pid, signal.SIGKILL)
