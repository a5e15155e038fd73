"""The headline table of a run's evaluations (issue 55): direct, the debate's answer, cons@k and
judge accuracy, first and last evaluation with the change; too few problems for an SE said once."""

from __future__ import annotations

from debate_core.rundir.evaluation_headline import headline_figures, headline_table


def test_the_change_is_paired_when_the_last_evaluation_recorded_it_else_independent() -> None:
    warmstart = {"e/direct/correct": 0.50, "e/direct/correct_se": 0.03, "e/direct/format": 0.99}
    final = {"e/direct/correct": 0.65, "e/direct/correct_se": 0.04, "e/direct/format": 1.0}
    table = headline_table({"warmstart": warmstart, "final": final})
    assert table.cells() == [
        ["one answer (direct accuracy)", "50.0% ± 3.0", "65.0% ± 4.0", "+15.0 ± 5.0 (+3.0 SE, independent), better"]
    ]
    paired = {**final, "e/direct/correct_change": 0.15, "e/direct/correct_change_se": 0.025}
    table = headline_table({"warmstart": warmstart, "final": paired})
    assert table.cells()[0][-1] == "+15.0 ± 2.5 (+6.0 SE, paired), better"
    assert table.note() is None and table.rows[0].change is not None and table.rows[0].change.verdict == "better"


def test_four_rows_in_order_from_the_first_and_last_of_several_evaluations() -> None:
    def evaluation(direct: float, debate: float, cons: float, judge: float) -> dict[str, float]:
        return {
            "eval_a/num_problems": 200.0,
            "eval_a/direct/correct": direct,
            "eval_a/direct/correct_se": 0.03,
            "eval_a/direct/cons@6": cons,
            "eval_a/debate/answer_correct": debate,
            "eval_a/judge/accuracy": judge,
            "eval_a/judge/accuracy_se": 0.02,
            "eval_a/debate/rounds_played": 2.0,  # not a headline figure
        }

    table = headline_table(
        {
            "start": evaluation(0.7, 0.8, 0.72, 0.9),
            "iteration_30": evaluation(0.0, 0.0, 0.0, 0.0),
            "final": evaluation(0.8, 0.9, 0.85, 0.91),
        }
    )
    assert table.labels == ("start", "final") and table.problems == 200
    assert [row.label for row in table.rows] == [
        "one answer (direct accuracy)",
        "the debate's answer",
        "majority of 6 answers (cons@6)",
        "judge accuracy (benchmark)",
    ]
    assert [cells[2].split()[0] for cells in table.cells()][:3] == ["80.0%", "90.0%", "85.0%"]
    lines = table.text_lines()
    assert lines[0].split() == ["start", "final", "change"] and len(lines) == 5
    assert headline_figures(evaluation(0.8, 0.9, 0.85, 0.91)) == {
        "direct": 0.8,
        "debate": 0.9,
        "cons@6": 0.85,
        "judge": 0.91,
    }


def test_too_few_problems_for_an_se_is_said_once_not_on_every_row() -> None:
    few = {
        "eval_a/num_problems": 4.0,
        "eval_a/direct/correct": 0.75,
        "eval_a/direct/correct_se": 0.25,
        "eval_a/direct/correct_n": 4.0,
        "eval_a/debate/answer_correct": 1.0,
        "eval_a/debate/answer_correct_se": 0.0,
    }
    table = headline_table({"start": {**few, "eval_a/direct/correct": 0.5}, "final": few})
    lines = table.text_lines()
    text = "\n".join(lines)
    assert text.count("too few for a standard error") == 1 and "n=4" not in text and "SE" not in text
    assert lines[-1] == "  4 problems: too few for a standard error (20 needed), so none is given"
    assert all(row.change is None or row.change.verdict is None for row in table.rows)


def test_one_evaluation_has_no_change_column_and_none_says_so() -> None:
    table = headline_table({"eval": {"e/direct/correct": 0.5, "e/direct/correct_se": 0.05}})
    assert table.text_lines()[0].split() == ["eval"] and table.cells() == [
        ["one answer (direct accuracy)", "50.0% ± 5.0", ""]
    ]
    assert headline_table({"eval": {"e/num_problems": 3.0}}).text_lines() == ["  (no headline figures recorded)"]


def test_voting_at_the_debates_cost_names_its_k_in_each_evaluation_and_the_runoff_has_its_row() -> None:
    def evaluation(k: int, matched: float) -> dict[str, float]:
        return {
            "eval_a/num_problems": 200.0,
            "eval_a/debate/answer_correct": 0.88,
            "eval_a/debate/cons_matched": matched,
            "eval_a/debate/cons_matched_k": float(k),
            "eval_a/runoff/answer_correct": 0.905,
        }

    table = headline_table({"start": evaluation(12, 0.75), "final": evaluation(11, 0.86)})
    assert [row.label for row in table.rows] == [
        "the debate's answer",
        "majority at the debate's tokens (cons@12, 11)",
        "the runoff's answer",
    ]
    same = headline_table({"start": evaluation(11, 0.75), "final": evaluation(11, 0.86)})
    assert same.rows[1].label == "majority at the debate's tokens (cons@11)"
    assert headline_figures(evaluation(11, 0.86)) == {"debate": 0.88, "matched": 0.86, "runoff": 0.905}


def test_without_the_slip_family_the_first_family_run_gives_the_judge_row() -> None:
    """A judge benchmark of other families only (``evaluation.judge_families = ["own"]``) still has
    its headline row, named by its family."""
    own_only = {
        "eval_a/judge/own/accuracy": 0.8,
        "eval_a/judge/own/accuracy_se": 0.04,
        "eval_a/judge/own/tie_rate": 0.1,
    }
    table = headline_table({"eval": own_only})
    assert table.cells() == [["judge accuracy (benchmark, own)", "80.0% ± 4.0", ""]]
    both = {**own_only, "eval_a/judge/accuracy": 0.9, "eval_a/judge/accuracy_se": 0.02}
    assert [row.label for row in headline_table({"eval": both}).rows] == ["judge accuracy (benchmark)"]
    assert headline_figures(own_only) == {"judge": 0.8}
