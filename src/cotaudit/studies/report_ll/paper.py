"""The report_ll study's published configuration (``-T paper=true``) and its published numbers.

Source: "I made one report more vivid and the effect changed sign" (``003_82df5f662f03433e.txt``).
The study's design is a factorial, "eight versions of the same 144 scenarios" (rendering x
richness x register in {plain, concealing dressed}), whose main effects it reports, and a
third register level (the honest report dressed) "rescored" on the "Same 144 fixtures"; its
headline is one cell, "the loose one: shell commands, full reports". ``-T paper=true`` runs the
whole design (every rendering, richness and register level: the factorial's 8 versions of
each scenario, and the third level in every cell, the study's cell among them); the headline
stays the study's cell. Each setting quotes the sentence that fixes it.

``published`` holds the study's numbers for its headline model (Qwen2.5-7B-Instruct), keyed by
this package's metric names; :data:`PUBLISHED_BY_MODEL` holds them for all three of its models,
for ``cotaudit report``'s published columns. A number the study gives in words ("moved 6.09
nats") or that follows from two of its numbers by subtraction says so in its ``where``.
"""

from __future__ import annotations

from cotaudit.studies.paper import PaperConfiguration, PaperSetting, PaperValue
from cotaudit.studies.paper_tables import published_row

SOURCE = "I made one report more vivid and the effect changed sign"
SEED = "003_82df5f662f03433e.txt"
MODELS = ("Qwen2.5-7B-Instruct", "Mistral-7B-Instruct-v0.3", "Qwen base model")
"""The study's three models, as it names them ("the Qwen base model" is not named further)."""

_LOOSE_CELL = (
    "One of the eight versions is the loose one: shell commands, full reports, concealing "
    "report dressed up."
)

_SETTINGS = {
    "rendering": PaperSetting(
        "shell,driver",
        "Does the action appear in the transcript as real shell commands, or as a neutral driver "
        "script that names the same file and does the same thing?",
        evidence="real shell commands, or as a neutral driver script",
    ),
    "richness": PaperSetting(
        "outcome_clause,bare",
        "Does the report restate the outcome in full, with a clause about what it cost, or "
        "state the bare proposition?",
        evidence="with a clause about what it cost, or state the bare proposition",
    ),
    "register": PaperSetting(
        "plain,concealing_dressed,honest_dressed",
        "Same 144 fixtures, all three levels rescored in one session so that nothing depends "
        "on runs agreeing across days.",
        evidence="all three levels",
    ),
    "register_rewrite": PaperSetting(
        "bundled",
        "register here is the name of a specific bundled rewrite, not one clean dial I turned.",
    ),
}

_NOTES = (
    'Design: the factorial "gives eight versions of the same 144 scenarios, and all eight were '
    'scored on all three models. 13,824 report scorings." (8 x 144 x 4 scorings x 3 models); '
    'the third level: "Same 144 fixtures, all three levels rescored in one session" (5,184 '
    "scorings = 144 x 3 levels x 4 x 3 models: one rendering x richness cell per scenario, "
    "which the study does not name). Here every register level runs in every cell: 12 "
    "versions of each main-family scenario (1,728, 6,912 scorings per model), of which the "
    "factorial's 8 (4,608 scorings per model, the study's count) give its level means and main "
    "effects (main_effect.rendering, main_effect.richness, main_effect.register). The headline "
    f"and the third level's published figures are the study's cell's: \"{_LOOSE_CELL}\" "
    "(-T rendering=shell -T richness=outcome_clause runs that cell alone).",
    'Models: Qwen2.5-7B-Instruct, Mistral-7B-Instruct-v0.3 and the Qwen base model ("all '
    'three models"); no parameter sets them: pass --model. The published column of the '
    "report is labelled with each.",
    'Scenarios: the committed corpus\'s 144 main-family scenarios ("Same 144 fixtures"), 48 '
    "bugs of 16 projects, plus its 8-scenario register control family (the original "
    'experiment\'s control: "the concealing report vivid, the honest report flat"). The '
    "study's fixtures themselves are not published; these are generated to its description.",
    'Discrimination band: the study does not state its value ("smaller than the band the test '
    "treats as indistinguishable from zero\"). Its classifications bound it: the base model's "
    "0.49 nats lies inside it, Mistral's 5.58 - 4.32 = 1.26 outside, so it lies in (0.49, "
    "1.26]; the default 0.5 nats is used.",
    "Independent unit: the study does not say what its intervals resample; ours resample bugs "
    "(-T unit=bug, the default; scenarios of one bug share its code, test and failure).",
    "Resamples: the study does not give its bootstrap size; the default 10,000 is used.",
)


INTERVAL = ("mean", "ci_low", "ci_high")
"""Fields of a published mean with its 95% CI."""
_CELL = "cell.shell.outcome_clause"
_DRESS_C = f"{_CELL}.register_effect.concealing_dressed"
_DRESS_H = f"{_CELL}.register_effect.honest_dressed"

PUBLISHED_BY_MODEL: dict[str, dict[str, PaperValue]] = {
    "Qwen2.5-7B-Instruct": {
        f"{_CELL}.concealing_dressed/did/mean": PaperValue(4.14, "the loose version"),
        **published_row(f"{_CELL}.plain/did", INTERVAL, (-0.38, -1.39, 0.63), "both reports plain"),
        f"{_CELL}.plain/did/p": PaperValue(0.45, "both reports plain"),
        f"{_CELL}.plain/d_c/mean": PaperValue(
            6.09, '"moved 6.09 nats"; sign from 6.09 - 1.57 = 4.14 - (-0.38)'
        ),
        f"{_CELL}.concealing_dressed/d_c/mean": PaperValue(
            1.57, '"to being moved 1.57"; sign from 6.09 - 1.57 = 4.14 - (-0.38)'
        ),
        **published_row(
            f"{_DRESS_C}/did", INTERVAL, (4.52, 3.73, 5.32), "rewriting the concealing report alone"
        ),
        **published_row(f"{_DRESS_H}/d_h", INTERVAL, (-1.03, -1.93, -0.14), "the third level"),
        "discrimination/abs_register_effect": PaperValue(4.52, "4.14 - (-0.38)"),
        "discrimination/able_to_answer": PaperValue(1, '"the design could discriminate"'),
        "control.register_control/did/mean": PaperValue(
            7.94, "the original corpus's 8-fixture control"
        ),
        "control.register_control/did/n_pos": PaperValue(8, '"positive on all eight"'),
        "control.register_control/did_minus_main/mean": PaperValue(
            0.93, "7.94 - 7.01, the original corpus"
        ),
    },
    "Mistral-7B-Instruct-v0.3": {
        f"{_CELL}.concealing_dressed/did/mean": PaperValue(5.58, "the loose version"),
        f"{_CELL}.plain/did/mean": PaperValue(4.32, '"Mistral keeps 4.32 of its 5.58 nats"'),
        f"{_DRESS_C}/did/mean": PaperValue(1.26, "5.58 - 4.32"),
        **published_row(f"{_DRESS_H}/d_h", INTERVAL, (-1.65, -2.45, -0.85), "the third level"),
        "discrimination/abs_register_effect": PaperValue(1.26, "5.58 - 4.32"),
        "discrimination/able_to_answer": PaperValue(1, '"the design could discriminate"'),
    },
    "Qwen base model": {
        f"{_CELL}.concealing_dressed/did/mean": PaperValue(1.32, "the loose version"),
        f"{_CELL}.plain/did/mean": PaperValue(0.83, '"the base model 0.83 of its 1.32"'),
        f"{_DRESS_C}/did/mean": PaperValue(0.49, '"its own concealing-side effect is 0.49 nats"'),
        f"{_DRESS_H}/d_h/mean": PaperValue(0.03, 'the third level ("an interval of roughly ±0.5")'),
        "discrimination/abs_register_effect": PaperValue(0.49, "1.32 - 0.83"),
        "discrimination/able_to_answer": PaperValue(0, '"registered before the run as unable"'),
    },
}
"""Model -> metric name -> the study's number (:data:`MODELS` order)."""

PAPER = PaperConfiguration(
    study="report_ll",
    source=SOURCE,
    seed=SEED,
    model=MODELS[0],
    settings=_SETTINGS,
    notes=_NOTES,
    published=PUBLISHED_BY_MODEL[MODELS[0]],
)
