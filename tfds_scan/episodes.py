"""Episodes for meta seq2seq learning (Lake 2019), generated offline and seeded.

An episode is a small seq2seq problem: support pairs (commands with their actions,
stored in the learner's memory) and query pairs (commands the learner must
translate, with their target actions). Five tasks, as in the paper's Sec. 4:

- ``mutual_exclusivity``: pseudowords dax, lug, wif, zup mapped one-to-one onto
  RED, YELLOW, GREEN, BLUE, a random bijection per episode. Support: 3 isolated
  words with their colours (the fourth word is withheld); queries: 20 distinct
  concatenations of 2-6 words drawn from all four, translated word by word. 5 of the
  24 bijections are held out for testing, the other 19 make the training episodes.
- ``add_jump_permutation``: every SCAN command (all 20,910) may be drawn; the four
  verbs walk, look, run, jump keep their words but their actions are permuted by a
  bijection other than the true one (23 possible). 20 support + 20 query commands.
  Test episode: support = the four bare verbs with their true actions, queries = the
  official ``addprim_jump`` test set (7,706 commands).
- ``add_jump_augmentation``: 20 extra primitives ``Primitive1..20`` and actions
  ``Action1..20``; each episode assigns 4 of the 24 verbs to 4 of the 24 actions
  (taking the places of walk, look, run, jump in the drawn SCAN commands), never
  ``jump`` -> ``I_JUMP``. Same test episode as ``add_jump_permutation``.
- ``around_right``: directions left, right, ``Direction1``, ``Direction2`` and
  turns ``I_TURN_LEFT``, ``I_TURN_RIGHT``, ``I_TURN_FORWARD``, ``I_TURN_BACKWARD``;
  each episode maps 2 directions onto 2 turns (in the places of left and right),
  never ``right`` -> ``I_TURN_RIGHT``. Test: support ``turn left``, ``turn right``
  with their true turns; queries the official ``template_around_right`` test set.
- ``length``: support commands drawn from the ``length`` training commands with
  fewer than 12 actions, queries from those with 12-22; 100 support and 20 query
  items, primitives augmented as in ``add_jump_augmentation`` (no restriction).
  Test: 100 support items drawn from the whole ``length`` training set, queries the
  official ``length`` test set (3,920 commands).
- ``length_dev``: ``length``'s shape inside its training data, for design decisions
  without the test set: the ``length_dev`` split's training side (outputs of at most 16
  actions) takes the place of the length training set, support commands have at most 8
  actions and queries 9-16 (half and the rest, as 11 and 12-22 of 22). Test: 100 support
  items from that training side, queries its test side (2,336 commands of 18-22 actions).

The comparison model of Sec. 4.3 ("standard seq2seq") trains on ``add_jump_standard``:
no support set, 40 queries drawn from the ``addprim_jump`` training split (its
``fit`` part; validation episodes from its ``validation`` part), the same test
episode as ``add_jump_permutation``.

Training episodes are a pure function of ``(task, seed, index)``, so a run can be
resumed or repeated exactly. Validation episodes come from the training
distribution under a separate seed stream (never from the test mapping).

Example:
    >>> from tfds_scan import episodes
    >>> episode = episodes.training_episode("mutual_exclusivity", seed=0, index=0)
    >>> len(episode.support_commands), len(episode.query_commands)
    (3, 20)

References:
    Lake (2019), Compositional generalization through meta sequence-to-sequence
    learning, NeurIPS, Sec. 4 and Appendix.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools

import numpy as np

from tfds_scan import grammar, splits

TASK_NAMES = ("mutual_exclusivity", "add_jump_permutation", "add_jump_augmentation",
              "around_right", "length", "add_jump_standard", "length_dev")
LENGTH_TASKS = ("length", "length_dev")

ME_WORDS = ("dax", "lug", "wif", "zup")
ME_OUTPUTS = ("RED", "YELLOW", "GREEN", "BLUE")
ME_NUM_TEST_BIJECTIONS = 5
ME_QUERY_LENGTHS = (2, 6)
ME_BIJECTION_SEED = 2019  # fixes which 5 of the 24 bijections are held out for testing

SCAN_VERBS = grammar.PRIMITIVE_VERBS  # walk, look, run, jump: the places verbs take
SCAN_VERB_ACTIONS = tuple(grammar.ACTION_OF_VERB[v] for v in SCAN_VERBS)
NUM_EXTRA_PRIMITIVES = 20
EXTRA_PRIMITIVES = tuple(f"Primitive{i}" for i in range(1, NUM_EXTRA_PRIMITIVES + 1))
EXTRA_ACTIONS = tuple(f"Action{i}" for i in range(1, NUM_EXTRA_PRIMITIVES + 1))

SCAN_DIRECTIONS = grammar.DIRECTIONS  # left, right: the places directions take
SCAN_TURNS = tuple(grammar.TURN_OF_DIRECTION[d] for d in SCAN_DIRECTIONS)
EXTRA_DIRECTIONS = ("Direction1", "Direction2")
EXTRA_TURNS = ("I_TURN_FORWARD", "I_TURN_BACKWARD")

# Per length task: (the split it reads, most actions of a support item, query actions).
LENGTH_POOLS = {"length": ("length", 11, (12, 22)), "length_dev": ("length_dev", 8, (9, 16))}

# Per task: (support items, query items) of a training episode.
EPISODE_SIZES = {"mutual_exclusivity": (3, 20), "add_jump_permutation": (20, 20),
                 "add_jump_augmentation": (20, 20), "around_right": (20, 20),
                 "length": (100, 20), "add_jump_standard": (0, 40), "length_dev": (100, 20)}
LENGTH_TEST_SUPPORT = 100
_VALIDATION_STREAM = 1_000_003  # validation episodes draw from a seed stream of their own
_TEST_STREAM = 2_000_003


@dataclasses.dataclass(frozen=True)
class Episode:
    """One episode: support and query pairs, and the primitive mapping it uses.

    Attributes:
        support_commands, support_actions: the support pairs (tuples of strings).
        query_commands, query_actions: the query pairs.
        mapping: the (word, meaning) pairs that define this episode's primitives.
    """

    support_commands: tuple
    support_actions: tuple
    query_commands: tuple
    query_actions: tuple
    mapping: tuple

    def __post_init__(self):
        if len(self.support_commands) != len(self.support_actions):
            raise ValueError("support commands and actions differ in number")
        if len(self.query_commands) != len(self.query_actions):
            raise ValueError("query commands and actions differ in number")


def check_task(task: str) -> None:
    """Raises a ValueError listing the tasks if `task` is not one."""
    if task not in TASK_NAMES:
        raise ValueError(f"unknown episode task {task!r}; valid tasks: {', '.join(TASK_NAMES)}")


def vocabularies(task: str) -> tuple[list[str], list[str]]:
    """(command words, action tokens) that can occur in any episode of `task`, sorted."""
    check_task(task)
    if task == "mutual_exclusivity":
        return sorted(ME_WORDS), sorted(ME_OUTPUTS)
    words = set(grammar._VOCABULARY)
    actions = set(grammar.ACTION_TOKENS)
    if task in ("add_jump_augmentation",) + LENGTH_TASKS:
        words |= set(EXTRA_PRIMITIVES)
        actions |= set(EXTRA_ACTIONS)
    if task == "around_right":
        words |= set(EXTRA_DIRECTIONS)
        actions |= set(EXTRA_TURNS)
    return sorted(words), sorted(actions)


# ------------------------------------------------------------------ mutual exclusivity
@functools.lru_cache(maxsize=None)
def me_bijections() -> dict[str, tuple[tuple[tuple[str, str], ...], ...]]:
    """{"train": 19 bijections, "test": 5}; each a tuple of (word, colour) pairs."""
    all_bijections = [tuple(zip(ME_WORDS, outputs))
                      for outputs in itertools.permutations(ME_OUTPUTS)]
    rng = np.random.default_rng(ME_BIJECTION_SEED)
    test = set(rng.choice(len(all_bijections), ME_NUM_TEST_BIJECTIONS, replace=False).tolist())
    return {"train": tuple(b for i, b in enumerate(all_bijections) if i not in test),
            "test": tuple(b for i, b in enumerate(all_bijections) if i in test)}


def _me_episode(rng, bijection, withheld: int, num_queries: int = 20) -> Episode:
    meaning = dict(bijection)
    support = [w for i, w in enumerate(ME_WORDS) if i != withheld]
    queries = []
    seen = set()
    low, high = ME_QUERY_LENGTHS
    while len(queries) < num_queries:
        length = int(rng.integers(low, high + 1))
        query = " ".join(ME_WORDS[i] for i in rng.integers(0, len(ME_WORDS), size=length))
        if query not in seen:
            seen.add(query)
            queries.append(query)
    return Episode(
        support_commands=tuple(support), support_actions=tuple(meaning[w] for w in support),
        query_commands=tuple(queries),
        query_actions=tuple(" ".join(meaning[w] for w in q.split()) for q in queries),
        mapping=tuple(bijection))


# ------------------------------------------------------------------------------ SCAN
@functools.lru_cache(maxsize=None)
def _scan_pool(name: str) -> tuple[tuple[str, str], ...]:
    """(command, actions) pools in canonical order."""
    if name == "all":
        return tuple(zip(grammar.all_commands(), grammar.all_actions()))
    task, _, part = name.rpartition("_")
    split, support_max, (low, high) = LENGTH_POOLS[task]
    train = splits.split_examples(split)["train"]
    unique = tuple(dict.fromkeys(train))  # each command once, official order
    if part == "train":
        return unique
    if part == "support":
        return tuple(p for p in unique if len(p[1].split()) <= support_max)
    if part == "query":
        return tuple(p for p in unique if low <= len(p[1].split()) <= high)
    raise AssertionError(name)


def _substitute(pairs, word_map: dict, action_map: dict):
    """Renames command words and action tokens token by token."""
    return [(" ".join(word_map.get(w, w) for w in c.split()),
             " ".join(action_map.get(a, a) for a in y.split())) for c, y in pairs]


def _draw(rng, pool, count: int):
    return [pool[i] for i in rng.choice(len(pool), count, replace=False)]


def _assignment(rng, words, meanings, slots: int, forbidden=None):
    """`slots` distinct words paired with `slots` distinct meanings, avoiding `forbidden`."""
    for _ in range(1000):
        chosen_words = [words[i] for i in rng.choice(len(words), slots, replace=False)]
        chosen_meanings = [meanings[i] for i in rng.choice(len(meanings), slots, replace=False)]
        pairs = tuple(zip(chosen_words, chosen_meanings))
        if forbidden is None or not forbidden(pairs):
            return pairs
    raise RuntimeError("could not draw an allowed assignment")


def _scan_episode(rng, task: str) -> Episode:
    num_support, num_queries = EPISODE_SIZES[task]
    if task in LENGTH_TASKS:
        support = _draw(rng, _scan_pool(f"{task}_support"), num_support)
        queries = _draw(rng, _scan_pool(f"{task}_query"), num_queries)
    else:
        drawn = _draw(rng, _scan_pool("all"), num_support + num_queries)
        support, queries = drawn[:num_support], drawn[num_support:]
    if task == "add_jump_permutation":
        identity = tuple(zip(SCAN_VERBS, SCAN_VERB_ACTIONS))
        mapping = _assignment(rng, SCAN_VERBS, SCAN_VERB_ACTIONS, 4,
                              forbidden=lambda pairs: set(pairs) == set(identity))
        # The verbs keep their words and order; only their actions are permuted.
        mapping = tuple(sorted(mapping, key=lambda p: SCAN_VERBS.index(p[0])))
        slots_words, slots_actions = SCAN_VERBS, SCAN_VERB_ACTIONS
    elif task in ("add_jump_augmentation",) + LENGTH_TASKS:
        forbidden = ((lambda pairs: ("jump", "I_JUMP") in pairs)
                     if task == "add_jump_augmentation" else None)
        mapping = _assignment(rng, SCAN_VERBS + EXTRA_PRIMITIVES,
                              SCAN_VERB_ACTIONS + EXTRA_ACTIONS, 4, forbidden)
        slots_words, slots_actions = SCAN_VERBS, SCAN_VERB_ACTIONS
    elif task == "around_right":
        mapping = _assignment(rng, SCAN_DIRECTIONS + EXTRA_DIRECTIONS, SCAN_TURNS + EXTRA_TURNS,
                              2, lambda pairs: ("right", "I_TURN_RIGHT") in pairs)
        slots_words, slots_actions = SCAN_DIRECTIONS, SCAN_TURNS
    else:  # pragma: no cover
        raise AssertionError(task)
    word_map = {slot: word for slot, (word, _) in zip(slots_words, mapping)}
    action_map = {slot: action for slot, (_, action) in zip(slots_actions, mapping)}
    support = _substitute(support, word_map, action_map)
    queries = _substitute(queries, word_map, action_map)
    return Episode(tuple(c for c, _ in support), tuple(a for _, a in support),
                   tuple(c for c, _ in queries), tuple(a for _, a in queries), mapping)


# ------------------------------------------------------------------------- public API
@functools.lru_cache(maxsize=None)
def _standard_pool(part: str) -> tuple[tuple[str, str], ...]:
    return tuple(splits.load_examples("addprim_jump", part))


def _standard_episode(rng, part: str) -> Episode:
    pool = _standard_pool(part)
    drawn = _draw(rng, pool, EPISODE_SIZES["add_jump_standard"][1])
    return Episode((), (), tuple(c for c, _ in drawn), tuple(a for _, a in drawn),
                   tuple(zip(SCAN_VERBS, SCAN_VERB_ACTIONS)))


def sample_episode(task: str, rng: np.random.Generator) -> Episode:
    """One meta-training episode of `task` drawn with `rng`."""
    check_task(task)
    if task == "add_jump_standard":
        return _standard_episode(rng, "fit")
    if task == "mutual_exclusivity":
        bijections = me_bijections()["train"]
        bijection = bijections[int(rng.integers(len(bijections)))]
        return _me_episode(rng, bijection, withheld=int(rng.integers(len(ME_WORDS))),
                           num_queries=EPISODE_SIZES[task][1])
    return _scan_episode(rng, task)


def training_episode(task: str, seed: int, index: int) -> Episode:
    """Training episode number `index` of the stream `seed` (a pure function of the three)."""
    return sample_episode(task, np.random.default_rng([int(seed), int(index)]))


def validation_episodes(task: str, count: int = 20, seed: int = 0) -> list[Episode]:
    """`count` episodes from the training distribution, on a seed stream of their own."""
    if task == "add_jump_standard":
        return [_standard_episode(np.random.default_rng([_VALIDATION_STREAM, int(seed), i]),
                                  "validation") for i in range(count)]
    return [sample_episode(task, np.random.default_rng([_VALIDATION_STREAM, int(seed), i]))
            for i in range(count)]


def check_test_support_sets(task: str, support_sets) -> None:
    """A `ValueError` unless `support_sets` is a positive integer, above 1 only for the length
    tasks."""
    if (isinstance(support_sets, bool) or not isinstance(support_sets, int)
            or support_sets < 1):
        raise ValueError(f"test support sets must be a positive integer, got {support_sets!r}")
    if support_sets != 1 and task not in LENGTH_TASKS:
        raise ValueError(f"several test support sets apply to the length tasks only, not "
                         f"{task!r}")


def test_episodes(task: str, seed: int = 0, support_sets: int = 1) -> list[Episode]:
    """The test episodes of `task`.

    - mutual exclusivity: every held-out bijection with every word withheld once
      (5 x 4 = 20 episodes of 20 queries);
    - add-jump tasks: one episode, the four verbs as support, the 7,706 official
      ``addprim_jump`` test commands as queries;
    - around-right: one episode, ``turn left`` and ``turn right`` as support, the
      official ``template_around_right`` test commands as queries;
    - length: `support_sets` episodes (default one), each of 100 support pairs drawn
      (by `seed` and the episode's index) from the ``length`` training set and the 3,920
      official ``length`` test commands as queries; the authors' code scores the queries
      against 5 such sets and reports the mean;
    - length_dev: the same from the ``length_dev`` split (support from its training side,
      queries its 2,336 test commands).
    """
    check_task(task)
    check_test_support_sets(task, support_sets)
    if task == "mutual_exclusivity":
        out = []
        for b, bijection in enumerate(me_bijections()["test"]):
            for withheld in range(len(ME_WORDS)):
                rng = np.random.default_rng([_TEST_STREAM, int(seed), b, withheld])
                out.append(_me_episode(rng, bijection, withheld))
        return out
    if task in ("add_jump_permutation", "add_jump_augmentation", "add_jump_standard"):
        mapping = tuple(zip(SCAN_VERBS, SCAN_VERB_ACTIONS))
        support = [(v, grammar.interpret(v)) for v in SCAN_VERBS]
        queries = splits.split_examples("addprim_jump")["test"]
    elif task == "around_right":
        mapping = tuple(zip(SCAN_DIRECTIONS, SCAN_TURNS))
        support = [(f"turn {d}", grammar.interpret(f"turn {d}")) for d in SCAN_DIRECTIONS]
        queries = splits.split_examples("template_around_right")["test"]
    else:
        mapping = tuple(zip(SCAN_VERBS, SCAN_VERB_ACTIONS))
        queries = splits.split_examples(LENGTH_POOLS[task][0])["test"]
        # The first set is drawn as it always was, so one set gives the earlier episode.
        streams = [[_TEST_STREAM, int(seed)]] + [[_TEST_STREAM, int(seed), k]
                                                 for k in range(1, int(support_sets))]
        return [Episode(tuple(c for c, _ in support), tuple(a for _, a in support),
                        tuple(c for c, _ in queries), tuple(a for _, a in queries), mapping)
                for support in (_draw(np.random.default_rng(stream), _scan_pool(f"{task}_train"),
                                      LENGTH_TEST_SUPPORT) for stream in streams)]
    return [Episode(tuple(c for c, _ in support), tuple(a for _, a in support),
                    tuple(c for c, _ in queries), tuple(a for _, a in queries), mapping)]


test_episodes.__test__ = False  # not a pytest test, despite its name
check_test_support_sets.__test__ = False
