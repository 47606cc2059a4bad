"""What an input folder holds but cannot be read is a rejection naming it, not a silent skip."""

from __future__ import annotations

import os
from pathlib import Path

from graph.ingest import discover


def test_link_loops_broken_links_and_linked_folders_are_named(tmp_path):
    root = tmp_path / "in"
    (root / "scene_graphs").mkdir(parents=True)
    good = root / "scene_graphs" / "a_SceneGraph.json"
    good.write_text("{}")
    (root / "loop_SceneGraph.json").symlink_to(root / "loop_SceneGraph.json")  # a link to itself
    (root / "ring").symlink_to(root)  # a folder link back to the root
    (root / "gone_SceneGraph.json").symlink_to(tmp_path / "nowhere.json")
    skipped: list = []
    files = discover([root], skipped=skipped)
    assert [f.path for f in files] == [str(good.resolve())]
    reasons = {Path(r.file).name: r.reason for r in skipped}
    assert reasons["loop_SceneGraph.json"].startswith("symbolic link loop")
    assert reasons["gone_SceneGraph.json"].startswith("broken symbolic link")
    assert reasons["ring"].startswith("linked folder, not entered") and str(root) in reasons["ring"]
    assert all(r.record is None and r.field is None for r in skipped)


def test_an_unreadable_folder_is_named(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    os.chmod(locked, 0)
    try:
        skipped: list = []
        discover([tmp_path], skipped=skipped)
        if os.access(locked, os.R_OK):  # root reads every folder: nothing to report then
            assert skipped == []
        else:
            assert [(Path(r.file).name, r.reason.split(":")[0]) for r in skipped] == [("locked", "folder not read")]
    finally:
        os.chmod(locked, 0o755)
