"""make test runs the node test files two at a time (Makefile, CONTRIBUTING.md): no address a file
starts nodes on, or names, may be another such file's. A node's JMX port follows its address, so
distinct addresses are distinct ports too. Files marked `alone` run one at a time and are left out."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
#: 127.0.x.y in a test's text (also written as a regex, 127\.0\.x\.y); 127.0.0.1 is every machine's
#: loopback (a kernel's, a browser's), not a node's address here
ADDRESS = re.compile(r"127\\?\.0\\?\.(\d+)\\?\.(\d+)")
NODE_TEST = re.compile(r"pytest\.mark\.(cluster|notebook)\b")
ALONE = re.compile(r"^pytestmark = .*pytest\.mark\.alone", re.M)


def addresses_of_parallel_node_files(root: Path) -> dict[str, set[str]]:
    """address -> the node test files under `root` (not `alone`) whose text names it."""
    found: dict[str, set[str]] = defaultdict(set)
    for path in sorted(root.rglob("test_*.py")):
        text = path.read_text(encoding="utf-8")
        if not NODE_TEST.search(text) or ALONE.search(text):
            continue
        for third, fourth in ADDRESS.findall(text):
            if (third, fourth) != ("0", "1"):
                found[f"127.0.{third}.{fourth}"].add(str(path.relative_to(root)))
    return found


def test_no_two_node_test_files_that_run_side_by_side_share_an_address() -> None:
    shared = {a: sorted(files) for a, files in addresses_of_parallel_node_files(TESTS).items() if len(files) > 1}
    assert shared == {}, (f"node test files run two at a time share addresses: {shared}; give one of them a third "
                          f"octet no other file uses (CONTRIBUTING.md)")


def test_the_check_sees_a_shared_address_and_leaves_alone_files_out(tmp_path: Path) -> None:
    (tmp_path / "test_a.py").write_text('pytestmark = pytest.mark.cluster\nFIRST = "127.0.9.1"\n')
    (tmp_path / "test_b.py").write_text('@pytest.mark.notebook\ndef test_b():\n    run(first_address="127.0.9.1")\n')
    (tmp_path / "test_c.py").write_text('pytestmark = [pytest.mark.cluster, pytest.mark.alone]\nX = "127.0.9.1"\n')
    (tmp_path / "test_d.py").write_text('X = "127.0.9.1"  # no node test: the quick phase\n')
    assert dict(addresses_of_parallel_node_files(tmp_path)) == {"127.0.9.1": {"test_a.py", "test_b.py"}}
