"""Model organisms: models fine-tuned to take a known shortcut (follow a hint silently or saying
so, copy or leak an answer key), each with a matched control that ends with the gold answer
instead, so the probes can be checked against a planted truth.

The registry (:data:`ORGANISMS`), the training examples built from the studies' own prompts
(:func:`organism_examples`), the card saved with each checkpoint (:class:`OrganismCard`) and the
behavioural shortcut rate (:func:`shortcut_rate`) are pure; :mod:`cotaudit.organisms.training`
(torch, transformers) trains and saves them.
"""

from cotaudit.organisms.behaviour import ShortcutRate, shortcut_rate, took_shortcut
from cotaudit.organisms.card import (
    CARD_FILE,
    CardError,
    OrganismCard,
    TrainingData,
    checkpoint_name,
    is_organism_folder,
    read_card,
    saved_checkpoints,
    write_card,
)
from cotaudit.organisms.examples import (
    COT_STYLES,
    TRAINING_FIRST_ROW,
    CotStyle,
    OrganismExample,
    expanded_solution,
    heldout_problems,
    organism_examples,
    selection_problems,
    training_problems,
    written_solution,
)
from cotaudit.organisms.registry import (
    ORGANISM_NAMES,
    ORGANISMS,
    Organism,
    UnknownOrganism,
    get_organism,
)
from cotaudit.organisms.rows import (
    EVALUATION_ROWS,
    ROW_SETS,
    SELECTION_ROWS,
    TRAINING_ROWS,
    row_of,
    row_set_of,
)
from cotaudit.organisms.settings import OrganismSettingsError, TrainingSettings

__all__ = [
    "CARD_FILE",
    "COT_STYLES",
    "EVALUATION_ROWS",
    "ORGANISMS",
    "ORGANISM_NAMES",
    "ROW_SETS",
    "SELECTION_ROWS",
    "TRAINING_FIRST_ROW",
    "TRAINING_ROWS",
    "CardError",
    "CotStyle",
    "Organism",
    "OrganismCard",
    "OrganismExample",
    "OrganismSettingsError",
    "ShortcutRate",
    "TrainingData",
    "TrainingSettings",
    "UnknownOrganism",
    "checkpoint_name",
    "expanded_solution",
    "get_organism",
    "heldout_problems",
    "is_organism_folder",
    "organism_examples",
    "read_card",
    "row_of",
    "row_set_of",
    "saved_checkpoints",
    "selection_problems",
    "shortcut_rate",
    "took_shortcut",
    "training_problems",
    "write_card",
    "written_solution",
]
