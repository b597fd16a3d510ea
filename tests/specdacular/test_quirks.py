"""Real specdacular projects are untidy: every quirk is read without error, and status lists every task."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from spd_kit import Project, roadmap

from specd.state.store import StateStore

THREE = roadmap("t", [("1", "A", True), ("2", "B", True), ("3", "C", False)])


def test_duplicated_key_in_config_json_last_one_wins(sp: Project) -> None:
    sp.task("t", '{"task_name": "t", "stage": "discussion", "stage": "execution",\n'
                 ' "phases": {"total": 3, "current": 2, "current": 3, "current_status": "executing"}}\n',
            roadmap_text=THREE, plans={"03": ["PLAN.md"]})
    assert sp.status("t")["next"] == {"step": "execute", "pipeline": "phase-execution", "phase": "03"}


def test_complete_spelled_complete_is_completed(sp: Project) -> None:
    sp.task("t", {"stage": "execution", "phases": {"total": 4, "current": 3, "current_status": "complete"}},
            roadmap_text=roadmap("t", [("1", "A", True), ("2", "B", True), ("3", "C", False), ("4", "D", False)]))
    assert sp.status("t")["next"] == {"step": "plan", "pipeline": "phase-execution", "phase": "04"}


def test_missing_completed_and_current_status_mean_pending(sp: Project) -> None:
    sp.task("t", {"stage": "execution", "phases": {"total": 3, "current": 3}}, roadmap_text=THREE,
            plans={"03": ["PLAN.md"]})
    assert sp.status("t")["next"] == {"step": "execute", "pipeline": "phase-execution", "phase": "03"}


def test_missing_stage_is_inferred_from_the_documents_on_disk(sp: Project) -> None:
    sp.task("old", {"feature_name": "old", "created": "2025-01-02"}, research=True)
    assert sp.status("old")["next"] == {"step": "plan", "pipeline": "main", "phase": None}


def test_phases_null_empty_string_or_list_are_absent(sp: Project) -> None:
    for name, value in (("a", None), ("b", ""), ("c", [])):
        sp.task(name, {"stage": "execution", "phases": value}, roadmap_text=THREE, plans={"03": ["PLAN.md"]})
        # No current phase: the first phase the roadmap does not mark done, pending with a plan → execute.
        assert sp.status(name)["next"] == {"step": "execute", "pipeline": "phase-execution", "phase": "03"}
    result = sp.cont("c")  # the run writes config.json's phase fields over the empty list
    assert result.returncode == 0, result.stderr
    assert sp.log() == ["phase-execution execute 03", "phase-execution review 03"]
    config = json.loads((sp.root / ".specd/tasks/c/config.json").read_text(encoding="utf-8"))
    assert config["stage"] == "complete"
    assert config["phases"]["completed"] == 3


def test_decimal_fix_phases_on_disk_but_not_in_roadmap_are_phases(sp: Project) -> None:
    sp.task("t", {"stage": "execution", "phases": {"total": 3, "current": 2, "current_status": "completed"}},
            roadmap_text=THREE, plans={"02": ["PLAN.md"], "02.1": ["PLAN.md"], "02.10": [], "02.2": []})
    status = sp.status("t")
    assert status["phases"] == ["01", "02", "02.1", "02.2", "02.10", "03"]
    assert status["next"] == {"step": "execute", "pipeline": "phase-execution", "phase": "02.1"}
    assert status["derived"]["phases_done"] == ["01", "02"]


def test_legacy_features_folder_with_plans_layout(sp: Project) -> None:
    sp.task("legacy", {"feature_name": "legacy", "stage": "execution",
                       "phases": {"total": 2, "current": 1, "current_status": "pending"}},
            folder="features", roadmap_text=roadmap("legacy", [("1", "A", False), ("2", "B", False)]),
            plans={"01": ["01-PLAN.md", "02-PLAN.md", "CONTEXT.md"]}, plan_root="plans")
    status = sp.status("legacy")
    assert status["folder"] == ".specd/features/legacy"
    assert status["next"] == {"step": "execute", "pipeline": "phase-execution", "phase": "01"}
    result = sp.cont("legacy")
    assert result.returncode == 0, result.stderr
    assert sp.log()[0] == "phase-execution execute 01"
    assert "- Phase folder: .specd/features/legacy/plans/phase-01/" in sp.prompt(1)
    assert (sp.root / ".specd/features/legacy/plans/phase-01/EXECUTED.md").is_file()
    state = StateStore(sp.root / ".specd/features/legacy", "legacy").load()
    assert state is not None
    assert state.status == "COMPLETE"
    assert not (sp.root / ".specd/tasks/legacy").exists()


def test_a_name_in_both_folders_is_an_error_naming_both(sp: Project) -> None:
    sp.task("twice", {"stage": "discussion"}, gray=[False])
    sp.task("twice", {"stage": "discussion"}, gray=[False], folder="features")
    result = sp.specd("status", "twice")
    assert result.returncode == 2
    assert ".specd/tasks/twice" in result.stderr
    assert ".specd/features/twice" in result.stderr
    assert "Traceback" not in result.stderr
    rows = sp.status()
    assert [(r["task"], r["status"]) for r in rows] == [("twice", "ERROR")]


def test_new_refuses_a_name_the_features_folder_already_holds(sp: Project) -> None:
    sp.task("old", {"stage": "complete"}, folder="features")
    result = sp.specd("new", "old")
    assert result.returncode == 2
    assert ".specd/features/old" in result.stderr
    assert not (sp.root / ".specd/tasks/old").exists()


def test_unreadable_config_json_names_the_file(sp: Project) -> None:
    sp.task("broken", '{"stage": "execution", ')
    sp.task("fine", {"stage": "discussion"}, gray=[False])
    result = sp.specd("status", "broken")
    assert result.returncode == 2
    assert ".specd/tasks/broken/config.json" in result.stderr
    assert "invalid JSON" in result.stderr
    assert "Traceback" not in result.stderr
    rows = {r["task"]: r for r in sp.status()}
    assert rows["broken"]["status"] == "ERROR"
    assert "broken/config.json" in rows["broken"]["reason"]
    assert rows["fine"]["next"]["step"] == "discuss"


def test_orchestrator_project_is_read_noted_on_status_and_refused_on_continue(sp: Project) -> None:
    (sp.root / ".specd/config.json").write_text(json.dumps(
        {"type": "orchestrator", "auto_commit_docs": True, "auto_commit_code": False,
         "projects": [{"name": "api", "path": "./api"}]}), encoding="utf-8")
    sp.task("t", {"stage": "discussion"}, gray=[False])
    result = sp.specd("status", "--json")
    assert result.returncode == 0, result.stderr
    assert [row["task"] for row in json.loads(result.stdout)["tasks"]] == ["t"]
    assert "orchestrator" in result.stderr
    result = sp.cont("t")
    assert result.returncode == 2
    assert ".specd/config.json" in result.stderr
    assert "orchestrator" in result.stderr
    assert "fix:" in result.stderr
    assert sp.log() == []
    assert StateStore(sp.root / ".specd/tasks/t", "t").load() is None


def test_plain_project_config_json_is_read_without_notes(sp: Project) -> None:
    (sp.root / ".specd/config.json").write_text('{"auto_commit_docs": false, "auto_commit_code": false}',
                                                encoding="utf-8")
    sp.task("t", {"stage": "discussion"}, gray=[False])
    result = sp.specd("status")
    assert result.returncode == 0, result.stderr
    assert "orchestrator" not in result.stderr
    assert sp.cont("t").returncode in (0, 3)
    assert sp.log()[0] == "main discuss"


def test_status_over_a_project_holding_every_quirk_lists_every_task(sp: Project) -> None:
    sp.task("dup-key", '{"stage": "planning", "stage": "discussion"}', gray=[False], research=True)
    sp.task("complete-spelling", {"stage": "execution",
                                  "phases": {"total": 3, "current": 3, "current_status": "complete"}},
            roadmap_text=THREE)
    sp.task("no-fields", {"stage": "execution", "phases": {"current": 3}}, roadmap_text=THREE)
    sp.task("no-stage", {"created": "2024-05-06"}, gray=[False])
    sp.task("phases-null", {"stage": "execution", "phases": None}, roadmap_text=THREE)
    sp.task("phases-list", {"stage": "planning", "phases": []}, roadmap_text=THREE)
    sp.task("fix-phase", {"stage": "execution", "phases": {"total": 3, "current": 2, "current_status": "completed"}},
            roadmap_text=THREE, plans={"02": ["PLAN.md"], "02.1": ["PLAN.md"]})
    sp.task("old-feature", {"feature_name": "old-feature", "stage": "execution",
                            "phases": {"total": 1, "current": 1, "current_status": "executed"}},
            folder="features", roadmap_text=roadmap("o", [("1", "A", False)]), plans={"01": ["01-PLAN.md"]},
            plan_root="plans")
    sp.task("huge", {"stage": "planning"}, roadmap_text="# Roadmap\n\n### Phase " + "9" * 5000 + ": Big\n")
    (sp.root / ".specd/config.json").write_text('{"auto_commit_docs": true, "auto_commit_docs": false}',
                                                encoding="utf-8")
    rows = {row["task"]: row for row in sp.status()}
    assert sorted(rows) == sorted(["dup-key", "complete-spelling", "no-fields", "no-stage", "phases-null",
                                   "phases-list", "fix-phase", "old-feature", "huge"])
    assert all(row["status"] != "ERROR" for row in rows.values()), rows
    nxt = {name: (row["next"] or {}).get("step") for name, row in rows.items()}
    assert nxt == {"dup-key": "discuss", "complete-spelling": None, "no-fields": "plan", "no-stage": "discuss",
                   "phases-null": "plan", "phases-list": "plan", "fix-phase": "execute", "old-feature": "review",
                   "huge": "plan"}
    assert rows["complete-spelling"]["status"] == "COMPLETE"
    assert rows["huge"]["next"]["phase"] == "9" * 5000
    assert rows["dup-key"]["stage"] == "discussion"


def test_a_fresh_specd_task_still_starts_at_the_first_step(sp: Project, tmp_path: Path) -> None:
    result = sp.specd("new", "fresh", "--description", "a new thing")
    assert result.returncode == 0, result.stderr
    status = sp.status("fresh")
    assert status["status"] == "NOT_STARTED"
    assert status["next"] == {"step": "discuss", "pipeline": "main", "phase": None}


def test_the_cache_of_a_project_specd_init_never_made_stays_out_of_git_status(sp: Project) -> None:
    """specdacular made `.specd/`, so no specd `.gitignore` covers `.specd/.cache/`: the cache ignores itself."""
    sp.task("t", {"stage": "execution", "phases": {"total": 3, "current": 2, "current_status": "executing"}},
            roadmap_text=THREE, plans={"02": ["PLAN.md"]})
    subprocess.run(["git", "init", "-q", str(sp.root)], check=True)
    assert sp.status()[0]["task"] == "t"  # the listing writes its index and memo into .specd/.cache/
    assert sp.status("t")["status"] != "ERROR"
    assert (sp.root / ".specd/.cache").is_dir()
    shown = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=sp.root,
                           capture_output=True, text=True, check=True).stdout
    assert ".cache" not in shown, shown
    assert ".specd/tasks/t/" in shown  # the task's own files are still the user's to commit
